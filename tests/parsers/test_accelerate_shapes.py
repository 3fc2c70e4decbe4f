# ruff: noqa: E501 -- test data are verbatim log lines
"""accelerate's report of the shapes each process passed to a collective
(parsers/accelerate_shapes.py), and the process whose shape differs
(rules/collective_mismatch.py)."""

from __future__ import annotations

from tests.builders import analyze_files, finding, kinds, parsed_by

# huggingface/lighteval#204, verbatim (as quoted in the issue): eight processes under
# accelerate, rank 3 reporting; process 0's tensor is half as long as the others'
GATHER_SHAPES = [
    "Cannot apply desired operation due to shape mismatches. All shapes across devices must be valid.",
    "[rank3]: Operation: accelerate.utils.operations.gather`",
    "[rank3]: Input shapes:",
    "[rank3]:   - Process 0: [1024]",
    "[rank3]:   - Process 1: [2048]",
    "[rank3]:   - Process 2: [2048]",
    "[rank3]:   - Process 3: [2048]",
    "[rank3]:   - Process 4: [2048]",
    "[rank3]:   - Process 5: [2048]",
    "[rank3]:   - Process 6: [2048]",
    "[rank3]:   - Process 7: [2048]",
]
# accelerate's documentation (troubleshooting guide), verbatim from its last frame on (the
# `Traceback` header added here): two processes, two shapes
DOCS_BROADCAST = [
    "Traceback (most recent call last):",
    '  File "/home/zach_mueller_huggingface_co/accelerate/src/accelerate/utils/operations.py", line 303, in wrapper',
    "    broadcast_tensor = broadcast(tensor)",
    "accelerate.utils.operations.DistributedOperationException: Cannot apply desired operation due to shape mismatches. All shapes across devices must be valid.",
    "",
    "Operation: `accelerate.utils.operations.broadcast`",
    "Input shapes:",
    "  - Process 0: [1, 5]",
    "  - Process 1: [1, 2, 5]",
]


def test_each_process_s_shape_is_an_event_naming_the_process_and_the_operation():
    found = parsed_by("accelerate_shapes", GATHER_SHAPES).sort("line")
    shapes = found.filter(found["event"] == "process_shape")
    assert shapes.get_column("peer_rank").to_list() == list(range(8))
    assert shapes.get_column("shape").to_list() == ["[1024]"] + ["[2048]"] * 7
    assert set(shapes.get_column("op").to_list()) == {"gather"}
    docs = parsed_by("accelerate_shapes", DOCS_BROADCAST)
    docs = docs.filter(docs["event"] == "process_shape").sort("line")
    assert docs.get_column("shape").to_list() == ["[1, 5]", "[1, 2, 5]"]
    assert set(docs.get_column("op").to_list()) == {"broadcast"}


def test_a_process_line_without_a_report_above_it_is_no_shape():
    lines = ["Summary of the run:", "  - Process 0: [1024]"]
    found = parsed_by("accelerate_shapes", lines)
    assert found.filter(found["event"] == "process_shape").is_empty()


def test_the_process_in_the_minority_passed_the_odd_shape(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": GATHER_SHAPES})
    verdict = analysis.verdict
    assert (verdict.finding.kind, verdict.ranks) == ("collective_mismatch", [0])
    assert verdict.headline == "Rank 0 passed a tensor of another shape to gather"
    assert "pad_across_processes" in verdict.finding.fix
    # the exception every process raises for it is the report, not a failure of its own
    assert len(verdict.finding.evidence) >= 2


def test_two_processes_with_two_shapes_blame_neither(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": DOCS_BROADCAST})
    mismatch = finding(analysis, "collective_mismatch")
    assert mismatch.blames_nobody and mismatch.ranks == [0, 1]
    assert "no side is a minority" in mismatch.summary
    # the exception that carries the report is the report, not a failure of its own
    assert analysis.verdict.finding is mismatch and "rank_exception" not in kinds(analysis)
