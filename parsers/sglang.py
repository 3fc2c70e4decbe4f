# ruff: noqa: E501 -- verbatim log lines are quoted whole in the docstring
"""SGLang's scheduler processes (one per tensor-parallel rank; their `[<time> TP3] ` prefix is
peeled by logforensics/framing.py). Each scheduler's watchdog reports a forward batch that did
not finish within `--watchdog-timeout` seconds, then the server's main process notices and
kills the process tree (sgl-project/sglang#3752, every TP rank within one second):

    [2025-03-09 00:57:15 TP4] Watchdog timeout (self.watchdog_timeout=300)
    [2025-03-09 00:57:20] Received sigquit from a child proces. It usually means the child failed.

A watchdog line is a `collective_timeout` of its rank with the timeout in `timeout_ms`: the
ranks waited in their step together, as NCCL's watchdog reports it; the main process's notice
is recognised.
"""

from __future__ import annotations

import polars as pl

from logforensics.registry import LineParser

WATCHDOG = r"Watchdog timeout \(self\.watchdog_timeout=(\d+(?:\.\d+)?)"
# (`proces` as SGLang spells it)
CHILD_FAILED = "Received sigquit from a child proces"


def parse(lines: pl.DataFrame) -> pl.DataFrame:
    message = pl.col("message")
    seconds = message.str.extract(WATCHDOG, 1).cast(pl.Float64, strict=False)
    timeouts = (
        lines.with_columns(seconds.alias("_seconds"))
        .filter(pl.col("_seconds").is_not_null())
        .select(
            "file",
            "line",
            pl.lit("collective_timeout").alias("event"),
            pl.lit("error").alias("severity"),
            (pl.col("_seconds") * 1000).cast(pl.Int64, strict=False).alias("timeout_ms"),
        )
    )
    notices = lines.filter(message.str.contains(CHILD_FAILED, literal=True)).select(
        "file", "line", pl.lit(None, pl.String).alias("event")
    )
    return pl.concat([timeouts, notices], how="diagonal_relaxed")


PARSER = LineParser(name="sglang", literals=("self.watchdog_timeout=", CHILD_FAILED), parse=parse)
