"""A process taken down by its NCCL watchdog, when nothing else in the logs says why.

PyTorch's watchdog logs `Some NCCL operations have failed or timed out ...` and `... we are
taking the entire process down` after any failed collective: a timeout or an NCCL error, each
reported on a line of its own before these. A paste that keeps only the two lines (a hard
wrap, a short excerpt: karpathy/nanoGPT#55) still shows a failure, not a healthy run; the
nccl_error rule says so, at low confidence, and names the line to look for."""

from __future__ import annotations

import polars as pl

from logforensics.findings import Finding
from logforensics.job import Job
from logforensics.placement import place_with_step, placed_finding
from logforensics.text import rank_list

ABORT_EVENTS = ("ops_failed", "process_abort")
WATCHDOG_ABORT_FIX = (
    "Find the watchdog's first report above these lines in every rank's full log: "
    "`Watchdog caught collective operation timeout` (a timeout: the rank that never joined "
    "that collective is the one to look at) or an NCCL error (`NCCL error`, "
    "`ncclSystemError`, `ncclInternalError`: a transport or set-up fault). If the logs hold "
    "neither, run again with NCCL_DEBUG=WARN (NCCL's own reason, e.g. a network or InfiniBand "
    "transport that does not work between the nodes) and TORCH_DISTRIBUTED_DEBUG=DETAIL "
    "(which collective)."
)


def watchdog_abort_alone(job: Job) -> list[Finding]:
    """The watchdog's abort lines, where the logs hold no other error."""
    events = job.events
    aborts = events.filter(pl.col("event").is_in(ABORT_EVENTS))
    if aborts.is_empty():
        return []
    others = events.filter((pl.col("severity") == "error") & ~pl.col("event").is_in(ABORT_EVENTS))
    if not others.is_empty():
        return []
    ranks = sorted(aborts.get_column("rank").drop_nulls().unique().to_list())
    who = rank_list(ranks).capitalize() if ranks else "A process"
    return [
        failure_said_by_its_echo(
            job,
            aborts,
            summary=(
                f"{who} was taken down by its NCCL watchdog after a collective failed or timed "
                "out (`Some NCCL operations have failed or timed out`); the line that says "
                "which collective and why (a timeout or an NCCL error) is not in these logs."
            ),
            fix=WATCHDOG_ABORT_FIX,
            ranks=[],  # the process that reports an abort is not shown to be its cause
            details={"watchdog_abort": True, "reported_by": ranks},
        )
    ]


def failure_said_by_its_echo(
    job: Job,
    rows: pl.DataFrame,
    *,
    summary: str,
    fix: str,
    ranks: list[int],
    details: dict[str, object],
) -> Finding:
    """A communication failure the logs show only by what it left behind (`rows`: the
    watchdog's abort, an exception's type with its message cut), where they hold no other
    error: an `nccl_error` at low confidence, placed at those lines."""
    order, step, stage = place_with_step(job, rows)
    return placed_finding(
        job,
        rows,
        kind="nccl_error",
        severity="error",
        part="explanation",
        summary=summary,
        fix=fix,
        ranks=ranks,
        step=step,
        stage=stage,
        order=order,
        confidence="low",
        details=details,
    )
