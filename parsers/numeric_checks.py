"""Megatron Core's rerun state machine rejecting a rank's result, as the one line it logs:

    ERROR:megatron.core.rerun_state_machine:Unexpected result nan on rank 3 at iteration #3 invocation #2 (message='found NaN in local grad norm for bucket #0 in backward pass before data-parallel communication collective')

(NVIDIA/Megatron-LM#5026, a CI run of an 8-way expert parallel model.) The
machine checks each rank's gradients (and losses) before the data-parallel collective and
names the rank whose numbers are NaN or Inf; a paste may keep this record and nothing after
it. Each such line is the named rank's `exception`, under the machine's own words
(`Unexpected result`), its message the result, the iteration and what was checked. Where a
file holds the exception the machine raised with the same words (`RuntimeError: Rank 15,
node ..., iteration -1: Unexpected result nan ...`), its traceback speaks and the record is
left to it. Megatron's older assertion (`AssertionError: Rank 11: found NaN in local grad norm
...`) is the traceback parser's.
"""  # noqa: E501 -- a verbatim line

from __future__ import annotations

import polars as pl

from logforensics.registry import LineParser

REJECTED = (
    r"Unexpected result (?P<result>\S+) on rank (?P<rank>\d+) at iteration #(?P<iteration>\d+)"
    r".*?(?:\(message='(?P<what>[^']*)'\))?\s*$"
)
# an exception line (`RuntimeError: ...`) that carries the words: a traceback of the rejection
RAISED = r"^\s*(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception): "
REJECTION = "Unexpected result"
LITERAL = "Unexpected result "


def parse(lines: pl.DataFrame) -> pl.DataFrame:
    message = pl.col("message")
    rejected = message.str.extract_groups(REJECTED)
    raised = message.str.contains(RAISED)
    what = rejected.struct.field("what")
    return lines.filter(
        rejected.struct.field("rank").is_not_null() & ~raised.any().over("file")
    ).select(
        "file",
        "line",
        rejected.struct.field("rank").cast(pl.Int32, strict=False).alias("rank"),
        pl.lit("exception").alias("event"),
        pl.lit("error").alias("severity"),
        pl.lit(REJECTION).alias("exc_type"),
        pl.format(
            "{} at iteration {}{}",
            rejected.struct.field("result"),
            rejected.struct.field("iteration"),
            pl.when(what.is_not_null()).then(pl.format(": {}", what)).otherwise(pl.lit("")),
        ).alias("exc_message"),
    )


PARSER = LineParser(name="numeric_checks", literals=(LITERAL,), parse=parse)
