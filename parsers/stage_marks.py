"""Per-rank progress marks printed by the training loop.

    rank=1 step=37 stage=before_backward
    2026-11-29 10:00:01,234 INFO rank=1 step=37 stage=before_backward loss=0.1 epoch=0

The three keys may stand anywhere in the line, among other `key=value` pairs. A job writes
one mark per rank, step and stage: hundreds of millions for a large job. They are kept in the
narrow progress table (rank, step, stage, epoch, file, line), not as event rows, and their
lines are offered to no other family. The common layout (`rank=R step=S stage=X`, in that
order) is read by splitting, the rest by regular expressions.
"""

from __future__ import annotations

import polars as pl

from logforensics.registry import LineParser
from parsers.key_values import WORD_START, extract_number, number_after

STAGE_NAME = r"^([A-Za-z0-9_.:/-]+)"
STAGE = WORD_START + r"stage=([A-Za-z0-9_.:/-]+)"
# What a progress mark keeps besides its place (file, line): who wrote it and where it stands.
WRITER_COLUMNS = ("prefix_node", "prefix_host", "prefix_local_rank")
MAX_INT32 = 2**31 - 1


def parse(lines: pl.DataFrame) -> pl.DataFrame:
    canonical = canonical_layout(lines.lazy()).collect()
    fast = canonical.filter(pl.col("_canonical")).select(
        *_place(lines), "rank", "step", "stage", epoch()
    )
    slow = canonical.filter(~pl.col("_canonical")).select(
        *_place(lines),
        _signed_rank(),
        extract_number("step", pl.Int64()),
        pl.col("message").str.extract(STAGE, 1).alias("stage"),
        epoch(),
    )
    marks = valid_stages(pl.concat([fast, slow]).drop_nulls(["rank", "step", "stage"]))
    # a rank a launcher prefix states is the one to trust (`[rank3]:rank=3 ...`)
    stated = pl.col("prefix_rank").is_not_null()
    return marks.with_columns(
        pl.coalesce("prefix_rank", "rank").alias("rank"),
        pl.when(stated).then(pl.lit("prefix")).otherwise(pl.lit("content")).alias("rank_from"),
        pl.lit("stage").alias("event"),
    ).drop("prefix_rank")


def canonical_layout(lines: pl.LazyFrame, column: str = "message") -> pl.LazyFrame:
    """`rank=R step=S stage=X` read from `column` by positions and slices (no regular
    expression runs on these lines, the hot ones); `_canonical` says where that layout holds:
    the three keys in that order, one space apart, `rank=` first in the line or after a space.
    `stage` is the word after `stage=` up to a space; `valid_stages` trims it as the regular
    expression would, once per distinct value. `find` and `slice` both count characters (polars
    2.2 on), so a line with other scripts or emoji before its mark is cut where it is read."""
    message = pl.col(column)
    at_rank, at_step, at_stage = pl.col("_at_rank"), pl.col("_at_step"), pl.col("_at_stage")
    found = lines.with_columns(
        pl.when(message.str.starts_with("rank="))
        .then(0)
        .otherwise(message.str.find(" rank=", literal=True) + 1)
        .alias("_at_rank"),
        message.str.find(" step=", literal=True).alias("_at_step"),
        message.str.find(" stage=", literal=True).alias("_at_stage"),
    )
    found = found.with_columns(
        _rank(_number(message.str.slice(at_rank + len("rank="), at_step - at_rank - len("rank=")))),
        _number(
            message.str.slice(at_step + len(" step="), at_stage - at_step - len(" step="))
        ).alias("step"),
        # the word up to a space: a split at the first one is cheaper than finding it and
        # cutting there (3.1 M marks: 0.24 s against 0.34 s)
        message.str.slice(at_stage + len(" stage="))
        .str.split_exact(" ", 1)
        .struct.field("field_0")
        .alias("stage"),
    )
    canonical = pl.col("rank").is_not_null() & pl.col("step").is_not_null()
    return found.with_columns(canonical.fill_null(False).alias("_canonical"))


def _rank(number: pl.Expr) -> pl.Expr:
    """A rank the fast layout can hold (an Int32 from 0); any other number leaves the line to
    the regular expressions, which read a negative rank for `plausible` to flag."""
    return pl.when(number.is_between(0, MAX_INT32)).then(number).cast(pl.Int32).alias("rank")


def _number(digits: pl.Expr) -> pl.Expr:
    """The integer some characters spell, null unless they are all digits."""
    return digits.str.to_integer(strict=False)


def _signed_rank() -> pl.Expr:
    """The number after `rank=`, a sign included (`rank=-1` is read, then flagged as no rank a
    job has); null when absent or beyond an Int32."""
    signed = pl.col("message").str.extract(WORD_START + r"rank=(-?\d+)", 1)
    return signed.cast(pl.Int32, strict=False).alias("rank")


def valid_stages(marks: pl.DataFrame) -> pl.DataFrame:
    """`stage` cut to the characters a stage name has (`stage=fwd,` is `fwd`), rows whose
    stage is then empty dropped; the work is done once per distinct stage."""
    names = marks.get_column("stage").unique().cast(pl.String).drop_nulls()
    cut = names.str.extract(STAGE_NAME, 1)
    if cut.equals(names):
        return marks
    fixed = dict(zip(names.to_list(), cut.to_list(), strict=True))
    dtype = marks.schema["stage"]
    return marks.with_columns(
        pl.col("stage").cast(pl.String).replace_strict(fixed, default=None).cast(dtype)
    ).drop_nulls("stage")


def _place(lines: pl.DataFrame) -> list[str]:
    present = [name for name in WRITER_COLUMNS if name in lines.columns]
    return ["file", "line", "prefix_rank", *present]


def epoch(column: str = "message") -> pl.Expr:
    """The number after `epoch=` in `column`, null when absent."""
    message = pl.col(column)
    return (
        pl.when(message.str.contains("epoch=", literal=True))
        .then(message.str.extract(number_after("epoch"), 1).cast(pl.Int64, strict=False))
        .alias("epoch")
    )


PARSER = LineParser(name="stage_marks", literals=("stage=",), parse=parse, progress=True)
