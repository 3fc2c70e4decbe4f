"""Hugging Face Accelerate's state, as its example scripts log it on every process
(`logger.info(accelerator.state, main_process_only=False)`): the world size, the process's
rank and local rank, and its device, one per line.

    Distributed environment: MULTI_GPU  Backend: nccl
    Num processes: 4
    Process index: 3
    Local process index: 3
    Device: cuda:0

(facebookresearch/ViewDiff#24: four processes, every one on `cuda:0`.) Each block gives a
`device_map` event on its `Device:` line, the block's other lines are recognised with it.
"""

from __future__ import annotations

import polars as pl

from logforensics.registry import LineParser

WORLD = r"^Num processes: (\d+)\s*$"
RANK = r"^Process index: (\d+)\s*$"
LOCAL_RANK = r"^Local process index: (\d+)\s*$"
# `cuda:0`, `npu:1`, `cpu`, `mps`: the ordinal, or the device type when it has none
DEVICE = r"^Device: (?:[a-z]+:(\d+)|(cpu|mps))\s*$"
BLOCK = 3  # lines from `Num processes:` to `Device:`


def parse(lines: pl.DataFrame) -> pl.DataFrame:
    message = pl.col("message").str.strip_chars_start()
    # each line after a `Num processes:` line belongs to that block
    block = pl.when(pl.col("candidate")).then(pl.col("line")).forward_fill().over("file")
    read = lines.with_columns(
        block.alias("_block"),
        message.str.extract(WORLD, 1).cast(pl.Int32, strict=False).alias("_world"),
        message.str.extract(RANK, 1).cast(pl.Int32, strict=False).alias("_rank"),
        message.str.extract(LOCAL_RANK, 1).cast(pl.Int32, strict=False).alias("_local"),
        pl.coalesce(message.str.extract(DEVICE, 1), message.str.extract(DEVICE, 2)).alias(
            "_device"
        ),
    ).filter(
        pl.col("_world").is_not_null()
        | pl.col("_rank").is_not_null()
        | pl.col("_local").is_not_null()
        | pl.col("_device").is_not_null()
    )
    per_block = ["file", "_block"]
    whole = read.with_columns(
        pl.col(name).drop_nulls().first().over(per_block).alias(name)
        for name in ("_world", "_rank", "_local")
    ).filter(pl.col("_rank").is_not_null() & pl.col("_device").is_not_null().any().over(per_block))
    on_device_line = pl.col("_device").is_not_null()
    return whole.select(
        "file",
        "line",
        pl.when(on_device_line).then(pl.lit("device_map")).alias("event"),
        pl.when(on_device_line).then(pl.lit("info")).alias("severity"),
        pl.when(on_device_line).then("_rank").alias("rank"),
        pl.when(on_device_line).then("_local").alias("local_rank"),
        pl.when(on_device_line).then("_world").alias("world_size"),
        pl.when(on_device_line).then("_device").alias("device"),
    )


PARSER = LineParser(
    name="accelerate_state", literals=("Num processes: ",), parse=parse, context_after=BLOCK
)
