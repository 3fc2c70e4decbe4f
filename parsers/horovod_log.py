# ruff: noqa: E501 -- verbatim log lines are quoted whole in the docstring and comments
"""Horovod's own error records: the background loop that runs every collective of a rank died
of an exception (horovod/common/operations.cc), and the rank's next collective then finds
Horovod shut down. NVIDIA-Merlin/NVTabular#1320, verbatim:

    [1,1]<stderr>:[2021-12-14 10:18:27.983077: E /tmp/pip-install-mwp6l21a/horovod_1f03263b83654efeb4c82a546f8aadfa/horovod/common/operations.cc:649] [1]: Horovod background loop uncaught exception: CUDA error: invalid configuration argument

An `exception` event of the rank in brackets (Horovod's rank), its words as `exc_message`: the
rank's own failure, which the others' `Horovod has been shut down` follows.
"""

from __future__ import annotations

import polars as pl

from logforensics.registry import LineParser

BACKGROUND_DIED = "Horovod background loop uncaught exception"
# `[<date> <time>: E <source>:<line>] [<rank>]: ` before Horovod's words (the microseconds may
# be space-padded: `03:23:51. 70957`)
RECORD = (
    r"^\[\d{4}-\d{2}-\d{2} [\d:. ]+: [EF] [^\]]*\] (?:\[(?P<rank>\d+)\]: )?"
    + BACKGROUND_DIED
    + r": ?(?P<what>.*)$"
)
MESSAGE_CHARS = 300


def parse(lines: pl.DataFrame) -> pl.DataFrame:
    record = pl.col("message").str.extract_groups(RECORD)
    return (
        lines.with_columns(record.alias("_record"))
        .filter(pl.col("_record").struct.field("what").is_not_null())
        .select(
            "file",
            "line",
            pl.lit("exception").alias("event"),
            pl.lit("error").alias("severity"),
            pl.lit("Horovod background loop exception").alias("exc_type"),
            pl.col("_record")
            .struct.field("what")
            .str.strip_chars()
            .str.slice(0, MESSAGE_CHARS)
            .alias("exc_message"),
            pl.col("_record").struct.field("rank").cast(pl.Int32, strict=False).alias("rank"),
        )
    )


PARSER = LineParser(name="horovod_log", literals=(BACKGROUND_DIED,), parse=parse)
