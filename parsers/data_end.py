"""Lines that say a rank's data for the epoch ran out:

    2023-04-13 16:00:05,621 INFO [trainer.py:650] (5/8) Reaches end of dataloader.

(lifeiteng/vall-e#86: ranks 4-7 reached the end of their batches and went on to validation
while ranks 0-3 still had batches; the job hung.) Each is a `data_end` event with the rank
and world size the line states (an icefall header's `(rank/world)`, or `rank N`). A rank whose
data ends before the others' stops joining the collectives they still issue: the DataLoader
lengths differ (`rules/loader_size_mismatch.py`).
"""

from __future__ import annotations

import polars as pl

from logforensics.registry import LineParser
from parsers.key_values import stated_rank

DATA_END = (
    r"(?i)\b(?:reach(?:es|ed)? (?:the )?end of (?:the |its |my )?(?:data ?loader|dataset|data)"
    r"|data ?loader (?:is |was )?exhausted|ran out of (?:data|batches)|no more (?:data|batches))\b"
)


def parse(lines: pl.DataFrame) -> pl.DataFrame:
    rank, world_size = stated_rank()
    return lines.filter(pl.col("message").str.contains(DATA_END)).select(
        "file",
        "line",
        pl.lit("data_end").alias("event"),
        pl.lit("info").alias("severity"),
        rank,
        world_size,
    )


PARSER = LineParser(
    name="data_end",
    literals=("end of", "nd of data", "xhausted", "ran out of", "no more", "No more"),
    parse=parse,
)
