# ruff: noqa: E501 -- test data are verbatim log lines
"""MosaicML Composer's (and llm-foundry's) log records: `<date time,ms>: rank<N>[<pid>][<thread>]: `
before each, the global rank of the process that wrote it."""

from __future__ import annotations

from tests.builders import analyze_files
from tests.framing import frame

# mosaicml/composer#1218, verbatim: the debug log of a run, rank 0's records
SEED_RECORD = "2022-06-29 11:36:17,871: rank0[824065][MainThread]: INFO: composer.utils.reproducibility: Setting seed to 42"

# mosaicml/examples#292, verbatim: rank 0's record of its process group, then Composer's
# launcher on the first worker it saw crash (it then stops the others)
BERT_CRASH = [
    "2023-04-24 16:03:12,379: rank0[1003409][MainThread]: DEBUG: composer.utils.dist: Initializing torch.dist: global_rank=0, local_rank=0, world_size=8, local_world_size=8, node_rank=0",
    "ERROR:composer.cli.launcher:Rank 1 crashed with exit code 1.",
    "Waiting up to 30 seconds for all training processes to terminate. Press Ctrl-C to exit immediately.",
]


def test_the_records_header_is_peeled_with_its_rank_pid_and_time():
    (row,) = frame([SEED_RECORD])
    assert row["message"] == "INFO: composer.utils.reproducibility: Setting seed to 42"
    assert (row["prefix_rank"], row["prefix_pid"]) == (0, 824065)
    assert str(row["prefix_time"]) == "2022-06-29 11:36:17.871000"


def test_the_worker_composers_launcher_saw_crash_first_is_blamed(tmp_path):
    analysis = analyze_files(tmp_path, {"train.log": BERT_CRASH})
    assert 0 in analysis.job.ranks_seen
    verdict = analysis.verdict
    assert (verdict.finding.kind, verdict.ranks) == ("rank_exception", [1])
    assert "first process to exit" in verdict.finding.summary
