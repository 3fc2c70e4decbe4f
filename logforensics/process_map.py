"""Give a rank to lines that carry only a process identity (host, pid), such as NCCL_DEBUG
lines: the job's world communicator init lines map each (host, pid) to a global rank.

A communicator is the world when its size is the largest seen; its `comm_rank` is then the
global rank. Lines of sub-communicators keep their own `comm_rank` as a separate column.

A process no init line names (NCCL 2.4-era excerpts print only ring, tree and channel lines)
takes the own rank its topology lines state (`nccl_topology` events), or its proxy's WARNs
(`[Proxy Service 93] Failed to execute operation Setup from rank 93`), when they state one
rank only: a process in several communicators states several, and then none is taken.

Failing both, a process's rank is what names its rank and pid together: the rank's own print
(`rank=2 pid=18459`, parsers/process_ids.py) or torchrun's failure summary (`rank : 3
(local_rank: 3)` / `exitcode : -9 (pid: 4268)`). That is how the kernel's `Killed process
25315` in a pasted `dmesg` finds its rank.

A line that names a pid without a host (`Unhandled exception ... proc 2834`, c10's `SIGABRT(6),
PID: 3154296`) takes the rank of that pid when exactly one process of the job has it.
"""

from __future__ import annotations

import polars as pl

PROCESS = ["host", "pid"]


def attribute_by_process(events: pl.DataFrame) -> pl.DataFrame:
    """Fill `rank` (with `rank_from = "process"`) from the (host, pid) of world-comm inits, else
    of topology lines."""
    if not {"host", "pid"} <= set(events.columns):
        return events
    mapping = _process_ranks(events)
    if mapping.is_empty():
        return events
    by_process = (
        events.join(mapping, on=PROCESS, how="left")
        .join(_lone_pids(mapping), on="pid", how="left")
        .with_columns(
            pl.coalesce(
                "process_rank", pl.when(pl.col("host").is_null()).then(pl.col("pid_rank"))
            ).alias("process_rank")
        )
        .drop("pid_rank")
    )
    # a file whose processes are of different ranks is no one rank's: the rank its name gave
    # it goes (NVIDIA/nccl#1808: `worker-9.log` holds ranks 80 and 82's NCCL lines)
    shared = pl.col("process_rank").drop_nulls().n_unique().over("file") > 1
    by_name = pl.col("rank_from").is_in(["path", "path_local"]).fill_null(False) & shared
    fill = (pl.col("rank").is_null() | by_name) & pl.col("process_rank").is_not_null()
    return by_process.with_columns(
        pl.when(fill)
        .then(pl.col("process_rank"))
        .when(by_name)
        .then(None)
        .otherwise(pl.col("rank"))
        .alias("rank"),
        pl.when(fill)
        .then(pl.lit("process"))
        .when(by_name)
        .then(None)
        .otherwise(pl.col("rank_from"))
        .alias("rank_from"),
    ).drop("process_rank")


def _process_ranks(events: pl.DataFrame) -> pl.DataFrame:
    """(host, pid, process_rank): from world-comm inits, else from topology lines, else from
    what names a process's rank and pid together (the rank's own `rank=2 pid=18459`, torchrun's
    failure summary)."""
    from_inits = _world_init_ranks(events)
    from_topology = _topology_ranks(events).join(from_inits, on=PROCESS, how="anti")
    known = pl.concat([from_inits, from_topology])
    stated = _stated_ranks(events)
    return pl.concat([known, stated.join(known, on=PROCESS, how="anti")])


# events that state a process's global rank and its pid on one line or block
STATING = ("process_id", "child_failed")


def _stated_ranks(events: pl.DataFrame) -> pl.DataFrame:
    stated = events.filter(
        pl.col("event").is_in(STATING) & pl.col("rank").is_not_null() & pl.col("pid").is_not_null()
    )
    return _one_rank_each(stated, "rank")


def _world_init_ranks(events: pl.DataFrame) -> pl.DataFrame:
    empty = pl.DataFrame(schema={"host": pl.String, "pid": pl.Int64, "process_rank": pl.Int32})
    if "nranks" not in events.columns:
        return empty
    inits = _identified(events).filter(pl.col("nranks").is_not_null())
    if inits.is_empty():
        return empty
    world = inits.get_column("nranks").max()
    return _one_rank_each(inits.filter(pl.col("nranks") == world))


# events whose `comm_rank` is the process's own rank in a communicator
OWN_RANK_EVENTS = ("nccl_topology", "nccl_error", "nccl_warn")


def _topology_ranks(events: pl.DataFrame) -> pl.DataFrame:
    return _one_rank_each(_identified(events).filter(pl.col("event").is_in(OWN_RANK_EVENTS)))


def _identified(events: pl.DataFrame) -> pl.DataFrame:
    if "comm_rank" not in events.columns:
        return events.clear().with_columns(pl.lit(None, dtype=pl.Int32).alias("comm_rank"))
    return events.filter(
        pl.col("host").is_not_null()
        & pl.col("pid").is_not_null()
        & pl.col("comm_rank").is_not_null()
    )


def _one_rank_each(records: pl.DataFrame, rank: str = "comm_rank") -> pl.DataFrame:
    """(host, pid, process_rank) for processes whose records state one rank in column `rank`
    (a process with two is ambiguous)."""
    return (
        records.group_by(PROCESS)
        .agg(pl.col(rank).unique().alias("ranks"))
        .filter(pl.col("ranks").list.len() == 1)
        .select(
            pl.col("host").cast(pl.String),
            pl.col("pid").cast(pl.Int64),
            pl.col("ranks").list.first().cast(pl.Int32).alias("process_rank"),
        )
    )


def _lone_pids(mapping: pl.DataFrame) -> pl.DataFrame:
    """(pid, pid_rank) for pids that one mapped process has: the rank of a line that names a
    pid without a host."""
    return mapping.filter(pl.col("pid").is_unique()).select(
        "pid", pl.col("process_rank").alias("pid_rank")
    )
