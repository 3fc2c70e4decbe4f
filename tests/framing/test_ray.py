"""Ray worker prefixes `(RayTrainWorker pid=…, ip=…)` and `[repeated Nx across cluster]` dedup
suffixes (Ray "Configuring Logging" docs)."""

from __future__ import annotations

from tests.framing import frame_one

# NVIDIA/nccl#1672, verbatim
DEDUPLICATED = (
    "(WorkerDict pid=3569860) degamts15:3569860:3571297 [0] NCCL INFO ncclCommInitRank comm "
    "0x7edae6dc2fd0 rank 0 nranks 8 cudaDev 0 nvmlDev 0 busId 4000 commId 0x4e52464bbe9f9659 - "
    "Init COMPLETE [repeated 8x across cluster]"
)


def test_dedup_suffix_is_counted_and_removed():
    row = frame_one(DEDUPLICATED)
    assert (row["prefix_pid"], row["prefix_repeats"]) == (3569860, 8)
    assert row["message"].endswith("commId 0x4e52464bbe9f9659 - Init COMPLETE")
    assert row["message"].startswith("degamts15:3569860:3571297 [0] NCCL INFO")


def test_train_worker_prefix_gives_pid_and_ip():
    # shape from the Ray docs / ecosystem.md, coloured as Ray prints it on a terminal
    row = frame_one(
        "\x1b[36m(RayTrainWorker pid=1193, ip=10.244.4.193)\x1b[0m [rank1]: Traceback "
        "(most recent call last):"
    )
    assert (row["prefix_pid"], row["prefix_host"], row["prefix_rank"]) == (
        1193,
        "10.244.4.193",
        1,
    )
    assert row["message"] == "Traceback (most recent call last):"
    assert "prefix_repeats" not in row
