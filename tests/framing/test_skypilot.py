# ruff: noqa: E501 -- test data are verbatim log lines
"""SkyPilot's node prefixes on a multi-node task's output: `(head, rank=0, pid=…)` and
`(worker1, rank=1, pid=…, ip=…)`. The rank there is the node's, never a process's."""

from __future__ import annotations

import pytest

from tests.builders import analyze_files
from tests.framing import frame_one


@pytest.mark.parametrize(
    ("line", "node", "index", "host", "message"),
    [
        # skypilot-org/skypilot#4448, verbatim
        (
            "(head, rank=0, pid=5634) [nccl-e9ef-7d4f-0:3]:nccl-e9ef-7d4f-0:11172:11249 [3] NCCL INFO transport/net.cc:687 -> 2",
            "skypilot head",
            0,
            None,
            "[nccl-e9ef-7d4f-0:3]:nccl-e9ef-7d4f-0:11172:11249 [3] NCCL INFO transport/net.cc:687 -> 2",
        ),
        (
            "(worker1, rank=1, pid=4888, ip=10.60.0.4)   rank      : 7 (local_rank: 3)",
            "skypilot worker1",
            1,
            "10.60.0.4",
            "  rank      : 7 (local_rank: 3)",
        ),
    ],
)
def test_the_prefix_names_a_node_not_a_rank(line, node, index, host, message):
    row = frame_one(line)
    assert (row["prefix_node"], row["prefix_node_index"]) == (node, index)
    assert row.get("prefix_host") == host and "prefix_rank" not in row
    assert row["message"] == message


def test_a_worker_node_s_failure_keeps_the_global_rank_torchrun_gave_it(tmp_path):
    # skypilot-org/skypilot#4448, verbatim: worker1 is node rank 1; its failed process is rank 7
    lines = [
        "(worker1, rank=1, pid=4888, ip=10.60.0.4) Root Cause (first observed failure):",
        "(worker1, rank=1, pid=4888, ip=10.60.0.4) [0]:",
        "(worker1, rank=1, pid=4888, ip=10.60.0.4)   time      : 2024-12-08_04:56:37",
        "(worker1, rank=1, pid=4888, ip=10.60.0.4)   host      : nccl-e9ef-7d4f-1.internal.cloudapp.net",
        "(worker1, rank=1, pid=4888, ip=10.60.0.4)   rank      : 7 (local_rank: 3)",
        "(worker1, rank=1, pid=4888, ip=10.60.0.4)   exitcode  : 1 (pid: 10479)",
    ]
    analysis = analyze_files(tmp_path, {"sky_launch_console.log": lines})
    assert analysis.job.ranks_seen == (7,)
