"""Per-rank progress marks printed by the training loop.

    rank=1 step=37 stage=before_backward
    2026-11-29 10:00:01,234 INFO rank=1 step=37 stage=before_backward loss=0.12 epoch=0

The three keys may stand anywhere in the line, among other `key=value` pairs.
"""

from __future__ import annotations

import polars as pl

from logforensics.registry import LineParser
from parsers.key_values import WORD_START, extract_number

STAGE = WORD_START + r"stage=([A-Za-z0-9_.:/-]+)"


def parse(lines: pl.DataFrame) -> pl.DataFrame:
    message = pl.col("message")
    marks = lines.select(
        "file",
        "line",
        extract_number("rank", pl.Int32()),
        extract_number("step", pl.Int64()),
        message.str.extract(STAGE, 1).alias("stage"),
        extract_number("epoch", pl.Int64()),
    )
    return marks.drop_nulls(["rank", "step", "stage"]).with_columns(
        pl.lit("stage").alias("event"), pl.lit("info").alias("severity")
    )


PARSER = LineParser(name="stage_marks", literals=("stage=",), parse=parse)
