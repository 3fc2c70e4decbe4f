# ruff: noqa: E501 -- verbatim log lines are quoted whole in the docstring
"""Text Generation Inference's launcher waiting for its shards to load, and their readiness.

The launcher starts one shard process per GPU and, every ten seconds until a shard says it is
ready, logs that it still waits for it; the shard's own output appears only when it fails
(huggingface/text-generation-inference#1838, #2139; `framing` reads the rank from the span
field that ends the record; before the shard manager had a span, #81, the number was in the
sentence; the readiness line from huggingface/ms-build-mi300's README):

    2024-05-01T01:17:02.618817Z  INFO shard-manager: text_generation_launcher: Waiting for shard to be ready... rank=1
    2024-05-01T01:17:12.629043Z  INFO shard-manager: text_generation_launcher: Waiting for shard to be ready... rank=1
    2024-05-07T12:39:20.593317Z  INFO shard-manager: text_generation_launcher: Shard ready in 10.308899699s rank=0
    2023-02-20T16:45:24.091665Z  INFO text_generation_launcher: Waiting for shard 0 to be ready...

Events: `shard_waiting` (its rank the shard's) and `shard_ready`, both info: a wait is how a
loading shard looks; one that never ends is a finding (`logforensics/shard_wait.py`).
"""

from __future__ import annotations

import polars as pl

from logforensics.registry import LineParser

WAITING = r"\btext_generation_launcher: Waiting for shard (?:(?P<number>\d+) )?to be ready\.\.\."
READY = r"\btext_generation_launcher: Shard (?:(?P<number>\d+) )?ready in "


def parse(lines: pl.DataFrame) -> pl.DataFrame:
    message = pl.col("message")
    waiting, ready = message.str.contains(WAITING), message.str.contains(READY)
    number = pl.coalesce(message.str.extract(WAITING, 1), message.str.extract(READY, 1)).cast(
        pl.Int32, strict=False
    )
    return lines.filter(waiting | ready).select(
        "file",
        "line",
        pl.when(waiting)
        .then(pl.lit("shard_waiting"))
        .otherwise(pl.lit("shard_ready"))
        .alias("event"),
        pl.lit("info").alias("severity"),
        number.alias("rank"),
    )


PARSER = LineParser(name="tgi_launcher", literals=("to be ready...", "ready in "), parse=parse)
