# ruff: noqa: E501 -- verbatim log lines are quoted whole in the docstring
"""Megatron-LM's (and Megatron-DeepSpeed's) training and validation prints, read as progress
from their first line (the learned templates of `progress_lines` need several):

    [default7]: iteration    45000/  115311 | consumed samples:     76002224 | consumed tokens: 155652554752 | elapsed time per iteration (s): 111.00 | learning rate: 4.298E-05 | global batch size:  2048 |
    [default7]:valid loss at iteration 45000 | lm loss value: 2.327091E+00 | lm loss PPL: 1.024808E+01 |

(bigscience-workshop/bigscience, train/tr11-176B-ml/chronicles.md; megatron/training.py prints
` iteration {:8d}/{:8d} |` and `validation loss at iteration {}` in newer releases.) Each is a
`stage` event of the progress family: stage `iteration` or `validation`, step the iteration,
so the ranks that print them are aligned like ranks printing stage marks.
"""

from __future__ import annotations

import polars as pl

from logforensics.registry import LineParser

ITERATION = r"(?:^|\s)iteration\s+(\d+)/\s*\d+ \|"
VALIDATION = r"(?:^|\s)valid(?:ation)? loss at iteration (\d+) \|"
RANK_TAG = r"\[Rank (\d+)\] +(?:iteration|valid)"


def parse(lines: pl.DataFrame) -> pl.DataFrame:
    message = pl.col("message")
    training = message.str.extract(ITERATION, 1)
    validation = message.str.extract(VALIDATION, 1)
    return (
        lines.select(
            "file",
            "line",
            pl.coalesce(training, validation).cast(pl.Int64, strict=False).alias("step"),
            pl.when(training.is_not_null())
            .then(pl.lit("iteration"))
            .when(validation.is_not_null())
            .then(pl.lit("validation"))
            .alias("stage"),
            # `[Rank 0] iteration ...` (a script's own tag) names the rank; else the prefix does
            message.str.extract(RANK_TAG, 1).cast(pl.Int32, strict=False).alias("rank"),
            pl.lit("stage").alias("event"),
            pl.lit("info").alias("severity"),
            pl.lit("progress").alias("family"),
        )
        .filter(pl.col("step").is_not_null())
        .with_columns(pl.format('{{"template":"megatron {}"}}', pl.col("stage")).alias("extra"))
    )


PARSER = LineParser(
    name="megatron_progress",
    literals=("consumed samples:", "loss at iteration "),
    parse=parse,
)
