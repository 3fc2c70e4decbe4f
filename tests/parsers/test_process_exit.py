# ruff: noqa: E501 -- test data are verbatim log lines
"""The shell's word for how a process ended (parsers/process_exit.py)."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from logforensics.i18n import translate, translate_headline
from tests.builders import analyze_files, kinds, only, parsed_by
from tests.test_i18n import english_runs


@pytest.mark.parametrize(
    ("line", "signal"),
    [
        # horovod/horovod#2907, verbatim (under horovodrun's rank tags)
        ("[0]<stderr>:Killed", "SIGKILL"),
        ("[1]<stderr>:Terminated", "SIGTERM"),
        ("[3]<stderr>:Aborted (core dumped)", "SIGABRT"),
    ],
)
def test_the_shells_words_are_the_signal(line, signal):
    death = only(parsed_by("process_exit", [line], file="horovodrun_stderr.log"))
    assert (death["event"], death["signal"]) == ("fatal_signal", signal)
    assert death["rank"] == int(line[1])


def test_words_inside_a_sentence_are_not_a_death():
    # sentences that merely hold the word (made up for this test: none is a report of a death)
    lines = ["Killed the process group", "INFO Terminated workers: 3", "[rank0]: Aborted step 5"]
    assert parsed_by("process_exit", lines).is_empty()


def test_a_bar_with_killed_glued_to_it_is_a_death():
    # he-dhamo/simsg#3, verbatim: the shell's word lands right after a tqdm bar
    line = "  6%|██████                                                                                               | 3787/62565 [04:47<1:10:53, 13.82it/s]Killed"
    death = only(parsed_by("process_exit", [line]))
    assert death["signal"] == "SIGKILL"


def test_the_kernels_oom_kill_report_names_the_pid():
    # pcyin/tranX#41, verbatim (the first physical line of a wrapped dmesg paste)
    line = "[2059991.491542] Out of memory: Killed process 25315 (python3) total-vm:53312244"
    kill = only(parsed_by("process_exit", [line]))
    assert (kill["event"], kill["pid"]) == ("host_oom", 25315)


# NVIDIA/DALI#585, verbatim: dmesg's report pasted without its `Killed process` line, beside a
# training log that only stops (`Epoch = 0, step = 10, ...` and then nothing)
OOM_KILLER_INVOKED = [
    "[2612362.231458] python invoked oom-killer: gfp_mask=0x14000c0(GFP_KERNEL), nodemask=(null), order=0, oom_score_adj=829",
    "[2612362.231460] python cpuset=157d3ac310d314abd88b69c5f503b662a4076dae74f12c53e9a996176f1c53d2 mems_allowed=0-1",
    "[2612362.231465] CPU: 6 PID: 208253 Comm: python Tainted: P           O     4.15.15-1.el7.elrepo.x86_64 #1",
]


def test_the_kernel_invoking_its_oom_killer_is_the_host_out_of_memory(tmp_path):
    invoked = only(parsed_by("process_exit", OOM_KILLER_INVOKED[:1]))
    # the process that invoked it is not the one killed: no pid
    assert (invoked["event"], invoked["pid"]) == ("host_oom", None)
    analysis = analyze_files(
        tmp_path,
        {
            "dmesg.txt": OOM_KILLER_INVOKED,
            "log.txt": ["Epoch = 0, step = 10, lr = 0.0002637889688249401"],
        },
    )
    assert analysis.verdict.finding.kind == "oom" and analysis.verdict.ranks == []
    assert "host ran out of memory" in analysis.verdict.finding.summary


@pytest.mark.parametrize(
    ("line", "signal"),
    [
        # huggingface/text-generation-inference#1627, verbatim
        (
            "2024-03-06T17:53:31.052444Z ERROR shard-manager: text_generation_launcher: Shard process was signaled to shutdown with signal 4 rank=0",  # noqa: E501
            "SIGILL",
        ),
        # huggingface/text-generation-inference#446, its title: the weights' download, no shm
        ("Error: Download process was signaled to shutdown with signal 7", "SIGBUS"),
    ],
)
def test_the_inference_launcher_s_signal_number_is_the_signal(line, signal):
    death = only(parsed_by("process_exit", [line]))
    assert (death["event"], death["signal"]) == ("fatal_signal", signal)


# PyTorch's multi-process test harness: pytorch/pytorch#38395 (Jenkins, older wording) and the
# newer wording a comment in intel/torch-xpu-ops quotes from a run
@pytest.mark.parametrize(
    ("line", "ranks", "code"),
    [
        ("09:34:27 RuntimeError: Processes 1 exited with error code 10", [1], 10),
        ("RuntimeError: Process 2 exited with error code 10 and exception:", [2], 10),
        # the process's own last word (pytorch/pytorch#113620's CI run, its prefixes peeled)
        ("exiting process 1 with exit code: 10", [1], 10),
        # its older word on the first failed process it saw (pytorch/pytorch#61670)
        ("Process 2 terminated with exit code 10, terminating remaining processes.", [2], 10),
    ],
)
def test_the_test_harness_names_the_processes_that_failed(line, ranks, code):
    events = parsed_by("process_exit", [line])
    assert events.get_column("rank").to_list() == ranks
    assert set(events.get_column("exitcode").to_list()) == {code}
    assert set(events.get_column("event").to_list()) == {"worker_failed"}


def test_the_one_process_the_harness_lists_is_blamed_not_the_console(tmp_path):
    # pytorch/pytorch#38395, verbatim: unittest's banner, the harness's traceback, its report
    lines = [
        "09:34:27 ======================================================================",
        "09:34:27 ERROR: test_gloo_backend_2gpu_module (__main__.DistributedDataParallelTest)",
        "09:34:27 ----------------------------------------------------------------------",
        "09:34:27 Traceback (most recent call last):",
        '09:34:27   File "/var/lib/jenkins/.local/lib/python3.6/site-packages/torch/testing/_internal/common_distributed.py", line 339, in _check_return_codes',
        "09:34:27     raise RuntimeError(error)",
        "09:34:27 RuntimeError: Processes 1 exited with error code 10",
    ]
    analysis = analyze_files(tmp_path, {"ci.log": lines})
    verdict = analysis.verdict
    assert (verdict.finding.kind, verdict.ranks, verdict.finding.confidence) == (
        "rank_exception",
        [1],
        "low",
    )
    assert "the test harness's report" in verdict.finding.summary
    # unittest's banner is no error a program logged, and the harness's report no rank's line
    assert not any(
        finding.kind == "rank_exception" and not finding.ranks for finding in analysis.findings
    )


def test_the_process_the_harness_saw_fail_first_is_blamed_over_the_peer_it_left(tmp_path):
    # pytorch/pytorch#61670, verbatim (a CI run of a flaky RPC test): process 3's barrier lost
    # its gloo peer; the harness saw process 2 fail first and stopped the others
    lines = [
        "Jul 13 21:22:34     dist.barrier()",
        'Jul 13 21:22:34   File "/opt/conda/lib/python3.6/site-packages/torch/distributed/distributed_c10d.py", line 2617, in barrier',
        "Jul 13 21:22:34     work.wait()",
        "Jul 13 21:22:34 RuntimeError: [/var/lib/jenkins/workspace/third_party/gloo/gloo/transport/tcp/pair.cc:598] Connection closed by peer [172.17.0.2]:16786",
        "Jul 13 21:22:34  exiting process 3 with exit code: 10",
        "Jul 13 21:22:34 Process 2 terminated with exit code 10, terminating remaining processes.",
        "Jul 13 21:22:34 ERROR (2.532s)",
    ]
    analysis = analyze_files(tmp_path, {"test.log": lines})
    verdict = analysis.verdict
    assert (verdict.finding.kind, verdict.ranks) == ("rank_exception", [2])
    assert "the first process to exit, with code 10 (the test harness's report)" in (
        verdict.finding.summary
    )
    assert "exiting process N with exit code: 10" in verdict.finding.fix
    assert "mpirun" not in verdict.finding.fix
    assert english_runs(translate(verdict.finding.summary, "zh")) == []
    assert english_runs(translate(verdict.finding.fix, "zh")) == []


def test_the_test_runners_timed_banner_does_not_hide_the_harness_report(tmp_path):
    # pytorch/pytorch#68391, verbatim: PyTorch's runner times the test in unittest's banner;
    # the paste stops inside process 0's own traceback
    lines = [
        "======================================================================",
        "ERROR [21.066s]: test_forward_overlap (__main__.TestForwardOverlapWorldSizeTwo)",
        "----------------------------------------------------------------------",
        "Traceback (most recent call last):",
        '  File "/opt/conda/lib/python3.6/site-packages/torch/testing/_internal/common_distributed.py", line 722, in _check_return_codes',
        "    raise RuntimeError(error)",
        "RuntimeError: Process 0 exited with error code 10 and exception:",
        "Traceback (most recent call last):",
        '  File "/opt/conda/lib/python3.6/site-packages/torch/testing/_internal/common_distributed.py", line 576, in run_test',
        "    getattr(self, test_name)()",
    ]
    verdict = analyze_files(tmp_path, {"ci.log": lines}).verdict
    assert (verdict.finding.kind, verdict.ranks) == ("rank_exception", [0])
    assert "the test harness's report" in verdict.finding.summary


@pytest.mark.parametrize(
    ("line", "rank", "code"),
    [
        # mosaicml/llm-foundry#258 and mosaicml/diffusion#140, verbatim
        ("ERROR:composer.cli.launcher:Rank 2 crashed with exit code -7.", 2, -7),
        ("ERROR:composer.cli.launcher:Rank 0 crashed with exit code -11.", 0, -11),
        # mosaicml/composer#1165, verbatim: a 2022 release, no period
        ("ERROR:composer.cli.launcher:Rank 2 crashed with exit code -6", 2, -6),
    ],
)
def test_composer_s_launcher_names_the_global_rank_that_crashed(line, rank, code):
    crash = only(parsed_by("process_exit", [line]))
    assert (crash["event"], crash["rank"], crash["exitcode"]) == ("worker_failed", rank, code)


def test_a_rank_composer_saw_crash_on_a_signal_is_the_verdict(tmp_path):
    # mosaicml/diffusion#140: the trainer's start-up lines, then the launcher's word (the
    # issue's title), with nothing of the crash itself
    console = [
        "[2024-05-07 09:39:45,388][composer.utils.reproducibility][INFO] - Setting seed to 17",
        "[2024-05-07 09:39:45,572][composer.trainer.trainer][INFO] - Run name: 1715045985-burrowing-goshawk",
        "ERROR:composer.cli.launcher:Rank 0 crashed with exit code -11.",
    ]
    verdict = analyze_files(tmp_path, {"train.log": console}).verdict
    assert (verdict.finding.kind, verdict.ranks) == ("rank_exception", [0])
    assert "SIGSEGV" in verdict.finding.summary


@pytest.mark.parametrize(
    ("line", "rank", "code", "host"),
    [
        # argonne-lcf/conda_install_scripts, alcf_polaris/tests/job-2026-09-17.run1-fa-segv.out
        (
            "x3200c0s13b0n0.hsn.cm.sirius.alcf.anl.gov: rank 0 died from signal 11 and dumped core",
            0,
            -11,
            "x3200c0s13b0n0.hsn.cm.sirius.alcf.anl.gov",
        ),
        # argonne-lcf/alcf-nccl-tests, pytests/logs0/2024-05-02-19-06-47/n4.p2.dat
        ("x3200c0s19b1n0.hsn.cm.sirius.alcf.anl.gov: rank 1 exited with code 134", 1, 134, None),
        # saforem2/mmm, docs/torch-on-aurora.md (Aurora)
        ("x4512c5s2b0n0: rank 11 died from signal 15", 11, -15, "x4512c5s2b0n0"),
    ],
)
def test_pals_mpiexec_names_the_global_rank_that_ended_badly(line, rank, code, host):
    ended = only(parsed_by("process_exit", [line]))
    assert (ended["event"], ended["rank"], ended["exitcode"]) == ("worker_failed", rank, code)
    assert host is None or ended["host"] in (host, None)


def test_the_rank_pals_saw_die_first_of_a_signal_is_the_verdict(tmp_path):
    # argonne-lcf/conda_install_scripts' Polaris smoke test (job-2026-09-17.run1-fa-segv.out),
    # its last lines verbatim: rank 0 crashed in a check it alone ran; the launcher then
    # stopped rank 3
    console = [
        "[rank 0 x3200c0s13b0n0] tensorflow GPU OK tf 2.21.0 gpus=1 r=134217728.0",
        "[rank 0 x3200c0s13b0n0] jax GPU OK jax 0.11.1 devices=[CudaDevice(id=0)] r=65536.0",
        "x3200c0s13b0n0.hsn.cm.sirius.alcf.anl.gov: rank 0 died from signal 11 and dumped core",
        "x3200c0s13b0n0.hsn.cm.sirius.alcf.anl.gov: rank 3 died from signal 15",
        "exit=143",
    ]
    verdict = analyze_files(tmp_path, {"job.out": console}).verdict
    assert (verdict.finding.kind, verdict.ranks) == ("rank_exception", [0])
    assert "SIGSEGV" in verdict.finding.summary


# A run here (tests/data/launchers/lightning, Lightning 2.6 over torch 2.13 on CPU): rank 1's
# dataset raised while rank 0 slept in its step; Lightning's launcher reported the child under
# its rank and SIGKILLed the job, rank 0's process included, which the shell then reported
LIGHTNING_RUN = Path(__file__).parents[1] / "data" / "launchers" / "lightning" / "console.log"
LIGHTNING_CHILD = (
    "[rank: 1] Child process with PID 23634 terminated with code 1. Forcefully terminating all "
    "other processes to avoid zombies 🧟"
)


def test_lightning_s_report_of_a_child_that_failed_names_its_rank_pid_and_code():
    assert LIGHTNING_CHILD in LIGHTNING_RUN.read_text(encoding="utf-8")
    ended = only(parsed_by("process_exit", [LIGHTNING_CHILD]))
    assert (ended["event"], ended["local_rank"], ended["pid"], ended["exitcode"]) == (
        "worker_failed",
        1,
        23634,
        1,
    )
    # the main process wrote it: the `[rank: 1]` in front names the child, not the writer
    assert ended["rank"] is None


def test_the_kill_after_lightning_stopped_the_job_is_no_memory_kill(tmp_path):
    # the run's console without rank 1's own traceback (its output sent elsewhere): Lightning's
    # report and the shell's `Killed` of the main process are all that is left
    lines = [
        line
        for line in LIGHTNING_RUN.read_text(encoding="utf-8").splitlines()
        if not line.startswith("[rank1]:")
    ]
    assert any(line.endswith('Killed                  "$0" child_failure.py') for line in lines)
    analysis = analyze_files(tmp_path, {"console.log": lines})
    assert "oom" not in kinds(analysis)
    assert (analysis.verdict.finding.kind, analysis.verdict.ranks) == ("rank_exception", [1])
    assert analysis.verdict.headline == "Rank 1 exited with code 1"
    # Lightning reports the first child it sees fail and stops the others itself
    assert "(Lightning's launcher then stopped them)" in analysis.verdict.finding.summary
    assert analysis.verdict.finding.fix.startswith(
        "Read that worker's own output for its traceback: Lightning"
    )


def test_lightning_s_report_wrapped_by_a_page_still_names_the_child_and_its_kill(tmp_path):
    # vividf/autoware-ml, docs/framework/dataloader-oom.md, verbatim: a StreamPETR run whose
    # DataLoader workers used up the host's memory; the notes wrap Lightning's line in two
    lines = [
        "Epoch 3/9 ━━━━━━╺━━ 2314/3351 ...",
        "INFO: [rank: 1] Child process with PID 9487 terminated with code -9.",
        "      Forcefully terminating all other processes to avoid zombies 🧟",
    ]
    ended = only(parsed_by("process_exit", lines[1:2]))
    assert (ended["local_rank"], ended["pid"], ended["exitcode"]) == (1, 9487, -9)
    verdict = analyze_files(tmp_path, {"console.log": lines}).verdict
    assert (verdict.finding.kind, verdict.ranks) == ("oom", [1])


# kubeflow/mpi-operator#444, verbatim (horovodrun's elastic console, its ranks started through
# `kubectl exec`): rank 3's command ended by SIGKILL as the job was scaled down; ranks 0 and 2
# then lost their connection to it
KUBECTL_EXEC = [
    "Tue Dec  7 12:44:45 2021[1]<stdout>:Step #1170  Loss: 0.010245",
    "Tue Dec  7 12:44:45 2021[2]<stdout>:Step #1170  Loss: 0.051376",
    "Tue Dec  7 12:44:45 2021[3]<stdout>:Step #1170  Loss: 0.058886",
    "Tue Dec  7 12:44:45 2021[0]<stdout>:Step #1170  Loss: 0.004547",
    "Tue Dec  7 12:44:45 2021[2]<stderr>:[2021-12-07 12:44:45.326530: E /tmp/pip-install-2jy0u7mn/horovod/horovod/common/operations.cc:525] Horovod background loop uncaught exception: [/tmp/pip-install-2jy0u7mn/horovod/third_party/compatible_gloo/gloo/transport/tcp/pair.cc:566] Read error [10.140.0.107]:12416: Connection reset by peer",
    "Tue Dec  7 12:44:45 2021[0]<stderr>:[2021-12-07 12:44:45.326489: E /tmp/pip-install-2jy0u7mn/horovod/horovod/common/operations.cc:525] Horovod background loop uncaught exception: [/tmp/pip-install-2jy0u7mn/horovod/third_party/compatible_gloo/gloo/transport/tcp/pair.cc:566] Read error [10.140.0.107]:17321: Connection reset by peer",
    "Tue Dec  7 12:44:45 2021[3]<stderr>:command terminated with exit code 137",
]


def test_kubectl_s_word_on_a_command_it_ran_is_that_rank_s_exit(tmp_path):
    (exited,) = parsed_by("process_exit", KUBECTL_EXEC).to_dicts()
    assert (exited["event"], exited["exitcode"]) == ("worker_failed", 137)
    analysis = analyze_files(tmp_path, {"launcher.log": KUBECTL_EXEC})
    assert analysis.verdict.ranks == [3]
    assert analysis.verdict.headline.startswith("Rank 3 was killed")


# PaddlePaddle's launcher, verbatim: PaddlePaddle/PaddleDetection#5202 (rank 3 of 4, after it
# stopped the other trainers' process groups) and PaddlePaddle/PaddleClas#727 (ranks 1-3)
PADDLE_ONE = [
    "INFO 2022-02-12 15:52:12,964 launch_utils.py:320] terminate process group gid:2606667",
    "INFO 2022-02-12 15:52:16,972 launch_utils.py:341] terminate all the procs",
    "ERROR 2022-02-12 15:52:16,973 launch_utils.py:604] ABORT!!! Out of all 4 trainers, the trainer process with rank=[3] was aborted. Please check its log.",
]
PADDLE_THREE = "ERROR 2021-05-16 22:14:00,649 launch_utils.py:545] ABORT!!! Out of all 4 trainers, the trainer process with rank=[1, 2, 3] was aborted. Please check its log."


def test_each_trainer_paddles_launcher_lists_as_aborted_ended_with_an_error():
    rows = parsed_by("process_exit", [PADDLE_THREE])
    assert rows.get_column("rank").to_list() == [1, 2, 3]
    assert set(rows.get_column("event").to_list()) == {"worker_failed"}
    assert set(rows.get_column("world_size").to_list()) == {4}


def test_the_trainer_paddles_launcher_names_is_the_verdict_and_its_own_log_the_fix(tmp_path):
    verdict = analyze_files(tmp_path, {"train.log": PADDLE_ONE}).verdict
    assert (verdict.finding.kind, verdict.ranks) == ("rank_exception", [3])
    assert "`log/workerlog.3`" in verdict.finding.summary
    assert verdict.headline.startswith("Rank 3 ended with an error")


# OpenPipe/ART#201, verbatim (vLLM v1, two GPUs): the engine's executor saw worker 1 die, then
# waits on its shared-memory broadcast
VLLM_WORKER_DIED = [
    "DEBUG 07-04 17:35:10 [shm_broadcast.py:456] No available shared memory broadcast block found in 60 second.",
    "ERROR 07-04 17:35:16 [multiproc_executor.py:140] Worker proc VllmWorker-1 died unexpectedly, shutting down executor.",
    "DEBUG 07-04 17:36:10 [shm_broadcast.py:456] No available shared memory broadcast block found in 60 second.",
    "DEBUG 07-04 17:37:10 [shm_broadcast.py:456] No available shared memory broadcast block found in 60 second.",
    "DEBUG 07-04 17:38:10 [shm_broadcast.py:456] No available shared memory broadcast block found in 60 second.",
]
# vllm-project/vllm-ascend PR 7742, a run quoted in the thread (a later release says the code)
VLLM_WORKER_DIED_NO_CODE = "[2026-08-22 13:05:18.630086][UC][E] Worker proc VllmWorker-14 died unexpectedly (exit code: None), shutting down executor. [416204,434190][multiproc_executor.py:295,monitor_workers]"
# intel/llm-scaler#154, verbatim as far as the thread's excerpt goes (docker compose's prefix):
# the engine core's own traceback right after it lost worker 3
VLLM_ENGINE_AFTER_WORKER_DIED = [
    'eap-llm-server-on-arc  | INFO:     127.0.0.1:48802 - "GET /health HTTP/1.1" 200 OK',
    "eap-llm-server-on-arc  | ERROR 11-08 11:01:29 [multiproc_executor.py:135] Worker proc VllmWorker-3 died unexpectedly, shutting down executor.",
    "eap-llm-server-on-arc  | ERROR 11-08 11:01:30 [core.py:502] EngineCore encountered a fatal error.",
    "eap-llm-server-on-arc  | ERROR 11-08 11:01:30 [core.py:502] Traceback (most recent call last):",
    'eap-llm-server-on-arc  | ERROR 11-08 11:01:30 [core.py:502]   File "/usr/local/lib/python3.10/dist-packages/vllm/v1/engine/core.py", line 493, in run_engine_core',
    "eap-llm-server-on-arc  | ERROR 11-08 11:01:30 [core.py:502]     engine_core.run_busy_loop()",
    'eap-llm-server-on-arc  | ERROR 11-08 11:01:30 [core.py:502]   File "/usr/local/lib/python3.10/dist-packages/vllm/v1/engine/core.py", line 518, in run_busy_loop',
    "eap-llm-server-on-arc  | ERROR 11-08 11:01:30 [core.py:502]     self._process_input_queue()",
    'eap-llm-server-on-arc  | ERROR 11-08 11:01:30 [core.py:502]   File "/usr/local/lib/python3.10/dist-packages/vllm/v1/engine/core.py", line 531, in _process_input_queue',
    "eap-llm-server-on-arc  | ERROR 11-08 11:01:30 [core.py:502]     self._handle_client_request(*req)",
]


def test_vllm_s_executor_names_the_worker_that_died_by_its_rank():
    found = parsed_by("process_exit", [VLLM_WORKER_DIED[1], VLLM_WORKER_DIED_NO_CODE])
    assert found.get_column("event").to_list() == ["worker_failed", "worker_failed"]
    assert found.get_column("rank").to_list() == [1, 14]
    assert found.get_column("exitcode").to_list() == [None, None]


def test_a_worker_the_engine_saw_die_is_the_verdict_and_the_engine_s_lines_are_not_its(tmp_path):
    analysis = analyze_files(tmp_path / "art", {"console.log": VLLM_WORKER_DIED})
    verdict = analysis.verdict
    assert (verdict.finding.kind, verdict.ranks) == ("rank_exception", [1])
    assert verdict.headline == (
        "Rank 1 died unexpectedly, no error of its own logged; the engine shut down"
    )
    assert english_runs(translate_headline(verdict.headline, "zh")) == []
    assert english_runs(translate(verdict.finding.summary, "zh")) == []
    engine = analyze_files(tmp_path / "engine", {"console.log": VLLM_ENGINE_AFTER_WORKER_DIED})
    assert engine.verdict.ranks == [3]
    assert engine.verdict.finding.details.get("died_unexpectedly")
    # the engine core's traceback is the engine's, not worker 3's
    core = only(engine.job.events.filter(pl.col("event") == "exception"))
    assert core["rank"] is None
