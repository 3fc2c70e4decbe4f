# ruff: noqa: E501 -- verbatim log lines are quoted whole in the docstring
"""A script's own prints of the shape of the tensor each rank passes to a collective, the
debugging users add to a hang (NVIDIA/nccl#1417, eight ranks, rank 0's tensor smaller):

    Rank 7 tensor before allreduce: torch.Size([32768000]) 1.0
    Rank 0 tensor before allreduce: torch.Size([409600]) 1.0

A line that names a rank, a collective and a `torch.Size([...])` is a `process_shape` event:
`peer_rank` the rank it names, `shape` the size as printed, `op` the collective word and
`value` its template (the line with the rank, the size and the other numbers masked), so that
the ranks' prints of one place are compared with each other, whichever file holds them.

Any other line with a `torch.Size([...])` is a `shape_print` event with the same `shape` and
`value`: a tensor's size the script printed, which a timed-out collective's element count may
match (modelscope/ms-swift#2117, each rank's gathered logits, one of them longer):

    gathered_logits shape: torch.Size([4, 966, 32020])
"""

from __future__ import annotations

import polars as pl

from logforensics.registry import LineParser
from parsers.progress_lines import RANK_IN_TEXT as RANK

SIZE = r"torch\.Size\((\[[\d, ]*\])\)"
COLLECTIVE = (
    r"(?i)\b(all_?reduce|all_?gather(?:_into_tensor)?|broadcast|reduce_?scatter(?:_tensor)?"
    r"|all_?to_?all(?:_single)?|gather|scatter|reduce)\b"
)
# a template: what stays of the line once the rank, the size and the numbers are masked
MASKS = (SIZE, RANK, r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")


def parse(lines: pl.DataFrame) -> pl.DataFrame:
    message = pl.col("message")
    template = message
    for mask in MASKS:
        template = template.str.replace_all(mask, "<N>")
    said = lines.with_columns(
        message.str.extract(RANK, 1).cast(pl.Int32, strict=False).alias("_rank"),
        message.str.extract(SIZE, 1).alias("_shape"),
        message.str.extract(COLLECTIVE, 1).str.to_lowercase().alias("_op"),
    ).filter(pl.col("_shape").is_not_null())
    per_rank = pl.col("_rank").is_not_null() & pl.col("_op").is_not_null()
    return said.select(
        "file",
        "line",
        pl.when(per_rank)
        .then(pl.lit("process_shape"))
        .otherwise(pl.lit("shape_print"))
        .alias("event"),
        pl.lit("info").alias("severity"),
        pl.when(per_rank).then(pl.col("_rank")).alias("peer_rank"),
        pl.col("_shape").alias("shape"),
        pl.when(per_rank).then(pl.col("_op").str.replace_all("_", "")).alias("op"),
        # the template's number: one per place the ranks print at
        (template.str.strip_chars(" #").hash() % (1 << 62)).cast(pl.Int64).alias("value"),
    )


PARSER = LineParser(name="shape_prints", literals=("torch.Size([",), parse=parse)
