# ruff: noqa: E501 -- test data are verbatim log lines
"""A DataLoader worker's own crash line (parsers/loader_workers.py)."""

from __future__ import annotations

import pytest

from logforensics.i18n import translate, translate_headline
from tests.builders import analyze_files, parsed_by
from tests.test_i18n import english_runs

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
    # (the workers' own words hedge: `This might be caused by insufficient shared memory`)
    assert verdict.headline.startswith(
        "The job died of a bus error: most likely out of shared memory (/dev/shm)"
    )
    assert "3 reports" in verdict.finding.summary
    assert "--shm-size" in verdict.finding.fix and "--ipc=host" in verdict.finding.fix
    assert [evidence.line for evidence in verdict.finding.evidence] == [3, 4, 5]


# horovod/horovod#1215, verbatim (the paste as posted, its first line cut inside the tag): the
# DataLoader workers of five ranks segfault under mpirun; each line after the sixth holds the
# previous writer's empty write's tag, then the tag of the rank whose line it is
MPIRUN_WORKER_SEGFAULTS = [
    "1,0]<stderr>:ERROR: Unexpected segmentation fault encountered in worker.",
    "[1,0]<stderr>:ERROR: Unexpected segmentation fault encountered in worker.",
    "[1,0]<stderr>:[1,0]<stderr>:2019-07-13 05:05:31,244  noisy image PSNR: 0.0000 ",
    "[1,0]<stderr>:2019-07-13 05:05:31,389  [epoch 0] validation PSNR: 22.2650 validation l2 loss: 0.00876302 Best Validation l2 loss: 0.00876302 ",
    "[1,0]<stderr>:2019-07-13 05:05:31,390  current lr is: 0.0010000",
    "[1,4]<stderr>:ERROR: Unexpected segmentation fault encountered in worker.",
    "[1,4]<stderr>:[1,5]<stderr>:ERROR: Unexpected segmentation fault encountered in worker.",
    "[1,5]<stderr>:[1,5]<stderr>:ERROR: Unexpected segmentation fault encountered in worker.",
    "[1,5]<stderr>:[1,6]<stderr>:ERROR: Unexpected segmentation fault encountered in worker.",
    "[1,6]<stderr>:[1,1]<stderr>:ERROR: Unexpected segmentation fault encountered in worker.",
]


def test_a_crash_line_s_words_are_the_worker_s_not_a_cut_tag_before_them():
    row = parsed_by("loader_workers", MPIRUN_WORKER_SEGFAULTS[:1]).row(0, named=True)
    assert row["exc_message"] == "ERROR: Unexpected segmentation fault encountered in worker."


def test_workers_segfaults_with_no_exception_after_them_are_their_ranks_failure(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": MPIRUN_WORKER_SEGFAULTS})
    verdict = analysis.verdict
    assert (verdict.finding.kind, verdict.ranks) == ("rank_exception", [0, 1, 4, 5, 6])
    assert verdict.headline == "DataLoader workers of ranks 0, 1 and 4-6 crashed (SIGSEGV)"
    assert "7 reports" in verdict.finding.summary
    assert "num_workers=0" in verdict.finding.fix
    assert "multiprocessing_context='spawn'" in verdict.finding.fix
    assert english_runs(translate(verdict.finding.summary, "zh")) == []
    assert english_runs(translate(verdict.finding.fix, "zh")) == []
    assert english_runs(translate_headline(verdict.headline, "zh")) == []
