"""A paste's own mark that it left lines out."""

from __future__ import annotations

import pytest

from tests.builders import parsed_by


@pytest.mark.parametrize(
    "line",
    [
        "[...]",  # NVIDIA/nccl#1646, verbatim, between NCCL INFO lines
        "...",
        "  …",
        "<snip>",
        "(...)",
        "... 1234 lines omitted ...",
        "[12 more lines skipped]",
    ],
)
def test_a_line_that_is_only_an_elision_mark_is_one(line):
    assert parsed_by("elisions", [line]).get_column("event").to_list() == ["elision"]


@pytest.mark.parametrize(
    "line",
    [
        "Loading checkpoint shards...",
        "rank 2 [...] done",
        "  10 lines omitted from the config print because they repeat the defaults of the run",
    ],
)
def test_a_line_that_says_more_is_no_elision(line):
    assert parsed_by("elisions", [line]).is_empty()
