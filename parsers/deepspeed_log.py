# ruff: noqa: E501 -- verbatim log lines are quoted whole in the docstring
"""DeepSpeed's own logger at INFO (its warnings and errors are `log_levels`'):

    [2024-09-11 17:52:11,320] [INFO] [checkpointing.py:546:forward] ----Profiling time in checkpointing False
    [2024-09-11 17:52:18,030] [INFO] [loss_scaler.py:183:update_scale] [deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 4294967296, reducing to 2147483648

(zai-org/CogVideo#233, a healthy run.) Lines of the job, recognised and nothing more: a log made
of them is a training job's log, not something else. The fp16 `OVERFLOW! ... Skipping step` is
no rank's divergence: the overflow flag is all-reduced, and every rank skips that step together.
"""

from __future__ import annotations

import polars as pl

from logforensics.registry import LineParser

HEADER = r"^\[\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2},\d{3}\] \[(?:INFO|DEBUG)\] \[[\w.]+:\d+:\w+\] "


def parse(lines: pl.DataFrame) -> pl.DataFrame:
    return lines.filter(pl.col("message").str.contains(HEADER)).select(
        "file", "line", pl.lit(None, dtype=pl.String).alias("event")
    )


PARSER = LineParser(name="deepspeed_log", literals=("] [INFO] [", "] [DEBUG] ["), parse=parse)
