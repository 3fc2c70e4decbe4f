# ruff: noqa: E501 -- test data are verbatim log lines
from __future__ import annotations

from tests.builders import analyze_files, finding, kinds

# hiyouga/LlamaFactory#6000 and the gloo wording on the other ranks (formats.md §7)
REPORT = (
    "[rank0]: RuntimeError: [Rank 0]: Ranks 6 failed to pass monitoredBarrier in 180000000000 ms"
)
PEER = (
    "[rank3]: RuntimeError: Rank 3 successfully reached monitoredBarrier, but received errors "
    "while waiting for send/recv from rank 0. Please check rank 0 logs for faulty rank."
)


def test_rank_zero_names_the_laggard(tmp_path):
    analysis = analyze_files(tmp_path, {"train.log": [PEER, REPORT]})
    barrier = finding(analysis, "monitored_barrier")
    assert barrier.ranks == [6] and barrier.role == "root_cause"
    assert barrier.details["ranks_that_arrived"] == [3]
    assert analysis.verdict.finding is barrier


def test_several_laggards(tmp_path):
    line = "RuntimeError: [Rank 0]: Ranks 1, 2 failed to pass monitoredBarrier in 120000 ms"
    assert finding(analyze_files(tmp_path, {"a.log": [line]}), "monitored_barrier").ranks == [1, 2]


# pytorch/pytorch#76198, verbatim (rank 1's log only): a Kubernetes pod died; gloo's fixed text
# on a rank whose exchange with the coordinator failed names rank 0 whether or not it failed
WAITING_ONLY = [
    "[E ProcessGroupGloo.cpp:136] Rank 1 successfully reached monitoredBarrier, but received "
    "errors while waiting for send/recv from rank 0. Please check rank 0 logs for faulty rank.",
    "RuntimeError: Rank 1 successfully reached monitoredBarrier, but received errors while "
    "waiting for send/recv from rank 0. Please check rank 0 logs for faulty rank.",
    " Original exception:",
]


def test_without_the_coordinators_log_nobody_is_blamed(tmp_path):
    analysis = analyze_files(tmp_path, {"rank1.log": WAITING_ONLY})
    barrier = finding(analysis, "monitored_barrier")
    assert barrier.blamed == [] and barrier.confidence == "low"
    assert analysis.verdict.headline == (
        "Rank 1 got errors from the monitored barrier's coordinator (rank 0); the logs do not "
        "say which rank failed"
    )


# QwenAudio/CosyVoice#1727, verbatim (rank 1's output only): the original exception is gloo's
# send to the coordinator that timed out
SEND_TIMED_OUT = [
    "[rank1]:[E ProcessGroupGloo.cpp:144] Rank 1 successfully reached monitoredBarrier, but received errors while waiting for send/recv from rank 0. Please check rank 0 logs for faulty rank.",
    "2025-12-19 09:03:13,924 WARNING Rank 1 model.join() exit failed, some ranks may have exited early: Rank 1 successfully reached monitoredBarrier, but received errors while waiting for send/recv from rank 0. Please check rank 0 logs for faulty rank.",
    " Original exception:",
    "[../third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:133] Timed out waiting 1800000ms for send operation to complete",
]


def test_a_send_to_the_coordinator_that_timed_out_means_it_never_entered(tmp_path):
    # gloo holds a send until the receiver posts its receive: the coordinator never did
    analysis = analyze_files(tmp_path, {"train.log": SEND_TIMED_OUT})
    barrier = analysis.verdict.finding
    assert (barrier.kind, barrier.blamed, barrier.confidence) == (
        "monitored_barrier",
        [0],
        "medium",
    )
    assert "never entered the barrier" in barrier.summary
    # without the original exception the coordinator may have stopped over another rank
    cut = analyze_files(tmp_path / "cut", {"train.log": SEND_TIMED_OUT[:3]})
    assert finding(cut, "monitored_barrier").blamed == []


def test_the_coordinators_own_silent_log_makes_it_the_one(tmp_path):
    files = {"rank1.log": WAITING_ONLY, "rank0.log": ["rank=0 step=4 stage=before_forward"]}
    barrier = finding(analyze_files(tmp_path, files), "monitored_barrier")
    assert barrier.blamed == [0] and barrier.confidence == "high"


def test_a_store_wait_for_a_later_group_is_no_start_up_failure(tmp_path):
    # huggingface/trl#2923: rank 0 alone creates process group 7 (its store wait times out)
    # while ranks 2 and 3 are already at a monitored barrier, waiting for it
    lines = [
        '[rank0]:   File "/opt/conda/lib/python3.11/site-packages/torch/distributed/distributed_c10d.py", line 4255, in _create_process_group_wrapper',
        "[rank0]:     helper_pg = ProcessGroupGloo(store, rank, world_size, timeout=timeout)",
        "[rank0]:                 ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
        "[rank0]: torch.distributed.DistStoreError: wait timeout after 600000ms, keys: //worker/attempt_0/default_pg/0//7//cuda//pg_wrapper:7/0/1",
        "[rank3]:[E221 08:45:07.886838878 ProcessGroupGloo.cpp:143] Rank 3 successfully reached monitoredBarrier, but received errors while waiting for send/recv from rank 0. Please check rank 0 logs for faulty rank.",
        "[rank2]:[E221 08:45:07.887390966 ProcessGroupGloo.cpp:143] Rank 2 successfully reached monitoredBarrier, but received errors while waiting for send/recv from rank 0. Please check rank 0 logs for faulty rank.",
    ]
    analysis = analyze_files(tmp_path, {"output.log": lines})
    assert (analysis.verdict.finding.kind, analysis.verdict.ranks) == ("monitored_barrier", [0])
    assert "missing_rank" not in kinds(analysis)


# HorizonRobotics/RoboOrchardLab#33, verbatim (the reporter's excerpt, its `...` elisions
# kept): rank 1's wait for the coordinator, torchrun's summary, and rank 1's NCCL teardown,
# whose communicator of 2 is the world
TWO_RANK_WORLD = [
    "RuntimeError: Rank 1 successfully reached monitoredBarrier, but received errors while waiting for send/recv from rank 0. Please check rank 0 logs for faulty rank.",
    "...",
    "Original exception:",
    "[/pytorch/third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:129]",
    "Timed out waiting 600000ms for send operation to complete",
    "...",
    "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:",
    "============================================================",
    "train.py FAILED",
    "------------------------------------------------------------",
    "Root Cause (first observed failure):",
    "rank : 1 (local_rank: 1)",
    "exitcode : 1",
    "============================================================",
    "NCCL INFO misc/socket.cc:863 -> 3",
    "NCCL INFO comm 0x3d5abb40 rank 1 nranks 2 cudaDev 1 busId 99000 - Abort COMPLETE",
]


def test_the_coordinator_of_a_world_whose_other_ranks_all_arrived_never_did(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": TWO_RANK_WORLD})
    assert analysis.job.world_size.value == 2
    barrier = finding(analysis, "monitored_barrier")
    assert barrier.ranks == [0] and barrier.blamed == [0]
    assert "every other rank of the 2 had arrived" in barrier.summary
    assert analysis.verdict.ranks == [0]


def test_without_the_world_size_the_coordinator_is_not_blamed(tmp_path):
    # (nor without the original exception: its send that timed out is proof of its own)
    lines = [
        line
        for line in TWO_RANK_WORLD
        if "nranks 2" not in line and "for send operation" not in line
    ]
    barrier = finding(analyze_files(tmp_path, {"console.log": lines}), "monitored_barrier")
    assert barrier.blamed == []
    sent = [line for line in TWO_RANK_WORLD if "nranks 2" not in line]
    barrier = finding(analyze_files(tmp_path / "sent", {"console.log": sent}), "monitored_barrier")
    assert barrier.blamed == [0] and "never entered the barrier" in barrier.summary
