# ruff: noqa: E501 -- verbatim log lines are quoted whole in the docstring
"""A DataLoader worker's own crash report. PyTorch installs signal handlers in each worker
process (torch/csrc/DataLoader.cpp) that print one line before the worker dies:

    ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).
    ERROR: Unexpected segmentation fault encountered in worker.
    ERROR: Unexpected floating-point exception encountered in worker.

(NVIDIA/Megatron-LM#878: three workers' bus errors in a container with Docker's default 64 MB
/dev/shm.) A `loader_worker_crash` event with the signal; the rank is that of the process
whose output holds the line, when a prefix or the file says it.
"""

from __future__ import annotations

import polars as pl

from logforensics.registry import LineParser

CRASH = r"ERROR: Unexpected (bus error|segmentation fault|floating-point exception) encountered in worker\."
SIGNALS = {
    "bus error": "SIGBUS",
    "segmentation fault": "SIGSEGV",
    "floating-point exception": "SIGFPE",
}


def parse(lines: pl.DataFrame) -> pl.DataFrame:
    what = pl.col("message").str.extract(CRASH, 1)
    return (
        lines.with_columns(what.alias("_what"))
        .filter(pl.col("_what").is_not_null())
        .select(
            "file",
            "line",
            pl.lit("loader_worker_crash").alias("event"),
            pl.lit("error").alias("severity"),
            pl.col("_what").replace_strict(SIGNALS, return_dtype=pl.String).alias("signal"),
            # the worker's own words, not what a cut paste left before them
            pl.col("message")
            .str.extract(r"(ERROR: Unexpected .*)", 1)
            .str.strip_chars()
            .alias("exc_message"),
        )
    )


PARSER = LineParser(name="loader_workers", literals=("encountered in worker.",), parse=parse)
