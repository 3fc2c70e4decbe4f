# ruff: noqa: E501 -- verbatim log lines are quoted whole in the docstring
"""A rank named by a Rust `tracing` record's span field, which the record prints last.

Text Generation Inference's launcher logs through `tracing`'s default formatter: time, level,
span, target, message, then the span's fields. Its shard manager's span carries the shard's
rank, so a one-line record ends with it and a multi-line one (a shard's whole stderr) closes
with it on a line of its own::

    2024-03-06T17:53:22.336246Z  INFO shard-manager: text_generation_launcher: Starting shard rank=0
    2024-03-06T17:53:31.052367Z ERROR shard-manager: text_generation_launcher: Shard complete standard error output:
    <the shard's traceback>
     rank=0

Every line of such a record, from its first line (or the file's start, when a paste began
inside the record) to the field that closes it, is that rank's.
"""

from __future__ import annotations

import polars as pl

# What follows the launcher's time stamp: level, span, target (`INFO shard-manager: x: `).
RECORD_START = r"^\s*(?:TRACE|DEBUG|INFO|WARN|ERROR) [\w-]+: [\w:]+: "
FIELD_AT_THE_END = r"\S rank=(\d+)$"
FIELD_ALONE = r"^ rank=(\d+)$"


def opens_a_span_record() -> pl.Expr:
    """A time-stamped line that is a tracing record inside a span."""
    return (
        pl.col("prefix_time").is_not_null()
        & pl.col("message").str.contains(RECORD_START)
        & pl.col("prefix_rank").is_null()
    ).fill_null(False)


def span_ranks(frame: pl.DataFrame) -> pl.DataFrame:
    """Give the rank a record's closing span field names to every line of that record.

    Only files with span records take part; a file's lines before its first record belong to
    the record a paste began inside.
    """
    starts = opens_a_span_record()
    message = pl.col("message").str.strip_chars_end()
    closing = (
        pl.when(starts)
        .then(message.str.extract(FIELD_AT_THE_END, 1))
        .otherwise(message.str.extract(FIELD_ALONE, 1))
        .cast(pl.Int32, strict=False)
    )
    record = starts.cum_sum().over("file")
    spanned = frame.with_columns(
        pl.when(starts.any().over("file")).then(closing).alias("_span"),
        record.alias("_record"),
    ).with_columns(pl.col("_span").backward_fill().over("file", "_record"))
    return spanned.with_columns(pl.coalesce("prefix_rank", "_span").alias("prefix_rank")).drop(
        "_span", "_record"
    )
