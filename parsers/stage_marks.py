"""Per-rank progress marks printed by the training loop.

    rank=1 step=37 stage=before_backward
    2026-11-29 10:00:01,234 INFO rank=1 step=37 stage=before_backward loss=0.1 epoch=0

The three keys may stand anywhere in the line, among other `key=value` pairs. A job writes
one mark per rank, step and stage: hundreds of millions for a large job. They are kept in the
narrow progress table (rank, step, stage, epoch, file, line), not as event rows, and their
lines are offered to no other family. The common layout (`rank=R step=S stage=X`, in that
order) is read by splitting, the rest by regular expressions.
"""

from __future__ import annotations

import polars as pl

from logforensics.registry import LineParser
from parsers.key_values import WORD_START, extract_number

STAGE = WORD_START + r"stage=([A-Za-z0-9_.:/-]+)"
# What a progress mark keeps besides its place (file, line): who wrote it and where it stands.
WRITER_COLUMNS = ("prefix_node", "prefix_host", "prefix_local_rank")


def parse(lines: pl.DataFrame) -> pl.DataFrame:
    head_tail = pl.col("message").str.splitn("rank=", 2)
    split = lines.with_columns(
        head_tail.struct.field("field_0").alias("_head"),
        head_tail.struct.field("field_1").str.split_exact(" ", 2).alias("_keys"),
    )
    keys = pl.col("_keys")
    canonical = (
        (pl.col("_head").eq("") | pl.col("_head").str.ends_with(" "))
        & keys.struct.field("field_1").str.starts_with("step=")
        & keys.struct.field("field_2").str.starts_with("stage=")
    ).fill_null(False)
    split = split.with_columns(canonical.alias("_canonical"))
    fast = split.filter(pl.col("_canonical")).select(
        *_place(lines),
        keys.struct.field("field_0").str.to_integer(strict=False).cast(pl.Int32).alias("rank"),
        keys.struct.field("field_1")
        .str.strip_prefix("step=")
        .str.to_integer(strict=False)
        .alias("step"),
        keys.struct.field("field_2").str.strip_prefix("stage=").alias("stage"),
        _epoch(),
    )
    slow = split.filter(~pl.col("_canonical")).select(
        *_place(lines),
        extract_number("rank", pl.Int32()),
        extract_number("step", pl.Int64()),
        pl.col("message").str.extract(STAGE, 1).alias("stage"),
        _epoch(),
    )
    marks = pl.concat([fast, slow]).drop_nulls(["rank", "step", "stage"])
    # a rank a launcher prefix states is the one to trust (`[rank3]:rank=3 ...`)
    stated = pl.col("prefix_rank").is_not_null()
    return marks.with_columns(
        pl.coalesce("prefix_rank", "rank").alias("rank"),
        pl.when(stated).then(pl.lit("prefix")).otherwise(pl.lit("content")).alias("rank_from"),
        pl.lit("stage").alias("event"),
    ).drop("prefix_rank")


def _place(lines: pl.DataFrame) -> list[str]:
    present = [name for name in WRITER_COLUMNS if name in lines.columns]
    return ["file", "line", "prefix_rank", *present]


def _epoch() -> pl.Expr:
    message = pl.col("message")
    return (
        pl.when(message.str.contains("epoch=", literal=True))
        .then(extract_number("epoch", pl.Int64()))
        .alias("epoch")
    )


PARSER = LineParser(name="stage_marks", literals=("stage=",), parse=parse, progress=True)
