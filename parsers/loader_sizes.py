"""DataLoader lengths, as printed by the training script.

loader sizes: [125, 125, 124, 125]          # all_gather_object of len(loader), one per rank
rank=3 loader_len=124                        # one rank's own len(loader)
"""

from __future__ import annotations

import polars as pl

from logforensics.registry import LineParser
from parsers.key_values import extract_number

ALL_RANKS = r"loader sizes:\s*\[([0-9,\s]*)\]"
ONE_RANK_LEN = r"(?:^|[\s,;])(?:loader_len|len\(loader\))\s*[=:]\s*(\d+)"


def parse(lines: pl.DataFrame) -> pl.DataFrame:
    message = pl.col("message")
    sizes_text = message.str.extract(ALL_RANKS, 1)
    sizes = (
        sizes_text.str.replace_all(r"\s", "")
        .str.split(",")
        .list.eval(pl.element().filter(pl.element() != "").cast(pl.Int64, strict=False))
    )
    found = lines.select(
        "file",
        "line",
        pl.when(sizes_text.is_not_null()).then(sizes).alias("values"),
        message.str.extract(ONE_RANK_LEN, 1).cast(pl.Int64, strict=False).alias("value"),
        extract_number("rank", pl.Int32()),
        extract_number("epoch", pl.Int64()),
    )
    found = found.filter(pl.col("values").is_not_null() | pl.col("value").is_not_null())
    return found.with_columns(
        pl.when(pl.col("values").is_not_null())
        .then(pl.lit("loader_sizes"))
        .otherwise(pl.lit("loader_len"))
        .alias("event"),
        # The all-ranks list is printed by one rank about everyone: it states no rank itself.
        pl.when(pl.col("values").is_not_null()).then(None).otherwise(pl.col("rank")).alias("rank"),
        pl.lit("info").alias("severity"),
    )


PARSER = LineParser(
    name="loader_sizes", literals=("loader sizes:", "loader_len", "len(loader)"), parse=parse
)
