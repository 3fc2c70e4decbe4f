from __future__ import annotations

from logforensics.i18n import translate
from tests.builders import analyze_files, finding, kinds, marks
from tests.parsers.test_data_end import UNEVEN_WORKLOAD
from tests.test_i18n import english_runs


def test_print_of_sizes_names_the_short_rank_and_the_step_it_never_reached(tmp_path):
    files = {f"rank{r}.log": marks(r, range(12)) for r in range(3)}
    files["rank0.log"] = ["loader sizes: [12, 12, 12, 11]"] + files["rank0.log"]
    files["rank3.log"] = marks(3, range(11))
    analysis = analyze_files(tmp_path, files)
    mismatch = finding(analysis, "loader_size_mismatch")
    assert (mismatch.ranks, mismatch.step) == ([3], 11)
    assert mismatch.evidence[0].text == "loader sizes: [12, 12, 12, 11]"
    assert "drop_last=True" in mismatch.fix
    # it explains the rank that went quiet at the same point: it is the verdict
    assert analysis.verdict.finding is mismatch
    assert finding(analysis, "stage_divergence").role == "context"


def test_per_rank_length_prints(tmp_path):
    files = {f"rank{r}.log": [f"rank={r} loader_len={100 if r != 1 else 99}"] for r in range(4)}
    mismatch = finding(analyze_files(tmp_path, files), "loader_size_mismatch")
    assert mismatch.ranks == [1]


def test_steps_per_epoch_when_nothing_is_printed(tmp_path):
    files = {
        f"rank{r}.log": [line + " epoch=0" for line in marks(r, range(5 if r != 2 else 4))]
        for r in range(3)
    }
    mismatch = finding(analyze_files(tmp_path, files), "loader_size_mismatch")
    assert mismatch.ranks == [2] and mismatch.confidence == "medium"


def test_equal_sizes_are_fine(tmp_path):
    files = {
        "rank0.log": ["loader sizes: [5, 5]"] + marks(0, range(5)),
        "rank1.log": marks(1, range(5)),
    }
    assert "loader_size_mismatch" not in kinds(analyze_files(tmp_path, files))


# lifeiteng/vall-e#86, verbatim (icefall's header names rank and world): ranks 4-7 reach the
# end of their data and start validation; ranks 0-3, with batches left, write nothing more
DATA_ENDS = [
    "2023-04-13 16:00:05,621 INFO [trainer.py:650] (5/8) Reaches end of dataloader.",
    "2023-04-13 16:00:05,622 INFO [trainer.py:626] (5/8) Computing validation loss",
    "2023-04-13 16:00:05,629 INFO [trainer.py:650] (7/8) Reaches end of dataloader.",
    "2023-04-13 16:00:05,630 INFO [trainer.py:626] (7/8) Computing validation loss",
    "2023-04-13 16:00:05,636 INFO [trainer.py:650] (4/8) Reaches end of dataloader.",
    "2023-04-13 16:00:05,637 INFO [trainer.py:626] (4/8) Computing validation loss",
    "2023-04-13 16:00:05,659 INFO [trainer.py:650] (6/8) Reaches end of dataloader.",
    "2023-04-13 16:00:05,660 INFO [trainer.py:626] (6/8) Computing validation loss",
]


def test_ranks_whose_data_ended_while_the_rest_of_the_world_never_said_so(tmp_path):
    analysis = analyze_files(tmp_path, {"train.log": DATA_ENDS})
    uneven = finding(analysis, "loader_size_mismatch")
    assert uneven.ranks == [4, 5, 6, 7]
    assert uneven.details["ranks_still_running"] == [0, 1, 2, 3]
    assert analysis.verdict.ranks == [4, 5, 6, 7]
    assert "drop_last=True" in uneven.fix


def test_the_others_writing_on_after_the_end_of_data_is_no_uneven_loader(tmp_path):
    # rank 0 goes on to validation too (constructed from vall-e#86's line)
    later = DATA_ENDS[1].replace("(5/8)", "(0/8)").replace("16:00:05,622", "16:00:06,000")
    analysis = analyze_files(tmp_path, {"train.log": [*DATA_ENDS, later]})
    assert "loader_size_mismatch" not in kinds(analysis)


def test_each_rank_s_own_count_of_steps_it_will_run(tmp_path):
    # GMISWE/tinker-cloud#30, verbatim: three samples over two data-parallel ranks, each rank
    # deriving its steps from its own share; rank 1 runs one step, rank 0 two
    lines = [
        "validators.py:64  ALLOW_PARTIAL_BATCHES enabled: proceeding with 3 samples (dp=2).",
        "                  Miles will rely on dynamic global batch scaling.",
        "rank0  data.py:462  global_batch_size=3, num_local_samples=2, num_steps_per_rollout=2",
        "rank1  data.py:462  global_batch_size=3, num_local_samples=1, num_steps_per_rollout=1",
    ]
    analysis = analyze_files(tmp_path, {"console.log": lines})
    mismatch = analysis.verdict.finding
    assert (mismatch.kind, analysis.verdict.ranks) == ("loader_size_mismatch", [1])
    assert "(per-rank `num_steps_per_rollout` prints): rank 1 has 1 batch while" in mismatch.summary


def test_bars_of_two_loaders_are_not_one_loader_of_uneven_length(tmp_path):
    # modelscope/ms-swift#8193, verbatim: a `Train` bar of 7 batches and a `Val` bar of 9, on
    # two processes: two loaders, each of even length
    bars = [
        "Train: 100%|██████████| 7/7 [1:01:03<00:00, 433.95s/it]",
        "Val: 100%|██████████| 9/9 [09:26<00:00, 67.91s/it]",
        "Train: 100%|██████████| 7/7 [1:01:03<00:00, 433.95s/it]",
        "Val: 100%|██████████| 9/9 [09:26<00:00, 62.92s/it]",
    ]
    assert "loader_size_mismatch" not in kinds(analyze_files(tmp_path, {"console.log": bars}))
    # one loader's bars that differ by a batch, the longer one never at its end, still are
    uneven = [bars[0], bars[2].replace("100%", " 88%").replace("7/7", "7/8")]
    assert "loader_size_mismatch" in kinds(analyze_files(tmp_path / "uneven", {"c.log": uneven}))


def test_uneven_bars_that_all_reached_their_end_held_nobody_up(tmp_path):
    # Pein2017/CoordExp's committed control_smallfrac_launch.log, lines 1017-1018 and
    # 1021-1022 verbatim: a healthy run's three data-parallel vLLM workers with 10, 11 and 11
    # prompts each, every bar at its end
    bars = [
        "100%|██████████| 10/10 [00:12<00:00,  1.26s/it]",
        "100%|██████████| 11/11 [00:12<00:00,  1.14s/it]",
        "100%|██████████| 10/10 [00:13<00:00,  1.40s/it]",
        "100%|██████████| 11/11 [00:13<00:00,  1.27s/it]",
    ]
    analysis = analyze_files(tmp_path, {"launch.log": bars})
    assert "loader_size_mismatch" not in kinds(analysis) and analysis.verdict is None


def test_ranks_that_report_an_uneven_workload_blame_no_rank_for_it(tmp_path):
    analysis = analyze_files(tmp_path, {"output.log": UNEVEN_WORKLOAD})
    verdict = analysis.verdict
    assert (verdict.finding.kind, verdict.ranks) == ("loader_size_mismatch", [])
    assert verdict.finding.ranks == [5, 6]
    assert verdict.headline.startswith("The processes' DataLoaders have different lengths")
    assert "drop_last=True" in verdict.finding.fix


def test_the_rank_join_says_exhausted_its_inputs_ran_out_of_batches(tmp_path):
    # sample_logs/join_early_termination (a real run here), the two exceptions verbatim
    files = {
        "worker_3.log": ["[rank3]: RuntimeError: Rank 3 exhausted all inputs."],
        "worker_0.log": [
            "[rank0]: RuntimeError: Detected at least one rank that exhausted inputs. "
            "Throwing across all ranks."
        ],
    }
    verdict = analyze_files(tmp_path, files).verdict
    assert (verdict.finding.kind, verdict.ranks) == ("loader_size_mismatch", [3])
    assert "throw_on_early_termination" in verdict.finding.fix
    assert verdict.finding.details["ranks_with_batches_left"] == [0]
    assert verdict.headline.endswith("; Join raised on every rank")


def test_the_rank_the_monitored_barrier_names_is_the_one_whose_batches_ran_out(tmp_path):
    # FunAudioLLM/CosyVoice#180, verbatim: rank 0's barrier names rank 2, rank 3 says uneven
    lines = [
        "[E ProcessGroupGloo.cpp:138] Rank 3 successfully reached monitoredBarrier, but received errors while waiting for send/recv from rank 0. Please check rank 0 logs for faulty rank.",
        "[E ProcessGroupGloo.cpp:138] [Rank 0]: Rank 2 failed to pass monitoredBarrier in 30000 ms",
        "2024-07-21 00:11:29,529 INFO Detected uneven workload distribution: Rank 3 successfully reached monitoredBarrier, but received errors while waiting for send/recv from rank 0. Please check rank 0 logs for faulty rank.",
    ]
    verdict = analyze_files(tmp_path, {"output.log": lines}).verdict
    assert (verdict.finding.kind, verdict.ranks) == ("loader_size_mismatch", [2])
    assert "names rank 2 as the one that never arrived" in verdict.finding.summary


def test_a_size_too_large_to_be_a_count_is_no_count(tmp_path):
    # found by tests/robustness/test_properties.py (hypothesis, a newer release's examples):
    # 2**70 in the all-ranks print does not fit a count; the rule reads nothing from it
    # instead of comparing a missing number
    lines = [
        "loader sizes: [1180591620717411303424, 0, 0]",
        "rank=0 step=0 stage=fwd",
        "rank=0 step=15 stage=fwd",
    ]
    analysis = analyze_files(
        tmp_path, {"rank0.log": lines, "rank15.log": ["rank=15 step=0 stage=fwd"]}
    )
    assert "loader_size_mismatch" not in kinds(analysis)


# ltgoslo/gpt-bert#4, verbatim as posted (each line an inline code span there; the spaces at
# the ends kept): eight processes print their first epoch's steps, one of them 506
GPT_BERT_STEPS = [
    " The dataset is: <dataset.MaskedDataset object at 0x147bfeb00890> and the number of steps are: 72",
    "The dataset is: <dataset.MaskedDataset object at 0x14d0c06da930> and the number of steps are: 72 ",
    "The dataset is: <dataset.MaskedDataset object at 0x14c06f38ea80> and the number of steps are: 72",
    "The dataset is: <dataset.MaskedDataset object at 0x1491c3140d40> and the number of steps are: 72 ",
    "The dataset is: <dataset.MaskedDataset object at 0x14850f6f6690> and the number of steps are: 72",
    "The dataset is: <dataset.MaskedDataset object at 0x1467b38f4890> and the number of steps are: 72 ",
    "The dataset is: <dataset.MaskedDataset object at 0x14a4d4e9d190> and the number of steps are: 72",
    "The dataset is: <dataset.CausalDataset object at 0x14f5593b1f10> and the number of steps are: 506",
]


def test_counts_printed_together_by_processes_that_name_no_rank_differ(tmp_path):
    verdict = analyze_files(tmp_path, {"console.log": GPT_BERT_STEPS}).verdict
    assert verdict.finding.kind == "loader_size_mismatch" and verdict.ranks == []
    assert "72, 72, 72, 72, 72, 72, 72, 506 batches" in verdict.finding.summary
    assert "The prints do not say which rank is which." in verdict.finding.summary


def test_counts_printed_apart_may_be_one_process_s_epochs(tmp_path):
    # the same prints, training lines between them: one process epoch after epoch, as likely
    lines = [GPT_BERT_STEPS[0], "epoch 0 done", GPT_BERT_STEPS[7]]
    analysis = analyze_files(tmp_path, {"console.log": lines})
    assert "loader_size_mismatch" not in kinds(analysis)


# EleutherAI/sparsify#68, verbatim ("appears to complete, but the program just hangs"): rank 0's
# bar one step short of its total, the other three ranks' communicators torn down as they exit
LEFT_BEFORE_THE_LAST_STEP = [
    "Training: 100%|█████████▉| 13906/13908 [1:58:02<00:01,  1.93it/s]",
    "Training: 100%|█████████▉| 13907/13908 [1:58:03<00:00,  1.96it/s]8429a8714ae4447ea308158691345c13000002:359:394 [3] NCCL INFO [Service thread] Connection closed by localRank 3",
    "8429a8714ae4447ea308158691345c13000002:358:395 [2] NCCL INFO [Service thread] Connection closed by localRank 2",
    "8429a8714ae4447ea308158691345c13000002:357:396 [1] NCCL INFO [Service thread] Connection closed by localRank 1",
    "8429a8714ae4447ea308158691345c13000002:359:940 [3] NCCL INFO comm 0xcf44370 rank 3 nranks 4 cudaDev 3 busId 400000 - Abort COMPLETE",
    "8429a8714ae4447ea308158691345c13000002:358:941 [2] NCCL INFO comm 0xbf5d0e0 rank 2 nranks 4 cudaDev 2 busId 300000 - Abort COMPLETE",
    "8429a8714ae4447ea308158691345c13000002:357:942 [1] NCCL INFO comm 0xc7602b0 rank 1 nranks 4 cudaDev 1 busId 200000 - Abort COMPLETE",
]


def test_ranks_that_exited_while_the_bar_was_short_of_its_total_ran_out_first(tmp_path):
    verdict = analyze_files(tmp_path, {"console.log": LEFT_BEFORE_THE_LAST_STEP}).verdict
    assert verdict.finding.kind == "loader_size_mismatch" and verdict.ranks == [1, 2, 3]
    assert "13,907 of 13,908" in verdict.finding.summary
    assert verdict.headline == "Ranks 1-3 ran out of batches before the others (uneven DataLoaders)"
    assert english_runs(translate(verdict.finding.summary, "zh")) == []


def test_ranks_that_exited_after_the_bar_reached_its_total_are_a_run_that_ended(tmp_path):
    ended = [
        LEFT_BEFORE_THE_LAST_STEP[0].replace("13906/13908", "13908/13908"),
        *LEFT_BEFORE_THE_LAST_STEP[2:],
    ]
    assert "loader_size_mismatch" not in kinds(analyze_files(tmp_path, {"console.log": ended}))


def test_ranks_that_exited_in_files_of_their_own_are_read_alike(tmp_path):
    # the same lines as per-rank files would hold them: the bar in rank 0's, each rank's
    # teardown in its own
    files = {
        "rank0.log": LEFT_BEFORE_THE_LAST_STEP[:1],
        **{f"rank{r}.log": [LEFT_BEFORE_THE_LAST_STEP[7 - r]] for r in (1, 2, 3)},
    }
    verdict = analyze_files(tmp_path, files).verdict
    assert verdict.finding.kind == "loader_size_mismatch" and verdict.ranks == [1, 2, 3]
