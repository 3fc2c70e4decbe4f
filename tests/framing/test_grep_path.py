# ruff: noqa: E501 -- test data are verbatim log lines
"""`grep -H` / `grep -r` output: the path of the file each line came from, before the line."""

from __future__ import annotations

from tests.builders import analyze_files
from tests.framing import frame

# NVIDIA/nccl#1618, verbatim: "the signature in job error log" of a 1,024-rank job that hung in
# NCCL's bootstrap, grepped out of the ranks' own logs (one file per rank, named for it)
GREPPED_WARNS = [
    "rank_604.s12gn3064.4031852.log:[0604/1024][2025-02-16 22:31:34,422] [misc/socket.cc:586] [s12gn3064:pid=3942408] NCCL WARN socketPollConnect poll() returned 1, no POLLOUT events",
    "rank_607.s12gn3064.4031852.log:[0607/1024][2025-02-16 22:31:34,418] [misc/socket.cc:586] [s12gn3064:pid=3942411] NCCL WARN socketPollConnect poll() returned 1, no POLLOUT events",
]


def test_the_grepped_file_s_name_is_peeled_and_names_the_writer():
    rows = frame(GREPPED_WARNS)
    assert [row["prefix_rank"] for row in rows] == [604, 607]
    assert rows[0]["message"].startswith("[0604/1024][2025-02-16 22:31:34,422] [misc/socket.cc")
    assert rows[0]["framing"] == "grep_path"


def test_grep_n_s_line_number_and_a_torchrun_tree_s_local_rank():
    rows = frame(
        [
            "logs/attempt_0/3/stderr.log:12:[E ProcessGroupNCCL.cpp:475] [Rank 3] Watchdog caught collective operation timeout",
            "logs/attempt_0/1/stderr.log:40:Traceback (most recent call last):",
        ]
    )
    assert [row["prefix_local_rank"] for row in rows] == [3, 1]
    assert rows[1]["message"] == "Traceback (most recent call last):"


def test_a_file_name_before_a_few_lines_of_a_log_stays():
    rows = frame(
        [
            "train.log: saved",
            "rank=0 step=1 stage=forward",
            "rank=0 step=1 stage=backward",
        ]
    )
    assert rows[0]["message"] == "train.log: saved"
    assert "framing" not in rows[0]


def test_the_grepped_warns_are_the_two_ranks_nccl_errors(tmp_path):
    verdict = analyze_files(tmp_path, {"job_error.log": GREPPED_WARNS}).verdict
    assert (verdict.finding.kind, verdict.finding.ranks) == ("nccl_error", [604, 607])
    assert "socketPollConnect poll() returned 1" in verdict.finding.summary
