"""Processes that never reached a process group's store-based barrier.

torch 1.x-2.0 creates every process group behind a barrier in the c10d store, and each rank
waiting there logs `Waiting in store based barrier ... for rank: R, key:
store_based_barrier_key:K (world_size=N, worker_count=C, ...)` until C reaches N. A log that
ends on such waits shows the job stopped there with N - C processes short. Key 1 is the default
group's barrier in `init_process_group`: the absent processes never got that far, a start-up
failure (missing_rank reports it). A later key is a `new_group` after start-up: every process
had started, and the absent ones took another path before creating it, typically rank-0-only
work such as a tracker's set-up (s-JoL/Open-Llama#47: 7 of 8 at key 2, `wandb.init` on the
main process); stage_divergence reports it.

A count above the world (`world_size=4, worker_count=8`) never comes down to it: the store
holds arrivals from before this set of processes, an earlier attempt that torchrun restarted
(ultralytics/yolov5#4290: `2/3 attempts left; will restart worker group`, then every rank
waits at key 1 with worker_count=8), or processes started twice, or another job on the same
store. The barrier then times out on every rank; the cause is the earlier attempt's failure,
which collective_timeout reports as the job's timeout."""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from logforensics.findings import Finding, evidence_from
from logforensics.job import Job
from logforensics.placement import earliest_time
from logforensics.text import rank_list

NEW_GROUP_FIX = (
    "Every rank must create each process group (`dist.new_group`) and run each collective in "
    "the same order. Run rank-0-only work (a tracker's set-up such as `wandb.init`, a "
    "download, data preparation) after the groups are created, or on every rank, or make the "
    "others wait for it at a `dist.barrier()` whose timeout is long enough."
)
INIT_BARRIER_FIX = (
    "The absent processes never reached `init_process_group`: check that every node ran the "
    "launch (the number of nodes and of processes per node), with the same master address, "
    "port and world size, and read the absent ranks' own logs for an error before it."
)
WAITER = r"initialize process group for rank: (\d+), key:"
# the waits repeat every 10 s: a finding quotes a few
EVIDENCE_WAITS = 6


@dataclass(frozen=True, slots=True)
class LastBarrier:
    """The store barrier the logs end waiting at."""

    key: str
    size: int  # the world it waits for
    arrived: int  # the most arrivals a wait counted
    waits: pl.DataFrame  # its wait lines
    waiting: list[int]  # the waiters' ranks as the lines state them


def last_barrier(job: Job) -> LastBarrier | None:
    waits = job.events.filter(
        (pl.col("event") == "store_barrier_waiting") & pl.col("value").is_not_null()
    )
    if waits.is_empty():
        return None
    last = waits.sort("file", "line").tail(1).row(0, named=True)
    key, size = str(last["pg"]), last["nranks"]
    if size is None or _completed(job, key):
        return None
    at_key = waits.filter(pl.col("pg") == key)
    # the waiter's rank as the line states it (a launcher's prefix may be a node's task id)
    stated = at_key.get_column("text").str.extract(WAITER, 1).cast(pl.Int32, strict=False)
    waiting = sorted(stated.drop_nulls().unique().to_list())
    return LastBarrier(key, int(size), int(at_key.get_column("value").max()), at_key, waiting)


def short_at_barrier(job: Job, *, default_group: bool) -> list[Finding]:
    """The barrier the logs end waiting at, short of processes (see the module doc)."""
    barrier = last_barrier(job)
    if barrier is None or (barrier.key == "1") != default_group:
        return []
    key, size, arrived, at_key = barrier.key, barrier.size, barrier.arrived, barrier.waits
    if arrived >= size:
        return []
    waiting = barrier.waiting
    # every waiter seen: the others are the absent (a group of the whole world only)
    absent = (
        sorted(set(range(size)) - set(waiting))
        if len(waiting) == arrived and (default_group or _whole_world(job, size))
        else []
    )
    short = size - arrived
    said = rank_list(absent) if absent else "one process" if short == 1 else f"{short} processes"
    seen = f" (waiting: {rank_list(waiting)})" if waiting else ""
    if default_group:
        kind, fix = "missing_rank", INIT_BARRIER_FIX
        summary = (
            f"Only {arrived} of {size} processes reached the store barrier of "
            f"`init_process_group`{seen}: {said} never got that far, and the others wait "
            "there for them."
        )
    else:
        kind, fix = "stage_divergence", NEW_GROUP_FIX
        summary = (
            f"Only {arrived} of {size} processes reached the store barrier that creates "
            f"process group {key}, a `new_group` after start-up{seen}: every process had "
            f"started, and {said} took another path before creating it (most often work only "
            "the main process does), so the others wait there."
        )
    rows = at_key.sort("file", "line")
    evidence, total = evidence_from(rows.select("file", "line", "text", "rank"), cap=EVIDENCE_WAITS)
    return [
        Finding(
            kind=kind,
            severity="error",
            part="explanation",
            summary=summary,
            fix=fix,
            ranks=absent,
            evidence=evidence,
            evidence_total=total,
            order=-1.0 if default_group else None,
            timestamp=earliest_time(rows),
            confidence="medium" if absent else "low",
            scope="job" if not absent else "ranks",
            details={
                "barrier_key": key,
                "arrived": arrived,
                "expected": size,
                "waiting": waiting,
                "absent": absent,
            },
        )
    ]


OVERCOUNT_FIX = (
    "The store counted arrivals from before these processes: when torchrun restarted the "
    "workers, the first attempt's failure is the cause (read the agent's log before `will "
    "restart worker group`, or the torchrun --log-dir tree's attempt_0); otherwise look for "
    "ranks started twice or another job on the same MASTER_ADDR:MASTER_PORT. Torch 1.9+ "
    "resets the barrier per attempt."
)


def overcounted_barrier(job: Job) -> list[Finding]:
    """The barrier the logs end waiting at, with more arrivals than the world (module doc)."""
    barrier = last_barrier(job)
    if barrier is None or barrier.arrived <= barrier.size:
        return []
    key, size, arrived, waiting = barrier.key, barrier.size, barrier.arrived, barrier.waiting
    rows = barrier.waits.sort("file", "line")
    evidence, total = evidence_from(rows.select("file", "line", "text", "rank"), cap=EVIDENCE_WAITS)
    return [
        Finding(
            kind="collective_timeout",
            severity="error",
            part="explanation",
            summary=(
                f"{rank_list(waiting).capitalize() if waiting else 'The processes'} wait at the "
                f"store barrier of process group {key}, which counts {arrived} arrivals for a "
                f"world of {size}: more than the world, so it can never complete and times out. "
                "The store kept the arrivals of an earlier attempt (a restart) or of processes "
                "started twice."
            ),
            fix=OVERCOUNT_FIX,
            ranks=[],
            blames_nobody=True,
            evidence=evidence,
            evidence_total=total,
            order=-1.0,
            timestamp=earliest_time(rows),
            confidence="low",
            scope="job",
            details={"barrier_key": key, "arrived": arrived, "expected": size},
        )
    ]


def _completed(job: Job, key: str) -> bool:
    """Whether a rank logged the barrier of `key` complete."""
    done = job.events.filter(
        pl.col("text").str.contains(f"store_based_barrier_key:{key} with", literal=True)
    )
    return not done.is_empty()


def _whole_world(job: Job, size: int) -> bool:
    return job.world_size is not None and job.world_size.value == size
