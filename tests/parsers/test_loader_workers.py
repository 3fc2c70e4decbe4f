# ruff: noqa: E501 -- test data are verbatim log lines
"""A DataLoader worker's own crash line (parsers/loader_workers.py)."""

from __future__ import annotations

import pytest

from tests.builders import analyze_files, parsed_by

# NVIDIA/Megatron-LM#878, verbatim (the start of the paste): three workers' bus errors in a
# container with Docker's default /dev/shm, then the ranks' tracebacks interleaved and cut
BUS_ERRORS = [
    "INFO:megatron.core.datasets.gpt_dataset:> total number of samples: 640",
    " finished creating GPT datasets ...",
    "ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).",
    "ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).",
    "ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).",
    "Traceback (most recent call last):",
    '  File "/home/zyz/code/Megatron-LM-core_v0.6.0/pretrain_gpt.py", line 224, in <module>',
    "    Traceback (most recent call last):",
    'pretrain(train_valid_test_datasets_provider,  File "/home/zyz/code/Megatron-LM-core_v0.6.0/pretrain_gpt.py", line 224, in <module>',
    "",
    '  File "/home/zyz/code/Megatron-LM-core_v0.6.0/megatron/training/training.py", line 250, in pretrain',
    "Traceback (most recent call last):",
    '  File "/home/zyz/code/Megatron-LM-core_v0.6.0/pretrain_gpt.py", line 224, in <module>',
    "    = build_train_valid_test_data_iterators(",
]


@pytest.mark.parametrize(
    ("line", "signal"),
    [
        (BUS_ERRORS[2], "SIGBUS"),
        # the other two handlers of torch/csrc/DataLoader.cpp
        ("ERROR: Unexpected segmentation fault encountered in worker.", "SIGSEGV"),
        ("ERROR: Unexpected floating-point exception encountered in worker.", "SIGFPE"),
    ],
)
def test_a_worker_s_crash_line_gives_its_signal(line, signal):
    (row,) = parsed_by("loader_workers", [line]).select("event", "signal").rows()
    assert row == ("loader_worker_crash", signal)


def test_workers_bus_errors_are_the_node_s_shared_memory_running_out(tmp_path):
    analysis = analyze_files(tmp_path, {"output.log": BUS_ERRORS})
    verdict = analysis.verdict
    assert (verdict.finding.kind, verdict.ranks) == ("oom", [])
    assert verdict.headline.startswith("The job ran out of shared memory (/dev/shm)")
    assert "3 reports" in verdict.finding.summary
    assert "--shm-size" in verdict.finding.fix and "--ipc=host" in verdict.finding.fix
    assert [evidence.line for evidence in verdict.finding.evidence] == [3, 4, 5]
