# ruff: noqa: E501 -- test data are verbatim log lines
"""Horovod's stall inspector (parsers/horovod_stall.py) and what rules/collective_mismatch.py
makes of it, verbatim from the public threads named at each."""

from __future__ import annotations

import polars as pl

from logforensics.i18n import translate
from tests.builders import analyze_files, parsed_by
from tests.test_i18n import english_runs

# horovod/horovod#2640, verbatim: two nodes ran different code; ranks 0-10 never submitted
SPLIT = [
    "[0]<stderr>:[2021-02-02 03:23:51. 70957: W /tmp/pip-install-wztcejga/horovod_5b3931a7e1ed48ce93cf2eda4263910e/horovod/common/stall_inspector.cc:105] One or more tensors were submitted to be reduced, gathered or broadcasted by subset of ranks and are waiting for remainder of ranks for more than 60 seconds. This may indicate that different ranks are trying to submit different tensors or that only subset of ranks is submitting tensors, which will cause deadlock.",
    "[0]<stderr>:Missing ranks:",
    "[0]<stderr>:0: [allreduce.noname.222700]",
    "[0]<stderr>:1: [allreduce.noname.222700]",
    "[0]<stderr>:2: [allreduce.noname.222700]",
    "[0]<stderr>:3: [allreduce.noname.222700]",
    "[0]<stderr>:4: [allreduce.noname.222700]",
    "[0]<stderr>:5: [allreduce.noname.222700]",
    "[0]<stderr>:6: [allreduce.noname.222700]",
    "[0]<stderr>:7: [allreduce.noname.222700]",
    "[0]<stderr>:8: [allreduce.noname.222700]",
    "[0]<stderr>:9: [allreduce.noname.222700]",
    "[0]<stderr>:10: [allreduce.noname.222700]",
]
# horovod/horovod#1012, verbatim (whole lines of the excerpt): rank 1 never submitted the
# broadcasts rank 0 waits on
ONE_MISSING = [
    "[1,0]<stderr>:[2019-04-13 13:55:31.858119: W horovod/common/operations.cc:588] HorovodBroadcast_dense_kernel_Momentum_0 [missing ranks: 1]",
    "[1,0]<stderr>:[2019-04-13 13:56:31.861697: W horovod/common/operations.cc:588] One or more tensors were submitted to be reduced, gathered or broadcasted by subset of ranks and are waiting for remainder of ranks for more than 60 seconds. This may indicate that different ranks are trying to submit different tensors or that only subset of ranks is submitting tensors, which will cause deadlock.",
    "[1,0]<stderr>:Stalled ops:HorovodBroadcast_dense_1_bias_0 [missing ranks: 1]",
    "[1,0]<stderr>:[2019-04-13 13:56:31.861765: W horovod/common/operations.cc:588] HorovodBroadcast_dense_1_kernel_0 [missing ranks: 1]",
]


def test_each_rank_under_missing_ranks_is_a_stall_missing_event():
    found = parsed_by("horovod_stall", SPLIT)
    missing = found.filter(found["event"] == "stall_missing").sort("line")
    assert missing.get_column("peer_rank").to_list() == list(range(11))
    assert missing.row(0, named=True)["names"] == ["allreduce.noname.222700"]
    assert found.filter(found["event"] == "stall").height == 1


def test_many_missing_ranks_are_a_split_blaming_no_rank(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": SPLIT})
    assert analysis.unrecognised_lines == 0
    split = analysis.verdict.finding
    assert split.kind == "collective_mismatch" and split.blames_nobody
    assert analysis.verdict.ranks == []
    assert "one node runs other code" in split.fix


def test_one_missing_rank_is_the_one_the_others_waited_for(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": ONE_MISSING})
    stalled = analysis.verdict.finding
    assert (stalled.kind, analysis.verdict.ranks) == ("collective_timeout", [1])
    assert analysis.verdict.headline == "Rank 1 never submitted the tensor the others waited on"
    assert "rank 1 never submitted HorovodBroadcast_dense_kernel_Momentum_0 (and 2 more)" in (
        stalled.summary
    )


def test_ready_ranks_of_each_op_are_read():
    # horovod/horovod PR #334's console line, as far as the thread's excerpt holds it whole
    # (cut after its second op)
    line = "Train Epoch     #73:  82% 1027/1252 [36:43<1:25:55, 22.91s/it, loss=0.946, accuracy=77]WARNING: One or more tensors were submitted to be reduced, gathered or broadcasted by subset of ranks and are waiting for remainder of ranks for more than 60 seconds. This may indicate that different ranks are trying to submit different tensors or that only subset of ranks is submitting tensors, which will cause deadlock. Stalled ops: allreduce.conv1.weight [ready ranks: 5, 1, 4, 7, 2, 3], allreduce.bn1.weight [ready ranks: 5, 1, 4, 7, 2, 3]"
    found = parsed_by("horovod_stall", [line])
    ready = found.filter(found["event"] == "stall_ready")
    assert ready.height == 2 and ready.row(0, named=True)["values"] == [5, 1, 4, 7, 2, 3]


# horovod/horovod#600, verbatim: a Keras metric callback averaged on rank 0 alone
LONE_SUBMITTER = [
    "WARNING: One or more tensors were submitted to be reduced, gathered or broadcasted by subset of ranks and are waiting for remainder of ranks for more than 60 seconds. This may indicate that different ranks are trying to submit different tensors or that only subset of ranks is submitting tensors, which will cause deadlock.",  # noqa: E501
    "Stalled ops:",
    "MetricAverageCallback_10/HorovodAllreduce_MetricAverageCallback_10_lr_0 [missing ranks: 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]",  # noqa: E501
]


def test_the_one_rank_every_other_rank_left_alone_is_the_one_that_strayed(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": LONE_SUBMITTER})
    stalled = analysis.verdict.finding
    assert (stalled.kind, analysis.verdict.ranks) == ("collective_mismatch", [0])
    assert "rank 0 alone submitted MetricAverageCallback_10/" in stalled.summary
    assert "`if rank == 0`" in stalled.fix
    assert analysis.verdict.headline.startswith("Rank 0 alone submitted a tensor")


# horovod/horovod#1442, verbatim (Horovod 0.18 under mpirun; the paste broke the warning's line)
STALLED_RANKS = [
    "[1,0]<stderr>:[2019-10-09 15:36:43.594972: W horovod/common/stall_inspector.cc:105] One or more tensors were submitted to be reduced, gathered or broadcasted by subset of ranks and are waiting for remaind",
    "er of ranks for more than 60 seconds. This may indicate that different ranks are trying to submit different tensors or that only subset of ranks is submitting tensors, which will cause deadlock.",
    "[1,0]<stderr>:Stalled ranks:",
    "[1,0]<stderr>:6: [horovod_allreduce.0, horovod_allreduce.1, horovod_allreduce.10, horovod_allreduce.100, horovod_allreduce.101, horovod_allreduce.102 ...]",
]


def test_horovod_0_18_s_stalled_ranks_are_the_missing_ones(tmp_path):
    missing = parsed_by("horovod_stall", STALLED_RANKS).filter(pl.col("event") == "stall_missing")
    assert missing.get_column("peer_rank").to_list() == [6]
    verdict = analyze_files(tmp_path, {"mpirun.log": STALLED_RANKS}).verdict
    assert verdict.ranks == [6]


# ludwig-ai/ludwig#610, verbatim as posted: the paste wrapped at a fixed width, inside words and
# inside the stalled rank's tensor list, so the list's `]` is on no line of the entry's
WRAPPED_ENTRY = [
    "[1,0]<stderr>:[2020-01-10 19:52:29.658590: W horovod/common/stall_inspector.cc:105] One or more tensors were submitted to be reduced, gath",
    "ered or broadcasted by subset of ranks and are waiting for remainder of ranks for more than 60 seconds. This may indicate that different r",
    "anks are trying to submit different tensors or that only subset of ranks is submitting tensors, which will cause deadlock.",
    "[1,0]<stderr>:Stalled ranks:",
    "[1,0]<stderr>:0: [optimizer/DistributedAdamOptimizer_Allreduce/HorovodAllgather_optimizer_gradients_concat_0, optimizer/DistributedAdamOpt",
    "imizer_Allreduce/HorovodAllgather_optimizer_gradients_concat_10_0, optimizer/DistributedAdamOptimizer_Allreduce/HorovodAllgather_optimizer",
]


def test_a_stalled_rank_whose_tensor_list_a_paste_wrapped_is_read(tmp_path):
    missing = parsed_by("horovod_stall", WRAPPED_ENTRY).filter(pl.col("event") == "stall_missing")
    assert missing.get_column("peer_rank").to_list() == [0]
    verdict = analyze_files(tmp_path, {"console.log": WRAPPED_ENTRY}).verdict
    assert verdict.finding.kind == "collective_timeout" and verdict.ranks == [0]


# horovod/horovod#457, verbatim (a commenter's paste): the metric's allreduce after validation
# first misses ranks 0, 1, 3 and 4, then rank 3 arrives
ARRIVING = [
    "MetricAverageCallback/HorovodAllreduce_MetricAverageCallback_acc_0 [missing ranks: 0, 1, 3, 4]",
    "MetricAverageCallback/HorovodAllreduce_MetricAverageCallback_acc_0 [missing ranks: 0, 1, 3, 4]",
    "MetricAverageCallback/HorovodAllreduce_MetricAverageCallback_acc_0 [missing ranks: 0, 1, 3, 4]",
    "MetricAverageCallback/HorovodAllreduce_MetricAverageCallback_acc_0 [missing ranks: 0, 1, 3, 4]",
    "MetricAverageCallback/HorovodAllreduce_MetricAverageCallback_acc_0 [missing ranks: 0, 1, 3, 4]",
    "MetricAverageCallback/HorovodAllreduce_MetricAverageCallback_acc_0 [missing ranks: 0, 1, 3, 4]",
    "MetricAverageCallback/HorovodAllreduce_MetricAverageCallback_acc_0 [missing ranks: 0, 1, 3, 4]",
    "MetricAverageCallback/HorovodAllreduce_MetricAverageCallback_acc_0 [missing ranks: 0, 1, 4]",
    "MetricAverageCallback/HorovodAllreduce_MetricAverageCallback_acc_0 [missing ranks: 0, 1, 4]",
    "MetricAverageCallback/HorovodAllreduce_MetricAverageCallback_acc_0 [missing ranks: 0, 1, 4]",
    "MetricAverageCallback/HorovodAllreduce_MetricAverageCallback_acc_0 [missing ranks: 0, 1, 4]",
]


def test_ranks_arriving_one_by_one_are_late_not_a_lone_submitter_s_collective(tmp_path):
    analysis = analyze_files(tmp_path, {"train.log": ARRIVING})
    verdict = analysis.verdict
    assert (verdict.finding.kind, verdict.ranks) == ("collective_timeout", [0, 1, 4])
    assert verdict.finding.details["arrived"] == [3]
    assert "one by one, late" in verdict.finding.summary
    assert not [f for f in analysis.findings if "alone submitted" in f.summary]
    assert english_runs(translate(verdict.finding.summary, "zh")) == []


# horovod/horovod#2506, verbatim (MXNet, mpirun's prefix): rank 5 alone missing from one
# allreduce, and no report shows it submitting anything else
ONLY_MISSING = [
    "[1,0]<stderr>:[2020-12-06 09:54:57.653026: W /tmp/pip-install-i80hmvxk/horovod/horovod/common/stall_inspector.cc:105] One or more tensors were submitted to be reduced, gathered or broadcasted by subset of ranks and are waiting for remainder of ranks for more than 60 seconds. This may indicate that different ranks are trying to submit different tensors or that only subset of ranks is submitting tensors, which will cause deadlock. ",
    "[1,0]<stderr>:Missing ranks:",
    "[1,0]<stderr>:5: [horovod_allreduce.157]",
]


def test_a_rank_only_missing_is_waited_for_and_one_seen_elsewhere_left_the_path(tmp_path):
    analysis = analyze_files(tmp_path / "missing", {"console.log": ONLY_MISSING})
    stalled = analysis.verdict.finding
    assert (stalled.kind, analysis.verdict.ranks) == ("collective_timeout", [5])
    assert "rank 5 never submitted horovod_allreduce.157" in stalled.summary
    assert "left the common path" not in stalled.summary
    assert english_runs(translate(stalled.summary, "zh")) == []
    # a later report, also missing rank 4 from a tensor rank 5 submitted: rank 5 was elsewhere
    later = ONLY_MISSING[-1].replace("5: [horovod_allreduce.157]", "4: [horovod_allreduce.158]")
    elsewhere = [*ONLY_MISSING, *ONLY_MISSING, later]
    departed = analyze_files(tmp_path / "elsewhere", {"console.log": elsewhere}).verdict
    assert (departed.finding.kind, departed.ranks) == ("stage_divergence", [5])
    assert "rank 5 submitted other tensors meanwhile" in departed.finding.summary
    assert english_runs(translate(departed.finding.summary, "zh")) == []
