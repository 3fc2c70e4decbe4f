"""A traceback's rank, said by the record just above it.

Frameworks catch a rank's exception and log it with `logger.exception(...)`: one record that
names the rank, then the traceback, in a console every rank shares:

    2023-09-07 08:44:35,278 ERROR train.py:308 in <module> -- Raise exception from f363ff97a009 with rank id: 2
    Traceback (most recent call last):

(InternLM/InternLM#290), or `2024-10-21 10:42:00,218 - lmdeploy - ERROR - model_agent.py:489 -
Rank[2] failed.` (Ascend/pytorch#54). The traceback is that rank's, and only it: the other
lines of the console stay with whoever wrote them (the event is marked as `spawned` is, a
rank of its own).
"""  # noqa: E501 -- verbatim lines

from __future__ import annotations

import polars as pl

# an error word, then the rank (`... exception from <host> with rank id: 2`); a rank after a
# word that makes it the other end of the failure is a peer's (`Error: Failed to resolve UCX
# endpoint for rank 1` before the process's own traceback: mlcommons/training_results_v3.0#5)
BY_ERROR = (
    r"(?i)\b(?:error|exception|failed|failure)\b.*?"
    r"(?:\b(?P<peer>for|to|from|towards|peer|remote)\s+)?"
    r"\brank(?:[ _]?id)?\s*[:=#]?\s*\[?(?P<rank>\d+)\b"
)
# the rank, then what befell it (`Rank[2] failed.`, `rank 3 raised`)
RANK_FAILED = r"(?i)\brank\s*[:=#]?\s*\[?(\d+)\]?\s*(?:failed|raised|crashed)\b"
# the mark in `extra` of a traceback whose rank is its own (attribution keeps the rest of its
# console apart), as parsers/traceback.py gives a spawned child's
OWN_RANK = '"spawned":true'


def with_announced_ranks(found: pl.DataFrame, framed: pl.DataFrame) -> pl.DataFrame:
    """`found` with each unranked traceback (an `exception` event whose line is not its
    exception line) given the rank the line just above it names."""
    if found.is_empty() or not {"event", "end_line", "rank", "extra"} <= set(found.columns):
        return found
    headed = (
        (pl.col("event") == "exception")
        & pl.col("rank").is_null()
        & (pl.col("end_line") > pl.col("line")).fill_null(False)
    )
    heads = found.filter(headed).select("file", "line")
    if heads.is_empty():
        return found
    message = pl.col("message")
    by_error = message.str.extract_groups(BY_ERROR).struct
    own_rank = pl.when(by_error.field("peer").is_null()).then(by_error.field("rank"))
    said = pl.coalesce(own_rank, message.str.extract(RANK_FAILED, 1))
    above = (
        framed.join(heads.select("file", (pl.col("line") - 1).alias("line")), on=["file", "line"])
        .select(
            "file",
            (pl.col("line") + 1).alias("line"),
            said.cast(pl.Int32, strict=False).alias("_announced"),
        )
        .drop_nulls("_announced")
    )
    if above.is_empty():
        return found
    extra = pl.col("extra")
    own = (
        pl.when(extra.is_null() | (extra == "{}"))
        .then(pl.lit("{" + OWN_RANK + "}"))
        .otherwise(pl.concat_str(pl.lit("{" + OWN_RANK + ","), extra.str.slice(1)))
    )
    announced = pl.col("_announced").is_not_null() & headed
    return (
        found.join(above, on=["file", "line"], how="left", maintain_order="left")
        .with_columns(
            pl.when(announced).then("_announced").otherwise("rank").alias("rank"),
            pl.when(announced).then(own).otherwise(extra).alias("extra"),
        )
        .drop("_announced")
    )
