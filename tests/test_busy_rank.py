# ruff: noqa: E501 -- test data are verbatim log lines
"""A rank still busy with work of its own when the others gave up waiting
(logforensics/busy_rank.py: the busy rank reported by rules/collective_timeout.py, a rank
alone in a collective inside such work by rules/stage_divergence.py)."""

from __future__ import annotations

from pathlib import Path

from logforensics.i18n import translate, translate_headline
from tests.builders import analyze_files
from tests.conftest import SAMPLE_LOGS
from tests.test_i18n import english_runs

THREADS = Path(__file__).parent / "data" / "threads"

# axolotl-ai-cloud/axolotl#2684, verbatim: the main process tokenizing (bar at 92% after
# 29:58), rank 1's store wait timing out after 30 minutes on the same line and the next
# (the whole paste)
TOKENIZING = [
    "Tokenizing Prompts (num_proc=64):  92%|█████████▏| 328986/359152 [29:58<12:05, 41.59 examples/s][rank1]:[W516 14:34:56.853490829 socket.cpp:464] [c10d] waitForInput: poll for socket SocketImpl(fd=79, addr=[localhost]:41170, remote=[localhost]:29500) returned 0, likely a timeout",
    "[rank1]:[W516 14:34:56.854597329 socket.cpp:489] [c10d] waitForInput: socket SocketImpl(fd=79, addr=[localhost]:41170, remote=[localhost]:29500) timed out after 1800000ms",
    "[rank1]: Traceback (most recent call last):",
    '[rank1]:   File "<frozen runpy>", line 198, in _run_module_as_main',
    '[rank1]:   File "<frozen runpy>", line 88, in _run_code',
    '[rank1]:   File "/home/casper/miniconda3/envs/train/lib/python3.11/site-packages/axolotl/cli/train.py", line 124, in <module>',
    "[rank1]:     fire.Fire(do_cli)",
]

# rwth-i6/returnn#1621, verbatim: rank 0 evaluating the dev set (its device is cuda:0, one
# node), then the other processes' store waits timing out without saying their ranks
DEV_EVAL = [
    "ep 1 dev eval, step 97, min_wer -0.688, ce 0.859, fer 0.977, mem_usage:cuda:0 1.6GB",
    "ep 1 dev eval, step 98, min_wer -0.187, ce 0.469, fer 0.964, mem_usage:cuda:0 1.6GB",
    "ep 1 dev eval, step 99, min_wer 0.083, ce 0.286, fer 0.969, mem_usage:cuda:0 1.6GB",
    "Unhandled exception <class 'RuntimeError'> in thread <_MainThread(MainThread, started 129187316453376)>, proc 25928.",
    "",
    "RuntimeError: Socket Timeout",
    "Exception raised from doWait at ../torch/csrc/distributed/c10d/TCPStore.cpp:445 (most recent call first):",
]


# sample_logs/tee_eval_one_rank (a run here: torchrun --tee 3, torch 2.13.0+cpu, gloo), lines
# 33, 37, 41-48, 64, 66, 82 and 84 of launcher.log: rank 2 evaluating alone while ranks 0 and 1
# time out in epoch 1; every tqdm redraw is a line, and only `[default2]:` says whose bar it is
TEE_EVAL = [
    "[default0]:Epoch 1, Rank 0, world_size 3:   0%|          | 0/16 [00:00<?, ?batch/s][default1]:",
    "[default1]:Epoch 1, Rank 1, world_size 3:   0%|          | 0/16 [00:00<?, ?batch/s][default2]:",
    "[default2]:Evaluating:   0%|          | 0/20 [00:00<?, ?batch/s][default2]:",
    "[default2]:Evaluating:   5%|5         | 1/20 [00:03<00:57,  3.00s/batch][default2]:",
    "[default2]:Evaluating:  10%|#         | 2/20 [00:06<00:54,  3.00s/batch][default2]:",
    "[default2]:Evaluating:  15%|#5        | 3/20 [00:09<00:51,  3.00s/batch][default2]:",
    "[default2]:Evaluating:  20%|##        | 4/20 [00:12<00:48,  3.00s/batch][default2]:",
    "[default2]:Evaluating:  25%|##5       | 5/20 [00:15<00:45,  3.00s/batch][default2]:",
    "[default2]:Evaluating:  30%|###       | 6/20 [00:18<00:42,  3.00s/batch][default0]:",
    "[default0]:Epoch 1, Rank 0, world_size 3:   0%|          | 0/16 [00:20<?, ?batch/s]",
    "[default0]:[rank0]: RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:129] Timed out waiting 20000ms for send operation to complete",
    "[default1]:Epoch 1, Rank 1, world_size 3:   0%|          | 0/16 [00:20<?, ?batch/s]",
    "[default1]:[rank1]: RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:78] Timed out waiting 20000ms for recv operation to complete",
    "[default2]:Evaluating:  35%|###5      | 7/20 [00:21<00:39,  3.00s/batch]W1204 05:00:09.231000 26340 torch/distributed/elastic/multiprocessing/api.py:1028] Sending process 26412 closing signal SIGTERM",
]


def test_an_unattributed_bar_still_running_when_rank_1_timed_out_names_the_main_rank(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": TOKENIZING})
    busy = analysis.verdict.finding
    assert (busy.kind, analysis.verdict.ranks) == ("collective_timeout", [0])
    assert busy.details["departure"] == "busy" and busy.confidence == "low"
    assert "Tokenizing Prompts (num_proc=64)" in busy.summary
    assert "328,986 of 359,152" in busy.summary
    assert "--ddp_timeout" in busy.fix
    assert "Nothing in the logs says why" not in analysis.verdict.reason
    # the rank a guess (the unattributed bar taken for the main process's): said as one
    assert analysis.verdict.headline.startswith(
        "Rank 0 was most likely still busy with Tokenizing Prompts (num_proc=64) when the "
        "others gave up"
    )
    chinese = translate_headline(analysis.verdict.headline, "zh")
    assert english_runs(chinese) == [] and "很可能" in chinese


def test_a_rank_s_evaluation_progress_before_the_others_store_timeouts_names_it(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": DEV_EVAL})
    busy = analysis.verdict.finding
    assert (busy.kind, analysis.verdict.ranks) == ("collective_timeout", [0])
    assert busy.details["work"] == "ep 1 dev eval"
    # the waiting processes' ranks are unknown: rank 0 may be among them
    assert busy.confidence == "low"


def test_a_finished_bar_is_no_work_still_running(tmp_path):
    # the same lines with the bar at its end (constructed from axolotl#2684's line)
    finished = [TOKENIZING[0].replace("92%", "100%").replace("328986/", "359152/")] + TOKENIZING[1:]
    analysis = analyze_files(tmp_path, {"console.log": finished})
    assert not [f for f in analysis.findings if f.details.get("departure") == "busy"]


def test_the_busy_rank_timing_out_itself_is_not_lagging(tmp_path):
    # rank 0's bar (named by a torchrun --tee prefix) and rank 0 timing out too (constructed
    # from axolotl#2684's lines): everybody waited, nobody was busy elsewhere
    bar, rest = TOKENIZING[0].split("[rank1]:", 1)
    lines = [
        f"[default0]:{bar}",
        "[rank0]:" + TOKENIZING[1].removeprefix("[rank1]:"),
        *TOKENIZING[1:],
    ]
    analysis = analyze_files(tmp_path, {"console.log": lines})
    assert not [f for f in analysis.findings if f.details.get("departure") == "busy"]


def test_loading_for_a_few_seconds_is_no_work_of_one_rank(tmp_path):
    # every rank loads its model at start-up (a loading bar a few seconds in, cut by rank 1's
    # timeout: constructed from axolotl#2684's lines)
    bar = TOKENIZING[0].replace("Tokenizing Prompts (num_proc=64)", "Loading checkpoint shards")
    loading = [bar.replace("[29:58<12:05", "[00:05<12:05")] + TOKENIZING[1:]
    analysis = analyze_files(tmp_path, {"console.log": loading})
    assert not [f for f in analysis.findings if f.details.get("departure") == "busy"]


def test_a_bar_running_as_long_as_the_timeout_is_the_work_the_others_waited_for(tmp_path):
    # kohya-ss/sd-scripts#971 (tests/data/threads): the main process's unnamed bar after its
    # `caching latents...` banner at 30:02 when rank 1's 30-minute watchdog fired, and still
    # advancing after it; the whole console is attributed to rank 1 by its one rank word
    lines = (THREADS / "kohya971_console.log").read_text(encoding="utf-8").splitlines()
    analysis = analyze_files(tmp_path, {"console.log": lines})
    busy = analysis.verdict.finding
    assert (busy.kind, analysis.verdict.ranks) == ("collective_timeout", [0])
    assert busy.details["work"] == "caching latents"
    # how far, and how long by the bar's own clock: as long as the others' timeout
    assert "1,583 of 1,818, running for 30 min" in busy.summary


def test_a_phase_banner_before_the_others_timeouts_names_the_main_rank(tmp_path):
    # open-mmlab/mmdetection#11096 (tests/data/threads): rank 0's COCO evaluation banners, then
    # ranks 2, 3, 4 and 6 timing out in the BROADCAST that waits for its metrics
    lines = (THREADS / "mmdet11096_console.log").read_text(encoding="utf-8").splitlines()
    analysis = analyze_files(tmp_path, {"console.log": lines})
    busy = analysis.verdict.finding
    assert (busy.kind, analysis.verdict.ranks) == ("collective_timeout", [0])
    assert busy.details["other_ranks"] == [2, 3, 4, 6]
    assert busy.details["work"].startswith("Evaluate annotation type")


def test_loading_after_a_one_rank_phase_heading_is_that_phase_still_running(tmp_path):
    # huggingface/finetrainers#114 (tests/data/threads): the main process printed `=====
    # Memory before validation =====` into the step bar, then its validation pipeline's
    # loading bars; rank 3 timed out in BROADCAST waiting for it
    files = {
        f"console_part{part}.log": (THREADS / f"finetrainers114_part{part}.log")
        .read_text(encoding="utf-8")
        .splitlines()
        for part in (1, 2)
    }
    analysis = analyze_files(tmp_path, files)
    busy = analysis.verdict.finding
    assert (busy.kind, analysis.verdict.ranks) == ("collective_timeout", [0])
    assert busy.details["work"] == "Memory before validation"
    assert busy.details["other_ranks"] == [3] and busy.confidence == "low"


def test_a_validation_bar_named_by_its_table_header_glued_to_the_timeout(tmp_path):
    # ultralytics/yolov5#4400 (tests/data/threads): rank 0's validation bar, named by YOLO's
    # 89-character column header, at 1 min 07 s when rank 1's 60 s watchdog line was glued to it
    lines = (THREADS / "yolov5_4400_rank0_validation.log").read_text(encoding="utf-8")
    analysis = analyze_files(tmp_path, {"console.log": lines.splitlines()})
    busy = analysis.verdict.finding
    assert (busy.kind, analysis.verdict.ranks) == ("collective_timeout", [0])
    assert busy.details["work"] == "Class Images Labels P R mAP@.5 mAP@.5:.95"
    assert busy.details["other_ranks"] == [1] and "85 of 89" in busy.summary


def test_no_main_rank_guess_when_a_process_of_unknown_rank_timed_out_too(tmp_path):
    # vipshop/cache-dit#761 (tests/data/threads): rank 2 and a process whose `what():` names
    # only its rank in a subgroup (`[PG ID 2 PG GUID 5(mesh_ulysses) Rank 0]`) timed out in the
    # same ALLTOALL_BASE under a training bar: the bar may be that process's, no busy rank 0;
    # the watchdog's `terminate called` teardown is no exception of its own
    files = {
        f"console.part{part}.log": (THREADS / f"cachedit761_part{part}.log")
        .read_text(encoding="utf-8")
        .splitlines()
        for part in (1, 2, 3)
    }
    analysis = analyze_files(tmp_path, files)
    assert not [f for f in analysis.findings if f.details.get("departure") == "busy"]
    assert not [f for f in analysis.findings if f.kind == "rank_exception"]
    assert analysis.verdict.finding.kind == "collective_timeout"


# huggingface/nanotron#204, verbatim (the whole paste): rank 0 grouping texts inside
# main_rank_first while ranks 2 and 3 time out in its one-element barrier; rank 2's report
# is glued after the bar and wrapped after "Watchdog caught"
GROUPING = [
    "[default0]:Grouping texts in chunks of 2049:   8%|▊         | 726000/9672101 [02:32<30:38, 4866.01 examples/s][default2]:[E ProcessGroupNCCL.cpp:475] [Rank 2] Watchdog caught ",
    "collective operation timeout: WorkNCCL(SeqNum=3, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600888 milliseconds before timing out.                   ",
    "[default3]:[E ProcessGroupNCCL.cpp:475] [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=3, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ",
    "ran for 600892 milliseconds before timing out.",
]


def test_a_rank_inside_any_bar_while_known_ranks_waited_is_busy(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": GROUPING})
    busy = analysis.verdict.finding
    assert (busy.kind, analysis.verdict.ranks) == ("collective_timeout", [0])
    assert busy.details["other_ranks"] == [2, 3]
    assert busy.details["work"] == "Grouping texts in chunks of 2049"


# jpata/particleflow#390, verbatim: rank 0's test predictions (its bars name it), and in a
# second excerpt a watchdog timeout's stack that names no rank
PREDICTIONS = [
    "INFO:mlpf:Saved predictions at experiments/test_pyg-clic_20250124_032654_637048/preds_epoch_1/clic_edm_ttbar_pf/pred_0_0.parquet",
    "Running predictions on sample clic_edm_ttbar_pf on rank=0:  25%|██▌       | 1/4 [01:49<05:29, 109.87s/it]INFO:mlpf:Saved predictions at experiments/test_pyg-clic_20250124_032654_637048/preds_epoch_1/clic_edm_ttbar_pf/pred_0_1.parquet",
    "Running predictions on sample clic_edm_ttbar_pf on rank=0:  50%|█████     | 2/4 [01:50<01:31, 45.88s/it] INFO:mlpf:Saved predictions at experiments/test_pyg-clic_20250124_032654_637048/preds_epoch_1/clic_edm_ttbar_pf/pred_0_2.parquet",
    "Running predictions on sample clic_edm_ttbar_pf on rank=0:  75%|███████▌  | 3/4 [01:51<00:25, 25.36s/it]INFO:mlpf:Saved predictions at experiments/test_pyg-clic_20250124_032654_637048/preds_epoch_1/clic_edm_ttbar_pf/pred_0_3.parquet",
]
TIMEOUT_STACK = [
    "frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x96 (0x1554e8b12f86 in /mnt/home/ewulff/miniforge3/envs/mlpf/lib/python3.11/site-packages/torch/lib/libc10.so)",
    "frame #1: c10d::ProcessGroupNCCL::WorkNCCL::checkTimeout(std::optional<std::chrono::duration<long, std::ratio<1l, 1000l> > >) + 0x1d2 (0x1554e9e0f8f2 in /mnt/home/ewulff/miniforge3/envs/mlpf/lib/python3.11/site-packages/torch/lib/libtorch_cuda.so)",
    "frame #2: c10d::ProcessGroupNCCL::watchdogHandler() + 0x233 (0x1554e9e16333 in /mnt/home/ewulff/miniforge3/envs/mlpf/lib/python3.11/site-packages/torch/lib/libtorch_cuda.so)",
    "frame #3: c10d::ProcessGroupNCCL::ncclCommWatchdog() + 0x10c (0x1554e9e1871c in /mnt/home/ewulff/miniforge3/envs/mlpf/lib/python3.11/site-packages/torch/lib/libtorch_cuda.so)",
]


def test_work_that_names_its_rank_before_a_timeout_of_no_known_rank(tmp_path):
    files = {"console_part1.log": PREDICTIONS, "console_part2.log": TIMEOUT_STACK}
    analysis = analyze_files(tmp_path, files)
    busy = analysis.verdict.finding
    assert (busy.kind, analysis.verdict.ranks, busy.confidence) == (
        "collective_timeout",
        [0],
        "low",
    )
    assert analysis.verdict.headline.endswith("; a rank the logs do not name timed out")


def test_a_timeout_in_the_same_console_is_not_the_busy_rank_s_own(tmp_path):
    # the thread's paste as one console: the bars say `on rank=0`, which is no reason to take
    # the stack after them for rank 0's own timeout
    analysis = analyze_files(tmp_path, {"console.log": PREDICTIONS + TIMEOUT_STACK})
    busy = analysis.verdict.finding
    assert (busy.kind, analysis.verdict.ranks, busy.confidence) == (
        "collective_timeout",
        [0],
        "low",
    )
    assert busy.details["departure"] == "busy" and "3 of 4" in busy.summary


# NVIDIA/nccl#1132, verbatim (the traceback is cut before its exception line): the diffusers
# script saves under `if accelerator.is_main_process:`, and DeepSpeed's save_checkpoint ends in
# a barrier the other processes never reach
SAVE_ALONE = [
    "01/02/2024 00:20:14 - INFO - accelerate.accelerator - Saving current state to path/to/saved/model/checkpoint-490",
    "01/02/2024 00:20:14 - INFO - accelerate.accelerator - Saving DeepSpeed Model and Optimizer",
    "Traceback (most recent call last):",
    '  File "/home/jonch/Desktop/Programming/consulting/sudoai/../../mlsys/diffusers/examples/consistency_distillation/train_lcm_distill_lora_sd_wds.py", line 1344, in <module>',
    "    main(args)",
    '  File "/home/jonch/Desktop/Programming/consulting/sudoai/../../mlsys/diffusers/examples/consistency_distillation/train_lcm_distill_lora_sd_wds.py", line 1318, in main',
    "    accelerator.save_state(save_path)",
    '  File "/home/jonch/Desktop/Programming/mlsys/accelerate/src/accelerate/accelerator.py", line 2711, in save_state',
    "    model.save_checkpoint(output_dir, ckpt_id, **save_model_func_kwargs)",
    '  File "/home/jonch/Desktop/Programming/pytorch-stable/lib/python3.10/site-packages/deepspeed/runtime/engine.py", line 3049, in save_checkpoint',
    "    dist.barrier()",
    '  File "/home/jonch/Desktop/Programming/pytorch-stable/lib/python3.10/site-packages/deepspeed/comm/comm.py", line 117, in log_wrapper',
    "    return func(*args, **kwargs)",
    '  File "/home/jonch/Desktop/Programming/pytorch-stable/lib/python3.10/site-packages/deepspeed/comm/comm.py", line 408, in barrier',
    "    return cdb.barrier(group=group, async_op=async_op)",
]


def test_a_traceback_in_a_collective_inside_a_save_names_the_saving_rank(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": SAVE_ALONE})
    alone = analysis.verdict.finding
    assert (alone.kind, analysis.verdict.ranks, alone.confidence) == (
        "stage_divergence",
        [0],
        "low",
    )
    assert (alone.details["work"], alone.details["collective"]) == ("save_state", "barrier")
    assert "is_main_process" in alone.fix
    assert analysis.verdict.headline.startswith("Rank 0 alone waited in barrier inside save_state")


def test_every_rank_in_the_save_s_collective_is_no_one_rank_path(tmp_path):
    # the same traceback from ranks 0 and 1 (constructed behind PyTorch's rank prefixes)
    both = [f"[rank{rank}]:{line}" for rank in (0, 1) for line in SAVE_ALONE[2:]]
    analysis = analyze_files(tmp_path, {"console.log": both})
    assert not [f for f in analysis.findings if f.details.get("departure") == "alone_in_work"]


# deepspeedai/DeepSpeed#4488, verbatim: the main process's `Map` bar (Hugging Face datasets'
# preprocessing) at 70% after 6 hours, glued to rank 3's monitored-barrier error naming rank 0
MAP_AND_BARRIER = [
    "The argument `trust_remote_code` is to be used with Auto classes. It has no effect here and is ignored.",
    "Loading checkpoint shards: 100%|████████████████████████████████████████████████████████████████████████████████████████████████████████████| 2/2 [00:27<00:00, 13.69s/it]",
    "Using pad_token, but it is not set yet.",
    "Loading checkpoint shards: 100%|████████████████████████████████████████████████████████████████████████████████████████████████████████████| 2/2 [00:28<00:00, 14.35s/it]",
    "Using pad_token, but it is not set yet.",
    "Loading checkpoint shards: 100%|████████████████████████████████████████████████████████████████████████████████████████████████████████████| 2/2 [00:30<00:00, 15.12s/it]",
    "Using pad_token, but it is not set yet.",
    "Loading checkpoint shards: 100%|████████████████████████████████████████████████████████████████████████████████████████████████████████████| 2/2 [00:30<00:00, 15.45s/it]",
    "Using pad_token, but it is not set yet.",
    "Map (num_proc=14):  70%|██████████████████████████████████████████████████████████████████▌                            | 652383/930514 [6:39:53<4:31:33, 17.07 examples/s][E ProcessGroupGloo.cpp:138] Rank 3 successfully reached monitoredBarrier, but received errors while waiting for send/recv from rank 0. Please check rank 0 logs for faulty r",
]


def test_a_monitored_barrier_giving_up_on_the_rank_still_mapping_the_dataset_names_it(tmp_path):
    analysis = analyze_files(tmp_path, {"output.log": MAP_AND_BARRIER})
    busy = analysis.verdict.finding
    assert (busy.kind, analysis.verdict.ranks) == ("collective_timeout", [0])
    assert busy.details["work"].startswith("Map") and busy.confidence == "medium"


def test_a_bar_under_a_tee_prefix_is_the_work_of_that_prefix_s_rank(tmp_path):
    analysis = analyze_files(tmp_path, {"launcher.log": TEE_EVAL})
    busy = analysis.verdict.finding
    assert (busy.kind, analysis.verdict.ranks) == ("collective_timeout", [2])
    assert busy.details["work"] == "Evaluating"
    assert "7 of 20" in busy.summary and "main process" not in busy.summary
    # each redraw of `Epoch 1, Rank 0, world_size 3` is no second process announcing rank 0
    assert "missing_rank" not in {finding.kind for finding in analysis.findings}


HF_EVAL = Path(__file__).parents[1] / "sample_logs" / "hf_eval_on_main_only" / "logs"


def test_torchrun_s_own_failure_report_does_not_hide_the_rank_alone_in_evaluation(tmp_path):
    # sample_logs/hf_eval_on_main_only (a run here: transformers' Trainer under torchrun, gloo):
    # rank 0 alone in `trainer.evaluate()`'s all_gather; torchrun's ChildFailedError after it
    lines = (HF_EVAL / "launcher.log").read_text().splitlines()
    assert any("ChildFailedError" in line for line in lines)
    analysis = analyze_files(tmp_path, {"launcher.log": lines})
    alone = analysis.verdict.finding
    assert (alone.kind, analysis.verdict.ranks) == ("stage_divergence", [0])
    assert alone.details["work"] == "evaluate" and alone.details["collective"] == "all_gather"
    assert analysis.verdict.headline.endswith("rank 0 then lost its connection to the others")


def test_the_main_process_s_save_announced_by_python_logging_s_default_header(tmp_path):
    # meta-pytorch/torchtune#2651: rank 0's `INFO:torchtune.utils._logging:Saving checkpoint.
    # ...` (lines padded with spaces by the terminal), then rank 4's wrapped watchdog timeout
    lines = (THREADS / "torchtune2651_save_wrapped.log").read_text().splitlines()
    analysis = analyze_files(tmp_path, {"train.log": lines})
    found = analysis.verdict.finding
    assert (found.kind, found.ranks, found.details["work"]) == (
        "collective_timeout",
        [0],
        "Saving checkpoint",
    )
    assert found.details["other_ranks"] == [4]


# meta-pytorch/torchtune#2059, verbatim: the training bar's last refresh with rank 0's save
# record glued to its end (no newline between them), the save's own progress, then rank 4's
# watchdog timeout (the excerpt cut it)
TORCHTUNE_SAVE_GLUED = [
    "1|101|Loss: 0.13964782655239105: 100%|█████████████████████████████████████████████████████████████| 101/101 [1:54:39<00:00, 69.96s/it]INFO:torchtune.utils._logging:Saving checkpoint. This may take some time. Retrieving full model state dict...",
    "INFO:torchtune.utils._logging:Getting full model state dict took 114.73 secs",
    "[rank4]:[E1129 11:56:57.204055508 ProcessGroupNCCL.cpp:616] [Rank 4] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=28956, OpType=ALLREDUCE,",
]


def test_a_save_record_glued_to_the_end_of_the_training_bar_is_the_main_process_s_work(
    tmp_path,
):
    found = analyze_files(tmp_path, {"train.log": TORCHTUNE_SAVE_GLUED}).verdict.finding
    assert (found.kind, found.ranks, found.details["work"]) == (
        "collective_timeout",
        [0],
        "Saving checkpoint",
    )
    assert found.details["other_ranks"] == [4]


def test_an_unnamed_bar_unfinished_while_other_ranks_time_out_is_the_main_process_s(tmp_path):
    # open-mmlab/mmdetection3d#1635: rank 0's evaluation bar (no name, no rank) stops at
    # 5853/6019, then ranks 3, 6 and 7 time out in ALLREDUCE
    lines = (THREADS / "mmdet3d1635_unnamed_eval_bar.log").read_text().splitlines()
    analysis = analyze_files(tmp_path, {"eval.log": lines})
    found = analysis.verdict.finding
    assert (found.kind, found.ranks) == ("collective_timeout", [0])
    assert found.details["other_ranks"] == [3, 6, 7]
    assert "5,853 of 6,019" in found.summary


def test_an_unnamed_bar_is_no_busy_rank_when_the_main_process_timed_out_too(tmp_path):
    # the same lines with rank 0's own timeout among the others': it waited like them
    lines = (THREADS / "mmdet3d1635_unnamed_eval_bar.log").read_text().splitlines()
    own = lines[7].replace("[Rank 7]", "[Rank 0]")
    analysis = analyze_files(tmp_path, {"eval.log": [*lines[:8], own, *lines[8:]]})
    assert analysis.verdict.finding.kind == "collective_timeout"


# ai2cm/ace#851, verbatim (a Beaker job's log, each line behind the collector's time stamp):
# the main process announces its save, and rank 7's 20-minute watchdog fires 20 minutes later
ACE_SAVE = [
    "2026-02-18T10:28:25.497Z 2026-02-18 10:28:25,496 - root - INFO - Saving latest checkpoint model trained for 3 complete epochs and 36738 additional batches, or 369000 total batches, with best_validation_loss 0.20325350761413574 and best_inference_error 0.3175671041704888",
    "2026-02-18T10:48:25.681Z [rank7]:[E218 10:48:25.033625188 ProcessGroupNCCL.cpp:632] [Rank 7] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1512677, OpType=ALLREDUCE, NumelIn=306176, NumelOut=306176, Timeout(ms)=1200000) ran for 1200027 milliseconds before timing out.",
]


def test_a_save_announced_at_length_is_the_main_process_s_work_its_name_cut_short(tmp_path):
    analysis = analyze_files(tmp_path, {"train.log": ACE_SAVE})
    found = analysis.verdict.finding
    assert (found.kind, found.ranks, found.details["other_ranks"]) == (
        "collective_timeout",
        [0],
        [7],
    )
    assert found.details["work"] == "Saving latest checkpoint model trained for 3 complete…"


def test_a_scan_bar_cut_by_the_watchdog_s_record_is_the_main_rank_s_work(tmp_path):
    # ultralytics/yolov5#9163 (tests/data/threads), the whole paste: the main process's label
    # scan stood at 6% (only local rank 0 draws it) when ranks 7, 6 and 2 timed out in the
    # barrier after it; the watchdog's record cut the bar before its counts
    lines = (THREADS / "yolov5_9163_label_scan.log").read_text(encoding="utf-8").splitlines()
    analysis = analyze_files(tmp_path, {"train.log": lines})
    busy = analysis.verdict.finding
    assert (busy.kind, analysis.verdict.ranks) == ("collective_timeout", [0])
    assert busy.details["other_ranks"] == [2, 6, 7]
    assert busy.details["work"].startswith("train: Scanning")
    # the headline keeps the start of the bar's long name; the finding keeps all of it
    assert "train: Scanning '/mnt/" in analysis.verdict.headline
    assert "0 corrupt" not in analysis.verdict.headline and "0 corrupt" in busy.summary


# verl-project/verl#3873, verbatim but for the reporter's own `...` elisions: a Ray console,
# the driver's TaskRunner printing its metrics and `Training Progress` bar, rank 3's worker
# (`WorkerDict`, its lines under Ray's prefix) timing out in a one-element ALLREDUCE
RAY_DRIVER = [
    "(TaskRunner pid=152455) step:1 - global_seqlen/min:1309 - ... (a lot of metrics) ... - perf/throughput:8.499546086538803",
    "(TaskRunner pid=152455) ",
    "Training Progress:   3%|▎         | 1/30 [10:37<5:08:06, 637.47s/it]",
    "",
    "(WorkerDict pid=97397, ip=33.97.231.144) [rank3]:[E1023 02:44:30.941975491 ProcessGroupNCCL.cpp:632] [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=26, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1200000) ran for 1200007 milliseconds before timing out.",
]


def test_a_bar_outside_the_prefix_ray_puts_on_every_worker_line_is_the_driver_s(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": RAY_DRIVER})
    assert analysis.verdict.finding.kind == "collective_timeout"
    assert not [f for f in analysis.findings if f.details.get("departure") == "busy"]


def test_the_same_bar_in_a_console_ray_did_not_relay_is_the_main_process_s(tmp_path):
    # the timeout without Ray's prefix: the bar may then be rank 0's own (named here as work
    # of one rank: the training loop's own bar is every rank's)
    lines = [
        line.split(") ", 1)[1] if line.startswith("(WorkerDict") else line for line in RAY_DRIVER
    ]
    lines = [line.replace("Training Progress:", "Evaluating:") for line in lines]
    analysis = analyze_files(tmp_path, {"console.log": lines})
    busy = [f for f in analysis.findings if f.details.get("departure") == "busy"]
    assert [f.ranks for f in busy] == [[0]]


def test_the_others_timeout_is_a_symptom_of_the_busy_rank_s_own_work_in_both_languages(tmp_path):
    # meta-pytorch/torchtune#2651: rank 4 timed out while rank 0 was saving
    lines = (THREADS / "torchtune2651_save_wrapped.log").read_text().splitlines()
    analysis = analyze_files(tmp_path, {"train.log": lines})
    (timeout,) = [f for f in analysis.findings if f.part == "consequence"]
    assert timeout.role == "symptom" and timeout.ranks == [4]
    assert "rank 0 had not yet joined, still busy with work of its own" in timeout.note
    assert english_runs(translate(timeout.note, "zh")) == []


def test_a_rank_busy_after_training_ended_is_still_why_the_others_timed_out(tmp_path):
    # sample_logs/tee_eval_one_rank (a run here: rank 2 evaluates alone, ranks 0 and 1 time
    # out), with a script's end-of-training line (Plachtaa/VITS-fast-fine-tuning#353's, a
    # finish mark of parsers/finish_marks.py) put before rank 2's evaluation: work after
    # training is still the hang's cause, not a teardown
    lines = (SAMPLE_LOGS / "tee_eval_one_rank" / "logs" / "launcher.log").read_text().splitlines()
    at = next(n for n, line in enumerate(lines) if line.startswith("[default2]:Evaluating:"))
    lines.insert(at, "Maximum epoch reached, closing training...")
    analysis = analyze_files(tmp_path, {"launcher.log": lines})
    busy = analysis.verdict.finding
    assert (busy.kind, busy.severity, analysis.verdict.ranks) == (
        "collective_timeout",
        "error",
        [2],
    )
    assert busy.details["departure"] == "busy"


# modelscope/ms-swift#5706, verbatim (the paste's hard wraps kept): the main process's training
# bar 13 h in, a video reader's fallback warning, then rank 6's watchdog timeout
TRAIN_BAR = [
    "Train:  57%|████████████████████████████████████████████████████████████▊                                             | 815/1421 [13:29:50<9:39:21, 57.36s/it]",
    "video_reader_backend decord error, use torchvision as default, msg: nframes should in interval [2, 1], but got 0.                                             ",
    "Train:  58%|█████████████████████████████████████████████████████████████                                             | 818/1421 [13:32:17<8:47:19, 52.47s/it]",
    "[rank6]:[E908 05:24:11.571310624 ProcessGroupNCCL.cpp:629] [Rank 6] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1782692, OpType=_REDUCE_SCAT",
    "TER_BASE, NumelIn=778567680, NumelOut=19464192, Timeout(ms)=600000) ran for 600011 milliseconds before timing out.                                            ",
]


def test_the_training_loop_s_own_bar_is_no_work_of_one_rank(tmp_path):
    # every rank runs the training loop; its bar's clock is the training's, not a wait's
    analysis = analyze_files(tmp_path, {"train.log": TRAIN_BAR})
    verdict = analysis.verdict
    assert verdict.finding.kind == "collective_timeout"
    assert verdict.finding.details.get("departure") != "busy"
    assert verdict.ranks == []
    assert "busy" not in verdict.headline
    assert "Rank 6 timed out in _REDUCE_SCATTER_BASE" in verdict.headline


# axolotl-ai-cloud/axolotl#967, verbatim (the paste shows tqdm's carriage return as `^M`): the
# main process's training bar, 5:58:04 into training and glued to rank 6's 30-minute timeout;
# rank 7's timeout in the same collective
LOOP_BAR = [
    "^M 13%|█▎        | 3004/23865 [5:58:04<41:19:58,  7.13s/it][E ProcessGroupNCCL.cpp:475] [Rank 6] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=20879, OpType=ALLREDUCE, NumelIn=419044352, NumelOut=419044352, Timeout(ms)=1800000) ran for 1800055 milliseconds before timing out.",
    "[E ProcessGroupNCCL.cpp:475] [Rank 7] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=20879, OpType=ALLREDUCE, NumelIn=406069248, NumelOut=406069248, Timeout(ms)=1800000) ran for 1800115 milliseconds before timing out.",
]


def test_a_bar_that_ran_for_hours_before_the_wait_is_the_loop_every_rank_runs(tmp_path):
    analysis = analyze_files(tmp_path, {"train.log": LOOP_BAR})
    assert not [f for f in analysis.findings if f.details.get("departure") == "busy"]
    # (the two sizes at one number are the verdict: tests/rules/test_collective_mismatch.py)
    assert analysis.verdict.finding.kind == "collective_mismatch"
    assert "busy" not in analysis.verdict.headline


# vllm-project/vllm-ascend#3413, verbatim (two excerpts of one paste): a Ray worker's graph-capture
# bar, then HCCL's RankID 101 timing out in an AllReduce waiting for "remote rank: [24]", a
# position in its 32-rank group
HCCL_NAMES_ITS_PEER = [
    "(WorkerDict pid=23510) INFO 10-11 14:54:02 [kv_cache_utils.py:1091] Maximum concurrency for 34,816 tokens per request: 25.17x",
    "(WorkerDict pid=23511) INFO 10-11 14:54:02 [kv_cache_utils.py:1087] GPU KV cache size: 876,416 tokens",
    "(WorkerDict pid=23511) INFO 10-11 14:54:02 [kv_cache_utils.py:1091] Maximum concurrency for 34,816 tokens per request: 25.17x",
    "(WorkerDict pid=2963, ip=172.16.3.196) INFO 10-11 14:54:02 [model_runner_v1.py:3384] Starting to capture ACL graphs for cases: [256, 128, 64, 32, 16, 8, 4], mode: FULL, uniform_decode: True",
    "(WorkerDict pid=2963, ip=172.16.3.196) ",
    "Capturing ACL graphs (decode, FULL):   0%|          | 0/7 [00:00<?, ?it/s]",
    "(WorkerDict pid=2968, ip=172.16.3.196) [rank5]:[W1011 14:54:05.900183195 compiler_depend.ts:149] Warning: Waiting for pending NCCL work to finish before starting graph capture. (function operator())",
    "(WorkerDict pid=2963, ip=172.16.3.196) ",
    "Capturing ACL graphs (decode, FULL):  14%|█▍        | 1/7 [00:03<00:21,  3.67s/it]",
    'time="2025-10-11T22:56:07+08:00" level=info msg="analyzer is diagnosing" file="analyzer.go:308" Command=analyze Component=ma-training-toolkit Container=modelarts-training-sidecar Platform=ModelArts-Service',
    "[ERROR] 2025-10-11-15:09:34 (PID:2969, Device:0, RankID:101) ERR00100 PTA call acl api failed.",
    "EI0002: [PID: 2969] 2025-10-11-15:09:34.713.335 The wait execution of the Notify register times out. Reason: The Notify register has not received the Notify record from remote rank: [24]. base information: [streamID:[109], taskID[38], taskType[Notify Wait], tag[AllReduce_group_name_1654NHRAllReduceComm_device], AlgType(level 0-1-2):[ring-NHR-NHR].]. task information: [notify id:[0x0000000000000213], stage:[0], remote rank:[24]]. group information: [group:[group_name_1654], user define information[Unspecified], rankSize[32], rankId[25 24]]",
    "        Possible Cause: 1. An exception occurs during the execution on some NPUs in the cluster. As a result, collective communication operation failed.2. The execution speed on some NPU in the cluster is too slow to complete a communication operation within the timeout interval. (default 1800s, You can set the interval by using HCCL_EXEC_TIMEOUT.)3. The number of training samples of each NPU is inconsistent.4. Packet loss or other connectivity problems occur on the communication link.",
]


def test_a_wait_that_names_its_peer_is_not_pinned_on_the_main_process(tmp_path):
    analysis = analyze_files(tmp_path, {"train.log": HCCL_NAMES_ITS_PEER})
    assert analysis.verdict.finding.kind == "collective_timeout"
    assert 0 not in analysis.verdict.ranks
    assert not any("main process" in finding.summary for finding in analysis.findings)
    assert "It waited for rank 24 of its communicator" in analysis.verdict.finding.summary
