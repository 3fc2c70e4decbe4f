# ruff: noqa: E501 -- test data are verbatim log lines
"""The Flight Recorder analyzer's text report (parsers/fr_trace_text.py) and the departure the
flight_recorder rule reads from it when the dumps are not in the upload."""

from __future__ import annotations

from logforensics.i18n import translate, translate_headline
from logforensics.registry import diagnosis
from tests.builders import analyze_files, only, parsed_by
from tests.test_i18n import english_runs

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


# pytorch/pytorch#140563, verbatim as the thread's excerpt has it (128 ranks; the `expected
# ranks` and `error msg` lines cut there): every rank joined all_reduce #39, ranks 22 and 110
# with other input sizes than the rank the analyzer compared them with
SIZE_MISMATCH = [
    "Collective 39 at entry 38 errors",
    "group info: 0:default_pg",
    "collective: nccl:all_reduce",
    "input sizes: [[1025]]",
    "output sizes: [[1025]]",
    "world size: 128",
    "expected ranks: {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63, 64, 65, 66, 67, 68, 69, 70, 71, 72, 73, 74, 75, 76, 77, 78, 79, 80, 81, 82, 83, 84, 85, 86, 87, 88, 89, 90, 91, 92, 93, 94, 95, 96, 97, 98, 99, 100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111, 112, 113, 114, 115, 116, 117, 118, 119, 120, 121, 122, 123, 124, 125, 126, 127}",
    "collective state: scheduled",
    "error msg: Culprit rank 22; Error type: SIZE_OR_SYNTAX_MISMATCH, Expected input sizes: '[[1025]]' does not match found input sizes: '[[262144]]', Culprit rank 110; Error type: SIZE_OR_SYNTAX_MISMATCH, Expected input sizes: '[[1025]]' does not match found",
]


def test_culprits_of_a_size_mismatch_called_the_collective_differently(tmp_path):
    report = only(parsed_by("fr_trace_text", SIZE_MISMATCH).filter(event="fr_missing"))
    assert (report["values"], report["seq"], report["op"]) == ([22, 110], 39, "all_reduce")
    assert report["error_code"] == "SIZE_OR_SYNTAX_MISMATCH"
    analysis = analyze_files(tmp_path, {"fr_trace.txt": SIZE_MISMATCH})
    verdict = analysis.verdict
    assert verdict.ranks == [22, 110] and diagnosis(verdict.finding) == "collective_mismatch"
    assert verdict.headline == (
        "Ranks 22 and 110 called `all_reduce` #39 with other sizes than the others "
        "(Flight Recorder)"
    )
    assert "'[[262144]]'" in verdict.finding.summary and "never" not in verdict.headline
    assert english_runs(translate_headline(verdict.headline, "zh")) == []
    assert english_runs(translate(verdict.finding.summary, "zh")) == []
