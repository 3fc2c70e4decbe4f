"""The first collective the ranks disagree on, from the real Flight Recorder dumps of the
`flight_recorder_mismatch` job (sample_logs/, torch 2.13 CPU/gloo: rank 3 skips the 1-element
validation all_reduce, #19), and from those dumps edited to show what the run did not."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from logforensics.api import analyze
from tests.builders import finding
from tests.dumps.test_flight_recorder import FR, job_logs


def test_the_rank_that_skipped_a_collective_is_named_with_the_number(tmp_path):
    root = job_logs(tmp_path)
    shutil.copytree(FR / "fr", root / "fr")
    analysis = analyze(root)
    mismatch = analysis.verdict.finding
    assert (mismatch.kind, mismatch.ranks, mismatch.seq) == ("fr_mismatch", [3], 19)
    assert mismatch.details["other_ranks"] == [0, 1, 2]  # in order: the report is the same each run
    assert "skipped collective #19" in mismatch.summary
    # the pickles record each entry's Python stack: the guarded all_reduce the others ran
    assert "issued by the others at train (dumps_train.py:259)" in mismatch.summary
    assert "completed the fewest collectives (up to #18)" in mismatch.summary
    assert "file order" in mismatch.summary  # what fr_trace's pairwise comparison would do
    later = [f for f in analysis.findings if f.kind == "fr_mismatch" and f.part == "consequence"]
    assert later and later[0].role == "symptom"


def edited_json_dumps(tmp_path: Path, edit) -> Path:
    """The job's JSON dumps with `edit(rank, record)` applied to each (the real dumps, edited
    to show a case the run did not produce)."""
    root = job_logs(tmp_path)
    (root / "fr-json").mkdir()
    for rank in range(4):
        record = json.loads((FR / "fr-json" / f"rank_{rank}.json").read_text())
        edit(rank, record)
        (root / "fr-json" / f"rank_{rank}.json").write_text(json.dumps(record))
    return root


def test_an_overwritten_ring_buffer_is_compared_from_the_first_number_all_hold(tmp_path):
    def overflow(rank: int, record: dict) -> None:
        if rank == 1:  # its buffer kept only the last 8 entries
            record["entries"] = record["entries"][-8:]

    analysis = analyze(edited_json_dumps(tmp_path, overflow))
    mismatch = finding(analysis, "fr_mismatch")
    assert (mismatch.ranks, mismatch.seq) == ([3], 19)
    assert "compared from #13" in mismatch.summary


def test_a_rank_whose_history_stops_early_never_joined(tmp_path):
    def stop(rank: int, record: dict) -> None:
        if rank == 2:
            record["entries"] = [e for e in record["entries"] if e["collective_seq_id"] <= 10]

    analysis = analyze(edited_json_dumps(tmp_path, stop))
    stopped = [f for f in analysis.findings if f.kind == "fr_mismatch" and f.ranks == [2]]
    assert stopped and stopped[0].seq == 11
    assert "never issued collective #11" in stopped[0].summary


def test_the_headline_names_the_line_of_code_the_rank_skipped(tmp_path):
    root = job_logs(tmp_path)
    shutil.copytree(FR / "fr", root / "fr")
    headline = analyze(root).verdict.headline
    assert headline.startswith(
        "Rank 3 skipped collective #19 (Flight Recorder), the one the others issued at "
        "train (dumps_train.py:259)"
    )
