"""`key=value` fields that training scripts print (`rank=1 step=37 epoch=0`), shared by the
parsers that read them. Not a parser itself (no `PARSER`)."""

from __future__ import annotations

import polars as pl

# A key must start a word, so `local_rank=0` or `prestep=3` are not read as `rank`/`step`.
WORD_START = r"(?:^|[\s,;(\[{|])"


def number_after(key: str) -> str:
    """The regex of `<key>=<digits>` as a whole word, capturing the digits."""
    return WORD_START + key + r"=(\d+)"


def extract_number(key: str, dtype: pl.DataType) -> pl.Expr:
    """The number after `<key>=` in `message`, null when absent, named `key`."""
    return pl.col("message").str.extract(number_after(key), 1).cast(dtype, strict=False).alias(key)


# icefall's log header (k2-fsa/icefall `setup_logger`, also lhotse-based recipes such as
# lifeiteng/vall-e) names the rank and the world size after the source location:
#   2023-04-13 16:00:05,621 INFO [trainer.py:650] (5/8) Reaches end of dataloader.
RANK_OF_WORLD = r"\[[\w.-]+:\d+\] \((\d+)/(\d+)\) "


# `Validate epoch: 1, rank: 1`, `rank 3 reached ...`: a rank word (not `local_rank`)
RANK_WORD = r"(?:^|[^A-Za-z_-])[Rr]ank[ :=#]*(\d+)"


def stated_rank() -> tuple[pl.Expr, pl.Expr]:
    """The rank and the world size a line's `message` states: an icefall header's
    `(rank/world)` (a rank beyond its world is none), else a rank word and no world."""
    rank, world = _header_tag()
    plausible = (rank < world) & (world > 0)
    said = pl.col("message").str.extract(RANK_WORD, 1).cast(pl.Int32, strict=False)
    return (
        pl.when(plausible).then(rank).otherwise(pl.when(world.is_null()).then(said)).alias("rank"),
        pl.when(plausible).then(world).alias("world_size"),
    )


def header_rank() -> pl.Expr:
    """The rank an icefall header's `(rank/world)` states, null without one (or beyond its
    world)."""
    rank, world = _header_tag()
    return pl.when((rank < world) & (world > 0)).then(rank)


def _header_tag() -> tuple[pl.Expr, pl.Expr]:
    tag = pl.col("message").str.extract_groups(RANK_OF_WORLD)
    return (
        tag.struct.field("1").cast(pl.Int32, strict=False),
        tag.struct.field("2").cast(pl.Int32, strict=False),
    )
