# ruff: noqa: E501 -- test data are verbatim log lines
from __future__ import annotations

from pathlib import Path

from logforensics.api import analyze
from logforensics.i18n import translate, translate_headline
from tests.builders import analyze_files, finding, kinds
from tests.parsers.test_detail import SENTENCE_PER_LINE
from tests.test_i18n import english_runs

# speechbrain/speechbrain#2401 (formats.md §6), verbatim
DETAIL = (
    "RuntimeError: Detected mismatch between collectives on ranks. Rank 1 is running collective: "
    "CollectiveFingerPrint(SequenceNumber=485, OpType=ALLREDUCE, TensorShape=[25], "
    "TensorDtypes=Float, TensorDeviceTypes=TensorOptions(dtype=float (default), device=cuda, "
    "layout=Strided (default), requires_grad=false (default), pinned_memory=false (default), "
    "memory_format=(nullopt))), but Rank 0 is running collective: "
    "CollectiveFingerPrint(SequenceNumber=485, OpType=BROADCAST, TensorShape=[1], "
    "TensorDtypes=Long, TensorDeviceTypes=TensorOptions(dtype=float (default), device=cuda, "
    "layout=Strided (default), requires_grad=false (default), pinned_memory=false (default), "
    "memory_format=(nullopt))).Collectives differ in the following aspects:   Op type: "
    "ALLREDUCEvs BROADCAST  Tensor Tensor shapes: 25vs 1  Tensor Tensor dtypes: Floatvs Long"
)


def running(rank: int, seq: int, op: str) -> str:
    return (
        f"[I1130 15:00:00.000000000 ProcessGroupWrapper.cpp:1] [Rank {rank}] Running collective: "
        f"CollectiveFingerPrint(SequenceNumber={seq}, OpType={op}, TensorShape=[4], "
        "TensorDtypes=Float, TensorDeviceTypes=TensorOptions(dtype=float (default), device=cpu, "
        "layout=Strided (default), requires_grad=false (default), pinned_memory=false (default), "
        "memory_format=(nullopt)))"
    )


def test_detail_report_names_both_ranks_and_fingerprints(tmp_path):
    mismatch = finding(analyze_files(tmp_path, {"rank1.log": [DETAIL]}), "collective_mismatch")
    assert mismatch.ranks == [0, 1]
    assert (mismatch.op, mismatch.seq) == ("ALLREDUCE", 485)
    assert "ALLREDUCE #485 shape [25]" in mismatch.summary and "BROADCAST" in mismatch.summary


def test_one_report_of_a_pair_does_not_say_which_side_left(tmp_path):
    # ZhikangNiu/encodec-pytorch#30, verbatim: each rank drew its own random number to decide
    # whether to step the discriminator, so neither of the two is the one that departed
    line = (
        "RuntimeError: Detected mismatch between collectives on ranks. Rank 0 is running collective: "
        "CollectiveFingerPrint(OpType=BROADCAST, TensorShape=[], TensorDtypes=Long, TensorDeviceTypes=TensorOptions(dtype=float (default), device=cuda, layout=Strided (default), requires_grad=false (default), pinned_memory=false (default), memory_format=(nullopt))), "
        "but Rank 1 is running collective: CollectiveFingerPrint(OpType=ALLGATHER_COALESCED)."
    )
    analysis = analyze_files(tmp_path, {"console.log": [line]})
    mismatch = finding(analysis, "collective_mismatch")
    assert mismatch.ranks == [0, 1] and mismatch.blamed == []
    assert "do not say which side left the common path" in mismatch.summary
    assert analysis.verdict.finding is mismatch and analysis.verdict.ranks == []


def test_ranks_in_one_op_at_different_numbers_are_told_as_out_of_step(tmp_path):
    # sgl-project/sglang#13227
    analysis = analyze_files(tmp_path, {"console.log": SENTENCE_PER_LINE})
    mismatch = finding(analysis, "collective_mismatch")
    assert mismatch.ranks == [0, 7] and mismatch.blamed == []
    assert "12 collectives apart: rank 0 had issued 12 more than rank 7" in mismatch.summary
    assert analysis.verdict.headline == (
        "Ranks 0 and 7 were out of step in their collectives (rank 0 at BROADCAST #30, rank 7 "
        "at #18)"
    )
    assert not english_runs(translate_headline(analysis.verdict.headline, "zh"))
    assert not english_runs(translate(mismatch.summary, "zh"))


# speechbrain/speechbrain#1166, verbatim (torch 1.10): the reporting rank states only its own
# collective; a time-based checkpoint made one of the two ranks take another path
ONE_SIDED = (
    "RuntimeError: Detected mismatch between collectives on ranks. Rank 0 is running "
    "inconsistent collective: CollectiveFingerPrint(OpType=BROADCAST, TensorShape=[4], "
    "TensorDtypes=Float, TensorDeviceTypes=TensorOptions(dtype=float (default), device=cuda, "
    "layout=Strided (default), requires_grad=false (default), pinned_memory=false (default), "
    "memory_format=(nullopt))"
)


def test_a_one_sided_report_does_not_blame_the_rank_that_reports_it(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": [ONE_SIDED]})
    mismatch = finding(analysis, "collective_mismatch")
    assert mismatch.ranks == [0] and mismatch.blamed == []
    assert mismatch.confidence == "medium"
    assert "does not say which rank left the path" in mismatch.summary
    assert "torch 1.11 and older" in mismatch.summary
    assert analysis.verdict.ranks == []
    assert analysis.verdict.headline.startswith("The ranks called different collectives")


def test_one_sided_reports_of_three_ranks_single_out_the_odd_fingerprint(tmp_path):
    # the same report from three ranks, rank 2 running another collective (constructed from
    # speechbrain#1166's line)
    lines = [ONE_SIDED.replace("Rank 0", f"Rank {rank}") for rank in (0, 1)]
    lines.append(
        ONE_SIDED.replace("Rank 0", "Rank 2").replace("OpType=BROADCAST", "OpType=BARRIER")
    )
    mismatch = finding(analyze_files(tmp_path, {"console.log": lines}), "collective_mismatch")
    assert mismatch.blamed == [2]
    assert "the odd one out" in mismatch.summary


def test_running_collective_histories_part_at_first_differing_seq(tmp_path):
    files = {
        f"rank{r}.log": [running(r, s, "ALLREDUCE") for s in range(5)] + [running(r, 5, "BARRIER")]
        for r in (0, 1, 3)
    }
    files["rank2.log"] = [running(2, s, "ALLREDUCE") for s in range(3)] + [running(2, 3, "BARRIER")]
    mismatch = finding(analyze_files(tmp_path, files), "collective_mismatch")
    assert mismatch.seq == 3 and mismatch.culprit_ranks == [2]


# Lightning-AI/pytorch-lightning#19106, verbatim (the paste cuts the last line): the ranks
# logged different metric keys, so rank 1 issued another number of syncing collectives; each
# rank's last `Running collective` line is all the paste shows
LAST_RUNS_APART = [
    "[I ProcessGroupWrapper.cpp:562] [Rank 1] Running collective: CollectiveFingerPrint(SequenceNumber=3, OpType=BROADCAST, TensorShape=[1], TensorDtypes=Long, TensorDeviceTypes=TensorOptions(dtype=float (default), device=cuda, layout=Strided (default), requires_grad=false (default), pinned_memory=false (default), memory_format=(nullopt)))",
    "[I ProcessGroupWrapper.cpp:562] [Rank 0] Running collective: CollectiveFingerPrint(SequenceNumber=4, OpType=BROADCAST, TensorShape=[73], TensorDtypes=Byte, TensorDeviceTypes=TensorOptions(dtype=float (default), device=cuda, layout=Strided (default), requires_grad=false (default), pinned_memory=false (default), memory_format=(nullopt)))",
    "[I ProcessGroupWrapper.cpp:562] [Rank 2] Running collective: CollectiveFingerPrint(SequenceNumber=4, OpType=BROADCAST, TensorShape=[73], TensorDtypes=Byte, TensorDeviceTypes=TensorOptions(dtype=float (default), device=cuda, layout=Strided (default), requires_grad=false (default), pinned_memory=false (default), memory_format=(nullopt)))",
    "[I ProcessGroupWrapper.cpp:562] [Rank 3] Running collective: CollectiveFingerPrint(SequenceNumber=4, OpType=BROADCAST, TensorShape=[73], TensorDtypes=Byte, TensorDeviceTypes=TensorOptions(dtype=float (default), device=cuda, layout=Strided (default), requires_grad=false (default), pinned_memory=f",
]


def test_a_minority_whose_last_collective_differs_is_the_odd_one_out(tmp_path):
    analysis = analyze_files(tmp_path, {"train.log": LAST_RUNS_APART})
    mismatch = finding(analysis, "collective_mismatch")
    assert mismatch.culprit_ranks == [1] and (mismatch.op, mismatch.seq) == ("BROADCAST", 3)
    assert "rank 1 stopped at #3 (BROADCAST shape [1] Long)" in mismatch.summary
    assert "ranks 0, 2 and 3 stopped at #4" in mismatch.summary
    assert analysis.verdict.finding is mismatch
    assert english_runs(translate(mismatch.summary, "zh")) == []


def test_last_collectives_of_two_ranks_apart_blame_neither(tmp_path):
    files = {"rank0.log": [running(0, 3, "BROADCAST")], "rank1.log": [running(1, 4, "BROADCAST")]}
    assert "collective_mismatch" not in kinds(analyze_files(tmp_path, files))


def test_ranks_whose_last_collectives_agree_show_no_mismatch(tmp_path):
    files = {f"rank{r}.log": [running(r, s, "ALLREDUCE") for s in range(4)] for r in range(4)}
    assert "collective_mismatch" not in kinds(analyze_files(tmp_path, files))


# 2U1/Qwen-VL-Series-Finetune#17, verbatim: rank 0 timed out inside #959, an all-reduce of
# 544,997,376 elements; ranks 1, 2, 4 and 5 had completed #959 and timed out at #963
QWEN_VL = [
    "  0%|          | 0/60 [00:00<?, ?it/s][rank0]:[E ProcessGroupNCCL.cpp:563] [Rank 0] "
    "Watchdog caught collective operation timeout: WorkNCCL(SeqNum=959, OpType=ALLREDUCE, "
    "NumelIn=544997376, NumelOut=544997376, Timeout(ms)=600000) ran for 600010 milliseconds "
    "before timing out.",
    *(
        f"[rank{rank}]:[E ProcessGroupNCCL.cpp:563] [Rank {rank}] Watchdog caught collective "
        "operation timeout: WorkNCCL(SeqNum=963, OpType=ALLREDUCE, NumelIn=2560, "
        f"NumelOut=2560, Timeout(ms)=600000) ran for {elapsed} milliseconds before timing out."
        for rank, elapsed in ((1, 600049), (5, 600071), (4, 600085), (2, 600085))
    ),
]


def test_a_rank_inside_a_collective_the_others_completed_ran_another_call(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": QWEN_VL})
    mismatch = finding(analysis, "collective_mismatch")
    assert (mismatch.ranks, mismatch.seq, mismatch.op) == ([0], 959, "ALLREDUCE")
    assert "544,997,376 elements" in mismatch.summary and "never joined" not in mismatch.summary
    assert analysis.verdict.finding is mismatch


def test_ranks_behind_that_are_half_the_group_are_out_of_step_with_none_blamed(tmp_path):
    lines = [line for line in QWEN_VL if "[rank4]" not in line and "[rank5]" not in line]
    lines.append(QWEN_VL[0].replace("rank0]", "rank3]").replace("[Rank 0]", "[Rank 3]"))
    analysis = analyze_files(tmp_path, {"console.log": lines})
    apart = finding(analysis, "collective_mismatch")
    assert apart.ranks == [0, 1, 2, 3] and apart.blames_nobody and apart.culprit_ranks == []
    assert "(ranks 0 and 3: ALLREDUCE #959; ranks 1 and 2: ALLREDUCE #963)" in apart.summary
    assert finding(analysis, "collective_timeout").culprit_ranks == []


# open-mmlab/mmsegmentation#2137, verbatim: two ranks of one group, each in _ALLGATHER_BASE,
# two numbers apart
MMSEG_TWO_APART = [
    "[E ProcessGroupNCCL.cpp:719] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=7559, OpType=_ALLGATHER_BASE, Timeout(ms)=1800000) ran for 1806456 milliseconds before timing out.",
    "[E ProcessGroupNCCL.cpp:719] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=7561, OpType=_ALLGATHER_BASE, Timeout(ms)=1800000) ran for 1806450 milliseconds before timing out.",
]


def test_two_ranks_at_different_numbers_of_one_collective_were_out_of_step(tmp_path):
    analysis = analyze_files(tmp_path, {"log.txt": MMSEG_TWO_APART})
    verdict = analysis.verdict
    assert verdict.finding.kind == "collective_mismatch" and verdict.ranks == []
    assert "lagged" not in verdict.headline and "lagged" not in verdict.finding.summary
    assert verdict.headline.startswith(
        "Ranks 0 and 1 were out of step in their collectives (#7559, #7561)"
    )


# pytorch/pytorch#97191, its repro's output as quoted in PR #97066, verbatim: rank 0 all-reduces
# twice as many elements as ranks 1-7, which complete theirs and print that they are done
LEFT_ALONE = [
    "Rank 0 is the problematic rank",
    "Rank 4 completed",
    "Rank 5 completed",
    "Rank 3 completed",
    "Rank 6 completed",
    "Rank 2 completed",
    "Rank 7 completed",
    "Rank 1 completed",
    "[E ProcessGroupNCCL.cpp:464] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE, Timeout(ms)=10000) ran for 10917 milliseconds before timing out.",
    "Rank 0 completed",
    "[E ProcessGroupNCCL.cpp:478] Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.",
    "[E ProcessGroupNCCL.cpp:483] To avoid data inconsistency, we are taking the entire process down.",
]


def test_a_rank_left_alone_in_a_collective_by_ranks_that_finished_made_a_call_of_its_own(
    tmp_path,
):
    analysis = analyze_files(tmp_path, {"console.log": LEFT_ALONE})
    alone = finding(analysis, "collective_mismatch")
    assert alone.ranks == [0] and alone.seq == 1 and alone.op == "ALLREDUCE"
    assert "while ranks 1-7 had finished the run" in alone.summary
    assert alone.evidence[0].line == 9  # the timeout first, then the ranks that were done
    assert analysis.verdict.finding is alone and analysis.verdict.ranks == [0]
    # the ranks that finished are not named as ranks that never joined
    assert finding(analysis, "collective_timeout").culprit_ranks == []


def test_a_rank_left_alone_by_one_that_finished_is_no_mismatch(tmp_path):
    # two ranks: one waiting, one done; either may have left the common path
    lines = [LEFT_ALONE[7], LEFT_ALONE[8].replace("[Rank 0]", "[Rank 0]")]
    lines[0] = "Rank 1 completed"
    analysis = analyze_files(tmp_path, {"console.log": lines})
    assert "collective_mismatch" not in kinds(analysis)


def test_ranks_neither_waiting_nor_done_leave_no_one_alone(tmp_path):
    # rank 7 said nothing: it may be the one the waiting rank needed
    lines = [line for line in LEFT_ALONE if line != "Rank 7 completed"]
    analysis = analyze_files(tmp_path, {"console.log": lines, "world.log": ["world_size=8"]})
    assert "collective_mismatch" not in kinds(analysis)


# pytorch/pytorch#101422, verbatim: a false report of the gloo wrapper, whose sequence numbers
# started at random (the same BROADCAST on both sides)
FALSE_MISMATCH = "RuntimeError: Detected mismatch between collectives on ranks. Rank 16 is running collective: CollectiveFingerPrint(SequenceNumber=1977865401, OpType=BROADCAST, TensorShape=[1], TensorDtypes=Long, TensorDeviceTypes=TensorOptions(dtype=float (default), device=cpu, layout=Strided (default), requires_grad=false (default), pinned_memory=false (default), memory_format=(nullopt))), but Rank 1 is running collective: CollectiveFingerPrint(SequenceNumber=54090078, OpType=BROADCAST, TensorShape=[1], TensorDtypes=Long, TensorDeviceTypes=TensorOptions(dtype=float (default), device=cpu, layout=Strided (default), requires_grad=false (default), pinned_memory=false (default), memory_format=(nullopt))).Collectives differ in the following aspects: Sequence number: 1977865401vs 54090078"


def test_sequence_numbers_too_far_apart_are_the_wrapper_s_not_the_ranks(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": [FALSE_MISMATCH]})
    mismatch = finding(analysis, "collective_mismatch")
    assert mismatch.blamed == [] and analysis.verdict.ranks == []
    assert "sequence numbers only (1977865401 against 54090078)" in mismatch.summary
    assert "TORCH_DISTRIBUTED_DEBUG=DETAIL" in mismatch.fix
    assert analysis.verdict.headline.startswith("DETAIL's sequence numbers were out of step")


def test_sequence_numbers_a_few_apart_are_a_real_divergence(tmp_path):
    # the same report with the numbers one apart (constructed): a rank one collective behind
    close = FALSE_MISMATCH.replace("1977865401", "54090079")
    mismatch = finding(analyze_files(tmp_path, {"console.log": [close]}), "collective_mismatch")
    assert mismatch.details.get("source") != "sequence bookkeeping"


def test_ranks_behind_in_a_broadcast_the_others_completed_are_no_mismatch(tmp_path):
    # haotian-liu/LLaVA#447, verbatim (cut): ranks 6 and 7 time out in BROADCAST #15170 that
    # ranks 0-3 completed; a broadcast completes up its chain while a rank down it never joined
    lines = [
        "[E ProcessGroupNCCL.cpp:828] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=15173, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1802710 milliseconds before timing out.",
        "[E ProcessGroupNCCL.cpp:828] [Rank 6] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=15170, OpType=BROADCAST, Timeout(ms)=1800000) ran for 1803156 milliseconds before timing out.",
        "[E ProcessGroupNCCL.cpp:828] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=15173, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1802713 milliseconds before timing out.",
        "[E ProcessGroupNCCL.cpp:828] [Rank 7] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=15170, OpType=BROADCAST, Timeout(ms)=1800000) ran for 1803216 milliseconds before timing out.",
        "[E ProcessGroupNCCL.cpp:828] [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=15173, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1802791 milliseconds before timing out.",
        "[E ProcessGroupNCCL.cpp:828] [Rank 2] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=15173, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1802786 milliseconds before timing out.",
    ]
    analysis = analyze_files(tmp_path, {"console.log": lines})
    assert "collective_mismatch" not in kinds(analysis)
    assert analysis.verdict.finding.kind == "collective_timeout"


# vllm-project/vllm#23448, verbatim (cut): torch tells each timeout twice, the watchdog's line
# with the op and no group, the next with the group and no op
TOLD_TWICE = [
    "[rank0]:[E822 16:31:16.131931664 ProcessGroupNCCL.cpp:632] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5730, OpType=BROADCAST, NumelIn=3612672, NumelOut=3612672, Timeout(ms)=600000) ran for 600009 milliseconds before timing out.",
    "[rank0]:[E822 16:31:16.132547721 ProcessGroupNCCL.cpp:2271] [PG ID 4 PG GUID 67 Rank 0]  failure detected by watchdog at work sequence id: 5730 PG status: last enqueued work: 6464, last completed work: 5729",
    "[rank3]:[E822 16:31:16.135435629 ProcessGroupNCCL.cpp:632] [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5729, OpType=BROADCAST, NumelIn=3612672, NumelOut=3612672, Timeout(ms)=600000) ran for 600008 milliseconds before timing out.",
    "[rank3]:[E822 16:31:16.137270546 ProcessGroupNCCL.cpp:2271] [PG ID 4 PG GUID 67 Rank 3]  failure detected by watchdog at work sequence id: 5729 PG status: last enqueued work: 6464, last completed work: 5728",
]


def test_a_timeout_told_with_its_op_and_again_with_its_group_is_one_broadcast(tmp_path):
    # rank 0 completed broadcast #5729 and rank 3 did not: a broadcast completes up its chain,
    # which proves no other call at that number
    analysis = analyze_files(tmp_path, {"console.log": TOLD_TWICE})
    assert "collective_mismatch" not in kinds(analysis)
    assert analysis.verdict.finding.kind == "collective_timeout"
    assert "rank 3: BROADCAST #5729; rank 0: BROADCAST #5730" in analysis.verdict.finding.summary


# hiyouga/LlamaFactory#2902, verbatim (a comment's paste): rank 0's watchdog line and its
# `[PG 1 Rank 0]` record; rank 1's watchdog line alone, its record left out of the paste
ONE_GROUP_TAGGED = [
    "  2%|▏         | 13/620 [01:07<50:20,  4.98s/it][rank0]:[E1123 00:52:57.664949121 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1516, OpType=ALLREDUCE, NumelIn=25427968, NumelOut=25427968, Timeout(ms)=600000) ran for 600017 milliseconds before timing out.",
    "[rank0]:[E1123 00:52:57.665427695 ProcessGroupNCCL.cpp:1664] [PG 1 Rank 0] Exception (either an error or timeout) detected by watchdog at work: 1516, last enqueued NCCL work: 1516, last completed NCCL work: 1515.",
    "[rank1]:[E1123 00:52:57.704703955 ProcessGroupNCCL.cpp:607] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1517, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600026 milliseconds before timing out.",
]


def test_a_rank_s_untagged_report_is_in_the_one_group_the_others_name(tmp_path):
    # both ALLREDUCEs are group 1's: their numbers compare, and the two ranks were out of step
    analysis = analyze_files(tmp_path, {"console.log": ONE_GROUP_TAGGED})
    apart = finding(analysis, "collective_mismatch")
    assert apart.ranks == [0, 1] and apart.blames_nobody
    assert "rank 0: ALLREDUCE #1516; rank 1: ALLREDUCE #1517" in apart.summary


# horovod/horovod#364, verbatim (the paste's own line breaks and spaces): eight ranks, one per
# node; every stalled allreduce lists six ready ranks, never 1 or 5
READY_ONLY = [
    "Train Epoch     #80:  29% 366/1252 [11:52<58:45,  3.98s/it, loss=0.94, accuracy=77.2]",
    "Stalled ops: ",
    "allreduce.conv1.weight [ready ranks: 0, 7, 3, 2, 4, 6], ",
    "allreduce.bn1.weight [ready ranks: 0, 7, 3, 2, 4, 6], ",
    " allreduce.layer1.0.bn1.bias [ready ranks: 0, 7, 3, 2, 4, 6], ",
    " allreduce.layer1.0.conv2.weight [ready ranks: 0, 7, 3, 4, 2, 6], ",
]


def test_ranks_absent_from_the_stall_inspector_s_ready_lists_are_the_ones_waited_for(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": READY_ONLY})
    # never ready on any op: missing, with no sign of where they went
    stalled = finding(analysis, "collective_timeout")
    assert (stalled.ranks, analysis.verdict.ranks, stalled.confidence) == ([1, 5], [1, 5], "medium")
    assert "allreduce.conv1.weight (and 3 more)" in stalled.summary
    assert "What held them the logs do not say" in stalled.summary


# horovod/horovod#336, verbatim as far as the thread's excerpt goes: four workers, rank 3 alone
# ready on the loss's allreduce while ranks 0-2 wait in the optimizer's gradient allreduces
SPLIT_READY_LISTS = (
    "WARNING: One or more tensors were submitted to be reduced, gathered or broadcasted by subset "
    "of ranks and are waiting for remainder of ranks for more than 60 seconds. This may indicate "
    "that different ranks are trying to submit different tensors or that only subset of ranks is "
    "submitting tensors, which will cause deadlock. Stalled ops: HorovodAllreduce_loss_Mean_0 "
    "[ready ranks: 3], DistributedMomentumOptimizer_Allreduce/HorovodAllreduce_gradients_map_"
    "getter_Conv_Conv2D_grad_tuple_control_dependency_1_0 [ready ranks: 2, 0, 1], "
    "DistributedMomentumOptimizer_Allreduce/HorovodAllreduce_gradients_map_getter_Conv_BiasAdd_"
    "grad_tuple_control_dependency_1_0 [ready ranks: 2, 0, 1]"
)


def test_ready_lists_that_split_the_world_blame_the_ranks_off_the_majority_s_ops(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": [SPLIT_READY_LISTS]})
    stalled = finding(analysis, "stage_divergence")
    assert stalled.ranks == [3] and analysis.verdict.ranks == [3]
    assert not stalled.blames_nobody
    # what rank 3 never submitted: the gradients the others wait in, not the loss it is ready on
    assert "never submitted DistributedMomentumOptimizer_Allreduce/" in stalled.summary
    assert "(and 1 more)" in stalled.summary


# Lightning-AI/pytorch-lightning#5155, verbatim (two ranks under horovodrun): rank 0 never
# joined the checkpoint callback's broadcast; a minute later rank 1, still blocked in it, is
# missing from the training step's allreduces rank 0 had gone on to
STALLS_ONE_AFTER_THE_OTHER = [
    "[0]<stderr>:[2020-12-29 16:50:57.724380: W /tmp/pip-install-uk4q7bn5/horovod/horovod/common/stall_inspector.cc:105] One or more tensors were submitted to be reduced, gathered or broadcasted by subset of ranks and are waiting for remainder of ranks for more than 60 seconds. This may indicate that different ranks are trying to submit different tensors or that only subset of ranks is submitting tensors, which will cause deadlock.",
    "[0]<stderr>:Missing ranks:",
    "[0]<stderr>:0: [broadcast.bool.sz]",
    "[0]<stderr>:[2020-12-29 16:51:57.726092: W /tmp/pip-install-uk4q7bn5/horovod/horovod/common/stall_inspector.cc:105] One or more tensors were submitted to be reduced, gathered or broadcasted by subset of ranks and are waiting for remainder of ranks for more than 60 seconds. This may indicate that different ranks are trying to submit different tensors or that only subset of ranks is submitting tensors, which will cause deadlock.",
    "[0]<stderr>:Missing ranks:",
    "[0]<stderr>:0: [broadcast.bool.sz]",
    "[0]<stderr>:1: [allreduce.c_d1.bias, allreduce.c_d1.weight, allreduce.c_d1_bn.bias, allreduce.c_d1_bn.weight, allreduce.c_d2.bias, allreduce.c_d2.weight ...]",
]


def test_the_first_stall_report_names_the_rank_that_left_the_later_ones_its_consequence(
    tmp_path,
):
    analysis = analyze_files(tmp_path, {"console.log": STALLS_ONE_AFTER_THE_OTHER})
    stalled = finding(analysis, "stage_divergence")
    assert stalled.ranks == [0] and analysis.verdict.ranks == [0]
    assert "rank 0 never submitted broadcast.bool.sz" in stalled.summary


# Lightning-AI/pytorch-lightning#19045 (8 GPUs, DETAIL), verbatim, each line cut where the
# thread's excerpt ends: ranks 1 and 2 in ModelCheckpoint's BROADCAST #152517, rank 1's report
# naming rank 0 as the other side (rank 0 was in save_checkpoint's barrier)
CUT_AGAINST_RANK_0 = [
    "RuntimeError: Detected mismatch between collectives on ranks. Rank 2 is running collective: CollectiveFingerPrint(SequenceNumber=152517, OpType=BROADCAST, TensorShape=[1], TensorDtypes=Long, TensorDeviceTypes=TensorOptions(dtype=float (default), devi",
    "RuntimeError: Detected mismatch between collectives on ranks. Rank 1 is running collective: CollectiveFingerPrint(SequenceNumber=152517, OpType=BROADCAST, TensorShape=[1], TensorDtypes=Long, TensorDeviceTypes=TensorOptions(dtype=float (default), device=cuda, layout=Strided (default), requires_grad=false (default), pinned_memory=false (default), memory_format=(nullopt))), but Rank 0 is running",
]


def test_the_rank_agreeing_reporters_name_is_the_odd_one_out(tmp_path):
    analysis = analyze_files(tmp_path, {"output.log": CUT_AGAINST_RANK_0})
    mismatch = finding(analysis, "collective_mismatch")
    assert mismatch.culprit_ranks == [0] and analysis.verdict.ranks == [0]
    assert "the rank they report against, rank 0, ran another collective" in mismatch.summary
    assert mismatch.confidence == "medium"  # rank 0's own fingerprint is cut off


def test_one_report_against_a_rank_is_not_enough_to_blame_it(tmp_path):
    analysis = analyze_files(tmp_path, {"output.log": CUT_AGAINST_RANK_0[1:]})
    mismatch = finding(analysis, "collective_mismatch")
    assert mismatch.culprit_ranks == [] and analysis.verdict.ranks == []


# horovod/horovod#498 (TensorFlow under Horovod, verbatim): two ranks print their final step,
# then the stall inspector lists ranks 3 and 6 missing from every stalled op; no line states
# the world, which is at least 7 ranks
MISSING_3_AND_6 = [
    "NFO:tensorflow:Loss for final step: 3.3031716.",
    "start wait for other node.",
    "INFO:tensorflow:Loss for final step: 3.2450407.",
    "start wait for other node.",
    "WARNING: One or more tensors were submitted to be reduced, gathered or broadcasted by subset of ranks and are waiting for remainder of ranks for more than 60 seconds. This may indicate that di\\",
    "fferent ranks are trying to submit different tensors or that only subset of ranks is submitting tensors, which will cause deadlock.",
    "Stalled ops:",
    "NmtModel/Distributed_TransformGradients_Allreduce/HorovodAllgather_NmtModel_gradients_NmtModel_Source_Side_WordEmbedding_Gather_grad_Reshape_0 [missing ranks: 3, 6]",
    "NmtModel/Distributed_TransformGradients_Allreduce/HorovodAllreduce_NmtModel_gradients_NmtModel_encoder_layer_0_layer_norm_mul_1_grad_tuple_control_dependency_1_0 [missing ranks: 3, 6]",
]


def test_missing_ranks_that_are_a_minority_of_the_least_world_they_allow_are_blamed(tmp_path):
    analysis = analyze_files(tmp_path, {"output.log": MISSING_3_AND_6})
    stalled = finding(analysis, "collective_timeout")
    assert stalled.blamed == [3, 6] and analysis.verdict.ranks == [3, 6]
    assert "What held them the logs do not say" in stalled.summary


# deepspeedai/DeepSpeed#7568, verbatim (two pieces of one post): ranks 0 and 1 in ZeRO's
# grad-norm all-reduce, rank 2's DETAIL report naming rank 3 (in a GATHER)
FIRST_TO_DIFFER = [
    "[rank0]: Traceback (most recent call last):",
    '[rank0]:   File "/home/yanzhen/distributed_test/deepspeed-test/bug1.py", line 121, in <module>',
    "[rank0]:     main()",
    '[rank0]:   File "/home/yanzhen/distributed_test/deepspeed-test/bug1.py", line 114, in main',
    "[rank0]:     model_engine.step()",
    '[rank0]:   File "/home/yanzhen/miniconda3/envs/deepspeed/lib/python3.10/site-packages/deepspeed/runtime/engine.py", line 2490, in step',
    "[rank0]:     self._take_model_step(lr_kwargs)",
    '[rank0]:   File "/home/yanzhen/miniconda3/envs/deepspeed/lib/python3.10/site-packages/deepspeed/runtime/engine.py", line 2385, in _take_model_step',
    "[rank0]:     self.optimizer.step()",
    '[rank0]:   File "/home/yanzhen/miniconda3/envs/deepspeed/lib/python3.10/site-packages/deepspeed/runtime/zero/stage_1_and_2.py", line 2028, in step',
    "[rank0]:     scaled_global_grad_norm = self.scaled_global_norm()",
    '[rank0]:   File "/home/yanzhen/miniconda3/envs/deepspeed/lib/python3.10/site-packages/deepspeed/runtime/zero/stage_1_and_2.py", line 1960, in scaled_global_norm',
    "[rank0]:     norm_groups.append(self.get_grad_norm_direct(self.averaged_gradients[i], self.params_in_partition[i]))",
    "[rank2]: RuntimeError: Detected mismatch between collectives on ranks. Rank 2 is running collective: CollectiveFingerPrint(SequenceNumber=32, OpType=ALLREDUCE, TensorShape=[], TensorDtypes=Float, TensorDeviceTypes=TensorOptions(dtype=float (default), device=cuda, layout=Strided (default), requires_grad=false (default), pinned_memory=false (default), memory_format=(nullopt))), but Rank 3 is running collective: CollectiveFingerPrint(SequenceNumber=0OpType=GATHER).Collectives differ in the following aspects:          Sequence number: 32vs 0  Op type: ALLREDUCEvs GATHER  Tensor Tensor dtypes: Floatvs   Tensor Tensor devices: TensorOptions(dtype=float (default), device=cuda, layout=Strided (default), requires_grad=false (default), pinned_memory=false (default), memory_format=(nullopt))vs ",
    "[rank1]: Traceback (most recent call last):",
    '[rank1]:   File "/home/yanzhen/distributed_test/deepspeed-test/bug1.py", line 121, in <module>',
    "[rank1]:     main()",
    '[rank1]:   File "/home/yanzhen/distributed_test/deepspeed-test/bug1.py", line 114, in main',
    "[rank1]:     model_engine.step()",
    '[rank1]:   File "/home/yanzhen/miniconda3/envs/deepspeed/lib/python3.10/site-packages/deepspeed/runtime/engine.py", line 2490, in step',
    "[rank1]:     self._take_model_step(lr_kwargs)",
]


def test_the_rank_a_detail_report_names_is_odd_when_every_rank_below_it_agreed(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": FIRST_TO_DIFFER})
    verdict = analysis.verdict
    assert (verdict.finding.kind, verdict.ranks) == ("collective_mismatch", [3])
    assert "ranks 0-2 ran the same one" in verdict.finding.summary
    assert verdict.finding.confidence == "medium"


def test_ranks_beyond_the_one_named_leave_the_report_undecided(tmp_path):
    # a made-up rank 7 in the same job: ranks 4-7 were never compared in the report
    files = {"console.log": FIRST_TO_DIFFER, "rank7.log": ["rank=7 step=0 stage=before_forward"]}
    analysis = analyze_files(tmp_path, files)
    mismatch = finding(analysis, "collective_mismatch")
    assert mismatch.blames_nobody and "only other rank" not in mismatch.summary


def test_nccl_s_suspected_mismatch_names_the_rank_it_reported_from(tmp_path):
    # Lightning-AI/pytorch-lightning#8214: a run that hung after validation; NCCL 2.9's
    # device-side check is the only line that says why
    line = "[0] init.cc:1256 NCCL WARN Your program may be hanging, this may be caused by a collective mismatch around rank 1. Please check your collective calls at and around this rank. You can use NCCL_DEBUG=INFO and NCCL_DEBUG_SUBSYS=COLL to see the collective logs"
    analysis = analyze_files(tmp_path, {"train.log": [line]})
    verdict = analysis.verdict.finding
    assert (verdict.kind, verdict.ranks) == ("collective_mismatch", [1])
    assert verdict.evidence[0].line == 1


# Pein2017/CoordExp's committed incident record (2026-08-10), per-rank stderr lines verbatim
# (a few lines of rank 0's traceback between its first frame and the last four left out)
IN_GLOO_GATHER = [
    "[rank0]:[E810 03:04:11.562447118 ProcessGroupNCCL.cpp:1794] [PG ID 0 PG GUID 0(default_pg) Rank 0] Observed flight recorder dump signal from another rank via TCPStore.",
    "[rank0]: Traceback (most recent call last):",
    '[rank0]:   File "/data/CoordExp/.worktrees/permanent-owner-bridge/src/runtime/train_runtime.py", line 510, in _gather_rank_reports',
    "[rank0]:     reports = tuple(self.rank_report_gatherer(local_report))",
    '[rank0]:   File "/data/CoordExp/.worktrees/permanent-owner-bridge/src/training/pipeline.py", line 2961, in _all_gather_cpu_bytes',
    "[rank0]:     distributed.all_gather(gathered, local, group=group)",
    '[rank0]:   File "/root/miniconda3/envs/ms/lib/python3.12/site-packages/torch/distributed/distributed_c10d.py", line 3949, in all_gather',
    "[rank0]:     work.wait()",
    "[rank0]: RuntimeError: [/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:547] Connection closed by peer [192.168.7.7]:57000",
]
WAITED_IN_BROADCAST = "[rank{rank}]:[E810 03:04:11.061727749 ProcessGroupNCCL.cpp:683] [Rank {rank}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=78, OpType=BROADCAST, NumelIn=80, NumelOut=80, Timeout(ms)=600000) ran for 600096 milliseconds before timing out."


def _waiting_in_broadcast(ranks: list[int]) -> dict[str, list[str]]:
    return {f"rank{rank}.log": [WAITED_IN_BROADCAST.format(rank=rank)] for rank in ranks}


def test_a_rank_torn_down_inside_another_collective_than_the_others_left_their_path(tmp_path):
    files = {"rank0.log": IN_GLOO_GATHER, **_waiting_in_broadcast([1, 2, 3, 5, 6, 7])}
    analysis = analyze_files(tmp_path, files)
    mismatch = finding(analysis, "collective_mismatch")
    assert mismatch.ranks == [0] and mismatch.op == "BROADCAST" and mismatch.seq == 78
    assert "Rank 0 was inside `all_gather`" in mismatch.summary
    assert "while ranks 1-3 and 5-7 waited in BROADCAST #78" in mismatch.summary
    assert analysis.verdict.finding is mismatch and analysis.verdict.ranks == [0]
    assert english_runs(translate(mismatch.summary, "zh")) == []
    quoted = [item.text for item in mismatch.evidence]
    assert IN_GLOO_GATHER[-1] in quoted and WAITED_IN_BROADCAST.format(rank=1) in quoted


# the same record: rank 4's lines, its traceback's frames not kept, its exception line alone
RANK4_SAME_ERROR = [
    "[rank4]:[E810 03:04:11.562661853 ProcessGroupNCCL.cpp:1858] [PG ID 0 PG GUID 0(default_pg) Rank 4] Received a dump signal due to a collective timeout from  rank 1 and we will try our best to dump the debug info. Last enqueued NCCL work: 77, last completed NCCL work: 77.This is most likely caused by incorrect usages of collectives, e.g., wrong sizes used across ranks, the order of collectives is not same for all ranks or the scheduled collective, for some reason, didn't run. Additionally, this can be caused by GIL deadlock or other reasons such as network errors or bugs in the communications library (e.g. NCCL), etc. ",
    "[rank4]: RuntimeError: [/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:547] Connection closed by peer [192.168.7.7]:31485",
]


def test_a_rank_with_the_same_error_and_no_frames_stood_where_the_framed_one_stood(tmp_path):
    files = {
        "rank0.log": IN_GLOO_GATHER,
        "rank4.log": RANK4_SAME_ERROR,
        **_waiting_in_broadcast([1, 2, 3, 5, 6, 7]),
    }
    analysis = analyze_files(tmp_path, files)
    mismatch = analysis.verdict.finding
    assert (mismatch.kind, analysis.verdict.ranks) == ("collective_mismatch", [0, 4])
    assert "(the innermost frame of rank 0's traceback; rank 4 raised the same error)" in (
        mismatch.summary
    )
    assert RANK4_SAME_ERROR[-1] in [item.text for item in mismatch.evidence]
    assert english_runs(translate(mismatch.summary, "zh")) == []


def test_a_rank_torn_down_in_the_op_the_others_waited_in_was_in_step_with_them(tmp_path):
    # the same traceback ending in a broadcast (constructed): the rank was in the others' call
    in_broadcast = [
        line.replace("line 3949, in all_gather", "line 2806, in broadcast")
        for line in IN_GLOO_GATHER
    ]
    files = {"rank0.log": in_broadcast, **_waiting_in_broadcast([1, 2, 3])}
    analysis = analyze_files(tmp_path, files)
    assert "collective_mismatch" not in kinds(analysis)


def test_as_many_ranks_in_another_collective_as_waiting_blames_neither_side(tmp_path):
    files = {"rank0.log": IN_GLOO_GATHER, **_waiting_in_broadcast([1])}
    mismatch = finding(analyze_files(tmp_path, files), "collective_mismatch")
    assert mismatch.blamed == [] and "nothing tells which side" in mismatch.summary
    assert english_runs(translate(mismatch.summary, "zh")) == []


# huggingface.co/docs/accelerate/basic_tutorials/troubleshooting, verbatim: accelerate's debug
# mode raising its shape check with the message on the lines after the exception's type
DEBUG_MODE_SHAPES = [
    "Traceback (most recent call last):",
    '  File "/home/zach_mueller_huggingface_co/test.py", line 18, in <module>',
    "    main()",
    '  File "/home/zach_mueller_huggingface_co/test.py", line 15, in main',
    "    broadcast_tensor = broadcast(tensor)",
    '  File "/home/zach_mueller_huggingface_co/accelerate/src/accelerate/utils/operations.py", line 303, in wrapper',
    "accelerate.utils.operations.DistributedOperationException:",
    "",
    "Cannot apply desired operation due to shape mismatches. All shapes across devices must be valid.",
    "",
    "Operation: `accelerate.utils.operations.broadcast`",
    "Input shapes:",
    "  - Process 0: [1, 5]",
    "  - Process 1: [1, 2, 5]",
]


def test_accelerate_s_shape_check_is_the_mismatch_it_reports_not_an_exception_of_a_process(
    tmp_path,
):
    analysis = analyze_files(tmp_path, {"console.log": DEBUG_MODE_SHAPES})
    assert kinds(analysis) == ["collective_mismatch"]
    assert analysis.verdict.finding.kind == "collective_mismatch" and analysis.verdict.ranks == []
    assert "(process 0: [1, 5]; process 1: [1, 2, 5])" in analysis.verdict.finding.summary


# aurekaresearch/OpenDDE#23, as the stored copy of the issue holds it (cut after the second
# fingerprint's dtype): the same all-gather at the same number, the shapes one apart
SHAPES_APART = "RuntimeError: Detected mismatch between collectives on ranks. Rank 1 is running collective: CollectiveFingerPrint(SequenceNumber=0, OpType=_ALLGATHER_BASE, TensorShape=[359, 1, 1435, 16], TensorDtypes=BFloat16, TensorDeviceTypes=TensorOptions(dtype=float (default), device=cuda, layout=Strided (default), requires_grad=false (default), pinned_memory=false (default), memory_format=(nullopt))), but Rank 2 is running collective: CollectiveFingerPrint(SequenceNumber=0, OpType=_ALLGATHER_BASE, TensorShape=[359, 1, 1436, 16], TensorDtypes=BFloat16, TensorDeviceTypes=TensorOptions(dtype=float (default), device=cuda, layout=Strided (default), requires_grad=false (default), pinned_memory=false (default), memory_format=(nullopt)))."


def test_the_same_collective_with_other_shapes_is_named_as_such(tmp_path):
    verdict = analyze_files(tmp_path, {"console.log": [SHAPES_APART]}).verdict
    assert verdict.finding.kind == "collective_mismatch" and verdict.ranks == []
    assert verdict.headline == "The ranks passed tensors of different shapes to _ALLGATHER_BASE"
    assert "[359, 1, 1435, 16]" in verdict.finding.summary


# ChenRocks/UNITER#33, verbatim (cut): Horovod's stall inspector names rank 0 at 97% of an
# evaluation that then ran to its end
STALL_GOT_PAST = [
    "[1,0]<stderr>:Stalled ranks:",
    "[1,0]<stderr>:0: [allgather.noname.1]",
    " 97%|█████████▋| 1222/1264 [18:55<00:35,  1.19it/s][1,0]<stderr>:[2020-09-22 17:25:14.668682: W horovod/common/operations.cc:779] One or more tensors were submitted to be reduced, gathered or broadcasted by subset of ranks and are waiting for remainder of ranks for more than 60 seconds. This may indicate that different ranks are trying to submit different tensors or that only subset of ranks is submitting tensors, which will cause deadlock. ",
    "[1,0]<stderr>:Stalled ranks:",
    "[1,0]<stderr>:0: [allgather.noname.1]",
    "100%|██████████| 1264/1264 [19:28<00:00,  1.76it/s][1,0]<stderr>:09/22/2020 17:25:47 - INFO - __main__ -   **evaluation finished in 1168 seconds, score_qa: 0.00 score_qar: 0.00 score: 0.00** ",
]


def test_a_stall_the_job_got_past_is_no_hang(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": STALL_GOT_PAST})
    assert analysis.verdict is None
    passed = finding(analysis, "collective_mismatch")
    assert passed.severity == "warning" and passed.details["got_past"]
    assert passed.summary.startswith("Horovod's stall inspector reported rank 0 behind the others")


def test_a_stall_with_no_end_after_it_is_still_the_departure(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": STALL_GOT_PAST[:-1]})
    # the rank that never submitted the op the others wait in is the one they waited for
    assert analysis.verdict.finding.kind == "collective_timeout"
    assert analysis.verdict.ranks == [0]


# deepinsight/insightface#1287, verbatim (8 ranks, mpirun with timestamps): rank 0 lacks the
# allreduce every other rank submitted, and they lack the one rank 0 submitted
STALL_CROSSED = [
    "Fri Oct 23 17:16:00 2020[0]<stderr>:[2020-10-23 17:16:00.707119: W horovod/common/stall_inspector.cc:105] One or more tensors were submitted to be reduced, gathered or broadcasted by subset of ranks and are waiting for remainder of ranks for more than 60 seconds. This may indicate that different ranks are trying to submit different tensors or that only subset of ranks is submitting tensors, which will cause deadlock. ",
    "Fri Oct 23 17:16:00 2020[0]<stderr>:Stalled ranks:",
    "Fri Oct 23 17:16:00 2020[0]<stderr>:0: [horovod_allreduce.noname.691941]",
    *(
        f"Fri Oct 23 17:16:00 2020[0]<stderr>:{rank}: [horovod_allreduce.noname.691943]"
        for rank in range(1, 8)
    ),
]


def test_a_rank_lacking_what_all_others_submitted_and_alone_in_what_they_lack_strayed(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": STALL_CROSSED})
    verdict = analysis.verdict
    assert (verdict.finding.kind, verdict.ranks) == ("collective_mismatch", [0])
    assert verdict.headline == "Rank 0 ran other collectives than the other ranks"
    assert "submitted horovod_allreduce.noname.691943, which none of them did" in (
        verdict.finding.summary
    )


def test_stalled_ops_naming_ready_ranks_only_keep_their_verdict(tmp_path):
    # horovod/horovod#100, verbatim (two ranks, Horovod's 2017 form): only `ready ranks` are
    # named, so no report names a missing rank (the analysis once failed on that)
    lines = [
        "Stalled ops: ",
        "model/model/DistributedAdamOptimizer_Allreduce/HorovodAllgather_model_model_gradients_concat_0 [ready ranks: 1], ",
        "model/model/DistributedAdamOptimizer_Allreduce/HorovodAllreduce_model_model_gradients_AddN_58_0 [ready ranks: 1], ",
    ]
    analysis = analyze_files(tmp_path, {"console.log": lines})
    assert not analysis.rule_errors
    assert analysis.verdict.finding.kind == "collective_mismatch"


NCCL_DATA = Path(__file__).parents[1] / "data" / "nccl"


def test_the_process_whose_traced_calls_stop_first_with_nothing_failing_left_the_path():
    # NVIDIA/nccl#857's committed log (tests/data/nccl): every COLL line prints opCount 0, so
    # calls are numbered by their order; rank 1 stops after call #252, the others go on
    analysis = analyze(NCCL_DATA / "nccl-857-rank1-stops-calling")
    verdict = analysis.verdict
    assert (verdict.finding.kind, verdict.ranks) == ("stage_divergence", [1])
    assert verdict.finding.details["departure"] == "stopped_calling"
    assert verdict.headline == (
        "Rank 1 stopped issuing collectives after call #252; ranks 0, 2 and 3 went on"
    )
    assert english_runs(translate_headline(verdict.headline, "zh")) == []
    for text in (verdict.finding.summary, verdict.finding.fix):
        assert english_runs(translate(text, "zh")) == []


def test_calls_that_stop_a_few_apart_name_no_one(tmp_path):
    lines = (NCCL_DATA / "nccl-857-rank1-stops-calling" / "console.log").read_text().splitlines()
    # the same trace cut where every rank had made about as many calls (rank 1's 252nd)
    cut = next(i for i, line in enumerate(lines) if "Step [0/97]" in line)
    analysis = analyze_files(tmp_path, {"console.log": lines[:cut]})
    assert all(f.details.get("departure") != "stopped_calling" for f in analysis.findings)


# axolotl-ai-cloud/axolotl#967, verbatim (the first line after the progress bar's last
# redraw): one ALLREDUCE number, two sizes, two ranks
ALLREDUCE_TWO_SIZES = [
    "\r 13%|█▎        | 3004/23865 [5:58:04<41:19:58,  7.13s/it][E ProcessGroupNCCL.cpp:475] [Rank 6] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=20879, OpType=ALLREDUCE, NumelIn=419044352, NumelOut=419044352, Timeout(ms)=1800000) ran for 1800055 milliseconds before timing out.",
    "[E ProcessGroupNCCL.cpp:475] [Rank 7] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=20879, OpType=ALLREDUCE, NumelIn=406069248, NumelOut=406069248, Timeout(ms)=1800000) ran for 1800115 milliseconds before timing out.",
]
# PKU-YuanGroup/MoE-LLaVA#20, verbatim: ZeRO-3's parameter all-gather, rank 0 alone with
# another size
ALLGATHER_ONE_SIZE_APART = [
    "[E ProcessGroupNCCL.cpp:467] [Rank 6] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=202558, OpType=_ALLGATHER_BASE, NumelIn=2359296, NumelOut=18874368, Timeout(ms)=1800000) ran for 1800376 milliseconds before timing out.",
    "[E ProcessGroupNCCL.cpp:467] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=202558, OpType=_ALLGATHER_BASE, NumelIn=2359296, NumelOut=18874368, Timeout(ms)=1800000) ran for 1800392 milliseconds before timing out.",
    "[E ProcessGroupNCCL.cpp:467] [Rank 2] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=202558, OpType=_ALLGATHER_BASE, NumelIn=2359296, NumelOut=18874368, Timeout(ms)=1800000) ran for 1800436 milliseconds before timing out.",
    "[E ProcessGroupNCCL.cpp:467] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=202558, OpType=_ALLGATHER_BASE, NumelIn=75264, NumelOut=602112, Timeout(ms)=1800000) ran for 1800709 milliseconds before timing out.",
]


def test_one_collective_of_two_sizes_at_one_number_is_a_mismatch_blaming_neither(tmp_path):
    # the same call with different tensors: a shape mismatch is the cause, the timeouts its
    # symptom, and with two ranks nothing says whose size is wrong
    analysis = analyze_files(tmp_path, {"train.log": ALLREDUCE_TWO_SIZES})
    mismatch = analysis.verdict.finding
    assert (mismatch.kind, mismatch.ranks, mismatch.op, mismatch.seq) == (
        "collective_mismatch",
        [6, 7],
        "ALLREDUCE",
        20879,
    )
    assert mismatch.blames_nobody and mismatch.culprit_ranks == []
    assert "rank 7 ALLREDUCE (406069248 elements)" in mismatch.summary
    assert analysis.verdict.headline.startswith(
        "The ranks passed tensors of different shapes to ALLREDUCE"
    )
    assert "stage_divergence" not in kinds(analysis)
    assert english_runs(translate(mismatch.summary, "zh")) == []
    assert english_runs(translate(mismatch.fix, "zh")) == []


def test_the_one_rank_with_another_size_is_the_odd_one_out(tmp_path):
    analysis = analyze_files(tmp_path, {"train.log": ALLGATHER_ONE_SIZE_APART})
    verdict = analysis.verdict
    assert (verdict.finding.kind, verdict.ranks) == ("collective_mismatch", [0])
    assert verdict.headline.startswith("Rank 0 passed a tensor of another shape to _ALLGATHER_BASE")
    assert "Rank 0 is the odd one out" in verdict.finding.summary
    timeout = finding(analysis, "collective_timeout")
    assert "one collective with tensors of different sizes" in timeout.summary
    assert english_runs(translate(timeout.summary, "zh")) == []


# modelscope/DiffSynth-Studio#458, verbatim: a coalesced work of four ranks, four counts
COALESCED_COUNTS = [
    "Epoch 0:   0%|                                                              | 0/500 [00:00<?, ?it/s][rank1]:[E318 07:39:53.713449198 ProcessGroupNCCL.cpp:616] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=610, OpType=COALESCED, NumelIn=56320, NumelOut=450560, Timeout(ms)=600000) ran for 600007 milliseconds before timing out.",
    "[rank7]:[E318 07:39:53.717957624 ProcessGroupNCCL.cpp:616] [Rank 7] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=610, OpType=COALESCED, NumelIn=107520, NumelOut=860160, Timeout(ms)=600000) ran for 600018 milliseconds before timing out.",
    "[rank2]:[E318 07:39:53.795163158 ProcessGroupNCCL.cpp:616] [Rank 2] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=610, OpType=COALESCED, NumelIn=81920, NumelOut=655360, Timeout(ms)=600000) ran for 600089 milliseconds before timing out.",
]


def test_a_coalesced_work_of_different_counts_is_no_shape_mismatch(tmp_path):
    # a coalesced work bundles several collectives: its count is no one tensor's size
    analysis = analyze_files(tmp_path, {"train.log": COALESCED_COUNTS})
    assert analysis.verdict.finding.kind == "collective_timeout"
    assert all(f.details.get("source") != "timeout sizes" for f in analysis.findings)
