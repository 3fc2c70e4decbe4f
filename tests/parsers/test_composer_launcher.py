# ruff: noqa: E501 -- test data are verbatim log lines
"""MosaicML Composer's launcher reporting its failed workers (parsers/composer_launcher.py)."""

from __future__ import annotations

import polars as pl

from parsers.composer_launcher import TO_THE_END
from tests.builders import analyze_files, parsed_by

# mosaicml/llm-foundry#203, verbatim: an MPT-7B run on two GPUs, rank 0's watchdog timeout,
# the launcher's report of both ranks, then rank 1's captured STDOUT (the paste ends in it)
COMPOSER = [
    "[E ProcessGroupNCCL.cpp:821] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=2, OpType=_ALLGATHER_BASE, Timeout(ms)=600000) ran for 600963 milliseconds before timing out.",
    "ERROR:composer.cli.launcher:Rank 1 crashed with exit code -6.",
    "Waiting up to 30 seconds for all training processes to terminate. Press Ctrl-C to exit immediately.",
    "Global rank 0 (PID 786) exited with code -6",
    "Global rank 1 (PID 787) exited with code -6",
    "----------Begin global rank 1 STDOUT----------",
    "Initializing model...",
    "cfg.n_params=6.65e+09",
    "Building train loader...",
]


def test_each_reported_exit_states_the_rank_of_its_pid():
    exits = parsed_by("composer_launcher", COMPOSER).filter(pl.col("event") == "process_id")
    assert exits.select("rank", "pid", "exitcode").rows() == [(0, 786, -6), (1, 787, -6)]


def test_a_quoted_section_is_its_rank_s_to_the_end_of_a_cut_paste():
    sections = parsed_by("composer_launcher", COMPOSER).filter(pl.col("event") == "rank_section")
    assert sections.select("line", "rank", "end_line").rows() == [(6, 1, TO_THE_END)]


def test_a_section_ends_at_its_end_rule(tmp_path):
    lines = [*COMPOSER, "----------End global rank 1 STDOUT----------"]
    section = parsed_by("composer_launcher", lines).filter(pl.col("event") == "rank_section")
    assert section.select("line", "end_line").rows() == [(6, 10)]
    # the End line is read: the same four lines are left unrecognised
    assert analyze_files(tmp_path, {"console.log": lines}).unrecognised_lines == 4


def test_the_launcher_s_lines_are_read_and_the_timeout_stays_the_finding(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": COMPOSER})
    assert analysis.verdict.finding.kind == "collective_timeout"
    # the quoted STDOUT's own prints and the launcher's wait notice are all that is left
    assert analysis.unrecognised_lines == 4


# mosaicml/composer#149, verbatim: the first releases' launcher, one of 8 workers failing at the
# first checkpoint with nothing on its streams; the fix (PR #151) says ranks other than 0 crashed
OLD_LAUNCHER_REPORT = [
    '[BATCH][step=599]: { "lr-AdamW/group0": 0.0000, }',
    "Error in subprocess",
    "----------Subprocess STDOUT----------",
    "",
    "----------Subprocess STDERR----------",
    "",
    "Command '['/usr/bin/python3.8', '-u', 'examples/run_mosaic_trainer.py', '-f', 'composer/yamls/models/glue/sst-2_checkpointing.yaml']' returned non-zero exit status 1.",
    "Killing subprocess 33667 with SIGTERM",
    "Killing subprocess 33662 with SIGTERM",
    "Killing subprocess 33661 with SIGTERM",
    "Killing subprocess 33669 with SIGTERM",
    "Killing subprocess 33659 with SIGTERM",
    "Waiting 30 seconds for processes to terminate...",
]


def test_the_first_releases_report_is_a_worker_that_failed_with_its_code(tmp_path):
    failed = parsed_by("composer_launcher", OLD_LAUNCHER_REPORT).filter(
        pl.col("event") == "worker_failed"
    )
    assert failed.get_column("exitcode").to_list() == [1]
    analysis = analyze_files(tmp_path, {"console.log": OLD_LAUNCHER_REPORT})
    assert analysis.verdict.finding.kind == "rank_exception"
    assert analysis.verdict.headline == "A process exited with code 1"
    # the step's line aside (a logger's own), every line of the report is read
    assert analysis.unrecognised_lines == 1
