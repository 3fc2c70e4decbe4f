# ruff: noqa: E501 -- test data are verbatim log lines
from __future__ import annotations

from pathlib import Path

from logforensics.api import analyze
from tests.builders import analyze_files, finding, kinds, marks


def test_rank_that_continues_past_backward_is_the_verdict(tmp_path):
    files = {f"rank{r}.log": marks(r, range(10)) for r in (0, 1, 3)}
    files["rank2.log"] = marks(2, range(10), skip={5: ("after_backward", "after_step")})
    analysis = analyze_files(tmp_path, files)
    divergence = finding(analysis, "stage_divergence")
    assert (divergence.ranks, divergence.step, divergence.stage) == ([2], 5, "after_backward")
    assert divergence.details["missed_stages"] == ["after_backward", "after_step"]
    assert analysis.verdict.finding is divergence
    # the evidence shows the rank's last mark before the skip and what it did instead
    cited = {(e.file, e.text.split(" INFO ")[-1]) for e in divergence.evidence}
    assert ("rank2.log", "rank=2 step=5 stage=before_backward") in cited
    assert ("rank2.log", "rank=2 step=6 stage=before_forward") in cited


def test_rank_that_goes_quiet_is_named(tmp_path):
    files = {f"rank{r}.log": marks(r, range(8)) for r in range(3)}
    files["rank3.log"] = marks(3, range(8), stop_after=(4, "before_backward")) + [
        "RuntimeError: something the rank printed after its last mark"
    ]
    analysis = analyze_files(tmp_path, files)
    divergence = finding(analysis, "stage_divergence")
    assert (divergence.ranks, divergence.step, divergence.stage) == ([3], 4, "after_backward")
    assert divergence.details["departure"] == "stopped"
    assert any("something the rank printed" in e.text for e in divergence.evidence)


def test_stage_order_is_learned_not_assumed(tmp_path):
    own = ("load", "fwd", "bwd", "opt")
    files = {f"rank{r}.log": marks(r, range(6), stages=own) for r in (0, 1)}
    files["rank2.log"] = marks(2, range(6), stages=own, skip={3: ("bwd", "opt")})
    analysis = analyze_files(tmp_path, files)
    assert analysis.job.progress.stage_order == own
    divergence = finding(analysis, "stage_divergence")
    assert (divergence.ranks, divergence.step, divergence.stage) == ([2], 3, "bwd")


def test_repeated_step_is_a_departure(tmp_path):
    files = {f"rank{r}.log": marks(r, range(6)) for r in (0, 1, 2)}
    files["rank3.log"] = marks(3, [0, 1, 2, 2, 3, 4, 5])
    divergence = finding(analyze_files(tmp_path, files), "stage_divergence")
    assert divergence.ranks == [3] and divergence.details["departure"] == "repeated"


def test_agreeing_ranks_give_no_divergence(tmp_path):
    files = {f"rank{r}.log": marks(r, range(6)) for r in range(4)}
    analysis = analyze_files(tmp_path, files)
    assert "stage_divergence" not in kinds(analysis)
    assert analysis.verdict is None


def test_per_epoch_step_counters_are_not_mistaken_for_repeats(tmp_path):
    files = {
        f"rank{r}.log": [
            line + f" epoch={epoch}" for epoch in (0, 1) for line in marks(r, range(4))
        ]
        for r in range(3)
    }
    assert "stage_divergence" not in kinds(analyze_files(tmp_path, files))


def test_marks_copied_into_a_launcher_console_are_not_counted_twice(tmp_path):
    files = {f"rank{r}.log": marks(r, range(5)) for r in range(2)}
    files["launcher.log"] = [
        f"[default{r}]:{line}" for r in range(2) for line in marks(r, range(5))
    ]
    assert "stage_divergence" not in kinds(analyze_files(tmp_path, files))


# modelscope/FunASR#2317, verbatim: at one SeqNum rank 0 is in a gradient-sized ALLREDUCE,
# rank 1 in a one-element one after announcing its validation
LEFT_FOR_VALIDATION = [
    "[rank0]:[E ProcessGroupNCCL.cpp:563] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=3437, OpType=ALLREDUCE, NumelIn=4311252, NumelOut=4311252, Timeout(ms)=600000) ran for 600057 milliseconds before timing out.",
    "[rank1]:[E ProcessGroupNCCL.cpp:563] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=3437, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600076 milliseconds before timing out.",
    "[2024-12-18 16:44:15,305][root][INFO] - Validate epoch: 1, rank: 1",
]
# ecmwf/anemoi-core#1064, verbatim: both sides in one-element collectives
BOTH_SMALL = [
    "[rank0]:[E420 19:44:35.569754537 ProcessGroupNCCL.cpp:632] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=4832284, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for 1800051 milliseconds before timing out.",
    "[rank5]:[E420 19:44:36.136978018 ProcessGroupNCCL.cpp:632] [Rank 5] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=4832284, OpType=BROADCAST, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for 1800059 milliseconds before timing out.",
]


def test_the_side_that_announced_a_phase_of_its_own_left_the_path(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": LEFT_FOR_VALIDATION})
    desync = analysis.verdict.finding
    assert (desync.kind, analysis.verdict.ranks) == ("stage_divergence", [1])
    assert "announced a phase of its own before it (Validate epoch" in desync.summary
    assert desync.confidence == "low"


def test_a_one_element_collective_against_a_gradient_sized_one_left_the_step(tmp_path):
    timeouts = [line for line in LEFT_FOR_VALIDATION if "Watchdog" in line]
    analysis = analyze_files(tmp_path, {"console.log": timeouts})
    assert analysis.verdict.ranks == [1]
    assert "had left the training step" in analysis.verdict.finding.summary


def test_two_one_element_collectives_tell_no_side(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": BOTH_SMALL})
    desync = next(f for f in analysis.findings if f.kind == "stage_divergence")
    assert desync.blamed == []


def test_processes_short_at_a_new_group_s_store_barrier_took_another_path(tmp_path):
    from tests.parsers.test_world_size import OPEN_LLAMA_WAITS

    analysis = analyze_files(tmp_path, {"train.log": OPEN_LLAMA_WAITS})
    short = analysis.verdict.finding
    assert (short.kind, short.ranks, short.confidence) == ("stage_divergence", [], "low")
    assert short.details["arrived"] == 7 and short.details["waiting"] == [2, 7]
    assert analysis.verdict.headline.startswith(
        "One process never reached the store barrier of a new process group"
    )
    assert "wandb.init" in short.fix


def test_a_store_barrier_completed_later_is_no_finding(tmp_path):
    from tests.parsers.test_world_size import OPEN_LLAMA_WAITS, SUB_GROUP_DONE

    analysis = analyze_files(tmp_path, {"train.log": [*OPEN_LLAMA_WAITS, SUB_GROUP_DONE]})
    assert analysis.verdict is None


# wenet-e2e/wenet#990, verbatim: validation prints of four ranks, each at its own pace (the
# loop holds no collective), cut out of a longer log
WENET_CV = [
    "2022/03/24 13:46:23 2022-03-24 13:46:23,117 DEBUG CV Batch 5/3700 loss 74.450745 loss_att 79.250183 loss_ctc 63.252052 history loss 58.864828 rank 3",
    "2022/03/24 13:46:25 2022-03-24 13:46:25,233 DEBUG CV Batch 5/3700 loss 74.450745 loss_att 79.250183 loss_ctc 63.252052 history loss 58.864828 rank 2",
    "2022/03/24 13:46:27 2022-03-24 13:46:27,597 DEBUG CV Batch 5/3300 loss 38.618885 loss_att 41.560642 loss_ctc 31.754784 history loss 58.528153 rank 1",
    "2022/03/24 13:46:28 2022-03-24 13:46:28,028 DEBUG CV Batch 5/3800 loss 30.252905 loss_att 31.613735 loss_ctc 27.077635 history loss 58.772122 rank 3",
    "2022/03/24 13:46:28 2022-03-24 13:46:28,462 DEBUG CV Batch 5/3700 loss 74.450745 loss_att 79.250183 loss_ctc 63.252052 history loss 58.864828 rank 0",
    "2022/03/24 13:46:30 2022-03-24 13:46:30,107 DEBUG CV Batch 5/3800 loss 30.252905 loss_att 31.613735 loss_ctc 27.077635 history loss 58.772122 rank 2",
    "2022/03/24 13:46:32 2022-03-24 13:46:32,519 DEBUG CV Batch 5/3400 loss 26.543968 loss_att 28.197788 loss_ctc 22.685053 history loss 58.660158 rank 1",
    "2022/03/24 13:46:32 2022-03-24 13:46:32,702 DEBUG CV Batch 5/3900 loss 15.008497 loss_att 16.364504 loss_ctc 11.844481 history loss 58.472115 rank 3",
]


def test_ranks_counting_at_their_own_pace_show_no_departure(tmp_path):
    # rank 1 counts 3300, 3400 while the others count 3700-3900 in the same console: four
    # print intervals apart, no collective keeps these counters together
    analysis = analyze_files(tmp_path, {"train.log": WENET_CV})
    assert "stage_divergence" not in kinds(analysis)
    assert analysis.verdict is None
    # the same prints a step apart at most would be read
    in_step = [line.replace("5/3300", "5/3700").replace("5/3400", "5/3800") for line in WENET_CV]
    assert "stage_divergence" in kinds(analyze_files(tmp_path / "b", {"train.log": in_step}))


def test_mixed_collectives_with_no_side_to_blame_leave_the_timeout_the_verdict():
    # NVIDIA/nccl#1409 (tests/data/field_samples): rank 7 in a BROADCAST and rank 3 in an
    # ALLREDUCE at one sequence number, no third rank to say which side left: the desync is
    # told, but the verdict is the timeout as reported, as the sample's truth orders them
    case = (
        Path(__file__).resolve().parents[1]
        / "data"
        / "field_samples"
        / "nccl-1409-epoch-end-mixed-ops"
    )
    analysis = analyze(case)
    verdict = analysis.verdict
    assert verdict.finding.kind == "collective_timeout" and verdict.finding.ranks == [3, 7]
    assert verdict.headline.endswith("they were in different collectives at that point")
    desync = finding(analysis, "stage_divergence")
    assert (desync.severity, desync.ranks, desync.culprit_ranks) == ("warning", [3, 7], [])


# DeepGraphLearning/GearNet#13: torch 1.10's watchdog, which numbers no collective; the
# reporter's paste keeps its line numbers in brackets
GEARNET_UNNUMBERED_TIMEOUTS = [
    "[219013] [E ProcessGroupNCCL.cpp:587] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(OpType=_ALLGATHER_BASE, Timeout(ms)=1800000) ran for 1804901 milliseconds before timing out.",
    "[219014] [E ProcessGroupNCCL.cpp:587] [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(OpType=BROADCAST, Timeout(ms)=1800000) ran for 1805974 milliseconds before timing out.",
    "[219015] [E ProcessGroupNCCL.cpp:587] [Rank 2] Watchdog caught collective operation timeout: WorkNCCL(OpType=BROADCAST, Timeout(ms)=1800000) ran for 1805985 milliseconds before timing out.",
]


def test_unnumbered_timeouts_in_different_collectives_name_the_odd_one_out(tmp_path):
    # each rank timed out in one collective, with no sequence number to line them up: rank 0
    # alone was in another collective than the majority (this once failed the rule outright)
    analysis = analyze_files(tmp_path, {"train.log": GEARNET_UNNUMBERED_TIMEOUTS})
    desync = finding(analysis, "stage_divergence")
    assert (desync.ranks, desync.culprit_ranks, desync.seq) == ([0, 2, 3], [0], None)
    assert desync.summary.startswith("Each rank timed out in a single collective, not the same")
    assert analysis.verdict.finding is desync
    assert not analysis.rule_errors
    assert analysis.verdict.headline.startswith(
        "Rank 0 ran _ALLGATHER_BASE where the others ran BROADCAST"
    )
