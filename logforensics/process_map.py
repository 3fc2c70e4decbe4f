"""Give a rank to lines that carry only a process identity (host, pid), such as NCCL_DEBUG
lines: the job's world communicator init lines map each (host, pid) to a global rank.

A communicator is the world when its size is the largest seen; its `comm_rank` is then the
global rank. Lines of sub-communicators keep their own `comm_rank` as a separate column.
"""

from __future__ import annotations

import polars as pl


def attribute_by_process(events: pl.DataFrame) -> pl.DataFrame:
    """Fill `rank` (with `rank_from = "process"`) from the (host, pid) of world-comm inits."""
    needed = {"host", "pid", "comm_rank", "nranks"}
    if not needed <= set(events.columns):
        return events
    inits = events.filter(
        pl.col("host").is_not_null()
        & pl.col("pid").is_not_null()
        & pl.col("comm_rank").is_not_null()
        & pl.col("nranks").is_not_null()
    )
    if inits.is_empty():
        return events
    world = inits.get_column("nranks").max()
    mapping = (
        inits.filter(pl.col("nranks") == world)
        .group_by("host", "pid")
        .agg(pl.col("comm_rank").unique().alias("ranks"))
        .filter(pl.col("ranks").list.len() == 1)  # a process with two world ranks is ambiguous
        .select("host", "pid", pl.col("ranks").list.first().cast(pl.Int32).alias("process_rank"))
    )
    events = events.join(mapping, on=["host", "pid"], how="left")
    fill = pl.col("rank").is_null() & pl.col("process_rank").is_not_null()
    return events.with_columns(
        pl.when(fill).then(pl.col("process_rank")).otherwise(pl.col("rank")).alias("rank"),
        pl.when(fill).then(pl.lit("process")).otherwise(pl.col("rank_from")).alias("rank_from"),
    ).drop("process_rank")
