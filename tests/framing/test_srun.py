"""SLURM `srun --label`: `<task id>: ` (srun(1)); the task id is a global rank unless the task
runs a torchrun agent, then it names a node."""

from __future__ import annotations

import pytest

from tests.framing import frame, frame_one

# weathergen-360-srun-label-timeout: slurm-job.out (ecmwf/WeatherGenerator#360), verbatim
WEATHERGEN = [
    "11: [rank11]:[E617 15:17:35.519071987 ProcessGroupNCCL.cpp:681] [Rank 11] Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.",  # noqa: E501
    "11: [rank11]:[E617 15:17:35.519087787 ProcessGroupNCCL.cpp:695] [Rank 11] To avoid data inconsistency, we are taking the entire process down.",  # noqa: E501
    "11: [rank11]:[E617 15:17:35.520063769 ProcessGroupNCCL.cpp:1895] [PG ID 0 PG GUID 0(default_pg) Rank 11] Process group watchdog thread terminated with exception: [Rank 11] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=52, OpType=ALLREDUCE, NumelIn=11, NumelOut=11, Timeout(ms)=240000) ran for 240077 milliseconds before timing out.",  # noqa: E501
    "11: Exception raised from checkTimeout at /pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:632 (most recent call first):",  # noqa: E501
    "11: frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x96 (0x7fff3fe361b6 in /work/ab0995/a270225/WeatherGenerator2/.venv/lib/python3.12/site-packages/torch/lib/libc10.so)",  # noqa: E501
    "11: frame #1: c10d::ProcessGroupNCCL::WorkNCCL::checkTimeout(std::optional<std::chrono::duration<long, std::ratio<1l, 1000l> > >) + 0x2b4 (0x7fff4117fc74 in /work/ab0995/a270225/WeatherGenerator2/.venv/lib/python3.12/site-packages/torch/lib/libtorch_cuda.so)",  # noqa: E501
]

# sample_logs/two_node_slurm/logs/slurm-4242.out (a real 2-node-style run; see its README)
TWO_NODES = [
    "+ srun --label --ntasks-per-node=1 torchrun --nnodes=2 --nproc_per_node=2 --master_addr=127.0.0.1 --master_port=29741 ../ddp_train.py --timeout 20 --bad-rank 3 --bad-step 5 --skip-mode continue --log-format ts",  # noqa: E501
    "0: W1130 15:23:58.991000 5105 torch/distributed/run.py:874] *****************************************",  # noqa: E501
    "1: [default1]:2026-11-30 15:24:00,909 INFO {'rank': 3, 'local_rank': 1, 'device': 1, 'world_size': 4}",  # noqa: E501
    "1: [default0]:[rank2]: Traceback (most recent call last):",
    "0: [default0]:2026-11-30 15:24:03,401 INFO loader sizes: [12, 12, 12, 12]",
    "1:   rank      : 3 (local_rank: 1)",
]


def test_weathergen_lines_are_rank_11_with_or_without_the_torch_prefix():
    rows = frame(WEATHERGEN, "slurm-job.out")
    assert [row["prefix_rank"] for row in rows] == [11] * len(WEATHERGEN)
    assert rows[0]["message"].startswith("[E617 15:17:35.519071987 ProcessGroupNCCL.cpp:681]")
    assert rows[3]["message"] == (
        "Exception raised from checkTimeout at "
        "/pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:632 (most recent call first):"
    )
    assert rows[2]["framing"] == "srun+torch_rank" and rows[4]["framing"] == "srun"


def test_a_task_that_runs_torchrun_names_a_node_not_a_rank():
    rows = frame(TWO_NODES, "slurm-4242.out")
    launch, agent, device_map, traceback, loader, summary = rows
    assert "prefix_rank" not in launch and launch["message"] == TWO_NODES[0]
    assert agent["prefix_node"] == "srun task 0" and "prefix_rank" not in agent
    assert agent["message"].startswith("W1130 15:23:58.991000 5105 torch/distributed/run.py:874]")
    assert (device_map["prefix_node_index"], device_map["prefix_local_rank"]) == (1, 1)
    assert "prefix_rank" not in device_map
    assert (traceback["prefix_rank"], traceback["prefix_local_rank"]) == (2, 0)
    assert traceback["message"] == "Traceback (most recent call last):"
    assert loader["message"] == "2026-11-30 15:24:03,401 INFO loader sizes: [12, 12, 12, 12]"
    assert summary["message"] == "  rank      : 3 (local_rank: 1)"
    assert summary["prefix_node"] == "srun task 1"


def test_a_task_whose_lines_hold_torchruns_own_records_is_a_node_without_worker_tags():
    # the same job's agent line and failure summary, the workers' lines untagged (no --tee):
    # torchrun speaking under task 0 makes the tasks nodes, and the summary's rank 3 is not task 1
    rows = frame([TWO_NODES[1], TWO_NODES[5]], "slurm-4242.out")
    assert [row.get("prefix_rank") for row in rows] == [None, None]
    assert [row["prefix_node"] for row in rows] == ["srun task 0", "srun task 1"]


@pytest.mark.parametrize(
    ("text", "rank", "message"),
    [
        # space-padded to the widest task id (format "%*d: ", Slurm 22.05)
        (" 3: rank=3 step=1 stage=before_forward", 3, "rank=3 step=1 stage=before_forward"),
        # zero-padded (older write_labelled_message.c, "%0*d: ")
        ("03: rank=3 step=1 stage=before_forward", 3, "rank=3 step=1 stage=before_forward"),
        ("12: rank=12 step=1 stage=x", 12, "rank=12 step=1 stage=x"),
    ],
)
def test_padded_task_ids(text, rank, message):
    row = frame_one(text)
    assert (row["prefix_rank"], row["message"]) == (rank, message)


def test_heterogeneous_job_task_ids_are_not_ranks():
    row = frame_one("P1 3: rank=7 step=1 stage=x")  # format "P%u %*d: "
    assert row["message"] == "rank=7 step=1 stage=x"
    assert "prefix_rank" not in row and row["prefix_node"] == "srun P1 task 3"


def test_a_few_numbered_lines_in_a_plain_log_are_not_srun_labels():
    lines = [
        "2026-11-30 10:00:00,000 INFO training starts",
        "Top losses:",
        "1: 0.93",
        "2026-11-30 10:00:01,000 INFO rank=0 step=0 stage=before_forward",
        "2026-11-30 10:00:02,000 INFO rank=0 step=0 stage=after_step",
    ]
    rows = frame(lines)
    assert rows[2]["message"] == "1: 0.93" and "prefix_rank" not in rows[2]
