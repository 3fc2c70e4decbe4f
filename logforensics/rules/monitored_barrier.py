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
from logforensics.text import duration, rank_list

FIX = (
    "{who} did not reach the barrier within {timeout}. Read the last lines {who_lower} wrote "
    "(in the per-rank table) for what held {them} up: a slow or stuck data loader, I/O, an "
    "exception that left the loop, or a collective only {who_lower} waited in."
)


def check(job: Job) -> list[Finding]:
    failed = job.events.filter(pl.col("event") == "barrier_failed")
    if failed.is_empty():
        return _from_waiting_side(job)
    laggards = sorted(
        {rank for values in failed.get_column("values").drop_nulls().to_list() for rank in values}
    )
    timeout_ms = failed.get_column("timeout_ms").drop_nulls().max()
    timeout = duration(timeout_ms / 1000) if timeout_ms else "its timeout"
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
                who_lower=rank_list(laggards),
                timeout=timeout,
                them="it" if len(laggards) == 1 else "them",
            ),
            ranks=laggards,
            order=place(job, failed),
            details={"timeout_ms": timeout_ms, "ranks_that_arrived": arrived},
        )
    ]


WAITING_FIX = (
    "Read what {who} was doing when the others reached the barrier (its last lines in the "
    "per-rank table): a slow or stuck data loader, I/O, an exception that left the loop, or a "
    "collective only it was waiting in. If its log shows a `failed to pass monitoredBarrier` "
    "line, the ranks that line names are the laggards instead."
)


def _from_waiting_side(job: Job) -> list[Finding]:
    """Only the ranks that arrived reported: `Rank 1 successfully reached monitoredBarrier,
    but received errors while waiting for send/recv from rank 0`. gloo prints that fixed text
    whenever the exchange with the coordinator failed: the coordinator never arrived, or it
    arrived, found another rank missing and threw (its own log then names that rank;
    pytorch#76198, a Kubernetes pod that died). With the coordinator's log here and no such
    report in it, the coordinator is the one; without it, the logs name nobody."""
    waiting = job.events.filter(
        (pl.col("event") == "barrier_peer_error") & pl.col("peer_rank").is_not_null()
    )
    if waiting.is_empty():
        return []
    waited_for = sorted(waiting.get_column("peer_rank").unique().to_list())
    arrived = sorted(waiting.get_column("rank").drop_nulls().unique().to_list())
    own_log = set(waited_for) <= set(job.ranks_seen)
    # every other rank of the world arrived: none was left for the coordinator to find missing
    world = job.world_size.value if job.world_size is not None else None
    all_others = world is not None and set(arrived) | set(waited_for) == set(range(world))
    who = rank_list(arrived).capitalize() if arrived else "Some ranks"
    never_received = _send_never_received(job, waiting)
    if all_others and not own_log:
        summary = (
            f"{who} reached the monitored barrier and got errors waiting for "
            f"{rank_list(waited_for)}, which coordinates it: every other rank of the "
            f"{world} had arrived, so {'it' if len(waited_for) == 1 else 'they'} never did."
        )
    elif never_received and not own_log:
        summary = (
            f"{who} reached the monitored barrier and got errors waiting for "
            f"{rank_list(waited_for)}, which coordinates it: the send to it timed out, and gloo "
            "sends only once the receiver has posted its receive, so "
            f"{'it' if len(waited_for) == 1 else 'they'} never entered the barrier."
        )
    elif own_log:
        summary = (
            f"{who} reached the monitored barrier and got errors waiting for "
            f"{rank_list(waited_for)}, which coordinates it: "
            f"{'it' if len(waited_for) == 1 else 'they'} never arrived, and its own log has "
            "no report of other laggards."
        )
    else:
        summary = (
            f"{who} reached the monitored barrier and got errors waiting for "
            f"{rank_list(waited_for)}, which coordinates it: either it never arrived, or it "
            "found another rank missing and stopped; its own log, which would name that rank, "
            "is not here."
        )
    return [
        placed_finding(
            job,
            waiting,
            kind="monitored_barrier",
            severity="error",
            part="departure",
            summary=summary,
            fix=WAITING_FIX.format(who=rank_list(waited_for)),
            ranks=waited_for,
            blames_nobody=not (own_log or all_others or never_received),
            confidence="high" if own_log else "medium" if all_others or never_received else "low",
            details={"ranks_that_arrived": arrived, "seen_from": "the waiting ranks"},
        )
    ]


# gloo's own words when a send's receiver never posted the matching receive
SEND_UNTAKEN = "for send operation to complete"
# how far below the barrier's error its `Original exception:` stands
ORIGINAL_EXCEPTION_SPAN = 4


def _send_never_received(job: Job, waiting: pl.DataFrame) -> bool:
    """A waiting rank's original exception is gloo's `Timed out waiting 1800000ms for send
    operation to complete` (QwenAudio/CosyVoice#1727): gloo's TCP pair holds a send until the
    peer announces a matching receive, and the coordinator posts its receives on entering the
    barrier, so it never entered it."""
    timeouts = job.events.filter(
        (pl.col("event") == "transport_timeout")
        & pl.col("text").str.contains(SEND_UNTAKEN, literal=True)
    ).select("file", pl.col("line").alias("_timeout_line"))
    if timeouts.is_empty():
        return False
    below = waiting.select("file", "line").join(timeouts, on="file")
    gap = pl.col("_timeout_line").cast(pl.Int64) - pl.col("line").cast(pl.Int64)
    return not below.filter((gap > 0) & (gap <= ORIGINAL_EXCEPTION_SPAN)).is_empty()


RULE = Rule(kind="monitored_barrier", check=check, specificity=10)
