# ruff: noqa: E501 -- verbatim log lines are quoted whole in the docstring
"""The shapes each process passed to one of accelerate's collectives, as accelerate reports
them when they differ (accelerate/utils/operations.py, `verify_operation`, with
ACCELERATE_DEBUG_MODE; huggingface/lighteval#204):

    Cannot apply desired operation due to shape mismatches. All shapes across devices must be valid.
    [rank3]: Operation: accelerate.utils.operations.gather`
    [rank3]: Input shapes:
    [rank3]:   - Process 0: [1024]
    [rank3]:   - Process 1: [2048]

(accelerate's own documentation quotes the same report with the operation in backticks:
``Operation: `accelerate.utils.operations.broadcast` ``.) Each `- Process N: <shape>` line is a
`process_shape` event: `peer_rank` the process index (accelerate's index is the global rank),
`shape` as printed, `op` the operation named above it and `value` the report it belongs to
(numbered per writer). The report's opening, operation and `Input shapes:` lines are
recognised.
"""

from __future__ import annotations

import polars as pl

from logforensics.registry import LineParser
from parsers.traceback import writer_stream

OPENING = "Cannot apply desired operation due to shape mismatches"
# Operation: `accelerate.utils.operations.gather`   (a paste may lose the first backtick)
OPERATION = r"^\s*Operation: `?(?:accelerate\.utils\.operations\.)?(?P<op>[\w.]+)`?\s*$"
INPUT_SHAPES = r"^\s*Input shapes:\s*$"
#   - Process 0: [1024]
PROCESS_SHAPE = r"^\s*- Process (?P<process>\d+): (?P<shape>\S.*?)\s*$"
STREAM = "_stream"


def parse(lines: pl.DataFrame) -> pl.DataFrame:
    message = pl.col("message").fill_null("")
    operation = message.str.extract(OPERATION, 1)
    shape = message.str.extract_groups(PROCESS_SHAPE)
    rows = (
        lines.sort("file", "line")
        .with_columns(writer_stream(lines.columns).alias(STREAM))
        .with_columns(
            operation.alias("_op"),
            operation.is_not_null().cum_sum().over(STREAM).alias("_report"),
            shape.alias("_shape"),
        )
        .with_columns(pl.col("_op").forward_fill().over(STREAM))
    )
    # a process's line belongs to a report only below its `Operation:` line
    shapes = rows.filter(
        pl.col("_shape").struct.field("process").is_not_null() & (pl.col("_report") > 0)
    ).select(
        "file",
        "line",
        pl.lit("process_shape").alias("event"),
        pl.lit("error").alias("severity"),
        pl.col("_shape").struct.field("process").cast(pl.Int32, strict=False).alias("peer_rank"),
        pl.col("_shape").struct.field("shape").alias("shape"),
        pl.col("_op").alias("op"),
        pl.col("_report").cast(pl.Int64).alias("value"),
    )
    said = rows.filter(
        message.str.contains(OPENING, literal=True)
        | message.str.contains(OPERATION)
        | message.str.contains(INPUT_SHAPES)
    ).select("file", "line", pl.lit(None, dtype=pl.String).alias("event"))
    return pl.concat([shapes, said], how="diagonal_relaxed")


PARSER = LineParser(
    name="accelerate_shapes",
    literals=(OPENING, "Operation: ", "Input shapes:", "- Process "),
    parse=parse,
)
