"""Peel launcher prefixes off each line, keeping the rank each prefix states.

`[default0]:[rank0]:[E1218 ...] ...` becomes `message = "[E1218 ...] ..."`, with
`prefix_local_rank = 0` (torchrun --tee names the local rank) and `prefix_rank = 0`
(PyTorch's own `[rankN]:` names the global rank).
"""

from __future__ import annotations

import polars as pl

# A run of stacked bracket prefixes: torchrun --tee `[default3]:` / `[trainer0]:` (local rank)
# and PyTorch's excepthook / c10 logger `[rank7]: ` (global rank, torch >= 2.2).
STACKED_PREFIXES = r"^(?:\[[A-Za-z_]+\d+\]: ?)+"
# Within that run: the innermost `[rankN]` states the global rank.
TORCH_RANK = r"\[rank(\d+)\]"
# The outermost non-`rank` tag is torchrun's `[<role><local_rank>]`.
TORCHRUN_TEE = r"^\[([A-Za-z_]+?)(\d+)\]"


def frame_lines(lines: pl.DataFrame) -> pl.DataFrame:
    """Add `message`, `prefix_rank` and `prefix_local_rank` to a frame of raw lines."""
    text = pl.col("text")
    prefix = (
        pl.when(text.str.starts_with("["))
        .then(text.str.extract(f"({STACKED_PREFIXES})", 1))
        .otherwise(None)
    )
    framed = lines.with_columns(prefix.alias("_prefix"))
    prefix_col = pl.col("_prefix")
    tee = prefix_col.str.extract_groups(TORCHRUN_TEE)
    return framed.with_columns(
        pl.when(prefix_col.is_null())
        .then(text)
        .otherwise(text.str.slice(prefix_col.str.len_chars()))
        .alias("message"),
        prefix_col.str.extract_all(TORCH_RANK)
        .list.last()
        .str.extract(r"(\d+)", 1)
        .cast(pl.Int32)
        .alias("prefix_rank"),
        pl.when(tee.struct.field("1") != "rank")
        .then(tee.struct.field("2").cast(pl.Int32))
        .alias("prefix_local_rank"),
    ).drop("_prefix")
