"""A rank's own word that it skipped a batch or a step (a run here: FSDP2 on gloo, rank 1's
NaN check at step 3 went on to the next step's forward while the others waited in the
gradient reduce-scatter, and gloo aborted on the mismatched sizes):

    rank 1 step 3: loss is nan, skipping

A `skip_notice` event with the rank and step the line states (`rank 1`, `rank=1`, `[rank1]`,
an icefall `(1/8)`; `step 3`, `step=3`, `iteration 3`). A skip one rank decides alone
desynchronises the collectives; the ones every rank takes together are not told here: the
mixed-precision loss scaler's (`OVERFLOW! Rank 0 Skipping step. Attempted loss scale: ...`,
`Gradient overflow. Skipping step, loss scaler 0 reducing loss scale to ...`), which skip the
step on every rank at once.
"""

from __future__ import annotations

import polars as pl

from logforensics.registry import LineParser
from parsers.key_values import stated_rank

SKIPPED = (
    r"(?i)\bskip(?:ping|ped|s)?\b.{0,60}\b(?:batch|step|iter(?:ation)?|sample|update|loss)\b"
    r"|\b(?:nan|inf|non-finite|infinite)\b.{0,60}\bskip(?:ping|ped)?\b"
)
# the loss scaler's skip, taken on every rank together
TOGETHER = r"(?i)overflow|loss[ _]scal"
STEP = r"(?i)\b(?:step|iter(?:ation)?)\b\s*[=:]?\s*(\d+)"


def parse(lines: pl.DataFrame) -> pl.DataFrame:
    message = pl.col("message")
    rank, _ = stated_rank()
    return lines.filter(message.str.contains(SKIPPED) & ~message.str.contains(TOGETHER)).select(
        "file",
        "line",
        pl.lit("skip_notice").alias("event"),
        pl.lit("warning").alias("severity"),
        rank,
        message.str.extract(STEP, 1).cast(pl.Int64, strict=False).alias("step"),
        message.str.strip_chars().alias("exc_message"),
    )


PARSER = LineParser(name="skip_notices", literals=("skip", "Skip", "SKIP"), parse=parse)
