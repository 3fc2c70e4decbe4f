# ruff: noqa: E501 -- verbatim log lines are quoted whole in the docstring
"""A line that says the lines around it are not all there: a paste's elision mark.

    [...]                                     (NVIDIA/nccl#1646, between NCCL INFO lines)
    ...
    <snip>
    ... 1234 lines omitted ...

Each is an `elision` event (info). What a rank did not print can be told only where nothing
was left out: a rule that reads an absence (an init never completed) asks whether an elision
lies where the missing line would be.
"""

from __future__ import annotations

import polars as pl

from logforensics.registry import LineParser

# The whole line is the mark: brackets or parentheses around an ellipsis, a bare ellipsis, a
# snip, or a count of lines left out
ELISION = (
    r"(?i)^\s*(?:[\[(<]\s*(?:\.{3,}|…|snip(?:ped)?)\s*[\])>]|\.{3,}|…+"
    r"|\.{0,3}\s*[\[(]?\s*\d[\d,]* (?:more )?lines? (?:omitted|skipped|removed|truncated|elided)"
    r"\s*[\])]?\s*\.{0,3})\s*$"
)


def parse(lines: pl.DataFrame) -> pl.DataFrame:
    return lines.filter(pl.col("message").str.contains(ELISION)).select(
        "file", "line", pl.lit("elision").alias("event"), pl.lit("info").alias("severity")
    )


PARSER = LineParser(
    name="elisions",
    literals=(
        "...",
        "…",
        "snip",
        "SNIP",
        "Snip",
        " omitted",
        " skipped",
        " removed",
        " truncated",
        " elided",
    ),
    parse=parse,
)
