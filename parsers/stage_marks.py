"""Per-rank progress marks printed by the training loop.

    rank=1 step=37 stage=before_backward
    2026-11-29 10:00:01,234 INFO rank=1 step=37 stage=before_backward loss=0.12 epoch=0

The three keys may stand anywhere in the line, among other `key=value` pairs.
"""

from __future__ import annotations

import polars as pl

from logforensics.registry import LineParser

# Each key must start a word so `local_rank=0` or `prestep=3` are not read as `rank`/`step`.
RANK = r"(?:^|[\s,;(\[{|])rank=(\d+)"
STEP = r"(?:^|[\s,;(\[{|])step=(\d+)"
STAGE = r"(?:^|[\s,;(\[{|])stage=([A-Za-z0-9_.:/-]+)"
EPOCH = r"(?:^|[\s,;(\[{|])epoch=(\d+)"


def parse(lines: pl.DataFrame) -> pl.DataFrame:
    message = pl.col("message")
    marks = lines.select(
        "file",
        "line",
        message.str.extract(RANK, 1).cast(pl.Int32, strict=False).alias("rank"),
        message.str.extract(STEP, 1).cast(pl.Int64, strict=False).alias("step"),
        message.str.extract(STAGE, 1).alias("stage"),
        message.str.extract(EPOCH, 1).cast(pl.Int64, strict=False).alias("epoch"),
    )
    return marks.drop_nulls(["rank", "step", "stage"]).with_columns(
        pl.lit("stage").alias("event"), pl.lit("info").alias("severity")
    )


PARSER = LineParser(name="stage_marks", literals=("stage=",), parse=parse)
