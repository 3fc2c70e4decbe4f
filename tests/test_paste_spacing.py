# ruff: noqa: E501 -- verbatim log lines
"""A paste that put a blank line after every line, read as the lines it spaced out, its lines
still numbered as in the file (logforensics/paste_spacing.py)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import polars as pl
from typer.testing import CliRunner

from logforensics import cli
from logforensics.api import analyze
from logforensics.paste_spacing import spaced, unspaced

THREADS = Path(__file__).parent / "data" / "threads"
# entbappy/YOLO-v8-Object-Detection#2, as posted: a blank line after every line
YOLO_PASTE = THREADS / "yolov8_entbappy2_spaced_paste.log"

# huggingface/accelerate#1722, verbatim: torchrun's summary naming rank 7
SUMMARY = [
    "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:",
    "============================================================",
    "/home/huggingface/accelerate/src/accelerate/test_utils/scripts/test_script.py FAILED",
    "------------------------------------------------------------",
    "Failures:",
    "  <NO_OTHER_FAILURES>",
    "------------------------------------------------------------",
    "Root Cause (first observed failure):",
    "[0]:",
    "  time      : 2023-07-13_07:37:32",
    "  host      : localhost",
    "  rank      : 7 (local_rank: 7)",
    "  exitcode  : 1 (pid: 38940)",
    "  error_file: <N/A>",
    "  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html",
    "============================================================",
]

# a 3-process gloo run here, stopped with Ctrl-C (tests/data/launchers/README.md): chained
# tracebacks, each link between blank lines of its own
CHAINED = Path(__file__).parent / "data" / "launchers" / "torchrun" / "interrupted" / "console.log"


def spaced_text(lines: list[str]) -> str:
    """`lines` as a spaced paste holds them: each followed by a blank line."""
    return "".join(f"{line}\n\n" for line in lines)


def json_report(path: Path, tmp_path: Path, *more: str) -> dict:
    out = tmp_path / "report.json"
    result = CliRunner().invoke(
        cli.app, ["analyze", str(path), "--format", "json", "-o", str(out), "-q", *more]
    )
    assert result.exit_code == 0, result.output
    return json.loads(out.read_text())


def test_a_spaced_summary_is_read_as_torchrun_wrote_it(tmp_path):
    (tmp_path / "console.log").write_text(spaced_text(SUMMARY))
    verdict = analyze(tmp_path).verdict
    assert (verdict.finding.kind, verdict.ranks) == ("rank_exception", [7])


def test_a_spaced_paste_is_quoted_at_the_file_s_own_line_numbers(tmp_path):
    report = json_report(YOLO_PASTE, tmp_path)
    file_lines = YOLO_PASTE.read_text().split("\n")
    quoted = [e for f in report["findings"] for e in f["evidence"]]
    assert any(e["text"] == "RuntimeError: Invalid scalar type" for e in quoted)
    for evidence in quoted:
        assert file_lines[evidence["line"] - 1] == evidence["text"]
    inputs = report["inputs"]
    assert inputs["lines"] == len(file_lines) - 1  # every line counted, the paste's blanks too
    assert inputs["unrecognised_lines"] < inputs["lines"] - inputs["blank_lines"]
    (remark,) = inputs["read_with_remarks"]
    assert "a blank line after every line" in remark["remark"]


def test_the_exported_events_keep_the_file_s_numbering(tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "console.log").write_text(spaced_text(SUMMARY))
    events = tmp_path / "events.parquet"
    json_report(logs, tmp_path, "--events", str(events))
    summary = pl.read_parquet(events).filter(pl.col("text") == "[0]:")
    assert summary.select("line", "end_line").row(0) == (17, 29)


def test_a_spaced_paste_in_an_archive_is_read_the_same_way(tmp_path):
    (tmp_path / "console.log.gz").write_bytes(gzip.compress(spaced_text(SUMMARY).encode()))
    verdict = analyze(tmp_path / "console.log.gz").verdict
    assert (verdict.finding.kind, verdict.ranks) == ("rank_exception", [7])


def test_a_traceback_s_own_blank_lines_are_kept():
    original = CHAINED.read_bytes()
    lines = original.decode().split("\n")[:-1]
    assert "" in lines
    paste = spaced_text(lines).encode()
    assert spaced(paste[:8192])
    text, line_map = unspaced(paste)
    assert text == original
    # each line of the original is the first of its two in the paste
    assert all(line_map.own_number(k) == 2 * k - 1 for k in range(1, len(lines) + 1))


def test_a_log_with_blank_lines_of_its_own_is_not_a_spaced_paste():
    # blank lines between records of a training loop, but lines with text touching too
    own = SUMMARY + ["", "epoch 1 loss 0.5", "", "epoch 2 loss 0.4", "epoch 3 loss 0.3"]
    assert not spaced(("\n".join(own) + "\n").encode())
    assert not spaced(CHAINED.read_bytes()[:8192])
    # two blank lines after every line is no paste's spacing either
    assert not spaced("".join(f"{line}\n\n\n" for line in SUMMARY).encode())


def test_a_file_read_as_it_is_has_no_remark(tmp_path):
    (tmp_path / "console.log").write_text("\n".join(SUMMARY) + "\n")
    report = json_report(tmp_path / "console.log", tmp_path)
    assert report["inputs"]["read_with_remarks"] == []
    assert report["inputs"]["lines"] == len(SUMMARY)
