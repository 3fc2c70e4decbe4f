"""The DDP tutorial series' epoch line (parsers/tutorial_epochs.py), verbatim from the sources
named at each."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from tests.builders import analyze, analyze_files, parsed_by

SAMPLE = Path(__file__).parents[2] / "sample_logs" / "uneven_tutorial_lines" / "logs"

# aws-samples/awsome-distributed-training, 3.test_cases/pytorch/ddp/slurm/README.md @7217859
# (a healthy two-node run's output): the global rank in the line
AWS_RANK_LINES = [
    "[RANK 3] Epoch 49 | Batchsize: 32 | Steps: 8",
    "[RANK 5] Epoch 49 | Batchsize: 32 | Steps: 8",
]
# a DDP study-notes README in the code index (file id 26137970695; the index names no
# repository), an mp.spawn run on 4 GPUs: a store warning, then every rank's epochs
MP_SPAWN_RUN = [
    "python mp.py --max_epochs=2 --batch_size=32",
    "",
    "[W socket.cpp:663] [c10d] The client socket has failed to connect to [localhost]:12345 (errno: 101 - Network is unreachable).",
    "GPU_Count: 4",
    "GPU:0 | Epoch: 0 | Batchsize: 32 | Steps: 32",
    "GPU:2 | Epoch: 0 | Batchsize: 32 | Steps: 32",
    "GPU:1 | Epoch: 0 | Batchsize: 32 | Steps: 32",
    "GPU:3 | Epoch: 0 | Batchsize: 32 | Steps: 32",
    "GPU:0 | Epoch: 1 | Batchsize: 32 | Steps: 32",
    "GPU:2 | Epoch: 1 | Batchsize: 32 | Steps: 32",
    "GPU:3 | Epoch: 1 | Batchsize: 32 | Steps: 32",
    "GPU:1 | Epoch: 1 | Batchsize: 32 | Steps: 32",
]


def test_each_line_is_an_epoch_start_and_the_rank_s_loader_length():
    rows = parsed_by("tutorial_epochs", AWS_RANK_LINES).sort("line", "event")
    assert rows.select("event", "rank", "epoch", "value").rows() == [
        ("epoch_start", 3, 49, None),
        ("loader_len", 3, 49, 8),
        ("epoch_start", 5, 49, None),
        ("loader_len", 5, 49, 8),
    ]


def test_the_tutorial_s_gpu_is_a_device_that_names_the_rank_only_on_one_node():
    rows = parsed_by("tutorial_epochs", MP_SPAWN_RUN).filter(pl.col("event") == "loader_len")
    assert rows.get_column("cuda_dev").to_list() == [0, 2, 1, 3, 0, 2, 3, 1]
    assert set(rows.get_column("rank_from").to_list()) == {"device"}


def test_a_store_warning_before_every_rank_trained_is_no_failure(tmp_path):
    analysis = analyze_files(tmp_path, {"train.log": MP_SPAWN_RUN})
    assert analysis.verdict is None
    assert sorted(analysis.job.ranks_seen) == [0, 1, 2, 3]  # one node: the device is the rank


def test_a_rank_whose_steps_are_more_has_the_uneven_loader():
    # a run here (sample_logs/uneven_tutorial_lines): Steps 6, 6 and 7, nothing else per step
    verdict = analyze(SAMPLE).verdict
    assert (verdict.finding.kind, verdict.ranks) == ("loader_size_mismatch", [2])
    assert "rank 2 has 7 batches while ranks 0 and 1 have 6" in verdict.finding.summary
