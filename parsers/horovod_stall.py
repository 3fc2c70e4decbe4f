# ruff: noqa: E501 -- verbatim log lines are quoted whole in the docstring and comments
"""Horovod's stall inspector: the collectives some ranks submitted and the others did not.

Horovod's coordinator warns once ranks have waited 60 s for the rest of the ranks to submit a
tensor, and names the ranks, in three eras of wording (horovod/horovod#2640, #3950; #1012,
#534; PR #334):

    [0]<stderr>:[2021-02-02 03:23:51. 70957: W /tmp/pip-install-.../horovod/common/stall_inspector.cc:105] One or more tensors were submitted to be reduced, gathered or broadcasted by subset of ranks and are waiting for remainder of ranks for more than 60 seconds. This may indicate that different ranks are trying to submit different tensors or that only subset of ranks is submitting tensors, which will cause deadlock.
    [0]<stderr>:Missing ranks:
    [0]<stderr>:0: [allreduce.noname.222700]

    [1,0]<stderr>:[2019-04-13 13:55:31.858119: W horovod/common/operations.cc:588] HorovodBroadcast_dense_kernel_Momentum_0 [missing ranks: 1]

    ... Stalled ops: allreduce.conv1.weight [ready ranks: 5, 1, 4, 7, 2, 3], allreduce.bn1.weight [ready ranks: 5, 1, 4, 7, 2, 3], ...

Events: the warning itself is `stall` (a warning); each rank it names as missing is a
`stall_missing` with that rank in `peer_rank` and the tensors in `names`, and a list of ready
ranks is a `stall_ready` with the ranks in `values`. A `N: [...]` line counts only inside the
block under `Missing ranks:` (Horovod 0.18: `Stalled ranks:`).
"""

from __future__ import annotations

import polars as pl

from logforensics.registry import LineParser

STALL_WARNING = "submitted to be reduced, gathered or broadcasted by subset of ranks"
# Horovod 0.18 heads the same list `Stalled ranks:` (horovod/horovod#1442, verbatim):
#   [1,0]<stderr>:Stalled ranks:
#   [1,0]<stderr>:6: [horovod_allreduce.0, horovod_allreduce.1, horovod_allreduce.10, ...]
MISSING_HEADER = r"^\s*(?:Missing|Stalled) ranks:\s*$"
# 0: [allreduce.noname.222700]      1: [broadcast.a.bias, broadcast.a.weight ...]
# (a paste wrapped at a fixed width cuts a long list before its `]`: ludwig-ai/ludwig#610,
# `[1,0]<stderr>:0: [optimizer/DistributedAdamOptimizer_Allreduce/HorovodAllgather_optimizer_`
# `gradients_concat_0, ...` over three lines, the last tensor's name broken)
MISSING_ENTRY = r"^\s*(?P<rank>\d+): \[(?P<tensors>[^\]]*?)(?:\]\s*)?$"
# HorovodBroadcast_dense_kernel_Momentum_0 [missing ranks: 1]
MISSING_OF_OP = r"(?P<op>[\w./:-]+) \[missing ranks: (?P<ranks>\d+(?:, \d+)*)\]"
# allreduce.conv1.weight [ready ranks: 5, 1, 4, 7, 2, 3]
READY_OF_OP = r"(?P<op>[\w./:-]+) \[ready ranks: (?P<ranks>\d+(?:, \d+)*)\]"


def parse(lines: pl.DataFrame) -> pl.DataFrame:
    message = pl.col("message")
    rows = lines.sort("file", "line").with_columns(
        message.str.contains(MISSING_HEADER).alias("_header"),
        message.str.contains(MISSING_ENTRY).alias("_entry"),
    )
    # a block: the header and the entry lines right after it (candidates are only the lines
    # that hold a literal, so adjacency is by line number)
    adjacent = (pl.col("line") == pl.col("line").shift(1).over("file") + 1).fill_null(False)
    rows = rows.with_columns((~(adjacent & pl.col("_entry"))).cum_sum().over("file").alias("_run"))
    in_block = pl.col("_entry") & pl.col("_header").first().over("file", "_run")
    entry = message.str.extract_groups(MISSING_ENTRY)
    missing_entries = rows.filter(in_block).select(
        "file",
        "line",
        pl.lit("stall_missing").alias("event"),
        entry.struct.field("rank").cast(pl.Int32, strict=False).alias("peer_rank"),
        entry.struct.field("tensors").str.split(", ").alias("names"),
    )
    missing_of_op = (
        _per_op(rows, MISSING_OF_OP)
        .select(
            "file",
            "line",
            pl.col("_op").struct.field("ranks").str.split(", ").alias("_ranks"),
            pl.col("_op").struct.field("op").alias("_name"),
        )
        .explode("_ranks")
        .select(
            "file",
            "line",
            pl.lit("stall_missing").alias("event"),
            pl.col("_ranks").cast(pl.Int32, strict=False).alias("peer_rank"),
            pl.concat_list("_name").alias("names"),
        )
    )
    ready = _per_op(rows, READY_OF_OP).select(
        "file",
        "line",
        pl.lit("stall_ready").alias("event"),
        pl.col("_op")
        .struct.field("ranks")
        .str.split(", ")
        .list.eval(pl.element().cast(pl.Int64, strict=False))
        .alias("values"),
        pl.concat_list(pl.col("_op").struct.field("op")).alias("names"),
    )
    warnings = rows.filter(message.str.contains(STALL_WARNING, literal=True)).select(
        "file", "line", pl.lit("stall").alias("event")
    )
    headers = rows.filter(pl.col("_header")).select(
        "file", "line", pl.lit(None, dtype=pl.String).alias("event")
    )
    found = pl.concat(
        [warnings, missing_entries, missing_of_op, ready], how="diagonal_relaxed"
    ).with_columns(pl.lit("warning").alias("severity"))
    return pl.concat([found, headers], how="diagonal_relaxed")


def _per_op(rows: pl.DataFrame, pattern: str) -> pl.DataFrame:
    """One row per op a line names with `pattern`, its groups in the struct `_op`."""
    message = pl.col("message")
    # (each op's row holds its own words, not a copy of the line: a line of thousands of ops
    # would otherwise be copied thousands of times)
    return (
        rows.filter(message.str.contains(pattern))
        .select("file", "line", message.str.extract_all(pattern).alias("_ops"))
        .explode("_ops")
        .with_columns(pl.col("_ops").str.extract_groups(pattern).alias("_op"))
    )


PARSER = LineParser(
    name="horovod_stall",
    literals=(
        STALL_WARNING,
        "Missing ranks:",
        "Stalled ranks:",
        ": [",
        "[missing ranks: ",
        "[ready ranks: ",
    ),
    parse=parse,
)
