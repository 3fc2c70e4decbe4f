"""pdsh `host: ` (pdsh(1): "-N Disable hostname: prefix"), DeepSpeed's multi-node runner."""

from __future__ import annotations

from tests.framing import frame, frame_one

# qlorapipe-19-pdsh-eval-save-timeout: deepspeed_pdsh.log (tdrussell/qlora-pipe#19), verbatim
QLORA_PIPE = [
    "node04: [2024-07-12 19:13:00.439] [INFO] [qlora-pipe] step:  1400 /  2112 loss: 0.8146 iter time (s): 1.010 samples/sec: 0.990 eta: 11m53s ",  # noqa: E501
    "node04: Running eval",
    "node04: before GAS splitting, batch size: 1, total tokens: 1024",
    "node04: before GAS splitting, batch size: 1, total tokens: 1024",
    "node04: before GAS splitting, batch size: 1, total tokens: 1024",
    "node04: before GAS splitting, batch size: 1, total tokens: 1024",
    "node04: [E ProcessGroupNCCL.cpp:474] [Rank 7] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5727, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for 1800240 milliseconds before timing out.",  # noqa: E501
]


def test_every_qlora_pipe_line_is_from_node04():
    rows = frame(QLORA_PIPE, "deepspeed_pdsh.log")
    assert {row["prefix_host"] for row in rows} == {"node04"}
    assert rows[1]["message"] == "Running eval"
    assert rows[6]["message"].startswith("[E ProcessGroupNCCL.cpp:474] [Rank 7] Watchdog caught")
    # pdsh names a host, never a rank: `[Rank 7]` is the message's business
    assert all("prefix_rank" not in row for row in rows)


def test_host_with_dashes_before_an_exception_line():
    # NVIDIA/nccl#1029, verbatim
    row = frame_one(
        "rdma-test-gpu-worker-1: torch.distributed.DistBackendError: NCCL error in: "
        "/opt/pytorch/pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1197, unhandled "
        "cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.18.3"
    )
    assert row["prefix_host"] == "rdma-test-gpu-worker-1"
    assert row["message"].startswith("torch.distributed.DistBackendError: NCCL error in:")


def test_exception_names_and_levels_are_not_hosts():
    lines = [
        "RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:78] Timed out waiting 20000ms for recv operation to complete",  # noqa: E501
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
        "INFO: something",
    ]
    assert all("prefix_host" not in row for row in frame(lines))


def test_a_prefix_on_few_lines_of_a_file_is_not_pdsh():
    lines = [
        "2026-11-30 10:00:00,000 INFO start",
        "step1: warmup done",
        "2026-11-30 10:00:01,000 INFO rank=0 step=0 stage=before_forward",
        "2026-11-30 10:00:02,000 INFO rank=0 step=0 stage=after_step",
    ]
    assert frame(lines)[1]["message"] == "step1: warmup done"
