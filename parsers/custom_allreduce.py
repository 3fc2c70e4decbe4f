# ruff: noqa: E501 -- verbatim log lines are quoted whole in the docstring
"""vLLM's custom all-reduce kernels (tensor parallelism in vLLM and SGLang, beside NCCL) checking
a CUDA call of their own and ending the process when it fails (sgl-project/sglang#552: two T4s
with no peer access between them, each worker printing it):

    Failed: Cuda error /home/runner/work/vllm/vllm/csrc/custom_all_reduce.cuh:307 'peer access is not supported between these two devices'

The collective library's own failure, read as an `nccl_error` of the process that printed it
(this library plays NCCL's part in the all-reduce), its message the CUDA error's words.
"""

from __future__ import annotations

import polars as pl

from logforensics.registry import LineParser

# `Failed: Cuda error <source>:<line> '<error>'`, from a source of the custom all-reduce
FAILED_CALL = (
    r"^Failed: Cuda error (?P<source>\S*(?:all_?reduce|quick_?reduce)\S*):(?P<at>\d+) "
    r"'(?P<what>[^']*)'"
)


def parse(lines: pl.DataFrame) -> pl.DataFrame:
    said = pl.col("message").str.extract_groups(FAILED_CALL)
    found = lines.with_columns(said.alias("_said")).filter(
        pl.col("_said").struct.field("what").is_not_null()
    )
    source = pl.col("_said").struct.field("source").str.split("/").list.last()
    return found.select(
        "file",
        "line",
        pl.lit("nccl_error").alias("event"),
        pl.lit("error").alias("severity"),
        pl.format(
            "Cuda error {} ({}:{})",
            pl.col("_said").struct.field("what"),
            source,
            pl.col("_said").struct.field("at"),
        ).alias("exc_message"),
    )


PARSER = LineParser(name="custom_allreduce", literals=("Failed: Cuda error ",), parse=parse)
