"""The world size as frameworks and launchers state it in words:

    using world size: 4, data-parallel size: 4, tensor-model-parallel size: 1, ...   (Megatron-LM)
    WORLD_SIZE=8
    world_size: 16
    Initializing distributed: GLOBAL_RANK: 1, MEMBER: 2/2                       (Lightning)
    distributed_backend=nccl All distributed processes registered. Starting with 4 processes

(the Lightning lines verbatim from its users' logs); Lightning's `GLOBAL_RANK` is the rank of
the process that prints it. The mapping-print dict (`'world_size': 4`) is `device_map`'s; a
tqdm bar's description is `progress_bars`'.
"""

from __future__ import annotations

import polars as pl

from logforensics.registry import LineParser

# `world size: 4`, `WORLD_SIZE=8`, `world_size: 16`; not `'world_size': 4` (a dict), nor a
# key with a longer name (`world_size_per_node`)
STATED = r"(?i)(?:^|[^A-Za-z_'\"])world[ _]size\s*[:=]?\s*(\d+)(?:[^\w.]|$)"


MEMBER = r"GLOBAL_RANK: (\d+), MEMBER: \d+/(\d+)"
REGISTERED = r"All distributed processes registered\. Starting with (\d+) processes"


def parse(lines: pl.DataFrame) -> pl.DataFrame:
    message = pl.col("message")
    size = pl.coalesce(
        message.str.extract(STATED, 1),
        message.str.extract(MEMBER, 2),
        message.str.extract(REGISTERED, 1),
    ).cast(pl.Int32, strict=False)
    return lines.select(
        "file",
        "line",
        size.alias("world_size"),
        message.str.extract(MEMBER, 1).cast(pl.Int32, strict=False).alias("rank"),
        pl.lit("world_size").alias("event"),
        pl.lit("info").alias("severity"),
    ).filter(pl.col("world_size").is_not_null() & (pl.col("world_size") > 0))


PARSER = LineParser(
    name="world_size",
    literals=("world size", "world_size", "WORLD_SIZE", "MEMBER: ", "processes registered"),
    parse=parse,
)
