# ruff: noqa: E501 -- verbatim log lines are quoted whole in the docstring
"""DeepSpeed's check that every rank holds the same list as rank 0 (`assert_ints_same_as_other_ranks`
in deepspeed/utils, used by ZeRO-3's parameter coordinator): the rank whose list differs raises

    RuntimeError: disagreement between rank0 and rank6: rank0: [-4829058278667240489, 4394031851561860485, ...

(hiyouga/LlamaFactory#4428, DeepSeek-V2-Lite under ZeRO-3 at its first evaluation). Its twin
for the list's length (`assert_lst_len_same_as_other_ranks`) puts the two lengths on the lines
below (hiyouga/LlamaFactory#10224, a Qwen3.5 MoE under ZeRO-3):

    [rank7]: RuntimeError: Detected a disagreement on list length between rank0 and rank7:
    [rank7]:  rank0: 30815
    [rank7]:  rank7: 30833

The rank in the message is the one that raised it (`dist.get_rank()`): a `rank_disagreement`
event of that rank, `peer_rank` 0, the rank it was compared with.
"""

from __future__ import annotations

import polars as pl

from logforensics.registry import LineParser

DISAGREEMENT = (
    r"disagreement (?:on list length )?between rank(\d+) and rank(\d+):(?: rank\d+: \[|\s*$)"
)


def parse(lines: pl.DataFrame) -> pl.DataFrame:
    said = lines.with_columns(
        pl.col("message").str.extract_groups(DISAGREEMENT).alias("_said")
    ).filter(pl.col("_said").struct.field("1").is_not_null())
    return said.select(
        "file",
        "line",
        pl.lit("rank_disagreement").alias("event"),
        pl.lit("error").alias("severity"),
        pl.col("_said").struct.field("2").cast(pl.Int32, strict=False).alias("rank"),
        pl.col("_said").struct.field("1").cast(pl.Int32, strict=False).alias("peer_rank"),
    )


PARSER = LineParser(
    name="deepspeed_consistency",
    literals=("disagreement between rank", "disagreement on list length between rank"),
    parse=parse,
)
