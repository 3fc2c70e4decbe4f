# ruff: noqa: E501 -- verbatim log lines are quoted whole in the docstring
"""The RDMA provider library inside a process reporting a failed work completion, before a hex
dump of the completion entry (libmlx5, NVIDIA/Mellanox ConnectX adapters):

    (LLMRayActor pid=90738, ip=172.19.24.110) mlx5: host_unknown: got completion with error:

(OpenRLHF/OpenRLHF#621: a vLLM actor's InfiniBand transfer failed while the trainer pushed
weights to it.) An `nccl_error` of that process: the InfiniBand transport under NCCL failed on
its host, whatever NCCL or PyTorch say after it. The dump's lines (`00000000 00000000 00000000
00000000`) are recognised.
"""

from __future__ import annotations

import polars as pl

from logforensics.registry import LineParser

COMPLETION_ERROR = r"\bmlx5: (?P<host>\S+): got completion with error"
DUMP = r"^\s*[0-9a-f]{8}(?: [0-9a-f]{8}){3}\s*$"
DUMP_LINES = 8  # a completion entry is dumped on a few lines after the report


def parse(lines: pl.DataFrame) -> pl.DataFrame:
    message = pl.col("message")
    host = message.str.extract(COMPLETION_ERROR, 1)
    errors = lines.filter(host.is_not_null()).select(
        "file",
        "line",
        pl.lit("nccl_error").alias("event"),
        pl.lit("error").alias("severity"),
        pl.when(host != "host_unknown").then(host).alias("host"),
        pl.lit("mlx5: got completion with error").alias("exc_message"),
    )
    dump = lines.filter(message.str.contains(DUMP)).select(
        "file", "line", pl.lit(None, pl.String).alias("event")
    )
    return pl.concat([errors, dump], how="diagonal_relaxed")


PARSER = LineParser(
    name="rdma",
    literals=("got completion with error",),
    parse=parse,
    context_after=DUMP_LINES,
)
