# ruff: noqa: E501 -- test data are verbatim log lines
"""PyTorch's glog-form lines are lines of the job, whatever they say (parsers/c10_log.py)."""

from __future__ import annotations

import datetime as dt
import re

import polars as pl
import pytest

from parsers.c10_log import GLOG_HEADER
from tests.builders import analyze_files

# NVIDIA/Megatron-LM#1541, verbatim (the shutdown warning every rank prints)
SHUTDOWN = [
    "[rank1]:[W326 09:37:44.752383442 ProcessGroupNCCL.cpp:1487] Warning: WARNING: destroy_process_group() was not called before program exit, which can leak resources. For more info, please see https://pytorch.org/docs/stable/distributed.html#shutdown (function operator())",
    "[rank0]:[W326 09:37:44.848694228 ProcessGroupNCCL.cpp:1487] Warning: WARNING: destroy_process_group() was not called before program exit, which can leak resources. For more info, please see https://pytorch.org/docs/stable/distributed.html#shutdown (function operator())",
]


def test_a_healthy_runs_shutdown_noise_is_a_job_with_no_failure(tmp_path):
    analysis = analyze_files(tmp_path, {"train.log": SHUTDOWN})  # not refused as a non-log
    assert analysis.recognised_lines == 2 and analysis.unrecognised_lines == 0
    assert analysis.verdict is None
    assert not [f for f in analysis.findings if f.severity == "error"]


def test_an_unpadded_c10_date_still_gives_the_time(tmp_path):
    # vllm-project/vllm-omni#2928, verbatim: `E418` is April 18 (c10 leaves the month unpadded);
    # the year comes from a dated line of the same file
    lines = [
        "2026-04-18 01:30:00,000 INFO rank=1 step=1 stage=before_forward",
        "[rank1]:[E418 01:32:50.907313453 ProcessGroupNCCL.cpp:1890] [PG ID 0 PG GUID 0(default_pg) Rank 1] Received a dump signal due to a collective timeout from this local rank and we will try our best to dump the debug info. Last enqueued NCCL work: 233659, last completed NCCL work: 233659.This is most likely caused by incorrect usages of collectives, e.g., wrong sizes used across ranks, the order of collectives is not same for all ranks or the scheduled collective, for some reason, didn't run. Additionally, this can be caused by GIL deadlock or other reasons such as network errors or bugs in the communications library (e.g. NCCL), etc.",
    ]
    events = analyze_files(tmp_path, {"train.log": lines}).job.events
    signal = events.filter((pl.col("line") == 2) & (pl.col("family") == "watchdog"))
    assert signal.item(0, "timestamp") == dt.datetime(2026, 4, 18, 1, 32, 50, 907313)


def test_torchruns_agent_under_pythons_default_format_is_a_job_line(tmp_path):
    # kubeflow/trainer#2041, verbatim
    lines = [
        "INFO:torch.distributed.elastic.agent.server.api:[default] Starting worker group",
        "INFO:torch.distributed.elastic.agent.server.local_elastic_agent:Environment variable 'TORCHELASTIC_ENABLE_FILE_TIMER' not found. Do not start FileTimerServer.",
    ]
    analysis = analyze_files(tmp_path, {"agent.log": lines})  # read, not refused
    assert analysis.recognised_lines == 2 and analysis.verdict is None


def test_torch_2_2s_header_without_a_date_is_a_job_line_too(tmp_path):
    # NVIDIA/nccl#1176, verbatim (srun label, torch 2.2: `[W ProcessGroupNCCL.cpp:2302]`), and a
    # dated line of the same kind (NVIDIA/Megatron-LM#1541): both read, neither a failure
    lines = [
        "3: [rank24]:[W ProcessGroupNCCL.cpp:2302] Warning: 0TORCH_NCCL_AVOID_RECORD_STREAMS=1 has no effect for point-to-point collectives. (function operator())",
        SHUTDOWN[0],
    ]
    analysis = analyze_files(tmp_path, {"train.log": lines})
    assert analysis.recognised_lines == 2 and analysis.unrecognised_lines == 0
    assert analysis.verdict is None


@pytest.mark.parametrize(
    "header",
    [
        "[E ProcessGroupNCCL.cpp:1414] ",  # torch 2.2/2.3 (vllm-project/vllm#6042)
        "[E1016 03:31:38.877 ProcessGroupNCCL.cpp:1414] ",  # torch >= 2.4
        "[E1016 03:31:38.877469923 ProcessGroupNCCL.cpp:1414] ",
        "E0801 13:23:20.000000 32974 torch/distributed/elastic/agent/server/api.py:874] ",
    ],
)
def test_every_glog_header_form_is_recognised(header):
    assert re.search(GLOG_HEADER, header + "anything")
