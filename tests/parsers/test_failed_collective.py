"""The Flight Recorder's Python stack of a failed collective (parsers/failed_collective.py)."""

from __future__ import annotations

from tests.builders import analyze_files, kinds, only, parsed_by

# pytorch/torchtitan#3338, verbatim (the paste keeps frames #3-#13 of one rank's stack; another
# rank's download of a data shard had timed out)
FRAMES = [
    "#3 __call__ from /home/zeus/miniconda3/envs/cloudspace/lib/python3.12/site-packages/torch/_ops.py:1275",
    "#4 all_reduce from /home/zeus/miniconda3/envs/cloudspace/lib/python3.12/site-packages/torch/distributed/_functional_collectives.py:179",
    "#5 _dist_reduce from /teamspace/studios/this_studio/torchtitan/torchtitan/distributed/utils.py:72",
    "#6 dist_sum from /teamspace/studios/this_studio/torchtitan/torchtitan/distributed/utils.py:91",
    "#7 train_step from /teamspace/studios/this_studio/torchtitan/torchtitan/trainer.py:720",
    "#8 train from /teamspace/studios/this_studio/torchtitan/torchtitan/trainer.py:831",
    "#12 _run_code from <frozen runpy>:88",
]
PROGRESS = "[titan] 2026-05-13 00:52:16,792 - root - INFO - step: 2690  loss:  3.76196  grad_norm:  0.2823  memory: 59.24GiB(74.81%)  tps: 2,059  tflops: 119.27  mfu: 12.06%"


def test_a_stack_of_frames_through_a_collective_is_that_collective_failing():
    failed = only(parsed_by("failed_collective", FRAMES).filter(event="collective_timeout"))
    assert (failed["line"], failed["end_line"], failed["op"]) == (2, 7, "all_reduce")
    assert failed["frame"].endswith("torchtitan/distributed/utils.py:72 in _dist_reduce")


def test_the_verdict_names_the_collective_where_nothing_else_failed(tmp_path):
    verdict = analyze_files(tmp_path, {"console.log": [PROGRESS, *FRAMES]}).verdict
    assert verdict.finding.kind == "collective_timeout"
    assert "all_reduce" in verdict.headline


def test_frames_through_no_collective_are_no_failure(tmp_path):
    # the same shape of stack, in the data loader: printed for a reason the frames do not say
    frames = [
        "#0 read from /usr/lib/python3.12/socket.py:720",
        "#1 _next_data from /opt/venv/lib/python3.12/site-packages/torch/utils/data/dataloader.py:757",
    ]
    assert parsed_by("failed_collective", frames).filter(event="collective_timeout").is_empty()
    assert analyze_files(tmp_path, {"console.log": [PROGRESS, *frames]}).verdict is None


# bobrenjc93/inference-bench's committed run summary (a TP=4 server hung in its warm-up), verbatim
# but for the frames below #4 of each stack: the watchdog's header is the rank's record, its
# frames come unprefixed below it
TP4_RANK3 = [
    "[rank3]:[E725 02:39:41.244128842 ProcessGroupNCCL.cpp:733] Stack trace of the failed collective: ",
    "#0 all_reduce from /workspace/submit-008082cf/builds/v3/torchinferno/venv/lib/python3.13/site-packages/torch/distributed/distributed_c10d.py:3068",
    "#1 wrapper from /workspace/submit-008082cf/builds/v3/torchinferno/venv/lib/python3.13/site-packages/torch/distributed/c10d_logger.py:83",
    "#2 _all_reduce from /workspace/submit-008082cf/builds/v3/torchinferno/src/torchinferno/models/llama3/tensor_parallel.py:10212",
    "#3 _decode_linear_all_reduce from /workspace/submit-008082cf/builds/v3/torchinferno/src/torchinferno/models/llama3/tensor_parallel.py:3399",
    "#4 <lambda> from /workspace/submit-008082cf/builds/v3/torchinferno/src/torchinferno/models/llama3/tensor_parallel.py:3176",
]
TP4_RANK2 = [
    "[rank2]:[E725 02:39:41.250064633 ProcessGroupNCCL.cpp:733] Stack trace of the failed collective: ",
    "#0 all_reduce from /workspace/submit-008082cf/builds/v3/torchinferno/venv/lib/python3.13/site-packages/torch/distributed/distributed_c10d.py:3068",
    "#1 wrapper from /workspace/submit-008082cf/builds/v3/torchinferno/venv/lib/python3.13/site-packages/torch/distributed/c10d_logger.py:83",
    "#2 _capture_succeeded_on_all_ranks from /workspace/submit-008082cf/builds/v3/torchinferno/src/torchinferno/models/llama3/tensor_parallel.py:246",
    "#3 try_prefill_token_bucket_fa3_graph from /workspace/submit-008082cf/builds/v3/torchinferno/src/torchinferno/models/llama3/tensor_parallel.py:7871",
    "#4 decorate_context from /workspace/submit-008082cf/builds/v3/torchinferno/venv/lib/python3.13/site-packages/torch/utils/_contextlib.py:124",
]
TP4_RANK1 = [
    "[rank1]:[E725 02:39:41.276054820 ProcessGroupNCCL.cpp:733] Stack trace of the failed collective: ",
    "#0 all_reduce from /workspace/submit-008082cf/builds/v3/torchinferno/venv/lib/python3.13/site-packages/torch/distributed/distributed_c10d.py:3068",
    "#1 wrapper from /workspace/submit-008082cf/builds/v3/torchinferno/venv/lib/python3.13/site-packages/torch/distributed/c10d_logger.py:83",
    "#2 _capture_succeeded_on_all_ranks from /workspace/submit-008082cf/builds/v3/torchinferno/src/torchinferno/models/llama3/tensor_parallel.py:246",
    "#3 try_prefill_token_bucket_fa3_graph from /workspace/submit-008082cf/builds/v3/torchinferno/src/torchinferno/models/llama3/tensor_parallel.py:7871",
    "#4 decorate_context from /workspace/submit-008082cf/builds/v3/torchinferno/venv/lib/python3.13/site-packages/torch/utils/_contextlib.py:124",
]


def test_a_stack_below_a_ranks_header_is_that_ranks_and_the_next_header_ends_it():
    failed = parsed_by("failed_collective", [*TP4_RANK3, *TP4_RANK2, *TP4_RANK1]).filter(
        event="collective_timeout"
    )
    assert failed.sort("line").select("rank", "line", "end_line").rows() == [
        (3, 2, 6),
        (2, 8, 12),
        (1, 14, 18),
    ]
    assert (
        failed.filter(rank=3).item(0, "frame").endswith("tensor_parallel.py:10212 in _all_reduce")
    )
    assert (
        failed.filter(rank=1)
        .item(0, "frame")
        .endswith("tensor_parallel.py:246 in _capture_succeeded_on_all_ranks")
    )


def test_the_rank_whose_failed_collective_was_called_elsewhere_left_the_others_path(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": [*TP4_RANK3, *TP4_RANK2, *TP4_RANK1]})
    verdict = analysis.verdict
    assert verdict.finding.kind == "stage_divergence" and verdict.ranks == [3]
    assert verdict.headline.startswith(
        "Rank 3 called all_reduce from _all_reduce (tensor_parallel.py:10212), not where the "
        "others called it"
    )
    assert "stacks stop at different calls of all_reduce" in verdict.finding.summary
    assert "ranks 1 and 2 waited at _capture_succeeded_on_all_ranks" in verdict.finding.summary


def test_stacks_of_the_failed_collective_called_from_one_place_single_out_no_rank(tmp_path):
    # rank 2's stack twice over, as rank 2 and as rank 1 (the header's rank changed): the same
    # call on every rank says nothing of who left
    as_rank1 = [TP4_RANK2[0].replace("[rank2]", "[rank1]", 1), *TP4_RANK2[1:]]
    analysis = analyze_files(tmp_path, {"console.log": [*TP4_RANK2, *as_rank1]})
    assert "stage_divergence" not in kinds(analysis)
