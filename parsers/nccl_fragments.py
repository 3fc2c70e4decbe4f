# ruff: noqa: E501 -- verbatim log lines are quoted whole in the docstring
"""The tails of NCCL's `Init COMPLETE` lines whose start another process's write cut off: when
the processes of a node share one console, their lines can interleave mid-line, and what is
left of a record is its end (a 2 x 8 H100 Lightning run under SLURM, nebius/nebius-solution-library
soperator/test/mlperf-sd, healthy):

    000 commId 0x753d166fb39e1659 - Init COMPLETE
     12 nranks 16 cudaDev 4 nvmlDev 4 busId ab000 commId 0x753d166fb39e1659 - Init COMPLETE
    859 [2] NCCL INFO comm 0x5635fc351070 rank 10 nranks 16 cudaDev 2 nvmlDev 2 busId 95000 commId 0x753d166fb39e1659 - Init COMPLETE

Each is an `nccl_init_fragment` event: `comm_id` its communicator, `comm_rank` and `nranks`
when the tail still holds `rank N nranks M`. A rank whose own record was cut this way did
complete its init; the missing_rank rule counts them before calling any rank stuck.
"""

from __future__ import annotations

import polars as pl

from logforensics.registry import LineParser
from parsers.nccl import COMM_ID, COMM_RANKS, NCCL_LINE_TEST

COMPLETE = r" - Init COMPLETE\s*$"


def parse(lines: pl.DataFrame) -> pl.DataFrame:
    message = pl.col("message")
    tails = lines.filter(message.str.contains(COMPLETE) & ~message.str.contains(NCCL_LINE_TEST))
    ranks = message.str.extract_groups(COMM_RANKS)
    return tails.select(
        "file",
        "line",
        pl.lit("nccl_init_fragment").alias("event"),
        pl.lit("info").alias("severity"),
        message.str.extract(COMM_ID, 1).alias("comm_id"),
        ranks.struct.field("rank").cast(pl.Int32, strict=False).alias("comm_rank"),
        ranks.struct.field("nranks").cast(pl.Int32, strict=False).alias("nranks"),
    )


PARSER = LineParser(name="nccl_fragments", literals=(" - Init COMPLETE",), parse=parse)
