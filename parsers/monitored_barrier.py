# ruff: noqa: E501 -- verbatim log lines are quoted whole in the docstring and comments
"""`torch.distributed.monitored_barrier` failures (pytorch/pytorch:
torch/csrc/distributed/c10d/ProcessGroupGloo.cpp, `monitoredBarrier`). Verbatim:

    RuntimeError: Rank 1 failed to pass monitoredBarrier in 2000 ms
    [rank0]: RuntimeError: [Rank 0]: Ranks 6 failed to pass monitoredBarrier in 180000000000 ms
    Rank 3 successfully reached monitoredBarrier, but received errors while waiting for send/recv from rank 0. Please check rank 0 logs for faulty rank.

Only the coordinating rank (rank 0, printed as `[Rank 0]: ` in current torch) names the ranks
that never arrived: `Rank r` with wait_all_ranks=False, `Ranks 1, 2` with wait_all_ranks=True.
Every other rank only says it reached the barrier and got an error back from rank 0.
"""

from __future__ import annotations

import polars as pl

from logforensics.registry import LineParser

# [Rank 0]: Ranks 1, 2 failed to pass monitoredBarrier in 120000 ms
BARRIER_FAILED = (
    r"(?:\[Rank (?P<reporter>\d+)\]: )?Ranks? (?P<failed>\d+(?:, \d+)*) "
    r"failed to pass monitoredBarrier in (?P<timeout_ms>\d+) ms"
)
# Rank 3 successfully reached monitoredBarrier, but received errors while waiting for send/recv from rank 0. ...
BARRIER_PEER_ERROR = (
    r"Rank (?P<rank>\d+) successfully reached monitoredBarrier, but received errors while "
    r"waiting for send/recv from rank (?P<peer_rank>\d+)"
)


def _failed(lines: pl.DataFrame) -> pl.DataFrame:
    found = pl.col("message").str.extract_groups(BARRIER_FAILED)
    return lines.filter(pl.col("message").str.contains(BARRIER_FAILED)).select(
        "file",
        "line",
        pl.lit("barrier_failed").alias("event"),
        pl.lit("error").alias("severity"),
        found.struct.field("reporter").cast(pl.Int32, strict=False).alias("rank"),
        found.struct.field("failed")
        .str.split(", ")
        .list.eval(pl.element().cast(pl.Int64, strict=False))
        .alias("values"),
        found.struct.field("timeout_ms").cast(pl.Int64, strict=False).alias("timeout_ms"),
    )


def _peer_errors(lines: pl.DataFrame) -> pl.DataFrame:
    found = pl.col("message").str.extract_groups(BARRIER_PEER_ERROR)
    return lines.filter(pl.col("message").str.contains(BARRIER_PEER_ERROR)).select(
        "file",
        "line",
        pl.lit("barrier_peer_error").alias("event"),
        pl.lit("warning").alias("severity"),
        found.struct.field("rank").cast(pl.Int32, strict=False).alias("rank"),
        found.struct.field("peer_rank").cast(pl.Int32, strict=False).alias("peer_rank"),
    )


def parse(lines: pl.DataFrame) -> pl.DataFrame:
    return pl.concat([_failed(lines), _peer_errors(lines)], how="diagonal_relaxed")


PARSER = LineParser(
    name="monitored_barrier",
    literals=("failed to pass monitoredBarrier", "successfully reached monitoredBarrier"),
    parse=parse,
)
