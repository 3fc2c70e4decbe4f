"""Lines that say a rank started or ended an epoch of its training loop:

    rank=2 epoch=0 start
    rank=0 epoch=0 end
    rank=3 epoch=0 finished local loop, entering epoch-end barrier

A rank that ends an epoch after fewer steps than another had fewer batches: the DataLoader
lengths differ. Marks printed between a rank's `start` and `end` lines belong to that epoch
even when they do not say so.
"""

from __future__ import annotations

import polars as pl

from logforensics.registry import LineParser
from parsers.key_values import WORD_START, extract_number

EPOCH = WORD_START + r"epoch=\d+"
START_WORDS = r"(?i)\b(?:start|started|starts|begin|begins|beginning)\b"
END_WORDS = r"(?i)\b(?:end|ended|ends|finished|done|complete|completed)\b"


def parse(lines: pl.DataFrame) -> pl.DataFrame:
    message = pl.col("message")
    # a stage mark that carries `epoch=` is a stage mark, not an epoch boundary
    boundary = message.str.contains(EPOCH) & ~message.str.contains("stage=", literal=True)
    event = (
        pl.when(message.str.contains(END_WORDS))
        .then(pl.lit("epoch_end"))
        .when(message.str.contains(START_WORDS))
        .then(pl.lit("epoch_start"))
    )
    found = lines.filter(boundary).select(
        "file",
        "line",
        event.alias("event"),
        extract_number("rank", pl.Int32()),
        extract_number("epoch", pl.Int64()),
        pl.lit("info").alias("severity"),
    )
    return found.filter(pl.col("event").is_not_null())


PARSER = LineParser(name="epoch_marks", literals=("epoch=",), parse=parse)
