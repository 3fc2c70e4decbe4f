# ruff: noqa: E501 -- test data are verbatim log lines
"""A console drawn inside a box: a border before and after every line."""

from __future__ import annotations

from tests.builders import analyze_files
from tests.framing import frame

# sgl-project/sglang#4017, verbatim (its first line and last five): rank 7's scheduler traceback
# inside a box whose left border the first line lost, padded out to the right border
BOXED_TRACEBACK = [
    "[2025-02-28 09:28:25 TP7] Scheduler hit an exception: Traceback (most recent call last):                                                                                                                                                                 │",
    '│   File "/usr/local/lib/python3.10/dist-packages/sglang/srt/constrained/outlines_backend.py", line 156, in init_value_impl                                                                                                                                │',
    "│     regex = build_regex_from_object(                                                                                                                                                                                                                     │",
    '│   File "/usr/local/lib/python3.10/dist-packages/sglang/srt/constrained/outlines_backend.py", line 197, in build_regex_from_object                                                                                                                        │',
    "│     return build_regex_from_schema(schema, whitespace_pattern)                                                                                                                                                                                           │",
    "│ ValueError: 'type' must be a string ",
]


def test_both_borders_are_peeled_where_the_box_frames_the_file():
    rows = frame(BOXED_TRACEBACK)
    assert rows[0]["message"] == "Scheduler hit an exception: Traceback (most recent call last):"
    assert rows[1]["message"].startswith('  File "/usr/local/lib/python3.10/')
    assert rows[1]["message"].endswith("in init_value_impl")
    assert rows[-1]["message"] == "ValueError: 'type' must be a string"


def test_a_line_that_happens_to_start_with_a_border_is_left_alone():
    rows = frame(["│ 0 │ model │ GPT │ 124 M", "rank=0 step=10 stage=forward", "ok"])
    assert rows[0]["message"] == "│ 0 │ model │ GPT │ 124 M"


def test_the_boxed_traceback_is_the_rank_s_its_record_names(tmp_path):
    verdict = analyze_files(tmp_path, {"console.log": BOXED_TRACEBACK}).verdict
    assert (verdict.finding.kind, verdict.ranks) == ("rank_exception", [7])
    assert "ValueError ('type' must be a string)" in verdict.finding.summary


def test_a_quoted_box_is_read_as_the_box(tmp_path):
    quoted = ["> " + line for line in BOXED_TRACEBACK]
    verdict = analyze_files(tmp_path, {"console.log": quoted}).verdict
    assert (verdict.finding.kind, verdict.ranks) == ("rank_exception", [7])
