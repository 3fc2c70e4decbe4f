"""Ranks that never arrived at a `monitored_barrier`.

Only the coordinating rank (rank 0) names the laggards (`Ranks 6 failed to pass
monitoredBarrier in ... ms`); the others report that they reached the barrier but got an error
from rank 0. The laggards are the ranks the rest of the job was waiting for.
"""

from __future__ import annotations

import polars as pl

from logforensics.findings import Finding
from logforensics.job import Job
from logforensics.placement import place, placed_finding
from logforensics.registry import Rule
from logforensics.text import rank_list

FIX = (
    "{who} did not reach the barrier within {timeout}. Read what {it} was doing at that time "
    "(its last lines in the per-rank table): a slow or stuck data loader, I/O, an exception "
    "that left the loop, or a collective only {it} was waiting in."
)


def check(job: Job) -> list[Finding]:
    failed = job.events.filter(pl.col("event") == "barrier_failed")
    if failed.is_empty():
        return []
    laggards = sorted(
        {rank for values in failed.get_column("values").drop_nulls().to_list() for rank in values}
    )
    timeout_ms = failed.get_column("timeout_ms").drop_nulls().max()
    timeout = f"{timeout_ms / 1000:g} s" if timeout_ms else "its timeout"
    peers = job.events.filter(pl.col("event") == "barrier_peer_error")
    arrived = sorted(peers.get_column("rank").drop_nulls().unique().to_list())
    summary = (
        f"{rank_list(laggards).capitalize()} failed to pass the monitored barrier within "
        f"{timeout}; the other ranks were waiting for {'it' if len(laggards) == 1 else 'them'}."
    )
    if arrived:
        summary += f" {rank_list(arrived).capitalize()} reached it and reported the failure."
    both = pl.concat([failed, peers])
    return [
        placed_finding(
            job,
            both,
            kind="monitored_barrier",
            severity="error",
            part="departure",
            summary=summary,
            fix=FIX.format(
                who=rank_list(laggards).capitalize(),
                timeout=timeout,
                it="it" if len(laggards) == 1 else "they",
            ),
            ranks=laggards,
            order=place(job, failed),
            details={"timeout_ms": timeout_ms, "ranks_that_arrived": arrived},
        )
    ]


RULE = Rule(kind="monitored_barrier", check=check, specificity=10)
