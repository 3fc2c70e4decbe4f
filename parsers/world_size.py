"""The world size as frameworks and launchers state it in words:

    using world size: 4, data-parallel size: 4, tensor-model-parallel size: 1, ...   (Megatron-LM)
    WORLD_SIZE=8
    world_size: 16

The mapping-print dict (`'world_size': 4`) is `device_map`'s; a tqdm bar's description is
`progress_bars`'.
"""

from __future__ import annotations

import polars as pl

from logforensics.registry import LineParser

# `world size: 4`, `WORLD_SIZE=8`, `world_size: 16`; not `'world_size': 4` (a dict), nor a
# key with a longer name (`world_size_per_node`)
STATED = r"(?i)(?:^|[^A-Za-z_'\"])world[ _]size\s*[:=]?\s*(\d+)(?:[^\w.]|$)"


def parse(lines: pl.DataFrame) -> pl.DataFrame:
    size = pl.col("message").str.extract(STATED, 1).cast(pl.Int32, strict=False)
    return lines.select(
        "file",
        "line",
        size.alias("world_size"),
        pl.lit("world_size").alias("event"),
        pl.lit("info").alias("severity"),
    ).filter(pl.col("world_size").is_not_null() & (pl.col("world_size") > 0))


PARSER = LineParser(
    name="world_size", literals=("world size", "world_size", "WORLD_SIZE"), parse=parse
)
