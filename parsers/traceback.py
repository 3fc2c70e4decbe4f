"""Python tracebacks, CUDA out-of-memory errors and the crash dumps a dying rank prints.

A traceback as CPython prints it (Lib/traceback.py); torch >= 2.3's excepthook adds the
`[rankN]: ` prefix, which framing peels (pytorch/pytorch#118190, bghira/SimpleTuner#2712):

    [rank7]: Traceback (most recent call last):
    [rank7]:   File "/root/.../simpletuner/train.py", line 225, in <module>
    [rank7]:     trainer.train()
    [rank7]: RuntimeError: [Rank 0]: Ranks 6 failed to pass monitoredBarrier in 180000000000 ms

Chained exceptions repeat the block after `During handling of the above exception, another
exception occurred:` or `The above exception was the direct cause of the following exception:`.
An excerpt may hold only the last line (`torch.distributed.DistBackendError: NCCL error in: ...`).

CUDA out of memory (pytorch/pytorch:c10/cuda/CUDACachingAllocator.cpp), by era:

    torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 22.00 MiB. GPU 0 has a ...
    RuntimeError: CUDA out of memory. Tried to allocate 1024.00 KiB (GPU 0; 11.17 GiB total ...
    RuntimeError: CUDA error: out of memory

faulthandler (cpython:Python/faulthandler.c), enabled by TorchElastic's `@record`; threads are
listed newest first, so the main thread comes last (yifan123/flow_grpo#161):

    Fatal Python error: Aborted

    Thread 0x00007fa0f51fd640 (most recent call first):
      File "/opt/conda/envs/python3.10.13/lib/python3.10/threading.py", line 324 in wait

The interpreter's own fatal errors (`Py_FatalError`, which then aborts the process) share the
header and the thread dump, with the failing function in place of a signal's name
(pytorch/torchtitan#1066: `Fatal Python error: none_dealloc: deallocating None`).

c10's fatal signal handler (pytorch/pytorch:c10/util/signal_handler.cpp, pytorch/pytorch#99218):

    SIGABRT(6), PID: 3154296, Thread 3154392:
     frame #0: c10::FatalSignalHandler::stacktraceSignalHandler(bool) + 0x8b (0x7f5a5ceaf51b in ...)

torch.multiprocessing.spawn re-raises a child's error in the parent with the child's traceback
under a header naming the process index, the rank as `mp.spawn(fn, nprocs=N)` numbers them
(pytorch/pytorch:torch/multiprocessing/spawn.py; pytorch/examples#447); a child killed outright
is named in the exception's message (`ProcessExitedException: process 0 terminated with signal
SIGKILL`, torch < 1.9: `Exception: process 3 terminated with signal SIGKILL`):

    Exception:

    -- Process 1 terminated with the following error:
    Traceback (most recent call last):

RETURNN's excepthook prints the exception type and the process, not an exception line
(rwth-i6/returnn#1484):

    Unhandled exception <class 'RuntimeError'> in thread <_MainThread(...)>, proc 2834.

and the C++ runtime's terminate handler (libstdc++'s verbose terminate handler;
instructlab/training#520):

    terminate called after throwing an instance of 'c10::DistBackendError'
      what():  [PG ID 0 PG GUID 0(default_pg) Rank 3] Process group watchdog thread terminated ...

rich's traceback handler (`rich.traceback.install()`, which `accelerate launch` and typer command
lines use when rich is installed) draws the same traceback in a box, a frame's place on one
line or, when it is too long, split over two; the exception line comes after the box, its
message wrapped to the console's width (a run here: tests/data/launchers/torchrun/
rich_traceback; MLI-lab/DeepDeWedge#40):

    [rank1]: ╭───────────────────── Traceback (most recent call last) ──────────────────────╮
    [rank1]: │ /work/.../rich_worker.py:20 in decode                                         │
    [rank1]: │ ❱ 20 │   │   raise ValueError(f"corrupt sample in batch {step}: expected 8 f │
    [rank1]: │ /tmp/torchenv/lib/python3.11/site-packages/torch/autograd/__init__.py:395 in │
    [rank1]: │ backward                                                                     │
    [rank1]: ╰──────────────────────────────────────────────────────────────────────────────╯
    [rank1]: ValueError: corrupt sample in batch 3: expected 8 features

An exception whose chain passes through a collective (`distributed_c10d.py ... in all_reduce`,
autograd's backward), or that is a `KeyboardInterrupt` (Ctrl-C stops a hung job, and every
rank prints where it stood), keeps in `extra` where its process was: `collective` (its name,
empty for none), `own_frame` and `own_line` (the innermost frame of the job's own code).
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from logforensics.registry import LineParser
from parsers.log_levels import LOGGED
from parsers.ray_memory import MONITOR as RAY_MONITOR

# Characters of an exception message kept in `exc_message`.
MESSAGE_CHARS = 500

# A frame of the context in which the main process works first while the others wait in a
# barrier (transformers' TrainingArguments.main_process_first, accelerate's
# main_process_first and local_main_process_first; the older torch_distributed_zero_first of
# transformers' trainer_pt_utils and of YOLOv5, LianjiaTech/BELLE#542):
#   File ".../transformers/training_args.py", line 1891, in main_process_first
#   File ".../transformers/trainer_pt_utils.py", line 251, in torch_distributed_zero_first
MAIN_FIRST_CONTEXT = r"(?:(?:local_)?main_process_first|torch_distributed_zero_first)"
MAIN_FIRST_FRAME = rf" in {MAIN_FIRST_CONTEXT}$"
# ... or its call site, the next frame the context manager's entry, where a paste cut the
# stack before the frame of main_process_first itself (huggingface/transformers#17106):
#     with training_args.main_process_first(desc="dataset map tokenization"):
#   File "/usr/lib/python3.8/contextlib.py", line 113, in __enter__
MAIN_FIRST_CALL = rf"\bwith\b.*\b{MAIN_FIRST_CONTEXT}\("
# The outermost frame of work a job often runs on one rank only (saving, evaluation): a
# collective below it is one every rank must join (NVIDIA/nccl#1132: accelerate's save_state
# under `if is_main_process:` reaching DeepSpeed's barrier):
#   File ".../accelerate/accelerator.py", line 2711, in save_state
ONE_RANK_WORK_FRAME = r"(?i) in (\w*(?:save|checkpoint|evaluat|validat)\w*)$"
# A frame (`<path>:<line> in <func>`) of a collective, named, or of autograd's backward (DDP's
# gradient all-reduce): a process whose stack stood there waited for the other ranks
COLLECTIVE_FRAME = (
    r"(?:distributed_c10d\.py|/distributed/[\w/]*\.py):\d+ in (all_reduce|all_gather\w*"
    r"|barrier|monitored_barrier|broadcast\w*|reduce_scatter\w*|all_to_all\w*|reduce|gather"
    r"|scatter|send|recv)$"
)
BACKWARD_FRAME = r"autograd/(?:__init__|graph)\.py:\d+ in (?:backward|_engine_run_backward)$"
# A frame of a library or of Python itself, not of the job's own code
LIBRARY_FRAME = r"site-packages|dist-packages|/lib/python\d|^<|[\\/]torch[\\/]"
# Traceback (most recent call last):
HEADER = "Traceback (most recent call last):"
# A traceback a paste or a logger put on one line, its line breaks lost or escaped as `\n`: its
# exception is the last `Type: message` after a frame (Physical-Intelligence/openpi#868):
#   [rank2]: Traceback (most recent call last): [rank2]: File ".../scripts/train_pytorch.py",
#   line 332, in train_loop ... [rank2]: FileNotFoundError: [Errno 2] No such file or directory: ...
# or one a platform's report quotes after other output, its header mid-line (SageMaker's
# `AlgorithmError: ExecuteUserScriptError: Command "..." INFO:__main__:... Traceback (most recent
# call last): File "mnist.py", line 257, in <module> ... RuntimeError: Dataset not found. ...`,
# aws/amazon-sagemaker-examples#3574)
FLATTENED = (
    r'\bFile "[^"]*", line \d+, in .*(?:\s|\\n)'
    r"(?P<type>(?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*(?:Error|Exception|Interrupt|Exit))"
    r"(?::\s+(?P<message>.*))?$"
)
# During handling of the above exception, another exception occurred:
DURING_HANDLING = "During handling of the above exception, another exception occurred:"
# The above exception was the direct cause of the following exception:
DIRECT_CAUSE = "The above exception was the direct cause of the following exception:"
# rich's box (see the module doc): its header, its body's border, its frames in one line or two
RICH_HEADER = r"^╭─+ Traceback \(most recent call last\) ─+╮$"
RICH_BORDER = ("│", "╰")
RICH_FRAME = r"^│ (?P<path>[^│]+?\.pyx?):(?P<lineno>\d+)(?: in (?P<func>\S+))?\s*(?: in)?\s*│$"
RICH_FUNC = r"^│ (?:in )?(?P<func>[\w<>.]+)\s*│$"
# How many lines after an exception line with no message of its own may hold the message
# (rich wraps a long message to the console's width, its first word on the next line)
MESSAGE_LINES = 6
#   File "/work/venv/lib/python3.11/site-packages/torch/_tensor.py", line 623, in backward
#   File "/opt/conda/envs/python3.10.13/lib/python3.10/threading.py", line 324 in wait
# (a paste may lose the indentation: `[rank24]: File "..."`, modelscope/ms-swift#4644)
FRAME = r'^\s*File "(?P<path>[^"]+)", line (?P<lineno>\d+),? in (?P<func>\S+)'
#            ^^^^^^^^^^^^^^^^^^^^^   (Python >= 3.11 marks the failing expression)
CARETS = r"^[\^~]+\s*$"
# The line that ends a traceback: `RuntimeError: [/__w/pytorch/...] Timed out waiting 20000ms
# for recv operation to complete`, or a bare `KeyboardInterrupt`.
EXCEPTION_LINE = r"^(?P<type>(?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*)(?::[ \t]|:$|$)"
# An exception line standing alone must look like one: `torch.distributed.DistBackendError:
# NCCL error in: ...`, `torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:`;
# `Error: no such file` or `ncclSystemError: System call ...` (NCCL's own
# text under a DistBackendError) are not.
EXCEPTION_CLASS = (
    r"(?:[A-Za-z_]\w*\.)*(?:[A-Z]\w*(?:Error|Exception|Exit|Interrupt|Failure|Failed)|Exception"
    # the builtins named for no error: a data iterator that ran dry (modelscope/ms-swift#4644)
    r"|Stop(?:Async)?Iteration)"
)
# A paste may indent it by a space (alibaba/Pai-Megatron-Patch#680: ` AssertionError: Rank 114:
# found NaN in local forward loss calculation. Device: 2,`); two are torchrun's summary quoting
# a child's traceback, deeper is code.
BARE_EXCEPTION = rf"^ ?(?P<type>{EXCEPTION_CLASS}):(?: |$)"
# Right under a traceback's frames, any class with a message ends it, whatever its name says
# (a paste that lost the header: axolotl-ai-cloud/axolotl#1888's `[rank0]: pyarrow.lib.
# ArrowInvalid: offset overflow while concatenating arrays` under pyarrow's Cython frames)
# A class by its look: a module's (`pyarrow.lib.ArrowInvalid`) or in CamelCase (`ArrowInvalid`),
# not a word another rank's print or a logger's level starts with (`Epoch: 3/10`, `INFO: ...`,
# `Warning: ...` under a cut stack)
UNDER_FRAMES_EXCEPTION = (
    r"^(?P<type>(?:[A-Za-z_]\w*\.)+[A-Z]\w*[a-z]\w*|[A-Z][a-z0-9]+[A-Z]\w*[a-z]\w*): \S"
)
# torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 336.00 MiB. GPU  has ...
ALLOCATION = r"Tried to allocate (?P<amount>\d+(?:\.\d+)?) ?(?P<unit>[KMGT]iB|B)\b"
# ... GPU 0 has a total capacity of 23.65 GiB ...  (torch 2.1 spelled it `capacty`)
# ... (GPU 0; 11.17 GiB total capacity; ...                                (torch 1.x)
OOM_DEVICE = r"(?:GPU|NPU|XPU) (?P<device>\d+)(?: has a total capac|;)"
# Other accelerators' allocators say it as CUDA's does, their device's name first
# (vllm-project/vllm-ascend#3357: `RuntimeError: NPU out of memory. Tried to allocate 11.50 GiB
# (NPU 15; 60.97 GiB total capacity; ...)`, torch_npu on Ascend; Intel's XPU allocator the same)
# PyTorch's ROCm build says it of HIP (salesforce/CodeGen2#3 on a ROCm cluster: `RuntimeError:
# HIP out of memory. Tried to allocate 576.00 MiB (GPU 3; 15.98 GiB total capacity; ...)`)
# Intel Gaudi's device allocator failing, its own rank in the message (huggingface/optimum-habana
# #368: `RuntimeError: [Rank:5] FATAL ERROR :: MODULE:PT_SYNHELPER workspace Allocation of size
# ::9618705792 failed!`; #2214: `[Rank:7] FATAL ERROR :: MODULE:PT_DEVMEM Allocation failed for
# size::2123366400 (2025)MB`)
HPU_OUT_OF_MEMORY = (
    r"MODULE:PT_(?:DEVMEM|SYNHELPER)\b.*\bAllocation (?:failed|of size ::?\d+ failed)"
)
HPU_RANK = r"\[Rank:(\d+)\] FATAL ERROR"
OTHER_DEVICE_OUT_OF_MEMORY = rf"\b(?:HIP|NPU|XPU) out of memory|{HPU_OUT_OF_MEMORY}"
DEVICE_OUT_OF_MEMORY = rf"\bCUDA out of memory|{OTHER_DEVICE_OUT_OF_MEMORY}"
UNIT_BYTES = {"B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40}
# Ray's memory monitor's kill as the caller sees it: the node's memory ran out, not a GPU's
# `ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory.`
RAY_OUT_OF_MEMORY = "ray.exceptions.OutOfMemoryError"
# a CUDA runtime call's own error string, as a kernel library reports it (HarderThenHarder/
# transformers_tasks#27: `RuntimeError: :0: cudaFuncSetAttribute(kernel_entry, ...): out of
# memory`): the GPU's memory, not the host's
CUDA_CALL_OUT_OF_MEMORY = r"\bcuda[A-Z]\w*\(.*\):? out of memory\b"
# The host refusing a process memory: Python's own `MemoryError`, and the OS's ENOMEM
# (modelscope/FunASR#1716: `[rank2]: OSError: [Errno 12] Cannot allocate memory`)
HOST_MEMORY_ERROR = r"(?:^|\.)MemoryError$"
HOST_REFUSED = r"\[Errno 12\] Cannot allocate memory"
# XLA's runtime out of device memory (a TPU's HBM) in the status it raises or logs:
# `RESOURCE_EXHAUSTED: Ran out of memory in memory space hbm. Used 29.80G of 7.98G hbm.`
# (pytorch/xla#3532; after `XLA:TPU compile permanent error.` in pytorch/xla#9524),
# `RESOURCE_EXHAUSTED: Attempting to reserve 10.51G at the bottom of memory. That was not
# possible.` (huggingface/transformers#22328, pytorch/xla#3470)
XLA_OUT_OF_MEMORY = (
    r"RESOURCE_EXHAUSTED: (?:.*\bRan out of memory in memory space"
    r"|Attempting to reserve \S+ at the bottom of memory)"
)
# vLLM's engine finding no GPU memory left for its KV cache at start-up (its kv_cache_utils
# check; RL trainers start it beside the training model on the same GPUs):
# `ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization`
# when initializing the engine.`
KV_CACHE_OUT_OF_MEMORY = (
    r"No available memory for the cache blocks|larger than the available KV cache memory"
)
# Fatal Python error: Aborted
FATAL = "Fatal Python error: "
FATAL_SIGNALS = {
    "Aborted": "SIGABRT",
    "Segmentation fault": "SIGSEGV",
    "Bus error": "SIGBUS",
    "Floating point exception": "SIGFPE",
    "Illegal instruction": "SIGILL",
}
# Thread 0x00007fa0f51fd640 (most recent call first):     (or `Current thread 0x...`)
THREAD = r"^(?:Current thread|Thread) 0x[0-9a-fA-F]+\b.*\(most recent call first\):"
#   <no Python frame>
NO_PYTHON_FRAME = "<no Python frame>"
# faulthandler's watchdog firing (`dump_traceback_later`) above its dump: `Timeout (0:00:08)!`
WATCHDOG_TIMEOUT = r"^Timeout \(\d+:\d{2}:\d{2}(?:\.\d+)?\)!$"
# Extension modules: torch._C, torch._C._dynamo.autograd_compiler, ... (total: 11)
EXTENSION_MODULES = "Extension modules: "
# SIGABRT(6), PID: 3154296, Thread 3154392:
C10_SIGNAL = r"^(?P<signal>SIG[A-Z0-9]+)\(\d+\), PID: (?P<pid>\d+), Thread (?P<tid>\d+):"
#  frame #0: c10::FatalSignalHandler::stacktraceSignalHandler(bool) + 0x8b (0x7f5a5ceaf51b in ...)
CPP_FRAME = r"^frame #\d+: "
# A native library's own crash banner, with the process it names: UCX's (NVIDIA/nccl#1996,
# ai2cm/ace#346: the pid padded, the thread id left out)
#   [n125-011-039:288505:0:296459] Caught signal 11 (Segmentation fault: address not mapped ...
#   [92c90024c028:157  :4:419] Caught signal 11 (Segmentation fault: address not mapped to ...
# and Open MPI's (NVIDIA/TensorRT-LLM#997):  [ic5:133017] Signal: Segmentation fault (11)
# A banner with no process, its native frames printed as Python's are (in vLLM, SGLang and
# TensorRT-LLM processes: Project-HAMi/HAMi#1853, a TP worker crashing in NCCL's start-up):
#   !!!!!!! Segfault encountered !!!!!!!
#     File "/libvgpu/src/multiprocess/multiprocess_memory_limit.c", line 469, in add_gpu_...
# and abseil's failure signal handler, which Ray's workers install (ray-project/ray#49252):
#   *** SIGABRT received at time=1734086759 ***
#   PC: @        0x19ea96600  (unknown)  __pthread_kill
#       @        0x1046b6bf0  (unknown)  absl::lts_20230125::WriteFailureInfo()
SIGNAL_NAME = r"[A-Z][a-z]+(?: [a-z]+)*"
NATIVE_SIGNAL = (
    r"^\[(?P<host>[\w.-]+):(?P<pid>\d+) *(?::\d+(?::(?P<tid>\d+))?)?\] "
    rf"(?:Caught signal \d+ \((?P<ucx>{SIGNAL_NAME})|Signal: (?P<ompi>{SIGNAL_NAME}) \(\d+\))"
    # UCX's banner with its process tag lost, eight processes' alike in a row (CarperAI/trlx
    # #536: `Caught signal 7 (Bus error: nonexistent physical address)`): the cause it
    # describes after the name keeps it UCX's
    rf"|^Caught signal \d+ \((?P<untagged>{SIGNAL_NAME})(?:: [^)]*)?\)$"
    r"|^!+ (?P<banner>Segfault) encountered !+$"
    r"|^\*\*\* (?P<absl>SIG[A-Z]+) received at time=\d+(?: on cpu \d+)? \*\*\*$"
)
ABSL_RECEIVED = " received at time="
# Open MPI's handler announcing a crash before it names the signal (`Signal: ... (11)` on the
# next line): where a paste cuts the banner there, the process died of a signal all the same
# (NVIDIA/nccl#1669: `[rtptest1621:405884] *** Process received signal ***`, twice, then the end)
SIGNAL_ANNOUNCED = r"^\[(?P<host>[\w.-]+):(?P<pid>\d+)\] \*\*\* Process received signal \*\*\*\s*$"
BANNER_SIGNALS = {"Segfault": "Segmentation fault"}
# A native frame inside NCCL, where a crash banner's backtrace runs through NCCL's own code: as
# UCX prints one (msr-fiddle/pipedream#76, CarperAI/trlx#536), the function then its source
#    2 0x000000000006f425 ncclShmOpen()  /dvs/p4/build/sw/gpgpu/nccl/.../src/misc/shmutils.cc:52
#    5 0x00000000000489b1 ???()  /usr/lib/x86_64-linux-gnu/libnccl.so.2:0
# and as glibc's backtrace_symbols does (NVIDIA/nccl#1996)
#    3  /opt/tiger/nccl/lib/libnccl.so(+0x120057) [0x7ff1c18c1057]
NATIVE_CALL = (
    r"^\d+ +0x[0-9a-f]+ +(?P<func>[^\s(]+)\(\) +(?P<place>\S+)$"
    r"|^(?:\d+ +)?(?P<library>/\S+?)\((?P<symbol>[^)+]*)\+0x[0-9a-f]+\) \[0x[0-9a-f]+\]$"
)
IN_NCCL = r"^nccl[A-Z]|libnccl"
# the frame a crash in NCCL is told by (`shmutils.cc:52 in ncclShmOpen`), read back by the rules
NCCL_CRASH_FRAME = r"^(?:libnccl[\w.]*(?::\d+)?(?: in \S+)?|(?:\S+ in )?nccl[A-Z]\w*)$"
#  ==== backtrace (tid: 296459) ====     0  /usr/lib/libucs.so.0(ucs_handle_error+0x2d4) [0x7fe...]
#   0 0x0000000000042520 __sigaction()  ???:0
#  [ic5:133017] [ 0] /lib/x86_64-linux-gnu/libc.so.6(+0x42520)[0x7f978f9e4520]
NATIVE_FRAME = (
    r"^(?:==== backtrace \(tid: *\d+\) ====|=+$|\d+ +(?:0x[0-9a-f]+ +\S|/\S)"
    r"|\[[\w.-]+:\d+\] (?:\[ ?\d+\] |\*\*\* |Signal code:|Failing at)"
    r'|File "[^"]*", line \d+, in '
    r"|(?:PC: )?@ +0x[0-9a-f]+ )"
)
# Exception raised from checkTimeout at /pytorch/.../ProcessGroupNCCL.cpp:632 (most recent ...
EXCEPTION_RAISED_FROM = "Exception raised from "
# terminate called after throwing an instance of 'c10::DistBackendError'
# terminate called without an active exception
TERMINATE = "terminate called "
TERMINATE_TYPE = r"terminate called after throwing an instance of '(?P<type>[\w:<>]+)'"
#   what():  [PG ID 0 PG GUID 0(default_pg) Rank 3] Process group watchdog thread terminated ...
WHAT = "what():"
# The type of a C++ exception whose terminate line (which names it) was cut off: the handler
# prints `what():` only for a std::exception, so that much is known
CUT_TYPE = "std::exception"

# -- Process 1 terminated with the following error:
# (or the line's start where a paste cut it: `-- Process 1 terminated with the`,
# facebookresearch/detectron2#1439)
SPAWNED_PROCESS = r"^-- Process (\d+) terminated with(?: the following error:|(?: \w+){0,2}\s*$)"
# multiprocessing's header over a child's traceback, `Process <name>:`, where PyTorch's own test
# harness names each process by its rank (pytorch/pytorch#14554: `test_barrier_full_group
# (__main__.TestDistBackend) ... Process process 1:`, after the runner's words on its line)
HARNESS_PROCESS = r"(?:^|\s)Process process (\d+):\s*$"
# process 0 terminated with signal SIGKILL / process 1 terminated with exit code 1
SPAWNED_EXIT = r"^process (\d+) terminated with (?:signal|exit code)"
# Ray relays a task's exception to its caller naming the process that raised it; the
# innermost of a chain is the worker whose code failed (malaysia-ai/jupyter-gpu's Ray Train
# notebook: the driver's `(TunerInternal pid=26850)` prints rank 0's storage timeout):
#   ray.exceptions.RayTaskError(ConnectTimeoutError): ray::_RayTrainWorker__execute.get_next()
#   (pid=3653, ip=10.208.0.196, actor_id=b6e39fb1b5407082b2c4c92a14000000, repr=<...>)
RAY_TASK_ERROR = (
    r"^(?:ray\.exceptions\.)?RayTaskError\((?P<type>[\w.]+)\): .*?"
    r"\(pid=(?P<pid>\d+), ip=(?P<ip>[\w.:-]+)"
)
# Unhandled exception <class 'RuntimeError'> in thread <_MainThread(...)>, proc 2834.
UNHANDLED = "Unhandled exception <class '"
UNHANDLED_TYPE = r"Unhandled exception <class '([\w.]+)'> in thread "
UNHANDLED_PID = r", proc (\d+)\b"

STREAM = "_stream"


def parse(lines: pl.DataFrame) -> pl.DataFrame:
    rows = _mark_tracebacks(_classify(lines))
    rows = _mark_bare_exceptions(rows)
    found = pl.concat(
        [
            _exception_events(rows),
            _bare_exception_events(rows),
            _oom_events(rows),
            _fatal_python_errors(rows),
            _thread_stacks(rows),
            _c10_signals(rows),
            _native_signals(rows),
            _signals_unnamed(rows),
            _terminations(rows),
            _frames_without_header(rows),
            _spawn_headers(rows),
            _cuda_hints(rows),
            _unhandled_exceptions(rows),
            _ray_core_unhandled(rows),
            _scripts_unopened(rows),
            _argument_errors(rows),
            _native_cuda_checks(rows),
            _ray_task_errors(rows),
        ],
        how="diagonal_relaxed",
    )
    return _logged_by_a_logger(_ignored(found, rows), lines)


# CPython's report of an exception it could not raise (sys.unraisablehook: in a finaliser, a
# flush at exit), then the exception's traceback or its line alone:
#
#     Exception ignored in: <function _MultiProcessingDataLoaderIter.__del__ at 0x7fcfc2e7a5e0>
#     Traceback (most recent call last):
#     ...
#     AssertionError: can only test a child process
#
# (ashleve/lightning-hydra-template#175; facebookresearch/dinov3#113's `Exception ignored in:
# <_io.BufferedWriter name=83>` / `BrokenPipeError: [Errno 32] Broken pipe`)
IGNORED = r"^Exception ignored (?:in|on|while)\b"


def _ignored(found: pl.DataFrame, rows: pl.DataFrame) -> pl.DataFrame:
    """`found` with the exceptions CPython reported as ignored renamed `ignored_exception` (a
    warning): never raised, the process went on, so never a rank's failure. The report's own
    line counts as recognised."""
    said = pl.col("_stripped").str.contains(IGNORED).fill_null(False)
    reports = rows.filter(said)
    if reports.is_empty() or "event" not in found.columns:
        return found
    after_report = _previous_nonblank("_stripped").str.contains(IGNORED).fill_null(False)
    starts = rows.filter(after_report & ~said).select("file", "line")
    ignored = (pl.col("event") == "exception") & pl.struct("file", "line").is_in(
        starts.select(pl.struct("file", "line")).to_series().implode()
    )
    renamed = found.with_columns(
        pl.when(ignored).then(pl.lit("ignored_exception")).otherwise("event").alias("event"),
        pl.when(ignored).then(pl.lit("warning")).otherwise("severity").alias("severity"),
    )
    return pl.concat([renamed, _recognised(reports)], how="diagonal_relaxed")


# A logger that repeats its record's header on each line of the record (the framer named so
# in logforensics/framing.py peels it) printed the traceback: the process caught it and logged it.
CONTINUED_RECORD = "vllm_continued"


def _logged_by_a_logger(found: pl.DataFrame, lines: pl.DataFrame) -> pl.DataFrame:
    """Exceptions with a line of a logger's continued record among theirs, marked logged
    (`extra` gains `"logged":true`, as parsers/log_levels marks the exceptions it reads)."""
    if not {"event", "extra"} <= set(found.columns) or "framing" not in lines.columns:
        return found
    continued = lines.filter(
        pl.col("framing").str.contains(CONTINUED_RECORD, literal=True).fill_null(False)
    ).select("file", pl.col("line").alias("_continued"))
    if continued.is_empty():
        return found
    found = found.with_row_index("_event")
    last = pl.coalesce("end_line", "line") if "end_line" in found.columns else pl.col("line")
    exceptions = found.filter(pl.col("event") == "exception").select(
        "_event", "file", "line", last.alias("_last")
    )
    logged = (
        exceptions.join(continued, on="file")
        .filter(pl.col("_continued").is_between(pl.col("line"), pl.col("_last")))
        .get_column("_event")
        .unique()
    )
    extra = pl.col("extra")
    marked = (
        pl.when(extra.is_null() | (extra == "{}"))
        .then(pl.lit(LOGGED))
        .otherwise(pl.concat_str(pl.lit(LOGGED[:-1] + ","), extra.str.slice(1)))
    )
    return found.with_columns(
        pl.when(pl.col("_event").is_in(logged.implode()))
        .then(marked)
        .otherwise(extra)
        .alias("extra")
    ).drop("_event")


# Launcher prefixes that tell apart processes with the same local rank on different nodes
# (pdsh host, srun node), or name the process outright (Ray worker pid); framing fills them
# when it sees them.
OUTER_WRITER_COLUMNS = ("prefix_host", "prefix_node", "prefix_pid")


def process_key(columns: Sequence[str]) -> pl.Expr:
    """The process a line came from as far as launcher prefixes tell: the file, the outer
    launcher's prefixes and torchrun --tee's `[defaultN]:`. `columns` are those of the frame
    the expression will run on."""
    outer = [pl.col(name).cast(pl.String) for name in OUTER_WRITER_COLUMNS if name in columns]
    parts = [pl.col("file"), *outer, pl.col("prefix_local_rank").cast(pl.String)]
    return pl.concat_str([part.fill_null("-") for part in parts], separator="\x00")


def writer_stream(columns: Sequence[str]) -> pl.Expr:
    """What one writer printed: the process, split by torch's `[rankN]:` (a combined file of
    several nodes can hold `[default0]:[rank0]:` and `[default0]:[rank8]:`). The processes'
    lines interleave in a combined file, so multi-line messages are read per stream."""
    rank = pl.col("prefix_rank").cast(pl.String).fill_null("-")
    return pl.concat_str([process_key(columns), rank], separator="\x00")


def _classify(lines: pl.DataFrame) -> pl.DataFrame:
    """Sort by position and describe each line's shape."""
    message = pl.col("message").fill_null("")
    stripped = message.str.strip_chars_start()
    # a rich box's border lines are its body: deeper than its header
    boxed = stripped.str.starts_with(RICH_BORDER[0]) | stripped.str.starts_with(RICH_BORDER[1])
    return (
        lines.sort("file", "line")
        .with_columns(
            writer_stream(lines.columns).alias(STREAM),
            process_key(lines.columns).alias("_process"),
            stripped.alias("_stripped"),
            (
                message.str.len_chars()
                - stripped.str.len_chars()
                + pl.when(boxed).then(2).otherwise(0)
            ).alias("_indent"),
            pl.col("text").fill_null("").str.strip_chars().eq("").alias("_text_blank"),
        )
        .with_columns(_rich_frame_text().alias("_rich_frame"))
        .with_columns(
            (message.str.contains(FRAME) | pl.col("_rich_frame").is_not_null()).alias("_frame"),
            pl.col("_stripped").eq("").alias("_blank"),
            (
                pl.col("_stripped").str.starts_with(HEADER)
                # a paste quoted as inline code keeps the backtick that opened it
                # (huggingface/accelerate#2229: "`Traceback (most recent call last):")
                | pl.col("_stripped").str.starts_with("`" + HEADER)
                # a logger's record that ends in the header: the traceback follows on its own
                # lines (sgl-project/sglang#9805: `... Scheduler hit an exception: Traceback
                # (most recent call last):`, its prefix peeled or not)
                # (not torchrun's summary field `traceback : Traceback ...`: parsers/elastic.py),
                # or whose last field is bracketed (alibaba/ROLL#193: `... [ERROR]
                # [actor_train-1 1 / 8][PID 18175] Traceback (most recent call last):`)
                | (
                    pl.col("_stripped").str.ends_with(": " + HEADER)
                    & ~pl.col("_stripped").str.starts_with("traceback :")
                )
                | pl.col("_stripped").str.ends_with("] " + HEADER)
                | pl.col("_stripped").str.contains(RICH_HEADER)
                # a whole traceback flattened into a report's line (see FLATTENED)
                | pl.col("_stripped").str.contains(HEADER + ' File "', literal=True)
            ).alias("_header"),
            (
                pl.col("_stripped").str.starts_with(DURING_HANDLING)
                | pl.col("_stripped").str.starts_with(DIRECT_CAUSE)
                # the child's traceback mp.spawn prints in the message of the parent's exception
                | pl.col("_stripped").str.contains(SPAWNED_PROCESS)
            ).alias("_separator"),
        )
    )


def _rich_frame_text() -> pl.Expr:
    """`<file>:<line> in <func>` of a frame in a rich box: on its line, or with its function on
    the next line of the same stream (`...autograd/__init__.py:395 in` / `backward`)."""
    parts = pl.col("_stripped").str.extract_groups(RICH_FRAME)
    func = pl.coalesce(
        parts.struct.field("func"),
        pl.col("_stripped").shift(-1).over(STREAM).str.extract(RICH_FUNC, 1),
    )
    # (null where the line is no frame: the path is null then)
    return _place(
        parts.struct.field("path").str.strip_chars(),
        parts.struct.field("lineno"),
        func.fill_null("?"),
    )


def _previous_nonblank(column: str) -> pl.Expr:
    """The value of `column` on the previous non-blank line of the same stream (a paste that
    doubled every line break keeps its lines' order, not their adjacency: ms-swift#4644)."""
    kept = pl.when(~pl.col("_blank")).then(pl.col(column))
    return kept.shift(1).forward_fill().over(STREAM)


def _mark_tracebacks(rows: pl.DataFrame) -> pl.DataFrame:
    """Number traceback blocks (`_block`) and chains of them (`_chain`) per stream; mark each
    block's body (indented deeper than its header) and its exception line (`_exc`): the first
    line after the body, back at the header's indentation."""
    after_separator = _previous_nonblank("_separator").fill_null(False)
    block = pl.col("_header").cum_sum().over(STREAM)
    rows = rows.with_columns(
        block.alias("_block"),
        # torch 1.10's elastic summary put a child's traceback under a bare `traceback :`
        # field (pytorch/pytorch#66182): that copy is elastic's, not a rank's own print.
        _previous_nonblank("_stripped")
        .str.contains(r"^traceback\s*:\s*$")
        .fill_null(False)
        .alias("_embedded"),
    )
    chain_start = pl.col("_header") & (~after_separator | (pl.col("_block") == 1))
    in_block = pl.col("_block") > 0
    base_indent = pl.col("_indent").first().over(STREAM, "_block")
    rows = rows.with_columns(
        chain_start.cum_sum().over(STREAM).alias("_chain"),
        (
            in_block & ~pl.col("_header") & ~pl.col("_blank") & (pl.col("_indent") <= base_indent)
        ).alias("_break"),
        base_indent.alias("_base"),
    )
    first_break = pl.when(pl.col("_break")).then(pl.col("line")).min().over(STREAM, "_block")
    rows = rows.with_columns(
        (
            in_block
            & ~pl.col("_header")
            & ~pl.col("_blank")
            & (first_break.is_null() | (pl.col("line") < first_break))
        ).alias("_body"),
        (
            pl.col("_break")
            & (pl.col("line") == first_break)
            & (pl.col("_indent") == pl.col("_base"))
            & pl.col("_stripped").str.contains(EXCEPTION_LINE)
        ).alias("_exc"),
    )
    exc_type = pl.col("_stripped").str.extract(EXCEPTION_LINE, 1)
    rows = _with_following_lines(rows)
    rows = rows.with_columns(
        pl.when(pl.col("_exc")).then(_named_once(exc_type)).alias("_exc_type"),
        pl.when(pl.col("_exc"))
        .then(_message_carried_on(message_after(pl.col("_stripped"), exc_type)))
        .alias("_exc_message"),
        pl.when(pl.col("_frame"))
        .then(pl.coalesce(frame_text(pl.col("message")), pl.col("_rich_frame")))
        .alias("_frame_text"),
    )
    return rows.join(_chains(rows), on=[STREAM, "_chain"], how="left").with_columns(
        (
            pl.col("_start").is_not_null()
            & (pl.col("line") >= pl.col("_start"))
            & (pl.col("line") <= pl.col("_end"))
        ).alias("_in_traceback")
    )


# the stream's next lines (`_next1`, ...) that could carry on an exception line's message, each
# null where that line is blank or a rule of `=`/`-` (torchrun's summary after
# `ChildFailedError:`): the message stops at the first null
FOLLOWING = [f"_next{k}" for k in range(1, MESSAGE_LINES + 1)]


def _with_following_lines(rows: pl.DataFrame) -> pl.DataFrame:
    """FOLLOWING as columns, and `_carries_on` (the line's text where it could carry on a
    message): made once, where an expression would shift each stream again for every line it
    looks ahead (several times slower on traceback-dense consoles)."""
    stripped = pl.col("_stripped")
    stop = stripped.fill_null("").str.contains(r"^\s*$|^[=*#-]{4,}\s*$")
    rows = rows.with_columns(pl.when(~stop).then(stripped.str.strip_chars()).alias("_carries_on"))
    return rows.with_columns(
        pl.col("_carries_on").shift(-k).over(STREAM).alias(name)
        for k, name in enumerate(FOLLOWING, start=1)
    )


def _said_more() -> pl.Expr:
    """An exception line that ends in a colon: its message goes on below (`RuntimeError:`
    alone, rich's wrapping; torch._dynamo's `BackendCompilerFailed: backend='inductor'
    raised:` over the compiler's own `RuntimeError: ...`). A bare `KeyboardInterrupt` says all
    it says."""
    ends_open = pl.col("_stripped").str.strip_chars_end().str.ends_with(":").fill_null(False)
    return ends_open | _frame_for_message()


# A paste that moved the failing frame onto the exception line, its message to the next line
# (zznature/MaskLLM's committed training log: `AssertionError:   File ".../grad_buffer.py",
# line 146, in finish_grad_sync` over `Rank 5: found NaN in local grad norm ...`).
FRAME_AS_MESSAGE = r'^(?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*:\s+File "[^"]+", line \d+,? in \S+\s*$'


def _frame_for_message() -> pl.Expr:
    """An exception line whose message is a frame: what it says is on the lines below."""
    return pl.col("_stripped").str.contains(FRAME_AS_MESSAGE).fill_null(False)


def _message_carried_on(after: pl.Expr) -> pl.Expr:
    """An exception line's message: `after` its colon, and where the line ends in a colon, the
    stream's next lines up to a blank one, joined (rich's wrapped `RuntimeError: ` /
    `[/__w/.../pair.cc:553]` / `Connection closed by peer ...`). Reads the FOLLOWING columns."""
    kept: list[pl.Expr] = []
    going = pl.lit(True)
    for name in FOLLOWING:
        going = going & pl.col(name).is_not_null()
        kept.append(pl.when(going).then(pl.col(name)))
    joined = pl.concat_str(kept, separator=" ", ignore_nulls=True)
    carried = pl.when(_said_more() & (joined != "")).then(joined)
    # a frame in the message's place is no message: the lines below say it
    after = pl.when(~_frame_for_message() | carried.is_null()).then(after)
    whole = pl.concat_str(after, carried, separator=" ", ignore_nulls=True)
    return pl.when(whole != "").then(whole.str.slice(0, MESSAGE_CHARS))


def _carries_on_from(opens: pl.Expr) -> pl.Expr:
    """The lines that carry on the message of a line `opens` marks (see `_message_carried_on`):
    the stream's next lines up to a blank one, MESSAGE_LINES at most."""
    carried = pl.lit(False)
    going = pl.lit(True)
    for k in range(1, MESSAGE_LINES + 1):
        going = going & pl.col("_carries_on").shift(k - 1).over(STREAM).is_not_null()
        carried = carried | (opens.shift(k).over(STREAM).fill_null(False) & going)
    return carried


def frame_text(line: pl.Expr) -> pl.Expr:
    """`<file>:<line> in <func>` of a frame line."""
    parts = line.str.extract_groups(FRAME)
    return _place(
        parts.struct.field("path"), parts.struct.field("lineno"), parts.struct.field("func")
    )


# a frame as `_place` words it, read back (`/root/workspace/diffusion-pipe/train.py:283 in
# <module>`)
PLACE = r"^(?P<path>.+):(?P<lineno>\d+) in (?P<func>.+)$"


def _place(path: pl.Expr, lineno: pl.Expr, func: pl.Expr) -> pl.Expr:
    """`<file>:<line> in <func>` (PLACE), null when any part is."""
    return pl.concat_str(path, pl.lit(":"), lineno, pl.lit(" in "), func)


def message_after(line: pl.Expr, exc_type: pl.Expr) -> pl.Expr:
    """The message after `<exc_type>:` on an exception line (null when there is none)."""
    message = line.str.slice(exc_type.str.len_chars() + 1).str.strip_chars()
    return pl.when(message != "").then(message.str.slice(0, MESSAGE_CHARS))


def _child_shown(column: pl.Expr) -> pl.Expr:
    """Within a chain's blocks: the last value `column` shows (with an exception type) among
    the blocks after a spawned child's header (`-- Process N terminated ...`, which stands at
    the end of the parent's block)."""
    after_header = pl.col("_spawn").is_not_null().cum_sum().shift(1, fill_value=0) > 0
    shown = pl.col("_exc_type").is_not_null()
    return column.filter(after_header & shown).last()


def _chain_said_by(
    block: str, where: pl.Expr, fields: tuple[str, ...] = ("type", "message", "frame")
) -> list[pl.Expr]:
    """The chain's exception `fields` taken from another of its blocks' (`_child_type`,
    `_first_message`, ...) where `where` holds, kept as they are elsewhere."""
    return [
        pl.when(where)
        .then(f"{block}_{field}")
        .otherwise(f"_chain_{field}")
        .alias(f"_chain_{field}")
        for field in fields
    ]


def _chains(rows: pl.DataFrame) -> pl.DataFrame:
    """One row per chain of tracebacks: where it starts and ends, and its last exception."""
    blocks = (
        rows.filter(pl.col("_block") > 0)
        .group_by(STREAM, "_block", maintain_order=True)
        .agg(
            pl.col("_chain").first(),
            pl.col("line").filter(pl.col("_header")).first().alias("_block_start"),
            pl.col("_embedded").first(),
            pl.col("line").filter(pl.col("_exc")).first().alias("_exc_line"),
            pl.col("_exc_type").filter(pl.col("_exc")).first(),
            pl.col("_exc_message").filter(pl.col("_exc")).first(),
            pl.col("_frame_text").filter(pl.col("_body") & pl.col("_frame")).last(),
            _enters_main_first(pl.col("_body")).alias("_main_first"),
            _main_first_name(pl.col("_body")).alias("_main_first_name"),
            pl.col("_frame_text")
            .filter(pl.col("_body") & pl.col("_frame"))
            .str.extract(ONE_RANK_WORK_FRAME, 1)
            .drop_nulls()
            .first()
            .alias("_work"),
            pl.col("line").filter(pl.col("_body")).max().alias("_last_body"),
            pl.col("_frame_text").filter(_own_frame()).last().alias("_own_frame"),
            pl.col("line").filter(_own_frame()).last().alias("_own_line"),
            collective_name(pl.col("_frame_text").filter(pl.col("_body") & pl.col("_frame")))
            .drop_nulls()
            .last()
            .alias("_collective"),
            pl.col("_stripped").str.extract(SPAWNED_PROCESS, 1).drop_nulls().last().alias("_spawn"),
        )
    )
    block_end = pl.coalesce("_exc_line", "_last_body", "_block_start")
    chains = blocks.group_by(STREAM, "_chain", maintain_order=True).agg(
        pl.col("_block_start").first().alias("_start"),
        block_end.last().alias("_end"),
        pl.col("_embedded").first().alias("_chain_embedded"),
        pl.col("_exc_type").last().alias("_chain_type"),
        pl.col("_exc_message").last().alias("_chain_message"),
        pl.col("_exc_type").drop_nulls().last().alias("_shown_type"),
        pl.col("_exc_message")
        .filter(pl.col("_exc_type").is_not_null())
        .last()
        .alias("_shown_message"),
        pl.col("_frame_text").last().alias("_chain_frame"),
        pl.col("_main_first").any().alias("_chain_main_first"),
        pl.col("_main_first_name")
        .filter(pl.col("_main_first"))
        .drop_nulls()
        .first()
        .alias("_chain_main_first_name"),
        pl.col("_work").drop_nulls().last().alias("_chain_work"),
        pl.col("_exc_type").first().alias("_first_type"),
        pl.col("_exc_message").first().alias("_first_message"),
        pl.col("_frame_text").first().alias("_first_frame"),
        pl.len().alias("_blocks"),
        pl.col("_spawn").drop_nulls().last().alias("_chain_spawned"),
        pl.col("_own_frame").drop_nulls().last().alias("_chain_own_frame"),
        pl.col("_own_line").drop_nulls().last().alias("_chain_own_line"),
        pl.col("_collective").drop_nulls().first().alias("_chain_collective"),
        _child_shown(pl.col("_exc_type")).alias("_child_type"),
        _child_shown(pl.col("_exc_message")).alias("_child_message"),
        _child_shown(pl.col("_frame_text")).alias("_child_frame"),
    )
    # a chain cut before its last exception line ends in the last one it shows: the exception
    # that caused what followed (bigscience tr1's DataLoader worker killed by a bus error, then
    # `The above exception was the direct cause of ...` and a cut block). In a spawned child's
    # report only the child's own blocks count: the parent's `Exception` wraps what comes after
    # it (facebookresearch/fairseq#2203: the child's `_pickle.UnpicklingError: could not find
    # MARK`, then `During handling of the above exception` and a block the paste cut).
    cut = pl.col("_chain_type").is_null() & pl.col("_chain_spawned").is_null()
    child_cut = pl.col("_chain_type").is_null() & pl.col("_child_type").is_not_null()
    chains = chains.with_columns(_chain_said_by("_child", child_cut)).drop(
        "_child_type", "_child_message", "_child_frame"
    )
    # Lightning's re-raise wraps the rank's own exception, the chain's first: that one is said
    reraised = (
        pl.col("_chain_message").str.contains(LIGHTNING_RERAISED).fill_null(False)
        & (pl.col("_blocks") > 1)
        & pl.col("_first_type").is_not_null()
    )
    return (
        chains.with_columns(_chain_said_by("_shown", cut, ("type", "message")))
        .with_columns(
            pl.when(reraised)
            .then(pl.col("_chain_message").str.extract(LIGHTNING_RERAISED, 1))
            .alias("_reraised_rank"),
            *_chain_said_by("_first", reraised),
        )
        .drop("_shown_type", "_shown_message", "_first_message", "_first_frame")
    )


def _named_once(exc_type: pl.Expr) -> pl.Expr:
    """An exception type two processes printed into each other, `RuntimeErrorRuntimeError`
    (hustvl/Vim#61: eight processes on fewer GPUs), is the type once."""
    half = exc_type.str.len_chars() // 2
    doubled = (exc_type.str.len_chars() % 2 == 0) & (
        exc_type.str.slice(0, half) == exc_type.str.slice(half)
    )
    return pl.when(doubled.fill_null(False)).then(exc_type.str.slice(0, half)).otherwise(exc_type)


def _mark_bare_exceptions(rows: pl.DataFrame) -> pl.DataFrame:
    """`_bare`: an exception line outside any traceback, also where it carries on the message
    of the one before it (an exception quoted in another's message is read as one: SageMaker's
    report quoting the job's error, torch._dynamo's wrapping of the compiler's); `_carried`:
    the other lines carrying on a message (see `_said_more`)."""
    written = pl.col("message").fill_null("")
    bare = ~pl.col("_in_traceback") & (written.str.contains(BARE_EXCEPTION) | _ends_loose_frames())
    rows = rows.with_columns(
        (
            _carries_on_from((bare | pl.col("_exc")) & _said_more())
            & ~bare
            & ~pl.col("_in_traceback")
        ).alias("_carried")
    )
    message = written.str.strip_chars_start(" ")
    bare_type = pl.coalesce(
        message.str.extract(BARE_EXCEPTION, 1), message.str.extract(UNDER_FRAMES_EXCEPTION, 1)
    )
    return rows.with_columns(
        bare.alias("_bare"),
        pl.when(bare)
        .then(_named_once(bare_type))
        .otherwise(pl.col("_exc_type"))
        .alias("_exc_type"),
        pl.when(bare)
        .then(_message_carried_on(message_after(message, bare_type)))
        .otherwise(pl.col("_exc_message"))
        .alias("_exc_message"),
    ).drop(*FOLLOWING, "_carries_on")


def collective_name(frames: pl.Expr) -> pl.Expr:
    """The collective a frame is in (`backward` for autograd's), null for any other frame."""
    return pl.coalesce(
        frames.str.extract(COLLECTIVE_FRAME, 1),
        pl.when(frames.str.contains(BACKWARD_FRAME)).then(pl.lit("backward")),
    )


def _own_frame() -> pl.Expr:
    """A frame line of the job's own code (see LIBRARY_FRAME)."""
    frame = pl.col("_frame_text")
    return pl.col("_body") & pl.col("_frame") & ~frame.str.contains(LIBRARY_FRAME).fill_null(True)


def _enters_main_first(stack: pl.Expr) -> pl.Expr:
    """Whether the `stack` lines of a group (in line order) wait on entering main_process_first:
    its frame, or its call site with the context manager's entry next. Its frame reached from
    the context's exit is the main process itself, its work done, waiting to release the
    others (Ascend/pytorch#43: `contextlib.py ... in __exit__`, `next(self.gen)`, then
    `training_args.py ... in main_process_first`): it waits for them, not they for it."""
    frames = pl.col("_frame_text").filter(stack)
    call = pl.col("_stripped").filter(stack).str.contains(MAIN_FIRST_CALL)
    entered = call & frames.shift(-1).str.ends_with(" in __enter__")
    from_exit = frames.forward_fill().shift(1).str.ends_with(" in __exit__").fill_null(False)
    return (frames.str.contains(MAIN_FIRST_FRAME) & ~from_exit).any() | entered.any()


def _main_first_name(stack: pl.Expr) -> pl.Expr:
    """Which main-process-first context the `stack` lines enter (`main_process_first`,
    `torch_distributed_zero_first`): its frame's function, else its call site's."""
    frames = pl.col("_frame_text").filter(stack).str.extract(rf" in ({MAIN_FIRST_CONTEXT})$", 1)
    calls = pl.col("_stripped").filter(stack).str.extract(rf"\b({MAIN_FIRST_CONTEXT})\(", 1)
    return pl.coalesce(frames.drop_nulls().first(), calls.drop_nulls().first())


def _exception_events(rows: pl.DataFrame) -> pl.DataFrame:
    """One `exception` per chain of tracebacks, and every line of it recognised."""
    before = _previous_nonblank("_stripped")
    spawned = pl.coalesce(
        before.str.extract(SPAWNED_PROCESS, 1), before.str.extract(HARNESS_PROCESS, 1)
    )
    rows = rows.with_columns(pl.when(pl.col("_header")).then(spawned).alias("_spawned"))
    own = rows.filter(pl.col("_in_traceback") & ~pl.col("_chain_embedded"))
    chained = pl.col("_blocks") > 1
    from_chain = pl.when(chained).then(pl.col("_first_type"))
    main_first = pl.when(pl.col("_chain_main_first")).then(True)
    work = pl.col("_chain_work")
    # the parent quoting a spawned child's traceback: its rank is that child's alone
    spawned = pl.when(_spawned_rank(pl.col("_chain_message")).is_not_null()).then(True)
    # where a process stood: the collective it waited in, or any place when it was interrupted
    # (a snapshot of its stack), with the innermost frame of its own code
    interrupted = pl.col("_chain_type").str.ends_with("KeyboardInterrupt").fill_null(False)
    placed = interrupted | pl.col("_chain_collective").is_not_null()
    own_frame = pl.when(placed).then(pl.col("_chain_own_frame"))
    own_line = pl.when(placed).then(pl.col("_chain_own_line"))
    in_collective = pl.when(placed).then(pl.col("_chain_collective").fill_null(""))
    # a chain with no exception line of its own may hold the whole traceback on its header's line
    flat = pl.when(pl.col("_chain_type").is_null()).then(
        pl.col("_stripped").str.extract_groups(FLATTENED)
    )
    events = own.filter(pl.col("line") == pl.col("_start")).select(
        "file",
        "line",
        pl.lit("exception").alias("event"),
        pl.lit("error").alias("severity"),
        pl.col("_end").alias("end_line"),
        pl.coalesce("_chain_type", flat.struct.field("type")).alias("exc_type"),
        pl.coalesce(
            "_chain_message", flat.struct.field("message").str.slice(0, MESSAGE_CHARS)
        ).alias("exc_message"),
        pl.col("_chain_frame").alias("frame"),
        _spawned_rank(pl.col("_chain_message")).alias("rank"),
        pl.when(
            from_chain.is_not_null()
            | main_first.is_not_null()
            | work.is_not_null()
            | spawned.is_not_null()
            | placed
        )
        .then(
            pl.struct(
                chained_from=from_chain,
                in_main_process_first=main_first,
                main_first_context=pl.when(main_first).then(pl.col("_chain_main_first_name")),
                in_work=work,
                spawned=spawned,
                own_frame=own_frame,
                own_line=own_line,
                collective=in_collective,
            )
            .struct.json_encode()
            .str.replace_all(r',?"\w+":null', "")
            .str.replace(r"^\{,", "{")
        )
        .alias("extra"),
    )
    return pl.concat(
        [events, _recognised(own), _tee_blanks_inside(rows, events)], how="diagonal_relaxed"
    )


def _tee_blanks_inside(rows: pl.DataFrame, events: pl.DataFrame) -> pl.DataFrame:
    """torchrun --tee prints the empty lines of a `[rankN]:` traceback without the `[rankN]:`
    (`[default1]:` alone): they belong to the traceback of the process they fall in."""
    spans = events.join(rows.select("file", "line", "_process"), on=["file", "line"]).select(
        "_process", pl.col("line").alias("_span_start"), pl.col("end_line").alias("_span_end")
    )
    tee_blanks = rows.filter(
        pl.col("_blank")
        & pl.col("prefix_local_rank").is_not_null()
        & pl.col("prefix_rank").is_null()
    )
    inside = tee_blanks.join(spans, on="_process").filter(
        pl.col("line").is_between(pl.col("_span_start"), pl.col("_span_end"))
    )
    return _recognised(inside)


# Megatron's checks state the global rank that found the bad number (megatron/core: the grad
# buffer's NaN check, the rerun state machine's):
# `AssertionError: Rank 11: found NaN in local grad norm in backward pass before ...`
# (alibaba/Pai-Megatron-Patch#366), `RuntimeError: Rank 2, node dcfai-xe9680-01, device 2,
# iteration -1: Unexpected result nan (...)` (NVIDIA-NeMo/Speech#14348)
SELF_NAMED_RANK = r"^Rank (\d+)(?:: |, node \S+, device \d+)"
# torch.distributed.rpc relaying a remote worker's exception names the worker that raised it, by
# its RPC rank (pytorch/pytorch#45116, a CI run of DDP under distributed autograd):
# `AssertionError: On WorkerInfo(id=0, name=worker0):` then the remote error's repr
RPC_WORKER_RAISED = r"^On WorkerInfo\(id=(\d+), name=[^)]*\):"


def _named_raiser(message: pl.Expr) -> pl.Expr:
    """The rank an exception's message says raised it (SELF_NAMED_RANK, RPC_WORKER_RAISED)."""
    return pl.coalesce(
        message.str.extract(SELF_NAMED_RANK, 1), message.str.extract(RPC_WORKER_RAISED, 1)
    )


def _spawned_rank(message: pl.Expr) -> pl.Expr:
    """The process index torch.multiprocessing.spawn names: in the header inside the chain (the
    parent's traceback, then the child's), or just before it (an excerpt that starts there),
    else in the message of a child that died without a traceback; or the global rank Lightning
    names as it re-raises the rank's own exception (see LIGHTNING_RERAISED), or a check names
    as its own (SELF_NAMED_RANK)."""
    return pl.coalesce(
        pl.col("_chain_spawned"),
        pl.col("_spawned"),
        message.str.extract(SPAWNED_EXIT, 1),
        pl.col("_reraised_rank"),
        _named_raiser(message),
    ).cast(pl.Int32, strict=False)


# Lightning's DDP strategy re-raising a rank's exception, chained to it, under that rank's own
# global rank (`reconciliate_processes`; nharada/mosaic-streaming-crash-ddp):
#   pytorch_lightning.utilities.exceptions.DeadlockDetectedException: DeadLock detected from rank: 2
# the chain's rank, kept apart from the console's other lines as a spawned child's is: the
# console may hold every rank's output
LIGHTNING_RERAISED = r"DeadLock detected from rank: (\d+)"


# How far above an exception line with no header a frame may stand to be where it was raised:
# the frame, its code line, and Python 3.11's carets under it
FRAME_ABOVE = 3


def _bare_exception_events(rows: pl.DataFrame) -> pl.DataFrame:
    # a paste that lost its header keeps the frames above the exception: the nearest is where
    # it was raised (NVIDIA/Megatron-LM#343: `File ".../rendezvous.py", line 142, in
    # _tcp_rendezvous_handler` two lines above `RuntimeError: Address already in use`)
    above = pl.coalesce(
        [pl.col("_frame_text").shift(k).over(STREAM) for k in range(1, FRAME_ABOVE + 1)]
    )
    events = (
        rows.with_columns(above.alias("_above"))
        .filter(pl.col("_bare"))
        .select(
            *_one_line("exception"),
            pl.col("_exc_type").alias("exc_type"),
            pl.col("_exc_message").alias("exc_message"),
            pl.col("_above").alias("frame"),
            pl.coalesce(
                pl.col("_exc_message").str.extract(SPAWNED_EXIT, 1),
                _named_raiser(pl.col("_exc_message")),
            )
            .cast(pl.Int32, strict=False)
            .alias("rank"),
        )
    )
    # the lines an exception's message carries on to
    return pl.concat([events, _recognised(rows.filter("_carried"))], how="diagonal_relaxed")


def _spawn_headers(rows: pl.DataFrame) -> pl.DataFrame:
    """torch.multiprocessing.spawn's `-- Process N terminated with the following error:`, also
    where the excerpt starts with it (no parent traceback to hold it), and the test harness's
    `Process process N:` (HARNESS_PROCESS)."""
    stripped = pl.col("_stripped")
    header = stripped.str.contains(SPAWNED_PROCESS) | stripped.str.contains(HARNESS_PROCESS)
    return _recognised(rows.filter(header))


# The hints PyTorch's CUDA errors carry on the lines after their message, whether or not the
# paste kept the traceback (bitsandbytes-foundation/bitsandbytes#1633, verbatim, `[rank0]: `
# before each): part of that error, no event of their own
#   CUDA kernel errors might be asynchronously reported at some other API call, so the ...
#   For debugging consider passing CUDA_LAUNCH_BLOCKING=1
#   Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.
CUDA_HINTS = (
    "CUDA kernel errors might be asynchronously reported at some other API call",
    "For debugging consider passing CUDA_LAUNCH_BLOCKING=1",
    "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.",
)


def _cuda_hints(rows: pl.DataFrame) -> pl.DataFrame:
    """CUDA's hint lines (see CUDA_HINTS), read as part of the error before them."""
    hint = pl.col("_stripped").str.starts_with(CUDA_HINTS[0])
    for more in CUDA_HINTS[1:]:
        hint = hint | pl.col("_stripped").str.starts_with(more)
    return _recognised(rows.filter(hint & ~pl.col("_in_traceback")))


def _unhandled_exceptions(rows: pl.DataFrame) -> pl.DataFrame:
    """`exception` for RETURNN's `Unhandled exception <class 'X'> in thread ..., proc N.`: the
    type and the process; the message is in the traceback RETURNN prints after it."""
    text = pl.col("message")
    return rows.filter(text.str.contains(UNHANDLED_TYPE)).select(
        *_one_line("exception"),
        text.str.extract(UNHANDLED_TYPE, 1).alias("exc_type"),
        text.str.extract(UNHANDLED_PID, 1).cast(pl.Int64, strict=False).alias("pid"),
    )


# Ray's core worker (its C++ side) dying of an exception nothing caught, in Ray's own log
# format: the process's own failure (verl-project/verl#472: `[2025-03-04 19:28:30,014 E 27497
# 27497] logging.cc:113: Unhandled exception: N5boost10wrapexceptINS_6system12system_errorEEE.
# what(): thread: Resource temporarily unavailable [system:11]`, several workers out of threads)
RAY_CORE_UNHANDLED = (
    r"^\[[\d-]+ [\d:.,]+ [EF] (?P<pid>\d+) \d+\] logging\.cc:\d+: Unhandled exception: "
    r"(?P<type>\S+?)\.? what\(\): (?P<message>.*?)(?: \[repeated \d+x across cluster\].*)?$"
)


def _ray_core_unhandled(rows: pl.DataFrame) -> pl.DataFrame:
    """`exception` for a Ray worker's C++ `Unhandled exception: <type>. what(): <message>`, of
    the process its line names."""
    text = pl.col("message")
    found = rows.filter(text.str.contains(RAY_CORE_UNHANDLED))
    if found.is_empty():
        return found.select("file", "line")
    groups = text.str.extract_groups(RAY_CORE_UNHANDLED)
    mangled = groups.struct.field("type")
    # the innermost name of a mangled C++ type (`N5boost10wrapexceptINS_6system12system_errorEEE`:
    # `system_error`), the lower-case names the standard library and Boost give their types
    innermost = mangled.str.extract_all(r"\d+[a-z_]+").list.last().str.replace(r"^\d+", "")
    return found.select(
        *_one_line("exception"),
        pl.coalesce(innermost, mangled).alias("exc_type"),
        groups.struct.field("message").alias("exc_message"),
        groups.struct.field("pid").cast(pl.Int64, strict=False).alias("pid"),
    )


# The interpreter's refusal to start a script it cannot open (CPython's pymain_run_file), the
# process's only output before it exits with code 2 (EleutherAI/gpt-neox#88: `10.141.250.227:
# /usr/bin/python3: can't open file 'train_mpu.py': [Errno 2] No such file or directory` from
# each process of two nodes whose checkout lacked the script)
INTERPRETER = r"^(?:\S*/)?python[\d.]*(?:\.exe)?: "
SCRIPT_UNOPENED = (
    INTERPRETER
    + r"can't open file (?P<path>'[^']*'|\S+): \[Errno (?P<errno>\d+)\] (?P<why>.+?)\s*$"
)
# what CPython raises for these errnos (the interpreter prints the errno; its class is Python's)
ERRNO_CLASSES = {"2": "FileNotFoundError", "13": "PermissionError", "21": "IsADirectoryError"}


# ... and of a module `python -m` cannot find (myc634/UltraLiDAR_nusc_waymo#1: `/usr/bin/python:
# No module named torch.distributed`, the interpreter torchrun's command line named lacking torch)
MODULE_UNFOUND = INTERPRETER + r"No module named (?P<module>\S+)\s*$"
# ... or one whose lookup raised, the exception in parentheses (meta-llama/llama#1374: `/opt/
# anaconda3/bin/python: Error while finding module specification for 'models.llama4.scripts.
# chat_completion' (ModuleNotFoundError: No module named 'models')` from both workers)
MODULE_SPEC_FAILED = (
    INTERPRETER + r"Error while finding module specification for "
    r"'[^']*' \((?P<type>[A-Za-z_][\w.]*): (?P<message>.*)\)\s*$"
)


# argparse refusing the command line it was given: its usage banner, then `<prog>: error:
# <why>`, and the process exits with code 2. A launcher's own argument the script does not
# declare is the common case (huggingface/pytorch-image-models#1724: `train.py: error:
# unrecognized arguments: --local-rank=2`, torch >= 2.0's torch.distributed.launch passing
# `--local-rank`; the prog may be a description with spaces, microsoft/unilm#1597). Only
# argparse's own messages count: `srun: error: ...` is SLURM's.
ARGUMENT_ERROR = (
    r"^(?P<prog>.+?): error: (?P<why>(?:unrecognized arguments|the following arguments are "
    r"required|argument \S+: |ambiguous option: ).*?)\s*$"
)
# ... and its banner where a paste ends before the error line (cnulab/RealNet#54: `usage:
# train_realnet.py [-h] [--config CONFIG] ... [--local_rank LOCAL_RANK]` ends the log)
USAGE_BANNER = r"^usage: \S+ \[-h\]"
# how far below a banner its error line stands at most (a long usage wraps over many lines)
USAGE_LINES = 40


# A native library's own check of a CUDA call, which prints the CUDA error and ends the process
# (bitsandbytes' CUDA_CHECK_RETURN: Firefly-LLaMA2-Chinese#9's `Error operation not supported at
# line 351 in file /home/tim/git/bitsandbytes/csrc/pythonInterface.c` before torchrun reports
# local rank 0's exit; `Error invalid device function at line 508 in file .../csrc/ops.cu` in
# tloen/alpaca-lora#320)
NATIVE_CUDA_CHECK = (
    r"^Error (?P<what>[a-z][a-z ]+?) at line (?P<lineno>\d+) in file "
    r"(?P<path>\S+\.(?:c|cc|cpp|cu))\s*$"
)


def _native_cuda_checks(rows: pl.DataFrame) -> pl.DataFrame:
    """`exception` for a native library's failed CUDA call: the CUDA error's words, the source
    line that checked it as the frame."""
    said = pl.col("_stripped").str.extract_groups(NATIVE_CUDA_CHECK).struct
    found = rows.filter(said.field("what").is_not_null())
    if found.is_empty():
        return _nothing()
    return found.select(
        *_one_line("exception"),
        pl.lit("CUDA error").alias("exc_type"),
        said.field("what").alias("exc_message"),
        _place(said.field("path"), said.field("lineno"), pl.lit("?")).alias("frame"),
    )


def _argument_errors(rows: pl.DataFrame) -> pl.DataFrame:
    """`exception` of type ArgumentError for argparse's refusal (its error line), or for its
    usage banner where no error line follows within USAGE_LINES (the paste cut it)."""
    text = pl.col("_stripped")
    said = text.str.extract_groups(ARGUMENT_ERROR).struct
    banner = text.str.contains(USAGE_BANNER)
    if _absent(rows, said.field("why").is_not_null() | banner):
        return _nothing()
    error_at = pl.when(said.field("why").is_not_null()).then(pl.col("line").cast(pl.Int64))
    next_error = error_at.backward_fill().over(STREAM)
    cut = banner & (
        next_error.is_null() | ((next_error - pl.col("line").cast(pl.Int64)) > USAGE_LINES)
    )
    marked = rows.with_columns(cut.alias("_banner_alone"))
    found = marked.filter(said.field("why").is_not_null() | pl.col("_banner_alone"))
    # a banner its error line follows is read with it
    banners = _recognised(marked.filter(banner & ~pl.col("_banner_alone")))
    refusals = found.select(
        *_one_line("exception"),
        pl.lit("ArgumentError").alias("exc_type"),
        pl.when(pl.col("_banner_alone"))
        .then(
            pl.format(
                "its command line was refused (argparse's usage banner; the error line is not "
                "in the logs): {}",
                text,
            )
        )
        .otherwise(said.field("why"))
        .str.slice(0, MESSAGE_CHARS)
        .alias("exc_message"),
    )
    return pl.concat([refusals, banners], how="diagonal_relaxed")


def _scripts_unopened(rows: pl.DataFrame) -> pl.DataFrame:
    """`exception` for a script the interpreter could not open (the errno's class, its words)
    or a module it could not find to run."""
    text = pl.col("_stripped")
    unopened = text.str.extract_groups(SCRIPT_UNOPENED).struct
    module = text.str.extract(MODULE_UNFOUND, 1)
    lookup = text.str.extract_groups(MODULE_SPEC_FAILED).struct
    found = rows.filter(
        unopened.field("errno").is_not_null()
        | module.is_not_null()
        | lookup.field("type").is_not_null()
    )
    if found.is_empty():
        return _nothing()
    return found.select(
        *_one_line("exception"),
        pl.when(lookup.field("type").is_not_null())
        .then(lookup.field("type"))
        .when(module.is_not_null())
        .then(pl.lit("ModuleNotFoundError"))
        .otherwise(
            unopened.field("errno").replace_strict(
                ERRNO_CLASSES, default="OSError", return_dtype=pl.String
            )
        )
        .alias("exc_type"),
        pl.when(lookup.field("type").is_not_null())
        .then(lookup.field("message"))
        .when(module.is_not_null())
        .then(pl.format("No module named '{}'", module))
        .otherwise(
            pl.format(
                "can't open file {}: [Errno {}] {}",
                unopened.field("path"),
                unopened.field("errno"),
                unopened.field("why"),
            )
        )
        .str.slice(0, MESSAGE_CHARS)
        .alias("exc_message"),
    )


def _ray_task_errors(rows: pl.DataFrame) -> pl.DataFrame:
    """`exception` in the process Ray's relayed `RayTaskError(X)` names, the innermost of
    each stream's run of them: that process raised X, whoever printed it. Its message is
    that of the next exception line of type X in the stream."""
    parts = pl.col("_stripped").str.extract_groups(RAY_TASK_ERROR)
    relayed = rows.with_columns(parts.alias("_ray")).filter(
        pl.col("_ray").struct.field("pid").is_not_null()
    )
    if relayed.is_empty():
        return _nothing()
    innermost = relayed.group_by(STREAM, "_chain", maintain_order=True).last()
    said = rows.filter(pl.col("_exc_type").is_not_null()).select(
        STREAM,
        pl.col("line").alias("_said_line"),
        pl.col("_exc_type").str.split(".").list.last().alias("_said_type"),
        pl.col("_exc_message").alias("_said_message"),
    )
    named = (
        innermost.with_columns(pl.col("_ray").struct.field("type").alias("_said_type"))
        .join(said, on=[STREAM, "_said_type"], how="left")
        .filter(pl.col("_said_line").is_null() | (pl.col("_said_line") > pl.col("line")))
        .sort("_said_line")
        .unique(["file", "line"], keep="first", maintain_order=True)
    )
    events = named.select(
        *_one_line("exception"),
        pl.col("_ray").struct.field("type").alias("exc_type"),
        pl.col("_said_message").alias("exc_message"),
        pl.col("_ray").struct.field("pid").cast(pl.Int64, strict=False).alias("pid"),
        pl.col("_ray").struct.field("ip").alias("host"),
        pl.col("_said_line").is_null().alias("_unsaid"),
    )
    # the task's own out of memory, where the paste cut the exception line that says it (NVIDIA-
    # NeMo/RL#3793: `RayTaskError(OutOfMemoryError): ray::DTensorPolicyWorkerV2.get_logprobs()
    # (... repr=DTensorPolicyWorkerV2[rank=0])` and a cut stack): a task that raised it ran out
    # of the GPU's memory (Ray's monitor killing a task for the node's is no RayTaskError)
    ran_out = events.filter(
        pl.col("_unsaid") & pl.col("exc_type").str.ends_with("OutOfMemoryError")
    ).with_columns(pl.lit("oom").alias("event"))
    return pl.concat([events, ran_out]).drop("_unsaid")


def _oom_events(rows: pl.DataFrame) -> pl.DataFrame:
    """`oom` on the exception line (or C++ `what():` line) that reports CUDA out of memory."""
    text = pl.col("_stripped")
    exception_line = (pl.col("_exc") & ~pl.col("_chain_embedded").fill_null(False)) | pl.col(
        "_bare"
    )
    out_of_memory = (
        pl.col("_exc_type").fill_null("").str.ends_with("OutOfMemoryError")
        | text.str.contains(DEVICE_OUT_OF_MEMORY)
        # the CUDA runtime's error, capitalised by some allocators (vLLM's cumem allocator:
        # `RuntimeError: CUDA Error: out of memory at /workspace/csrc/cumem_allocator.cpp:62`)
        | text.str.contains("(?i)CUDA error: out of memory")
        | text.str.contains(CUDA_CALL_OUT_OF_MEMORY)
        | text.str.contains(XLA_OUT_OF_MEMORY)
        | text.str.contains(KV_CACHE_OUT_OF_MEMORY)
    )
    # the host's refusal: Python's MemoryError, the OS's ENOMEM (a fork for DataLoader workers,
    # a mapping); the node's memory, not the GPU's
    refused = pl.col("_exc_type").fill_null("").str.contains(HOST_MEMORY_ERROR) | text.str.contains(
        HOST_REFUSED
    )
    out_of_memory = out_of_memory | refused
    what_line = text.str.starts_with(WHAT) & text.str.contains("out of memory", literal=True)
    allocation = text.str.extract_groups(ALLOCATION)
    bytes_per_unit = allocation.struct.field("unit").replace_strict(
        UNIT_BYTES, default=None, return_dtype=pl.Int64
    )
    requested = allocation.struct.field("amount").cast(pl.Float64, strict=False) * bytes_per_unit
    # Ray's memory monitor killed the task for the node's memory, not the GPU's
    ray = pl.col("_exc_type").fill_null("").str.ends_with(RAY_OUT_OF_MEMORY)
    of_the_node = ray | refused
    return rows.filter((exception_line & out_of_memory) | what_line).select(
        "file",
        "line",
        pl.when(of_the_node).then(pl.lit("host_oom")).otherwise(pl.lit("oom")).alias("event"),
        pl.lit("error").alias("severity"),
        pl.col("_exc_type").alias("exc_type"),
        pl.when(ray)
        .then(pl.lit(RAY_MONITOR))
        .otherwise(pl.col("_exc_message"))
        .alias("exc_message"),
        requested.round(0).cast(pl.Int64, strict=False).alias("value"),
        text.str.extract(OOM_DEVICE, 1).alias("device"),
        text.str.extract(HPU_RANK, 1).cast(pl.Int32, strict=False).alias("rank"),
    )


def _mark_runs(rows: pl.DataFrame, starts: pl.Expr, members: pl.Expr, name: str) -> pl.DataFrame:
    """Number the runs `starts` opens in each stream (`_<name>`, 0 before the first) and mark
    in `_<name>_in` the start and the `members` that follow it unbroken; blank lines between
    members belong to the run."""
    run = f"_{name}"
    rows = rows.with_columns(starts.cum_sum().over(STREAM).alias(run))
    in_run = pl.col(run) > 0
    breaks = in_run & ~starts & ~members & ~pl.col("_blank")
    first_break = pl.when(breaks).then(pl.col("line")).min().over(STREAM, run)
    before_break = in_run & (first_break.is_null() | (pl.col("line") < first_break))
    last_line = pl.when(before_break & ~pl.col("_blank")).then(pl.col("line")).max()
    return rows.with_columns(
        (before_break & (pl.col("line") <= last_line.over(STREAM, run))).alias(f"{run}_in")
    )


def _fatal_python_errors(rows: pl.DataFrame) -> pl.DataFrame:
    """`fatal_signal` for a faulthandler dump; `frame` is the innermost frame of the current
    thread, else of the thread listed last (the main thread)."""
    text = pl.col("_stripped")
    thread = text.str.contains(THREAD)
    dump_line = (
        thread
        | pl.col("_frame")
        | text.str.starts_with(NO_PYTHON_FRAME)
        | text.str.starts_with(EXTENSION_MODULES)
    )
    is_fatal = pl.col("message").fill_null("").str.starts_with(FATAL)
    if _absent(rows, is_fatal):
        return _nothing()
    rows = _mark_runs(rows, is_fatal, dump_line, "fatal")
    dump = rows.filter(pl.col("_fatal_in")).with_columns(
        thread.cum_sum().over(STREAM, "_fatal").alias("_thread"),
        text.str.starts_with("Current thread").alias("_current"),
    )
    threads = (
        dump.filter(pl.col("_thread") > 0)
        .group_by(STREAM, "_fatal", "_thread", maintain_order=True)
        .agg(
            pl.col("_current").first(),
            pl.col("_frame_text").filter(pl.col("_frame")).first().alias("_innermost"),
        )
        .group_by(STREAM, "_fatal")
        .agg(
            pl.coalesce(
                pl.col("_innermost").filter(pl.col("_current")).first(),
                pl.col("_innermost").sort_by("_thread").last(),
            ).alias("frame")
        )
    )
    what = pl.col("message").str.slice(len(FATAL)).str.strip_chars()
    ends = dump.group_by(STREAM, "_fatal").agg(
        pl.col("line").filter(~pl.col("_blank")).max().alias("end_line")
    )
    events = (
        dump.filter(is_fatal)
        .join(ends, on=[STREAM, "_fatal"], how="left")
        .join(threads, on=[STREAM, "_fatal"], how="left")
        .select(
            "file",
            "line",
            pl.lit("fatal_signal").alias("event"),
            pl.lit("error").alias("severity"),
            "end_line",
            "frame",
            what.str.slice(0, MESSAGE_CHARS).alias("exc_message"),
            # any other words are the interpreter's own fatal error, which ends in abort()
            what.replace_strict(FATAL_SIGNALS, default="SIGABRT", return_dtype=pl.String).alias(
                "signal"
            ),
        )
    )
    return pl.concat([events, _recognised(dump)], how="diagonal_relaxed")


def _thread_stacks(rows: pl.DataFrame) -> pl.DataFrame:
    """`thread_stack` for each thread of a faulthandler dump printed into a log with no fatal
    error above it: a snapshot of a live process (a SIGUSR1 handler's, a framework's hang
    report; under the watchdog's `Timeout (0:30:00)!` it is parsers/watchdog_stacks.py's), which
    the dumps read
    as a stack of the rank the line's prefix or file names (logforensics/dumps/in_logs.py).
    `names` holds its frames innermost first (`<file>:<line> in <func>`), `value` which dump of
    its stream it is (a process dumped every few minutes prints several), `frame` the
    innermost (determined-ai/determined#4245: `[rank=0] || Thread 0x00007f34546e3240 (most
    recent call first):`, both ranks in a sampler's `__iter__`)."""
    text = pl.col("_stripped")
    thread = text.str.contains(THREAD)
    if _absent(rows, thread):
        return _nothing()
    frame_line = pl.col("_frame") | text.str.starts_with(NO_PYTHON_FRAME)
    is_fatal = pl.col("message").fill_null("").str.starts_with(FATAL)
    rows = _mark_runs(
        rows, is_fatal, thread | frame_line | text.str.starts_with(EXTENSION_MODULES), "fatal"
    )
    opens = thread & ~pl.col("_fatal_in")
    rows = _mark_runs(rows, opens, frame_line, "stack")
    # a thread right under another thread's frames is the same dump's
    follows_a_stack = _previous_nonblank("_stack_in").fill_null(False)
    first = opens & ~follows_a_stack
    # (a dump under faulthandler's `Timeout (0:30:00)!` is parsers/watchdog_stacks.py's)
    timed = first & _previous_nonblank("_stripped").str.contains(WATCHDOG_TIMEOUT).fill_null(False)
    rows = rows.with_columns(first.cum_sum().over(STREAM).alias("_dump"), timed.alias("_timed"))
    stack = pl.col("_stack_in") & ~pl.col("_timed").any().over(STREAM, "_dump")
    lines = rows.filter(stack & ~pl.col("_blank"))
    stacks = (
        lines.group_by(STREAM, "_stack", maintain_order=True)
        .agg(
            pl.col("file").first(),
            pl.col("line").first(),
            pl.col("line").max().alias("end_line"),
            pl.col("_dump").first().cast(pl.Int64).alias("value"),
            pl.col("_frame_text").filter(pl.col("_frame")).alias("names"),
        )
        .select(
            "file",
            "line",
            pl.lit("thread_stack").alias("event"),
            pl.lit("info").alias("severity"),
            "end_line",
            "value",
            "names",
            pl.col("names").list.first().alias("frame"),
        )
    )
    return pl.concat([stacks, _recognised(lines)], how="diagonal_relaxed")


def _banner_runs(
    rows: pl.DataFrame, is_banner: pl.Expr, members: pl.Expr, name: str
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The lines of each run a banner opens (the banner and the `members` after it), and the
    banners with the run's last line as `end_line`."""
    rows = _mark_runs(rows, is_banner, members, name)
    run = rows.filter(pl.col(f"_{name}_in"))
    ends = run.group_by(STREAM, f"_{name}").agg(
        pl.col("line").filter(~pl.col("_blank")).max().alias("end_line")
    )
    return run, run.filter(is_banner).join(ends, on=[STREAM, f"_{name}"], how="left")


def _c10_signals(rows: pl.DataFrame) -> pl.DataFrame:
    """`fatal_signal` for c10's handler line, with its C++ frames recognised."""
    text = pl.col("_stripped")
    is_signal = text.str.contains(C10_SIGNAL)
    if _absent(rows, is_signal):
        return _nothing()
    run, banners = _banner_runs(rows, is_signal, text.str.contains(CPP_FRAME), "c10")
    parts = text.str.extract_groups(C10_SIGNAL)
    events = banners.select(
        "file",
        "line",
        pl.lit("fatal_signal").alias("event"),
        pl.lit("error").alias("severity"),
        "end_line",
        parts.struct.field("signal").alias("signal"),
        parts.struct.field("pid").cast(pl.Int64, strict=False).alias("pid"),
        parts.struct.field("tid").cast(pl.Int64, strict=False).alias("tid"),
    )
    return pl.concat([events, _recognised(run)], how="diagonal_relaxed")


def _native_signals(rows: pl.DataFrame) -> pl.DataFrame:
    """`fatal_signal` for a native library's crash banner (UCX, Open MPI), its backtrace
    recognised; the process is the one the banner names."""
    text = pl.col("_stripped")
    is_signal = text.str.contains(NATIVE_SIGNAL)
    if _absent(rows, is_signal):
        return _nothing()
    run, banners = _banner_runs(rows, is_signal, text.str.contains(NATIVE_FRAME), "native")
    # frames printed as Python's, the innermost first: where the process crashed
    innermost = (
        run.filter(pl.col("_frame"))
        .sort("line")
        .group_by(STREAM, "_native")
        .agg(pl.col("_frame_text").first().alias("frame"))
    )
    banners = banners.join(innermost, on=[STREAM, "_native"], how="left")
    banners = _with_nccl_frame(run, banners)
    parts = text.str.extract_groups(NATIVE_SIGNAL)
    name = pl.coalesce(
        parts.struct.field("ucx"),
        parts.struct.field("untagged"),
        parts.struct.field("ompi"),
        parts.struct.field("banner").replace_strict(BANNER_SIGNALS, default=None),
    )
    # abseil names the signal itself; the others describe it
    signal = pl.coalesce(
        name.replace_strict(FATAL_SIGNALS, default=None, return_dtype=pl.String),
        parts.struct.field("absl"),
    )
    events = banners.select(
        "file",
        "line",
        pl.lit("fatal_signal").alias("event"),
        pl.lit("error").alias("severity"),
        "end_line",
        pl.coalesce(name, parts.struct.field("absl"))
        .str.slice(0, MESSAGE_CHARS)
        .alias("exc_message"),
        signal.alias("signal"),
        parts.struct.field("host").alias("host"),
        parts.struct.field("pid").cast(pl.Int64, strict=False).alias("pid"),
        parts.struct.field("tid").cast(pl.Int64, strict=False).alias("tid"),
        "frame",
    )
    return pl.concat([events, _recognised(run)], how="diagonal_relaxed")


def _with_nccl_frame(run: pl.DataFrame, banners: pl.DataFrame) -> pl.DataFrame:
    """`frame`, where no Python frame gave one, as the first native frame of the banner's
    backtrace inside NCCL (`shmutils.cc:52 in ncclShmOpen`). Banners printed in a row, one
    backtrace under the last, are processes that crashed together: the backtrace is taken for
    each of them (CarperAI/trlx#536: eight bus errors, then one backtrace in ncclShmOpen)."""
    call = pl.col("_stripped").str.extract_groups(NATIVE_CALL)
    func = pl.coalesce(call.struct.field("func"), call.struct.field("symbol"))
    place = pl.coalesce(call.struct.field("place"), call.struct.field("library"))
    known_func = pl.when(~pl.col("_func").is_in(["", "???"])).then(pl.col("_func"))
    known_place = pl.when(~pl.col("_place").str.starts_with("???")).then(
        pl.col("_place").str.split("/").list.last()
    )
    nccl = (
        run.with_columns(func.alias("_func"), place.alias("_place"))
        .filter(
            pl.col("_func").str.contains(IN_NCCL).fill_null(False)
            | pl.col("_place").str.contains(IN_NCCL).fill_null(False)
        )
        .sort("line")
        .group_by(STREAM, "_native")
        .agg(
            pl.coalesce(pl.format("{} in {}", known_place, known_func), known_func, known_place)
            .first()
            .alias("_nccl_frame")
        )
    )
    in_a_row = (pl.col("line") != pl.col("line").shift(1) + 1).fill_null(True).cum_sum()
    return (
        banners.join(nccl, on=[STREAM, "_native"], how="left")
        .sort(STREAM, "line")
        .with_columns(in_a_row.over(STREAM).alias("_in_a_row"))
        .with_columns(
            pl.col("_nccl_frame").backward_fill().over(STREAM, "_in_a_row").alias("_nccl_frame")
        )
        .with_columns(pl.coalesce("frame", "_nccl_frame").alias("frame"))
    )


def crashed_in_nccl() -> pl.Expr:
    """A fatal signal whose backtrace runs through NCCL's own code (`_with_nccl_frame`)."""
    return (pl.col("event") == "fatal_signal") & pl.col("frame").str.contains(
        NCCL_CRASH_FRAME
    ).fill_null(False)


def _signals_unnamed(rows: pl.DataFrame) -> pl.DataFrame:
    """`fatal_signal` of a process whose Open MPI handler announced a signal that no line
    names (SIGNAL_ANNOUNCED), at its first announcement; where the handler's `Signal:` line
    follows, `_native_signals` reads it."""
    text = pl.col("_stripped")
    if _absent(rows, text.str.contains(SIGNAL_ANNOUNCED)):
        return _nothing()
    announced = text.str.extract_groups(SIGNAL_ANNOUNCED)
    named = (
        rows.filter(text.str.contains(NATIVE_SIGNAL))
        .select("file", text.str.extract_groups(NATIVE_SIGNAL).struct.field("pid").alias("_pid"))
        .unique()
    )
    return (
        rows.with_columns(announced.alias("_announced"))
        .filter(pl.col("_announced").struct.field("pid").is_not_null())
        .with_columns(pl.col("_announced").struct.field("pid").alias("_pid"))
        .join(named, on=["file", "_pid"], how="anti")
        .sort("line")
        .unique(["file", "_pid"], keep="first", maintain_order=True)
        .select(
            "file",
            "line",
            pl.lit("fatal_signal").alias("event"),
            pl.lit("error").alias("severity"),
            pl.lit("a signal (the line naming it is cut)").alias("exc_message"),
            pl.lit('{"signal_cut":true}').alias("extra"),
            pl.col("_announced").struct.field("host").alias("host"),
            pl.col("_pid").cast(pl.Int64, strict=False).alias("pid"),
        )
    )


def _terminations(rows: pl.DataFrame) -> pl.DataFrame:
    """`cpp_terminate`, with the `what():` line after it (or on the same line) as its
    message; the C++ stack c10 appends to `what()` is recognised."""
    text = pl.col("_stripped")
    is_terminate = text.str.contains(TERMINATE, literal=True)
    is_what = text.str.starts_with(WHAT)
    if _absent(rows, is_terminate | is_what):
        return _nothing()
    nonblank = rows.filter(~pl.col("_blank")).with_columns(
        pl.col("line").shift(-1).over(STREAM).alias("_next_line"),
        pl.col("_stripped").shift(-1).over(STREAM).alias("_next_text"),
    )
    next_is_what = pl.col("_next_text").fill_null("").str.starts_with(WHAT) & ~text.str.contains(
        WHAT, literal=True
    )
    what_text = (
        pl.when(text.str.contains(WHAT, literal=True))
        .then(text)
        .when(next_is_what)
        .then(pl.col("_next_text"))
    )
    what_message = what_text.str.slice(what_text.str.find(WHAT, literal=True) + len(WHAT))
    events = nonblank.filter(is_terminate).select(
        "file",
        "line",
        pl.lit("cpp_terminate").alias("event"),
        pl.lit("error").alias("severity"),
        pl.when(next_is_what)
        .then(pl.col("_next_line"))
        .otherwise(pl.col("line"))
        .alias("end_line"),
        text.str.extract(TERMINATE_TYPE, 1).alias("exc_type"),
        what_message.str.strip_chars().str.slice(0, MESSAGE_CHARS).alias("exc_message"),
    )
    # a `what():` whose terminate line an excerpt cut off is the handler's all the same: only
    # it prints that line (ecmwf/WeatherGenerator#1572: `0:   what():  CUDA error:
    # initialization error`, then c10's stack)
    after_terminate = pl.col("_previous_text").fill_null("").str.contains(TERMINATE, literal=True)
    # (a process group's own words, `what():  [PG ID 0 ... Rank 2] Process group watchdog
    # thread terminated ...`, are parsers/watchdog.py's, with the rank they name)
    group_said = what_message.str.strip_chars().str.contains(r"^\[(?:PG |Rank \d)").fill_null(False)
    orphans = (
        nonblank.with_columns(pl.col("_stripped").shift(1).over(STREAM).alias("_previous_text"))
        .filter(is_what & ~after_terminate & ~group_said)
        .select(
            *_one_line("cpp_terminate"),
            pl.lit(CUT_TYPE).alias("exc_type"),
            what_message.str.strip_chars().str.slice(0, MESSAGE_CHARS).alias("exc_message"),
        )
    )
    trailer = text.str.starts_with(EXCEPTION_RAISED_FROM) | text.str.contains(CPP_FRAME)
    rows = _mark_runs(rows, is_what, trailer, "what")
    return pl.concat(
        [events, orphans, _recognised(rows.filter(pl.col("_what_in")))], how="diagonal_relaxed"
    )


def _ends_loose_frames() -> pl.Expr:
    """A `Type: message` line less indented than the frame above it (or the frame above its
    code line, and the carets under that): the exception that ends a traceback whose header
    the excerpt lost."""
    frame_before = pl.any_horizontal(
        pl.col("_frame").shift(k).over(STREAM).fill_null(False) for k in (1, 2, 3)
    )
    # (at most a space in, as a bare exception line: deeper, it is a copy inside a report's
    # field, torchrun's summary's `traceback :` read by its own parser)
    less_indented = (pl.col("_indent") < _previous_nonblank("_indent")).fill_null(False) & (
        pl.col("_indent") <= 1
    )
    return (
        frame_before
        & less_indented
        & pl.col("_stripped").str.contains(UNDER_FRAMES_EXCEPTION)
        & ~pl.col("_frame")
    )


def _frames_without_header(rows: pl.DataFrame) -> pl.DataFrame:
    """Lines of a traceback whose header is not in the excerpt: frame lines, the code line
    printed under each, and the caret line under that (Python >= 3.11). A run of them outside
    any traceback that no exception line ends is a traceback cut at both ends: an `exception`
    with no type, at its first line, its innermost frame in `frame` (NVIDIA-NeMo/Automodel#3686:
    rank 8's frames down to `os.makedirs`, the `FileExistsError` line cut off)."""
    after_frame = _previous_nonblank("_frame").fill_null(False)
    two_after_frame = pl.col("_frame").shift(2).over(STREAM).fill_null(False)
    deeper = (pl.col("_indent") > _previous_nonblank("_indent")).fill_null(False)
    # the source line Python prints under a frame; a paste may have lost its indentation, so
    # any line after a frame that is neither a frame nor an exception's is one
    exception_like = pl.col("_stripped").str.contains(rf"^{EXCEPTION_CLASS}(?::|$)") | pl.col(
        "_bare"
    )
    code_line = after_frame & (deeper | ~exception_like) & ~pl.col("_frame") & ~pl.col("_blank")
    caret_line = two_after_frame & pl.col("_stripped").str.contains(CARETS)
    # gdb's py-bt names a builtin where the stack enters C, innermost first under its
    # `(most recent call first)` header (logforensics/dumps/gdb_pybt.py): part of the stack
    builtin = pl.col("_stripped").str.contains(GDB_BUILTIN)
    rows = rows.with_columns(
        (pl.col("_frame") | code_line | caret_line | builtin).alias("_stack_line")
    )
    after_stack = _previous_nonblank("_stack_line").fill_null(False)
    lone_type = after_stack & pl.col("_stripped").str.contains(LONE_EXCEPTION_TYPE)
    return pl.concat(
        [
            _recognised(rows.filter(pl.col("_stack_line") | lone_type)),
            _cut_at_both_ends(rows),
        ],
        how="diagonal_relaxed",
    )


def _cut_at_both_ends(rows: pl.DataFrame) -> pl.DataFrame:
    """Runs of loose frames: with no exception line after them, a traceback cut at both ends
    (no type); ended by a bare type that `_bare_exception_events` does not read (a
    fully-qualified class without a message: pytorch/pytorch#80772's
    `torch.distributed.elastic.rendezvous.api.RendezvousTimeoutError`), that exception."""
    loose = pl.col("_stack_line") & ~pl.col("_in_traceback")
    if _absent(rows, loose):
        return _nothing()
    stream = rows.filter(~pl.col("_blank")).with_columns(loose.alias("_loose"))
    starts = pl.col("_loose") & ~pl.col("_loose").shift(1).over(STREAM).fill_null(False)
    runs = stream.with_columns(starts.cum_sum().over(STREAM).alias("_run"))
    # an exception line after the run (at any indentation: torchrun's summary indents the
    # traceback it copies under `traceback : Traceback ...`), or a header before it that another
    # field's text carried: a whole traceback, read elsewhere
    stripped = pl.col("_stripped")
    next_line = stripped.shift(-1).over(STREAM)
    header_before = (
        (
            stripped.str.contains(HEADER, literal=True)
            | stripped.str.contains(STACK_FIRST, literal=True)
        )
        .shift(1)
        .over(STREAM)
    )
    # a type alone, unread elsewhere: the bare exception reader wants `Type: message`
    lone_type = next_line.str.extract(LONE_EXCEPTION_TYPE, 1)
    runs = runs.with_columns(
        next_line.str.contains(EXCEPTION_LINE).fill_null(False).alias("_exception_after"),
        header_before.fill_null(False).alias("_header_before"),
        lone_type.alias("_lone_type"),
    )
    ended = pl.col("_exception_after") | pl.col("_header_before")
    return (
        runs.filter(pl.col("_loose"))
        .group_by(STREAM, "_run", maintain_order=True)
        .agg(
            pl.col("file").first(),
            pl.col("line").first(),
            pl.col("line").last().alias("_last"),
            pl.col("_frame_text").drop_nulls().last().alias("frame"),
            pl.col("_exception_after").last(),
            pl.col("_header_before").first(),
            pl.col("_lone_type").last().alias("exc_type"),
            _enters_main_first(pl.lit(True)).alias("_main_first"),
            _main_first_name(pl.lit(True)).alias("_main_first_name"),
            # a traceback's frames say `line N, in f`; faulthandler's and others' lack the comma
            (pl.col("_frame") & pl.col("message").str.contains(r", in \S+$"))
            .sum()
            .alias("_frames"),
        )
        .filter(
            (~ended | (pl.col("exc_type").is_not_null() & ~pl.col("_header_before")))
            & (pl.col("_frames") >= MIN_CUT_FRAMES)
        )
        .select(
            "file",
            "line",
            pl.lit("exception").alias("event"),
            pl.lit("error").alias("severity"),
            (pl.col("_last") + pl.col("exc_type").is_not_null().cast(pl.UInt32)).alias("end_line"),
            "exc_type",
            "frame",
            pl.when("_main_first")
            .then(
                pl.struct(
                    in_main_process_first=pl.lit(True),
                    main_first_context=pl.col("_main_first_name"),
                )
                .struct.json_encode()
                .str.replace(r',"main_first_context":null', "")
            )
            .alias("extra"),
        )
    )


# An exception's class alone on its line, qualified or not, with no message:
#   torch.distributed.elastic.rendezvous.api.RendezvousTimeoutError
LONE_EXCEPTION_TYPE = rf"^({EXCEPTION_CLASS}):?$"
# faulthandler's header of a thread's stack (`Thread 0x00007f98b50b4b80 (most recent call first):`)
STACK_FIRST = "(most recent call first)"
#   <built-in method allreduce of PyCapsule object at remote 0x7fb3b12c3f90>
GDB_BUILTIN = r"^<built-in (?:method|function) \S+.*>$"
# Frames a loose run must hold to be taken for a cut traceback (one stray frame line says
# little).
MIN_CUT_FRAMES = 2


def _one_line(event: str) -> tuple[str | pl.Expr, ...]:
    """The columns that open an error `event` a single line holds (it ends on that line)."""
    return (
        "file",
        "line",
        pl.lit(event).alias("event"),
        pl.lit("error").alias("severity"),
        pl.col("line").alias("end_line"),
    )


def _absent(rows: pl.DataFrame, marker: pl.Expr) -> bool:
    """Whether no row has `marker`: most logs hold no crash dump, so skip the work."""
    return not rows.select(marker.any()).item()


def _nothing() -> pl.DataFrame:
    return pl.DataFrame(schema={"file": pl.String, "line": pl.UInt32, "event": pl.String})


def _recognised(rows: pl.DataFrame) -> pl.DataFrame:
    """Rows that count their line as recognised without an event (blank lines never count)."""
    return rows.filter(~pl.col("_text_blank")).select(
        "file", "line", pl.lit(None, dtype=pl.String).alias("event")
    )


PARSER = LineParser(
    name="traceback",
    literals=(
        "Traceback (most recent call last)",
        # a rich box's border: its frames and code (see the module doc)
        RICH_BORDER[0],
        RICH_BORDER[1],
        "traceback :",
        'File "',
        "Error:",
        "Exception:",
        "Exit:",
        "Interrupt",
        "Failure:",
        "Failed:",
        *CUDA_HINTS,
        DURING_HANDLING,
        DIRECT_CAUSE,
        "out of memory",
        FATAL,
        "(most recent call first)",
        TERMINATE,
        WHAT,
        "PID: ",
        "frame #",
        "Caught signal ",
        "Signal: ",
        "*** Process received signal ***",
        "terminated with the following error:",
        "Process process ",
        " encountered !",
        ABSL_RECEIVED,
        "StopIteration",
        "StopAsyncIteration",
        UNHANDLED,
        "RayTaskError(",
        "Exception ignored ",
        # faulthandler's watchdog line above a dump (see `_thread_stacks`)
        "Timeout (",
        ": can't open file ",
        ": No module named ",
        ": Error while finding module specification ",
        ": error: ",
        "usage: ",
        " in file ",
    ),
    parse=parse,
    context_after=40,
)
