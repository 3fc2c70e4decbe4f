"""An exception on a subset of ranks, other than the communication errors every rank gets
once the job is already broken.

If the rank went on printing stage marks after it, the exception was swallowed (caught and
`continue`d) and that is where the rank left the others' path. If the rank went silent, it
is the rank the others are waiting for.
"""

from __future__ import annotations

import polars as pl

from logforensics.findings import Finding, evidence_from
from logforensics.job import Job
from logforensics.placement import AFTER_MARK, earliest_time, placed_keys
from logforensics.registry import Rule

# Exceptions that report a collective that already failed: symptoms, handled by other rules.
CONSEQUENCE = (
    r"(?i)DistBackendError|DistStoreError|ChildFailedError|timed? ?out|timeout|Connection closed"
    r"|Connection reset|NCCL (?:error|communicator)|ProcessGroup|[Ww]atchdog|monitoredBarrier"
    r"|Detected mismatch between collectives|finished reduction"
    r"|KeyboardInterrupt|SignalException|Broken pipe|Socket|gloo"
)
SWALLOWED_FIX = (
    "The exception was caught and the rank carried on, skipping collectives the other ranks "
    "still issue. Either let it propagate (the job fails fast instead of hanging), or make the "
    "skip collective: every rank sets a flag, `dist.all_reduce(flag, op=dist.ReduceOp.MAX)`, "
    "and all ranks skip the step together. Fix the cause of the exception itself too."
)
FATAL_FIX = (
    "Fix the exception on {who}; the other ranks hung in the next collective because {it} "
    "stopped issuing collectives. Wrapping the script with "
    "`torch.distributed.elastic.multiprocessing.errors.record` makes torchrun report it first."
)


def check(job: Job) -> list[Finding]:
    exceptions = job.events.filter(
        (pl.col("event") == "exception") & pl.col("rank").is_not_null()
    ).with_columns(
        pl.concat_str(
            [pl.col("exc_type").fill_null(""), pl.col("exc_message").fill_null("")], separator=": "
        ).alias("what")
    )
    primary = exceptions.filter(~pl.col("what").str.contains(CONSEQUENCE))
    if primary.is_empty():
        return []
    placed = placed_keys(job, primary)
    findings = []
    for (rank,), rows in placed.sort("file", "line").group_by("rank", maintain_order=True):
        findings.append(_finding(job, int(rank), rows, primary))
    return sorted(findings, key=lambda f: f.ranks)


def _finding(job: Job, rank: int, rows: pl.DataFrame, all_primary: pl.DataFrame) -> Finding:
    first = rows.row(0, named=True)
    exc = first["exc_type"] or "an exception"
    message = (first["exc_message"] or "").strip()
    where = f" at {first['frame']}" if first["frame"] else ""
    swallowed, step, stage = _after_effect(job, rank, first["key"])
    everyone = set(all_primary.get_column("rank").unique().to_list())
    on_all = job.progress is not None and set(job.progress.ranks) <= everyone
    text = f"Rank {rank} raised {exc}" + (f" ({message[:160]})" if message else "") + where
    if step is not None:
        text += f" during step {step} ({stage})"
    if swallowed:
        text += (
            ", caught it and kept going: this is where it left the other ranks' path."
            if step is not None
            else ", caught it and kept going (its stage marks go on after it)."
        )
        fix = SWALLOWED_FIX
    else:
        text += "."
        fix = FATAL_FIX.format(who=f"rank {rank}", it="it")
    if on_all:
        text += " Every rank raised an exception like it, so it is not one rank's divergence."
    evidence, total = evidence_from(rows.select("file", "line", "text", "rank"))
    key = first["key"]
    return Finding(
        kind="rank_exception",
        severity="error",
        part="explanation",
        summary=text,
        fix=fix,
        ranks=[rank],
        step=step,
        stage=stage,
        evidence=evidence,
        evidence_total=total,
        order=None if key is None else float(key) + AFTER_MARK,
        timestamp=earliest_time(rows),
        confidence="high" if key is not None or not swallowed else "medium",
        details={"exception": exc, "swallowed": swallowed, "frame": first["frame"]},
    )


def _after_effect(job: Job, rank: int, key: int | None) -> tuple[bool, int | None, str | None]:
    """Whether the rank went on after the exception, and the step it happened in.

    Placed by the marks around it: marks after it mean it was caught. Unplaced (the traceback
    is in another file than the marks): a rank whose marks go on as far as the others' did
    not die of it, so it was caught too."""
    progress = job.progress
    if progress is None or rank not in progress.ranks:
        return False, None, None
    own = progress.marks.filter(pl.col("rank") == rank)
    if key is None:
        stopped = any(d.rank == rank and d.kind == "stopped" for d in progress.departures)
        return not stopped and own.height > 1, None, None
    at = progress.key_of(int(key))
    kept_going = not own.filter(pl.col("key") > key).is_empty()
    return kept_going, at["step"], at["stage"]


RULE = Rule(kind="rank_exception", check=check, specificity=25)
