# ruff: noqa: E501 -- test data are verbatim log lines
"""SGLang's scheduler logger: `[<time> TP3] ` before each line of a tensor-parallel worker."""

from __future__ import annotations

from datetime import datetime

from tests.builders import analyze_files, finding
from tests.framing import frame, frame_one

# sgl-project/sglang#4233, verbatim: TP3 alone failed while building its draft model
SCHEDULER_FAILED = [
    "[2025-03-09 14:40:46 TP4] Capture cuda graph end. Time elapsed: 1334.38 s",
    "[2025-03-09 14:40:46 TP3] Capture cuda graph end. Time elapsed: 1334.35 s",
    "[2025-03-09 14:40:46 TP0] Capture cuda graph end. Time elapsed: 1334.36 s",
    "[2025-03-09 14:40:47 TP4] MLA optimization is turned on. Use triton backend.",
    "[2025-03-09 14:40:47 TP4] Init torch distributed begin.",
    "[2025-03-09 14:40:47 TP3] Scheduler hit an exception: Traceback (most recent call last):",
    '  File "/usr/local/lib/python3.10/dist-packages/sglang/srt/managers/scheduler.py", line 1816, in run_scheduler_process',
    "    scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank, dp_rank)",
    '  File "/usr/local/lib/python3.10/dist-packages/sglang/srt/model_executor/model_runner.py", line 280, in init_torch_distributed',
    "    raise ValueError(",
    "ValueError: The memory capacity is unbalanced. Some GPUs may be occupied by other processes.",
]


def test_a_tensor_parallel_worker_s_prefix_gives_its_rank_and_time():
    row = frame_one(SCHEDULER_FAILED[5])
    assert row["prefix_rank"] == 3
    assert row["prefix_time"] == datetime(2025, 3, 9, 14, 40, 47)
    assert row["message"].startswith("Scheduler hit an exception: Traceback")


def test_a_prefix_with_data_and_tensor_parallel_ranks_names_no_global_rank():
    row = frame_one("[2025-03-17 17:15:55 DP1 TP3] Init torch distributed begin.")
    assert row.get("prefix_rank") is None
    assert row["message"] == "Init torch distributed begin."


# sgl-project/sglang#7707, verbatim (the start of each line): data-parallel attention, every
# process numbered alike in both dimensions
DP_ATTENTION = [
    "[2025-07-02 11:36:23 DP5 TP5] Decode batch. #running-req: 1, #token: 2765, token usage: 0.01",
    "[2025-07-02 11:36:23 DP7 TP7] Decode batch. #running-req: 1, #token: 6135, token usage: 0.02",
    "[2025-07-02 11:57:15 DP6 TP6] TpModelWorkerClient hit an exception: Traceback (most recent call last):",
]


def test_tensor_parallel_numbers_no_data_parallel_replica_shares_are_the_ranks():
    rows = frame(DP_ATTENTION, "server.log")
    assert [row.get("prefix_rank") for row in rows] == [5, 7, 6]


def test_tensor_parallel_numbers_two_replicas_share_name_no_rank():
    lines = [line.replace("DP7 TP7", "DP7 TP5") for line in DP_ATTENTION]
    assert [row.get("prefix_rank") for row in frame(lines, "server.log")] == [None] * 3


def test_the_worker_that_raised_is_blamed(tmp_path):
    analysis = analyze_files(tmp_path, {"server.log": SCHEDULER_FAILED})
    assert finding(analysis, "rank_exception").ranks == [3]


def test_only_the_traceback_a_prefixed_record_opens_takes_its_rank():
    rows = frame(
        [
            SCHEDULER_FAILED[4],  # TP4's record, no traceback
            "Killed",
            *SCHEDULER_FAILED[5:],
            "Exception in thread Thread-2:",
        ]
    )
    ranks = [row.get("prefix_rank") for row in rows]
    assert ranks == [4, None, 3, 3, 3, 3, 3, 3, None]


def test_a_kubectl_stamp_on_every_line_does_not_cut_the_traceback_from_its_rank():
    # the same lines as `kubectl logs --timestamps` prints them, the API server's stamp first
    stamped = [f"2025-03-09T14:40:47.{i:06d}Z {line}" for i, line in enumerate(SCHEDULER_FAILED)]
    ranks = [row.get("prefix_rank") for row in frame(stamped)]
    assert ranks == [4, 3, 0, 4, 4, 3, 3, 3, 3, 3, 3]


# sgl-project/sglang#9805, verbatim (the paste ends inside the traceback): pipeline, expert and
# data-parallel attention; only DP2's scheduler raised on the first request
PP_EP_DP_ATTENTION = [
    "[2025-08-29 20:35:50 DP0 TP0 EP0 PP0] Prefill batch. #new-seq: 1, #new-token: 6, #cached-token: 0, token usage: 0.00, #running-req: 0, #queue-req: 0, ",
    "[2025-08-29 20:35:50 DP3 TP3 EP3 PP0] Prefill batch. #new-seq: 1, #new-token: 6, #cached-token: 0, token usage: 0.00, #running-req: 0, #queue-req: 0, ",
    "[2025-08-29 20:35:50 DP2 TP2 EP2 PP0] Prefill batch. #new-seq: 1, #new-token: 6, #cached-token: 0, token usage: 0.00, #running-req: 0, #queue-req: 0, ",
    "[2025-08-29 20:35:50 DP1 TP1 EP1 PP0] Prefill batch. #new-seq: 1, #new-token: 6, #cached-token: 0, token usage: 0.00, #running-req: 0, #queue-req: 0, ",
    "[2025-08-29 20:35:50 DP2 TP2 EP2 PP0] Scheduler hit an exception: Traceback (most recent call last):",
    '  File "/home/ubuntu/dist/sglang/python/sglang/srt/managers/scheduler.py", line 2582, in run_scheduler_process',
    "    scheduler.event_loop_pp()",
    '  File "/home/ubuntu/dist/sglang/.venv/lib/python3.12/site-packages/torch/utils/_contextlib.py", line 120, in decorate_context',
]


def test_the_first_pipeline_stage_s_tensor_parallel_numbers_are_the_ranks():
    rows = frame(PP_EP_DP_ATTENTION[:4], "server.log")
    assert [row.get("prefix_rank") for row in rows] == [0, 3, 2, 1]


def test_a_later_pipeline_stage_names_no_rank_without_its_tensor_parallel_size():
    lines = [line.replace(" PP0]", " PP1]") for line in PP_EP_DP_ATTENTION[:4]]
    assert [row.get("prefix_rank") for row in frame(lines, "server.log")] == [None] * 4


def test_a_scheduler_s_cut_traceback_blames_its_rank(tmp_path):
    analysis = analyze_files(tmp_path, {"server.log": PP_EP_DP_ATTENTION})
    assert analysis.verdict.finding.kind == "rank_exception"
    assert analysis.verdict.ranks == [2]
