"""The worker torchrun did not stop: the failed one, found by its pid.

When a worker fails, torchrun's agent stops the others of its node (`Sending process 86503
closing signal SIGTERM`, one line per worker). The agent started its workers one after the
other in local-rank order, so their pids are most often consecutive: where the stopped pids
run without a break but for one missing pid inside the run, that pid is the worker that
failed, and its distance from the lowest pid is its local rank (QwenLM/Qwen#852: 86503, 86504,
86506, 86507, 86508 stopped, 86505 failed with an allocation error that names no rank;
tatsu-lab/stanford_alpaca#183: 53038, 53039, 53041 stopped, local rank 2 killed). A guess from
the launcher's bookkeeping: said as one, with medium confidence, and only where one node's
agent speaks (a local rank is a global one only then).
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from logforensics.job import Job


@dataclass(frozen=True, slots=True)
class UnstoppedWorker:
    rank: int  # its local rank, global on the single node the logs show
    pid: int
    stopped: pl.DataFrame  # the agent's stop lines (file, line, text, rank)

    def said(self) -> str:
        pids = self.stopped.get_column("pid")
        return (
            f"pid {self.pid}: torchrun stopped pids {pids.min()}-{pids.max()} but this one, "
            "so it is the worker that failed"
        )


def agent_stops(job: Job) -> pl.DataFrame:
    """The agent's lines stopping a worker (`Sending process 86503 closing signal SIGTERM`)."""
    return job.events.filter((pl.col("event") == "worker_sigterm") & pl.col("pid").is_not_null())


def unstopped_worker(job: Job) -> UnstoppedWorker | None:
    """The one worker the agent's stops leave out, where the logs show one node's agent."""
    stops = agent_stops(job)
    if stops.is_empty() or stops.get_column("file").n_unique() > 1:
        return None
    if job.events.get_column("host").drop_nulls().n_unique() > 1:
        return None
    pids = stops.get_column("pid").unique().sort()
    low, high = int(pids.min()), int(pids.max())
    if len(pids) < 2 or high - low != len(pids):
        return None  # not one run of pids with exactly one missing inside it
    missing = sorted(set(range(low, high + 1)) - set(pids.to_list()))
    local_rank = missing[0] - low
    world = job.world_size
    if world is not None and world.value != len(pids) + 1:
        return None  # more ranks than this node's workers: its local ranks are not global
    return UnstoppedWorker(local_rank, missing[0], stops.sort("file", "line"))
