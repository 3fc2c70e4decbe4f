"""holds_any: the one-scan test for many fixed strings that routes lines to parsers."""

from __future__ import annotations

import polars as pl
import pytest

from logforensics.literals import holds_any

LINES = [
    "rank=1 step=37 stage=before_backward",
    "\x1b[32mINFO\x1b[0m rank=0 step=1 stage=fwd",  # a colour code
    "[default0]:rank=0 step=2 stage=fwd",
    "100%|##########| 10/10 [00:01<00:00]\r",
    "a]b x\\y ^ a-b [",
    "",
]


@pytest.mark.parametrize(
    "literals",
    [
        ["\x1b", "\r", "%|", "[rank", "]:["],
        ["]"],
        ["\\"],
        ["^"],
        ["-"],
        ["["],
        ["stage=", "x"],
        [],
    ],
)
def test_a_line_holds_any_literal_exactly_where_python_finds_one(literals: list[str]) -> None:
    lines = pl.DataFrame({"text": LINES})
    found = lines.with_columns(holds_any("text", literals).alias("found")).get_column("found")
    assert found.to_list() == [any(literal in line for literal in literals) for line in LINES]
