"""Ray worker prefixes `(RayTrainWorker pid=…, ip=…)` and `[repeated Nx across cluster]` dedup
suffixes (Ray "Configuring Logging" docs)."""

from __future__ import annotations

from tests.framing import frame, frame_one

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


# OpenRLHF/OpenRLHF#1193, verbatim: a vLLM engine process inside a Ray actor logs a caught
# exception; vLLM's logger repeats the record's header on each of the traceback's lines
VLLM_IN_RAY = [
    "(LLMRayActor pid=585804) (EngineCore_DP0 pid=586112) ERROR 03-05 00:25:45 [core.py:1094] "
    "Invocation of collective_rpc method failed",
    "(LLMRayActor pid=585804) (EngineCore_DP0 pid=586112) ERROR 03-05 00:25:45 [core.py:1094] "
    "Traceback (most recent call last):",
    "(LLMRayActor pid=585804) (EngineCore_DP0 pid=586112) ERROR 03-05 00:25:45 [core.py:1094]   "
    'File "/home/jianh/.local/lib/python3.12/site-packages/vllm/v1/engine/core.py", line 1091, '
    "in _handle_client_request",
]


def test_the_innermost_of_nested_worker_labels_names_the_writer():
    rows = frame(VLLM_IN_RAY)
    assert {row["prefix_pid"] for row in rows} == {586112}


def test_a_pipeline_stage_alone_numbers_its_worker_s_rank():
    # vllm-project/vllm#27067, verbatim: pipeline_parallel_size=4, tensor_parallel_size=1; the
    # last stage's worker fails while the engine is built
    line = "(EngineCore_DP0 pid=200073) (Worker_PP3 pid=200085) ERROR 10-17 02:19:27 [multiproc_executor.py:654] WorkerProc hit an exception."
    (row,) = frame([line])
    assert row["prefix_rank"] == 3 and row["prefix_pid"] == 200085


def test_a_logger_header_repeated_on_a_records_lines_is_peeled_from_the_repeats_only():
    first, header, frame_line = (row["message"] for row in frame(VLLM_IN_RAY))
    # the record's own line keeps its level: it is an error the log reports
    assert first == "ERROR 03-05 00:25:45 [core.py:1094] Invocation of collective_rpc method failed"
    assert header == "Traceback (most recent call last):"
    assert frame_line.startswith('  File "/home/jianh/')


def test_two_records_with_different_headers_are_left_whole():
    lines = [
        "INFO 03-05 00:25:40 [core.py:90] Starting engine",
        "ERROR 03-05 00:25:45 [core.py:1094] Invocation of collective_rpc method failed",
    ]
    assert [row["message"] for row in frame(lines)] == lines
