"""Old PyTorch's CUDA check (the THC library, torch <= 1.x) failing; it prints the failure, then
raises a RuntimeError naming the same error:

    THCudaCheck FAIL file=/pytorch/torch/csrc/cuda/Module.cpp line=37 error=101 : invalid device ordinal
    RuntimeError: cuda runtime error (101) : invalid device ordinal at /pytorch/torch/csrc/cuda/Module.cpp:37

A paste often keeps the check's line and not the exception (martiansideofthemoon/
squash-generation#29: three of four processes on a machine with fewer GPUs, three check lines and
no traceback). Each check line beyond the file's raised `cuda runtime error` lines is a process's
`exception`: its CUDA error's words the message, the check's place the frame, its number the
`error_code`. Where the raised lines are in the file, the traceback parser reads the failures.
"""  # noqa: E501 -- verbatim lines

from __future__ import annotations

import polars as pl

from logforensics.registry import LineParser

CHECK = (
    r"THCudaCheck FAIL file=(?P<file>\S+) line=(?P<line>\d+) error=(?P<code>\d+) : "
    r"(?P<words>.+?)\s*$"
)
RAISED = "cuda runtime error ("
KIND = "THCudaCheck"


def parse(lines: pl.DataFrame) -> pl.DataFrame:
    message = pl.col("message")
    check = message.str.extract_groups(CHECK)
    is_check = check.struct.field("code").is_not_null()
    raised = message.str.contains(RAISED, literal=True)
    # the checks a raised exception does not stand for, the file's last ones
    surplus = (
        is_check.cast(pl.Int32).cum_sum().over("file") > raised.cast(pl.Int32).sum().over("file")
    ) & is_check
    return (
        lines.sort("file", "line")
        .filter(is_check | raised)
        .filter(surplus)
        .select(
            "file",
            "line",
            pl.lit("exception").alias("event"),
            pl.lit("error").alias("severity"),
            pl.lit(KIND).alias("exc_type"),
            check.struct.field("words").alias("exc_message"),
            pl.format("{}:{}", check.struct.field("file"), check.struct.field("line")).alias(
                "frame"
            ),
            check.struct.field("code").alias("error_code"),
        )
    )


PARSER = LineParser(
    name="thc_check",
    literals=("THCudaCheck FAIL", RAISED),
    parse=parse,
)
