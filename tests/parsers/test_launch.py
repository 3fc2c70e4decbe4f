from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.builders import analyze_files, only, parsed_by


@pytest.mark.parametrize(
    "line",
    [
        # sample_logs/two_node_slurm/logs/slurm-4242.out:1 (set -x in a batch script)
        "+ srun --label --ntasks-per-node=1 torchrun --nnodes=2 --nproc_per_node=2 --master_addr=127.0.0.1 --master_port=29741 ../ddp_train.py --timeout 20",
        "torchrun --standalone --nproc_per_node=4 train.py",
        "/usr/bin/mpirun -np 8 -H node1:4,node2:4 python train.py",
        "python -m torch.distributed.run --nproc_per_node 2 x.py",
        "deepspeed --num_gpus 8 train.py --deepspeed ds.json",
        # kyegomez/Andromeda FailureAnalysis/CPU_MEMORY.md at 50a1f73: typed at a shell prompt
        "commune@r1n2a6000bittensor:~/Andromeda$ accelerate launch train.py",
    ],
)
def test_launch_commands(line):
    rows = parsed_by("launch", [line])
    assert rows.get_column("event").to_list() == ["launch_command"]


@pytest.mark.parametrize(
    "line",
    [
        # Kay1794/Aware-of-the-history#2 and horovod/horovod#642, verbatim: Open MPI's own
        # reports start with the launcher's name and are not the command that started the job
        "mpirun noticed that process rank 1 with PID xxxxxx on node xxxxxxxx exited on signal 9 (Killed).",
        "mpirun.real detected that one or more processes exited with non-zero status, thus causing",
    ],
)
def test_a_launchers_own_sentence_is_no_command(line):
    assert parsed_by("launch", [line]).is_empty()


@pytest.mark.parametrize(
    ("line", "name", "value"),
    [
        ("export NCCL_DEBUG=INFO", "NCCL_DEBUG", "INFO"),
        (
            "TORCH_DISTRIBUTED_DEBUG=DETAIL torchrun --nproc_per_node=4 train.py",
            "TORCH_DISTRIBUTED_DEBUG",
            "DETAIL",
        ),
        # sample_logs/detail_mismatch: torch's own banner
        (
            "[I1130 15:14:56.062390281 debug.cpp:48] [c10d] The debug level is set to DETAIL.",
            "TORCH_DISTRIBUTED_DEBUG",
            "DETAIL",
        ),
    ],
)
def test_debug_settings(line, name, value):
    row = parsed_by("launch", [line]).row(0, named=True)
    assert row["names"] == [name]
    assert json.loads(row["extra"])["value"] == value


@pytest.mark.parametrize(
    "line",
    [
        # advice inside an error message is not a setting (field sample fairseq-1700 / horovod-3929)
        ".DistBackendError: NCCL error in: /opt/pytorch/pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1727, invalid usage (run with NCCL_DEBUG=WARN for details), NCCL version 2.19.3",
        "In addition, you can set the environment variable TORCH_DISTRIBUTED_DEBUG to either INFO or DETAIL",
        "the srun step finished",
    ],
)
def test_not_settings_or_commands(line):
    assert parsed_by("launch", [line]).is_empty()


def test_a_torch_launch_command_states_its_world_size(tmp_path):
    # cfzd/Ultra-Fast-Lane-Detection#193: `--nproc_per_node=2` on one node (no --nnodes)
    path = Path(__file__).resolve().parents[1] / "data" / "threads"
    lines = (path / "ufld193_launch_nproc2_one_gpu.log").read_text().splitlines()
    command = only(parsed_by("launch", lines).filter(event="launch_command"))
    assert command["world_size"] == 2
    analysis = analyze_files(tmp_path, {"train.log": lines})
    assert (analysis.job.world_size.value, analysis.job.world_size.source) == (2, "launch")


@pytest.mark.parametrize(
    ("command", "world"),
    [
        ("+ srun --label --ntasks-per-node=1 torchrun --nnodes=2 --nproc_per_node=2 train.py", 4),
        ("torchrun --nnodes=1:4 --nproc_per_node=8 train.py", None),  # elastic: no one number
        ("torchrun --nproc_per_node=gpu train.py", None),
        ("mpirun -np 4 python train.py", None),
    ],
)
def test_only_a_torch_launcher_s_plain_numbers_state_a_world(command, world):
    found = only(parsed_by("launch", [command]).filter(event="launch_command"))
    assert found["world_size"] == world


def test_a_command_a_multi_node_launcher_wraps_states_no_world_without_nnodes():
    # srun may hand torchrun its node count through the environment (PET_NNODES)
    command = "srun --nodes=4 torchrun --nproc_per_node=4 train.py"
    found = only(parsed_by("launch", [command]).filter(event="launch_command"))
    assert found["world_size"] is None
