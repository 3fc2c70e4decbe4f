"""PyTorch's debug server (`torch.distributed.debug.start_debug_server`, torch 2.13): its
periodic dump files and its workers' `dump_traceback` (faulthandler) stacks, from the real
`debug_server` job in sample_logs/ (made here, gloo on CPU)."""

from __future__ import annotations

import shutil
from pathlib import Path

import polars as pl

from logforensics.api import analyze
from logforensics.dumps import debug_server, faulthandler
from logforensics.dumps.pyspy import where_stuck
from logforensics.intake import dump_kind
from tests.conftest import SAMPLE_LOGS

SERVER = SAMPLE_LOGS / "debug_server" / "logs"
PERIODIC = SERVER / "debug_server" / "periodic"


def lines_of(path: Path) -> pl.DataFrame:
    text = path.read_text().splitlines()
    return pl.DataFrame(
        {"file": [path.name] * len(text), "line": list(range(1, len(text) + 1)), "text": text},
        schema={"file": pl.String, "line": pl.UInt32, "text": pl.String},
    )


def periodic_only(tmp_path: Path, keep: str) -> Path:
    """The job's torchrun logs and the periodic files whose names start with `keep`."""
    root = tmp_path / "logs"
    shutil.copytree(SERVER / "torchrun", root / "torchrun")
    (root / "periodic").mkdir()
    for path in PERIODIC.glob(f"{keep}_*.txt"):
        shutil.copy(path, root / "periodic" / path.name)
    return root


def test_sections_carry_the_rank_of_their_header():
    # === Rank 1: http://vm:57457/handler/pyspy_dump?nonblocking=1 ===
    path = PERIODIC / "pyspy_dump_20261201_173911.txt"
    assert dump_kind(path.read_bytes()[:4096]) == "debug_server"
    lines = debug_server.sections(lines_of(path))
    assert lines.get_column("handler").unique().to_list() == ["pyspy_dump"]
    first = lines.filter(pl.col("text").str.starts_with("Process ")).sort("line")
    assert first.get_column("section_rank").to_list() == [0, 1, 2, 3]
    assert not lines.filter(pl.col("text").str.starts_with("=== Rank")).height


def test_the_newest_periodic_snapshot_is_the_one_used(tmp_path):
    # the first snapshot (17:37:11) caught every rank importing sympy; the last, the hang
    analysis = analyze(periodic_only(tmp_path, "pyspy_dump"))
    stuck = where_stuck(analysis.job.dumps.stacks).sort("rank")
    assert stuck.get_column("file").unique().to_list() == [
        "periodic/pyspy_dump_20261201_173911.txt"
    ]
    assert stuck.get_column("user_frame").to_list() == [
        "train (dumps_train.py:246)",
        "train (dumps_train.py:267)",
        "train (dumps_train.py:246)",
        "train (dumps_train.py:246)",
    ]
    assert analysis.verdict.finding.kind == "stage_divergence" and analysis.verdict.ranks == [1]
    assert "the py-spy stacks single out rank 1 too" in analysis.verdict.reason


def test_faulthandler_stacks_find_the_main_thread_and_shorten_library_paths():
    frames = faulthandler.faulthandler_frames(
        lines_of(SERVER / "debug_server" / "worker" / "rank1" / "dump_traceback.txt")
    )
    main = frames.filter(pl.col("thread_name") == "MainThread").sort("depth")
    # File ".../site-packages/torch/distributed/distributed_c10d.py", line 5356 in barrier
    innermost = main.row(0, named=True)
    assert (innermost["function"], innermost["source"], innermost["source_line"]) == (
        "barrier",
        "torch/distributed/distributed_c10d.py",
        5356,
    )
    # File "/work/staging/debug_server/../dumps_train.py", line 267 in train
    assert main.filter(pl.col("function") == "train").item(0, "source") == (
        "/work/staging/dumps_train.py"
    )
    # the server's own thread ("Current thread ... <no Python frame>") has no frames
    assert frames.get_column("thread_id").n_unique() == 1


def test_stacks_from_faulthandler_alone_single_out_the_rank(tmp_path):
    analysis = analyze(periodic_only(tmp_path, "stacks"))
    stuck = {
        row["rank"]: row for row in where_stuck(analysis.job.dumps.stacks).iter_rows(named=True)
    }
    assert stuck[1]["waiting"] == "dist.barrier"
    assert stuck[1]["tool"] == "faulthandler"
    located = [f for f in analysis.findings if f.kind == "stuck_location"]
    assert located and located[0].ranks == [1]
    assert "the faulthandler stacks single out rank 1" in analysis.verdict.reason


def test_files_that_hold_no_stacks_are_left_out(tmp_path):
    analysis = analyze(periodic_only(tmp_path, "wait_counters"))
    assert analysis.job.dumps.stacks.is_empty()
    assert analysis.verdict.finding.kind == "stage_divergence"
