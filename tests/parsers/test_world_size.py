# ruff: noqa: E501 -- test data are verbatim log lines
from __future__ import annotations

import polars as pl
import pytest

from tests.builders import analyze_files, only, parsed_by


@pytest.mark.parametrize(
    ("line", "size"),
    [
        # sample_logs/megatron_style_skip (Megatron-LM's argument print), a run here
        (
            "using world size: 4, data-parallel size: 4, tensor-model-parallel size: 1, pipeline-model-parallel size: 1",
            4,
        ),
        ("WORLD_SIZE=8", 8),
        # the DeepSpeed launcher's count of every node's processes (DeepSpeedExamples' committed
        # check-7b/training.log, tests/data/threads/dschat585_llama7b_16_processes.log)
        ("[2023-06-09 05:17:52,629] [INFO] [launch.py:163:main] dist_world_size=16", 16),
    ],
)
def test_world_size_in_words(line, size):
    (row,) = parsed_by("world_size", [line]).select("world_size").rows()
    assert row == (size,)


@pytest.mark.parametrize(
    "line",
    [
        "{'rank': 0, 'local_rank': 0, 'device': 0, 'world_size': 4}",  # device_map's
        "world_size_per_node = 8",
    ],
)
def test_other_shapes_are_not_read_here(line):
    assert parsed_by("world_size", [line]).is_empty()


def test_lightnings_member_line_states_the_world_and_the_rank():
    # Lightning-AI/pytorch-lightning#19606, verbatim
    found = only(parsed_by("world_size", ["Initializing distributed: GLOBAL_RANK: 0, MEMBER: 1/5"]))
    assert (found["world_size"], found["rank"]) == (5, 0)


# determined-ai/determined#8915, verbatim (Determined's `[rank=N] ||` in front of torch's logger)
BARRIER_DONE = "[2024-02-27T21:05:18.692661Z] fa88a9df [rank=1] || INFO: [183] torch.distributed.distributed_c10d: Rank 1: Completed store-based barrier for key:store_based_barrier_key:1 with 8 nodes."
BARRIER_JOINED = "[2024-02-27T21:05:18.670399Z] fa88a9df [rank=3] || INFO: [182] torch.distributed.distributed_c10d: Added key: store_based_barrier_key:1 to store for rank: 3"


@pytest.mark.parametrize(
    ("line", "rank", "rank_from"),
    [
        (BARRIER_DONE, 1, "prefix"),
        # (shortened, not verbatim) the same message without prefix, pid or `Rank N: `: the
        # world size only
        (
            "INFO: [] torch.distributed.distributed_c10d: Completed store-based barrier for key:store_based_barrier_key:1 with 8 nodes.",
            None,
            None,
        ),
    ],
)
def test_the_default_groups_store_barrier_states_the_world_size(line, rank, rank_from):
    found = only(parsed_by("world_size", [line]))
    assert (found["event"], found["severity"], found["world_size"]) == ("world_size", "info", 8)
    assert (found["rank"], found["rank_from"]) == (rank, rank_from)


SUB_GROUP_DONE = "2023-10-08 13:49:11,130 - INFO - Rank 0: Completed store-based barrier for key:store_based_barrier_key:2 with 1 nodes."


def test_a_sub_groups_store_barrier_is_no_world_size():
    # intel-analytics/ipex-llm, python/llm/example/CPU/PyTorch-Models/Model/meta-llama/README.md
    # (sample output), verbatim: key 2 is the barrier of the first group `new_group` made after
    # init (fairscale's model-parallel group), whose size is not the world's
    found = only(parsed_by("world_size", [SUB_GROUP_DONE]))
    assert (found["event"], found["rank"], found["pg"], found["world_size"]) == (
        "store_barrier_done",
        0,
        "2",
        None,
    )


@pytest.mark.parametrize(
    ("line", "rank", "rank_from"),
    [
        (BARRIER_JOINED, 3, "prefix"),
        # facebookresearch/CrypTen#381, verbatim (Python's default log format, no prefix)
        (
            "INFO:torch.distributed.distributed_c10d:Added key: store_based_barrier_key:1 to store for rank: 2",
            2,
            "content",
        ),
        # (shortened, not verbatim) determined#8915's line without its prefix: the content's rank
        (
            "INFO: [] torch.distributed.distributed_c10d: Added key: store_based_barrier_key:1 to store for rank: 3",
            3,
            "content",
        ),
    ],
)
def test_a_ranks_check_in_at_the_store_barrier_makes_it_seen(tmp_path, line, rank, rank_from):
    found = only(parsed_by("world_size", [line]))
    assert (found["event"], found["severity"], found["rank"], found["rank_from"]) == (
        "store_barrier_joined",
        "info",
        rank,
        rank_from,
    )
    assert rank in analyze_files(tmp_path, {"job.log": [line]}).job.ranks_seen


# s-JoL/Open-Llama#47, verbatim: two ranks waiting at the barrier of process group 2 (a
# `new_group`), 7 of its 8 processes arrived
OPEN_LLAMA_WAITS = [
    "I0510 07:28:04.417845 139863945226048 distributed_c10d.py:337] Waiting in store based barrier to initialize process group for rank: 2, key: store_based_barrier_key:2 (world_size=8, worker_count=7, timeout=0:30:00)",
    "I0510 07:28:04.428285 140051304576832 distributed_c10d.py:337] Waiting in store based barrier to initialize process group for rank: 7, key: store_based_barrier_key:2 (world_size=8, worker_count=7, timeout=0:30:00)",
]


def test_a_wait_at_the_store_barrier_names_the_waiter_its_group_and_the_count():
    waits = parsed_by("world_size", OPEN_LLAMA_WAITS)
    assert waits.select("event", "rank", "pg", "nranks", "value", "world_size").rows() == [
        ("store_barrier_waiting", 2, "2", 8, 7, None),  # a sub-group's size is not the world's
        ("store_barrier_waiting", 7, "2", 8, 7, None),
    ]


# rwth-i6/returnn#323 (a healthy 4-host Horovod start-up), verbatim: each rank announces itself
RANK_OF_SIZE_LINES = [
    "Horovod initialized. Hostname cluster-cn-238, pid 14531, rank 2 / size 4, local rank 0 / local size 1.",
    "Horovod initialized. Hostname cluster-cn-275, pid 1594, rank 3 / size 4, local rank 0 / local size 1.",
    "Horovod initialized. Hostname cluster-cn-224, pid 12931, rank 0 / size 4, local rank 0 / local size 1.",
    "Horovod initialized. Hostname cluster-cn-220, pid 5101, rank 1 / size 4, local rank 0 / local size 1.",
]


def test_a_rank_s_announcement_of_its_rank_and_size_states_the_world():
    rows = parsed_by("world_size", RANK_OF_SIZE_LINES)
    assert rows.get_column("rank").to_list() == [2, 3, 0, 1]
    assert set(rows.get_column("world_size").to_list()) == {4}


def test_a_healthy_start_up_that_announces_its_ranks_is_no_failure(tmp_path):
    analysis = analyze_files(tmp_path, {"output.log": RANK_OF_SIZE_LINES})
    assert analysis.verdict is None and analysis.job.world_size.value == 4


# huggingface/datasets#7444: a healthy two-rank job resuming its DataLoaders; the script's own
# prints say the world with a capital W
RESUMING_RANKS_LINES = [
    "[Rank 0] Preparing train_dataloader...",
    "[Rank 0] Global rank: 0",
    "[Rank 0] World size: 2",
    "[Rank 1] Preparing train_dataloader...",
    "[Rank 1] Global rank: 1",
    "[Rank 1] World size: 2",
    "Loading a state dict of a shuffle buffer of a dataset without the buffer content.The shuffle buffer will be refilled before starting to yield new examples.",
    "Assigning 2 shards (or data sources) of the dataset to each node.",
    "node#0 dataloader worker#1, ': Starting to iterate over 1/2 shards.",
]


def test_a_world_size_said_with_capitals_is_read_and_the_log_analysed(tmp_path):
    analysis = analyze_files(tmp_path, {"output.log": RESUMING_RANKS_LINES})
    assert analysis.verdict is None and analysis.job.world_size.value == 2


# facebookresearch/fairseq#2385, verbatim: rank 0's table of the gathered workers' GPUs (a
# healthy start, 'This looks normal'; the stored copy cut the row of rank 7)
FAIRSEQ_CUDA_TABLE = [
    "2020-07-28 06:31:03 | INFO | fairseq.utils | ***********************CUDA enviroments for all 8 workers***********************",
    "2020-07-28 06:31:03 | INFO | fairseq.utils | rank   0: capabilities =  7.0  ; total memory = 15.782 GB ; name = Tesla V100-PCIE-16GB",
    "2020-07-28 06:31:03 | INFO | fairseq.utils | rank   1: capabilities =  7.0  ; total memory = 15.782 GB ; name = Tesla V100-PCIE-16GB",
    "2020-07-28 06:31:03 | INFO | fairseq.utils | rank   2: capabilities =  7.0  ; total memory = 15.782 GB ; name = Tesla V100-PCIE-16GB",
    "2020-07-28 06:31:03 | INFO | fairseq.utils | rank   3: capabilities =  7.0  ; total memory = 15.782 GB ; name = Tesla V100-PCIE-16GB",
    "2020-07-28 06:31:03 | INFO | fairseq.utils | rank   4: capabilities =  7.0  ; total memory = 15.782 GB ; name = Tesla V100-PCIE-16GB",
    "2020-07-28 06:31:03 | INFO | fairseq.utils | rank   5: capabilities =  7.0  ; total memory = 15.782 GB ; name = Tesla V100-PCIE-16GB",
    "2020-07-28 06:31:03 | INFO | fairseq.utils | rank   6: capabilities =  7.0  ; total memory = 15.782 GB ; name = Tesla V100-PCIE-16GB",
]


def test_fairseq_s_table_of_workers_states_the_world_size_and_is_read_whole(tmp_path):
    found = parsed_by("world_size", FAIRSEQ_CUDA_TABLE)
    assert only(found.filter(pl.col("event").is_not_null()))["world_size"] == 8
    analysis = analyze_files(tmp_path, {"master_node.log": FAIRSEQ_CUDA_TABLE})
    # every line read, none of its rows a line of the rank it lists, and no failure
    assert analysis.unrecognised_lines == 0
    assert analysis.job.ranks_seen == ()
    assert analysis.verdict is None


# Project-HAMi/HAMi#1853, verbatim: vLLM's two tensor-parallel workers join the group
VLLM_WORKERS = [
    "(Worker pid=2245) INFO 05-11 15:34:02 [parallel_state.py:1402] world_size=2 rank=1 local_rank=1 distributed_init_method=tcp://127.0.0.1:51949 backend=nccl",
    "(Worker pid=2244) INFO 05-11 15:34:02 [parallel_state.py:1402] world_size=2 rank=0 local_rank=0 distributed_init_method=tcp://127.0.0.1:51949 backend=nccl",
]


def test_a_vllm_worker_joining_states_its_own_rank(tmp_path):
    stated = parsed_by("world_size", VLLM_WORKERS).filter(event="world_size")
    assert stated.select("rank", "world_size").rows() == [(1, 2), (0, 2)]
    analysis = analyze_files(tmp_path, {"console.log": VLLM_WORKERS})
    assert sorted(analysis.job.ranks_seen) == [0, 1]


# msr-fiddle/pipedream#34, verbatim (cut): the only process whose log was posted, its rank stated
# beside the world's size, then its traceback
PIPEDREAM_RANK = [
    "Finished initializing process group; backend: gloo, rank: 14, world_size: 16",
    "Traceback (most recent call last):",
    '  File "../communication.py", line 496, in get_messaging_index',
    "    self.fwd_messaging_scheduling_row][",
    "IndexError: list index out of range",
]


def test_a_rank_stated_beside_the_world_size_is_the_writers():
    stated = only(parsed_by("world_size", PIPEDREAM_RANK[:1]))
    assert (stated["rank"], stated["world_size"]) == (14, 16)
    local = only(parsed_by("world_size", ["local_rank: 3, world_size: 16"]))
    assert local["rank"] is None and local["world_size"] == 16


def test_the_console_s_traceback_is_the_rank_its_set_up_line_states(tmp_path):
    verdict = analyze_files(tmp_path, {"console.log": PIPEDREAM_RANK}).verdict
    assert (verdict.finding.kind, verdict.ranks) == ("rank_exception", [14])
