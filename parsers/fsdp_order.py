# ruff: noqa: E501 -- verbatim log lines are quoted whole in the docstring
"""FSDP's check that every rank all-gathers the same parameters in the same order in its first
forward (torch/distributed/fsdp/_exec_order_utils.py, run under TORCH_DISTRIBUTED_DEBUG=INFO or
DETAIL). The ranks all-gather what each is about to unshard, then compare every pair in rank
order, (0, 1), (0, 2), ..., and raise at the first pair that differs (mosaicml/diffusion#44, a
16-node run resumed from a checkpoint):

    RuntimeError: Forward order differs across ranks: rank 0 is all-gathering 1 parameters while rank 4 is all-gathering -2142209024 parameters

or, the counts agreeing, by the parameters' names (`... rank 0 is all-gathering parameters for
[['layer1.weight']] while rank 1 is all-gathering parameters for [['layer2.weight']]`). An
`fsdp_order_mismatch` event with the pair's ranks as `values` (first the lower) and what each
was all-gathering in `names`; the process that raised it is its writer.
"""

from __future__ import annotations

import polars as pl

from logforensics.registry import LineParser

WORDING = "Forward order differs across ranks: "
ACROSS = (
    WORDING + r"rank (?P<first>\d{1,7}) is all-gathering (?P<theirs>-?\d+ parameters|parameters "
    r"for .*?) while rank (?P<second>\d{1,7}) is all-gathering (?P<mine>-?\d+ parameters|"
    r"parameters for .*)$"
)


def parse(lines: pl.DataFrame) -> pl.DataFrame:
    said = pl.col("message").str.strip_chars_end().str.extract_groups(ACROSS)
    return (
        lines.with_columns(said.alias("_said"))
        .filter(pl.col("_said").struct.field("second").is_not_null())
        .select(
            "file",
            "line",
            pl.lit("fsdp_order_mismatch").alias("event"),
            pl.lit("error").alias("severity"),
            pl.concat_list(
                pl.col("_said").struct.field("first").cast(pl.Int64, strict=False),
                pl.col("_said").struct.field("second").cast(pl.Int64, strict=False),
            ).alias("values"),
            pl.concat_list(
                pl.col("_said").struct.field("theirs"), pl.col("_said").struct.field("mine")
            ).alias("names"),
        )
    )


PARSER = LineParser(name="fsdp_order", literals=(WORDING,), parse=parse)
