# ruff: noqa: E501 -- test data are verbatim log lines
"""Numbers no job can have (logforensics/rules/implausible_number.py), and ranks beyond the
world that processes joined the group with."""

from __future__ import annotations

from tests.builders import analyze_files, finding

# facebookresearch/metaseq#86, verbatim: three processes check in at the default group's
# store-based barrier, which rank 1 completes with 2 nodes
THREE_FOR_TWO = [
    "2022-05-10 05:09:38 | INFO | metaseq_cli.interactive | Local checkpoint copy already exists, skipping copy",
    "2022-05-10 05:09:39 | INFO | metaseq.distributed.utils | distributed init (rank 0): tcp://localhost:19587",
    "2022-05-10 05:09:41 | INFO | metaseq.distributed.utils | distributed init (rank 2): tcp://localhost:19587",
    "2022-05-10 05:09:41 | INFO | torch.distributed.distributed_c10d | Added key: store_based_barrier_key:1 to store for rank: 2",
    "2022-05-10 05:09:41 | INFO | metaseq.distributed.utils | distributed init (rank 1): tcp://localhost:19587",
    "2022-05-10 05:09:41 | INFO | torch.distributed.distributed_c10d | Added key: store_based_barrier_key:1 to store for rank: 1",
    "2022-05-10 05:09:41 | INFO | torch.distributed.distributed_c10d | Rank 1: Completed store-based barrier for key:store_based_barrier_key:1 with 2 nodes.",
    "2022-05-10 05:09:41 | INFO | torch.distributed.distributed_c10d | Added key: store_based_barrier_key:1 to store for rank: 0",
]


def test_a_process_that_joined_as_a_rank_beyond_the_world_means_too_many_were_started(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": THREE_FOR_TWO})
    extra = finding(analysis, "implausible_number")
    assert extra.severity == "error" and extra.details["values"] == [2]
    assert "the job's world size is 2 (ranks 0-1)" in extra.summary
    assert "--nproc_per_node" in extra.fix
    assert analysis.verdict.finding is extra
    assert analysis.verdict.headline.startswith("More processes were started than the world size")


def test_a_rank_beyond_the_world_in_a_line_that_is_no_join_stays_a_misprint(tmp_path):
    # the same world, and rank 2 only in a line of the script's own (constructed)
    lines = [line for line in THREE_FOR_TWO if "rank: 2" not in line]
    lines.append("2022-05-10 05:09:42 | INFO | metaseq_cli.interactive | rank=2 step=0 stage=load")
    number = finding(analyze_files(tmp_path, {"console.log": lines}), "implausible_number")
    assert number.severity == "warning" and "cannot be right" in number.summary
