"""kubectl logs `--prefix` (format "[pod/%s/%s] ", kubernetes/kubectl:pkg/cmd/logs/logs.go),
`--timestamps` (RFC3339Nano), and CRI node log files (Grafana Promtail `cri` stage docs)."""

from __future__ import annotations

import datetime as dt

from tests.framing import frame, frame_one


def test_pod_prefix_then_timestamp_then_tee():
    row = frame_one(
        "[pod/mnist-worker-0/pytorch] 2024-05-08T08:47:31.261530427Z "
        "[default1]:rank=3 step=1 stage=before_forward"
    )
    assert row["prefix_host"] == "mnist-worker-0"
    assert row["prefix_time"] == dt.datetime(2024, 5, 8, 8, 47, 31, 261530)
    assert row["prefix_local_rank"] == 1
    assert row["message"] == "rank=3 step=1 stage=before_forward"
    assert row["framing"] == "kubectl_prefix+kubectl_timestamp+torchrun_tee"


def test_cri_line():
    row = frame_one("2019-04-30T02:12:41.8443515Z stdout F message")  # Promtail docs, verbatim
    assert (row["message"], row["prefix_stream"]) == ("message", "stdout")
    assert row["prefix_time"] == dt.datetime(2019, 4, 30, 2, 12, 41, 844351)


def test_cri_partial_lines_are_joined_on_the_first():
    rows = frame(
        [
            "2019-04-30T02:12:41.8443515Z stderr P [rank0]:[E1218 20:27:21.426415540 Process",
            "2019-04-30T02:12:41.8443515Z stderr F GroupNCCL.cpp:629] [Rank 0] Watchdog caught",
            "2019-04-30T02:12:42.0000000Z stdout F rank=0 step=1 stage=x",
        ]
    )
    assert [row["message"] for row in rows] == [
        "[E1218 20:27:21.426415540 ProcessGroupNCCL.cpp:629] [Rank 0] Watchdog caught",
        "",
        "rank=0 step=1 stage=x",
    ]
    # the prefixes inside are peeled from the whole line, not from its first piece
    assert (rows[0]["prefix_rank"], rows[0]["prefix_stream"]) == (0, "stderr")


def test_cri_stamp_is_not_read_again_as_a_kubectl_stamp():
    row = frame_one("2019-04-30T02:12:41.8443515Z stdout F 2019-04-30T02:12:41Z app says hi")
    assert row["message"] == "2019-04-30T02:12:41Z app says hi"
