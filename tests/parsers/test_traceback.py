# ruff: noqa: E501 -- test data are verbatim log lines
from __future__ import annotations

import itertools
import json
from pathlib import Path

import polars as pl
import pytest

from tests.builders import analyze_files, only, parse, parsed_by

# sample_logs/skip_backward_hang/logs/launcher.log (torchrun 2.13 --tee 3, gloo): rank 2's
# traceback as the launcher's console shows it.
RANK2_TRACEBACK = [
    "[default2]:[rank2]: Traceback (most recent call last):",
    '[default2]:[rank2]:   File "/work/main/sample_logs/skip_backward_hang/../ddp_train.py", line 214, in <module>',
    "[default2]:[rank2]:     main()",
    '[default2]:[rank2]:   File "/work/venv/lib/python3.11/site-packages/torch/distributed/elastic/multiprocessing/errors/__init__.py", line 367, in wrapper',
    "[default2]:[rank2]:     return f(*args, **kwargs)",
    "[default2]:[rank2]:            ^^^^^^^^^^^^^^^^^^",
    '[default2]:[rank2]:   File "/work/main/sample_logs/skip_backward_hang/../ddp_train.py", line 198, in main',
    "[default2]:[rank2]:     dist.barrier()",
    '[default2]:[rank2]:   File "/work/venv/lib/python3.11/site-packages/torch/distributed/c10d_logger.py", line 83, in wrapper',
    "[default2]:[rank2]:     return func(*args, **kwargs)",
    "[default2]:[rank2]:            ^^^^^^^^^^^^^^^^^^^^^",
    '[default2]:[rank2]:   File "/work/venv/lib/python3.11/site-packages/torch/distributed/distributed_c10d.py", line 5356, in barrier',
    "[default2]:[rank2]:     work.wait()",
    "[default2]:[rank2]: RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:78] Timed out waiting 20000ms for recv operation to complete",
]

# The same launcher.log: torchrun's own traceback, unprefixed, ending in the ChildFailedError.
AGENT_TRACEBACK = [
    "Traceback (most recent call last):",
    '  File "/work/venv/bin/torchrun", line 8, in <module>',
    "    sys.exit(main())",
    "             ^^^^^^",
    '  File "/work/venv/lib/python3.11/site-packages/torch/distributed/elastic/multiprocessing/errors/__init__.py", line 367, in wrapper',
    "    return f(*args, **kwargs)",
    "           ^^^^^^^^^^^^^^^^^^",
    '  File "/work/venv/lib/python3.11/site-packages/torch/distributed/run.py", line 1028, in main',
    "    run(args)",
    '  File "/work/venv/lib/python3.11/site-packages/torch/distributed/run.py", line 1019, in run',
    "    elastic_launch(",
    '  File "/work/venv/lib/python3.11/site-packages/torch/distributed/launcher/api.py", line 194, in __call__',
    "    return launch_agent(",
    "           ^^^^^^^^^^^^^",
    '  File "/work/venv/lib/python3.11/site-packages/torch/distributed/launcher/api.py", line 383, in launch_agent',
    "    raise ChildFailedError(",
    "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
]

# torchrun 2.13 --tee 3 (gloo, 2 ranks) running a script whose rank 1 raises inside an
# `except` around a `raise ... from ...`: both chain separators, and the tee's blank lines
# (`[default1]:`) between the excepthook's `[rank1]:` lines.
CHAINED = [
    "[default1]:[rank1]: Traceback (most recent call last):",
    '[default1]:[rank1]:   File "/tmp/demo/chained.py", line 13, in step',
    "[default1]:[rank1]:     return load(batch)",
    "[default1]:[rank1]:            ^^^^^^^^^^^",
    '[default1]:[rank1]:   File "/tmp/demo/chained.py", line 8, in load',
    '[default1]:[rank1]:     return {"x": 1}[batch]',
    "[default1]:[rank1]:            ~~~~~~~~^^^^^^^",
    "[default1]:[rank1]: KeyError: 'y'",
    "[default1]:",
    "[default1]:[rank1]: The above exception was the direct cause of the following exception:",
    "[default1]:",
    "[default1]:[rank1]: Traceback (most recent call last):",
    '[default1]:[rank1]:   File "/tmp/demo/chained.py", line 22, in main',
    '[default1]:[rank1]:     step("y")',
    '[default1]:[rank1]:   File "/tmp/demo/chained.py", line 15, in step',
    '[default1]:[rank1]:     raise ValueError(f"batch {batch} has no sample") from missing',
    "[default1]:[rank1]: ValueError: batch y has no sample",
    "[default1]:",
    "[default1]:[rank1]: During handling of the above exception, another exception occurred:",
    "[default1]:",
    "[default1]:[rank1]: Traceback (most recent call last):",
    '[default1]:[rank1]:   File "/tmp/demo/chained.py", line 33, in <module>',
    "[default1]:[rank1]:     main()",
    '[default1]:[rank1]:   File "/tmp/demo/chained.py", line 25, in main',
    '[default1]:[rank1]:     raise RuntimeError("rank 1 gave up on its batch")',
    "[default1]:[rank1]: RuntimeError: rank 1 gave up on its batch",
]

# formats.md §10 (bghira/SimpleTuner#2712): the excerpt ends inside the traceback.
CUT_SHORT = [
    "[rank7]: Traceback (most recent call last):",
    '[rank7]:   File "/root/miniconda3/envs/simpletuner_cuda/lib/python3.12/site-packages/simpletuner/train.py", line 225, in <module>',
    "[rank7]:     trainer.train()",
]

# Field sample llamafactory-6000 (train.log): the paste starts inside the traceback.
HEADLESS = [
    "[rank0]:     return cdb.all_gather_into_tensor(output_tensor=output_tensor, input_tensor=tensor, group=group, async_op=async_op)",
    "[rank0]:            ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
    '[rank0]:   File "/root/miniconda3/lib/python3.12/site-packages/torch/_dynamo/eval_frame.py", line 600, in _fn',
    "[rank0]:     return fn(*args, **kwargs)",
    "[rank0]:            ^^^^^^^^^^^^^^^^^^^",
    '[rank0]:   File "/root/miniconda3/lib/python3.12/site-packages/deepspeed/comm/torch.py", line 213, in all_gather_into_tensor',
    "[rank0]:     return self.all_gather_function(output_tensor=output_tensor,",
    "[rank0]:            ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
    '[rank0]:   File "/root/miniconda3/lib/python3.12/site-packages/torch/distributed/c10d_logger.py", line 79, in wrapper',
    "[rank0]:     return func(*args, **kwargs)",
    "[rank0]:            ^^^^^^^^^^^^^^^^^^^^^",
    '[rank0]:   File "/root/miniconda3/lib/python3.12/site-packages/torch/distributed/distributed_c10d.py", line 3200, in all_gather_into_tensor',
    "[rank0]:     work = group._allgather_base(output_tensor, input_tensor, opts)",
    "[rank0]:            ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
    "[rank0]: RuntimeError: [Rank 0]: Ranks 6 failed to pass monitoredBarrier in 180000000000 ms",
]

# formats.md §10 (yifan123/flow_grpo#161).
FAULTHANDLER = [
    "Fatal Python error: Aborted",
    "",
    "Thread 0x00007fa0f51fd640 (most recent call first):",
    '  File "/opt/conda/envs/python3.10.13/lib/python3.10/threading.py", line 324 in wait',
]

# sgl-project/sglang#3745: another thread first, then the current one.
FAULTHANDLER_CURRENT = [
    "Fatal Python error: Segmentation fault",
    "",
    "Thread 0x00007f2e93fff640 (most recent call first):",
    '  File "/XXXX/sglang/python/sglang/srt/managers/scheduler.py", line 462 in watchdog_thread',
    '  File "/usr/lib/python3.10/threading.py", line 953 in run',
    '  File "/usr/lib/python3.10/threading.py", line 1016 in _bootstrap_inner',
    '  File "/usr/lib/python3.10/threading.py", line 973 in _bootstrap',
    "",
    "Current thread 0x00007f2ea0870640 (most recent call first):",
    '  File "/usr/local/lib/python3.10/dist-packages/torch/distributed/distributed_c10d.py", line 2501 in all_reduce',
    '  File "/usr/local/lib/python3.10/dist-packages/torch/distributed/c10d_logger.py", line 83 in wrapper',
]

# torchrun 2.13 --tee 3: rank 0 calls os.abort() with faulthandler enabled.
FAULTHANDLER_TEE = [
    "[default0]:Fatal Python error: Aborted",
    "[default0]:",
    "[default0]:Current thread 0x00007fd3dc681b80 (most recent call first):",
    '[default0]:  File "/tmp/demo/chained.py", line 28 in main',
    '[default0]:  File "/tmp/demo/chained.py", line 33 in <module>',
    "[default0]:",
    "[default0]:Extension modules: torch._C, torch._C._dynamo.autograd_compiler, torch._C._dynamo.eval_frame, torch._C._dynamo.guards, torch._C._dynamo.utils, torch._C._fft, torch._C._linalg, torch._C._nested, torch._C._nn, torch._C._sparse, torch._C._special (total: 11)",
]

# sample_logs/size_mismatch_abort/logs/rank_2.txt (gloo aborts on a size mismatch).
GLOO_ABORT = [
    "terminate called after throwing an instance of 'gloo::EnforceNotMet'",
    "  what():  [enforce fail at /__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:456] op.preamble.length <= op.nbytes. 92 vs 4. Received data size doesn't match expected size. Is there a distributed collective mismatch in your code?",
    "Fatal Python error: Aborted",
    "",
    "Thread 0x00007f659afe6b80 (most recent call first):",
    '  File "/work/venv/lib/python3.11/site-packages/torch/distributed/distributed_c10d.py", line 3252 in all_reduce',
    '  File "/work/venv/lib/python3.11/site-packages/torch/distributed/c10d_logger.py", line 83 in wrapper',
    '  File "/work/main/sample_logs/size_mismatch_abort/../collectives_train.py", line 226 in main',
    '  File "/work/venv/lib/python3.11/site-packages/torch/distributed/elastic/multiprocessing/errors/__init__.py", line 367 in wrapper',
    '  File "/work/main/sample_logs/size_mismatch_abort/../collectives_train.py", line 240 in <module>',
    "",
    "Extension modules: torch._C, torch._C._dynamo.autograd_compiler, torch._C._dynamo.eval_frame, torch._C._dynamo.guards, torch._C._dynamo.utils, torch._C._fft, torch._C._linalg, torch._C._nested, torch._C._nn, torch._C._sparse, torch._C._special (total: 11)",
]

# sample_logs/reducer_unused_params/logs/worker-3/train.log: no Python frame to show.
NO_PYTHON_FRAME = [
    "terminate called without an active exception",
    "Fatal Python error: Aborted",
    "",
    "Thread 0x00007f2893018b80 (most recent call first):",
    "  <no Python frame>",
]

# formats.md §10 (pytorch/pytorch#99218).
C10_SIGNAL = [
    "SIGABRT(6), PID: 3154296, Thread 3154392: ",
    " frame #0: c10::FatalSignalHandler::stacktraceSignalHandler(bool) + 0x8b (0x7f5a5ceaf51b in /fsx/users/andgu/work/pytorch/torch/lib/libc10.so)",
]

# formats.md §4.5 (instructlab/training#520).
WATCHDOG_TERMINATE = [
    "terminate called after throwing an instance of 'c10::DistBackendError'",
    "  what():  [PG ID 0 PG GUID 0(default_pg) Rank 3] Process group watchdog thread terminated with exception: [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1) ran for 90 milliseconds before timing out.",
    "Exception raised from checkTimeout at /pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:632 (most recent call first):",
    "frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x96 (0x7f83f296c1b6 in /actions-runner/_work/training/training/instructlab/venv/lib64/python3.11/site-packages/torch/lib/libc10.so)",
]


def _events(lines: list[str], event: str, file: str = "job.log") -> list[dict]:
    table = parse(lines, file)
    rows = table.filter((pl.col("parser") == "traceback") & (pl.col("event") == event))
    return rows.to_dicts()


@pytest.mark.parametrize(
    ("lines", "exc_type", "message_start", "frame", "rank"),
    [
        (
            RANK2_TRACEBACK,
            "RuntimeError",
            "[/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:78] Timed out",
            "/work/venv/lib/python3.11/site-packages/torch/distributed/distributed_c10d.py:5356 in barrier",
            2,
        ),
        (
            AGENT_TRACEBACK,
            "torch.distributed.elastic.multiprocessing.errors.ChildFailedError",
            None,
            "/work/venv/lib/python3.11/site-packages/torch/distributed/launcher/api.py:383 in launch_agent",
            None,
        ),
    ],
    ids=["torchrun-rank", "launcher"],
)
def test_a_traceback_is_one_exception(lines, exc_type, message_start, frame, rank):
    (found,) = _events(lines, "exception")
    assert (found["line"], found["end_line"]) == (1, len(lines))
    assert found["exc_type"] == exc_type
    if message_start is None:
        assert found["exc_message"] is None
    else:
        assert found["exc_message"].startswith(message_start)
    assert found["frame"] == frame  # the innermost frame: where it was raised
    assert found["rank"] == rank
    assert found["severity"] == "error"


@pytest.mark.parametrize(
    "lines",
    # HEADLESS opens with the code and caret lines of a frame the paste cut off: nothing
    # before them says they belong to a traceback.
    [RANK2_TRACEBACK, AGENT_TRACEBACK, CHAINED, CUT_SHORT, HEADLESS[2:]],
    ids=["torchrun-rank", "launcher", "chained", "cut-short", "headless"],
)
def test_every_line_of_a_traceback_is_recognised(tmp_path, lines):
    assert analyze_files(tmp_path, {"job.log": lines}).unrecognised_lines == 0


def test_a_chain_is_one_exception_that_describes_the_last_one():
    (found,) = _events(CHAINED, "exception")
    assert (found["line"], found["end_line"]) == (1, len(CHAINED))
    assert (found["exc_type"], found["exc_message"]) == (
        "RuntimeError",
        "rank 1 gave up on its batch",
    )
    assert found["frame"] == "/tmp/demo/chained.py:25 in main"
    assert json.loads(found["extra"]) == {"chained_from": "KeyError"}
    assert found["rank"] == 1


def test_a_chain_cut_before_its_last_exception_ends_in_the_one_it_shows():
    # bigscience-workshop/bigscience tr1 chronicles, verbatim: a DataLoader worker's death is
    # the direct cause of the exception in a block the log cuts before its exception line
    lines = [
        "Traceback (most recent call last):",
        '  File "/gpfswork/rech/six/commun/conda/hf-prod/lib/python3.8/site-packages/torch/utils/data/_utils/signal_handling.py", line 66, in handler',
        "RuntimeError: DataLoader worker (pid 30882) is killed by signal: Bus error. It is possible that dataloader's workers are out of shared memory. Please try to raise your shared memory limit.",
        "The above exception was the direct cause of the following exception:",
        "Traceback (most recent call last):",
        '  File "/gpfswork/rech/six/commun/code/Megatron-DeepSpeed/pretrain_gpt.py", line 215, in <module>',
        "    pretrain(train_valid_test_datasets_provider, model_provider, forward_step,",
    ]
    (found,) = _events(lines, "exception")
    assert (found["line"], found["end_line"]) == (1, 7)
    assert found["exc_type"] == "RuntimeError"
    assert found["exc_message"].startswith("DataLoader worker (pid 30882) is killed by signal")


def test_an_excerpt_cut_inside_a_traceback_still_counts():
    (found,) = _events(CUT_SHORT, "exception")
    assert (found["line"], found["end_line"], found["exc_type"]) == (1, 3, None)
    assert found["frame"].endswith("simpletuner/train.py:225 in <module>")
    assert found["rank"] == 7


@pytest.mark.parametrize(
    ("lines", "exc_type", "message_start"),
    [
        (HEADLESS, "RuntimeError", "[Rank 0]: Ranks 6 failed to pass monitoredBarrier"),
        # field sample megatron-661 (pretrain_gpt.log line 9)
        (
            [
                "torch.distributed.DistBackendError: NCCL error in: /opt/pytorch/pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1727, invalid usage (run with NCCL_DEBUG=WARN for details), NCCL version 2.19.3"
            ],
            "torch.distributed.DistBackendError",
            "NCCL error in: /opt/pytorch/pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1727",
        ),
        # formats.md §4.5 (open-mmlab/mmdetection#12392), double space kept
        (
            [
                "RuntimeError: NCCL communicator was aborted on rank 1.  Original reason for failure was: [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=2511984, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1809553 milliseconds before timing out."
            ],
            "RuntimeError",
            "NCCL communicator was aborted on rank 1.  Original reason",
        ),
        # alibaba/Pai-Megatron-Patch#680, verbatim: the paste indents it by a space
        (
            [" AssertionError: Rank 114: found NaN in local forward loss calculation. Device: 2,"],
            "AssertionError",
            "Rank 114: found NaN in local forward loss calculation.",
        ),
    ],
    ids=["headless-traceback", "dist-backend-error", "communicator-aborted", "indented"],
)
def test_an_exception_line_without_its_traceback(lines, exc_type, message_start):
    (found,) = _events(lines, "exception")
    assert (found["line"], found["end_line"]) == (len(lines), len(lines))
    assert found["exc_type"] == exc_type
    assert found["exc_message"].startswith(message_start)
    # where a paste kept the frames above it, the nearest is where it was raised
    assert found["frame"] == (
        "/root/miniconda3/lib/python3.12/site-packages/torch/distributed/distributed_c10d.py:3200"
        " in all_gather_into_tensor"
        if lines is HEADLESS
        else None
    )


def test_an_unindented_headerless_paste_gives_its_exception_the_frame_above(tmp_path):
    # NVIDIA/Megatron-LM#343, verbatim: the paste lost the header and the indentation; only
    # rank 0 starts the TCPStore server that could not bind its port
    lines = [
        'File "/root/miniconda3/lib/python3.8/site-packages/torch/distributed/rendezvous.py", line 142, in _tcp_rendezvous_handler',
        "store = TCPStore(result.hostname, result.port, world_size, start_daemon, timeout)",
        "RuntimeError: Address already in use",
    ]
    (found,) = _events(lines, "exception")
    assert found["frame"].endswith("rendezvous.py:142 in _tcp_rendezvous_handler")
    analysis = analyze_files(tmp_path, {"train.log": lines})
    assert analysis.verdict.headline == (
        "A process could not open the rendezvous store's port: it was taken"
    )


@pytest.mark.parametrize(
    "line",
    [
        # formats.md §3.3: NCCL's own text under a DistBackendError
        "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error. ",
        # formats.md §0: two ranks' writes interleaved on one line (NVIDIA/nccl#1241)
        "torch.distributedtorch.distributed.DistBackendError.: DistBackendErrorNCCL error in: /opt/pytorch/pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1287, invalid usage, NCCL version 2.17.1",
        # field sample megatron-661 (pretrain_gpt.log line 2), the other half of a torn line
        ".DistBackendError: NCCL error in: /opt/pytorch/pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1727, invalid usage (run with NCCL_DEBUG=WARN for details), NCCL version 2.19.3",
        # field sample megatron-661
        "Duplicate GPU detected : rank 3 and rank 0 both on CUDA device f000",
        # indented as code is, or as torchrun's summary quotes a child's (the Pai-Megatron line
        # four and two spaces in): no exception line of its own
        "    AssertionError: Rank 114: found NaN in local forward loss calculation. Device: 2,",
        "  AssertionError: Rank 114: found NaN in local forward loss calculation. Device: 2,",
    ],
)
def test_lines_that_merely_mention_an_error_are_not_exceptions(line):
    assert _events([line], "exception") == []


@pytest.mark.parametrize(
    ("line", "requested", "device", "exc_type"),
    [
        # field sample funasr-2006: the GPU index is missing from the message
        (
            "[rank2]: torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 336.00 MiB. GPU  has a total capacity of 79.15 GiB of which 141.25 MiB is free. Process 2109115 has 78.99 GiB memory in use. Of the allocated memory 77.21 GiB is allocated by PyTorch, and 283.51 MiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)",
            336 * 2**20,
            None,
            "torch.cuda.OutOfMemoryError",
        ),
        # pytorch/pytorch#16417 (torch 2.2+ wording)
        (
            "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 22.00 MiB. GPU 0 has a total capacity of 23.65 GiB of which 11.06 MiB is free. Including non-PyTorch memory, this process has 23.60 GiB memory in use. Of the allocated memory 22.90 GiB is allocated by PyTorch, and 194.87 MiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)",
            22 * 2**20,
            "0",
            "torch.cuda.OutOfMemoryError",
        ),
        # carolchenyx/MGFN.#35 (torch 2.1 spelled "capacty")
        (
            "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.70 GiB. GPU 0 has a total capacty of 6.00 GiB of which 0 bytes is free. Of the allocated memory 2.93 GiB is allocated by PyTorch, and 2.30 GiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting max_split_size_mb to avoid fragmentation.  See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF",
            round(1.70 * 2**30),
            "0",
            "torch.cuda.OutOfMemoryError",
        ),
        # shllln/GenerativeGraph#5 (torch 1.x)
        (
            "RuntimeError: CUDA out of memory. Tried to allocate 1024.00 KiB (GPU 0; 11.17 GiB total capacity; 10.90 GiB already allocated; 576.00 KiB free; 30.96 MiB cached)",
            1024 * 2**10,
            "0",
            "RuntimeError",
        ),
    ],
    ids=["funasr", "torch-2.2", "torch-2.1", "torch-1"],
)
def test_out_of_memory_reports_the_request_and_the_gpu(line, requested, device, exc_type):
    (oom,) = _events([line], "oom")
    assert (oom["value"], oom["device"], oom["exc_type"]) == (requested, device, exc_type)
    assert oom["exc_message"].startswith("CUDA out of memory.")
    assert len(_events([line], "exception")) == 1  # the exception itself is kept too


def test_oom_is_on_the_exception_line_and_keeps_the_rank():
    (oom,) = _events(
        ["[rank2]: torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 336.00 MiB."],
        "oom",
    )
    assert (oom["line"], oom["rank"], oom["severity"]) == (1, 2, "error")


def test_the_cuda_runtime_s_out_of_memory_is_read_however_an_allocator_capitalises_it():
    # TideDra/lmm-r1#43, verbatim: vLLM's cumem allocator waking a sleeping engine (Ray actor
    # prefixes as Ray prints them)
    lines = [
        '(ActorModelRayActor pid=348952)   File "/usr/local/lib/python3.10/dist-packages/vllm/device_allocator/cumem.py", line 75, in create_and_map',
        "(ActorModelRayActor pid=348952)     python_create_and_map(*allocation_handle)",
        "(ActorModelRayActor pid=348952) RuntimeError: CUDA Error: out of memory at /workspace/csrc/cumem_allocator.cpp:62",
    ]
    (oom,) = _events(lines, "oom")
    assert (oom["line"], oom["exc_type"]) == (3, "RuntimeError")


def test_an_exception_about_memory_that_is_not_cuda_is_not_oom():
    # formats.md §8 (huggingface/trl#921): a DDP error, not an allocation failure
    line = "RuntimeError: DDP expects same model across all ranks, but Rank 0 has 382 params, while rank 1 has inconsistent 0 params."
    assert _events([line], "oom") == []


@pytest.mark.parametrize(
    ("lines", "signal", "frame", "end_line"),
    [
        (
            FAULTHANDLER,
            "SIGABRT",
            "/opt/conda/envs/python3.10.13/lib/python3.10/threading.py:324 in wait",
            4,
        ),
        (
            FAULTHANDLER_CURRENT,
            "SIGSEGV",
            "/usr/local/lib/python3.10/dist-packages/torch/distributed/distributed_c10d.py:2501 in all_reduce",
            11,
        ),
        (FAULTHANDLER_TEE, "SIGABRT", "/tmp/demo/chained.py:28 in main", 7),
        (
            GLOO_ABORT[2:],
            "SIGABRT",
            "/work/venv/lib/python3.11/site-packages/torch/distributed/distributed_c10d.py:3252 in all_reduce",
            10,
        ),
        (NO_PYTHON_FRAME[1:], "SIGABRT", None, 4),
    ],
    ids=["one-thread", "current-thread", "torchrun-tee", "main-thread", "no-python-frame"],
)
def test_a_faulthandler_dump_is_a_fatal_signal(lines, signal, frame, end_line):
    (found,) = _events(lines, "fatal_signal")
    assert (found["line"], found["end_line"], found["signal"]) == (1, end_line, signal)
    assert found["frame"] == frame  # what the rank was doing when it died


@pytest.mark.parametrize(
    "lines",
    [FAULTHANDLER_CURRENT, FAULTHANDLER_TEE, GLOO_ABORT, NO_PYTHON_FRAME, C10_SIGNAL],
    ids=["current-thread", "torchrun-tee", "gloo-abort", "no-python-frame", "c10-handler"],
)
def test_every_line_of_a_crash_dump_is_recognised(tmp_path, lines):
    assert analyze_files(tmp_path, {"job.log": lines}).unrecognised_lines == 0


def test_c10_fatal_signal_handler():
    (found,) = _events(C10_SIGNAL, "fatal_signal")
    assert (found["signal"], found["pid"], found["tid"]) == ("SIGABRT", 3154296, 3154392)
    assert (found["line"], found["end_line"]) == (1, 2)


@pytest.mark.parametrize(
    ("lines", "exc_type", "message_start", "end_line"),
    [
        (
            WATCHDOG_TERMINATE,
            "c10::DistBackendError",
            "[PG ID 0 PG GUID 0(default_pg) Rank 3] Process group watchdog thread terminated",
            2,
        ),
        (
            GLOO_ABORT[:2],
            "gloo::EnforceNotMet",
            "[enforce fail at /__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:456]",
            2,
        ),
        # formats.md §3.3 (tatsu-lab/stanford_alpaca#207): newlines lost in the issue body
        (
            [
                "terminate called after throwing an instance of 'std::runtime_error' what(): NCCL error: remote process exited or there was a network error, NCCL version 2.14.3 ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely. Last error: NET/IB : Got completion from peer 11.214.147.122<39138> with error 12, opcode 0, len 0, vendor err 129"
            ],
            "std::runtime_error",
            "NCCL error: remote process exited or there was a network error",
            1,
        ),
        (NO_PYTHON_FRAME[:1], None, None, 1),
        # formats.md §0 (huggingface/open-r1#620): two ranks' messages torn into one line
        (
            [
                "terminate called after throwing an instance of 'c10::DistBackendErrorterminate called after throwing an instance of ''"
            ],
            None,
            None,
            1,
        ),
    ],
    ids=["watchdog", "gloo-enforce", "one-line", "no-active-exception", "interleaved"],
)
def test_cpp_terminate(lines, exc_type, message_start, end_line):
    (found,) = _events(lines, "cpp_terminate")
    assert (found["line"], found["end_line"], found["exc_type"]) == (1, end_line, exc_type)
    if message_start is None:
        assert found["exc_message"] is None
    else:
        assert found["exc_message"].startswith(message_start)


def test_the_cpp_stack_after_what_is_recognised(tmp_path):
    assert analyze_files(tmp_path, {"job.log": WATCHDOG_TERMINATE}).unrecognised_lines == 0


def test_ranks_interleaved_in_one_file_keep_their_own_tracebacks():
    # Two processes' tracebacks written line by line into one console log.
    interleaved = [
        line
        for pair in itertools.zip_longest(CHAINED, RANK2_TRACEBACK)
        for line in pair
        if line is not None
    ]
    found = _events(interleaved, "exception")
    assert sorted(
        (row["rank"], row["line"], row["end_line"], row["exc_type"]) for row in found
    ) == [
        (1, 1, len(interleaved), "RuntimeError"),
        (2, 2, 2 * len(RANK2_TRACEBACK), "RuntimeError"),
    ]


def test_the_same_local_rank_on_two_nodes_keeps_two_tracebacks():
    # pdsh puts `host: ` before each node's torchrun --tee output (formats.md §0); both nodes'
    # local rank 2 print RANK2_TRACEBACK's lines (without torch's `[rank2]:`), interleaved.
    def node(host: str) -> list[str]:
        return [f"{host}: " + line.replace("[rank2]: ", "") for line in RANK2_TRACEBACK]

    interleaved = [
        line for pair in zip(node("node04"), node("node05"), strict=True) for line in pair
    ]
    found = _events(interleaved, "exception")
    assert sorted((row["line"], row["end_line"], row["exc_type"]) for row in found) == [
        (1, len(interleaved) - 1, "RuntimeError"),
        (2, len(interleaved), "RuntimeError"),
    ]


def test_two_nodes_local_rank_in_one_file_keep_two_tracebacks():
    # srun without --label merges the nodes' consoles: each node's local rank 2 is
    # `[default2]:`, told apart only by torch's `[rankN]:` (rank 2 and rank 10).
    other_node = [line.replace("[rank2]:", "[rank10]:") for line in RANK2_TRACEBACK]
    interleaved = [line for pair in zip(RANK2_TRACEBACK, other_node, strict=True) for line in pair]
    found = _events(interleaved, "exception")
    assert sorted((row["rank"], row["line"], row["end_line"]) for row in found) == [
        (2, 1, len(interleaved) - 1),
        (10, 2, len(interleaved)),
    ]


# --- exceptions written without a Python exception line of their own -----------------------

# pytorch/examples#447 (torch 1.0): mp.spawn re-raises process 1's error in the parent; the
# report is cut before the child's exception line
SPAWNED = [
    "Traceback (most recent call last):",
    '  File "main_multiprocessing_distributed.py", line 483, in <module>',
    "    mp.spawn(main_worker, nprocs=ngpus_per_node, args=(ngpus_per_node, args))",
    '  File "/home/libi/anaconda3/lib/python3.7/site-packages/torch/multiprocessing/spawn.py", line 141, in spawn',
    "    while not spawn_context.join():",
    '  File "/home/libi/anaconda3/lib/python3.7/site-packages/torch/multiprocessing/spawn.py", line 91, in join',
    "    raise Exception(msg)",
    "Exception: ",
    "",
    "-- Process 1 terminated with the following error:",
    "Traceback (most recent call last):",
    '  File "/home/libi/anaconda3/lib/python3.7/site-packages/torch/multiprocessing/spawn.py", line 11, in _wrap',
    "    fn(i, *args)",
    '  File "/home/han424/projects/PCN/PCN_imagenet/main_multiprocessing_distributed.py", line 254, in main_worker',
    "    train(train_loader, model, criterion, optimizer, epoch, args)",
]


def test_a_spawned_process_s_traceback_is_one_exception_of_its_rank(tmp_path):
    # the parent's exception only carries the child's: one exception, on the process index
    (found,) = _events(SPAWNED, "exception")
    assert (found["line"], found["end_line"]) == (1, len(SPAWNED))
    assert (found["rank"], found["rank_from"]) == (1, "content")
    assert found["exc_type"] is None  # the report is cut before the child's exception line
    assert found["frame"].endswith("main_multiprocessing_distributed.py:254 in main_worker")
    assert analyze_files(tmp_path, {"train.log": SPAWNED}).unrecognised_lines == 0


# pytorch/pytorch#14554, verbatim (the CI log in the issue, cut before the exception line):
# multiprocessing's `Process <name>:` over a child's traceback, which PyTorch's test harness names
# by rank, after the test runner's words on its line
HARNESS_CHILD = [
    "Nov 29 17:41:15 test_barrier_full_group (__main__.TestDistBackend) ... Process process 1:",
    "Nov 29 17:41:15 Traceback (most recent call last):",
    'Nov 29 17:41:15   File "/opt/conda/lib/python3.6/multiprocessing/process.py", line 258, in _bootstrap',
    "Nov 29 17:41:15     self.run()",
    'Nov 29 17:41:15   File "/opt/conda/lib/python3.6/multiprocessing/process.py", line 93, in run',
    "Nov 29 17:41:15     self._target(*self._args, **self._kwargs)",
    'Nov 29 17:41:15   File "test_distributed.py", line 1389, in _run',
    'Nov 29 17:41:15     getattr(self, self.id().split(".")[2])()',
    'Nov 29 17:41:15   File "test_distributed.py", line 1328, in wrapper',
    "Nov 29 17:41:15     fn(self)",
    'Nov 29 17:41:15   File "test_distributed.py", line 1021, in test_barrier_full_group',
    "Nov 29 17:41:15     self._test_barrier_helper(group, group_id, rank)",
    'Nov 29 17:41:15   File "test_distributed.py", line 980, in _test_barrier_helper',
    "Nov 29 17:41:15     self.assertGreaterEqual(time.time(), expected_time[0])",
    'Nov 29 17:41:15   File "/opt/conda/lib/python3.6/unittest/case.py", line 1227, in assertGreaterEqual',
    "Nov 29 17:41:15     self.fail(self._formatMessage(msg, standardMsg))",
    'Nov 29 17:41:15   File "/opt/conda/lib/python3.6/unittest/case.py", line 670, in fail',
    "Nov 29 17:41:15     raise self.failureException(msg)",
]


def test_a_child_the_test_harness_named_by_its_rank_is_that_rank(tmp_path):
    (found,) = _events(HARNESS_CHILD, "exception")
    assert (found["line"], found["rank"]) == (2, 1)
    analysis = analyze_files(tmp_path, {"test.log": HARNESS_CHILD})
    assert analysis.verdict.ranks == [1] and analysis.unrecognised_lines == 0


def test_a_spawned_process_s_exception_is_reported_on_its_rank(tmp_path):
    # pytorch/pytorch#14390 (torch 1.0, verbatim up to where the excerpt is cut), ended
    # by the exception pytorch/pytorch#15950 quotes for this traceback
    lines = [
        '  File "/private/home/tengli/pytorch/torch/multiprocessing/spawn.py", line 103, in join',
        "    raise Exception(msg)",
        "Exception:",
        "",
        "-- Process 5 terminated with the following error:",
        "Traceback (most recent call last):",
        '  File "/private/home/tengli/pytorch/torch/multiprocessing/spawn.py", line 11, in _wrap',
        "    fn(i, *args)",
        '  File "/private/home/tengli/pytorch_fork_example/examples/imagenet/main.py", line 273, in main_worker',
        "    train(train_loader, model, criterion, optimizer, epoch, args)",
        "AssertionError: daemonic processes are not allowed to have children",
    ]
    analysis = analyze_files(tmp_path, {"train.log": lines})
    (raised,) = [f for f in analysis.findings if f.kind == "rank_exception"]
    assert raised.ranks == [5] and raised.details["exception"] == "AssertionError"


@pytest.mark.parametrize(
    ("line", "exc_type", "rank"),
    [
        # lyu-yx/ACUMEN#4
        (
            "torch.multiprocessing.spawn.ProcessExitedException: process 0 terminated with signal SIGKILL",
            "torch.multiprocessing.spawn.ProcessExitedException",
            0,
        ),
        # jeffffffli/HybrIK#198 (torch < 1.9 raised a plain Exception)
        ("Exception: process 3 terminated with signal SIGKILL", "Exception", 3),
    ],
)
def test_a_spawned_process_killed_without_a_traceback_is_named_by_its_index(line, exc_type, rank):
    (found,) = _events([line], "exception")
    assert (found["exc_type"], found["rank"]) == (exc_type, rank)


def test_returnn_s_unhandled_exception_line_is_an_exception_of_its_process():
    # rwth-i6/returnn#1484
    line = "Unhandled exception <class 'RuntimeError'> in thread <_MainThread(MainThread, started 139628628058112)>, proc 2834."
    (found,) = _events([line], "exception")
    assert (found["exc_type"], found["pid"], found["rank"]) == ("RuntimeError", 2834, None)


def test_two_ranks_unhandled_exceptions_torn_into_one_line_give_the_first():
    # rwth-i6/returnn#1454: two processes wrote onto one line
    line = "Unhandled exception <class 'RuntimeError'> in thread <_MainThread(MainThread, started 22977597855552)>, proc 11644.Unhandled exception <class 'RuntimeError'> in thread <_MainThread(MainThread, started 22911415002944)>, proc 11643."
    (found,) = _events([line], "exception")
    assert (found["exc_type"], found["pid"]) == ("RuntimeError", 11644)


def test_an_unhandled_exception_takes_the_rank_of_its_nccl_process(tmp_path):
    # rwth-i6/returnn#1484's line, with a world init record of pid 2834 (built in the shape of
    # NVIDIA/nccl#1814's `... - Init COMPLETE` line): the pid is that of rank 2
    lines = [
        "node-a:2834:3107 [2] NCCL INFO comm 0x557fe785f7a0 rank 2 nranks 4 cudaDev 2 nvmlDev 2 busId 3a000 commId 0x5ae77eb5ea4ec1ee - Init COMPLETE",
        "Unhandled exception <class 'RuntimeError'> in thread <_MainThread(MainThread, started 139628628058112)>, proc 2834.",
    ]
    analysis = analyze_files(tmp_path, {"train.log": lines})
    (found,) = analysis.job.events.filter(pl.col("event") == "exception").iter_rows(named=True)
    assert (found["rank"], found["rank_from"]) == (2, "process")
    (raised,) = [f for f in analysis.findings if f.kind == "rank_exception"]
    assert raised.ranks == [2] and raised.details["exception"] == "RuntimeError"


# pytorch/pytorch#80772, verbatim: the tail of a rank-0 pod's agent traceback, as pasted; its
# exception line is the class alone, fully qualified, with no message
RENDEZVOUS_TAIL = [
    '  File "/opt/conda/lib/python3.8/site-packages/torch/distributed/elastic/agent/server/api.py", line 538, in _rendezvous',
    "    store, group_rank, group_world_size = spec.rdzv_handler.next_rendezvous()",
    '  File "/opt/conda/lib/python3.8/site-packages/torch/distributed/elastic/rendezvous/dynamic_rendezvous.py", line 1024, in next_rendezvous',
    "    self._op_executor.run(join_op, deadline)",
    '  File "/opt/conda/lib/python3.8/site-packages/torch/distributed/elastic/rendezvous/dynamic_rendezvous.py", line 637, in run',
    "    raise RendezvousTimeoutError()",
    "torch.distributed.elastic.rendezvous.api.RendezvousTimeoutError",
]


def test_loose_frames_ended_by_a_lone_exception_class_are_that_exception(tmp_path):
    analysis = analyze_files(tmp_path, {"agent.log": RENDEZVOUS_TAIL})
    assert analysis.unrecognised_lines == 0
    startup = [f for f in analysis.findings if f.kind == "missing_rank"]
    assert startup and "RendezvousTimeoutError" in startup[0].summary
    assert analysis.verdict.finding is startup[0] and analysis.verdict.ranks == []


def test_the_outermost_frame_of_saving_or_evaluation_is_kept():
    # NVIDIA/nccl#1132, verbatim (cut before the exception line)
    lines = [
        "Traceback (most recent call last):",
        '  File "/home/jonch/Desktop/Programming/consulting/sudoai/../../mlsys/diffusers/examples/consistency_distillation/train_lcm_distill_lora_sd_wds.py", line 1318, in main',
        "    accelerator.save_state(save_path)",
        '  File "/home/jonch/Desktop/Programming/mlsys/accelerate/src/accelerate/accelerator.py", line 2711, in save_state',
        "    model.save_checkpoint(output_dir, ckpt_id, **save_model_func_kwargs)",
        '  File "/home/jonch/Desktop/Programming/pytorch-stable/lib/python3.10/site-packages/deepspeed/runtime/engine.py", line 3049, in save_checkpoint',
        "    dist.barrier()",
        '  File "/home/jonch/Desktop/Programming/pytorch-stable/lib/python3.10/site-packages/deepspeed/comm/comm.py", line 408, in barrier',
        "    return cdb.barrier(group=group, async_op=async_op)",
    ]
    row = parsed_by("traceback", lines).filter(event="exception").row(0, named=True)
    assert row["extra"] == '{"in_work":"save_state"}'
    assert row["frame"].endswith("comm.py:408 in barrier")


# --- native crash banners -----------------------------------------------------------------


# NVIDIA/nccl#1996, verbatim (cut): a SIGSEGV on one of NCCL's threads, UCX's handler
NCCL_1996 = [
    "[n125-011-039:288505:0:296459] Caught signal 11 (Segmentation fault: address not mapped to object at address 0x48)",
    "==== backtrace (tid: 296459) ====",
    " 0  /usr/lib/libucs.so.0(ucs_handle_error+0x2d4) [0x7fedc925c274]",
    " 3  /opt/tiger/nccl/lib/libnccl.so(+0x120057) [0x7ff1c18c1057]",
]
# msr-fiddle/pipedream#76, verbatim (cut): a torchrun worker in Docker dies of a bus error in
# NCCL's threads; the reporter's fix was `--shm-size=6g`
PIPEDREAM_76 = [
    "[8d6bf97c3bf4:3039 :0:3095] Caught signal 7 (Bus error: nonexistent physical address)",
    "==== backtrace (tid:   3095) ====",
    " 0 0x0000000000043090 killpg()  ???:0",
    " 1 0x000000000018bb41 __nss_database_lookup()  ???:0",
    " 2 0x000000000007587d ncclGroupEnd()  ???:0",
    " 3 0x000000000007b0ef ncclGroupEnd()  ???:0",
    " 4 0x0000000000059e97 ncclGetUniqueId()  ???:0",
    " 5 0x00000000000489b1 ???()  /usr/lib/x86_64-linux-gnu/libnccl.so.2:0",
    " 8 0x0000000000008609 start_thread()  ???:0",
    " 9 0x000000000011f133 clone()  ???:0",
    "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:",
]
# CarperAI/trlx#536, verbatim: `deepspeed` on 8 V100s, every process's UCX banner without its
# `[host:pid:...]` tag, then one backtrace: NCCL's shared-memory transport mapping its segment
TRLX_536 = [
    *["Caught signal 7 (Bus error: nonexistent physical address)"] * 8,
    "==== backtrace (tid:   3458) ====",
    " 0 0x0000000000043090 killpg()  ???:0",
    " 1 0x000000000018bb41 __nss_database_lookup()  ???:0",
    " 2 0x000000000006f425 ncclShmOpen()  /dvs/p4/build/sw/gpgpu/nccl/gitfusion/stable/src/misc/shmutils.cc:52",
    " 3 0x0000000000074322 shmRecvSetup()  /dvs/p4/build/sw/gpgpu/nccl/gitfusion/stable/src/transport/shm.cc:110",
    " 4 0x00000000000556a4 ncclTransportP2pSetup()  /dvs/p4/build/sw/gpgpu/nccl/gitfusion/stable/src/transport.cc:33",
]
# ai2cm/ace#346, verbatim
ACE_346 = [
    "[92c90024c028:157  :4:419] Caught signal 11 (Segmentation fault: address not mapped to object at address (nil))",
    "==== backtrace (tid:    414) ====",
    " 0 0x0000000000042520 __sigaction()  ???:0",
    "=================================",
]


def test_ucx_s_crash_banner_is_a_fatal_signal_with_its_backtrace():
    found = parse(NCCL_1996)
    assert found.height == 1
    crash = found.row(0, named=True)
    assert (crash["event"], crash["signal"], crash["end_line"]) == ("fatal_signal", "SIGSEGV", 4)
    assert (crash["host"], crash["pid"], crash["tid"]) == ("n125-011-039", 288505, 296459)


def test_a_crash_in_nccl_s_code_is_told_by_its_first_nccl_frame():
    crash = parse(NCCL_1996).row(0, named=True)
    assert crash["frame"] == "libnccl.so"  # glibc's symbol-less frame: the library
    crash = parse(PIPEDREAM_76).row(0, named=True)
    assert crash["frame"] == "ncclGroupEnd"  # UCX's `???:0`: the function alone


def test_ucx_s_untagged_banners_in_a_row_share_the_backtrace_under_them(tmp_path):
    crashes = parse(TRLX_536).filter(pl.col("event") == "fatal_signal")
    assert crashes.get_column("line").to_list() == list(range(1, 9))
    assert set(crashes.get_column("signal")) == {"SIGBUS"}
    assert set(crashes.get_column("frame")) == {"shmutils.cc:52 in ncclShmOpen"}
    assert crashes.get_column("pid").null_count() == 8  # the tag that names it is lost
    assert analyze_files(tmp_path, {"train.log": TRLX_536}).unrecognised_lines == 0


def test_a_native_crash_outside_nccl_names_no_nccl_frame():
    # ai2cm/ace#346 below: a backtrace in the C library only
    crash = parse(ACE_346).row(0, named=True)
    assert crash["frame"] is None


def test_ucx_s_banner_with_a_padded_pid_and_no_thread_id():
    crash = parse(ACE_346).row(0, named=True)
    assert (crash["signal"], crash["pid"], crash["end_line"]) == ("SIGSEGV", 157, 4)


def test_open_mpi_s_crash_banner_is_a_fatal_signal():
    # NVIDIA/TensorRT-LLM#997, verbatim (cut)
    lines = [
        "[ic5:133017] *** Process received signal ***",
        "[ic5:133017] Signal: Segmentation fault (11)",
        "[ic5:133017] Signal code: Address not mapped (1)",
        "[ic5:133017] Failing at address: 0x440000e9",
        "[ic5:133017] [ 0] /lib/x86_64-linux-gnu/libc.so.6(+0x42520)[0x7f978f9e4520]",
    ]
    crashes = parse(lines).filter(pl.col("event") == "fatal_signal")
    assert crashes.height == 1
    assert crashes.row(0, named=True)["signal"] == "SIGSEGV"
    assert crashes.row(0, named=True)["end_line"] == 5


def test_abseil_s_failure_signal_banner_in_a_ray_worker_is_a_fatal_signal(tmp_path):
    # ray-project/ray#49252, verbatim (cut): a Ray Train worker aborts in gloo's libuv transport
    lines = [
        "(RayTrainWorker pid=7315) [/Users/runner/work/pytorch/pytorch/pytorch/third_party/gloo/gloo/transport/uv/libuv.h:596] uv_accept: invalid argument",
        "(RayTrainWorker pid=7315) *** SIGABRT received at time=1734086759 ***",
        "(RayTrainWorker pid=7315) PC: @        0x19ea96600  (unknown)  __pthread_kill",
        "(RayTrainWorker pid=7315)     @        0x1046b6bf0  (unknown)  absl::lts_20230125::WriteFailureInfo()",
        "(RayTrainWorker pid=7315)     @        0x17685ccb0  (unknown)  gloo::transport::uv::Device::listenCallback()",
    ]
    crashes = parse(lines).filter(pl.col("event") == "fatal_signal")
    assert crashes.height == 1
    crash = crashes.row(0, named=True)
    assert (crash["signal"], crash["line"], crash["end_line"]) == ("SIGABRT", 2, 5)
    analysis = analyze_files(tmp_path, {"train.log": lines})
    assert analysis.verdict.finding.details["signal"] == "SIGABRT"
    assert "pid 7315" in analysis.verdict.finding.summary


def test_the_interpreter_s_own_fatal_error_is_an_abort():
    # pytorch/torchtitan#1066, verbatim (a compiled run's rank 0 after step 3840)
    lines = [
        "[rank0]:Fatal Python error: none_dealloc: deallocating None",
        "[rank0]:Python runtime state: initialized",
        "[rank0]:",
        "[rank0]:Thread 0x00007f975c95b640 (most recent call first):",
        "[rank0]:  <no Python frame>",
    ]
    death = only(parsed_by("traceback", lines).filter(pl.col("event") == "fatal_signal"))
    assert (death["rank"], death["signal"]) == (0, "SIGABRT")
    assert death["exc_message"] == "none_dealloc: deallocating None"


# modelscope/ms-swift#4644, verbatim: a paste that lost the traceback's header and indentation
# and doubled every line break
DOUBLED_PASTE = [
    '[rank24]: File "/home/user/.local/lib/python3.10/site-packages/swift/megatron/train/utils.py", line 213, in get_batch',
    "",
    "[rank24]: batch = get_batch_on_this_tp_rank(data_iterator)",
    "",
    '[rank24]: File "/home/user/.local/lib/python3.10/site-packages/swift/megatron/train/utils.py", line 60, in get_batch_on_this_tp_rank',
    "",
    "[rank24]: data = next(data_iterator)",
    "",
    "[rank24]: StopIteration",
]


def test_a_doubled_paste_without_header_or_indentation_is_still_a_traceback(tmp_path):
    verdict = analyze_files(tmp_path, {"output.log": DOUBLED_PASTE}).verdict
    assert (verdict.finding.kind, verdict.ranks) == ("rank_exception", [24])
    assert "StopIteration" in verdict.finding.summary
    assert "utils.py:60 in get_batch_on_this_tp_rank" in verdict.finding.summary


# nharada/mosaic-streaming-crash-ddp (a repro repository's committed log), verbatim but for
# frames left out between the first and the last of each traceback
LIGHTNING_RERAISE = [
    "Traceback (most recent call last):",
    '  File "/home/nharada/Software/mambaforge/envs/mosaic-streaming-crash-ddp/lib/python3.10/site-packages/pytorch_lightning/trainer/call.py", line 38, in _call_and_handle_interrupt',
    "    return trainer_fn(*args, **kwargs)",
    '  File "/home/nharada/Software/mambaforge/envs/mosaic-streaming-crash-ddp/lib/python3.10/genericpath.py", line 50, in getsize',
    "    return os.stat(filename).st_size",
    "FileNotFoundError: [Errno 2] No such file or directory: '/tmp/streaming/ef5956/shuffle.npy'",
    "",
    "During handling of the above exception, another exception occurred:",
    "",
    "Traceback (most recent call last):",
    '  File "/home/nharada/Code/mosaic-streaming-crash-ddp/main.py", line 110, in <module>',
    "    main()",
    '  File "/home/nharada/Software/mambaforge/envs/mosaic-streaming-crash-ddp/lib/python3.10/site-packages/pytorch_lightning/strategies/ddp.py", line 460, in reconciliate_processes',
    '    raise DeadlockDetectedException(f"DeadLock detected from rank: {self.global_rank} \\n {trace}")',
    "pytorch_lightning.utilities.exceptions.DeadlockDetectedException: DeadLock detected from rank: 2 ",
    " Traceback (most recent call last):",
]
# another process's traceback in the same console, no rank of its own
OTHER_PROCESS = [
    "Traceback (most recent call last):",
    '  File "/home/nharada/Software/mambaforge/envs/mosaic-streaming-crash-ddp/lib/python3.10/genericpath.py", line 50, in getsize',
    "    return os.stat(filename).st_size",
    "FileNotFoundError: [Errno 2] No such file or directory: '/tmp/streaming/ef5956/shuffle.npy'",
]


def test_lightnings_reraise_is_the_named_ranks_own_exception(tmp_path):
    analysis = analyze_files(tmp_path, {"output.log": [*LIGHTNING_RERAISE, *OTHER_PROCESS]})
    events = analysis.job.events.filter(pl.col("event") == "exception").sort("line")
    reraised, other = events.row(0, named=True), events.row(1, named=True)
    # the wrapped exception is said, with the rank Lightning names
    assert (reraised["rank"], reraised["exc_type"]) == (2, "FileNotFoundError")
    assert reraised["frame"].endswith("genericpath.py:50 in getsize")
    # the console's other traceback does not take that rank
    assert other["rank"] is None
    assert analysis.verdict.ranks == [2]


def test_an_interrupted_process_s_traceback_says_where_its_own_code_stood():
    # a run here (tests/data/launchers/torchrun/interrupted): rank 0 in all_reduce when Ctrl-C
    # came, its KeyboardInterrupt chained to gloo's error in the collective's wait
    lines = [
        "[rank0]: Traceback (most recent call last):",
        '[rank0]:   File "/tmp/torchenv/lib/python3.11/site-packages/torch/distributed/c10d_logger.py", line 83, in wrapper',
        "[rank0]:     return func(*args, **kwargs)",
        '[rank0]:   File "/tmp/torchenv/lib/python3.11/site-packages/torch/distributed/distributed_c10d.py", line 3252, in all_reduce',
        "[rank0]:     work.wait()",
        "[rank0]: RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:553] Connection closed by peer [127.0.0.1]:21926.",
        "",
        "[rank0]: During handling of the above exception, another exception occurred:",
        "",
        "[rank0]: Traceback (most recent call last):",
        '[rank0]:   File "/work/main/tests/data/launchers/torchrun/hang_worker.py", line 30, in <module>',
        "[rank0]:     main()",
        '[rank0]:   File "/work/main/tests/data/launchers/torchrun/hang_worker.py", line 23, in main',
        "[rank0]:     dist.all_reduce(total)",
        '[rank0]:   File "/tmp/torchenv/lib/python3.11/site-packages/torch/distributed/c10d_logger.py", line 85, in wrapper',
        "[rank0]:     msg_dict = _get_msg_dict(func.__name__, *args, **kwargs)",
        "[rank0]: KeyboardInterrupt",
    ]
    row = only(parsed_by("traceback", lines).filter(pl.col("event") == "exception"))
    assert row["exc_type"] == "KeyboardInterrupt"
    said = json.loads(row["extra"])
    assert said["own_frame"] == "/work/main/tests/data/launchers/torchrun/hang_worker.py:23 in main"
    assert said["own_line"] == 13 and said["collective"] == "all_reduce"
    # the error in the collective's wait alone: its place is the collective, in no own code
    failed = only(parsed_by("traceback", lines[:6]).filter(pl.col("event") == "exception"))
    assert json.loads(failed["extra"]) == {"collective": "all_reduce"}


THREADS = Path(__file__).parents[1] / "data" / "threads"
RICH_RUN = Path(__file__).parents[1] / "data" / "launchers" / "torchrun" / "rich_traceback"


def test_a_traceback_drawn_by_rich_is_read_with_its_frames_and_wrapped_message():
    # a real run here (torchrun/rich_worker.py): rank 1's ValueError in rich's box, and rank
    # 2's gloo error whose message rich wrapped onto the lines after `RuntimeError: `
    lines = (RICH_RUN / "console.log").read_text().splitlines()
    found = parse(lines, "console.log").filter(pl.col("event") == "exception")
    by_rank = {row["rank"]: row for row in found.iter_rows(named=True) if row["rank"] is not None}
    assert by_rank[1]["exc_type"] == "ValueError"
    assert by_rank[1]["frame"].endswith("rich_worker.py:20 in decode")
    assert by_rank[2]["exc_type"] == "RuntimeError"
    # the frame whose function rich moved to the next line
    assert by_rank[2]["frame"].endswith("torch/autograd/graph.py:979 in _engine_run_backward")
    assert by_rank[2]["exc_message"].startswith(
        "[/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:553] "
        "Connection closed by peer"
    )


def test_a_rich_traceback_cut_before_its_exception_still_names_its_rank(tmp_path):
    # MLI-lab/DeepDeWedge#40 (tests/data/threads): rank 1's box, glued to a progress bar and
    # cut by the excerpt inside the DataLoader's frames
    lines = (THREADS / "deepdewedge40_rich_cut.log").read_text().splitlines()
    analysis = analyze_files(tmp_path, {"train.log": lines})
    assert (analysis.verdict.finding.kind, analysis.verdict.ranks) == ("rank_exception", [1])
    assert "_process_data" in analysis.verdict.headline


def test_only_an_exception_line_ending_in_its_colon_takes_the_lines_after_it_as_its_message():
    # a bare `KeyboardInterrupt` says all it says; torchrun's `ChildFailedError:` is followed by
    # its summary's rule, not by a message (the summary's lines as torch 2.13 prints them here)
    lines = [
        "Traceback (most recent call last):",
        '  File "/work/train.py", line 9, in <module>',
        "KeyboardInterrupt",
        "rank=0 step=3 stage=forward",
        "Traceback (most recent call last):",
        '  File "/tmp/torchenv/bin/torchrun", line 8, in <module>',
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
        "============================================================",
        "rich_worker.py FAILED",
    ]
    found = parse(lines).filter(pl.col("event") == "exception").sort("line")
    assert found.get_column("exc_message").to_list() == [None, None]


# hustvl/Vim#61, verbatim: two of eight processes (more than the GPUs) printed into each other
GLUED_TYPES = [
    "RuntimeErrorRuntimeError: CUDA error: invalid device ordinal",
    "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.",
    ": CUDA error: invalid device ordinal",
    "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.",
]


def test_an_exception_type_two_processes_printed_into_each_other_is_the_type_once(tmp_path):
    error = parsed_by("traceback", GLUED_TYPES).filter(event="exception").row(0, named=True)
    assert error["exc_type"] == "RuntimeError"
    assert error["exc_message"] == "CUDA error: invalid device ordinal"
    verdict = analyze_files(tmp_path, {"train.log": GLUED_TYPES}).verdict
    assert verdict.headline == "A process died of a RuntimeError"


# Physical-Intelligence/openpi#868, verbatim (the whole paste): rank 2's traceback, its line
# breaks lost in the text
FLATTENED_TRACEBACK = (
    '[rank2]: Traceback (most recent call last): [rank2]: File ".../scripts/train_pytorch.py", '
    "line 332, in train_loop [rank2]: shutil.rmtree(config.checkpoint_dir) [rank2]: File "
    '".../shutil.py", line 748, in rmtree [rank2]: FileNotFoundError: [Errno 2] No such file or '
    "directory: '/path/to/checkpoint_dir"
)


def test_a_traceback_on_one_line_names_its_exception(tmp_path):
    raised = only(parse([FLATTENED_TRACEBACK]).filter(event="exception"))
    assert (raised["exc_type"], raised["rank"]) == ("FileNotFoundError", 2)
    assert raised["exc_message"] == "[Errno 2] No such file or directory: '/path/to/checkpoint_dir"
    analysis = analyze_files(tmp_path, {"train.log": [FLATTENED_TRACEBACK]})
    assert (analysis.verdict.finding.kind, analysis.verdict.ranks) == ("rank_exception", [2])


def test_a_header_alone_names_no_exception():
    # the same header with the rest of the traceback cut: nothing to read an exception from
    raised = only(parse(["[rank2]: Traceback (most recent call last):"]).filter(event="exception"))
    assert raised["exc_type"] is None


# aws/amazon-sagemaker-examples#3574, verbatim: SageMaker's failure report flattened a host's
# output into one line, the traceback's header in the middle of it
REPORT_WITH_A_TRACEBACK = (
    'AlgorithmError: ExecuteUserScriptError: Command "/opt/conda/bin/python3.6 mnist.py --backe'
    "nd gloo --epochs 1\" INFO:__main__:Initialized the distributed environment: 'gloo' backend "
    "on 2 nodes. Current host rank is 0. Number of gpus: 0 INFO:__main__:Get train data loader "
    'Traceback (most recent call last): File "mnist.py", line 257, in <module> train(parser.par'
    'se_args()) File "mnist.py", line 114, in train train_loader = _get_train_data_loader(args.'
    'batch_size, args.data_dir, is_distributed, **kwargs) File "mnist.py", line 48, in _get_tra'
    'in_data_loader [transforms.ToTensor(), transforms.Normalize((0.1307,), (0.3081,))] File "/'
    'opt/conda/lib/python3.6/site-packages/torchvision/datasets/mnist.py", line 83, in __init__'
    " ' You can use download=True to download it') RuntimeError: Dataset not found. You can use"
    " download=True to download it, exit code: 1"
)


def test_a_traceback_flattened_into_a_reports_line_names_its_exception():
    raised = only(parse([REPORT_WITH_A_TRACEBACK]).filter(event="exception"))
    assert raised["exc_type"] == "RuntimeError"
    assert raised["exc_message"].startswith("Dataset not found. You can use download=True")


# vllm-project/speculators#544 (torch 2.9, torchrun, two ranks): torch._dynamo's wrapper names
# the compiler's own error on the lines after its `raised:`
DYNAMO_WRAPPED = [
    "[rank1]: torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:",
    "[rank1]: RuntimeError: Not all inputs to pattern found in match.kwargs. Perhaps one of the inputs is unused? argnames=['x', 'slice_shape'], match.kwargs={'x': squeeze}",
]


def test_an_exception_line_ending_in_a_colon_carries_its_message_on_below():
    # the rank's traceback header was lost under a progress bar: the lines stand alone
    events = parse(DYNAMO_WRAPPED)
    wrapper = events.filter(pl.col("exc_type") == "torch._dynamo.exc.BackendCompilerFailed")
    assert wrapper.height == 1
    message = wrapper.item(0, "exc_message")
    assert message.startswith("backend='inductor' raised: RuntimeError: Not all inputs")
    assert (wrapper.item(0, "rank"), wrapper.item(0, "line")) == (1, 1)


def test_the_wrapper_s_message_is_the_same_under_a_header():
    lines = [
        "[rank0]: Traceback (most recent call last):",
        '[rank0]:   File "/usr/local/lib/python3.12/site-packages/torch/_inductor/pattern_matcher.py", line 1425, in check_fn',
        "[rank0]:     raise RuntimeError(",
        *(line.replace("[rank1]", "[rank0]") for line in DYNAMO_WRAPPED),
    ]

    def wrapper_message(events: pl.DataFrame) -> str:
        wrapper = pl.col("exc_type") == "torch._dynamo.exc.BackendCompilerFailed"
        return events.filter(wrapper).item(0, "exc_message")

    under_header = parse(lines)
    assert under_header.filter(pl.col("exc_type").is_not_null()).item(0, "line") == 1
    assert wrapper_message(under_header) == wrapper_message(parse(DYNAMO_WRAPPED))


def test_megatron_s_nan_check_names_the_rank_that_raised_it(tmp_path):
    # alibaba/Pai-Megatron-Patch#366, the description's last line, verbatim (no prefix)
    line = (
        "AssertionError: Rank 11: found NaN in local grad norm in backward pass before "
        "data-parallel communication collective. Device: 3"
    )
    raised = only(parse([line]).filter(event="exception"))
    assert (raised["rank"], raised["exc_type"]) == (11, "AssertionError")
    verdict = analyze_files(tmp_path, {"train.log": [line]}).verdict
    assert (verdict.finding.kind, verdict.ranks) == ("rank_exception", [11])
    assert verdict.finding.fix.startswith("The training's numbers diverged")


# vllm-project/vllm-ascend#3357, verbatim (cut): torch_npu's allocator in CUDA's words, four
# tensor-parallel workers at once on one long prompt, then the engine's word on it
NPU_OUT_OF_MEMORY = [
    '(Worker_TP15 pid=1177) ERROR 10-10 11:32:51 [multiproc_executor.py:671]   File "/cache/lib/python3.11/site-packages/vllm_ascend/attention/attention_mask.py", line 101, in get_splitfuse_attn_mask',
    "(Worker_TP15 pid=1177) ERROR 10-10 11:32:51 [multiproc_executor.py:671]     return attn_mask.contiguous().to(device, non_blocking=True)",
    "(Worker_TP15 pid=1177) ERROR 10-10 11:32:51 [multiproc_executor.py:671]            ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
    "(Worker_TP15 pid=1177) ERROR 10-10 11:32:51 [multiproc_executor.py:671] RuntimeError: NPU out of memory. Tried to allocate 11.50 GiB (NPU 15; 60.97 GiB total capacity; 55.29 GiB already allocated; 55.29 GiB current active; 4.64 GiB free; 55.46 GiB reserved in total by PyTorch) If reserved memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation.",
    "(Worker_TP9 pid=1171) ERROR 10-10 11:32:51 [multiproc_executor.py:671] RuntimeError: NPU out of memory. Tried to allocate 11.50 GiB (NPU 9; 60.97 GiB total capacity; 55.28 GiB already allocated; 55.28 GiB current active; 4.65 GiB free; 55.44 GiB reserved in total by PyTorch) If reserved memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation.",
    "(Worker_TP5 pid=1167) ERROR 10-10 11:32:51 [multiproc_executor.py:671] RuntimeError: NPU out of memory. Tried to allocate 11.50 GiB (NPU 5; 60.97 GiB total capacity; 55.28 GiB already allocated; 55.28 GiB current active; 4.65 GiB free; 55.44 GiB reserved in total by PyTorch) If reserved memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation.",
    "(Worker_TP0 pid=1162) ERROR 10-10 11:32:51 [multiproc_executor.py:671] RuntimeError: NPU out of memory. Tried to allocate 11.50 GiB (NPU 0; 60.97 GiB total capacity; 54.10 GiB already allocated; 54.10 GiB current active; 4.64 GiB free; 54.27 GiB reserved in total by PyTorch) If reserved memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation.",
    "(EngineCore_DP0 pid=1020) ERROR 10-10 11:32:51 [core.py:710] RuntimeError: Worker failed with error 'NPU out of memory. Tried to allocate 11.50 GiB (NPU 0; 60.97 GiB total capacity; 54.10 GiB already allocated; 54.10 GiB current active; 4.64 GiB free; 54.27 GiB reserved in total by PyTorch) If reserved memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation.', please check the stack trace above for the root cause",
]


def test_an_npu_out_of_memory_is_an_oom_of_the_device():
    # the traceback's own exception line (TP15's); the bare lines after it are log records
    oom = only(parsed_by("traceback", NPU_OUT_OF_MEMORY).filter(pl.col("event") == "oom"))
    assert (oom["device"], oom["value"]) == ("15", 11.5 * 2**30)


def test_the_npus_out_of_memory_is_the_verdict_in_the_device_s_words(tmp_path):
    verdict = analyze_files(tmp_path, {"console.log": NPU_OUT_OF_MEMORY}).verdict
    assert (verdict.finding.kind, verdict.ranks) == ("oom", [0, 5, 9, 15])
    assert verdict.headline == "Ranks 0, 5, 9 and 15 ran out of device memory"


def test_the_hints_after_a_cuda_error_are_part_of_it_without_its_traceback(tmp_path):
    # bitsandbytes-foundation/bitsandbytes#1633, verbatim (the paste's last four lines)
    lines = [
        "[rank0]: RuntimeError: CUDA error: an illegal memory access was encountered",
        "[rank0]: CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.",
        "[rank0]: For debugging consider passing CUDA_LAUNCH_BLOCKING=1",
        "[rank0]: Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.",
    ]
    analysis = analyze_files(tmp_path, {"console.log": lines})
    assert analysis.unrecognised_lines == 0
    assert (analysis.verdict.finding.kind, analysis.verdict.ranks) == ("rank_exception", [0])


# NVIDIA-NeMo/RL#3793, verbatim (the stored copy cuts the stack before its last line): a Ray
# task of the policy worker at rank 0 raised an out of memory
RAY_TASK_OUT_OF_MEMORY = [
    "ray.exceptions.RayTaskError(OutOfMemoryError): ray::DTensorPolicyWorkerV2.get_logprobs() (pid=2671339, ip=10.65.16.209, actor_id=d5836b60449efbd220b3c2f406000000, repr=DTensorPolicyWorkerV2[rank=0])",
    '  File "/root/.local/share/uv/python/cpython-3.13.14-linux-x86_64-gnu/lib/python3.13/concurrent/futures/_base.py", line 453, in result',
    "    return self.__get_result()",
    "           ~~~~~~~~~~~~~~~~~^^",
    '  File "/root/.local/share/uv/python/cpython-3.13.14-linux-x86_64-gnu/lib/python3.13/concurrent/futures/_base.py", line 402, in __get_result',
]


def test_a_ray_task_s_out_of_memory_is_the_gpu_s_even_where_its_line_is_cut(tmp_path):
    analysis = analyze_files(tmp_path, {"driver.log": RAY_TASK_OUT_OF_MEMORY})
    verdict = analysis.verdict
    assert (verdict.finding.kind, verdict.ranks) == ("oom", [0])
    assert verdict.headline == "Rank 0 ran out of GPU memory"


def test_a_spawned_child_s_chain_cut_ends_in_the_last_exception_the_child_shows(tmp_path):
    # facebookresearch/fairseq#2203, verbatim (two of the parent's frames left out): the
    # spawn parent's Exception, the child's UnpicklingError in all_gather_list, then a block
    # the paste cut
    lines = [
        "Traceback (most recent call last):",
        '  File "train.py", line 305, in <module>',
        "    cli_main()",
        '  File "/opt/conda/envs/py36/lib/python3.6/site-packages/torch/multiprocessing/spawn.py", line 118, in join',
        "    raise Exception(msg)",
        "Exception: ",
        "",
        "-- Process 2 terminated with the following error:",
        "Traceback (most recent call last):",
        '  File "/root/paddlejob/workspace/env_run/fairseq/distributed_utils.py", line 169, in all_gather_list',
        "    result.append(pickle.loads(bytes(out_buffer[2 : size + 2].tolist())))",
        "_pickle.UnpicklingError: could not find MARK",
        "",
        "During handling of the above exception, another exception occurred:",
        "Traceback (most recent call last):",
        '  File "/opt/conda/envs/py36/lib/python3.6/site-packages/torch/multiprocessing/spawn.py", line 19, in _wrap',
        "    fn(i, *args)",
        '  File "/root/paddlejob/workspace/env_run/train.py", line 77, in main',
        "    train(args, trainer, task, epoch_itr)",
    ]
    (row,) = (
        parsed_by("traceback", lines)
        .filter(pl.col("event") == "exception")
        .select("rank", "exc_type", "exc_message", "frame")
        .rows()
    )
    assert row[:3] == (2, "_pickle.UnpicklingError", "could not find MARK")
    assert row[3].endswith("distributed_utils.py:169 in all_gather_list")
    verdict = analyze_files(tmp_path, {"train.log": lines}).verdict
    assert (verdict.finding.kind, verdict.ranks) == ("collective_mismatch", [])


# pytorch/pytorch#45116, verbatim (a CircleCI run of DDP under distributed autograd): RPC
# relays worker 0's exception to its caller
RPC_RELAYED = [
    'Sep 22 01:48:29   File "/Users/distiller/workspace/miniconda3/lib/python3.7/site-packages/torch/distributed/rpc/internal.py", line 164, in _run_function',
    "Sep 22 01:48:29     result = python_udf.func(*python_udf.args, **python_udf.kwargs)",
    'Sep 22 01:48:29   File "/Users/distiller/workspace/miniconda3/lib/python3.7/site-packages/torch/testing/_internal/distributed/ddp_under_dist_autograd_test.py", line 78, in _call_method',
    "Sep 22 01:48:29     return method(rref.local_value(), *args, **kwargs)",
    'Sep 22 01:48:29   File "/Users/distiller/workspace/miniconda3/lib/python3.7/site-packages/torch/distributed/rpc/internal.py", line 177, in _handle_exception',
    "Sep 22 01:48:29     raise result.exception_type(result.msg)",
    "Sep 22 01:48:29 AssertionError: On WorkerInfo(id=0, name=worker0):",
    "Sep 22 01:48:29 AssertionError('Default process group is not initialized')",
]


def test_an_exception_rpc_relays_is_the_raising_worker_s(tmp_path):
    verdict = analyze_files(tmp_path, {"ci.log": RPC_RELAYED}).verdict
    assert (verdict.finding.kind, verdict.ranks) == ("rank_exception", [0])


# zznature/MaskLLM's committed training log (llama8b_scripts/training_notes/data/3rd_Training/
# training3_date_25-09-19_time_15-33-06.log), verbatim: the paste put the failing frame on the
# exception line and Megatron's assertion message on the line below it
FRAME_ON_THE_EXCEPTION_LINE = [
    "Traceback (most recent call last):",
    'AssertionError:   File "/data/home/zdhs0054/zzhou/MaskLLM/megatron/core/distributed/grad_buffer.py", line 146, in finish_grad_sync',
    "Rank 5: found NaN in local grad norm in backward pass before data-parallel communication collective. Device: 5, node: hd02-gpu1-0056",
]


def test_a_frame_in_the_message_s_place_leaves_the_message_to_the_line_below(tmp_path):
    exception = only(parsed_by("traceback", FRAME_ON_THE_EXCEPTION_LINE))
    assert exception["exc_type"] == "AssertionError"
    assert exception["exc_message"].startswith("Rank 5: found NaN in local grad norm")
    verdict = analyze_files(tmp_path, {"console.log": FRAME_ON_THE_EXCEPTION_LINE}).verdict
    assert (verdict.finding.kind, verdict.ranks) == ("rank_exception", [5])
    assert verdict.headline == "Rank 5's training numbers diverged (AssertionError)"


def test_an_exception_of_any_class_name_right_under_loose_frames_ends_the_traceback(tmp_path):
    # axolotl-ai-cloud/axolotl#1888, verbatim: the paste starts inside rank 0's traceback (its
    # header lost); pyarrow's `ArrowInvalid` names no Error but ends it all the same
    lines = [
        '[rank0]:   File "pyarrow/table.pxi", line 4387, in pyarrow.lib.Table.combine_chunks',
        '[rank0]:   File "pyarrow/error.pxi", line 155, in pyarrow.lib.pyarrow_internal_check_status',
        '[rank0]:   File "pyarrow/error.pxi", line 92, in pyarrow.lib.check_status',
        "[rank0]: pyarrow.lib.ArrowInvalid: offset overflow while concatenating arrays",
    ]
    (raised,) = parsed_by("traceback", lines).filter(pl.col("event") == "exception").to_dicts()
    assert (raised["exc_type"], raised["exc_message"]) == (
        "pyarrow.lib.ArrowInvalid",
        "offset overflow while concatenating arrays",
    )
    verdict = analyze_files(tmp_path, {"console.log": lines}).verdict
    assert verdict.headline == "Rank 0 died of an ArrowInvalid"


@pytest.mark.parametrize(
    "after",
    ["Info: resuming from the last checkpoint", "Epoch: 3/10, loss 0.412", "INFO: saving"],
    ids=["logger-level", "another-rank-s-print", "upper-case-level"],
)
def test_a_word_and_colon_under_loose_frames_is_no_exception(after):
    lines = ['  File "train.py", line 12, in main', "    step(batch)", after]
    raised = parsed_by("traceback", lines).filter(pl.col("event") == "exception")
    assert raised.get_column("exc_type").drop_nulls().to_list() == []


# ashleve/lightning-hydra-template#175, verbatim: CPython's report of an exception raised in a
# DataLoader iterator's finaliser, which it could not raise (training went on)
IGNORED_IN_DEL = [
    "Exception ignored in: <function _MultiProcessingDataLoaderIter.__del__ at 0x7fcfc2e7a5e0>",
    "Traceback (most recent call last):",
    '  File "/home/dbw/.conda/envs/pyg18/lib/python3.8/site-packages/torch/utils/data/dataloader.py", line 1324, in __del__',
    "    self._shutdown_workers()",
    '  File "/home/dbw/.conda/envs/pyg18/lib/python3.8/site-packages/torch/utils/data/dataloader.py", line 1316, in _shutdown_workers',
    "    if w.is_alive():",
    '  File "/home/dbw/.conda/envs/pyg18/lib/python3.8/multiprocessing/process.py", line 160, in is_alive',
    "    assert self._parent_pid == os.getpid(), 'can only test a child process'",
    "AssertionError: can only test a child process",
]

# facebookresearch/dinov3#113, verbatim: a DINOv3 run on 4 GPUs; an ignored flush error with
# no traceback, then torchrun stopping three workers and naming local rank 1 as failed
DINOV3_EXIT = [
    "I20250828 04:05:40 1038637 dinov3 helpers.py:105] Training  [   220/375000]  eta: 3 days, 18:06:38  lr: 0.0000 (0.0000)  wd: 0.0400 (0.0400)  mom: 0.9940 (0.9940)  last_layer_lr: 0.0000 (0.0000)  total_loss: 18.2318 (18.2715)  local_batch_size: 32.00",
    "Exception ignored in: <_io.BufferedWriter name=83>",
    "BrokenPipeError: [Errno 32] Broken pipe",
    "W0828 04:05:46.009000 1038570 site-packages/torch/distributed/elastic/multiprocessing/api.py:897] Sending process 1038637 closing signal SIGTERM",
    "W0828 04:05:46.012000 1038570 site-packages/torch/distributed/elastic/multiprocessing/api.py:897] Sending process 1038639 closing signal SIGTERM",
    "W0828 04:05:46.013000 1038570 site-packages/torch/distributed/elastic/multiprocessing/api.py:897] Sending process 1038640 closing signal SIGTERM",
    "E0828 04:05:46.603000 1038570 site-packages/torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: 1) local_rank: 1 (pid: 1038638) of binary: /root/miniforge3/envs/py313-pt2",
]


@pytest.mark.parametrize(
    ("lines", "exc_type"),
    [(IGNORED_IN_DEL, "AssertionError"), (DINOV3_EXIT[1:3], "BrokenPipeError")],
)
def test_an_exception_python_reported_as_ignored_is_no_failure(lines, exc_type, tmp_path):
    assert _events(lines, "exception") == []
    (ignored,) = _events(lines, "ignored_exception")
    assert ignored["exc_type"] == exc_type and ignored["severity"] == "warning"
    # the report's own line is read too
    assert analyze_files(tmp_path, {"job.log": lines}).unrecognised_lines == 0


def test_a_run_that_went_on_after_an_ignored_exception_has_no_verdict(tmp_path):
    # the lines above between two snapshots of an epoch's bar (mosaicml/composer#106's shape:
    # the error printed under DDP spawn, the epoch going on)
    bar = "Epoch 1:   3%|▎         | 1/29 [00:00<00:21,  1.32it/s, loss/train=2.3191]"
    done = "Epoch 1: 100%|██████████| 29/29 [00:10<00:00,  2.75it/s, loss/train=1.2191]"
    analysis = analyze_files(tmp_path, {"train.log": [bar, *IGNORED_IN_DEL, done]})
    assert analysis.verdict is None


def test_the_worker_the_launcher_names_failed_despite_an_ignored_flush_error(tmp_path):
    analysis = analyze_files(tmp_path, {"train.log": DINOV3_EXIT})
    assert analysis.verdict.finding.kind == "rank_exception"
    assert analysis.verdict.ranks == [1]


# ecmwf/WeatherGenerator#1572, verbatim (srun's `0: ` label on each line): the excerpt opens at
# the terminate handler's `what():`, its `terminate called after throwing ...` line cut off
ORPHAN_WHAT = [
    "0:   what():  CUDA error: initialization error",
    "0: CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.",
    "0: For debugging consider passing CUDA_LAUNCH_BLOCKING=1",
    "0: Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.",
    "0: ",
    "0: Exception raised from c10_cuda_check_implementation at /pytorch/c10/cuda/CUDAException.cpp:43 (most recent call first):",
]


def test_a_what_line_whose_terminate_line_was_cut_is_the_handler_s(tmp_path):
    (died,) = _events(ORPHAN_WHAT, "cpp_terminate")
    # the handler prints `what():` only for a std::exception: that much of its type is known
    assert died["exc_type"] == "std::exception" and died["rank"] == 0
    assert died["exc_message"] == "CUDA error: initialization error"
    analysis = analyze_files(tmp_path, {"train.log": ORPHAN_WHAT})
    assert analysis.verdict.finding.kind == "rank_exception"
    assert analysis.verdict.ranks == [0]


def test_a_what_line_under_its_terminate_line_is_one_event():
    lines = [
        "[default3]:terminate called after throwing an instance of 'c10::CUDAError'",
        "[default3]:  what():  CUDA error: unknown error",
    ]
    (died,) = _events(lines, "cpp_terminate")
    assert died["exc_type"] == "c10::CUDAError"


# EleutherAI/gpt-neox#88, verbatim (pdsh's host before each line): the interpreter refusing a
# script two nodes' checkouts lacked, from each of their processes
SCRIPT_MISSING = [
    "10.141.250.227: /usr/bin/python3: can't open file 'train_mpu.py': [Errno 2] No such file or directory",
    "10.141.250.227: /usr/bin/python3: can't open file 'train_mpu.py': [Errno 2] No such file or directory",
    "10.141.250.227: /usr/bin/python3: can't open file 'train_mpu.py': [Errno 2] No such file or directory",
    "10.141.113.189: /usr/bin/python3: can't open file 'train_mpu.py': [Errno 2] No such file or directory",
]


def test_a_script_the_interpreter_could_not_open_is_the_process_s_failure(tmp_path):
    (first, *_) = _events(SCRIPT_MISSING, "exception")
    assert first["exc_type"] == "FileNotFoundError"
    assert (
        first["exc_message"]
        == "can't open file 'train_mpu.py': [Errno 2] No such file or directory"
    )
    analysis = analyze_files(tmp_path, {"console.log": SCRIPT_MISSING})
    verdict = analysis.verdict
    assert verdict.finding.kind == "rank_exception"
    assert "10.141.250.227, 10.141.113.189" in verdict.finding.summary
    assert "the same code at the same path" in verdict.finding.fix


def test_a_module_the_interpreter_could_not_find_to_run_is_the_process_s_failure():
    # myc634/UltraLiDAR_nusc_waymo#1's title, verbatim: the interpreter torchrun was told to use
    # lacked torch
    (failed,) = _events(["/usr/bin/python: No module named torch.distributed"], "exception")
    assert failed["exc_type"] == "ModuleNotFoundError"
    assert failed["exc_message"] == "No module named 'torch.distributed'"


def test_a_module_lookup_that_raised_is_the_processs_exception_of_that_type():
    # meta-llama/llama#1374, verbatim: each torchrun worker's interpreter, run with `-m`, could
    # not import the package its module is in (PYTHONPATH lacked the llama-models checkout)
    line = (
        "/opt/anaconda3/bin/python: Error while finding module specification for "
        "'models.llama4.scripts.chat_completion' (ModuleNotFoundError: No module named 'models')"
    )
    (failed,) = _events([line], "exception")
    assert failed["exc_type"] == "ModuleNotFoundError"
    assert failed["exc_message"] == "No module named 'models'"


# yangjianxin1/Firefly-LLaMA2-Chinese#9, verbatim: bitsandbytes' own check of a CUDA call, then
# torchrun's agent naming the worker that exited (one node)
NATIVE_CHECK = [
    "Error operation not supported at line 351 in file /home/tim/git/bitsandbytes/csrc/pythonInterface.c",
    "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 0 (pid: 31779) of binary: /root/miniconda3/envs/chatglm_ft/bin/python",
]


@pytest.mark.parametrize(
    ("line", "message", "frame"),
    [
        (
            NATIVE_CHECK[0],
            "operation not supported",
            "/home/tim/git/bitsandbytes/csrc/pythonInterface.c:351 in ?",
        ),
        # tloen/alpaca-lora#320's title and bitsandbytes-foundation/bitsandbytes#470, verbatim
        (
            "Error invalid device function at line 508 in file /home/surfingtech/alpaca-lora-main/bitsandbytes-main/csrc/ops.cu",
            "invalid device function",
            "/home/surfingtech/alpaca-lora-main/bitsandbytes-main/csrc/ops.cu:508 in ?",
        ),
        (
            "Error invalid device ordinal at line 359 in file /home/tim/git/bitsandbytes/csrc/pythonInterface.c",
            "invalid device ordinal",
            "/home/tim/git/bitsandbytes/csrc/pythonInterface.c:359 in ?",
        ),
    ],
)
def test_a_native_library_s_failed_cuda_check_is_the_process_s_error(line, message, frame):
    (failed,) = _events([line], "exception")
    assert (failed["exc_type"], failed["exc_message"], failed["frame"]) == (
        "CUDA error",
        message,
        frame,
    )


def test_the_worker_the_launcher_names_died_of_the_native_check(tmp_path):
    analysis = analyze_files(tmp_path, {"train.log": NATIVE_CHECK})
    verdict = analysis.verdict
    assert verdict.ranks == [0]
    assert "CUDA error: operation not supported" in verdict.finding.summary


def test_a_traceback_quoted_as_inline_code_keeps_its_header():
    # huggingface/accelerate#2229, verbatim: the paste opened with a backtick
    lines = [
        "`Traceback (most recent call last):",
        '  File "/opt/conda/lib/python3.7/site-packages/torch/distributed/elastic/utils/store.py", line 31, in get_all',
        '    data = store.get(f"{prefix}{idx}")',
        "RuntimeError: Socket Timeout`",
    ]
    (failed,) = _events(lines, "exception")
    assert (failed["line"], failed["end_line"], failed["exc_type"]) == (1, 4, "RuntimeError")


@pytest.mark.parametrize(
    ("line", "message"),
    [
        # huggingface/pytorch-image-models#1724, verbatim: torch.distributed.launch (torch 2.0)
        # passing `--local-rank` to a script that declares `--local_rank`
        (
            "train.py: error: unrecognized arguments: --local-rank=2",
            "unrecognized arguments: --local-rank=2",
        ),
        # microsoft/unilm#1597, verbatim: the parser's prog is a description with spaces
        (
            "BEiT fine-tuning and evaluation script for image classification: error: unrecognized arguments: --local-rank=1",
            "unrecognized arguments: --local-rank=1",
        ),
    ],
)
def test_argparses_refusal_is_the_processs_argument_error(line, message):
    (refused,) = _events([line], "exception")
    assert (refused["exc_type"], refused["exc_message"]) == ("ArgumentError", message)


def test_argparses_banner_where_the_paste_ends_is_a_refusal_its_error_line_cut():
    # cnulab/RealNet#54, verbatim: the usage banner ends the log
    banner = "usage: train_realnet.py [-h] [--config CONFIG] [--dataset {MVTec-AD,VisA,MPDD,BTAD}] [--local_rank LOCAL_RANK]"
    (refused,) = _events([banner], "exception")
    assert refused["exc_type"] == "ArgumentError"
    assert refused["exc_message"].startswith("its command line was refused")
    # SLURM's own `srun: error:` is no argparse refusal (huggingface/accelerate#2960, verbatim,
    # as ../shared/formats.md quotes it)
    srun = "srun: error: SH-IDC1-10-140-24-95: task 0: Exited with exit code 1"
    assert _events([srun], "exception") == []


# NVIDIA/nccl#1669, verbatim (the paste ends here): the RAS client crashed a process still
# setting up its communicators; Open MPI's handler announced the signal twice, its name cut
SIGNAL_NAME_CUT = [
    "rtptest1621:405884:407462 [0] NCCL INFO RAS client listening socket at ::1<28028>",
    "[rtptest1621:405884] *** Process received signal ***",
    "[rtptest1621:405884] *** Process received signal ***",
]


def test_a_signal_announced_without_its_name_is_the_process_s_crash(tmp_path):
    (crash,) = _events(SIGNAL_NAME_CUT, "fatal_signal")
    assert (crash["line"], crash["host"], crash["pid"]) == (2, "rtptest1621", 405884)
    verdict = analyze_files(tmp_path, {"output.log": SIGNAL_NAME_CUT}).verdict
    assert verdict.headline == "A process crashed on a signal; the line naming it is cut"


def test_a_signal_announced_then_named_is_read_once_by_its_name():
    lines = [*SIGNAL_NAME_CUT[:2], "[rtptest1621:405884] Signal: Segmentation fault (11)"]
    (crash,) = _events(lines, "fatal_signal")
    assert crash["signal"] == "SIGSEGV"


# verl-project/verl#472, verbatim: a verl worker's Ray core (C++) dies of an exception nothing
# caught, as the host ran out of threads
RAY_CORE_ABORT = "(WorkerDict pid=27497) [2025-03-04 19:28:30,014 E 27497 27497] logging.cc:113: Unhandled exception: N5boost10wrapexceptINS_6system12system_errorEEE. what(): thread: Resource temporarily unavailable [system:11] [repeated 2x across cluster] (Ray deduplicates logs by default. Set RAY_DEDUP_LOGS=0 to disable log deduplication, or see https://docs.ray.io/en/master/ray-observability/user-guides/configure-logging.html#log-deduplication for more options.)"


def test_a_ray_workers_own_unhandled_cpp_exception_is_its_failure(tmp_path):
    thrown = only(parsed_by("traceback", [RAY_CORE_ABORT]).filter(event="exception"))
    assert (thrown["exc_type"], thrown["pid"]) == ("system_error", 27497)
    assert thrown["exc_message"] == "thread: Resource temporarily unavailable [system:11]"
    verdict = analyze_files(tmp_path, {"driver.log": [RAY_CORE_ABORT]}).verdict
    assert verdict.finding.kind == "rank_exception"
