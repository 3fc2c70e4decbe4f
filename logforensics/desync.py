"""Evidence of a desync in timeout reports alone: different collectives at one sequence number."""

from __future__ import annotations

import polars as pl

TIMEOUT_EVENTS = ("collective_timeout", "transport_timeout")


def per_rank_timeouts(events: pl.DataFrame) -> pl.DataFrame:
    """One timeout row per (rank, pg, seq, op): the watchdog repeats itself several times.

    `pg` is reduced to the group id, a line without a PG tag being the default group 0
    (`[Rank 3] Watchdog caught ...` and `[PG ID 0 PG GUID 0(default_pg) Rank 3]` agree).
    """
    timeouts = events.filter(
        pl.col("event").is_in(TIMEOUT_EVENTS)
        & pl.col("rank").is_not_null()
        & pl.col("seq").is_not_null()
    ).with_columns(
        pl.col("pg").is_not_null().alias("pg_tagged"),
        pl.col("pg").str.extract(r"^(\d+)", 1).fill_null("0").alias("pg"),
    )
    return timeouts.unique(subset=["rank", "pg", "seq", "op"], keep="first", maintain_order=True)


def mixed_ops_at_one_seq(timeouts: pl.DataFrame) -> pl.DataFrame:
    """The per-rank timeout rows at the first (pg, seq) where ranks name different ops."""
    with_op = timeouts.filter(pl.col("op").is_not_null())
    mixed = (
        with_op.group_by("pg", "seq")
        .agg(pl.col("op").n_unique().alias("ops"))
        .filter(pl.col("ops") > 1)
        .sort("seq")
    )
    if mixed.is_empty():
        return with_op.clear()
    seq, pg = mixed.item(0, "seq"), mixed.item(0, "pg")
    return with_op.filter((pl.col("seq") == seq) & pl.col("pg").eq_missing(pg)).sort("rank")


def describe(rows: pl.DataFrame) -> str:
    """`"SeqNum 80078: rank 3 ALLREDUCE (2106881 elements), rank 7 BROADCAST (5056 elements)"`."""
    parts = []
    for row in rows.iter_rows(named=True):
        size = f" ({row['numel_in']} elements)" if row["numel_in"] is not None else ""
        parts.append(f"rank {row['rank']} {row['op']}{size}")
    return f"SeqNum {rows.item(0, 'seq')}: " + ", ".join(parts)
