"""gdb's `py-bt` read as a stack dump: deepspeedai/DeepSpeed#1969's paste (tests/data/dumps/
gdb_pybt/README.md)."""

from __future__ import annotations

import shutil

from logforensics.api import analyze
from logforensics.dumps.gdb_pybt import gdb_frames
from logforensics.intake import dump_kind
from tests.conftest import ROOT
from tests.dumps.test_pyspy import lines_of

PASTE = ROOT / "tests" / "data" / "dumps" / "gdb_pybt" / "stack_allreduce_rank.txt"


def test_a_py_bt_paste_is_a_stack_dump():
    assert dump_kind(PASTE.read_bytes()) == "gdb_pybt"
    # a traceback of an exception is no dump
    assert dump_kind(b'Traceback (most recent call last):\n  File "a.py", line 1\n') is None


def test_its_frames_innermost_first_with_short_paths():
    frames = gdb_frames(lines_of(PASTE, "stack.txt"))
    assert frames.get_column("function").to_list()[:3] == [
        "all_reduce",
        "allreduce_bucket",
        "allreduce_and_copy",
    ]
    assert frames.get_column("depth").to_list()[:2] == [0, 1]
    assert frames.item(0, "source") == "torch/distributed/distributed_c10d.py"
    assert frames.item(0, "source_line") == 1209


def test_the_one_dumped_process_waiting_in_a_collective_is_where_the_job_hung(tmp_path):
    shutil.copy(PASTE, tmp_path / PASTE.name)
    analysis = analyze(tmp_path)
    verdict = analysis.verdict
    assert verdict.headline == "The one process dumped hung waiting in dist.all_reduce"
    assert verdict.finding.details["source"] == "gdb"
    # its frames are a stack, not a traceback cut before an exception
    assert "rank_exception" not in {finding.kind for finding in analysis.findings}


def test_py_bt_inside_a_log_is_no_cut_traceback(tmp_path):
    # (the paste after a constructed line, so the file is read as a log, not as a dump)
    log = ["2022-05-10 10:00:00 INFO training started", *PASTE.read_text().splitlines()]
    (tmp_path / "rank0.log").write_text("\n".join(log) + "\n")
    assert "rank_exception" not in {finding.kind for finding in analyze(tmp_path).findings}
