# ruff: noqa: E501 -- verbatim log lines are quoted whole in the docstring and comments
"""The loss terms each rank logged, as OpenMMLab's runners print them when the ranks disagree.

mmcv/mmengine's `parse_losses` all-reduces the number of loss terms before it all-reduces
their values (ranks with different terms would otherwise hang in the next all-reduce), and
each rank fails an assertion that names its own terms (open-mmlab/mmdetection#9291):

    AssertionError: loss log variables are different across GPUs!
    rank 1 len(log_vars): 3 keys: loss_rpn_cls,loss_rpn_bbox,s0.loss_bbox

The second line is a `loss_keys` event of that rank: `value` the number of terms, `names` the
terms. (The assertion's own line is the traceback parser's exception.)
"""

from __future__ import annotations

import polars as pl

from logforensics.registry import LineParser

# rank 1 len(log_vars): 3 keys: loss_rpn_cls,loss_rpn_bbox,s0.loss_bbox
LOSS_KEYS = r"^\s*rank (?P<rank>\d+) len\(log_vars\): (?P<count>\d+) keys: (?P<keys>\S*)\s*$"


def parse(lines: pl.DataFrame) -> pl.DataFrame:
    said = pl.col("message").str.extract_groups(LOSS_KEYS)
    return lines.filter(pl.col("message").str.contains(LOSS_KEYS)).select(
        "file",
        "line",
        pl.lit("loss_keys").alias("event"),
        pl.lit("error").alias("severity"),
        said.struct.field("rank").cast(pl.Int32, strict=False).alias("rank"),
        said.struct.field("count").cast(pl.Int64, strict=False).alias("value"),
        said.struct.field("keys").str.split(",").alias("names"),
    )


PARSER = LineParser(name="loss_keys", literals=(" len(log_vars): ",), parse=parse)
