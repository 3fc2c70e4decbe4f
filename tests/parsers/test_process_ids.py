from __future__ import annotations

import pytest

from tests.builders import parsed_by


@pytest.mark.parametrize(
    ("line", "rank", "pid"),
    [
        # sample_logs/pyspy_hang (dumps_train.py's print after init_process_group), a run here
        ("2026-12-01 17:30:57,451 INFO rank=0 pid=18455 host=vm", 0, 18455),
        # the same run: a DataLoader worker names its rank
        ("rank=0 dataloader_worker=0 pid=18769", 0, 18769),
        ("[rank 3] pid: 4242", 3, 4242),
        ("RANK=1 PID=777 LOCAL_RANK=1", 1, 777),
    ],
)
def test_a_rank_and_its_process_id(line, rank, pid):
    (row,) = parsed_by("process_ids", [line]).select("rank", "pid").rows()
    assert row == (rank, pid)


@pytest.mark.parametrize(
    "line",
    [
        "local_rank=0 pid=18455",  # a local rank is no global rank
        # sample_logs/pyspy_hang/logs/ps_tree.txt: a command line's flag, and no pid key
        "18455 18370 Ssl       13  |   \\_ /work/torchvenv/bin/python3 -u ../dumps_train.py --timeout 120 --bad-rank 2",
        "rank=2 ppid=18370",
    ],
)
def test_other_numbers_are_not_read_as_a_process_id(line):
    assert parsed_by("process_ids", [line]).is_empty()


def test_ray_trains_roster_names_each_workers_rank_pid_and_address():
    # ROCm/rocm-blogs rocm7-ray README (tests/data/threads/rocm7_ray_train_four_workers.log)
    line = (
        "(TrainController pid=86367) - (ip=10.7.37.122, pid=86715) world_rank=1, local_rank=1,"
        " node_rank=0"
    )
    (row,) = parsed_by("process_ids", [line]).select("rank", "pid", "host").rows()
    assert row == (1, 86715, "10.7.37.122")
