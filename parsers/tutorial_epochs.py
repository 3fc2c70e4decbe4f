# ruff: noqa: E501 -- verbatim log lines are quoted whole in the docstring
"""The epoch line of PyTorch's DDP tutorial series (pytorch/examples, distributed/ddp-tutorial-
series: `multigpu.py`, `multigpu_torchrun.py`, `multinode.py`), printed by every rank at the
start of each epoch, and the copies of it scripts keep:

    [GPU0] Epoch 0 | Batchsize: 32 | Steps: 64
    0: [RANK 3] Epoch 0 | Batchsize: 32 | Steps: 235 | Loss: 0.24456023513240382
    GPU:0 | Epoch: 0 | Batchsize: 32 | Steps: 32

(the tutorial; awslabs' DDP test case on Slurm; a DDP study-notes README run with mp.spawn).
`Steps` is `len(train_data)`, the rank's batches per epoch. Each line is the start of an epoch on that
rank (`epoch_start`, as `epoch_marks` reads `rank=2 epoch=0 start`) and the rank's loader
length (`loader_len`, for the rule that compares them). `[RANK n]` states the global rank; the
tutorial's `[GPUn]` is the process's device, its rank on one node (`multigpu.py` passes the
rank as the device; `multigpu_torchrun.py` the local rank), so it is kept as the CUDA device
that tells a node's processes apart.
"""

from __future__ import annotations

import polars as pl

from logforensics.registry import LineParser

EPOCH_LINE = (
    r"^\s*(?:\[(?P<who>GPU|RANK) ?(?P<number>\d+)\]|GPU:(?P<device>\d+) \|) "
    r"Epoch:? (?P<epoch>\d+) \| Batchsize: (?P<batch>\d+) \| Steps: (?P<steps>\d+)\b"
)


def parse(lines: pl.DataFrame) -> pl.DataFrame:
    said = pl.col("message").str.extract_groups(EPOCH_LINE)
    found = (
        lines.with_columns(said.alias("_said"))
        .filter(pl.col("_said").struct.field("epoch").is_not_null())
        .select(
            "file",
            "line",
            pl.when(pl.col("_said").struct.field("who") == "RANK")
            .then(pl.col("_said").struct.field("number"))
            .cast(pl.Int32, strict=False)
            .alias("rank"),
            pl.coalesce(
                pl.when(pl.col("_said").struct.field("who") == "GPU").then(
                    pl.col("_said").struct.field("number")
                ),
                pl.col("_said").struct.field("device"),
            )
            .cast(pl.Int32, strict=False)
            .alias("cuda_dev"),
            pl.col("_said").struct.field("epoch").cast(pl.Int64, strict=False).alias("_epoch"),
            pl.col("_said").struct.field("steps").cast(pl.Int64, strict=False).alias("_steps"),
            pl.lit("info").alias("severity"),
            # the family of progress lines: a device tells one node's processes apart there
            pl.lit("progress").alias("family"),
        )
    )
    starts = found.select(
        pl.exclude("_epoch", "_steps"),
        pl.lit("epoch_start").alias("event"),
        pl.col("_epoch").alias("epoch"),
    )
    lengths = found.select(
        pl.exclude("_epoch", "_steps"),
        pl.lit("loader_len").alias("event"),
        pl.col("_steps").alias("value"),
        pl.concat_list(pl.lit("Steps")).alias("names"),
        pl.col("_epoch").alias("epoch"),
    )
    return pl.concat([starts, lengths], how="diagonal_relaxed")


PARSER = LineParser(name="tutorial_epochs", literals=("| Batchsize: ",), parse=parse)
