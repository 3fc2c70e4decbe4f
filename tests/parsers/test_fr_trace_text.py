# ruff: noqa: E501 -- test data are verbatim log lines
"""The Flight Recorder analyzer's text report (parsers/fr_trace_text.py) and the departure the
flight_recorder rule reads from it when the dumps are not in the upload."""

from __future__ import annotations

from tests.builders import analyze_files, only, parsed_by

# pytorch/tutorials, intermediate_source/debug_hangs_with_flight_recorder.rst (at 546d4ce),
# verbatim: the analyzer's report on rank 1, made to sleep instead of joining the fourth
# collective
REPORT = [
    "Not all ranks joining collective, sequence number: 4",
    "internal record id: 4",
    "group info: main_comm:gloo",
    "collective: nccl:all_reduce",
    "missing ranks: {1}",
    "input sizes: [[1024]]",
    "output sizes: [[1024]]",
    "world size: 2",
    "expected ranks: {0, 1}",
    "collective state: scheduled",
]


def test_the_missing_ranks_are_an_event_with_the_collectives_number_and_op():
    missing = only(parsed_by("fr_trace_text", REPORT).filter(event="fr_missing"))
    assert (missing["values"], missing["seq"], missing["op"]) == ([1], 4, "all_reduce")


def test_the_rank_missing_from_a_collective_is_the_departure(tmp_path):
    analysis = analyze_files(tmp_path, {"fr_trace.txt": REPORT})
    verdict = analysis.verdict
    assert (verdict.finding.kind, verdict.ranks, verdict.finding.seq) == ("fr_mismatch", [1], 4)
    assert verdict.headline.startswith("Rank 1 never issued collective #4 (Flight Recorder)")
    assert analysis.unrecognised_lines == 0
