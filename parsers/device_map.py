"""The rank-to-device print a training script makes at start-up (a Python dict repr):

    {'rank': 0, 'local_rank': 0, 'device': 0, 'world_size': 4}

Keys may come in any order, with either quote style and extra keys such as `'host'`.
`device` may be an ordinal, `'cuda:1'` or `device(type='cuda', index=1)`.

A dict with the rank and the world size but no device is the process announcing its place
(pytorch/PiPPy#883: `MY KWARGS ARE {'rank': 2, 'local_rank': 2, 'world_size': 4, ...}`): a
`world_size` event of that rank.
"""

from __future__ import annotations

import polars as pl

from logforensics.registry import LineParser

RANK = r"""['"]rank['"]\s*:\s*(\d+)"""
LOCAL_RANK = r"""['"]local_rank['"]\s*:\s*(\d+)"""
WORLD_SIZE = r"""['"]world_size['"]\s*:\s*(\d+)"""
HOST = r"""['"](?:host|hostname|node)['"]\s*:\s*['"]([^'"]+)['"]"""
# The ordinal of `0`, `'0'`, `'cuda:0'`, `device(type='cuda', index=0)`; or `'cpu'`.
DEVICE = (
    r"""['"]device['"]\s*:\s*(?:device\(type=['"][a-z]+['"],\s*index=)?['"]?(?:[a-z]+:)?(\d+|cpu)"""
)


def parse(lines: pl.DataFrame) -> pl.DataFrame:
    message = pl.col("message")
    mapping = lines.select(
        "file",
        "line",
        message.str.extract(RANK, 1).cast(pl.Int32, strict=False).alias("rank"),
        message.str.extract(LOCAL_RANK, 1).cast(pl.Int32, strict=False).alias("local_rank"),
        message.str.extract(WORLD_SIZE, 1).cast(pl.Int32, strict=False).alias("world_size"),
        message.str.extract(HOST, 1).alias("host"),
        message.str.extract(DEVICE, 1).alias("device"),
    )
    devices = mapping.drop_nulls(["rank", "device"]).with_columns(
        pl.lit("device_map").alias("event"), pl.lit("info").alias("severity")
    )
    # no device, but the rank and the world: the process's announcement of its place
    placed = mapping.filter(
        pl.col("device").is_null() & pl.col("rank").is_not_null() & (pl.col("world_size") > 0)
    ).select(
        "file",
        "line",
        "rank",
        "world_size",
        "host",
        pl.lit("world_size").alias("event"),
        pl.lit("info").alias("severity"),
    )
    return pl.concat([devices, placed], how="diagonal_relaxed")


PARSER = LineParser(
    name="device_map",
    literals=("'device'", '"device"', "'world_size'", '"world_size"'),
    parse=parse,
)
