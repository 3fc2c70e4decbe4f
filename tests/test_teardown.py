"""Failures after the run finished are teardown, not the hang (logforensics/teardown.py)."""

from __future__ import annotations

from tests.builders import analyze_files, finding

# modelscope/ms-swift#7992, verbatim: main returned, then (11 minutes on) the heartbeat monitor
# of rank 4's expert-parallel group fired while the processes exited
SWIFT = [
    "18:00:31.711 [INFO:swift] End time of running main: 2026-02-05 18:00:31.710947",
    "18:00:34.257 [rank0]:[W205 18:00:34.953145631 ProcessGroupNCCL.cpp:1538] Warning: WARNING: destroy_process_group() was not called before program exit, which can leak resources. For more info, please see https://pytorch.org/docs/stable/distributed.html#shutdown (function operator())",
    "18:11:06.680 [rank4]:[E205 18:11:06.375750231 ProcessGroupNCCL.cpp:1870] [PG ID 12 PG GUID 99(EXPERT_MODEL_PARALLEL_GROUP) Rank 4] ProcessGroupNCCL's watchdog got stuck for 480 seconds without making progress in monitoring enqueued collectives. This typically indicates a NCCL/CUDA API (e.g., CudaEventDestroy) hang blocking the watchdog, and could be triggered by another thread holding the GIL inside a CUDA api (for example, CudaEventDestroy), or other deadlock-prone behaviors.If you suspect the watchdog is not actually stuck and a longer timeout would help, you can either increase the timeout (TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC) to a larger value or disable the heartbeat monitor (TORCH_NCCL_ENABLE_MONITORING=0).If either of aforementioned helps, feel free to file an issue to PyTorch about the short timeout or false positive abort; otherwise, please attempt to debug the hang. ",
]

# NVIDIA/Fuser#3055, verbatim: the tests were torn down, then process groups hung in teardown
FUSER = [
    "[----------] Global test environment tear-down",
    "[E930 15:23:00.059980974 ProcessGroupNCCL.cpp:1487] [PG ID 4 PG GUID  Rank 2] ProcessGroupNCCL's watchdog got stuck for 10 seconds without making progress in monitoring enqueued collectives. This typically indicates a NCCL/CUDA API (e.g., CudaEventDestroy) hang blocking the watchdog, and could be triggered by another thread holding the GIL inside a CUDA api (for example, CudaEventDestroy), or other deadlock-prone behaviors.If you suspect the watchdog is not actually stuck and a longer timeout would help, you can either increase the timeout (TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC) to a larger value or disable the heartbeat monitor (TORCH_NCCL_ENABLE_MONITORING=0).If either of aforementioned helps, feel free to file an issue to PyTorch about the short timeout or false positive abort; otherwise, please attempt to debug the hang.",
    "[F930 15:23:07.686401350 ProcessGroupNCCL.cpp:1309] [PG ID 6 PG GUID  Rank 0] [PG ID 6 PG GUID  Rank 0] Terminating the process after attempting to dump debug info, due to ProcessGroupNCCL watchdog hang.",
]


def test_a_watchdog_stuck_after_main_returned_is_a_teardown_warning(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": SWIFT})
    stuck = finding(analysis, "collective_timeout")
    assert stuck.severity == "warning" and stuck.summary.startswith("After the run had finished")
    assert stuck.details["after_finish"] == {"file": "console.log", "line": 1}
    assert analysis.verdict is None


def test_failures_after_the_tests_were_torn_down_make_no_verdict(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": FUSER})
    assert analysis.verdict is None
    assert all(f.severity != "error" for f in analysis.findings)


def test_one_ranks_end_is_not_the_others(tmp_path):
    # rank 0 finished training and exited; rank 1's timeout after it is no teardown: rank 1
    # was still in a collective the finished rank never joined
    lines = [
        "[rank0]:Training completed. Do not forget to share your model on huggingface.co/models =)",
        "[rank1]:[E626 06:24:44.903881913 ProcessGroupNCCL.cpp:616] [Rank 1] Watchdog caught "
        "collective operation timeout: WorkNCCL(SeqNum=808, OpType=ALLREDUCE, NumelIn=9801523, "
        "NumelOut=9801523, Timeout(ms)=600000) ran for 600063 milliseconds before timing out.",
    ]
    timeout = finding(analyze_files(tmp_path, {"console.log": lines}), "collective_timeout")
    assert timeout.severity == "error" and "after_finish" not in timeout.details


# modelscope/ms-swift#5109, verbatim: the checkpoints were saved, then a C++ abort in a CUDA
# allocator right after rank 4's exit warning
ALLOCATOR_ABORT_AT_EXIT = [
    "[INFO:swift] last_model_checkpoint: /workdir/poi_extraction_model/v0-20250724-195620/last",
    "[rank4]:[W724 21:48:59.726502657 ProcessGroupNCCL.cpp:1496] Warning: WARNING: "
    "destroy_process_group() was not called before program exit, which can leak resources. "
    "For more info, please see https://pytorch.org/docs/stable/distributed.html#shutdown "
    "(function operator())",
    "terminate called after throwing an instance of 'c10::Error'",
    "  what():  Trying to free a pointer not allocated here",
]


def test_a_crash_of_no_known_rank_right_after_an_exit_is_teardown(tmp_path):
    analysis = analyze_files(tmp_path, {"train.log": ALLOCATOR_ABORT_AT_EXIT})
    crash = finding(analysis, "rank_exception")
    assert crash.severity == "warning" and "after_finish" in crash.details
    assert analysis.verdict is None


def test_a_crash_long_after_one_ranks_exit_is_not_its_teardown(tmp_path):
    lines = ALLOCATOR_ABORT_AT_EXIT[:2] + ["some other line"] * 5 + ALLOCATOR_ABORT_AT_EXIT[2:]
    crash = finding(analyze_files(tmp_path, {"train.log": lines}), "rank_exception")
    assert crash.severity == "error"


def test_a_teardown_warning_carries_the_teardown_fix(tmp_path):
    stuck = finding(analyze_files(tmp_path, {"console.log": SWIFT}), "collective_timeout")
    assert "dist.destroy_process_group()" in stuck.fix and "py-spy" not in stuck.fix


# bigscience-workshop/Megatron-DeepSpeed#265, verbatim: the run reached its exit interval,
# then the watchdog thread died of the CUDA driver shutting down (a torch 1.10 teardown bug)
DRIVER_SHUTTING_DOWN = [
    "[exiting program at iteration 6] datetime: 2022-03-11 15:20:26 ",
    "terminate called after throwing an instance of 'c10::CUDAError'",
    "  what():  CUDA error: driver shutting down",
    "CUDA kernel errors might be asynchronously reported at some other API call,so the stacktrace below might be incorrect.",
    "For debugging consider passing CUDA_LAUNCH_BLOCKING=1.",
    "Exception raised from query at /opt/conda/conda-bld/pytorch_1639180588308/work/aten/src/ATen/cuda/CUDAEvent.h:95 (most recent call first):",
    "frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x42 (0x7f87dd253d62 in /home/stas/anaconda3/envs/py38-pt110/lib/python3.8/site-packages/torch/lib/libc10.so)",
    "frame #1: c10d::ProcessGroupNCCL::WorkNCCL::finishedGPUExecutionInternal() const + 0x11a (0x7f882f0207ba in /home/stas/anaconda3/envs/py38-pt110/lib/python3.8/site-packages/torch/lib/libtorch_cuda_cpp.so)",
    "frame #2: c10d::ProcessGroupNCCL::WorkNCCL::isCompleted() + 0x50 (0x7f882f022ab0 in /home/stas/anaconda3/envs/py38-pt110/lib/python3.8/site-packages/torch/lib/libtorch_cuda_cpp.so)",
    "frame #3: c10d::ProcessGroupNCCL::workCleanupLoop() + 0x11c (0x7f882f02357c in /home/stas/anaconda3/envs/py38-pt110/lib/python3.8/site-packages/torch/lib/libtorch_cuda_cpp.so)",
]


def test_a_crash_after_megatron_s_exit_interval_is_teardown(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": DRIVER_SHUTTING_DOWN})
    assert analysis.verdict is None
    crash = finding(analysis, "rank_exception")
    assert crash.severity == "warning" and crash.details["after_finish"]["line"] == 1


def test_a_crash_at_exit_with_no_other_failure_is_the_verdict_at_low_confidence(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": DRIVER_SHUTTING_DOWN[1:]})
    crash = analysis.verdict.finding
    assert crash.kind == "rank_exception" and crash.confidence == "low"
    assert crash.details["exiting"] is True
    assert crash.summary.startswith("A process crashed while exiting")
    assert "dist.destroy_process_group()" in crash.fix


# pytorch/pytorch#56390, verbatim (ezyang's CI excerpt): a test worker aborted in the NCCL
# cleanup thread as the driver shut down; the harness did not check its exit code
CI_WORKER_CRASH_AT_EXIT = [
    "Apr 19 17:26:40   test_all_reduce_sum_cuda (__main__.TestDistBackendWithSpawn) ... terminate called after throwing an instance of 'c10::Error'",
    "Apr 19 17:26:40   what():  CUDA error: driver shutting down",
    "Apr 19 17:26:40 Exception raised from query at /var/lib/jenkins/workspace/aten/src/ATen/cuda/CUDAEvent.h:95 (most recent call first):",
    "Apr 19 17:26:40 frame #3: c10d::ProcessGroupNCCL::workCleanupLoop() + 0x288 (0x7f75ebff76d8 in /opt/conda/lib/python3.6/site-packages/torch/lib/libtorch_python.so)",
]


def test_a_test_worker_s_crash_at_exit_is_why_the_job_failed(tmp_path):
    verdict = analyze_files(tmp_path, {"ci.log": CI_WORKER_CRASH_AT_EXIT}).verdict
    assert verdict is not None and verdict.finding.details["exiting"] is True
    assert verdict.headline == "A process crashed while exiting; the CUDA driver was shutting down"


def test_a_crash_at_exit_beside_another_failure_is_its_teardown(tmp_path):
    # modelscope/FunASR#2006 (field sample funasr-2006): an OOM, without its rank prefix, in
    # another process's file
    oom = "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 336.00 MiB. GPU 2 has a total capacity of 79.15 GiB of which 302.75 MiB is free."
    logs = {"a.log": [oom], "b.log": DRIVER_SHUTTING_DOWN[1:]}
    analysis = analyze_files(tmp_path, logs)
    crash = next(f for f in analysis.findings if f.details.get("exiting"))
    assert crash.severity == "warning" and crash.summary.startswith("While the process was exiting")
    assert analysis.verdict.finding.kind == "oom"


# Plachtaa/VITS-fast-fine-tuning#353, verbatim (the whole paste): the script ends its last
# epoch with `exit()` (Python prints `None`, exit code 1) and torch.multiprocessing.spawn's
# parent reports the child's exit code
VITS_LAST_EPOCH = [
    "INFO:OUTPUT_MODEL_test:Train Epoch: 11 [0%]",
    "INFO:OUTPUT_MODEL_test:[2.5180983543395996, 2.176342248916626, 6.351111888885498, 20.8907527923584, 1.3190431594848633, 2.5211775302886963, 110, 0.00019975014057813518]",
    "Maximum epoch reached, closing training...",
    "  0%|                                                                                                                                                                               | 0/11 [00:04<?, ?it/s]",
    "None",
    "Traceback (most recent call last):",
    '  File "finetune_speaker_v2.py", line 372, in <module>',
    "    main()",
    '  File "finetune_speaker_v2.py", line 55, in main',
    "    mp.spawn(run, nprocs=n_gpus, args=(n_gpus, hps,))",
    '  File "/home/ft/.conda/envs/VIST/lib/python3.8/site-packages/torch/multiprocessing/spawn.py", line 240, in spawn',
    "    return start_processes(fn, args, nprocs, join, daemon, start_method='spawn')",
    '  File "/home/ft/.conda/envs/VIST/lib/python3.8/site-packages/torch/multiprocessing/spawn.py", line 198, in start_processes',
    "    while not context.join():",
    '  File "/home/ft/.conda/envs/VIST/lib/python3.8/site-packages/torch/multiprocessing/spawn.py", line 149, in join',
    "    raise ProcessExitedException(",
    "torch.multiprocessing.spawn.ProcessExitedException: process 0 terminated with exit code 1",
]


def test_a_launcher_s_exit_code_after_the_last_epoch_is_no_failure(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": VITS_LAST_EPOCH})
    assert analysis.verdict is None
    exited = finding(analysis, "rank_exception")
    assert exited.severity == "warning" and exited.blames_nobody
    assert "exited with code 1 (the launcher's report)" in exited.summary


# RVC-Project/Retrieval-based-Voice-Conversion-WebUI#2079, verbatim up to where the thread's
# excerpt ends: rank 0 saved the final weights and called os._exit; the other GPU's process,
# still in its last backward, printed a traceback (cut here). The project's FAQ: after this
# line the model trained, and the error right after it is not one.
RVC_LAST_EPOCH = [
    "INFO:yurika-test01:Training is done. The program is closed.",
    "INFO:yurika-test01:saving final ckpt:Success.",
    "Process Process-2:",
    "Traceback (most recent call last):",
    '  File "/home/chenzhr/anaconda3/envs/rvc/lib/python3.8/multiprocessing/process.py", line 315, in _bootstrap',
    "    self.run()",
    '  File "/home/chenzhr/anaconda3/envs/rvc/lib/python3.8/multiprocessing/process.py", line 108, in run',
    "    self._target(*self._args, **self._kwargs)",
    '  File "/home/chenzhr/Retrieval-based-Voice-Conversion-WebUI/infer/modules/train/train.py", line 282, in run',
    "    train_and_evaluate(",
    '  File "/home/chenzhr/Retrieval-based-Voice-Conversion-WebUI/infer/modules/train/train.py", line 481, in train_and_evaluate',
    "    scaler.scale(loss_disc).backward()",
    '  File "/home/chenzhr/Retrieval-based-Voice-Conversion-WebUI/.venv/lib/python3.8/site-packages/torch/_tensor.py", line 525, in backward',
    "    torch.autograd.backward(",
    '  File "/home/chenzhr/Retrieval-based-Voice-Conversion-WebUI/.venv/lib/python3.8/site-packages/torch/autograd/__init__.py", line 267, in backward',
    "    _engine_run_backward(",
]


def test_a_cut_stack_after_the_program_said_it_closed_is_teardown(tmp_path):
    analysis = analyze_files(tmp_path, {"train.log": RVC_LAST_EPOCH})
    crash = finding(analysis, "rank_exception")
    assert crash.severity == "warning" and crash.details["after_finish"]["line"] == 1
    assert analysis.verdict is None
