"""Determined AI's trial log (`det trial logs`, the web UI): time, container id, the worker's
rank, `||`, then what the worker wrote (determined-ai/determined#8915)."""

from __future__ import annotations

import datetime as dt

from tests.framing import frame

# determined-ai/determined#8915, verbatim
TRIAL_LOG = [
    "[2024-02-27T21:35:28.705869Z] fa88a9df [rank=1] || [E ProcessGroupNCCL.cpp:828] [Rank 1] "
    "Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=ALLGATHER, "
    "Timeout(ms)=1800000) ran for 1800163 milliseconds before timing out.",
    "[2024-02-27T21:35:28.726901Z] fa88a9df [rank=2] || Traceback (most recent call last):",
    "[2024-02-27T21:35:35.628581Z]          || ERROR: Trial 139 (Experiment 138) was terminated: "
    "allocation failed: resources failed with non-zero exit code: container failed with "
    "non-zero exit code: 1",
]


def test_the_workers_rank_and_the_time_are_read_and_the_frame_peeled():
    timeout, traceback, master = frame(TRIAL_LOG)
    assert timeout["prefix_rank"] == 1
    assert timeout["message"].startswith("[E ProcessGroupNCCL.cpp:828] [Rank 1] Watchdog")
    assert timeout["prefix_time"] == dt.datetime(2024, 2, 27, 21, 35, 28, 705869)
    assert (traceback["prefix_rank"], traceback["message"]) == (
        2,
        "Traceback (most recent call last):",
    )
    # the master's own line names no worker: no rank, but the frame is gone
    assert master.get("prefix_rank") is None
    assert master["message"].startswith("ERROR: Trial 139 (Experiment 138) was terminated")


# horovod/horovod#2015, verbatim: an older release puts the container's state before `||`; the
# worker's lines are horovodrun's, stamped and tagged with the rank (`...2020[1]<stderr>:`)
STATE_AND_HOROVODRUN = [
    "[2020-06-09T20:10:40Z] cf108822 [RUNNING] ||  Tue Jun  9 20:10:40 2020[1]<stderr>:terminate "
    "called after throwing an instance of 'gloo::IoException'",
]


def test_the_containers_state_is_peeled_and_horovodruns_tag_read_after_it():
    (line,) = frame(STATE_AND_HOROVODRUN)
    assert line["prefix_rank"] == 1
    assert line["message"] == "terminate called after throwing an instance of 'gloo::IoException'"
