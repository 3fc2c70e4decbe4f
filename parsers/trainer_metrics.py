# ruff: noqa: E501 -- verbatim log lines are quoted whole in the docstring
"""The metrics the Hugging Face Trainer (and the trainers built on it: TRL, axolotl,
LLaMA-Factory) print as a Python dict every few steps, at each evaluation and at the end of
`train()`, on the main process:

    {'loss': 3.5534, 'grad_norm': 1.4142135381698608, 'learning_rate': 2.0454545454545457e-06, 'epoch': 0.01}
    {'loss': 1.0132, 'learning_rate': 0.00013912063134160092, 'epoch': 0.94}

(hiyouga/LlamaFactory#8261; axolotl-ai-cloud/axolotl#592.) They are lines of the job, read
and counted: a log of nothing else is a training log, not one refused as unknown. They carry no
step counter and no rank, and say nothing of a failure, so they make no event.
"""

from __future__ import annotations

import polars as pl

from logforensics.registry import LineParser

# a dict of quoted metric names and plain values, with the fractional epoch every one carries
METRICS = r"^\s*\{'[\w/.-]+': [^{}]*'epoch': -?[\d.]+(?:e[-+]?\d+)?(?:, '[\w/.-]+': [^{}]*)?\}\s*$"


def parse(lines: pl.DataFrame) -> pl.DataFrame:
    return lines.filter(pl.col("message").str.contains(METRICS)).select(
        "file", "line", pl.lit(None, pl.String).alias("event")
    )


PARSER = LineParser(name="trainer_metrics", literals=("'epoch': ",), parse=parse)
