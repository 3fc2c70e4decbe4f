# ruff: noqa: E501 -- test data are verbatim log lines
"""The library entry point: batching must not change what a user is told."""

from __future__ import annotations

import shutil

import pytest

from logforensics import api
from logforensics.report.model import build_report
from tests.builders import analyze_files
from tests.conftest import SAMPLE_LOGS


@pytest.mark.parametrize("scenario", ["skip_backward_hang", "two_node_slurm", "uneven_loader_hang"])
def test_reading_file_by_file_gives_the_same_report(scenario, monkeypatch):
    logs = SAMPLE_LOGS / scenario / "logs"
    whole = build_report(api.analyze(logs), "logs")
    monkeypatch.setattr(api, "BATCH_BYTES", 1)  # every file a batch of its own
    one_by_one = build_report(api.analyze(logs), "logs")
    assert one_by_one == whole


@pytest.mark.parametrize(
    "scenario", ["skip_backward_hang", "two_node_slurm", "swallowed_exception", "detail_mismatch"]
)
def test_reading_large_files_block_by_block_gives_the_same_report(scenario, monkeypatch):
    from logforensics import chunks

    logs = SAMPLE_LOGS / scenario / "logs"
    whole = build_report(api.analyze(logs), "logs")
    # every file over 4 KiB is read in ~2 KiB blocks: tracebacks and summaries cross blocks
    monkeypatch.setattr(chunks, "CHUNK_BYTES", 2048)
    blocks = build_report(api.analyze(logs), "logs")
    assert blocks == whole


def test_one_large_file_alone(tmp_path, monkeypatch):
    from logforensics import chunks

    monkeypatch.setattr(chunks, "CHUNK_BYTES", 1024)
    lines = [
        f"rank={r} step={s} stage={st}" for s in range(40) for r in range(2) for st in ("a", "b")
    ]
    (tmp_path / "slurm-1.out").write_text("\n".join(lines) + "\n")
    analysis = api.analyze(tmp_path)
    assert analysis.lines == len(lines) == analysis.recognised_lines
    assert analysis.job.progress.ranks == (0, 1)


# aws/aws-k8s-tester#467, verbatim (the first lines of the launcher pod's log of a healthy
# 32-rank BERT run): Open MPI's `--tag-output` prefixes and nothing any parser reads
MPI_TAGGED = [
    "[1,31]<stdout>:Process 31 - Training time: 10.09 seconds",
    "[1,31]<stdout>:Process 31 - Throughput: 9.91 samples/second",
    "[1,29]<stdout>:Process 29 - Training time: 10.05 seconds",
    "[1,29]<stdout>:Process 29 - Throughput: 9.95 samples/second",
    "[1,0]<stdout>:Process 0 - Training time: 10.03 seconds",
    "[1,0]<stdout>:Process 0 - Throughput: 9.97 samples/second",
]


def test_lines_a_launcher_prefix_gives_a_rank_are_a_job_s_log_not_refused(tmp_path):
    analysis = analyze_files(tmp_path, {"launcher.log": MPI_TAGGED})
    assert analysis.verdict is None and analysis.recognised_lines == 0
    report = build_report(analysis, "logs")
    last = {row["rank"]: row["last_line"] for row in report["ranks"]}
    assert sorted(last) == [0, 29, 31]
    assert last[29] == {"file": "launcher.log", "line": 4, "text": MPI_TAGGED[3]}


def test_a_rank_s_last_line_in_a_shared_file_is_the_last_its_prefix_names(tmp_path):
    # pytorch/torchtitan#183, verbatim (a healthy 2-rank CI run, cut): rank 1's loss line is
    # read, its later line is not; the rank table shows the later one
    lines = [
        "[rank0]:2024-04-01 17:54:52,025 - root - INFO - running build_ext",
        "[rank1]:2024-04-01 17:54:52,734 - root - INFO - step:  1  loss: 10.9746  memory:  9.53GiB(10.03%)  wps: 1,228  mfu: 0.02%",
        "[rank1]:2024-04-01 17:54:52,734 - root - INFO - Synchronizing and adjusting timeout for all ProcessGroups to 0:00:05",
    ]
    report = build_report(analyze_files(tmp_path, {"console.log": lines}), "logs")
    last = {row["rank"]: row["last_line"]["line"] for row in report["ranks"]}
    assert last == {0: 1, 1: 3}


# wenet-e2e/wenet#941, verbatim: a healthy 4-GPU run's own lines, too few per rank to learn
# a counter from; the training reports that name their rank are read as milestones
WENET_TRAINING = [
    "2023-01-30 18:47:07,107 DEBUG TRAIN Batch 4/203700 loss 12.646465 loss_att 10.921429 loss_ctc 16.671551 lr 0.00032621 rank 0",
    "2023-01-30 18:47:16,614 DEBUG TRAIN Batch 4/203700 loss 16.885244 loss_att 13.554604 loss_ctc 24.656742 lr 0.00032621 rank 1",
    "2023-01-30 18:49:20,301 DEBUG TRAIN Batch 4/203800 loss 23.600426 loss_att 18.615641 loss_ctc 35.231586 lr 0.00032619 rank 2",
    "2023-01-30 18:49:55,773 DEBUG CV Batch 4/0 loss 28.517015 loss_att 24.142754 loss_ctc 38.723625 history loss 27.957858 rank 2",
]


def test_lines_that_report_a_training_loss_are_analysed_not_refused(tmp_path):
    analysis = analyze_files(tmp_path, {"output.log": WENET_TRAINING})
    assert analysis.verdict is None
    # the three ranks' TRAIN reports are progress; rank 2's one CV report is a line of its own
    assert (analysis.recognised_lines, analysis.unrecognised_lines) == (3, 1)
    assert analysis.job.progress.ranks == (0, 1, 2)


def test_lines_the_analyzer_does_not_know_and_that_report_no_training_are_refused(tmp_path):
    no_loss = [line.split(" loss ")[0] for line in WENET_TRAINING]
    with pytest.raises(api.InputError, match="nothing here looks like a training job's log"):
        analyze_files(tmp_path, {"output.log": no_loss})


# allenai/OLMo#453, verbatim (the PR's paste as the stored thread holds it): a healthy run's metrics, each rank
# logging its own; its loss is named `CrossEntropyLoss`, its step counted towards a total
OLMO_METRICS = [
    "train/CrossEntropyLoss=0.0370",
    "train/Perplexity=1.038",
    "throughput/total_tokens=181,873,410,048",
    "throughput/device/tokens_per_second=14,991",
    "throughput/device/batches_per_second=0.2288",
    "2024-02-12 15:14:50,866 - olmo.train - INFO - [step=43362/739328]",
    "train/CrossEntropyLoss=0.0380",
    "train/Perplexity=1.039",
    "throughput/total_tokens=181,873,410,048",
    "throughput/device/tokens_per_second=14,991",
    "throughput/device/batches_per_second=0.2288",
    "2024-02-12 15:14:50,866 - olmo.train - INFO - [step=43362/739328]",
    "train/CrossEntropyLoss=0.0378",
    "train/Perplexity=1.039",
    "throughput/total_tokens=181,873,410,048",
    "throughput/device/tokens_per_second=14,991",
    "throughput/device/batches_per_second=0.2288",
    "2024-02-12 15:14:50,866 - olmo.train - INFO - [step=43362/739328]",
    "train/CrossEntropyLoss=0.0383",
    "train/Perplexity=1.039",
    "throughput/total_tokens=181,873,410,048",
    "throughput/device/tokens_per_second=14,991",
    "throughput/device/batches_per_second=0.2288",
    "2024-02-12 15:14:50,866 - olmo.train - INFO - [step=43362/739328]",
    "train/CrossEntropyLoss=2.421",
    "train/Perplexity=11.25",
    "throughput/total_tokens=181,873,410,048",
    "throughput/device/tokens_per_second=14,991",
]
# rwth-i6/returnn#1485, verbatim: four healthy ranks each counting the steps they trained
RETURNN_STEPS = [
    "Trained 904 steps, 0:10:02 elapsed (92.1% computing time)",
    "Trained 904 steps, 0:10:02 elapsed (92.0% computing time)",
    "Trained 904 steps, 0:10:03 elapsed (92.0% computing time)",
    "Trained 904 steps, 0:10:02 elapsed (92.1% computing time)",
    "Trained 910 steps, 0:10:51 elapsed (84.6% computing time)",
    "Trained 910 steps, 0:09:19 elapsed (98.6% computing time)",
    "Trained 910 steps, 0:10:51 elapsed (84.6% computing time)",
    "Trained 910 steps, 0:10:51 elapsed (84.6% computing time)",
]


@pytest.mark.parametrize("lines", [OLMO_METRICS, RETURNN_STEPS], ids=["olmo", "returnn"])
def test_a_loss_by_any_name_or_steps_counted_are_a_training_log_not_refused(tmp_path, lines):
    analysis = analyze_files(tmp_path, {"console.log": lines})
    assert analysis.verdict is None
    # the same lines as a colouring console writes them
    coloured = [f"\x1b[32m{line}\x1b[0m" for line in lines]
    assert analyze_files(tmp_path / "coloured", {"console.log": coloured}).verdict is None


# huggingface/accelerate#485, a maintainer's healthy 2-GPU run, verbatim: loguru records of the
# script's training function, one per process and epoch, none a line the analyzer knows
ACCELERATE_EPOCH_TIMES = [
    "2022-07-02 07:42:09.937 | INFO     | __main__:training_function:68 - time : 0:00:10.736053",
    "2022-07-02 07:42:09.943 | INFO     | __main__:training_function:68 - time : 0:00:10.742042",
    "2022-07-02 07:42:20.144 | INFO     | __main__:training_function:68 - time : 0:00:10.206601",
]


def test_records_of_the_job_s_training_function_are_analysed_not_refused(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": ACCELERATE_EPOCH_TIMES})
    assert analysis.verdict is None
    assert analysis.unrecognised_lines == len(ACCELERATE_EPOCH_TIMES)


# deepmodeling/deepmd-kit#4595, verbatim: a healthy start, DeePMD's own summary and Open MPI's
# shared-memory notes, none a line the analyzer knows
DEEPMD_START = [
    "[2025-02-10 17:58:17,581] DEEPMD INFO    computing device:      cuda:4",
    "[2025-02-10 17:58:17,581] DEEPMD INFO    CUDA_VISIBLE_DEVICES:  unset",
    "[2025-02-10 17:58:17,581] DEEPMD INFO    Count of visible GPUs: 8",
    "[2025-02-10 17:58:17,581] DEEPMD INFO    num_intra_threads:     0",
    "[2025-02-10 17:58:17,581] DEEPMD INFO    num_inter_threads:     0",
    "[2025-02-10 17:58:17,581] DEEPMD INFO    ---------------------------------------------------------------------------------------------------------",
    "[bohrium-156-1256408:01441] shmem: mmap: an error occurred while determining whether or not /tmp/ompi.bohrium-156-1256408.0/jf.0/1753350144/shared_mem_cuda_pool.bohrium-156-1256408 could be created.",
    "[bohrium-156-1256408:01441] create_and_attach: unable to create shared memory BTL coordinating structure :: size 134217728",
    "[bohrium-156-1256408:01435] shmem: mmap: an error occurred while determining whether or not /tmp/ompi.bohrium-156-1256408.0/jf.0/4004642816/shared_mem_cuda_pool.bohrium-156-1256408 could be created.",
    "[bohrium-156-1256408:01435] create_and_attach: unable to create shared memory BTL coordinating structure :: size 134217728",
    "[2025-02-10 17:58:17,708] DEEPMD INFO     _____               _____   __  __  _____           _     _  _",
    "[2025-02-10 17:58:17,708] DEEPMD INFO    |  __ \\             |  __ \\ |  \\/  ||  __ \\         | |   (_)| |",
]


def test_lines_that_name_the_job_s_gpus_are_analysed_not_refused(tmp_path):
    analysis = analyze_files(tmp_path, {"output.log": DEEPMD_START})
    assert analysis.verdict is None and analysis.unrecognised_lines == len(DEEPMD_START)


# k2-fsa/snowfall#155, verbatim: a healthy two-process start that says so in its own words
SNOWFALL_START = [
    "2021-04-12 13:18:01,201 INFO [sampling.py:523] Distributed training with world size of 2 detected (node's local rank is 1. Splitting cuts into 2 partitions (this partition has cut IDs range\\",
    " [(2784, 5567)].",
    "2021-04-12 13:18:01,201 INFO [asr_datamodule.py:181] About to create dev dataloader",
    "2021-04-12 13:18:01,202 INFO [mmi_att_transformer_train.py:399] About to create model",
]


def test_a_job_that_says_it_trains_distributed_is_analysed_not_refused(tmp_path):
    analysis = analyze_files(tmp_path, {"log.txt": SNOWFALL_START})
    assert analysis.verdict is None and analysis.unrecognised_lines == len(SNOWFALL_START)
    # words about something else's world are no training log
    other = ["The world size is not the point here; local ranking of results follows."]
    with pytest.raises(api.InputError, match="nothing here looks like a training job's log"):
        analyze_files(tmp_path / "other", {"notes.txt": other})


def test_a_folder_of_its_own_beside_other_jobs_is_a_job_even_with_no_world_size(tmp_path):
    # three jobs in one upload: two whose logs state different world sizes, and a Trainer
    # console (sample_logs/hf_eval_on_main_only) that states none, in a folder of its own
    for scenario in ("uneven_loader_hang", "tqdm_rank_bars_uneven", "hf_eval_on_main_only"):
        shutil.copytree(SAMPLE_LOGS / scenario / "logs", tmp_path / scenario)
    upload = api.analyze_upload(tmp_path)
    labels = sorted(job.label for job in upload.jobs)
    assert len(labels) == 3 and labels[0].startswith("hf_eval_on_main_only")
    trainer = next(job for job in upload.jobs if job.label.startswith("hf_eval"))
    assert trainer.verdict.finding.kind == "stage_divergence"
    assert not upload.unattached


# ByteDance-Seed/VeOmni PR 492, verbatim (the PR's example log): each rank's own word on its
# save, tagged with its rank
VEOMNI_SHARD_WRITES = [
    "[save_safetensor_utils.py:70] 03/16/2026 06:36:32 >> Skipping weight not in HF weight_map: lm_head.weight",
    "[save_safetensor_utils.py:147] 03/16/2026 06:36:32 >> Starting dcp.save()...",
    "[save_safetensor_utils.py:94] 03/16/2026 06:36:35 >> [Rank 3] Shard write took 2.79s",
    "[save_safetensor_utils.py:94] 03/16/2026 06:36:35 >> [Rank 1] Shard write took 2.81s",
    "[save_safetensor_utils.py:94] 03/16/2026 06:36:35 >> [Rank 4] Shard write took 2.95s",
]
# huggingface/accelerate PR 2356, verbatim (`make test_cli` on two NPUs): the test's own output
# under the launcher's prefixes, the devices named as torch names them
ACCELERATE_NPU_TEST = [
    "stdout: stdout: 0 1 tensor([ 0,  1,  2,  3,  4,  5,  6,  7,  8,  9, 10, 11, 12, 13, 14, 15, 16, 17,",
    "stdout: stdout:         18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35,",
    "stdout: stdout:         36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53,",
    "stdout: stdout:         54, 55, 56, 57, 58, 59, 60, 61, 62, 63], device='npu:0') <class 'accelerate.data_loader.DataLoaderShard'>",
    "stdout: stdout: tensor([ 0,  1,  2,  3,  4,  5,  6,  7,  8,  9, 10, 11, 12, 13, 14, 15, 16, 17,",
    "stdout: stdout:         18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35,",
]


# huggingface/open-r1#483, verbatim: a healthy 7-process GRPO run's Trainer banner
TRAINER_BANNER = [
    "[INFO|trainer.py:2405] 2025-03-06 12:04:09,913 >> ***** Running training *****",
    "[INFO|trainer.py:2406] 2025-03-06 12:04:09,913 >>   Num examples = 5,498",
    "[INFO|trainer.py:2407] 2025-03-06 12:04:09,914 >>   Num Epochs = 1",
    "[INFO|trainer.py:2408] 2025-03-06 12:04:09,914 >>   Instantaneous batch size per device = 8",
    "[INFO|trainer.py:2411] 2025-03-06 12:04:09,914 >>   Total train batch size (w. parallel, distributed & accumulation) = 224",
]


@pytest.mark.parametrize(
    "lines",
    [VEOMNI_SHARD_WRITES, ACCELERATE_NPU_TEST, TRAINER_BANNER],
    ids=["rank-tags", "npu-devices", "trainer-banner"],
)
def test_a_job_s_rank_tags_or_other_accelerators_devices_are_analysed_not_refused(tmp_path, lines):
    analysis = analyze_files(tmp_path, {"console.log": lines})
    assert analysis.verdict is None and analysis.unrecognised_lines == len(lines)
