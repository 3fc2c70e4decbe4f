# ruff: noqa: E501 -- test data are verbatim log lines
"""torchrun's agent relaying a failed worker's traceback a line per record under its header."""

from __future__ import annotations

from pathlib import Path

from logforensics.api import analyze
from tests.builders import analyze_files
from tests.framing import frame

# huggingface/accelerate#3524, verbatim (notebook_launcher on Kaggle): the relay's opening
# record is cut from the paste; the summary lists rank 0 alone
RELAY = [
    'E0422 05:07:49.013000 204 torch/distributed/elastic/multiprocessing/api.py:732]   File "/usr/local/lib/python3.11/dist-packages/torch/cuda/__init__.py", line 476, in set_device',
    "E0422 05:07:49.013000 204 torch/distributed/elastic/multiprocessing/api.py:732]     torch._C._cuda_setDevice(device)",
    'E0422 05:07:49.013000 204 torch/distributed/elastic/multiprocessing/api.py:732]   File "/usr/local/lib/python3.11/dist-packages/torch/cuda/__init__.py", line 305, in _lazy_init',
    "E0422 05:07:49.013000 204 torch/distributed/elastic/multiprocessing/api.py:732]     raise RuntimeError(",
    "E0422 05:07:49.013000 204 torch/distributed/elastic/multiprocessing/api.py:732] RuntimeError: Cannot re-initialize CUDA in forked subprocess. To use CUDA with multiprocessing, you must use the 'spawn' start method",
    "E0422 05:07:49.013000 204 torch/distributed/elastic/multiprocessing/api.py:732] ",
    "notebook_launcher failed: ",
    "============================================================",
    "dummy_fn FAILED",
    "------------------------------------------------------------",
    "Failures:",
    "  <NO_OTHER_FAILURES>",
    "------------------------------------------------------------",
    "Root Cause (first observed failure):",
    "[0]:",
    "  time      : 2025-04-22_05:07:48",
    "  host      : ae97246030ca",
    "  rank      : 0 (local_rank: 0)",
    "  exitcode  : 1 (pid: 240)",
]
HEADER = "E0422 05:07:49.013000 204 torch/distributed/elastic/multiprocessing/api.py:732] "


def test_the_relayed_traceback_lines_lose_the_agent_s_header():
    rows = frame(RELAY[:6])
    assert [row["message"] for row in rows[:2]] == [line.removeprefix(HEADER) for line in RELAY[:2]]
    assert all(row["framing"] == "elastic_relay" for row in rows)


def test_the_agent_s_other_records_keep_their_header():
    # lmzpai/roboMamba#10, verbatim: the opening record of a binary worker's failure
    line = "E0325 20:57:27.620000 2606 site-packages/torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: -9) local_rank: 5 (pid: 2630) of binary: /root/miniconda3/bin/python"
    assert frame([line])[0]["message"] == line


def test_the_relay_takes_the_local_rank_its_opening_record_names():
    # the opening record as torch's format string writes it under the same header (made up
    # for this test: the paste cut it), then the relay's lines
    opening = (
        HEADER
        + "failed (exitcode: 1) local_rank: 1 (pid: 241) of fn: dummy_fn (start_method: fork)"
    )
    rows = frame([opening, HEADER + "Traceback (most recent call last):", *RELAY[:5]])
    assert [row.get("prefix_local_rank") for row in rows] == [None, 1, 1, 1, 1, 1, 1]


def test_the_traceback_is_the_one_worker_the_summary_lists(tmp_path):
    analysis = analyze_files(tmp_path, {"output.log": RELAY})
    failed = analysis.verdict.finding
    assert (failed.kind, analysis.verdict.ranks) == ("rank_exception", [0])
    assert "Cannot re-initialize CUDA in forked subprocess" in failed.summary
    assert "lists rank 0 alone as failed (exit code 1)" in failed.summary


ELASTIC_FUNCTION = Path(__file__).parents[1] / "data" / "launchers" / "elastic_function"


def test_spawn_s_child_traceback_under_the_header_is_the_worker_s(tmp_path):
    # a run here (tests/data/launchers/elastic_function): the agent relays spawn's
    # ProcessRaisedException, which carries rank 1's own traceback after `-- Process 1
    # terminated with the following error:`
    lines = (ELASTIC_FUNCTION / "console.log").read_text().splitlines()
    header = next(row for row in frame(lines) if "-- Process 1 terminated" in row["message"])
    assert header["message"] == "-- Process 1 terminated with the following error:"
    assert header["framing"] == "elastic_relay"
    verdict = analyze(ELASTIC_FUNCTION).verdict
    assert (verdict.finding.kind, verdict.ranks) == ("rank_exception", [1])
    assert verdict.finding.details["exception"] == "ValueError"
    assert verdict.headline == "Rank 1 died of a ValueError"
