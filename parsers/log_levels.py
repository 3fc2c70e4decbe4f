"""Warnings and errors a training script logs itself (Python logging, DeepSpeed's logger):

    2026-11-30 15:04:31,251 WARNING rank=2 step=5 non-finite loss=nan -> skipping batch
    [2024-01-01 10:00:00,123] [ERROR] [engine.py:120:step] gradient overflow
    WARNING:root:bad sample 1731, skipped

Often the one line that says why a rank left the others' path; the stage-divergence finding
quotes it. Python's own `UserWarning:` and NCCL's `WARN` are other families.
"""

from __future__ import annotations

import polars as pl

from logforensics.registry import LineParser
from parsers.key_values import extract_number

# the level as a word near the start: after a timestamp, a bracket, a logger name
LEVEL = r"^.{0,48}?(?:^|[\s\[|])(WARNING|ERROR|CRITICAL|FATAL)(?:\]|:|\s)"


def parse(lines: pl.DataFrame) -> pl.DataFrame:
    level = pl.col("message").str.extract(LEVEL, 1)
    found = lines.select(
        "file",
        "line",
        pl.when(level == "WARNING")
        .then(pl.lit("log_warning"))
        .when(level.is_not_null())
        .then(pl.lit("log_error"))
        .alias("event"),
        pl.when(level == "WARNING")
        .then(pl.lit("warning"))
        .otherwise(pl.lit("error"))
        .alias("severity"),
        extract_number("rank", pl.Int32()),
        extract_number("step", pl.Int64()),
    )
    return found.filter(pl.col("event").is_not_null())


PARSER = LineParser(
    name="log_levels", literals=("WARNING", "ERROR", "CRITICAL", "FATAL"), parse=parse
)
