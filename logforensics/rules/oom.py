"""Out of GPU memory on a rank. The rank dies or leaves the loop; the others then wait in their
next collective until a watchdog fires, so the OOM, not the timeout, is the cause."""

from __future__ import annotations

import polars as pl

from logforensics.findings import Finding, evidence_from
from logforensics.job import Job
from logforensics.placement import earliest_time, place_with_step
from logforensics.registry import Rule
from logforensics.text import rank_list

FIX = (
    "Reduce the memory {who} needs at that step: a smaller (or length-capped) batch, gradient "
    "accumulation, activation checkpointing, or freeing references kept across steps. A rank "
    "that needs more than the others often sees longer sequences or a larger shard of data."
)


def check(job: Job) -> list[Finding]:
    ooms = job.events.filter(pl.col("event") == "oom")
    if ooms.is_empty():
        return []
    ranks = sorted(ooms.get_column("rank").drop_nulls().unique().to_list())
    order, step, stage = place_with_step(job, ooms)
    requested = ooms.get_column("value").drop_nulls()
    asked = f" while allocating {requested.max() / 2**20:,.0f} MiB" if len(requested) else ""
    who = rank_list(ranks) if ranks else "a rank"
    summary = f"{who.capitalize()} ran out of GPU memory{asked}" + (
        f" at step {step} ({stage})." if step is not None else "."
    )
    evidence, total = evidence_from(
        ooms.sort("file", "line").select("file", "line", "text", "rank")
    )
    return [
        Finding(
            kind="oom",
            severity="error",
            part="explanation",
            summary=summary,
            fix=FIX.format(who=who),
            ranks=ranks,
            step=step,
            stage=stage,
            evidence=evidence,
            evidence_total=total,
            order=order,
            timestamp=earliest_time(ooms),
        )
    ]


RULE = Rule(kind="oom", check=check, specificity=30)
