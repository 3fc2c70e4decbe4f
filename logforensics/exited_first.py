"""Ranks whose program exited while the others went on into a collective they then timed out
in (a departure that `rules/stage_divergence.py` reports).

ProcessGroupNCCL warns as its program exits without `destroy_process_group` (`process group has
NOT been destroyed before we destruct ProcessGroupNCCL`, `destroy_process_group() was not
called before program exit`): the process was on its way out. A rank that printed it, with no
error of its own, before the other ranks reported a timeout had left the job on its own (its
loop ended early, a return under a condition only it met), and the others waited for it until
the timeout (NVIDIA/nccl#1504: rank 0, PiPPy's first pipeline stage, exited at 04:13:02; rank 1
timed out in its first send/recv at 04:43:01). Read the same way as torchrun's summary leaving
out a worker that had exited (rules/peer_lost.py's "left the job early").
"""

from __future__ import annotations

import polars as pl

from logforensics.desync import TIMEOUT_EVENTS
from logforensics.findings import Finding
from logforensics.job import Job
from logforensics.placement import departure_over_timeouts
from logforensics.text import rank_list

FIX = (
    "Every rank must run the same steps and collectives to the end. Find where {who}'s program "
    "ended early: a `return` or `break` on a condition only {it} met (no more data, an early "
    "stop of {its} own, fewer batches or micro-batches on that rank), an exit under `if rank "
    "== ...`. Decide to stop together instead: all_reduce a stop flag (MAX) every step and "
    "leave the loop on every rank at once; call `destroy_process_group()` only once every "
    "rank is done."
)


def exited_first(job: Job) -> list[Finding]:
    events = job.events
    timeouts = events.filter(pl.col("event").is_in(TIMEOUT_EVENTS) & pl.col("rank").is_not_null())
    if timeouts.is_empty():
        return []
    reporters = sorted(set(timeouts.get_column("rank").to_list()))
    exits = _exits_before(events, timeouts).filter(~pl.col("rank").is_in(reporters))
    failed = events.filter(pl.col("severity") == "error").get_column("rank").drop_nulls()
    exits = exits.filter(~pl.col("rank").is_in(failed.unique().to_list()))
    if exits.is_empty():
        return []
    left = sorted(exits.get_column("rank").unique().to_list())
    if len(left) > len(reporters):
        return []  # most of the job leaving is its end, not one rank's departure
    one = len(left) == 1
    who, others = rank_list(left), rank_list(reporters)
    summary = (
        f"{who.capitalize()} left the job early, with no error: {'its' if one else 'their'} "
        "process group was destructed as the program exited (ProcessGroupNCCL's warning that "
        f"`destroy_process_group` was not called) before {others} reported a timeout, so "
        f"{others} waited in a collective {who} would never join."
    )
    it, its = ("it", "its") if one else ("they", "their")
    return [
        departure_over_timeouts(
            job,
            exits,
            timeouts,
            left,
            summary=summary,
            fix=FIX.format(who=who, it=it, its=its),
            details={"departure": "left", "other_ranks": reporters},
        )
    ]


def _exits_before(events: pl.DataFrame, timeouts: pl.DataFrame) -> pl.DataFrame:
    """Program-exit warnings printed before the first timeout report: earlier in the same file,
    or at an earlier printed time."""
    exits = events.filter((pl.col("event") == "program_exit") & pl.col("rank").is_not_null())
    if exits.is_empty():
        return exits
    first_line = timeouts.group_by("file").agg(pl.col("line").min().alias("_first"))
    first_time = timeouts.get_column("timestamp").drop_nulls().min()
    by_line = exits.join(first_line, on="file", how="left")
    earlier = pl.col("line") < pl.col("_first")
    if first_time is not None:
        earlier = earlier | (pl.col("timestamp") < first_time)
    return by_line.filter(earlier.fill_null(False)).drop("_first")
