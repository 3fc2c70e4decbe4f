"""`key=value` fields that training scripts print (`rank=1 step=37 epoch=0`), shared by the
parsers that read them. Not a parser itself (no `PARSER`)."""

from __future__ import annotations

import polars as pl

# A key must start a word, so `local_rank=0` or `prestep=3` are not read as `rank`/`step`.
WORD_START = r"(?:^|[\s,;(\[{|])"


def number_after(key: str) -> str:
    """The regex of `<key>=<digits>` as a whole word, capturing the digits."""
    return WORD_START + key + r"=(\d+)"


def extract_number(key: str, dtype: pl.DataType) -> pl.Expr:
    """The number after `<key>=` in `message`, null when absent, named `key`."""
    return pl.col("message").str.extract(number_after(key), 1).cast(dtype, strict=False).alias(key)
