"""Ascend's HCCL failures through torch_npu (parsers/hccl.py)."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from tests.builders import analyze_files, kinds, only, parsed_by

THREADS = Path(__file__).resolve().parent.parent / "data" / "threads"

# hiyouga/LLaMA-Factory#3839, verbatim: rank 3's communicator could not start, a previous
# training process still held its NPU
STALE_PROCESS = [
    "    work = default_pg.barrier(opts=opts)",
    "RuntimeError: [ERROR] HCCL error in: torch_npu/csrc/distributed/ProcessGroupHCCL.cpp:64",
    "[ERROR] 2024-05-21-11:57:54 (PID:927000, Device:3, RankID:3) ERR02200 DIST call hccl api failed.",
    "EJ0001: 2024-05-21-11:57:54.167.645 Failed to initialize the HCCP process. Reason: Maybe the last training process is running.",
    "        Solution: Wait for 10s after killing the last training process and try again.",
]

# ascend/vllm-ascend#486, verbatim: rank 1's all_reduce waited for a peer that never sent
WAITED_FOR_A_PEER = [
    "[rank1]:     work = group.allreduce([tensor], opts)",
    "[rank1]: RuntimeError: InnerRunOpApi:torch_npu/csrc/framework/OpParamMaker.cpp:281 OPS function error: HcclAllreduce, error code is 6",
    "[rank1]: [ERROR] 2025-04-08-18:07:20 (PID:1292363, Device:1, RankID:1) ERR01100 OPS call acl api failed.",
    "[rank1]: EI0006: [PID: 1292363] 2025-04-08-18:07:20.444.436 Getting socket times out. Reason: Remote Rank did not send the data in time. Please check the reason for the rank being stuck",
]


def test_a_failed_hccl_call_is_a_collective_library_error_of_its_rank_with_its_reason(tmp_path):
    error = only(parsed_by("hccl", STALE_PROCESS).filter(event="nccl_error"))
    assert (error["rank"], error["pid"], error["device"]) == (3, 927000, "3")
    assert error["exc_message"].startswith("EJ0001: Failed to initialize the HCCP process")
    verdict = analyze_files(tmp_path, {"output.log": STALE_PROCESS}).verdict
    assert (verdict.finding.kind, verdict.ranks) == ("nccl_error", [3])
    assert verdict.headline == "HCCL failed on rank 3"
    assert "npu-smi info" in verdict.finding.fix
    # the same console under kubectl's --prefix: the pod named as the host changes nothing
    pod = [f"[pod/llama-factory-worker-0/pytorch] {line}" for line in STALE_PROCESS]
    prefixed = analyze_files(tmp_path / "pod", {"output.log": pod}).verdict
    assert (prefixed.finding.kind, prefixed.ranks) == ("nccl_error", [3])


def test_an_hccl_wait_that_timed_out_is_the_waiting_rank_s_timeout(tmp_path):
    waited = only(parsed_by("hccl", WAITED_FOR_A_PEER).filter(event="collective_timeout"))
    assert waited["rank"] == 1 and "Remote Rank did not send" in waited["exc_message"]
    verdict = analyze_files(tmp_path, {"output.log": WAITED_FOR_A_PEER}).verdict
    assert verdict.finding.kind == "collective_timeout" and verdict.ranks == []


# Ascend/pytorch#43: rank 16's barrier (inside main_process_first) gave up after 1836 s; the
# paste starts mid-traceback, every line `worker-1:` prefixed
BARRIER_TASK_TIMEOUT = (
    (THREADS / "ascend_pytorch43_barrier_task_timeout.log").read_text().splitlines()
)


def test_a_device_task_of_a_collective_that_timed_out_is_the_rank_s_timeout(tmp_path):
    waited = only(parsed_by("hccl", BARRIER_TASK_TIMEOUT).filter(event="collective_timeout"))
    assert waited["rank"] == 16 and waited["pid"] == 639
    assert waited["timeout_ms"] == 1_836_000  # `timeout:1836.`, HCCL_EXEC_TIMEOUT's seconds
    # the stamped reason, not the runtime's `EI9999: Inner Error!` header above it
    assert "hccl fftsplus task timeout occurred" in waited["exc_message"]


def test_the_exception_the_timed_out_barrier_raised_is_that_wait_not_the_rank_s_crash(tmp_path):
    analysis = analyze_files(tmp_path, {"train.log": BARRIER_TASK_TIMEOUT})
    assert analysis.verdict.finding.kind == "collective_timeout"
    assert "rank_exception" not in kinds(analysis)
    # the runtime's list of the task's stuck waits (`The 0 stuck notify wait ...`, 1 ... 6)
    # counts nothing: no progress is read from it
    assert analysis.job.events.filter(event="stage").is_empty()


# Ascend/pytorch's troubleshooting case `HCCL_timeout.md` (docs/zh), verbatim: device 0's
# AllReduce waited for a Notify until it timed out; HCCL's report names device 1 as lost
HEARTBEAT_LOST = [
    "EI0002: [PID: 7277] 2024-11-28-11:59:30.645.648 The wait execution of the Notify register times out. Reason: The Notify register has not received the Notify record from remote rank [unknown].base information: [streamID:[2282987520], taskID[5], tag[AllReduce_90.90.92.240%enp189s0f0_60000_0_1732766162316022], AlgType(level 0-1-2):[fullmesh-ring-ring].] task information: [",
    "there are(is) 1 abnormal device(s):",
    "    Cluster Exception Location[IP/ID]:[90.90.92.240/1], Arrival Time:[Thu Nov 28 11:56:34 2024], Discoverer:[90.90.92.240/0], ExceptionType:[Heartbeat Lost Occurred], Possible Reason:1. Process has exited, 2. Network Disconnected",
    "]",
]


def test_a_device_whose_heartbeat_was_lost_is_named(tmp_path):
    lost = only(parsed_by("hccl", HEARTBEAT_LOST).filter(pl.col("event") == "heartbeat_lost"))
    assert (lost["peer"], lost["device"], lost["line"]) == ("90.90.92.240/1", "1", 3)
    verdict = analyze_files(tmp_path, {"train.log": HEARTBEAT_LOST}).verdict
    assert (verdict.finding.kind, verdict.ranks) == ("peer_lost", [1])
    assert verdict.headline.startswith("Rank 1 went silent first: HCCL lost its heartbeat")


# hiyouga/LLaMA-Factory#5322, verbatim: ZeRO-3 LoRA on eight 910B2; the device of RankID 2 ran out
DEVICE_OUT_OF_MEMORY = [
    "[ERROR] 2024-08-28-16:15:00 (PID:15597, Device:2, RankID:2) ERR00100 PTA call acl api failed",
    "EL0004: 2024-08-28-16:15:00.358.141 Failed to allocate memory.",
    "        Possible Cause: Available memory is insufficient.",
    "        Solution: Close applications not in use.",
    "        TraceBack (most recent call last):",
    "        rtFftsPlusTaskLaunch execute failed, reason=[driver error:out of memory][FUNC:FuncErrorReason][FILE:error_message_manage.cc][LINE:53]",
]


def test_a_device_that_could_not_allocate_is_its_rank_s_oom(tmp_path):
    analysis = analyze_files(tmp_path, {"train.log": DEVICE_OUT_OF_MEMORY})
    assert analysis.verdict.finding.kind == "oom" and analysis.verdict.ranks == [2]
    assert analysis.verdict.headline == "Rank 2 ran out of device memory"


# discuss.mindspore.cn/t/topic/1156, verbatim: 4 x 8 NPUs under MindSpore; one rank of each
# server evaluated longer than HCCL_EXEC_TIMEOUT while the others' device waits gave up
DEVICE_WAIT_GAVE_UP = [
    "[ERROR] DEVICE(192563,ffff90722010,python):2025-03-18-20:50:24.716.326 [mindspore/ccsrc/plugin/device/ascend/hal/device/ascend_stream_manager.cc:241] SyncStream] Call runtime aclrtSynchronizeStreamWithTimeout error.",
    "EE9999: Inner Error!",
    "EE9999 The error from device(chipId:3, dieId:0), serial number is 1, event wait timeout occurred during task execution, stream_id:122, sq_id:122, task_id:790, event_id=73, timeout=1980.[FUNC:ProcessStarsWaitTimeoutErrorInfo][FILE:device_error_proc.cc][LINE:1314]",
]
PLOG_WAIT = "ProcessStarsWaitTimeoutErrorInfo:The error from device(chipId:2, dieId:0), serial number is 1, event wait timeout occurred during task execution, stream_id:122, sq_id:122, task_id:790, event_id=73, timeout=1980."


def test_a_device_wait_that_gave_up_is_that_device_s_timeout(tmp_path):
    waits = parsed_by("hccl", [*DEVICE_WAIT_GAVE_UP, PLOG_WAIT]).filter(event="collective_timeout")
    assert waits.get_column("device").to_list() == ["3", "2"]
    assert set(waits.get_column("timeout_ms")) == {1_980_000}
    verdict = analyze_files(tmp_path, {"train.log": DEVICE_WAIT_GAVE_UP}).verdict
    assert verdict.finding.kind == "collective_timeout"
    assert verdict.finding.details["timeout_ms"] == 1_980_000


def test_a_limit_no_integer_holds_in_milliseconds_is_left_unsaid():
    # the same wait with its limit replaced by a number whose milliseconds overflow 64 bits
    line = DEVICE_WAIT_GAVE_UP[2].replace("timeout=1980", "timeout=9223372036854775")
    (wait,) = parsed_by("hccl", [line]).filter(event="collective_timeout").iter_rows(named=True)
    assert wait["timeout_ms"] is None
