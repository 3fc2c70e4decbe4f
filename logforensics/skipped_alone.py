"""Ranks that said they skipped a batch or a step when the others said no such thing, in a job
that then failed (a departure that `rules/stage_divergence.py` reports).

A skip decided on one rank (`if loss.isnan(): continue`) leaves the others in a collective
that rank no longer calls: they time out, or a backend that checks sizes aborts on the
mismatch (a run here: FSDP2 on gloo, rank 1's `rank 1 step 3: loss is nan, skipping`, then
gloo's `Received data size doesn't match expected size`). The skip is the cause; what followed
is its symptom. Read only where the logs hold a failure, and the other ranks' own output is
in them (else their silence says nothing).
"""

from __future__ import annotations

import polars as pl

from logforensics.findings import Finding, evidence_from
from logforensics.job import Job
from logforensics.placement import earliest_time
from logforensics.text import rank_list

SKIP_FIX = (
    "Every rank must run the same collectives in the same order. Decide a skip together: "
    "compute a local flag `skip = torch.tensor(int(bad_batch))`, call "
    "`dist.all_reduce(skip, op=dist.ReduceOp.MAX)`, and skip the step on every rank when "
    "`skip.item()` is 1. Never `continue` past backward on one rank only."
)


def skipped_alone(job: Job) -> list[Finding]:
    events = job.events
    notices = events.filter((pl.col("event") == "skip_notice") & pl.col("rank").is_not_null())
    if notices.is_empty():
        return []
    failed = events.filter((pl.col("severity") == "error") & (pl.col("event") != "skip_notice"))
    if failed.is_empty():
        return []
    skippers = sorted(notices.get_column("rank").unique().to_list())
    spoke = events.filter(pl.col("rank").is_not_null() & ~pl.col("rank").is_in(skippers))
    others = sorted(spoke.get_column("rank").unique().to_list())
    if not others or len(skippers) >= len(others):
        return []  # as many ranks skipped as did not: no rank alone
    first = notices.sort("file", "line").unique("rank", keep="first", maintain_order=True)
    said = first.row(0, named=True)
    at = f" at step {said['step']}" if said["step"] is not None else ""
    one = len(skippers) == 1
    summary = (
        f"{rank_list(skippers).capitalize()} said {'it' if one else 'they'} skipped a batch "
        f"or step{at} (`{said['exc_message']}`), which {rank_list(others)} never said: a skip "
        f"one rank takes alone leaves the others in a collective it no longer calls."
    )
    evidence, total = evidence_from(first.select("file", "line", "text", "rank"))
    return [
        Finding(
            kind="stage_divergence",
            severity="error",
            part="departure",
            summary=summary,
            fix=SKIP_FIX,
            ranks=skippers,
            step=said["step"],
            evidence=evidence,
            evidence_total=total,
            timestamp=earliest_time(first),
            confidence="medium",
            details={"departure": "skipped_alone", "other_ranks": others},
        )
    ]
