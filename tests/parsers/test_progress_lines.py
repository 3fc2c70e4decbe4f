"""Progress read from line templates (no stage marks), on lines of real runs made here."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from logforensics.i18n import translate, translate_headline
from tests.builders import analyze_files, finding, kinds, marks, parsed_by
from tests.conftest import SAMPLE_LOGS
from tests.test_i18n import english_runs

THREADS = Path(__file__).parent.parent / "data" / "threads"


def sample_lines(scenario: str, pattern: str) -> list[str]:
    path = next((SAMPLE_LOGS / scenario / "logs").glob(pattern))
    return path.read_text().splitlines()


def test_megatron_iteration_lines_are_progress_at_their_iteration():
    # sample_logs/megatron_style_skip, rank 0's stdout, verbatim: Megatron's own format has its
    # own parser (parsers/megatron_progress.py), which reads it from the first line
    lines = sample_lines("megatron_style_skip", "torchrun/*/attempt_0/0/stdout.log")
    found = parsed_by("megatron_progress", lines)
    assert set(found.get_column("stage")) == {"iteration"}
    assert found.get_column("step").to_list()[:4] == [0, 1, 2, 3]
    assert set(found.get_column("rank")) == {0}  # ` [Rank 0] iteration ...`
    assert parsed_by("progress_lines", lines).is_empty()


def test_a_rankless_step_line_takes_its_rank_from_the_torchrun_prefix():
    # sample_logs/tee_step_lines_stall/logs/launcher.log, verbatim ([default<N>]: prefixes)
    lines = [
        line for line in sample_lines("tee_step_lines_stall", "launcher.log") if "step " in line
    ]
    found = parsed_by("progress_lines", lines)
    ranks = found.group_by("local_rank").agg(pl.col("step").max()).sort("local_rank")
    assert ranks.rows() == [(0, 10), (1, 10), (2, 9), (3, 10)]


def test_a_metric_that_changes_sign_keeps_the_line_s_template():
    # rwth-i6/returnn#1621, verbatim: `min_wer` goes from negative to positive; rank 0's device
    lines = [
        "ep 1 dev eval, step 97, min_wer -0.688, ce 0.859, fer 0.977, mem_usage:cuda:0 1.6GB",
        "ep 1 dev eval, step 98, min_wer -0.187, ce 0.469, fer 0.964, mem_usage:cuda:0 1.6GB",
        "ep 1 dev eval, step 99, min_wer 0.083, ce 0.286, fer 0.969, mem_usage:cuda:0 1.6GB",
    ]
    found = parsed_by("progress_lines", lines)
    assert found.get_column("step").to_list() == [97, 98, 99]


def test_a_number_that_names_a_process_or_a_device_is_no_progress():
    # Lightning-AI/pytorch-lightning#8139, verbatim (indented as pasted)
    lines = [
        "  LOCAL_RANK: 0 - CUDA_VISIBLE_DEVICES: [0,1,2,3]",
        "  LOCAL_RANK: 1 - CUDA_VISIBLE_DEVICES: [0,1,2,3]",
        "  LOCAL_RANK: 2 - CUDA_VISIBLE_DEVICES: [0,1,2,3]",
    ]
    assert parsed_by("progress_lines", lines).is_empty()


def test_prints_that_share_a_line_are_read_apart():
    # sample_logs/free_form_device_skip: two ranks' prints with no newline between them
    lines = [
        "iter: step 0, loss: 1.0000, lr: 0.001, mem_usage:cuda:1 7.50GBiter: step 0, loss: 1.0000, lr: 0.001, mem_usage:cuda:2 7.50GB",
        "iter: step 0, loss: 1.0000, lr: 0.001, mem_usage:cuda:0 7.50GB",
        "iter: step 1, loss: 0.5000, lr: 0.001, mem_usage:cuda:0 7.51GB",
        "iter: step 1, loss: 0.5000, lr: 0.001, mem_usage:cuda:2 7.51GB",
        "iter: step 1, loss: 0.5000, lr: 0.001, mem_usage:cuda:1 7.51GB",
        "iter: step 2, loss: 0.3333, lr: 0.001, mem_usage:cuda:1 7.52GB",
        "iter: step 2, loss: 0.3333, lr: 0.001, mem_usage:cuda:2 7.52GB",
        "iter: step 2, loss: 0.3333, lr: 0.001, mem_usage:cuda:0 7.52GB",
    ]
    events = parsed_by("progress_lines", lines, file="launcher.log")
    per_device = events.group_by("cuda_dev").agg(pl.col("step").sort()).sort("cuda_dev")
    assert per_device.rows() == [(0, [0, 1, 2]), (1, [0, 1, 2]), (2, [0, 1, 2])]
    # one console, no host: the device tag tells the ranks apart, and the report says so
    assert set(events.get_column("rank_from")) == {"device"}


def test_a_counter_printed_twice_per_step_is_still_the_step():
    # sample_logs/free_form_thread_skip: two commands per training step, rank named `thread`
    lines = [
        f"This is thread 1 with training step {s} command {c}" for s in range(4) for c in (1, 2)
    ]
    found = parsed_by("progress_lines", lines)
    assert found.get_column("step").to_list() == [0, 0, 1, 1, 2, 2, 3, 3]
    assert set(found.get_column("stage")) == {"training step"}
    assert set(found.get_column("rank")) == {1}


def test_collective_milestones_are_read_without_a_counter(tmp_path):
    # sample_logs/free_form_thread_skip/logs/launcher.log, verbatim (rank named by the number)
    lines = [
        "past barrier for 1past barrier for 2",
        "",
        "past barrier for 0",
        "past all_reduce for 1",
        "past all_reduce for 2",
        "past all_reduce for 0",
    ]
    found = parsed_by("progress_lines", lines)
    assert sorted(found.select("stage", "rank").rows()) == [
        ("past all_reduce for", 0),
        ("past all_reduce for", 1),
        ("past all_reduce for", 2),
        ("past barrier for", 0),
        ("past barrier for", 1),
        ("past barrier for", 2),
    ]


# pytorch/pytorch#43345, the output in the issue, verbatim: both ranks print a line at each
# collective; rank 1 (placed on rank 0's GPU by the script) never prints `past all_reduce`
ALL_REDUCE_NEVER_PASSED = [
    "init nccl 1, 2",
    "init nccl 0, 2",
    "dist init for 1",
    "dist init for 0",
    "past barrier for 0",
    "past barrier for 1",
    "past all_reduce for 0",
]


def test_a_collective_print_only_one_rank_reached_is_a_milestone_of_its_family():
    found = parsed_by("progress_lines", ALL_REDUCE_NEVER_PASSED)
    assert sorted(found.select("stage", "rank").rows()) == [
        ("past all_reduce for", 0),
        ("past barrier for", 0),
        ("past barrier for", 1),
    ]


def test_the_rank_that_never_passed_a_collective_the_other_passed_is_told(tmp_path):
    verdict = analyze_files(tmp_path, {"console.log": ALL_REDUCE_NEVER_PASSED}).verdict
    assert verdict.finding.kind == "stage_divergence" and verdict.finding.ranks == [1]
    # two ranks, one on each side: a guess that blames neither, said at the milestone
    assert verdict.ranks == []
    assert verdict.headline == "Rank 1 stopped before `past all_reduce for` while rank 0 went on"


# pytorch/pytorch#130102, the output in the issue, verbatim: each rank prints its rank and its
# subgroup before a subgroup barrier, then `done`; ranks 1 and 3 never print `done`
SUBGROUP_BARRIER = [
    "0 before barrier: [0, 3]",
    "3 before barrier: [0, 3]",
    "1 before barrier: [1, 2]",
    "2 before barrier: [1, 2]",
    "0 done",
    "2 done",
]


def test_a_phase_print_is_a_milestone_of_the_rank_its_changing_number_names():
    found = parsed_by("progress_lines", SUBGROUP_BARRIER)
    # the first number is the printer's (it differs on every line), not the group's last
    assert sorted(found.select("stage", "rank").rows()) == [
        ("before barrier", 0),
        ("before barrier", 1),
        ("before barrier", 2),
        ("before barrier", 3),
        ("done", 0),
        ("done", 2),
    ]


def test_ranks_that_never_ended_a_phase_others_ended_are_told(tmp_path):
    verdict = analyze_files(tmp_path, {"console.log": SUBGROUP_BARRIER}).verdict
    assert verdict.finding.kind == "stage_divergence" and verdict.finding.ranks == [1, 3]
    assert verdict.headline == "Ranks 1 and 3 stopped before `done` while ranks 0 and 2 went on"
    assert "stopped on their own" in verdict.finding.summary


# sgl-project/sglang#99, the description's console, verbatim (up to rank 1's `end.`; the router's
# traceback follows): each tensor-parallel rank brackets its weight loading; rank 0 never ends
WEIGHTS_NEVER_LOADED = [
    "server started on [0.0.0.0]:10010",
    "server started on [0.0.0.0]:10011",
    "accepted ('127.0.0.1', 51884) with fd 6",
    "welcome ('127.0.0.1', 51884)",
    "accepted ('127.0.0.1', 40934) with fd 6",
    "welcome ('127.0.0.1', 40934)",
    "Rank 1: load weight begin.",
    "quant_config: AWQConfig(weight_bits=4, group_size=128, zero_point=True)",
    "Rank 0: load weight begin.",
    "quant_config: AWQConfig(weight_bits=4, group_size=128, zero_point=True)",
    "Rank 1: load weight end.",
]


def test_the_end_of_a_phase_one_rank_alone_reached_is_a_milestone_of_its_begin_s_family():
    found = parsed_by("progress_lines", WEIGHTS_NEVER_LOADED)
    assert sorted(found.select("stage", "rank").rows()) == [
        ("load weight begin.", 0),
        ("load weight begin.", 1),
        ("load weight end.", 1),
    ]


# wenet-e2e/wenet#1895, the console in the issue, verbatim: eight DeepSpeed ranks report their
# first training batch, then only ranks 6 and 7 print `before CV`, and the job hangs
MINORITY_WENT_AHEAD = [
    "2023-06-30 16:50:40,885 DEBUG TRAIN Batch 0/0 loss 45.301559 loss_att 20.047174 loss_ctc 104.228462 lr 0.00000002 rank 6",
    "2023-06-30 16:50:40,885 DEBUG TRAIN Batch 0/0 loss 46.355526 loss_att 21.453304 loss_ctc 104.460709 lr 0.00000002 rank 1",
    "2023-06-30 16:50:40,885 DEBUG TRAIN Batch 0/0 loss 44.419464 loss_att 18.688032 loss_ctc 104.459473 lr 0.00000002 rank 5",
    "2023-06-30 16:50:40,885 DEBUG TRAIN Batch 0/0 loss 49.367683 loss_att 24.666615 loss_ctc 107.003494 lr 0.00000002 rank 3",
    "2023-06-30 16:50:40,885 DEBUG TRAIN Batch 0/0 loss 48.105114 loss_att 20.708897 loss_ctc 112.029617 lr 0.00000002 rank 7",
    "2023-06-30 16:50:40,885 DEBUG TRAIN Batch 0/0 loss 46.844284 loss_att 21.519693 loss_ctc 105.934982 lr 0.00000002 rank 2",
    "2023-06-30 16:50:40,885 DEBUG TRAIN Batch 0/0 loss 45.000580 loss_att 20.097860 loss_ctc 103.106926 lr 0.00000002 rank 4",
    "2023-06-30 16:50:40,885 DEBUG TRAIN Batch 0/0 loss 40.835991 loss_att 18.077282 loss_ctc 93.939636 lr 0.00000002 rank 0",
    "2023-06-30 16:50:57,330 INFO before CV device 7",
    "2023-06-30 16:50:57,333 INFO before CV device 6",
]


def test_a_training_report_each_rank_prints_once_is_a_milestone_named_by_its_words():
    found = parsed_by("progress_lines", MINORITY_WENT_AHEAD)
    assert sorted(found.select("stage", "rank").unique().rows()) == [
        *(("TRAIN Batch", rank) for rank in range(8)),
        ("before CV device", 6),
        ("before CV device", 7),
    ]


def test_a_few_ranks_that_went_on_to_a_phase_the_others_never_reached_are_told(tmp_path):
    analysis = analyze_files(tmp_path, {"train.log": MINORITY_WENT_AHEAD})
    verdict = analysis.verdict
    assert verdict.finding.kind == "stage_divergence" and verdict.ranks == [6, 7]
    assert verdict.finding.details["departure"] == "went_ahead"
    assert verdict.finding.confidence == "low"
    assert verdict.headline == (
        "Ranks 6 and 7 went on to `before CV device` while ranks 0-5 never did"
    )
    assert "drop_last=True" in verdict.finding.fix
    for told in (translate_headline(verdict.headline, "zh"), translate(verdict.finding.fix, "zh")):
        assert not english_runs(told)


def test_one_rank_alone_going_on_is_no_departure(tmp_path):
    # a line the main process alone prints last (a summary, a save) is how healthy runs end too
    lines = [line for line in MINORITY_WENT_AHEAD if not line.endswith("device 6")]
    analysis = analyze_files(tmp_path, {"train.log": lines})
    assert "stage_divergence" not in kinds(analysis)


def test_a_phase_the_few_printed_before_the_others_went_on_too_is_no_departure(tmp_path):
    # the same prints, and every rank's next batch after them: nobody stayed behind
    later = [
        line.replace("Batch 0/0", "Batch 1/0").replace("16:50:40", "16:51:10")
        for line in MINORITY_WENT_AHEAD[:8]
    ]
    analysis = analyze_files(tmp_path, {"train.log": MINORITY_WENT_AHEAD + later})
    assert "stage_divergence" not in kinds(analysis)


def test_a_later_step_a_few_ranks_printed_last_is_no_departure(tmp_path):
    # counters: ranks 0 and 1 printed step 3 before the excerpt (or their buffers) ended
    lines = [
        f"[default{rank}]:step {step}/48 loss=0.1 lr=0.001"
        for step in range(3)
        for rank in range(8)
    ] + ["[default0]:step 3/48 loss=0.1 lr=0.001", "[default1]:step 3/48 loss=0.1 lr=0.001"]
    analysis = analyze_files(tmp_path, {"console.log": lines})
    assert "stage_divergence" not in kinds(analysis)


def test_a_collective_print_of_one_rank_alone_is_no_milestone():
    # rank 0's own collective print with no family the other ranks print: a line of its own
    lines = ["past all_reduce for 0"] + ALL_REDUCE_NEVER_PASSED[:4]
    assert parsed_by("progress_lines", lines).is_empty()


def test_a_number_that_does_not_grow_is_no_progress():
    # the same line every few seconds, its numbers steady (a throughput print)
    line = "2026-11-30 10:00:00,000 INFO some unrelated message about throughput tokens/s=12345.6"
    assert parsed_by("progress_lines", [line] * 10).is_empty()


def test_files_with_stage_marks_are_left_to_them(tmp_path):
    lines = marks(0, range(4)) + [f"step {s}/48 loss=0.1 lr=0.001" for s in range(4)]
    assert parsed_by("progress_lines", lines).is_empty()


def test_a_line_only_one_rank_prints_says_nothing_of_the_others(tmp_path):
    # a trainer's summary on rank 0 only (ranks 1-3 print no such line): no departure
    files = {"rank0.log": [f"[Rank 0] iteration {i}/ 48 | lm loss: 1.0E+00 |" for i in range(6)]}
    files.update(
        {
            f"rank{r}.log": [f"{{'rank': {r}, 'local_rank': {r}, 'device': {r}, 'world_size': 4}}"]
            for r in range(1, 4)
        }
    )
    analysis = analyze_files(tmp_path, files)
    assert "stage_divergence" not in kinds(analysis)


def test_a_process_listing_is_no_progress():
    # sample_logs/pyspy_hang/logs/ps_tree.txt, verbatim: `ps` output saved beside the dumps;
    # its growing process ids are not steps, and `--bad-rank 2` in a command line is no rank
    lines = sample_lines("pyspy_hang", "ps_tree.txt")
    assert any("--bad-rank 2" in line for line in lines)
    assert parsed_by("progress_lines", lines).is_empty()


def test_a_fraction_without_a_name_is_still_progress():
    # the listing filter keeps counters no word names when they count towards a total
    lines = [f"{s}/48 loss=0.{s}" for s in range(6)]
    found = parsed_by("progress_lines", lines)
    assert found.select("step", "stage").rows() == [(s, "progress") for s in range(6)]


# pytorch/torchtitan#1618, verbatim (one console, two ranks; rank 1's part of the paste is short)
TITAN = [
    "[rank1]:[titan] 2025-08-21 11:19:52,972 - root - INFO - [Validation Debug]  Rank 1 batch 88 start",
    "[rank1]:[titan] 2025-08-21 11:19:52,993 - root - INFO - [Validation Debug]  Rank 1 batch 89 start",
    "[rank0]:[titan] 2025-08-21 11:19:52,910 - root - INFO - [Validation Debug]  Rank 0 batch 85 start",
    "[rank0]:[titan] 2025-08-21 11:19:52,931 - root - INFO - [Validation Debug]  Rank 0 batch 86 start",
    "[rank0]:[titan] 2025-08-21 11:19:52,951 - root - INFO - [Validation Debug]  Rank 0 batch 87 start",
]


def test_a_counter_learned_from_one_rank_is_read_on_a_rank_that_printed_it_twice():
    found = parsed_by("progress_lines", TITAN, file="console.log")
    steps = found.group_by("rank").agg(pl.col("step").sort()).sort("rank")
    assert steps.rows() == [(0, [85, 86, 87]), (1, [88, 89])]


def test_a_rank_whose_excerpt_starts_later_did_not_skip_what_came_before(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": TITAN})
    assert "stage_divergence" not in kinds(analysis)


def test_a_growing_count_of_failures_is_no_progress():
    # made up for this test, in the shape of a cluster agent's repeated report (navsim's
    # `error: Detected 3 oom_kill events in StepId=269582.0`, then 4, then 5)
    lines = [f"monitor: error: detected {n} failed health checks on node-3" for n in (3, 4, 5, 6)]
    assert parsed_by("progress_lines", lines).is_empty()


def test_icefall_s_header_names_the_rank_of_each_progress_line(tmp_path):
    # k2-fsa/icefall#1382 (a healthy two-GPU run, one console): `(1/2)` is rank 1 of 2
    log = THREADS / "icefall1382_two_rank_console.log"
    analysis = analyze_files(tmp_path, {"train.log": log.read_text().splitlines()})
    tagged = analysis.job.events.filter(
        (pl.col("family") == "progress") & pl.col("text").str.contains(") Epoch ", literal=True)
    )
    said = tagged.get_column("text").str.extract(r"\((\d)/2\)", 1).cast(pl.Int32)
    assert tagged.get_column("rank").to_list() == said.to_list() and said.n_unique() == 2
    assert analysis.job.ranks_seen == (0, 1)
    assert "missing_rank" not in kinds(analysis)  # rank 1 wrote half the console


def test_a_counter_after_another_number_is_named_by_the_words_before_both():
    # wenet-e2e/wenet#989, verbatim: `Batch <epoch>/<batch>`, rank 0's own lines
    lines = [
        "2022-03-23 23:57:28,855 DEBUG TRAIN Batch 0/185100 loss 4.577072 loss_att 4.222489 loss_ctc 5.404430 lr 0.00065741 rank 0 RSS MEM USE: 5.11G",
        "2022-03-23 23:57:43,632 DEBUG TRAIN Batch 0/185200 loss 5.362794 loss_att 4.925412 loss_ctc 6.383353 lr 0.00065721 rank 0 RSS MEM USE: 5.11G",
        "2022-03-23 23:57:57,979 DEBUG TRAIN Batch 0/185300 loss 7.436929 loss_att 6.969763 loss_ctc 8.526984 lr 0.00065704 rank 0 RSS MEM USE: 5.11G",
        "2022-03-23 23:58:12,914 DEBUG TRAIN Batch 0/185400 loss 9.745964 loss_att 7.788527 loss_ctc 14.313314 lr 0.00065687 rank 0 RSS MEM USE: 46.51G",
    ]
    found = parsed_by("progress_lines", lines)
    assert set(found.get_column("stage")) == {"TRAIN Batch"}
    assert found.get_column("step").to_list() == [185100, 185200, 185300, 185400]
    assert set(found.get_column("rank")) == {0}


# MIC-DKFZ/nnUNet#593, verbatim: torch.distributed.launch kills its workers after one failed
NNUNET_BARRIER_OOM = [
    "rank: 2, memory allocated: 0",
    "rank: 3, memory allocated: 0",
    "rank: 1, memory allocated: 0",
    "done",
    "rank: 0, memory allocated: 0",
    "",
    "Traceback (most recent call last):",
    "",
    '  File "run/run_training_DDP.py", line 184, in <module>',
    "    main()",
    '  File "run/run_training_DDP.py", line 157, in main',
    "    trainer.initialize(not validation_only)",
    '  File "/afs/crc.nd.edu/user/y/ypeng4/nnUnet/nnunet/training/network_training/nnUNetTrainerV2_DDP.py", line 160, in initialize',
    "    distributed.barrier()",
    '  File "/afs/crc.nd.edu/user/y/ypeng4/.local/lib/python3.7/site-packages/torch/distributed/distributed_c10d.py", line 2420, in barrier',
    "    work = default_pg.barrier(opts=opts)",
    "RuntimeError: CUDA error: out of memory",
    "Killing subprocess 31867",
    "Killing subprocess 31868",
    "Killing subprocess 31869",
    "Killing subprocess 31870",
]


def test_the_launcher_killing_its_workers_one_pid_after_another_is_no_progress(tmp_path):
    assert parsed_by("progress_lines", NNUNET_BARRIER_OOM).is_empty()
    # so the out-of-memory error is not read as one training went on past
    analysis = analyze_files(tmp_path, {"output.log": NNUNET_BARRIER_OOM})
    assert analysis.verdict.finding is finding(analysis, "oom")


def test_the_launcher_stopping_process_groups_one_gid_after_another_is_no_progress():
    # PaddlePaddle/PaddleDetection#5202, verbatim: PaddlePaddle's launcher stopping its trainers
    lines = [
        "INFO 2022-02-12 15:52:12,964 launch_utils.py:320] terminate process group gid:2606667",
        "INFO 2022-02-12 15:52:12,966 launch_utils.py:320] terminate process group gid:2606672",
        "INFO 2022-02-12 15:52:12,967 launch_utils.py:320] terminate process group gid:2606677",
    ]
    assert parsed_by("progress_lines", lines).filter(event="stage").is_empty()


def test_a_count_to_a_total_that_starts_again_counts_rounds(tmp_path):
    # sparticlesteve/pytorch-nccl-hang: each trial counts `running step 1/10` ... `10/10`
    # afresh on every rank; in the last trial ranks 0 and 25 never print step 1
    path = Path(__file__).resolve().parents[1] / "data" / "threads"
    lines = (path / "pytorch_nccl_hang_slurm8384637_trials13_14.log").read_text().splitlines()
    analysis = analyze_files(tmp_path, {"slurm-8384637.out": lines})
    steps = analysis.job.events.filter(event="stage", stage="running step")
    last = steps.sort("line").group_by("rank").last()
    assert set(last.filter(epoch=1).get_column("rank").to_list()) == set(range(32)) - {0, 25}
    assert last.filter(epoch=0).get_column("rank").sort().to_list() == [0, 25]
    verdict = analysis.verdict
    assert (verdict.finding.kind, verdict.ranks) == ("stage_divergence", [0, 25])


def test_a_counter_named_batch_id_is_still_progress_while_a_bare_id_is_not():
    # constructed: a script's `batch_id` counts batches; UCX's `[id=176]` (see the resource
    # numbers in IDENTITY) names a handler
    lines = [f"[rank1] epoch 0 batch_id {k} loss 0.{k}" for k in range(1, 6)]
    lines += [f"added async handler 0x5555f190e5e0 [id={k}] to hash" for k in (170, 173, 176)]
    stages = parsed_by("progress_lines", lines).filter(event="stage")
    assert set(stages.get_column("stage").to_list()) == {"batch_id"}
