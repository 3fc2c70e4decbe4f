# ruff: noqa: E501 -- test data are verbatim log lines
"""PyTorch 2.1's own log records (`torch._logging`): `[<date time,ms>] <torch logger>: [LEVEL] `
before every line of a record, behind PyTorch's `[rankN]:` once a group is up. Peeled, so a
traceback or an exception the record holds reads as one."""

from __future__ import annotations

from tests.builders import analyze_files
from tests.framing import frame

# pytorch/pytorch#113620, verbatim: a CI run of the distributed tests (GitHub Actions' stamp
# first), rank 1's record of the exception its test raised, the harness's report as it exits
HARNESS_RECORD = [
    "2023-11-14T06:44:01.1549806Z [rank1]:[2023-11-14 06:36:20,890] torch.testing._internal.common_distributed: [ERROR] AssertionError: AssertionError not raised",
    "2023-11-14T06:44:01.1550350Z [rank1]:[2023-11-14 06:36:20,890] torch.testing._internal.common_distributed: [ERROR] ",
    "2023-11-14T06:44:01.1551304Z [rank1]:[2023-11-14 06:36:20,890] torch.testing._internal.common_distributed: [ERROR] To execute this test, run the following from the base repo dir:",
    "2023-11-14T06:44:01.1552462Z [rank1]:[2023-11-14 06:36:20,890] torch.testing._internal.common_distributed: [ERROR]      python test/distributed/test_distributed_spawn.py -k test_ddp_sync_bn_training_vs_eval",
    "2023-11-14T06:44:01.1553095Z [rank1]:[2023-11-14 06:36:20,890] torch.testing._internal.common_distributed: [ERROR] ",
    "2023-11-14T06:44:01.1554166Z [rank1]:[2023-11-14 06:36:20,890] torch.testing._internal.common_distributed: [ERROR] This message can be suppressed by setting PYTORCH_PRINT_REPRO_ON_FAILURE=0",
    "2023-11-14T06:44:01.1554976Z [rank1]:[2023-11-14 06:36:20,890] torch.testing._internal.common_distributed: [ERROR]  exiting process 1 with exit code: 10",
    "2023-11-14T06:44:01.1555235Z ('RERUN', {'yellow': True}) [6.6107s] [100%]",
]


def test_the_loggers_header_is_peeled_and_its_time_kept():
    rows = frame(HARNESS_RECORD)
    assert rows[0]["message"] == "AssertionError: AssertionError not raised"
    assert rows[0]["prefix_rank"] == 1
    assert str(rows[0]["prefix_time"]) == "2023-11-14 06:36:20.890000"
    assert rows[6]["message"] == " exiting process 1 with exit code: 10"  # the record's own blank


def test_the_exception_a_ranks_record_holds_is_that_ranks(tmp_path):
    verdict = analyze_files(tmp_path, {"ci.log": HARNESS_RECORD}).verdict
    assert verdict.finding.kind == "rank_exception" and verdict.ranks == [1]
    assert verdict.headline == "Rank 1 died of an AssertionError"


def test_another_programs_record_in_that_shape_keeps_its_header():
    # only PyTorch's loggers write this header: another name is left as it stands
    line = (
        "[2023-11-14 06:36:20,890] myapp.train: [ERROR] AssertionError: AssertionError not raised"
    )
    assert frame([line])[0]["message"] == line
