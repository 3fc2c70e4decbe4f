"""An exception on a subset of ranks, other than the communication errors every rank gets
once the job is already broken.

If the rank went on printing stage marks after it, or logged it as a warning and carried on,
the exception was swallowed (caught and `continue`d) and that is where the rank left the
others' path. If the rank went silent, it is the rank the others are waiting for. The same
exception on several ranks is one finding naming them all (a common cause: the data, the
environment), not one rank's failure and its echoes. A traceback cut off before its exception
line (a killed process, a truncated paste) only shows where the rank was: it is no cause.

A rank can die without an exception: killed by a signal (torchrun's `exitcode: -9` and
`Signal 9 (SIGKILL) received by PID`, the shell's `Killed`, a faulthandler or c10 report of a
segfault). That is its departure too, unless the rank had already seen the job break (a
timeout, a lost peer, an NCCL error: then aborting was how it went down) or the signal is the
SIGTERM a launcher sends the survivors. An abort on every rank is the watchdog's teardown.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

import polars as pl

from logforensics.desync import TIMEOUT_EVENTS
from logforensics.findings import WAITED, Confidence, Finding, Part, evidence_from, exception_text
from logforensics.framing import frame_lines
from logforensics.garbled import OBJECT_COLLECTIVE_FRAME, garbled
from logforensics.intake import read_lines_at
from logforensics.job import Job
from logforensics.launchers import shows_torchrun
from logforensics.main_first import IN_MAIN_FIRST
from logforensics.placement import (
    AFTER_MARK,
    clock_of,
    earliest_time,
    placed_finding,
    placed_keys,
)
from logforensics.registry import Rule
from logforensics.rules.missing_rank import startup_failures
from logforensics.rules.peer_lost import LOST as PEER_LOST
from logforensics.rules.peer_lost import about_a_peer, exited_quietly, lost_a_node
from logforensics.stopped_workers import (
    EXIT_REPORTS,
    FATAL,
    SHELL_SIGNALED,
    ListedFailure,
    UnstoppedWorker,
    above_a_cancellation,
    agent_stops,
    by_lightning,
    child_failed_error,
    exit_signal,
    first_observed_failure,
    first_observed_report,
    listed_failure,
    listed_failures,
    one_reported_failure,
    srun_error_exits,
    unstopped_worker,
)
from logforensics.teardown import finished_before_all
from logforensics.text import capitalized, clipped, duration, rank_list
from parsers.cuda_assert import KIND as CUDA_ASSERTION
from parsers.elastic import OLD_LAUNCHER_SIGNAL, WORKER_COMMAND
from parsers.process_exit import HARNESS_EXIT, LIGHTNING_REPORT
from parsers.slurm import (
    DUE_TO_NODE_FAILURE,
    DUE_TO_PREEMPTION,
    DUE_TO_REQUEUE,
    DUE_TO_TIME_LIMIT,
)
from parsers.traceback import HPU_OUT_OF_MEMORY, KV_CACHE_OUT_OF_MEMORY, PLACE, crashed_in_nccl

# Horovod's word on every rank once one rank failed or finished early: "Horovod has been shut
# down. This was caused by an exception on one of the ranks or an attempt to allreduce,
# allgather or broadcast a tensor after one of the ranks finished execution."
HOROVOD_SHUT_DOWN = "Horovod has been shut down"
# Exceptions that report a collective that already failed: symptoms, handled by other rules.
CONSEQUENCE = (
    r"(?i)DistBackendError|DistStoreError|ChildFailedError|timed? ?out|timeout|Connection closed"
    r"|Connection reset|[NH]CCL (?:error|communicator)|function error: Hccl|ProcessGroup"
    r"|^ccl::"
    r"|[Ww]atchdog|monitoredBarrier"
    r"|Detected mismatch between collectives|finished reduction|due to shape mismatches"
    r"|Error when verifying shape tensors for collective"
    # FSDP's forward-order check across ranks (the collective_mismatch rule reads it)
    r"|Forward order differs across ranks"
    # accelerate's debug-mode check of a collective's shapes, raised with its message on the
    # lines after the type (the docs' troubleshooting page; the shapes it lists are read by the
    # collective_mismatch rule)
    r"|DistributedOperationException"
    # DeepSpeed's cross-rank check (the collective_mismatch rule reads it)
    r"|disagreement (?:on list length )?between rank\d+ and rank\d+"
    r"|parameters that were not used in producing the loss"
    # DDP's reducer finding a parameter ready twice (reentrant checkpointing, shared modules):
    # the reducer rule reads it (modelscope/ms-swift#3171)
    r"|marked as ready twice|mark a variable ready only once"
    # DDP's check at construction that every rank built the same model, raised on each rank
    # (the reducer rule reads the counts and names the odd rank)
    r"|DDP expects same model across all ranks"
    r"|in this process with sizes .* appears not to match"
    # PyTorch's own check of two ranks on one GPU before NCCL's (the duplicate_device rule)
    r"|Duplicated GPU device is not allowed"
    # a launcher's ssh to a node failing before it started anything there (missing_rank's)
    r"|was not reachable via ssh|Command '\[?'?ssh .* returned non-zero exit status 255"
    # DDP's Join with throw_on_early_termination: a rank out of batches, and the others told
    # so (the loader_size_mismatch rule reads them)
    r"|exhausted all inputs|exhausted inputs\. Throwing across all ranks"
    # torchrun's agent finding the rendezvous closed by another agent that stopped: the run
    # had ended elsewhere first (pytorch/pytorch#91943, at the re-rendezvous after a restart)
    r"|RendezvousClosedError"
    # TensorPipe's transport failing under an RPC call (the rpc_transport rule reads it:
    # pytorch/tensorpipe#201's `RuntimeError: ECONNREFUSED:` from `rpc_sync`)
    r"|ECONNREFUSED|ECONNRESET|transport retry counter exceeded|pipe closed"
    r"|KeyboardInterrupt|SignalException|Broken pipe|Socket|gloo|" + HOROVOD_SHUT_DOWN
)
# A collective called with what its backend cannot take is the caller's own error, whatever
# backend it names (ultralytics/ultralytics#15701: gloo given the Apple GPU's tensors,
# `RuntimeError: ProcessGroupGloo::allgather: invalid tensor type at index 0`)
MISUSED = (
    r"invalid tensor type|Invalid scalar type|[Uu]nsupported (?:tensor|dtype|device|scalar)"
    r"|Tensors must be (?:CUDA|CPU|contiguous|on )|No backend type associated with device type"
    # an argument the backend does not take (huawei-noah/Efficient-Computing#90 on Windows:
    # `RuntimeError: Function argument device_ids not supported for the selected backend gloo`)
    r"|not supported for the selected backend"
    # a check inside PyTorch that failed in this process, whichever source file it names
    # (awslabs/keys_values: `ncclComm != nullptr INTERNAL ASSERT FAILED at ".../
    # ProcessGroupNCCL.cpp":4043, ... Parent communicator missing in eager initialization mode.`)
    r"|INTERNAL ASSERT FAILED"
)


# A service outside the job that a process called and that did not answer: its timeout or
# lost connection is that process's own failure, not a wait for other ranks (ray-project/ray
# via malaysia-ai/jupyter-gpu: rank 0's `botocore.exceptions.ConnectTimeoutError: Connect
# timeout on endpoint URL: "http://minio.../checkpoints..."` while resuming from a checkpoint)
# (not any URL: torch's own messages point at its documentation)
OUTSIDE_SERVICE = (
    r"(?i)\b(?:botocore|boto3|urllib3|requests|aiohttp|httpx|s3fs|gcsfs|huggingface_hub)\."
    r"|endpoint URL"
)


def _a_consequence(what: pl.Expr) -> pl.Expr:
    """An exception that follows from another rank's failure, or is a wait that gave up."""
    return what.str.contains(CONSEQUENCE) & ~what.str.contains(OWN_FAILURE)


# A kernel the GPU's own watchdog stopped (cudaErrorLaunchTimeout, a display GPU's time limit):
# the device's failure in this process, not a wait for other ranks, for all it says "timed out"
# (facebookresearch/unbiased-teacher#80: `RuntimeError: CUDA error: the launch timed out and
# was terminated` on two K80s)
KERNEL_TIMEOUT = r"(?i)launch timed out"
# A host name that did not resolve: the process's own configuration or DNS, never a peer that
# went away, for all it is a socket's error (pytorch/elastic's Kubernetes troubleshooting: the
# rendezvous `etcd://etcd-service:2379` unknown, `socket.gaierror: [Errno -2] Name or service
# not known` on each worker)
UNRESOLVED_NAME = (
    r"(?i)gaierror|Name or service not known|Temporary failure in name resolution"
    r"|nodename nor servname"
)
# A backend this build of PyTorch cannot run on this machine, found as the process group is
# made: gloo with no transport device for the host (IAHispano/Applio#1019, Nerogar/
# OneTrainer#1122, on Windows: `RuntimeError: makeDeviceForHostname(): unsupported gloo
# device`), a package built without the backend asked for (meta-llama/llama#1041: `Distributed
# package doesn't have NCCL built in`). The process's own set-up, for all it names gloo.
BACKEND_UNAVAILABLE = r"unsupported gloo device|Distributed package doesn't have \w+ built in"
BACKEND_UNAVAILABLE_FIX = (
    "{who} could not make the process group: the PyTorch installed on its machine cannot "
    "run the backend the script asks for (a build without NCCL, as on Windows and "
    "macOS; a gloo without a transport for the host, as some Windows builds ship). Check it "
    'where it failed (`python -c "import torch.distributed as d; '
    'print(d.is_nccl_available(), d.is_gloo_available())"`), then install a PyTorch build that '
    "has the backend for that platform, or ask for one it has (gloo in place of NCCL); on a "
    "single GPU, run without torch.distributed."
)
# Words that make an exception the process's own failure, whatever words of a consequence it
# holds besides (each part keeps its own flags)
OWN_FAILURE = "|".join(
    f"(?:{words})"
    for words in (MISUSED, OUTSIDE_SERVICE, KERNEL_TIMEOUT, UNRESOLVED_NAME, BACKEND_UNAVAILABLE)
)


OUT_OF_MEMORY = r"(?i)out of memory|OutOfMemoryError"
# A message that is an out-of-memory error (`CUDA out of memory. Tried to allocate ...`,
# `CUDA error: out of memory`), not one that names it among possible causes
STATES_OUT_OF_MEMORY = (
    r"(?i)^\s*(?:CUDA (?:error: )?)?out of memory|\b(?:CUDA|HIP|NPU|XPU) out of memory"
    rf"|{HPU_OUT_OF_MEMORY}"
)
SWALLOWED_FIX = (
    "The exception was caught and the rank carried on, skipping collectives the other ranks "
    "still issue. Either let it propagate (re-raise it: the job fails fast instead of "
    "hanging), or make the skip collective: every rank sets a flag, "
    "`dist.all_reduce(flag, op=dist.ReduceOp.MAX)`, and all ranks skip the step together. Fix "
    "the cause of the exception itself too."
)
FATAL_FIX = (
    "Fix the exception on {who}; once {it} stopped issuing collectives, the other ranks could "
    "only wait in their next one or be stopped by the launcher."
)
# said only where torchrun's agent ran the workers (not under mpirun, `mp.spawn`, `xmp.spawn`)
RECORD_HINT = (
    " Wrapping the script with `torch.distributed.elastic.multiprocessing.errors.record` makes "
    "torchrun report it first."
)
# A rank asked for a GPU its node does not have (tdrussell/diffusion-pipe#397:
# `torch.cuda.set_device(dist.get_rank())` on the second node; HRNet/HRNet-Semantic-
# Segmentation#171: `--nproc_per_node` above the node's three GPUs)
ORDINAL = r"invalid device ordinal"
ORDINAL_FIX = (
    "{who} asked for a GPU {its} node does not have: more processes were started on the node "
    "than it has GPUs (`--nproc_per_node`, CUDA_VISIBLE_DEVICES), or the device was chosen by "
    "the global rank (`torch.cuda.set_device(dist.get_rank())`), which runs past the node's "
    "GPUs from the second node on. Start one process per GPU and choose the device by the "
    "local rank (`torch.cuda.set_device(int(os.environ['LOCAL_RANK']))`)."
)
# A DataLoader worker process died under the rank (torch/utils/data/dataloader.py,
# _utils/signal_handling.py): `DataLoader worker (pid(s) 8864) exited unexpectedly`,
# `DataLoader worker (pid 2176) is killed by signal: Bus error.`
WORKER_DIED = (
    r"DataLoader worker \(pid(?:\(s\))? [\d, ]+\) (?:exited unexpectedly|is killed by signal)"
)
WORKER_EXITED = r"DataLoader worker \(pid(?:\(s\))? [\d, ]+\) exited unexpectedly"
WORKER_FIX = (
    "A DataLoader worker process of {who} died, and the rank with it. The worker's own death "
    "is the cause: the OOM killer on host memory (`dmesg -T | grep -i 'killed process'` on "
    "that node), /dev/shm too small for the batches workers hand over (`Bus error`; give the "
    "container `--shm-size` or `--ipc=host`), or a crash in the dataset code (run with "
    "`num_workers=0` to see its traceback). Fewer workers or a smaller prefetch_factor cut "
    "the memory."
)
# A GPU or node that failed, whatever code ran on it (NVIDIA's Xid catalogue; bigscience's
# tr1/tr11 chronicles: an uncorrectable ECC error, `CUDA error: unknown error` on a dead GPU)
HARDWARE = (
    r"(?i)uncorrectable ECC|ECC error|CUDA error: unknown error|fell off the bus|\bXid\b"
    r"|GPU is lost|unspecified launch failure"
    # the ROCm runtime's `HW Exception by GPU node-9 ... reason :GPU Hang` (parsers/rocm_runtime)
    r"|^HW Exception: "
)
HARDWARE_FIX = (
    "This error comes from the GPU or its node, not from the training code: take the node out "
    "of the job (SLURM `--exclude`, cordon it), and on it read `dmesg -T | grep -i xid` and "
    "`nvidia-smi -q -d ECC,PAGE_RETIREMENT`; resume from the last checkpoint on healthy nodes."
)
KERNEL_TIMEOUT_FIX = (
    "A GPU kernel ran longer than the GPU driver's watchdog allows and was stopped "
    "(cudaErrorLaunchTimeout): a GPU that also drives a display, or one under Windows' WDDM "
    "driver model, limits kernels to a few seconds. Run on GPUs without a display (TCC mode "
    "on Windows) or shorten the work per kernel (smaller batches); on a server GPU it points "
    "to a kernel that hung or a failing GPU (`dmesg -T | grep -i xid` on its node)."
)
# Training whose numbers diverged: DeepSpeed's fp16 loss scaler at its floor (every step
# overflowed; hiyouga/LlamaFactory#251), a NaN loss a script or framework stops on, Megatron's
# NaN checks of a rank's gradients (alibaba/Pai-Megatron-Patch#366: `Rank 11: found NaN in local
# grad norm ...`; NVIDIA-NeMo/Speech#14348: `... Unexpected result nan (message='found NaN in
# local grad norm for bucket #0 ...')`).
NUMERICS = (
    r"(?i)loss scale already at minimum"
    r"|found NaN in (?:local )?(?:forward )?(?:loss|grad norm)|Unexpected result (?:nan|inf)\b"
    r"|Loss (?:is|became) (?:NaN|nan|infinite)|non-finite loss"
    r"|grad(?:ient)? scale is (?:too )?small"
)
NUMERICS_FIX = (
    "The training's numbers diverged (losses or gradients overflowed or became NaN): it is "
    "the run's numerics, which every rank shares, not one rank's path. Train in bf16 instead "
    "of fp16, lower the learning rate or add warm-up, clip gradients, and check the data and "
    "the software stack (a container or library update) the run changed before it began."
)
# Open MPI's fatal error handler on a process's MPI_Init (parsers/mpi_errors.py): the process
# could not join the MPI job (deepspeedai/DeepSpeed#935: PMIx's server unreachable)
MPI_INIT = r"An error occurred in MPI_Init"
MPI_INIT_FIX = (
    "MPI could not start {who} (MPI_Init failed), before any training code ran: the process "
    "could not reach the MPI runtime that mpirun started on its host (PMIx or ORTE errors just "
    "before the banner). Check that every host runs the Open MPI that mpirun comes from, that "
    "the hosts reach each other on the network interface Open MPI picks (`--mca "
    "oob_tcp_if_include` and `--mca btl_tcp_if_include` name it), then relaunch."
)
# MPICH's and Intel MPI's abort of a process whose MPI_Init failed (parsers/mpi_errors.py): the
# innermost line of the error stack names the network or the process manager (OLCF's PyTorch
# on Frontier guide: NIC selection failed with mpi4py imported after torch)
MPICH_INIT = r"Fatal error in PMPI_Init"
MPICH_INIT_FIX = (
    "MPI could not start {who} (MPI_Init failed), before any training code ran: the last line "
    "of MPI's error stack says what it could not set up, most often the network (the "
    "libfabric provider, the NIC to use) or the process manager. Check the MPI's network and "
    "process-manager settings on every node (`FI_PROVIDER`, `I_MPI_OFI_PROVIDER`, "
    "`I_MPI_PMI_LIBRARY`, `MPICH_OFI_NIC_POLICY`) and the CPU binding the launcher gives each "
    "process; where the script imports mpi4py, import it before torch."
)
# The file system under a write or a read failed: an I/O error, a full disk, a quota, a handle
# a network file system dropped (THUDM/slime#326: `[Errno 5] Input/output error` from a
# checkpoint's async writer; the maintainer: "looks like a filesystem problem")
STORAGE = (
    r"\[Errno (?:5|28|116|122)\]|Input/output error|No space left on device"
    r"|Disk quota exceeded|Stale file handle"
)
STORAGE_FIX = (
    "The file system failed the job's write or read (an I/O error, a full disk or quota, a "
    "dropped network mount), not the training code: on that node check the folder it writes "
    "to (`df -h`, the quota, `dmesg -T` for I/O errors), that a shared file system takes the "
    "writes of every rank at once (a checkpoint's parallel writers), and resume from the last "
    "complete checkpoint."
)
LOGGED = '"logged":true'  # set by parsers/log_levels.py on a caught exception it logged


def _logged() -> pl.Expr:
    """Whether an exception event is one a process caught and logged (see LOGGED)."""
    return pl.col("extra").str.contains(LOGGED, literal=True).fill_null(False)


def _message_fix(texts: list[str], who: str) -> str | None:
    """The fix the words of an exception call for, whoever raised it (`who`): a dead DataLoader
    worker, a GPU or node that failed, training numbers that diverged; None for other words."""
    for pattern, fix in (
        (ORDINAL, ORDINAL_FIX.format(who=capitalized(who), its="its")),
        (WORKER_DIED, WORKER_FIX.format(who=who)),
        (HARDWARE, HARDWARE_FIX),
        (STORAGE, STORAGE_FIX),
        (KERNEL_TIMEOUT, KERNEL_TIMEOUT_FIX),
        (NUMERICS, NUMERICS_FIX),
        (MPI_INIT, MPI_INIT_FIX.format(who=who)),
        (MPICH_INIT, MPICH_INIT_FIX.format(who=who)),
        (BACKEND_UNAVAILABLE, BACKEND_UNAVAILABLE_FIX.format(who=capitalized(who))),
        (SCRIPT_UNOPENED, SCRIPT_UNOPENED_FIX),
        (LAUNCHER_LOCAL_RANK, LAUNCHER_LOCAL_RANK_FIX),
        (ARGUMENTS_REFUSED, ARGUMENTS_REFUSED_FIX),
    ):
        if any(re.search(pattern, text) for text in texts):
            return fix
    return None


# the interpreter's refusal of a script it cannot open (parsers/traceback.py's words for it)
SCRIPT_UNOPENED = r"can't open file .*\[Errno \d+\]"
SCRIPT_UNOPENED_FIX = (
    "The interpreter could not open the script: it is not at that path (or not readable) on "
    "the machines that say so. Give every node the same code at the same path (a shared file "
    "system, or the checkout synced to every node before the launch), and launch from the "
    "directory a relative script path is relative to."
)
# argparse's refusal of the command line (parsers/traceback.py's ArgumentError), and the
# launcher's own argument among what it refused
ARGUMENTS_REFUSED = r"^ArgumentError: "
LAUNCHER_LOCAL_RANK = r"^ArgumentError: .*--local[-_]rank"
LAUNCHER_LOCAL_RANK_FIX = (
    "The script does not accept the local-rank argument the launcher passes: "
    "torch.distributed.launch in PyTorch >= 2.0 passes `--local-rank` (older releases "
    "`--local_rank`). Declare both spellings (`parser.add_argument('--local-rank', "
    "'--local_rank', type=int, default=0)`), or drop the argument and read "
    "`os.environ['LOCAL_RANK']` (torchrun sets it and passes no argument)."
)
ARGUMENTS_REFUSED_FIX = (
    "The script refused its command line and exited (argparse exits with code 2): compare the "
    "launch command's arguments with the script's parser (a misspelt or removed option, a "
    "required one missing) and run the same command on one process to see the whole message."
)
UNNAMED_FIX = (
    "Find the rank the others waited for: the one whose log shows it busy or failing at that "
    "time. Prefix each rank's output (`torchrun --tee 3`) so the next log says who raised what."
)
ALIKE_FIX = (
    "The processes raised the same error at the same place: its cause is in what they all "
    "run (that code, the model or configuration it is given, a library version), not in one "
    "rank's data or timing. Fix it there; a run with one process most often shows it too."
)
COMMON_FIX = (
    "Every rank named raised the same exception: look for what they share (the data shard "
    "format, the environment, a version or a path), not for one rank's divergence."
)


def check(job: Job) -> list[Finding]:
    failures = _failures(job)
    if lost_a_node(job):
        failures = [_seen_from_a_lost_node(finding) for finding in failures]
    if _scheduler_ended(job):
        return failures
    return [finding for finding in failures if not _host_memory(finding)]


LOST_NODE_SEEN = (
    " The scheduler lost a node under the job: a GPU failing this way with no rank to place it "
    "elsewhere is most likely that node's failure seen from its processes."
)


def _seen_from_a_lost_node(finding: Finding) -> Finding:
    """A GPU's hardware failure no line places on a rank, in a job the scheduler says lost a
    node: the node failing, seen from its processes, not a cause of its own
    (huggingface/m4-logs tr_141 num_workers_02: two `CUDA error: unknown error` aborts in
    ProcessGroupNCCL's cleanup loop, then `srun: error: Node failure on jean-zay-iam49`)."""
    if finding.ranks or finding.part != "explanation":
        return finding
    if re.search(HARDWARE, _message(finding)) is None:
        return finding
    return replace(finding, part="consequence", summary=finding.summary + LOST_NODE_SEEN)


def out_of_host_memory(job: Job) -> list[Finding]:
    """The failures `check` leaves to the oom rule: deaths the host running out of memory
    most likely caused. SIGKILL is the Linux OOM killer's signal (a launcher's `exitcode: -9`,
    `return code = -9`, the shell's `Killed`), a DataLoader worker `killed by signal: Killed`
    is the same on a worker, and `DefaultCPUAllocator: can't allocate memory` says it. Where
    the logs show the scheduler ended the step (a time limit, a cancellation), its kill is no
    memory's and they stay `check`'s."""
    if _scheduler_ended(job):
        return []
    return [finding for finding in _failures(job) if _host_memory(finding)]


HOST_MEMORY_WORDS = ("killed by signal: Killed", "DefaultCPUAllocator: can't allocate memory")
# Shared memory (/dev/shm) running out: a DataLoader worker's bus error as its parent reports
# it, torch's failed write of a tensor into shared memory (`unable to write to file
# </torch_9931_...>: No space left on device`)
SHARED_MEMORY_WORDS = ("killed by signal: Bus error", "unable to write to file </torch_")


def _host_memory(finding: Finding) -> bool:
    return (
        finding.details.get("signal") == "SIGKILL"
        or any(word in _message(finding) for word in HOST_MEMORY_WORDS)
        or out_of_shared_memory(finding)
    )


def out_of_shared_memory(finding: Finding) -> bool:
    """A death SIGBUS ended, or words that say shared memory ran out: a memory access the system
    could not back, most often /dev/shm full (Docker gives a container 64 MB of it), where
    DataLoader workers hand batches over and NCCL keeps its buffers between a node's GPUs."""
    return finding.details.get("signal") == "SIGBUS" or any(
        word in _message(finding) for word in SHARED_MEMORY_WORDS
    )


def _message(finding: Finding) -> str:
    """The words of the failure: a rank's exception message, or what a process no line ties
    to a rank raised."""
    details = finding.details
    return " ".join(str(details.get(key) or "") for key in ("message", "exception"))


def _scheduler_ended(job: Job) -> bool:
    return not job.events.filter(pl.col("event") == "step_cancelled").is_empty()


# `check` and the oom rule (through `out_of_host_memory`) both read one job's failures: they
# are worked out once, for the last job asked about (a single slot keeps no job alive longer
# than the next one)
_LAST_FAILURES: list[tuple[Job, list[Finding]]] = []


def _failures(job: Job) -> list[Finding]:
    if _LAST_FAILURES and _LAST_FAILURES[0][0] is job:
        return list(_LAST_FAILURES[0][1])
    failures = _failures_of(job)
    _LAST_FAILURES[:] = [(job, failures)]
    return list(failures)


# Events that state a fact of the job's set-up and nothing that failed: a job whose events are
# only these (dense stage marks beside each rank's device print) has no failure to look for
FACT_EVENTS = (
    "device_map",
    "loader_sizes",
    "world_size",
    "launch_command",
    "nccl_init",
    "nccl_version",
    "nccl_topology",
)


def _failures_of(job: Job) -> list[Finding]:
    if job.events.get_column("event").is_in(FACT_EVENTS).all():
        return []
    findings = _exceptions(job)
    # (an error no line ties to a rank, pinned on the worker torchrun saw fail, explains that
    # worker's death too: ROCm/ROCm#5259's `HW Exception ... GPU Hang`, then its SIGABRT)
    unattributed = _unattributed(job)
    explained = {rank for finding in findings + unattributed for rank in finding.ranks}
    return (
        findings
        + (deaths := _signal_deaths(job, explained))
        + (_unattributed_deaths(job) if not findings and not deaths and not explained else [])
        + unattributed
        + (_ranked_waits(job) if not findings and not deaths else [])
        + (_unattributed_cuts(job) if not findings and not deaths else [])
        + _cut_tracebacks(job, explained)
        + _cut_and_gone(job, explained)
        + (crashes := _cut_crashes(job, explained))
        + (exits := _exited(job) if not crashes else [])
        + _died(job, explained)
        + (_spawn_parent_cut(job) if not findings and not deaths and not exits else [])
        + (_launcher_summary_cut(job) if not findings and not deaths and not exits else [])
        + _aborted(job, explained)
        + _shut_down(job)
        + (_loader_worker_crashes(job) if not findings and not deaths else [])
    ) or (
        []
        if lost_a_node(job)
        else _cancelled_by_slurm(job) or _stopped_from_outside(job) or _interrupted(job)
    )


STOPPED_FROM_OUTSIDE_FIX = (
    "Find who sent the signal: the scheduler's record of the job (`sacct -j <job> -o "
    "JobID,State,Elapsed,MaxRSS` for a time limit or preemption, `kubectl describe pod` for an "
    "eviction), the host's logs (`journalctl`, `dmesg -T` for memory pressure) or the person "
    "who stopped it. If the job had stopped making progress before it, the hang's cause is in "
    "the lines before the signal."
)


# Signals a person sends from the terminal: Ctrl-C (SIGINT), Ctrl-\ (SIGQUIT)
BY_A_PERSON = {
    "SIGINT": "Ctrl-C",
    "SIGQUIT": "Ctrl-\\",
}
BY_A_PERSON_FIX = (
    "Nothing failed in the job: a person stopped it from its terminal. If it was stopped "
    "because it had stopped making progress, the hang's cause is in the lines before the signal."
)
# The terminal or SSH session the launcher ran in closing under it: nobody chose to stop the
# job, it went with the session (jingyaogong/minimind#462 an hour into training,
# zai-org/ChatGLM2-6B#238)
SESSION_CLOSED = "SIGHUP"
SESSION_CLOSED_FIX = (
    "Nothing failed in the job itself: the terminal or SSH session the launcher ran in closed, "
    "and the job went with it. Start it where a closed session cannot reach it: through the "
    "scheduler (`sbatch`), or under `nohup ... &`, `tmux` or `screen`."
)


def _launcher_signals(job: Job) -> pl.DataFrame:
    """The launcher's word that it was sent a signal: its own (`Received Signals.SIGHUP death
    signal`), else its stops of every worker with a signal a terminal sends. torchrun stops its
    workers with SIGTERM when one of them fails and with the signal it received when it was
    sent one (pytorch/pytorch#67538: `Sending process 102241 closing signal SIGHUP`)."""
    said = job.events.filter(pl.col("event") == "launcher_signalled")
    if not said.is_empty():
        return said.sort("file", "line")
    return job.events.filter(
        (pl.col("event") == "worker_sigterm")
        & pl.col("signal").is_in([*BY_A_PERSON, SESSION_CLOSED])
    ).sort("file", "line")


TIME_LIMIT_FIX = (
    "If the run was still making progress when it was cancelled (its last steps at the usual "
    "pace), it only ran out of time: give it more (`#SBATCH --time`), or resume it from its "
    "last checkpoint, saving checkpoints often enough to lose little. If it had stopped making "
    "progress well before, the hang's cause is in the lines before the cancellation."
)


PREEMPTION_FIX = (
    "Nothing failed in the job: the scheduler gave its nodes to another job. Make the run "
    "resumable (checkpoints often enough to lose little, `#SBATCH --requeue` with a resume from "
    "the last checkpoint on start), or run it where it is not preempted (another partition or "
    "QOS). If it had stopped making progress well before, the hang's cause is in the lines "
    "before the cancellation."
)


REQUEUE_FIX = (
    "Nothing failed in the job: SLURM put it back in the queue (a preemption, `scontrol "
    "requeue`, or a wrapper such as submitit requeuing it on the signal sent before the time "
    "limit, `--signal=USR2@120`). Make sure the next run resumes from the last checkpoint, saved "
    "often enough to lose little. If it had stopped making progress well before, the hang's "
    "cause is in the lines before the cancellation."
)


def _cancelled_by_slurm(job: Job) -> list[Finding]:
    """SLURM cancelled the step, no rank having failed before it: at the job's time limit
    (bigscience-workshop/bigscience's meg_gpt2 n64 benchmark: `*** STEP 1809655.0 ON r6i4n3
    CANCELLED AT 2021-05-24T09:50:34 DUE TO TIME LIMIT ***` after healthy iterations), for a
    preemption, or with no reason of SLURM's own, which is `scancel` by a user, an administrator
    or a workflow (the same benchmark's n8 run). The run was ended from outside, not broken;
    what it was doing until then tells a slow run from a hung one. A node failure is
    `peer_lost`'s."""
    rows = job.events.filter(
        (pl.col("event") == "step_cancelled")
        & (pl.col("exc_message").is_null() | (pl.col("exc_message") != DUE_TO_NODE_FAILURE))
    ).sort("file", "line")
    if rows.is_empty():
        return []
    reasons = rows.get_column("exc_message")
    for reason in (DUE_TO_TIME_LIMIT, DUE_TO_PREEMPTION, None):
        chosen = rows.filter(reasons.is_null() if reason is None else reasons == reason)
        if not chosen.is_empty():
            break
    else:
        reason, chosen = reasons.item(0), rows
    if reason != DUE_TO_TIME_LIMIT and _srun_told_of_tasks(job, chosen):
        return []  # srun's word on its tasks (an exit, an OOM kill) says what ended the step
    if reason == DUE_TO_TIME_LIMIT:
        summary = (
            "SLURM cancelled the job step at its time limit; no rank had failed before it: the "
            "run was ended by its allocation running out, not by an error of its own."
        )
        fix = TIME_LIMIT_FIX
    elif reason == DUE_TO_PREEMPTION:
        summary = (
            "SLURM preempted the job step (another job took its nodes); no rank had failed "
            "before it: the run was ended from outside, not by an error of its own."
        )
        fix = PREEMPTION_FIX
    elif reason == DUE_TO_REQUEUE:
        summary = (
            "SLURM requeued the job: it cancelled the step to run the job again later; no rank "
            "had failed before it: the run was ended from outside, not by an error of its own."
        )
        fix = REQUEUE_FIX
    elif reason is None:
        summary = (
            "SLURM cancelled the job step and gave no reason of its own (it names the ones it "
            "has: a limit reached, a preemption, a node failure): `scancel` by a user, an "
            "administrator or a workflow; no rank had failed before it."
        )
        fix = STOPPED_FROM_OUTSIDE_FIX
    else:
        summary = (
            f"SLURM cancelled the job step ({reason.lower()}); no rank had failed before it: "
            "the run was ended from outside, not by an error of its own."
        )
        fix = STOPPED_FROM_OUTSIDE_FIX
    return [
        _from_rows(
            chosen.head(1),
            severity="error",
            part="consequence",
            summary=summary,
            fix=fix,
            ranks=[],
            blames_nobody=True,
            confidence="low",
            details={
                "exception": "the time limit"
                if reason == DUE_TO_TIME_LIMIT
                else "SLURM's cancellation",
                "from_outside": True,
                "time_limit": reason == DUE_TO_TIME_LIMIT,
                "cancelled": (reason or "").lower(),
            },
        )
    ]


def _srun_told_of_tasks(job: Job, cancelled: pl.DataFrame) -> bool:
    """Whether srun reported its tasks' end (an exit, an OOM kill, a lost node) other than as
    the teardown of the cancellation (`above_a_cancellation`)."""
    told = job.events.filter(pl.col("event").is_in(["task_exit", "host_oom", "node_failure"]))
    return not above_a_cancellation(told, cancelled).is_empty()


def _stopped_from_outside(job: Job) -> list[Finding]:
    """The launcher itself received a signal and shut its workers down, no worker having
    failed before it (modelscope/ms-swift#8193: torchrun's `Received Signals.SIGTERM death
    signal` as the host ran out of memory while saving): the job was ended from outside. A
    terminal's signal (the session closing, Ctrl-C) is no failure of the job's at all: a
    warning, so that the verdict says none (jingyaogong/minimind#462: SIGHUP)."""
    rows = _launcher_signals(job)
    if rows.is_empty():
        return []
    signal = rows.item(0, "signal")
    by_a_person = signal in BY_A_PERSON
    if signal == SESSION_CLOSED:
        summary = (
            "The launcher received SIGHUP (the terminal or SSH session it ran in closed) and "
            "shut its workers down; no worker had failed before it: the job ended with the "
            "session, by no error of its own."
        )
    elif by_a_person:
        summary = (
            f"The launcher received {signal} ({BY_A_PERSON[signal]}) and shut its workers down; "
            "no worker had failed before it: it was stopped from its terminal, by no error of "
            "its own."
        )
    else:
        # torchrun's agent names itself in its words; the older launchers print a bare line
        older = rows.select(pl.col("text").str.contains(OLD_LAUNCHER_SIGNAL).any()).item()
        launcher = "The launcher" if older else "torchrun's agent"
        summary = (
            f"{launcher} received "
            f"{signal} from outside the job and shut its workers down; no worker had failed "
            "before it: whoever sent the signal ended the job (the scheduler's time limit or "
            "preemption, a user, the host)."
        )
    return [
        _from_rows(
            rows,
            severity="warning" if by_a_person else "error",
            part="consequence",
            summary=summary,
            fix=(
                BY_A_PERSON_FIX
                if by_a_person
                else SESSION_CLOSED_FIX
                if signal == SESSION_CLOSED
                else STOPPED_FROM_OUTSIDE_FIX
            ),
            ranks=[],
            blames_nobody=True,
            confidence="low",
            details={
                "exception": f"{signal} to the launcher",
                "signal": signal,
                "from_outside": True,
            },
        )
    ]


def _interrupted(job: Job) -> list[Finding]:
    """Ranks whose only exception is a `KeyboardInterrupt`, with no launcher's word of a signal:
    Ctrl-C in the terminal (or SIGINT) reached the workers and stopped the run wherever each
    stood, by no error of the job's own: a warning, so that the verdict says none
    (VirenLoka/GlueFormer: every rank interrupted at a different place in its forward pass,
    rank 0's loader then reset by its workers)."""
    thrown = _thrown(job).filter(pl.col("exc_type").is_not_null() & ~_launchers_word())
    interrupted = pl.col("exc_type").str.ends_with("KeyboardInterrupt")
    rows = thrown.filter(interrupted)
    # what an interrupted process's helpers raise as it goes (a DataLoader worker's pipe
    # reset) follows from it
    others = thrown.filter(~interrupted & ~_a_consequence(exception_text()))
    if rows.is_empty() or not others.is_empty():
        return []
    ranks = sorted(rows.get_column("rank").drop_nulls().unique().to_list())
    who = capitalized(rank_list(ranks)) if ranks else "The processes"
    return [
        _from_rows(
            rows,
            severity="warning",
            part="consequence",
            summary=(
                f"{who} stopped on a KeyboardInterrupt ({BY_A_PERSON['SIGINT']} or SIGINT), no "
                "rank having failed before it: the run was stopped from its terminal, by no error "
                "of its own."
            ),
            fix=BY_A_PERSON_FIX,
            ranks=ranks,
            blames_nobody=True,
            confidence="low",
            details={"exception": "KeyboardInterrupt", "signal": "SIGINT", "from_outside": True},
        )
    ]


# torch.multiprocessing.spawn's parent in its join: it raises only when a worker failed
SPAWN_JOIN_FRAME = r"torch/multiprocessing/spawn\.py:\d+ in (?:join|start_processes|spawn)$"


def _spawn_parent_cut(job: Job) -> list[Finding]:
    """The spawning parent's traceback, stopped in `join` and cut before its exception line
    (k2-fsa/icefall#1463): a worker failed, which one and why is not in the logs; a failure all
    the same, blaming nobody. Warnings that the training's numbers diverged before it (`Grad
    scale is small: 1.29e-26` on every rank) say why."""
    cut = job.events.filter(
        (pl.col("event") == "exception")
        & pl.col("exc_type").is_null()
        & pl.col("frame").str.contains(SPAWN_JOIN_FRAME).fill_null(False)
    )
    if cut.is_empty():
        return []
    warned = job.events.filter(
        pl.col("severity").is_in(["warning", "error"])
        & pl.col("message").str.contains(NUMERICS).fill_null(False)
    ).sort("file", "line")
    # a worker's own failure printed above it (pytorch/pytorch#91378: gloo's abort of a
    # worker, `op.preamble.length <= op.nbytes`) is why the parent stopped
    worker_errors = job.events.filter(
        (pl.col("severity") == "error") & (pl.col("event") != "exception")
    )
    echo = not worker_errors.is_empty() and warned.is_empty()
    summary = (
        "A worker of torch.multiprocessing.spawn failed: its parent's traceback stops in its "
        "wait for the workers, cut before the exception that says which worker and why."
    )
    if not warned.is_empty():
        message = str(warned.item(0, "message"))
        found = re.search(NUMERICS, message)
        said = clipped(message[found.start() :] if found else message, 120)
        summary += f" The training's numbers had diverged before it (`{said}`)."
    if echo:
        summary += " A worker's own error is printed above it."
    found = _unblamed(
        pl.concat([warned.head(4), cut], how="diagonal_relaxed"),
        part="consequence" if echo else "explanation",
        summary=summary,
        fix=NUMERICS_FIX if not warned.is_empty() else SPAWN_CUT_FIX,
        ranks=[],
        details={"exception": None, "spawn_cut": True, "numerics": not warned.is_empty()},
    )
    # the parent's echo of a failure the logs show stands in for nothing
    return [replace(found, severity="warning") if echo else found]


def _launcher_summary_cut(job: Job) -> list[Finding]:
    """torchrun's own ChildFailedError, its summary cut before the failures it lists, and no
    worker's error in the logs (KellerJordan/modded-nanogpt#15: every rank set up its NCCL
    communicator, then `local_rank %s FAILED with no error file` and the ChildFailedError):
    a worker failed, which one and why the logs do not say; a failure all the same, never "no
    failure found"."""
    events = job.events
    launcher = (pl.col("event") == "exception") & (_child_failed_error() | _service_report())
    reports = events.filter(launcher)
    listed = events.filter(pl.col("event").is_in(EXIT_REPORTS))
    if reports.is_empty() or not listed.is_empty():
        return []
    others = events.filter(
        (pl.col("severity") == "error") & ~launcher & (pl.col("family") != "elastic")
    )
    if not others.is_empty():
        return []
    service = reports.filter(_service_report())
    if not service.is_empty():
        said = clipped(str(service.item(0, "exc_message") or ""))
        return [
            _unblamed(
                reports,
                part="explanation",
                summary=(
                    f"The training service reports that the job failed (`{said}`); no "
                    "process's own error is in these logs."
                ),
                fix=SERVICE_FIX,
                ranks=[],
                details={"exception": None, "service_report": True},
            )
        ]
    return [
        _unblamed(
            reports,
            part="explanation",
            summary=(
                "torchrun reports that a worker failed (ChildFailedError), and these logs end "
                "before its summary says which rank and how; no worker's own error is in them."
            ),
            fix=LAUNCHER_CUT_FIX,
            ranks=[],
            details={"exception": None, "summary_cut": True},
        )
    ]


SERVICE_FIX = (
    "The job's own log holds the error: open the training job's log stream (SageMaker: "
    "CloudWatch, `/aws/sagemaker/TrainingJobs`, one stream per host, `algo-1` ...) and read "
    "the first traceback there; the service's message quotes only its last lines."
)


# torchrun's agent raising it, the traceback cut before its exception line
# (deepmodeling/deepmd-kit#4594: `raise ChildFailedError(` under this frame, the paste ends)
LAUNCH_AGENT_FRAME = r"torch/distributed/launcher/api\.py:\d+ in launch_agent$"


def _child_failed_error() -> pl.Expr:
    """torchrun's own exception that a worker failed: the launcher's word, no worker's."""
    raising = pl.col("exc_type").is_null() & pl.col("frame").str.contains(LAUNCH_AGENT_FRAME)
    return child_failed_error() | raising.fill_null(False)


LAUNCHER_CUT_FIX = (
    "Read torchrun's whole summary (under `Failures:` and `Root Cause`: the rank, exit code "
    "and error file of each failed worker) and each worker's own output (`torchrun --tee 3` or "
    "`--log-dir`); decorate the entry point with `@record` "
    "(torch.distributed.elastic.multiprocessing.errors) so the summary carries the worker's "
    "traceback."
)
SPAWN_CUT_FIX = (
    "Each worker prints its own traceback before the parent's: attach the whole console (or "
    "each worker's stderr) to read which worker failed and why."
)


SPAWN_RELAYED_FIX = (
    "The worker's own traceback follows the parent's `-- Process N terminated with the "
    "following error:` line (and its own output shows it first): attach the whole console to "
    "read what failed in it."
)


ABORTED_FIX = (
    "{who} was going down before the others: read {its} own output before the abort for the "
    "error that ended it (torchrun `--tee 3`, or the rank's stderr). Its process group's abort "
    "then hung because the other ranks were still inside collectives with it."
)


def _aborted(job: Job, explained: set[int]) -> list[Finding]:
    """A rank whose process group abort hung (`Future for ProcessGroup abort timed out`), when
    no rank reported a timeout or error of its own before it: the rank was going down first,
    most often after an error it printed elsewhere (karpathy/nanochat#554: rank 6, after its
    eval-bundle download failed on DNS, while the others waited in their collectives). Low
    confidence: the error itself is not in these logs."""
    events = job.events
    aborts = events.filter(
        (pl.col("event") == "abort_timeout")
        & pl.col("rank").is_not_null()
        & ~pl.col("rank").is_in(list(explained))
    ).sort("file", "line")
    if aborts.is_empty():
        return []
    first = aborts.row(0, named=True)
    earlier_failures = events.filter(
        (pl.col("severity") == "error")
        & (pl.col("event") != "abort_timeout")
        & (pl.col("family") != "nccl")
        & (pl.col("file") == first["file"])
        & (pl.col("line") < first["line"])
    )
    timeouts = events.filter(pl.col("event").is_in(["collective_timeout", "transport_timeout"]))
    if not earlier_failures.is_empty() or not timeouts.is_empty():
        return []
    ranks = sorted(aborts.get_column("rank").unique().to_list())
    who = rank_list(ranks)
    waited = first["timeout_ms"]
    after = f" after {duration(waited / 1000)}" if waited else ""
    return [
        placed_finding(
            job,
            aborts,
            kind="rank_exception",
            severity="error",
            part="explanation",
            summary=(
                f"{who.capitalize()} aborted {'its' if len(ranks) == 1 else 'their'} process "
                f"group and the abort timed out{after}, with no timeout reported before it: "
                f"{who} was going down first, most likely after an error of "
                f"{'its' if len(ranks) == 1 else 'their'} own that these logs do not hold."
            ),
            fix=ABORTED_FIX.format(who=who.capitalize(), its="its" if len(ranks) == 1 else "their"),
            ranks=ranks,
            confidence="low",
            details={"aborted": True},
        )
    ]


# Innermost frames of a process that was waiting, not failing: a cut traceback ending in one
# of them is a hang's interruption (fairseq#708's Ctrl-C in `waitpid`), not a crash.
WAITING_FRAME = (
    r"\bin (?:\w*wait\w*|poll|select|sleep|acquire|join|recv\w*|read\w*|get|result|"
    r"synchronize|run_backward|_engine_run_backward|__next__|_next_data|_get_data)$"
)


# A frame of the standard library (`<frozen os>:225 in makedirs`, `.../lib/python3.11/json/
# decoder.py:355 in raw_decode`), not of an installed package or the job's own code.
STDLIB_FRAME = r"^(?:<frozen [\w.]+>|\S*/lib/python3\.\d+/(?:[\w.]+/)*[\w.]+\.py)"
# torch.distributed's own wrappers of its calls (`c10d_logger.py:79 in wrapper` around
# `dist.barrier()`): a stack that stops there was inside a call that waits for the others
IN_DISTRIBUTED_CALL = r"torch/distributed/(?:c10d_logger|distributed_c10d)\.py:"
INSTALLED = r"/(?:site|dist)-packages/"
# the launcher's own code (torch.distributed.launch, torchrun, the elastic agent): a stack that
# ends there is the launcher's, not a worker's (JingyunLiang/VRT#47: `torch/distributed/
# launch.py` cut after the agent's `Received 1 death signal`), or torchrun's console script itself
# (QwenAudio/CosyVoice#241: `/usr/local/bin/torchrun:8 in <module>`, a paste cut there)
LAUNCHER_FRAME = (
    r"torch/distributed/(?:launch|run)\.py:|torch/distributed/(?:elastic|launcher)/"
    r"|(?:^|/)torchrun:\d+ in <module>$"
)


def _cut_crashes(job: Job, explained: set[int]) -> list[Finding]:
    """Tracebacks cut before their exception line whose innermost frame is a standard-library
    call that neither waits nor communicates, on ranks nothing else explains. A paste cut
    mid-stack stops in the job's or a package's frames; the stack reaches the standard library
    only at its deepest, where the error was raised, so the rank most likely failed there
    (NVIDIA-NeMo/Automodel#3686: rank 8's frames down to `os.makedirs` in its checkpoint save,
    its `FileExistsError` line not in the paste). Low confidence: the exception is missing.

    In logs that hold no other error, a cut traceback anywhere but in a wait is the one failure
    they show, wherever the paste stops (roboflow/rf-detr#316: rank 1's stack down to its
    `torch.load` of a checkpoint rank 0 had not yet written): never "no failure". Beside another
    rank's whole exception it is not (tdrussell/diffusion-pipe#243: rank 1's RuntimeError, then
    rank 0's stack cut at its first frame is no rival to it)."""
    frame = pl.col("frame")
    # a rank torchrun reports as exited with an error failed, wherever its paste stops
    exited = _exited_with_error(job)
    alone = _no_error_but_cut_tracebacks(job)
    deepest = (
        (frame.str.contains(STDLIB_FRAME).fill_null(False) & ~frame.str.contains(INSTALLED))
        | pl.col("rank").is_in(exited)
        | pl.lit(alone)
    )
    elsewhere = (
        ~_in_a_collective(frame) & ~_calling_a_collective() & ~frame.str.contains(WAITING_FRAME)
    )
    # a header alone (`[rank1]: Traceback (most recent call last):` ending the paste) shows
    # no call it could be waiting in: the one failure logs with no other error show
    # (Lightning-AI/litgpt#2020: rank 1's traceback cut at its header while verifying settings)
    headed_only = frame.is_null() & pl.lit(alone)
    cut = _cut_unexplained(job, explained).filter(
        headed_only | (frame.is_not_null() & deepest & elsewhere)
    )
    if cut.is_empty():
        return []
    ranks = sorted(cut.get_column("rank").unique().to_list())
    frames = cut.get_column("frame").drop_nulls()
    frame = frames.item(0) if not frames.is_empty() else None
    who = rank_list(ranks)
    confirmed = set(ranks) <= set(exited)
    where = (
        f"cut before its exception line, innermost in {frame}"
        if frame is not None
        else "the logs cut before its first frame"
    )
    return [
        placed_finding(
            job,
            cut,
            kind="rank_exception",
            severity="error",
            part="explanation",
            summary=(
                f"{who.capitalize()} ended in a traceback {where}: most likely it failed "
                "there, and the others were left waiting for it."
            ),
            fix=(
                f"The exception line is missing from these logs: attach the whole log of {who} "
                "(stderr) to read the error, then fix what failed in that call (its innermost "
                "frame is the last call the rank made)."
                if frame is not None
                else f"The traceback is cut in these logs: attach the whole log of {who} "
                "(stderr) to read the error and where it was raised."
            ),
            ranks=ranks,
            confidence="medium" if confirmed else "low",
            details={"frame": frame, "cut": True, "exited_with_error": confirmed},
        )
    ]


def _unattributed_cuts(job: Job) -> list[Finding]:
    """Tracebacks cut before their exception line, none tied to a rank, in logs that hold no
    other error (Azure/azureml-assets#302: two hosts' DeepSpeed start-up stacks behind `10.0.0.6:`
    and `10.0.0.7:` prefixes, cut before `RuntimeError: CUDA error: no kernel image is
    available`): the processes failed where their stacks end, which ranks they were the lines
    do not say. A failure all the same, never "no failure found", blaming nobody; a stack cut
    inside a collective or a wait is a process waiting for the others and says nothing."""
    # stacks printed as the launcher stops on a signal sent from outside are no failure
    if not _launcher_signals(job).is_empty():
        return []
    openers = _logger_openers(job)
    if not _no_error_but_cut_tracebacks(job, openers):
        return []
    thrown = _thrown(job)
    if thrown.is_empty() or thrown.get_column("rank").is_not_null().any():
        return []
    frame = pl.col("frame")
    # a bare header a host's output ends in (EleutherAI/gpt-neox#919: `ML-02: Traceback (most
    # recent call last):` after node ML-01's progress), or one an error record opened (Ray
    # Tune's `ERROR tune_controller.py:1331 -- Trial task failed for trial ...`, the stack
    # cut: ray-project/ray#49260): a process began failing there
    opened = openers.select("file", pl.col("opens").alias("line"))
    # a stack an error record opened was an exception's, even when it stops in a wait
    # (facebookresearch/detectron2#3953: `ERROR [...] d2.engine.train_loop]: Exception during
    # training:`, the stack cut in the DataLoader's `_get_data`)
    by_record = opened.with_columns(pl.lit(True).alias("_by_record"))
    cut = (
        thrown.join(by_record, on=["file", "line"], how="left")
        .filter(
            pl.col("exc_type").is_null()
            & frame.is_not_null()
            & ~_in_a_collective(frame)
            & (~frame.str.contains(WAITING_FRAME) | pl.col("_by_record").fill_null(False))
            & ~frame.str.contains(LAUNCHER_FRAME)
            # entering main_process_first: waiting for the main process (main_first.py)
            & ~pl.col("extra").fill_null("").str.contains(IN_MAIN_FIRST, literal=True)
        )
        .drop("_by_record")
        .sort("file", "line")
    )
    bare = thrown.filter(pl.col("exc_type").is_null() & frame.is_null())
    bare = pl.concat(
        [
            bare.filter(pl.col("host").is_not_null()),
            bare.filter(pl.col("host").is_null()).join(opened, on=["file", "line"], how="semi"),
        ]
    ).sort("file", "line")
    if cut.is_empty() and bare.is_empty():
        return []
    shown = cut if not cut.is_empty() else bare
    hosts = shown.get_column("host").drop_nulls().unique(maintain_order=True).to_list()
    on_hosts = f" on host{'s' if len(hosts) > 1 else ''} {', '.join(hosts)}" if hosts else ""
    several = shown.height > 1
    who = f"{shown.height} processes" if several else "A process"
    if cut.is_empty():
        summary = (
            f"{who}{on_hosts} began {'tracebacks' if several else 'a traceback'} the logs cut "
            f"before {'their' if several else 'its'} first frame: most likely "
            f"{'they' if several else 'it'} failed there, of an error the lines do not show, "
            f"nor which rank{'s' if several else ''}."
        )
        cut = bare
    else:
        summary = (
            f"{who}{on_hosts} ended in {'tracebacks' if several else 'a traceback'} cut before "
            f"the exception line, {'the first ' if several else ''}innermost in "
            f"{cut.item(0, 'frame')}: most likely {'they' if several else 'it'} failed there; "
            f"the lines do not say which rank{'s' if several else ''}."
        )
    return [
        _unblamed(
            cut,
            part="explanation",
            summary=summary,
            fix=(
                "The exception line is missing from these logs: attach each process's whole "
                "output (stderr), with its rank (torchrun `--tee 3`, or a `[rank N]` prefix), "
                "to read the error, then fix what failed in that call."
            ),
            ranks=[],
            details={
                "frame": cut.item(0, "frame"),
                "cut": True,
                "hosts": hosts,
                "processes": cut.height,
            },
        )
    ]


def _no_error_but_cut_tracebacks(job: Job, openers: pl.DataFrame | None = None) -> bool:
    """Whether the logs hold no error but tracebacks cut before their exception line (no
    timeout, NCCL error, exit report, and no exception that says what it was: beside one, a
    stack cut high in the job's code is no failure of its own: see `_cut_crashes`).
    `openers`: `_logger_openers(job)`, where the caller has it already."""
    errors = job.events.filter(pl.col("severity") == "error")
    others = errors.filter((pl.col("event") != "exception") | pl.col("exc_type").is_not_null())
    if openers is None:
        openers = _logger_openers(job)
    opening = openers.select("file", "line", "event")
    return others.join(opening, on=["file", "line", "event"], how="anti").is_empty()


def _logger_openers(job: Job) -> pl.DataFrame:
    """`file, line, event, opens`: error records right before a traceback cut before its
    exception line, and that traceback's first line (`opens`): a logger's record that opened it
    (`logger.exception("... failed")` then the stack, vLLM's `Invocation of collective_rpc
    method failed`: OpenRLHF/OpenRLHF#1193), that traceback's first line and no other error."""
    events = job.events
    starts = events.filter((pl.col("event") == "exception") & pl.col("exc_type").is_null())
    records = events.filter((pl.col("event") == "log_error") & (pl.col("severity") == "error"))
    if starts.is_empty() or records.is_empty():
        return records.select("file", "line", "event", pl.col("line").alias("opens")).clear()
    opens = pl.col("line").alias("opens")
    before = starts.select("file", (pl.col("line") - 1).alias("line"), opens)
    # ... or one blank line before it: TGI's launcher dumps a shard's stderr under its record
    # (huggingface/text-generation-inference#1644: `ERROR shard-manager: ... Shard complete
    # standard error output:`, an empty line, then the traceback)
    gap = read_lines_at(job.inventory, before.select("file", pl.col("line").cast(pl.UInt32)))
    # (blank once framed: a pod's kubectl --prefix or a node's label stands before it too)
    blank = (
        frame_lines(gap)
        .filter(pl.col("message").str.strip_chars() == "")
        .join(before.with_columns(pl.col("line").cast(pl.UInt32)), on=["file", "line"])
        .select("file", (pl.col("line") - 1).alias("line"), "opens")
    )
    # ... or the record's own line, the header glued to its end (alibaba/ROLL#193: `[ERROR]
    # [actor_train-1 1 / 8][PID 18175] Traceback (most recent call last):`)
    same = starts.select("file", "line", opens).cast(before.schema)
    openers = pl.concat([before, blank.cast(before.schema), same])
    return (
        records.join(openers, on=["file", "line"])
        .select("file", "line", "event", "opens")
        .unique(maintain_order=True)
    )


def _shared_by_all(job: Job, ranks: list[int]) -> bool:
    """Whether one failure struck every rank the logs show, two at least and rank 0 among
    them: each rank seen shows it or exited with an error code and nothing else (a traceback
    the paste left out). No rank then left the others' path: the cause is one they share (the
    code, its inputs, the build, the hardware), not one rank's departure (build_nanogpt's
    torch.compile error on every rank, ROCm/ROCm#5788's SIGSEGV on both). Without rank 0 the
    logs are a slice of the job (diffusion-pipe#397 shows ranks 18 and 22 alone)."""
    failed = set(ranks) | set(_exited_with_error(job)) | set(_began_a_traceback(job, ranks))
    return len(ranks) > 1 and 0 in failed and not set(job.ranks_seen) - failed


def _exited_with_error(job: Job) -> list[int]:
    """Ranks a launcher reports as exited with a non-zero code."""
    return _error_exits(job).get_column("rank").drop_nulls().unique().to_list()


def _began_a_traceback(job: Job, ranks: list[int]) -> list[int]:
    """Ranks whose traceback the paste cut before its exception line (`[rank6]: Traceback
    (most recent call last):` alone): they failed too, of what the paste does not show
    (meta-llama/llama-cookbook#540: ranks 2 and 3's ValueError, rank 6's cut traceback and
    local rank 0's exit code 1, every rank of one start-up error). Not a rank that went on
    with its work after `ranks` had failed and only then began a traceback: it outlived their
    failure (ChenRocks/UNITER#42: rank 0 logs its evaluation's results after ranks 1-3's
    KeyError, then a traceback the paste cuts)."""
    events = job.events
    cut = events.filter((pl.col("event") == "exception") & pl.col("exc_type").is_null())
    failed_first = (
        events.filter(
            (pl.col("event") == "exception")
            & pl.col("exc_type").is_not_null()
            & pl.col("rank").is_in(ranks)
        )
        .group_by("file")
        .agg(pl.col("line").min().alias("_failed_at"))
    )
    went_on = (
        events.filter(pl.col("severity") == "info")
        .select("file", "rank", pl.col("line").alias("_info_at"))
        .join(failed_first, on="file")
        .filter(pl.col("_info_at") > pl.col("_failed_at"))
    )
    outlived = (
        cut.select("file", "rank", "line")
        .join(went_on, on=["file", "rank"])
        .filter(pl.col("_info_at") < pl.col("line"))
        .get_column("rank")
        .unique()
        .to_list()
    )
    return (
        cut.filter(~pl.col("rank").is_in(outlived))
        .get_column("rank")
        .drop_nulls()
        .unique()
        .to_list()
    )


def _error_exits(job: Job) -> pl.DataFrame:
    """A launcher's reports (torchrun's, DeepSpeed's, torch.multiprocessing.spawn's, srun's) of
    workers that exited with an error, a local rank taken for the rank where the logs show a
    single node."""
    events = job.events
    spawned = events.filter(_spawn_exit()).with_columns(
        # (Int64: a Windows crash's code, 3221225477, is past Int32; a longer number is null)
        exception_text()
        .str.extract(SPAWN_EXIT_CODE, 1)
        .cast(pl.Int64, strict=False)
        .alias("exitcode")
    )
    reported = events.filter(pl.col("event").is_in(EXIT_REPORTS))
    return (
        pl.concat([reported, spawned, srun_error_exits(job)], how="vertical_relaxed")
        # (a code that stands for a fatal signal is that signal's death: `_signal_deaths`)
        .filter(
            ((pl.col("exitcode").fill_null(0) > 0) & exit_signal().is_null())
            | _code_cut()
            | _aborted_report()
            | _died_report()
        )
        .with_columns(
            pl.coalesce("rank", _local_is_global(job), _child_of_rank_zero(job)).alias("rank")
        )
    )


# Lightning's main process says its global rank as the group forms
LIGHTNING_MEMBER = "Initializing distributed: GLOBAL_RANK: "


def _child_of_rank_zero(job: Job) -> pl.Expr:
    """A child Lightning's launcher reports by its local rank, in a file whose only main
    process is global rank 0: that node's local ranks are the global ones (Nixtla/
    neuralforecast#1291: `Initializing distributed: GLOBAL_RANK: 0, MEMBER: 1/4`, then
    `[rank: 1] Child process with PID 23026 terminated with code 1`)."""
    members = job.events.filter(
        (pl.col("event") == "world_size")
        & pl.col("text").str.contains(LIGHTNING_MEMBER, literal=True).fill_null(False)
    )
    files = (
        members.group_by("file")
        .agg(pl.col("rank").drop_nulls().unique().alias("_ranks"))
        .filter(pl.col("_ranks").list.len() == 1)
        .filter(pl.col("_ranks").list.first() == 0)
        .get_column("file")
    )
    if files.is_empty():
        return pl.lit(None, dtype=pl.Int32)
    lightning = pl.col("extra").eq_missing(pl.lit(LIGHTNING_REPORT))
    return pl.when(lightning & pl.col("file").is_in(files.implode())).then(pl.col("local_rank"))


# torch.multiprocessing.spawn's parent, on a child that exited with a code and printed nothing
# the parent saw: `ProcessExitedException: process 0 terminated with exit code 1`; before torch
# 1.5 the parent raised a bare `Exception` in the same words (HRNet/HigherHRNet-Human-Pose-
# Estimation#47: `Exception: process 1 terminated with signal SIGKILL`)
SPAWN_PARENT = r"(?:ProcessExitedException|^Exception): process \d+ terminated with "
SPAWN_EXIT_CODE = SPAWN_PARENT + r"exit code (\d+)"
# ... or on a child a signal ended (a run here: `ProcessExitedException: process 1 terminated
# with signal SIGKILL`, the child killed with no word of its own): that child's death
SPAWN_SIGNAL = SPAWN_PARENT + r"signal (SIG[A-Z]+)"


def _spawn_exit() -> pl.Expr:
    """The spawning parent's report of a child's exit code (torch.multiprocessing.spawn's, or
    PyTorch's test harness's: parsers.process_exit): the launcher's word, no exception of the
    child's own."""
    return (pl.col("event") == "exception") & exception_text().str.contains(
        f"{SPAWN_EXIT_CODE}|{SPAWN_SIGNAL}|{HARNESS_EXIT}"
    ).fill_null(False)


def _launchers_word() -> pl.Expr:
    """An exception that only says a worker failed: torchrun's ChildFailedError, the spawning
    parent's report of a child's exit, a training service's report that the job failed."""
    return (
        _child_failed_error() | _spawn_exit() | _launch_exit() | _service_report() | _actor_died()
    )


# the frame the old launchers raise a worker's exit status from: torch.distributed.launch before
# torchrun, and torchelastic's copy of it
LAUNCH_FRAME = r"distributed/launch\.py:\d+ in (?:main|wrapper_fn)$"


def _launch_exit() -> pl.Expr:
    """The old launchers' report of a worker's exit status, raised as the command's
    `subprocess.CalledProcessError` (microsoft/frameworkcontroller's elastic example: `Command
    '['/opt/conda/bin/python', '-u', '/workspace/examples/imagenet/main.py', ...]' returned
    non-zero exit status 1.` after the worker's own `NCCL error: unhandled system error`); known
    by the frame it is raised from, or, where the paste kept the exception line alone, by the
    worker's `--local_rank=N` in the command (parsers/elastic.py reads that exit)."""
    command_of_a_worker = pl.col("exc_message").str.contains("^" + WORKER_COMMAND)
    return (
        pl.col("exc_type").str.ends_with("CalledProcessError")
        & (pl.col("frame").str.contains(LAUNCH_FRAME).fill_null(False) | command_of_a_worker)
    ).fill_null(False)


# Ray's exceptions that a worker process (an actor) died, raised in the driver that waited on it
ACTOR_DIED = r"\b(?:ActorDiedError|RayActorError|WorkerCrashedError|NodeDiedError)$"


def _actor_died() -> pl.Expr:
    """Ray's word, raised in the driver, that an actor or worker died unexpectedly
    (`ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task.`,
    hkust-nlp/simpleRL-reason#25): the death is the worker's, told in Ray's report below it.
    Not an actor that died of an error raised in its creation task: that error is the cause."""
    unexpectedly = pl.col("exc_message").str.contains("died unexpectedly", literal=True)
    return (pl.col("exc_type").str.contains(ACTOR_DIED) & unexpectedly).fill_null(False)


def _service_report() -> pl.Expr:
    """The SageMaker SDK's exception for a training job that ended Failed, quoting the job's
    error (`UnexpectedStatusException: Error for Training job ...: Failed. Reason:
    AlgorithmError: ...`, aws/amazon-sagemaker-examples#3444): the service's word, raised in
    the notebook that launched the job, no process of the job's own."""
    return pl.col("exc_type").str.ends_with("UnexpectedStatusException").fill_null(False)


AGENT_LOGGER = "torch.distributed.elastic."


def _gave_up_after(reported: pl.DataFrame) -> pl.Expr:
    """A wait that timed out (a watchdog's timeout) stamped after the first reported exit: the
    exited worker is what it waited for, no failure of the waiting rank's own (pytorch/pytorch
    #134006: torchrun's summary has rank 4 exit at 11:37:36; rank 0's subgroup all-gather
    times out at 11:47:24, its 600 s after rank 4 left)."""
    exited_at = reported.get_column("timestamp").drop_nulls().min()
    if exited_at is None:
        return pl.lit(False)
    return (
        pl.col("event").is_in(TIMEOUT_EVENTS) & (pl.col("timestamp") > pl.lit(exited_at))
    ).fill_null(False)


def _srun_teardown(job: Job) -> pl.DataFrame:
    """srun's word on its tasks below SLURM's cancellation of the step (`tasks 3,7: Killed`):
    the step's teardown after a task's failure, no failure of their own (facebookresearch/
    deit#102: task 5 exited with code 1, then the step was cancelled and every other task
    killed)."""
    tasks = job.events.filter(pl.col("event") == "task_exit")
    cancelled = job.events.filter(pl.col("event") == "step_cancelled")
    if tasks.is_empty() or cancelled.is_empty():
        return tasks.select("file", "line").clear()  # (no cancellation: no teardown)
    above = above_a_cancellation(tasks, cancelled).select("file", "line")
    return tasks.select("file", "line").join(above, on=["file", "line"], how="anti")


def _exited(job: Job) -> list[Finding]:
    """A launcher's report that a worker exited with an error code (torchrun's `failed (exitcode: 1)
    local_rank: 0 (pid: 876053)`), in logs that hold no error of any rank's own: the worker's
    failure is all they say (pytorch#147064: it failed because the other node's agent left). A
    finding all the same, with low confidence and no blame."""
    events = job.events
    reported = _error_exits(job).filter(~_died_report())
    if reported.is_empty() or exited_quietly(job):
        return []  # (an exit its own output shows had no error is peer_lost's departure)
    # (the exit's own line may be an error line of the launcher's logger too: DeepSpeed's
    # `[ERROR] [launch.py:434:sigkill_handler] [...] exits with return code = 1`)
    # (nor are the agent's other error records: `ERROR:torch.distributed.elastic.agent.server.
    # local_elastic_agent:[default] Worker group failed`, MIC-DKFZ/nnUNet#856)
    others = (
        events.filter(
            (pl.col("severity") == "error")
            & (pl.col("family") != "elastic")
            & (pl.col("family") != "traceback")
            & ~about_a_peer()
        )
        .join(reported.select("file", "line"), on=["file", "line"], how="anti")
        .join(killed_by_lightning(job), on=["file", "line"], how="anti")
        .filter(~pl.col("text").fill_null("").str.contains(AGENT_LOGGER, literal=True))
    )
    others = others.filter(~_gave_up_after(reported)).join(
        _srun_teardown(job), on=["file", "line"], how="anti"
    )
    if not others.is_empty():
        return []
    # torchrun's own ChildFailedError, spawn's ProcessExitedException only say a worker failed;
    # Horovod's shut-down says another rank did
    launcher_own = _launchers_word()
    shut_down = exception_text().str.contains(HOROVOD_SHUT_DOWN, literal=True).fill_null(False)
    if not events.filter(
        pl.col("event").is_in(["exception", "cpp_terminate"])
        & pl.col("exc_type").is_not_null()
        & ~launcher_own
        & ~shut_down
        & ~about_a_peer()
    ).is_empty():
        return []
    exits = reported.sort("file", "line")
    ranks = sorted(exits.get_column("rank").drop_nulls().unique().to_list())
    codes = exits.get_column("exitcode").drop_nulls()
    if exits.filter(_aborted_report()).height == exits.height:
        return [_aborted_trainers(exits, ranks) if ranks else _unnamed_worker_ended(exits)]
    if codes.is_empty():
        return [_exit_code_cut(exits, ranks)]
    code = int(codes.item(0))
    if (replicas := _replicas(exits)) is not None:
        return [replicas]
    said_error = exits.get_column("extra").str.contains('"error_exit":true', literal=True).any()
    if not _failure_code(code) and not said_error:
        return [_chosen_exit(exits, ranks, code)]
    # (srun's tasks, one row each, are as many workers even where no rank is known)
    workers = max(len(ranks), exits.filter(pl.col("event") == "task_exit").height, 1)
    who = (
        rank_list(ranks).capitalize()
        if ranks
        else "A worker"
        if workers == 1
        else f"{workers} workers"
    )
    said = "the error it printed is" if workers < 2 else "the errors they printed are"
    first = exits.filter(_first_to_exit())
    if first.height == 1 and first.item(0, "rank") is not None:
        return [_first_exit(first)]
    if (earliest := _earliest_by_clock(exits)) is not None:
        return [_first_exit(*earliest)]
    if _failed_alone(job, exits):
        return [_first_exit(exits, alone=True)]
    if (before := _failed_before_the_stop(job)) is not None:
        return [before]
    if not _waits_only(job) and (part := _part_of_their_node(exits, ranks, code)) is not None:
        return [part]
    # an exit code without its error: the worker may have failed on its own, or on a peer's
    # failure (a closed rendezvous, an NCCL error): it is not blamed; where the only tracebacks
    # are waits for the others, the exit most likely ended one of them (a consequence)
    waited = _waits_only(job)
    if not waited and (listed := listed_failure(job)) is not None:
        # torchrun's summary lists one failed worker and no other (`<NO_OTHER_FAILURES>`)
        # (allenai/OLMo#706: rank 5, exit code 1; MIC-DKFZ/nnUNet#856: rank 2)
        said_alone = (
            f"Rank {listed.rank} exited with code {listed.code}, the only failure torchrun's "
            "summary lists (its root cause)"
        )
        return [_lone_failure(listed.stopped, listed.rank, listed.code, said_alone)]
    if not waited and said_error and len(ranks) == 1 and exits.height == 1:
        # PyTorch's test harness lists one process as exited with an error, its test raised
        # there and nowhere else (pytorch/pytorch#38395: `Processes 1 exited with error code 10`)
        said_alone = (
            f"Rank {ranks[0]} alone exited with an error (code {code}, the test harness's report)"
        )
        return [_lone_failure(exits, ranks[0], code, said_alone)]
    crash = windows_crash(code)
    if not waited and crash and len(ranks) == 1 and exits.height == 1:
        # a native crash is the process's own failure, as a fatal signal is on Linux
        return [_windows_crashed(exits, ranks[0], code, crash)]
    ended_a_wait = (
        " The tracebacks in these logs were waiting for other ranks: most likely the exit "
        "ended such a wait."
        if waited
        else ""
    )
    return [
        _unblamed(
            exits,
            part="consequence" if waited else "explanation",
            summary=(
                f"{who} exited with code {code} (the launcher's report"
                + (f"; Windows' crash code {crash}" if crash else "")
                + f"); {said} not in these logs.{ended_a_wait}"
            ),
            fix=EXITED_FIX,
            ranks=ranks,
            details={"exception": f"exit code {code}", "exit_code": code}
            | ({"workers": workers} if workers > 1 and not ranks else {}),
        )
    ]


REPLICA_FIX = (
    "Read the failed replica's own log (Cloud Logging, the job's logs filtered by the replica's "
    "name) for its whole traceback; Google Cloud's report quotes only the start of it. A "
    "replica is a machine of the job: each of its ranks' output is in that log."
)


def _replicas(exits: pl.DataFrame) -> Finding | None:
    """Google Cloud's report of replicas (machines) that exited with an error
    (parsers/cloud_replica.py), where it is the only launcher's: the replicas by name, no rank
    (a replica runs several)."""
    if not exits.get_column("family").eq_missing("cloud_replica").all():
        return None
    names = exits.get_column("host").drop_nulls().unique(maintain_order=True).to_list()
    codes = exits.get_column("exitcode").drop_nulls().unique(maintain_order=True).to_list()
    said = ", ".join(str(code) for code in codes)
    who = f"Replica{'s' if len(names) > 1 else ''} {', '.join(names)}"
    return _unblamed(
        exits,
        part="explanation",
        summary=(
            f"{who} exited with status {said} (Google Cloud's report); the error "
            f"{'they' if len(names) > 1 else 'it'} printed is in the replica's own log."
        ),
        fix=REPLICA_FIX,
        ranks=[],
        details={"exception": f"exit code {said}", "exit_code": codes[0], "replicas": names},
    )


def _flagged(flag: str) -> pl.Expr:
    """Whether an event's `extra` sets `flag` (a parser's `{"<flag>":true}`)."""
    return pl.col("extra").fill_null("").str.contains(f'"{flag}":true', literal=True)


def _aborted_report() -> pl.Expr:
    """A launcher's report of a worker that ended with an error, no code said (PaddlePaddle's
    `ABORT!!! ... the trainer process with rank=[3] was aborted`, parsers/process_exit.py)."""
    return _flagged("aborted")


ABORTED_FIX = (
    "Read the failed trainer's own log for its error: PaddlePaddle's launcher writes each "
    "trainer's output to `log/workerlog.<rank>` (its `--log_dir`); the launcher's console shows "
    "only that the trainer ended with an error."
)


def _aborted_trainers(exits: pl.DataFrame, ranks: list[int]) -> Finding:
    """The trainers PaddlePaddle's launcher lists as ended with an error, after which it stopped
    the others (PaddlePaddle/PaddleDetection#5202: rank 3 of 4): they failed first, of an
    error in their own logs."""
    who = rank_list(ranks)
    logs = ", ".join(f"`log/workerlog.{rank}`" for rank in ranks[:4])
    return _from_rows(
        exits,
        severity="error",
        part="departure",
        summary=(
            f"{who.capitalize()} ended with an error before the others (PaddlePaddle's "
            "launcher reports the trainer process aborted, then stopped the rest); the error "
            f"is in {'its' if len(ranks) == 1 else 'their'} own log ({logs})."
        ),
        fix=ABORTED_FIX,
        ranks=ranks,
        confidence="low",
        details={"exception": "aborted", "trainers_aborted": True},
    )


def _died_report() -> pl.Expr:
    """An executor's report of a worker process that died, no code said (vLLM's `Worker proc
    VllmWorker-1 died unexpectedly`, parsers/process_exit.py)."""
    return _flagged("died")


DIED_FIX = (
    "A worker process that dies with no error of its own was most often killed or crashed in "
    "native code: look on its host for the kernel's OOM killer (`dmesg -T | grep -i 'killed "
    "process'`), the container's memory limit and /dev/shm size (`df -h /dev/shm`), and run "
    "it with `PYTHONFAULTHANDLER=1` so that a crash prints its stack. Any error the worker "
    "printed is in its own lines (vLLM prefixes them `(VllmWorker rank=N pid=...)`)."
)


def _died(job: Job, explained: set[int]) -> list[Finding]:
    """The workers an executor saw die, where no exception of their own explains it; the
    engine's own errors after it (its core's traceback on losing the worker, intel/llm-scaler
    #154) are the death's consequence, not another failure."""
    exits = (
        _error_exits(job)
        .filter(_died_report() & pl.col("rank").is_not_null())
        .filter(~pl.col("rank").is_in(list(explained)))
        .sort("file", "line")
    )
    if exits.is_empty():
        return []
    return [_died_unexpectedly(exits, sorted(exits.get_column("rank").unique().to_list()))]


def _died_unexpectedly(exits: pl.DataFrame, ranks: list[int]) -> Finding:
    """Workers an inference engine's executor saw die, naming them, in logs that hold no error
    of theirs (OpenPipe/ART#201: `Worker proc VllmWorker-1 died unexpectedly, shutting down
    executor.`, then the engine waiting on its shared-memory broadcast): they failed first,
    of something their own output does not show."""
    who = rank_list(ranks)
    return _from_rows(
        exits,
        severity="error",
        part="explanation",
        summary=(
            f"{who.capitalize()} died unexpectedly, and the engine shut its executor down "
            f"(vLLM's report of its worker process{'' if len(ranks) == 1 else 'es'}); "
            f"no error of {'its' if len(ranks) == 1 else 'their'} own is in these logs."
        ),
        fix=DIED_FIX,
        ranks=ranks,
        confidence="medium",
        details={"exception": "died", "died_unexpectedly": True},
    )


UNNAMED_WORKER_FIX = (
    "Read each worker's own log for the error: the one whose log ends in a traceback or an "
    "error failed first (MindSpore's msrun writes `worker_<rank>.log` in its `--log_dir`, "
    "PaddlePaddle's launcher `log/workerlog.<rank>`); the launcher's console shows only that "
    "a worker ended with an error."
)


def _unnamed_worker_ended(exits: pl.DataFrame) -> Finding:
    """A launcher's word that some worker ended with an error, then that it stopped the rest,
    naming none (MindSpore's msrun: `There's worker exits with exception, kill all other
    workers.`, parsers/msrun.py): a failure all the same, blaming nobody."""
    return _unblamed(
        exits,
        part="explanation",
        summary=(
            "A worker ended with an error and the launcher then stopped the others (its "
            "report names no worker); the error is in that worker's own log."
        ),
        fix=UNNAMED_WORKER_FIX,
        ranks=[],
        details={"exception": "aborted", "workers_aborted": True},
    )


def _code_cut() -> pl.Expr:
    """A launcher's exit report whose code a paste cut off."""
    return _flagged("code_cut")


def _exit_code_cut(exits: pl.DataFrame, ranks: list[int]) -> Finding:
    """DeepSpeed's launcher reported a worker's error exit (it writes that line only for a
    non-zero code) and the paste cut the code: a failure, blaming nobody, never "no failure"
    (deepspeedai/DeepSpeed#2946: eight `Killing subprocess` lines, then the report, cut)."""
    return _unblamed(
        exits,
        part="explanation",
        summary=(
            "A worker exited with an error, and the launcher then stopped the others (its "
            "report, its exit code cut off in these logs); the error the worker printed is not "
            "in these logs."
        ),
        fix=EXITED_FIX,
        ranks=ranks,
        details={"exception": "exit code cut", "exit_code": None},
    )


def _waits_only(job: Job) -> bool:
    """Whether the logs hold tracebacks and every one of them waits for the other ranks: inside
    main_process_first, or stopped in a collective or torch.distributed's wrapper of one
    (huggingface/transformers#17106: every process's stack in main_process_first's entry, and
    torchrun's report that rank 1 exited with code 1)."""
    tracebacks = job.events.filter(pl.col("event") == "exception")
    if tracebacks.is_empty():
        return False
    waiting = pl.col("extra").fill_null("").str.contains(
        IN_MAIN_FIRST, literal=True
    ) | _in_a_collective(pl.col("frame").fill_null(""))
    return tracebacks.select(waiting.all()).item()


def _in_a_collective(frame: pl.Expr) -> pl.Expr:
    """Whether a traceback's innermost frame is a collective call or torch.distributed's
    wrapper of one: a rank waiting for the others there. Not where the paste stops at the
    collective checking its own arguments (`_validate_output_list_for_rank(...)`, `_check_*`):
    that check raises before any wait (EvolvingLMMs-Lab/lmms-eval#322: `gather_object` on a
    multi-node job given the local rank for the destination's)."""
    waiting = frame.str.contains(COLLECTIVE_CALL) | frame.str.contains(IN_DISTRIBUTED_CALL)
    return waiting & ~_last_call().str.contains(ARGUMENT_CHECK).fill_null(False)


# torch.distributed's checks of a collective's arguments, which raise before it communicates
ARGUMENT_CHECK = r"^_(?:validate|check)_\w+$"


# the call a code line makes last (`    accelerator.wait_for_everyone()`)
LAST_CALL = r"(\w+)\([^()]*\)\s*$"


def _last_call() -> pl.Expr:
    """The function a cut traceback's last line calls, where that line is code."""
    return pl.col("end_text").fill_null("").str.extract(LAST_CALL, 1)


def _calling_a_collective() -> pl.Expr:
    """Whether a cut traceback's last line is the code of its innermost frame calling a
    collective: the paste stops before the call's own frame, the rank was entering it
    (kohya-ss/sd-scripts#1601: rank 3's stack cut at `accelerator.wait_for_everyone()` in
    `train`, while rank 0 still cached latents)."""
    return ("in " + _last_call()).str.contains(COLLECTIVE_CALL).fill_null(False)


def _shut_down(job: Job) -> list[Finding]:
    """Ranks that stopped because Horovod had shut down: another rank's failure, or a rank that
    finished early, in Horovod's own words. A consequence, said as one, so that these logs are
    never "no failure" (ChenRocks/UNITER#31: rank 1's shut-down; the CUDA out-of-memory error
    that caused it is not among the lines pasted)."""
    rows = job.events.filter(
        (pl.col("event") == "exception")
        & exception_text().str.contains(HOROVOD_SHUT_DOWN, literal=True).fill_null(False)
    ).sort("file", "line")
    if rows.is_empty():
        return []
    ranks = sorted(rows.get_column("rank").drop_nulls().unique().to_list())
    who = rank_list(ranks).capitalize() if ranks else "A process"
    # the error that shut Horovod down, when the lines hold one (a rank's own exception, its
    # background loop's: NVIDIA-Merlin/NVTabular#1320)
    shown = (
        not _thrown(job)
        .filter(pl.col("exc_type").is_not_null() & ~_a_consequence(exception_text()))
        .is_empty()
    )
    return [
        _unblamed(
            rows,
            part="consequence",
            summary=(
                f"{who} stopped because Horovod had shut down: by Horovod's own words another "
                "rank failed (or finished while the others still reduced), and that rank's "
                + ("error is reported above." if shown else "error is not among these lines.")
            ),
            fix=SHUT_DOWN_FIX,
            ranks=ranks,
            details={"exception": HOROVOD_SHUT_DOWN, "waiting": True},
        )
    ]


SHUT_DOWN_FIX = (
    "Find the first error of any rank before the first shut-down message: run with mpirun "
    "`--tag-output` (or horovodrun, which tags each line with its rank) and read every rank's "
    "output; a rank that finished its data early and left the others reducing is fixed by "
    "giving every rank the same number of batches."
)


# Windows ends a crashed process with an NTSTATUS code of error severity (0xC0000000 and up):
# 0xC0000005 an access violation, 0xC00000FD a stack overflow, 0xC0000409 a fail-fast abort
# (pytorch/pytorch#186535: `process 0 terminated with exit code 3221225477` on a gloo CUDA
# all_reduce under mp.spawn)
NTSTATUS_ERRORS = range(0xC0000000, 0x1_0000_0000)
NTSTATUS_NAMES = {
    0xC0000005: "an access violation",
    0xC000001D: "an illegal instruction",
    0xC0000094: "an integer division by zero",
    0xC00000FD: "a stack overflow",
    0xC0000374: "a heap corruption",
    0xC0000409: "a fail-fast abort",
}


def windows_crash(code: int) -> str | None:
    """`0xC0000005, an access violation`: what a Windows crash's exit code says, or None."""
    if code not in NTSTATUS_ERRORS:
        return None
    name = NTSTATUS_NAMES.get(code)
    return f"0x{code:08X}" + (f", {name}" if name else "")


def _failure_code(code: int) -> bool:
    """Whether an exit code says the process failed whatever the program meant by it: Python's
    uncaught exception (1), a usage error (2), a signal (negative, as the launchers report it,
    or a shell's 128 + N), 255 (an MPI abort, a failed remote command), or a Windows crash."""
    return code < 0 or code in (1, 2, 255) or 128 < code < 160 or code in NTSTATUS_ERRORS


def _chosen_exit(exits: pl.DataFrame, ranks: list[int], code: int) -> Finding:
    """An exit code the program chose itself, in logs with no error: the launcher reports it,
    but nothing says the run failed (RVC-Project/Retrieval-based-Voice-Conversion-WebUI#99:
    `os._exit(2333333)` once training is done, which mp.spawn reports as an exit code)."""
    who = rank_list(ranks).capitalize() if ranks else "A worker"
    return _from_rows(
        exits,
        severity="warning",
        part="context",
        summary=(
            f"{who} exited with code {code} (the launcher's report): a code the program chose "
            "itself, not a Python error's 1 nor a signal's, and the logs hold no error. If the "
            "run did not finish, read what the program means by that code."
        ),
        fix=CHOSEN_EXIT_FIX,
        ranks=ranks,
        confidence="medium",
        details={"exception": f"exit code {code}", "exit_code": code, "chosen": True},
    )


CHOSEN_EXIT_FIX = (
    "Search the code for the exit with that number (`sys.exit(...)`, `os._exit(...)`): many "
    "programs end their workers so on purpose once the work is done."
)


def _part_of_their_node(exits: pl.DataFrame, ranks: list[int], code: int) -> Finding | None:
    """torchrun's summary lists some of one node's workers as failed, with one exit code, and
    not the others its local ranks show were there (zai-org/GLM-130B#100: local ranks 6 and 7
    of at least 8, both `exitcode : 1` in the same second): a peer's failure or a lost
    rendezvous would have ended the node's workers alike, so the failure was the listed
    ones'. Which of them failed first the summary cannot say (its `Root Cause` is the earliest
    by whole seconds, a tie broken by order), so all are named, at low confidence."""
    entries = exits.filter(pl.col("event") == "child_failed")
    if entries.height != exits.height or len(ranks) < 2 or entries["host"].n_unique() != 1:
        return None
    local = entries.get_column("local_rank").drop_nulls()
    if local.len() != entries.height or local.n_unique() != len(ranks):
        return None
    workers = int(local.max()) + 1
    if len(ranks) * 2 > workers:
        return None  # most of the node failed: as likely the node's or a peer's doing
    summary = (
        f"{rank_list(ranks).capitalize()} exited with code {code} (torchrun's summary), while "
        f"the node's other workers (it ran at least {workers}) are not listed as failed: the "
        "failure was theirs, not the node's; the errors they printed are not in these logs."
    )
    return _from_rows(
        exits,
        severity="error",
        part="departure",
        summary=summary,
        fix=EXITED_FIX,
        ranks=ranks,
        confidence="low",
        details={"exception": f"exit code {code}", "exit_code": code},
    )


def _failed_alone(job: Job, exits: pl.DataFrame) -> bool:
    """One worker failed, with its rank known, while its agent still had others to stop
    (torchrun's `Sending process 80 closing signal SIGTERM` for pids other than the failed
    one's): it failed first and alone, not with its node (modded-nanogpt#61: local rank 7 of
    8 workers on a 4-GPU machine)."""
    # (torchrun reports a failed worker twice: the agent's `failed (exitcode: 1)` line and its
    # summary's entry, one pid)
    if exits.select("rank", "pid").unique().height != 1 or exits.item(0, "rank") is None:
        return False
    if by_lightning(exits):
        return True  # it reports the first child it sees fail, then stops the others itself
    if exits.get_column("event").eq("task_exit").all() and not _srun_teardown(job).is_empty():
        return True  # srun's one error exit, then its kills of the rest once SLURM cancelled
    failed_pid = exits.item(0, "pid")
    stopped = agent_stops(job).filter(pl.col("file") == exits.item(0, "file")).get_column("pid")
    return not stopped.is_empty() and failed_pid not in stopped.to_list()


# the signals torchrun's agent stops the surviving workers with: SIGTERM, then SIGKILL once its
# grace period (30 s by default) is over
AGENT_STOP_SIGNALS = ("SIGTERM", "SIGKILL")


def _stopped_by_the_agent(job: Job) -> pl.DataFrame:
    """Entries of torchrun's failure summary that died of SIGTERM or SIGKILL after another
    entry of the same summary had failed with an exit code: the agent stopping the survivors,
    not failures of their own (vllm-project/speculators#1115: ranks 0 and 2, 31 s after ranks 1
    and 3 exited with code 1)."""
    entries = job.events.filter(
        (pl.col("event") == "child_failed") & pl.col("timestamp").is_not_null()
    ).with_columns(_signal_of_death())
    stop = pl.col("signal").is_in(AGENT_STOP_SIGNALS).fill_null(False)
    first_failure = pl.col("timestamp").filter(~stop).min().over("file")
    return entries.filter(stop & (pl.col("timestamp") > first_failure).fill_null(False))


def killed_by_lightning(job: Job) -> pl.DataFrame:
    """`file, line` of the SIGKILLs (and Ray's word of a worker's death) after Lightning's
    launcher reported a worker ended with an error, in the same file: the launcher stopping its
    own main process and the other workers
    (it sends SIGKILL; a run here, tests/data/launchers/lightning: `[rank: 1] Child process
    with PID 23634 terminated with code 1. Forcefully terminating all other processes ...`,
    then the shell's `line 1: 23631 Killed ...` of the main process), not the OOM killer's."""
    reported = job.events.filter(
        (pl.col("event") == "worker_failed")
        & (pl.col("extra") == LIGHTNING_REPORT)
        & (pl.col("exitcode").fill_null(0) > 0)
    )
    if reported.is_empty():
        return pl.DataFrame(schema={"file": job.events.schema["file"], "line": pl.UInt32})
    first = reported.group_by("file").agg(pl.col("line").min().alias("_reported"))
    kills = job.events.filter(pl.col("event").is_in(DEATH_EVENTS)).with_columns(_signal_of_death())
    # ... and Ray's word that the worker process it ran in died (Nixtla/neuralforecast#1291:
    # the raylet's `A worker died or was killed ... by an unexpected system error`)
    kills = kills.filter(pl.col("signal") == "SIGKILL").select("file", "line")
    ray_seen = job.events.filter(pl.col("event") == "worker_died").select("file", "line")
    return (
        pl.concat([kills, ray_seen])
        .join(first, on="file")
        .filter(pl.col("line") > pl.col("_reported"))
        .select("file", pl.col("line").cast(pl.UInt32))
    )


def _failed_before_the_stop(job: Job) -> Finding | None:
    """The workers of torchrun's summary that failed first, in one moment, with the others
    stopped by the agent after them: they left while the others still ran. Low confidence:
    their errors are not in the logs."""
    stopped = _stopped_by_the_agent(job)
    if stopped.is_empty():
        return None
    file = stopped.item(0, "file")
    entries = job.events.filter((pl.col("event") == "child_failed") & (pl.col("file") == file))
    failed = entries.join(stopped.select("file", "line"), on=["file", "line"], how="anti")
    first = failed.filter(pl.col("timestamp") == pl.col("timestamp").min())
    if first.is_empty() or first.get_column("rank").null_count():
        return None
    ranks = sorted(first.get_column("rank").unique().to_list())
    stopped_ranks = sorted(stopped.get_column("rank").drop_nulls().unique().to_list())
    codes = first.get_column("exitcode").drop_nulls().unique().sort().to_list()
    code = f" with code {', '.join(map(str, codes))}" if codes else ""
    who = rank_list(ranks).capitalize()
    them = rank_list(stopped_ranks) if stopped_ranks else "the other workers"
    return _from_rows(
        first,
        severity="error",
        part="departure",
        summary=(
            f"{who} exited{code} first, while the other workers still ran; the launcher then "
            f"stopped {them} (SIGTERM, then SIGKILL); the errors {who.lower()} printed are not in "
            "these logs."
        ),
        fix=EXITED_FIX,
        ranks=ranks,
        confidence="low",
        details={
            "exception": f"exit code {codes[0]}" if codes else "exit",
            "exit_code": codes[0] if codes else None,
        },
    )


def _earliest_by_clock(exits: pl.DataFrame) -> tuple[pl.DataFrame, float] | None:
    """The exit the launchers' reports time clearly before every other rank's, with how many
    seconds before (huggingface/accelerate#1519: two agents' summaries, rank 4's failure 51 s
    before rank 0's); None when the reports tie or carry no time."""
    timed = exits.filter(pl.col("timestamp").is_not_null() & pl.col("rank").is_not_null())
    if timed.get_column("rank").n_unique() < 2:
        return None
    first_time = timed.get_column("timestamp").min()
    first = timed.filter(pl.col("timestamp") == first_time)
    rest = timed.filter(pl.col("timestamp") != first_time)
    if first.get_column("rank").n_unique() != 1 or rest.is_empty():
        return None
    ahead = (rest.get_column("timestamp").min() - first_time).total_seconds()
    return (first.head(1), ahead) if ahead >= CLEARLY_BEFORE_S else None


CLEARLY_BEFORE_S = 5  # launchers stamp a job's simultaneous failures within a second or two


def _first_exit(first: pl.DataFrame, ahead: float | None = None, *, alone: bool = False) -> Finding:
    """The launcher names the job's first process to end (Open MPI's `The first process to do
    so was:`), or its reports time one rank's exit `ahead` seconds before the others', or the
    only one of its workers failed while the others still ran (`alone`): it left before any
    other, a guess at the cause all the same."""
    rank, code = int(first.item(0, "rank")), int(first.item(0, "exitcode"))
    harness = _by_test_harness(first)
    reporter = "the test harness" if harness else "the launcher"
    launcher = "Lightning's launcher" if by_lightning(first) else reporter
    if alone:
        said = (
            f"Rank {rank} exited with code {code} while the other workers still ran ({launcher} "
            "then stopped them)"
        )
    elif ahead is not None:
        said = (
            f"Rank {rank} was the first process to exit, with code {code}, {duration(ahead)} "
            "before any other rank (the launchers' reports)"
        )
    else:
        said = f"Rank {rank} was the first process to exit, with code {code} ({reporter}'s report)"
    return _from_rows(
        first,
        severity="error",
        part="departure",
        summary=f"{said}; the error it printed is not in these logs.",
        fix=HARNESS_EXIT_FIX
        if harness
        else (LIGHTNING_EXITED_FIX if by_lightning(first) else EXITED_FIX)
        if alone
        else FIRST_EXIT_FIX,
        ranks=[rank],
        confidence="low",
        details={"exception": f"exit code {code}", "exit_code": code},
    )


WINDOWS_CRASH_FIX = (
    "The process crashed in native code (a library, the CUDA driver), with no Python exception "
    "to print: run it with `python -X faulthandler` to get the Python stack at the crash, and "
    "check that the backend supports what it was given on Windows (gloo has no CUDA "
    "all_reduce there: move the tensors to the CPU, or run on Linux with NCCL)."
)


def _windows_crashed(rows: pl.DataFrame, rank: int, code: int, crash: str) -> Finding:
    """One worker ended with a Windows crash code, no error of its own in the logs: it crashed
    (pytorch/pytorch#186535: mp.spawn's `process 0 terminated with exit code 3221225477`)."""
    summary = (
        f"Rank {rank} crashed: its exit code {code} is Windows' {crash} (the launcher's report); "
        "no Python error of its own is in these logs."
    )
    return _one_worker_exit(rows, rank, code, summary, WINDOWS_CRASH_FIX, "medium")


def _lone_failure(rows: pl.DataFrame, rank: int, code: int, said: str) -> Finding:
    """A launcher names one worker alone as failed, and no rank's own error is in the logs: the
    only failure there is, a guess at low confidence (`said`: whose report names it)."""
    summary = f"{said}; the error it printed is not in these logs."
    return _one_worker_exit(rows, rank, code, summary, EXITED_FIX, "low")


def _one_worker_exit(
    rows: pl.DataFrame, rank: int, code: int, summary: str, fix: str, confidence: Confidence
) -> Finding:
    """The finding of one worker's exit that the launcher's report blames on it."""
    return _from_rows(
        rows,
        severity="error",
        part="departure",
        summary=summary,
        fix=fix,
        ranks=[rank],
        confidence=confidence,
        details={"exception": f"exit code {code}", "exit_code": code},
    )


FIRST_EXIT_FIX = (
    "Read that rank's own output for its error: run mpirun with `--tag-output` (or "
    "`--output-filename <dir>`, one file per rank) so that every line says whose it is, and "
    "look before the first line of any other rank's failure."
)


HARNESS_EXIT_FIX = (
    "Read that process's own traceback: PyTorch's test harness logs the exception a process "
    "caught just before its `exiting process N with exit code: 10` line, in the test's output "
    "above the harness's report; run the test alone to see it without the others' errors."
)


def _by_test_harness(exits: pl.DataFrame) -> bool:
    """Whether these exits are PyTorch's multi-process test harness's reports."""
    said = exits.get_column("extra").fill_null("")
    return bool(said.str.contains('"spawned":true', literal=True).all())


def _first_to_exit() -> pl.Expr:
    """A launcher's report that names the job's first process to end."""
    return _flagged("first_to_exit")


LIGHTNING_EXITED_FIX = (
    "Read that worker's own output for its traceback: Lightning starts the other workers as "
    "subprocesses of the main one, writing to the same console or job log (lines before its "
    "`Child process ... terminated` report); where they are missing, the worker's stderr went "
    "to a file of its own or was not kept."
)
EXITED_FIX = (
    "Read that worker's own output for its traceback (torchrun `--log-dir` with `--tee 3`, or "
    "the rank's stderr); decorate the entry point with "
    "`torch.distributed.elastic.multiprocessing.errors.record` so that torchrun prints the "
    "worker's exception in its summary."
)


# The calls a rank waits in for the others (torch.distributed, DDP's set-up, Horovod, DeepSpeed
# and Accelerate helpers): a traceback whose innermost frame is one of them is a waiting rank.
COLLECTIVE_CALL = (
    r"\bin (?:barrier|monitored_barrier|all_?reduce\w*|all_?gather\w*|broadcast\w*|"
    r"reduce_scatter\w*|all_to_all\w*|gather|scatter|reduce|wait|synchronize|"
    r"_verify_param_shape_across_processes|_sync_module_states|_sync_params_and_buffers|"
    r"main_process_first|wait_for_everyone)$"
)


# a rank's own word that its monitored barrier failed (parsers/monitored_barrier.py)
BARRIER_FAILURES = ("barrier_failed", "barrier_peer_error")


def _cut_unexplained(job: Job, explained: set[int]) -> pl.DataFrame:
    """Tracebacks cut before their exception line, on ranks no other exception explains, that
    do not follow their rank's own timeout report in its file: with blocking wait (or when the
    watchdog's error reaches the Python thread) the timed-out collective raises, and its
    traceback is the timeout's own (OpenRLHF/OpenRLHF#1135: rank 6's `timed out in blocking
    wait` and then its stack, cut by the paste); so is a monitored barrier's, after the rank's
    word that the barrier failed (sgl-project/sglang#5602's TP3: `Rank 3 successfully reached
    monitoredBarrier, but received errors ... from rank 0`, then its scheduler's traceback)."""
    cut = job.events.filter(
        (pl.col("event") == "exception")
        & pl.col("exc_type").is_null()
        & pl.col("rank").is_not_null()
        & ~pl.col("rank").is_in(list(explained))
    ).sort("file", "line")
    own_wait_failed = pl.col("event").is_in((*TIMEOUT_EVENTS, *BARRIER_FAILURES))
    timed_out = (
        job.events.filter(own_wait_failed & pl.col("rank").is_not_null())
        .group_by("file", "rank")
        .agg(pl.col("line").min().alias("_timed_out_at"))
    )
    return (
        cut.join(timed_out, on=["file", "rank"], how="left")
        .filter(~(pl.col("_timed_out_at") < pl.col("line")).fill_null(False))
        .drop("_timed_out_at")
    )


def _cut_and_gone(job: Job, explained: set[int]) -> list[Finding]:
    """The one rank whose log ends in a traceback cut before its exception, while the other
    ranks lost their connection to a peer: it failed there and went away, and they saw it go
    (pytorch/pytorch#45338: rank 1's `Process Process-1:` and its traceback's first line end
    its log; rank 0's gloo pair reads `Connection reset by peer` from rank 1's host)."""
    lost = job.events.filter(pl.col("event").is_in(PEER_LOST) & pl.col("rank").is_not_null())
    if lost.is_empty():
        return []
    reporting = sorted(lost.get_column("rank").unique().to_list())
    cut = _cut_unexplained(job, explained).filter(
        ~pl.col("rank").is_in(reporting)
        & ~pl.col("frame").fill_null("").str.contains(COLLECTIVE_CALL)
        & ~_calling_a_collective()
    )
    # the end of a rank's own file; a paste of several ranks ends where the paste was cut
    last_lines = (
        job.events.group_by("file")
        .agg(pl.col("line").max().alias("_last"), pl.col("rank").n_unique().alias("_writers"))
        .filter(pl.col("_writers") == 1)
    )
    ending = cut.join(last_lines, on="file").filter(pl.col("line") == pl.col("_last"))
    if ending.get_column("rank").n_unique() != 1:
        return []
    rank = int(ending.item(0, "rank"))
    their = "its" if len(reporting) == 1 else "their"
    return [
        _from_rows(
            pl.concat([ending, lost.sort("file", "line").head(1)], how="diagonal_relaxed"),
            severity="error",
            part="explanation",
            summary=(
                f"Rank {rank}'s log ends in a traceback cut before its exception: it failed "
                f"there and went away, and {rank_list(reporting)} then lost {their} connection "
                "to a peer."
            ),
            fix=CUT_AND_GONE_FIX.format(rank=rank),
            ranks=[rank],
            confidence="low",
            details={"exception": None, "cut": True, "peer_lost": True},
        )
    ]


CUT_AND_GONE_FIX = (
    "Attach rank {rank}'s whole stderr: the exception that ended it follows the traceback's "
    "first lines, which these logs cut."
)


def _cut_tracebacks(job: Job, explained: set[int]) -> list[Finding]:
    """Tracebacks cut before their exception line whose innermost frame is a collective
    (`broadcast_parameters`, `barrier`, DDP's parameter check), on ranks no other exception
    explains: the rank was waiting for the others there, a consequence whose cause is
    elsewhere (horovod#1834: rank 0 in `hvd.broadcast_parameters` while rank 3 failed on its
    data). A cut traceback anywhere else says nothing of why (a Ctrl-C of a hung job prints
    one too, fairseq#708): no finding."""
    cut = _cut_unexplained(job, explained).filter(
        pl.col("frame").fill_null("").str.contains(COLLECTIVE_CALL) | _calling_a_collective()
    )
    if cut.is_empty():
        return []
    ranks = sorted(cut.get_column("rank").unique().to_list())
    frame = cut.get_column("frame").item(0)
    # the collective its code line calls, where the stack stops before that call's frame
    call = cut.select(pl.when(_calling_a_collective()).then(_last_call())).item(0, 0)
    where = f"{frame}, calling {call}" if call is not None else frame
    who = rank_list(ranks)
    return [
        _unblamed(
            cut,
            part="consequence",
            summary=(
                f"{who.capitalize()} ended in a traceback cut before its exception, inside a "
                f"collective in {where}: waiting for the other ranks there, so the rank they "
                "waited for is elsewhere."
            ),
            fix=(
                "The exception line is missing from these logs: attach the whole log of "
                f"{who} (stderr). Then find the rank that never reached this collective."
            ),
            ranks=ranks,
            details={"frame": frame, "call": call, "cut": True},
        )
    ]


WAITS_FIX = (
    "These ranks waited for other ranks and gave up: the rank they waited for stopped, hung or "
    "ran other code before this point. Attach the other ranks' logs (every node's), or raise "
    "the timeout if the others were only slow (a rendezvous of many nodes, a long first step)."
)


def _ranked_waits(job: Job) -> list[Finding]:
    """Ranks whose only exception is a wait for the others that timed out, in logs that hold
    no watchdog's timeout and no failure of any rank's own: a consequence all the same, never
    "no failure found" (horovod/horovod#2015: rank 1's `gloo::IoException` at the rendezvous
    store, `Wait timeout for key(s): 0`, 50 nodes joining)."""
    if not job.events.filter(pl.col("event").is_in(TIMEOUT_EVENTS)).is_empty():
        return []
    thrown = _thrown(job).filter(pl.col("exc_type").is_not_null())
    waits = thrown.filter(
        pl.col("rank").is_not_null() & exception_text().str.contains(WAITED).fill_null(False)
    )
    if waits.is_empty() or not thrown.filter(~_a_consequence(exception_text())).is_empty():
        return []
    waits = waits.join(
        startup_failures(job).select("file", "line"), on=["file", "line"], how="anti"
    )
    if waits.is_empty():
        return []
    ranks = sorted(waits.get_column("rank").unique().to_list())
    said = clipped(str(waits.sort("file", "line").select(exception_text()).item(0, 0)))
    who = rank_list(ranks).capitalize()
    return [
        _unblamed(
            waits.sort("file", "line"),
            part="consequence",
            summary=(
                f"{who} gave up waiting for other ranks (`{said}`): the rank "
                f"{'it' if len(ranks) == 1 else 'they'} waited for is not in these lines."
            ),
            fix=WAITS_FIX,
            ranks=ranks,
            details={"exception": said, "waiting": True},
            kind="collective_timeout",
        )
    ]


def _unblamed(
    rows: pl.DataFrame,
    *,
    part: Part,
    summary: str,
    fix: str,
    ranks: list[int],
    details: dict[str, object],
    kind: str = "rank_exception",
) -> Finding:
    """A failure the logs do not pin on a rank: error, low confidence, blaming nobody."""
    return _from_rows(
        rows,
        kind,
        severity="error",
        part=part,
        summary=summary,
        fix=fix,
        ranks=ranks,
        blames_nobody=True,
        confidence="low",
        details=details,
    )


def _from_rows(rows: pl.DataFrame, kind: str = "rank_exception", **fields: Any) -> Finding:
    """A rank_exception finding whose evidence is `rows` (each traceback's first and exception
    lines) and whose time is their earliest printed one; a `collective_timeout` where all the
    exceptions say is that a wait for other ranks timed out (a timeout's report in its words)."""
    evidence, total = evidence_from(with_exception_lines(rows))
    return Finding(
        kind=kind,
        evidence=evidence,
        evidence_total=total,
        timestamp=earliest_time(rows),
        **fields,
    )


def _exceptions(job: Job) -> list[Finding]:
    exceptions = (
        _inheriting(job, _thrown(job))
        .filter(
            pl.col("rank").is_not_null()
            & pl.col("exc_type").is_not_null()  # a traceback cut before its exception: no cause
        )
        .with_columns(
            exception_text().alias("what"),
            _logged().alias("logged"),
        )
    )
    startup = startup_failures(job).select("file", "line")
    # an exception from using a collective's garbled payload is the desync's symptom
    # (logforensics/garbled.py)
    primary = (
        exceptions.filter(
            ~_a_consequence(pl.col("what"))
            & ~garbled()
            & ~_spawn_exit()
            & ~_launch_exit()
            # Open MPI's banner naming its rank after UCX said what failed: the nccl_error rule's
            & ~_mpi_code_under_ucx_failure(job)
        )
        .join(startup, on=["file", "line"], how="anti")
        # a bare C++ abort after the watchdog's report, its `what():` cut off
        # (Alpha-VLLM/LLaMA2-Accessory#147): the timeout's teardown
        .join(_watchdog_aborts(job, exceptions), on=["file", "line"], how="anti")
        .join(_told_timeouts(job, exceptions), on=["file", "line"], how="anti")
        .join(_emptied_payloads(job, exceptions), on=["file", "line"], how="anti")
        .join(_actor_deaths_after_aborts(job, exceptions), on=["file", "line"], how="anti")
        .join(_worker_deaths_told(job, exceptions), on=["file", "line"], how="anti")
    )
    if primary.is_empty():
        return []
    placed = placed_keys(job, primary).with_columns(_same_error().alias("same_error"))
    findings = []
    for (_,), rows in placed.sort("file", "line").group_by("same_error", maintain_order=True):
        # the kernel's own assertion names the condition: it speaks for the host's errors
        findings.append(_finding(job, rows.sort(pl.col("exc_type") != CUDA_ASSERTION), primary))
    return sorted(findings, key=lambda f: f.ranks)


def _inheriting(job: Job, thrown: pl.DataFrame) -> pl.DataFrame:
    """`thrown`, a rank's traceback cut before its exception line taking the exception of
    another rank's whole traceback that holds the cut one's last frame: the same call that
    failed the same way (tdrussell/diffusion-pipe#397: ranks 18 and 22 in
    `torch.cuda.set_device(dist.get_rank())`, rank 22's traceback cut by the paste)."""
    cut = thrown.filter(
        pl.col("rank").is_not_null() & pl.col("exc_type").is_null() & pl.col("frame").is_not_null()
    )
    whole = thrown.filter(pl.col("exc_type").is_not_null() & pl.col("end_line").is_not_null())
    if cut.is_empty() or whole.is_empty():
        return thrown
    texts = job.span_lines(whole)
    inherited = []
    for row in cut.iter_rows(named=True):
        place = re.match(PLACE, str(row["frame"]))
        if place is None:
            continue
        needle = f'"{place["path"]}", line {place["lineno"]}, in {place["func"]}'
        holders = texts.filter(pl.col("text").str.contains(needle, literal=True))
        if holders.is_empty():
            continue
        source = whole.filter(
            (pl.col("file") == holders.item(0, "file"))
            & (pl.col("line") == holders.item(0, "_start"))
        ).row(0, named=True)
        inherited.append(
            {
                "file": row["file"],
                "line": row["line"],
                "_type": source["exc_type"],
                "_message": source["exc_message"],
            }
        )
    if not inherited:
        return thrown
    found = pl.DataFrame(inherited, schema_overrides={"line": thrown.schema["line"]})
    return (
        thrown.join(found, on=["file", "line"], how="left")
        .with_columns(
            pl.coalesce("exc_type", "_type").alias("exc_type"),
            pl.coalesce("exc_message", "_message").alias("exc_message"),
        )
        .drop("_type", "_message")
    )


def _thrown(job: Job) -> pl.DataFrame:
    """Python exceptions, and C++ exceptions that ended a process (`terminate called after
    throwing an instance of 'c10::CUDAError'` / `what():  CUDA error: unknown error`,
    bigscience tr11's dead GPU) on ranks, or in files, that printed no Python one."""
    events = job.events
    python = _assertions_ranked_below(
        _without_loader_rethrows(events.filter(pl.col("event") == "exception"))
    )
    cpp = events.filter(pl.col("event") == "cpp_terminate")
    if cpp.is_empty():
        return python
    ranked = python.get_column("rank").drop_nulls().unique().implode()
    # a traceback cut before its exception, or the launcher's own, explains no C++ one
    said = python.filter(pl.col("exc_type").is_not_null() & ~_launchers_word())
    files = said.get_column("file").unique().implode()
    alone = cpp.filter(
        pl.when(pl.col("rank").is_not_null())
        .then(~pl.col("rank").is_in(ranked))
        .otherwise(~pl.col("file").is_in(files))
    )
    return pl.concat([python, alone], how="diagonal_relaxed")


# How many lines above a rank's traceback the kernel's assertion may end and still be that
# rank's (the assertion and the traceback's first line are usually next to each other)
ASSERTION_REACH = 3
DEVICE_SIDE = "device-side assert"


def _assertions_ranked_below(exceptions: pl.DataFrame) -> pl.DataFrame:
    """`exceptions` with a CUDA kernel's assertion that no line ties to a rank given the rank
    of the traceback that opens just below it, when that traceback was cut before its
    exception line or raised the device-side assert itself. The kernel prints the assertion
    from the GPU, past the launcher's rank prefix, and the rank's host code raises on its next
    synchronisation: one failure (modelscope/ms-swift#8378: the assertion, then `[rank5]:
    Traceback`, the paste cut before the exception)."""
    unranked = pl.col("rank").is_null() & (pl.col("exc_type") == CUDA_ASSERTION)
    asserted = exceptions.filter(unranked.fill_null(False))
    if asserted.is_empty():
        return exceptions
    raised_by_it = pl.col("exc_type").is_null() | pl.col("exc_message").fill_null("").str.contains(
        DEVICE_SIDE, literal=True
    )
    below = exceptions.filter(pl.col("rank").is_not_null() & raised_by_it)
    if below.is_empty():
        return exceptions
    last_line = pl.coalesce("end_line", "line").cast(pl.Int64)
    reach = (pl.col("_below") - pl.col("_last")).is_between(1, ASSERTION_REACH)
    ranks = (
        asserted.select("file", "line", last_line.alias("_last"))
        .join(
            below.select(
                "file", pl.col("line").cast(pl.Int64).alias("_below"), pl.col("rank").alias("_r")
            ),
            on="file",
        )
        .filter(reach)
        .sort("_below")
        .group_by("file", "line", maintain_order=True)
        .agg(pl.col("_r").first())
    )
    if ranks.is_empty():
        return exceptions
    return (
        exceptions.join(ranks, on=["file", "line"], how="left")
        .with_columns(pl.coalesce("rank", "_r").alias("rank"))
        .drop("_r")
    )


# The DataLoader raises a worker's exception again in the main process, the worker's own
# traceback in its message: `ValueError: Caught ValueError in DataLoader worker process 0.`,
# `Original Traceback (most recent call last):`, ..., `ValueError: Tools should either be ...`
LOADER_RETHROW = r"^Caught (\w+) in DataLoader worker process \d+"


def _without_loader_rethrows(exceptions: pl.DataFrame) -> pl.DataFrame:
    """`exceptions` without the DataLoader's rethrow of a worker's exception where the worker's
    own follows it (the same type, next in the same file and rank): one failure, told by the
    original's message (johnson7788/RLDecisionAgent's notes: the rethrow, then the worker's
    `ValueError: Tools should either be a JSON schema, ...`)."""
    if exceptions.is_empty():
        return exceptions
    caught = pl.col("exc_message").fill_null("").str.extract(LOADER_RETHROW, 1)
    if exceptions.select(caught.is_null().all()).item():
        return exceptions
    own_type = pl.col("exc_type").str.extract(r"(\w+)$", 1)
    next_type = own_type.shift(-1).over("file", "rank", order_by="line")
    return exceptions.filter(~(caught == next_type).fill_null(False))


LOSS_TERMS_DIFFER = "loss log variables are different across GPUs"
# The watchdog's own words as it takes a process down after a timeout (ProcessGroupNCCL).
WATCHDOG_ABORT_EVENTS = ("collective_timeout", "ops_failed", "process_abort")


# the watchdog's report of its own timeout, repeated by the abort that ends the process
WATCHDOG_WORDS = (
    r"Process group watchdog thread terminated with exception|"
    r"Watchdog caught collective operation timeout"
)


def _watchdog_aborts(job: Job, rows: pl.DataFrame) -> pl.DataFrame:
    """The C++ aborts (`terminate called after throwing an instance of 'std::runtime_error'`)
    that say nothing of their own and come after the watchdog's timeout report in their file:
    the watchdog taking the process down, part of the timeout, not another failure
    (ultralytics/yolov5#4409), or that say only the watchdog's own words (Hoilap/O-LoRA's
    `what():  [PG ID 1 PG GUID 1 Rank 0] Process group watchdog thread terminated with
    exception: [Rank 0] Watchdog caught collective operation timeout: ...`)."""
    said = pl.col("exc_message").fill_null("").str.strip_chars()
    own_words = said.str.contains(WATCHDOG_WORDS)
    watchdog = job.events.filter(pl.col("event").is_in(WATCHDOG_ABORT_EVENTS))
    # Python's exception quoting the watchdog's report, read as that rank's timeout on its own
    # line (flytocc/rtdetr-mmdet#1: `RuntimeError: NCCL communicator was aborted on rank 1.
    # Original reason for failure was: [Rank 1] Watchdog caught collective operation timeout`)
    echoes = rows.filter((pl.col("event") == "exception") & own_words).join(
        watchdog.select("file", "line"), on=["file", "line"], how="semi"
    )
    aborts = rows.filter((pl.col("event") == "cpp_terminate") & ((said == "") | own_words))
    if aborts.is_empty():
        return echoes.select("file", "line")
    reports = watchdog.group_by("file").agg(pl.col("line").min().alias("_reported_at"))
    # one whose `what():` is the report is the timeout wherever it stands (argonne-lcf/alcf-
    # nccl-tests: the abort opens the paste, its `what():` the first report in it)
    told = (
        aborts.join(reports, on="file", how="left")
        .filter(own_words | (pl.col("_reported_at") < pl.col("line")).fill_null(False))
        .select("file", "line")
    )
    return pl.concat([told, echoes.select("file", "line")])


# How many lines from an exception its backend's own report of the same failure may stand
REPORT_LINES = 3


def _told_timeouts(job: Job, rows: pl.DataFrame) -> pl.DataFrame:
    """Exceptions whose message names no timeout but whose backend reports, on the lines next
    to them, that the rank's collective timed out: that wait's exception, not a failure of the
    rank's own (Ascend/pytorch#43: `RuntimeError: npuSynchronizeDevice:... NPU error, error
    code is 107020` raised in a barrier, the runtime's `hccl fftsplus task timeout` after it)."""
    timeouts = job.events.filter(
        (pl.col("event") == "collective_timeout") & pl.col("rank").is_not_null()
    ).select("file", "rank", pl.col("line").alias("_reported_at"))
    if timeouts.is_empty():
        return rows.select("file", "line").clear()
    first = pl.col("line").cast(pl.Int64)  # (unsigned: the first lines would wrap)
    last = pl.coalesce("end_line", "line").cast(pl.Int64)
    return (
        rows.join(timeouts, on=["file", "rank"])
        .filter(pl.col("_reported_at").is_between(first - REPORT_LINES, last + REPORT_LINES))
        .select("file", "line")
        .unique()
    )


# An object collective's payload that ended before any object did: an empty buffer unpickled
EMPTY_PAYLOAD = r"^EOFError\b|Ran out of input"


def _emptied_payloads(job: Job, rows: pl.DataFrame) -> pl.DataFrame:
    """An object collective that handed a rank an empty payload (`EOFError: Ran out of input`
    unpickling it) in a job whose collectives timed out: the aborted collective's buffer, the
    timeout's symptom (modelscope/ms-swift#4340: rank 6's `broadcast_object_list` while ranks 2
    and 7 timed out in that BROADCAST, rank 0 still packing the dataset alone). Without a
    timeout it stays the rank's failure."""
    timed_out = job.events.filter(pl.col("event") == "collective_timeout")
    if timed_out.is_empty() or "frame" not in rows.columns:
        return rows.select("file", "line").clear()
    emptied = exception_text().str.contains(EMPTY_PAYLOAD) & pl.col("frame").str.contains(
        OBJECT_COLLECTIVE_FRAME
    )
    return rows.filter(emptied.fill_null(False)).select("file", "line")


# Ray's word to the caller that an actor's process died (`ray.exceptions.RayTaskError(
# ActorDiedError)`, `RayActorError`): it names no cause of its own
ACTOR_DIED = r"(?:ActorDiedError|RayActorError)$"


def _actor_deaths_after_aborts(job: Job, rows: pl.DataFrame) -> pl.DataFrame:
    """Ray telling the driver an actor died, in logs where a rank's watchdog caught a timed-out
    collective and so took its process down (`To avoid data inconsistency, we are taking the
    entire process down`, said or not): that abort is the death Ray reports, the failed
    collective behind it the story (verl-project/verl#5750: the TaskRunner's
    `RayTaskError(ActorDiedError)` above rank 0's `_ALLGATHER_BASE` timeout in its WorkerDict;
    OpenRLHF/OpenRLHF#624: the reference model's actor timed out, its caller's actor died)."""
    aborts = pl.col("event").is_in(["process_abort", "collective_timeout"])
    if job.events.filter(aborts).is_empty():
        return rows.select("file", "line").clear()
    died = pl.col("exc_type").str.contains(ACTOR_DIED).fill_null(False)
    return rows.filter(died).select("file", "line")


def _worker_deaths_told(job: Job, rows: pl.DataFrame) -> pl.DataFrame:
    """`DataLoader worker (pid(s) ...) exited unexpectedly` in a file where the worker told
    how it died (`ERROR: Unexpected bus error encountered in worker.`): the worker's own
    report is the cause, the rank's exception its symptom, in whichever order the two
    streams reached the file (WZMIAOMIAO/deep-learning-for-image-processing#240)."""
    told = job.events.filter(pl.col("event") == "loader_worker_crash").select("file").unique()
    # (`is killed by signal: Bus error` says how the worker died itself: no symptom)
    return (
        rows.filter(exception_text().str.contains(WORKER_EXITED).fill_null(False))
        .join(told, on="file", how="semi")
        .select("file", "line")
    )


# what shows a job going on: its progress, a phase it entered
PROGRESS_EVENTS = ("stage", "phase")


def _logged_and_went_on(job: Job, rows: pl.DataFrame) -> pl.DataFrame:
    """Errors a process caught and logged, no line tying them to a rank, after which its file
    shows the job's progress and no failure: they stopped nothing (spawnaga/GeneticTrading: a
    dashboard's `Failed to start web server: [Errno 98] Address already in use`, then three
    more training rounds and every communicator destroyed in order)."""
    logged = rows.filter(_logged())
    if logged.is_empty():
        return logged.select("file", "line")
    later = job.events.select(
        "file",
        pl.col("line").alias("_later"),
        pl.col("event").is_in(PROGRESS_EVENTS).alias("_progress"),
        (pl.col("severity") == "error").alias("_failure"),
    )
    after = (
        logged.select("file", "line")
        .join(later, on="file")
        .filter(pl.col("_later") > pl.col("line"))
        .group_by("file", "line")
        .agg(pl.col("_progress").any(), pl.col("_failure").any())
    )
    return after.filter(pl.col("_progress") & ~pl.col("_failure")).select("file", "line")


# An MPI error code in an exception's message: `RuntimeError: Runtime error: MPI_ERR_OTHER: known
# error not in list` (mlcommons/training_results_v3.0#5, HugeCTR's MPI_Bcast)
MPI_ERROR_CODE = r"\bMPI_ERR_[A-Z]+\b"


def _mpi_code_under_ucx_failure(job: Job) -> pl.Expr:
    """An exception that only relays MPI's failure (its error code, or Open MPI's banner of a
    failed call, parsers/mpi_errors.py), where UCX, MPI's transport, said what failed: the
    nccl_error rule reads UCX's words (parsers/ucx.py; open-mpi/ompi#8003: `UCX  ERROR
    connect(...) failed: Connection timed out`, then `*** An error occurred in MPI_Allgather`)."""
    ucx = job.events.filter((pl.col("event") == "nccl_error") & (pl.col("family") == "ucx"))
    if ucx.is_empty():
        return pl.lit(False)
    relayed = pl.col("what").str.contains(MPI_ERROR_CODE) | (pl.col("exc_type") == "MPI error")
    return relayed.fill_null(False)


def _read_as_oom(job: Job) -> pl.DataFrame:
    return job.events.filter(pl.col("event").is_in(["oom", "host_oom"])).select("file", "line")


def _only_bare_waits(rows: pl.DataFrame) -> bool:
    """Whether every exception is a wait that gave up (its type says so: `TimeoutError`) and
    printed no message of its own."""
    bare = pl.col("exc_message").fill_null("").str.strip_chars() == ""
    return bool(rows.select((bare & pl.col("what").str.contains(WAITED)).all()).item())


def _unattributed(job: Job) -> list[Finding]:
    """Exceptions no line ties to a rank (not the launcher's summary of its children), when no
    rank's own exception is in the logs: a failure all the same (never "no failure found"
    over a traceback), blaming nobody. When every one that says what it was is a wait that
    timed out (`RuntimeError: Socket Timeout` from TCPStore, returnn#1621), the processes were
    waiting for another one: a consequence."""
    events = _thrown(job)
    # a rank's own exception is named by `_exceptions`; ranked waits that gave up are no
    # such thing (open-mmlab/mmdetection#6779: a `FileNotFoundError` no line ties to a rank,
    # then, after torchrun's restart, rank 1's store barrier timing out)
    ranked = events.filter(pl.col("rank").is_not_null() & pl.col("exc_type").is_not_null())
    if events.is_empty() or not ranked.filter(~_a_consequence(exception_text())).is_empty():
        return []
    events = events.filter(pl.col("rank").is_null())
    startup = startup_failures(job).select("file", "line")
    launcher = (pl.col("family") == "elastic").fill_null(False) | _launchers_word()
    rows = events.filter(pl.col("exc_type").is_not_null() & ~launcher).join(
        startup, on=["file", "line"], how="anti"
    )
    if rows.is_empty():
        return []
    # an out-of-memory error is the oom rule's; a message that only names running out of
    # memory as a possible cause is not one (fairseq#1088: "Workers can fall out of sync if
    # one of them runs out of memory")
    said_oom = (
        pl.col("exc_type").str.contains(OUT_OF_MEMORY)
        | pl.col("exc_message").str.contains(STATES_OUT_OF_MEMORY)
        | pl.col("exc_message").str.contains(KV_CACHE_OUT_OF_MEMORY)
    )
    # an exception from using a collective's garbled payload is the desync's symptom, whoever
    # raised it (logforensics/garbled.py)
    rows = rows.with_columns(exception_text().alias("what")).filter(
        ~said_oom.fill_null(False) & ~garbled() & ~_mpi_code_under_ucx_failure(job)
    )
    # whatever its words, an exception line a parser read as running out of memory
    rows = rows.join(_read_as_oom(job), on=["file", "line"], how="anti")
    rows = (
        rows.join(_watchdog_aborts(job, rows), on=["file", "line"], how="anti")
        .join(_worker_deaths_told(job, rows), on=["file", "line"], how="anti")
        .join(_actor_deaths_after_aborts(job, rows), on=["file", "line"], how="anti")
        .join(_logged_and_went_on(job, rows), on=["file", "line"], how="anti")
    )
    if not job.events.filter(pl.col("event") == "loss_keys").is_empty():
        # OpenMMLab's assertion is how each rank reports the loss terms it disagrees on: the
        # collective_mismatch rule reads them (its own event per rank)
        rows = rows.filter(~pl.col("what").str.contains(LOSS_TERMS_DIFFER, literal=True))
    if rows.is_empty():
        return []
    said = rows.filter(pl.col("exc_message").fill_null("").str.strip_chars() != "")
    consequences = said.select(_a_consequence(pl.col("what"))).to_series()
    if not said.is_empty() and consequences.all():
        if not said.get_column("what").str.contains(WAITED).all():
            return []  # NCCL errors, lost connections: their own rules read them
        waits = True
    elif _only_bare_waits(rows):
        # waits that gave up, printed with no message, and nothing else: as the waits above
        # (THUDM/slime#1562: Ray's `RayTaskError(TimeoutError): ray::RolloutManager.generate()`)
        waits = True
    else:
        waits = False
        # an exception that says a peer went away or a wait gave up follows from another's:
        # its own rule reads it, this finding names the others (gpustack#6019: gloo's
        # `Connection closed by peer` after a worker's ZMQError)
        rows = rows.filter(~_a_consequence(pl.col("what")))
        said = said.filter(~_a_consequence(pl.col("what")))
        # the timeout's teardown alone (`terminate called ... DistBackendError`)
        if rows.is_empty():
            return []
    shown = said if not said.is_empty() else rows
    whats = _raised_again_as_one(
        list(dict.fromkeys(shown.get_column("what").str.strip_chars(": ").to_list()))
    )
    count = _process_count(rows)
    # one error told apart only by numbers (`cuda:9 and cpu!`, `cuda:15 and cpu!`): each
    # process met the same fault, which is in what they all run (DeepSpeedExamples' 16
    # processes' device error in apply_rotary_pos_emb)
    alike = count > 1 and not waits and shown.select(_same_error().n_unique()).item() == 1
    if alike:
        whats = whats[:1]
    named = "; ".join(clipped(what) for what in whats[:3])
    if not waits and len(whats) == 1:
        failed = unstopped_worker(job) or one_reported_failure(job)
        if failed is not None:
            return [_of_unstopped(job, failed, rows, f"raised {named}", whats[0])]
        if (past := _past_the_gpus(job, rows, named, whats[0], count)) is not None:
            return [past]
        if alike and (listed := _as_many_listed(job, rows, named, whats[0], count)) is not None:
            return [listed]
    hosts = rows.get_column("host").drop_nulls().unique(maintain_order=True).to_list()
    on_hosts = f" on host{'s' if len(hosts) > 1 else ''} {', '.join(hosts)}" if hosts else ""
    who = f"{'A process' if count == 1 else f'{count} processes'}{on_hosts}"
    # caught and logged (an error record), with nothing after it: what the line says, no more
    logged = not waits and bool(rows.select(_logged().all()).item())
    verb = "logged" if logged else "raised"
    if alike:
        frames = shown.get_column("frame").drop_nulls()
        at = f" at {frames.item(0)}" if frames.n_unique() == 1 else ""
        summary = f"{who} whose rank the logs do not say raised the same error{at}: {named}"
    else:
        summary = f"{who} whose rank the logs do not say {verb} {named}"
    summary += (
        ": a wait for other ranks that timed out, so the rank they waited for is elsewhere."
        if waits
        else ""
        if named.endswith(("…", ".", "!"))
        else "."
    )
    every = alike and job.world_size is not None and count >= job.world_size.value
    if every:
        summary += (
            f" That is every process of the job (world size {job.world_size.value}): none "
            "left the others' path."
        )
    # when they all failed alike (or one error is all their tangled output lets through: the
    # tracebacks of a PanguWeather job's four workers interleaved character by character), the
    # one torchrun saw fail first is where to read first
    seen = first_observed_report(job) if (alike or len(whats) == 1) and not waits else None
    seen_first = None if seen is None else seen[0]
    if seen is not None:
        summary += f" torchrun saw rank {seen_first} fail first."
        # (the launcher's line that names it is evidence too)
        rows = pl.concat([rows, seen[1]], how="diagonal_relaxed")
    return [
        _from_rows(
            rows,
            "collective_timeout" if waits else "rank_exception",
            severity="error",
            part="consequence" if waits else "explanation",
            summary=summary,
            fix=_message_fix(whats, "a rank the logs do not name")
            or (ALIKE_FIX if alike else UNNAMED_FIX),
            ranks=[seen_first] if seen_first is not None else [],
            blames_nobody=seen_first is None,
            confidence="low",
            details={
                "exception": whats[0] if whats else None,
                "waiting": waits,
                "alike": count if alike else None,
                "every_process": every,
                **({"swallowed": True, "logged": True, "went_on": False} if logged else {}),
            },
        )
    ]


# The signals a process dies of by its own fault or from outside; SIGTERM, SIGINT and SIGHUP
# are how a launcher or a person stops the survivors, never a cause.
# events that say a rank saw the job break before it died (then dying was how it went down)
BROKEN = ("watchdog", "gloo", "nccl", "desync")
SIGNAL_FIXES = {
    "SIGKILL": (
        "SIGKILL comes from outside the process: most often the Linux OOM killer when the host "
        "ran out of memory (on that node: `dmesg -T | grep -i -E 'killed process|out of "
        "memory'` or `journalctl -k`), else the scheduler (a memory or time limit, a "
        "preemption) or a person. Cut the rank's host memory (DataLoader workers and prefetch, "
        "pinned memory, a dataset loaded whole by every rank) or give the job more."
    ),
    "SIGBUS": (
        "SIGBUS is a memory access the system could not back: most often shared memory "
        "(/dev/shm) running out, which DataLoader workers hand batches over and NCCL uses "
        "between GPUs of a node (on that node: `df -h /dev/shm`; give a container "
        "`--shm-size` or `--ipc=host`, or use fewer DataLoader workers), else a memory-mapped "
        "file cut short under the process, or the host out of memory."
    ),
    "SIGABRT": (
        "The process aborted: a failed C++ assertion, `std::terminate` after an uncaught C++ "
        "exception, or a CUDA error. Read the lines just before the abort in that rank's log "
        "(stderr); run with `PYTHONFAULTHANDLER=1` to get the Python stack."
    ),
}
SHARED_CRASH_FIX = (
    "Every rank crashed alike: look for what they share (the container image or build and the "
    "GPU architecture it supports, the driver and runtime versions, a code path every rank "
    "runs), not for one bad node. Run one rank with `PYTHONFAULTHANDLER=1` to see the Python "
    "stack it crashed in."
)
CRASH_FIX = (
    "A crash in native code on that rank: run it with `PYTHONFAULTHANDLER=1` (or `python -X "
    "faulthandler`) to get the Python stack, check the node's kernel log for GPU Xid errors, "
    "and compare the library builds (torch, CUDA, NCCL, extensions) with a healthy node. "
    "SIGBUS in a container is often /dev/shm running out: give it `--shm-size` or "
    "`--ipc=host`."
)


def _raised_again_as_one(whats: list[str]) -> list[str]:
    """`Type: message` texts, an error raised again with context before its message counted
    once (the innermost): a registry that builds a model re-raises what failed inside with
    each class's name in front (CFINet's log: `FileNotFoundError: [Errno 2] No such file or
    directory: '0'`, then `FileNotFoundError: FasterRCNN: FIRoIHead: [Errno 2] ...`)."""
    parts = [what.partition(": ") for what in whats]
    innermost = []
    for kind, _, message in parts:
        again = any(
            other_kind == kind and other != message and message.endswith(": " + other)
            for other_kind, _, other in parts
        )
        if not again:
            innermost.append(f"{kind}: {message}" if message else kind)
    return innermost or whats


def _signal_deaths(job: Job, explained: set[int]) -> list[Finding]:
    """Ranks that died of a signal without an exception of their own (see the module doc)."""
    events = job.events
    spawned = events.filter(pl.col("event") == "exception").with_columns(
        exception_text().str.extract(SPAWN_SIGNAL, 1).alias("signal")
    )
    deaths = (
        pl.concat(
            [
                _own_deaths(job).with_columns(_signal_of_death()),
                spawned.filter(pl.col("signal").is_not_null()),
            ],
            how="vertical_relaxed",
        )
        .with_columns(pl.coalesce("rank", _local_is_global(job)).alias("rank"))
        .filter(pl.col("rank").is_not_null())
    )
    deaths = (
        deaths.filter(pl.col("signal").is_in(list(FATAL.values())))
        .join(_stopped_by_the_agent(job).select("file", "line"), on=["file", "line"], how="anti")
        .join(killed_by_lightning(job), on=["file", "line"], how="anti")
    )
    reports = _broken_reports(job)
    deaths = _not_of_a_rank_that_lived_on(job, deaths, reports)
    broke = set(reports.get_column("rank").drop_nulls().to_list())
    deaths = deaths.filter(~pl.col("rank").is_in(list(explained | broke)))
    deaths = _not_an_abort_told_before(job, deaths)
    if deaths.is_empty():
        return []
    findings = []
    ranks_known = set(job.ranks_seen)
    for (signal,), rows in deaths.sort("file", "line").group_by("signal", maintain_order=True):
        ranks = sorted(rows.get_column("rank").unique().to_list())
        if signal == "SIGABRT" and _every_rank(ranks, broke, ranks_known):
            continue
        findings.append(_death(job, str(signal), ranks, rows))
    return findings


# a crash's rank read from the desync report's lagging rank (see below)
BY_DESYNC_REPORT = "desync_report"


def _not_of_a_rank_that_lived_on(
    job: Job, deaths: pl.DataFrame, reports: pl.DataFrame
) -> pl.DataFrame:
    """`deaths` with a crash the file's other lines gave a rank (`file_content`) taken from
    that rank when its own failure report (`reports`: the events that say a rank saw the job
    break) comes later in the file: it lived past the crash.
    The crash is then the rank's that the desync report names as the one that stopped joining,
    when it names one (NVIDIA/nccl#2213: `*** SIGSEGV received at time=... ***`, then `[Rank 0]
    Watchdog caught collective operation timeout` and `[1] finished collective #1155873, but
    didn't join collective #1155874`), else no rank's."""
    by_content = pl.col("rank_from") == "file_content"
    if deaths.is_empty() or deaths.filter(by_content).is_empty():
        return deaths
    lived_on = (
        deaths.filter(by_content)
        .select("file", "line", "rank")
        .join(reports.select("file", pl.col("line").alias("_report"), "rank"), on=["file", "rank"])
        .filter(pl.col("_report") > pl.col("line"))
        .select("file", "line", pl.lit(True).alias("_lived_on"))
        .unique()
    )
    if lived_on.is_empty():
        return deaths
    lagging = (
        job.events.filter(pl.col("event") == "desync_report")
        .get_column("values")
        .explode()
        .drop_nulls()
        .unique()
    )
    named = int(lagging.item()) if lagging.len() == 1 else None
    return (
        deaths.join(lived_on, on=["file", "line"], how="left")
        .with_columns(
            pl.when(pl.col("_lived_on").fill_null(False))
            .then(pl.lit(named, dtype=pl.Int32))
            .otherwise(pl.col("rank"))
            .alias("rank"),
            pl.when(pl.col("_lived_on").fill_null(False))
            .then(pl.lit(BY_DESYNC_REPORT))
            .otherwise(pl.col("rank_from"))
            .alias("rank_from"),
        )
        .drop("_lived_on")
        .filter(pl.col("rank").is_not_null())
    )


def _every_rank(aborted: list[int], broke: set[int], ranks_known: set[int]) -> bool:
    """Every rank aborted or timed out: the watchdogs' teardown, not one rank's death.

    A rank that aborted with no timeout line of its own while the others timed out was alive
    through their timeout (torchrun stops every worker at the first failure): its own watchdog
    took it down (huggingface/picotron_tutorial#6: rank 0). A lone rank's abort, with no other
    rank in the logs and no timeout, is that rank's own (pytorch/torchtitan#1066: the
    interpreter's fatal error).
    """
    together = bool(broke) or len(aborted) > 1
    return together and set(aborted) | broke >= ranks_known


# A process's death on a signal: its own handler's line, or the launcher's report of it
DEATH_EVENTS = ("fatal_signal", *EXIT_REPORTS)


def _own_deaths(job: Job) -> pl.DataFrame:
    """The deaths of processes, but crashes inside NCCL's code: those are NCCL's failures
    (the nccl_error rule's)."""
    return job.events.filter(pl.col("event").is_in(DEATH_EVENTS) & ~crashed_in_nccl())


def _signal_of_death() -> pl.Expr:
    """The signal a death event names, or the one its exit code stands for (`exit_signal`)."""
    return pl.coalesce("signal", exit_signal()).alias("signal")


# Signals that end a process after the timeouts as their consequence
AFTER_THE_TIMEOUTS = ("SIGABRT", "SIGKILL")


def _not_after_the_watchdog(job: Job, deaths: pl.DataFrame) -> pl.DataFrame:
    """`deaths` without the SIGABRTs written after a watchdog's timeout report: PyTorch aborts
    the process it times out in ("we are taking the entire process down"), and the launcher
    reports that exit later (KaiqiangXiong/CL-MVSNet#14: torchrun's `failed (exitcode: -6)` a
    minute after rank 0's watchdog). A crash that caused the hang comes before the timeouts.
    A SIGKILL after them is how a hung job is torn down (SGLang's server kills its own process
    tree once its schedulers' watchdogs fire, and the shell says `Killed`: sgl-project/sglang
    #3752), or a person's or the scheduler's kill: no cause either."""
    if deaths.is_empty():
        return deaths
    reports = job.events.filter(pl.col("event").is_in(WATCHDOG_ABORT_EVENTS))
    if reports.is_empty():
        return deaths
    first_report = reports.select(clock_of().min()).item()
    later = clock_of() > pl.lit(first_report) if first_report is not None else pl.lit(None)
    # lines without a clock: below a timeout report in the same file, as a console prints
    # them (argonne-lcf/alcf-nccl-tests: the shell's `191644 Aborted (core dumped)` under two
    # ranks' watchdog reports)
    first_in_file = reports.group_by("file").agg(pl.col("line").min().alias("_report_line"))
    below = pl.col("line") > pl.col("_report_line")
    later = pl.coalesce(later, pl.when(clock_of().is_null()).then(below))
    return (
        deaths.join(first_in_file, on="file", how="left")
        .filter(~(pl.col("signal").is_in(AFTER_THE_TIMEOUTS) & later).fill_null(False))
        .drop("_report_line")
    )


def _broken_reports(job: Job) -> pl.DataFrame:
    """The errors with which ranks said the job broke (BROKEN's families)."""
    return job.events.filter(pl.col("family").is_in(BROKEN) & (pl.col("severity") == "error"))


def _not_the_abort_of_a_broken_rank(job: Job, deaths: pl.DataFrame) -> pl.DataFrame:
    """`deaths` without the SIGABRTs of a launcher's local rank, on a job of one node, whose rank
    reported the job broken (its watchdog's timeout): PyTorch aborted it, wherever the paste put
    the launcher's word (QwenAudio/CosyVoice#517: rank 0's timeout in one window of the paste,
    torchrun's `failed (exitcode: -6) local_rank: 0` in the other)."""
    broke = _broken_reports(job).get_column("rank")
    its_rank = _local_is_global(job)
    aborted_broken = (pl.col("signal") == "SIGABRT") & its_rank.is_in(broke.drop_nulls().implode())
    return deaths.filter(~aborted_broken.fill_null(False))


def _not_an_abort_told_before(job: Job, deaths: pl.DataFrame) -> pl.DataFrame:
    """`deaths` without the aborts a failure reported before them explains: a watchdog's
    timeout, an uncaught C++ exception, the rank's GPU out of memory."""
    return _not_after_an_oom(job, _not_after_a_terminate(job, _not_after_the_watchdog(job, deaths)))


def _not_after_an_oom(job: Job, deaths: pl.DataFrame) -> pl.DataFrame:
    """`deaths` without the SIGABRTs of a rank whose GPU ran out of memory above them in the
    same file: a framework that aborts on a failed allocation (horovod/horovod#1350: TensorFlow's
    `failed to allocate 2.96G ... CUDA_ERROR_OUT_OF_MEMORY`, then `mpirun noticed that process
    rank 1 ... exited on signal 6 (Aborted)`) died of the OOM the `oom` rule reports."""
    ooms = job.events.filter((pl.col("event") == "oom") & pl.col("rank").is_not_null())
    if deaths.is_empty() or ooms.is_empty():
        return deaths
    first_oom = ooms.group_by("file", "rank").agg(pl.col("line").min().alias("_told_at"))
    return _without_aborts_below(deaths, first_oom, on=["file", "rank"])


def _without_aborts_below(
    deaths: pl.DataFrame, told: pl.DataFrame, on: list[str], own: pl.Expr | None = None
) -> pl.DataFrame:
    """`deaths` without the SIGABRTs below a failure `told` at `_told_at` in the rows that
    match them `on` (and that `own` keeps): the abort ended the process that failure had."""
    indexed = deaths.with_row_index("_death")
    below = indexed.join(told, on=on).filter(
        (pl.col("signal") == "SIGABRT") & (pl.col("line") > pl.col("_told_at"))
    )
    aborted = (below if own is None else below.filter(own)).get_column("_death")
    return indexed.filter(~pl.col("_death").is_in(aborted.implode())).drop("_death")


def _names_an_exception() -> pl.Expr:
    """A C++ terminate that names the exception it ends on (`... after throwing an instance
    of ...`, or a `what():`), not `terminate called without an active exception`."""
    return pl.col("exc_type").is_not_null() | pl.col("exc_message").is_not_null()


def _not_after_a_terminate(job: Job, deaths: pl.DataFrame) -> pl.DataFrame:
    """`deaths` without the SIGABRTs reported below an uncaught C++ exception in the same file
    (`terminate called after throwing an instance of ...`): C++ aborts the process it was
    thrown in, so the exception its `what():` names is the failure, read as one (mit-han-lab/
    distrifuser#13: both processes' `NCCL Error 5: invalid usage`, then torchrun's `failed
    (exitcode: -6) local_rank: 0`)."""
    # (one that names no exception, `terminate called without an active exception`, tells no
    # failure of its own: the abort is the failure, NVIDIA/Megatron-LM#1874)
    terminated = job.events.filter((pl.col("event") == "cpp_terminate") & _names_an_exception())
    if deaths.is_empty() or terminated.is_empty():
        return deaths
    # the abort of a process the terminate does not name as another's
    terminates = terminated.select(
        "file", pl.col("line").alias("_told_at"), pl.col("rank").alias("_terminate_rank")
    )
    own = pl.col("_terminate_rank").is_null() | pl.col("_terminate_rank").eq_missing(pl.col("rank"))
    return _without_aborts_below(deaths, terminates, on=["file"], own=own)


def _unattributed_deaths(job: Job) -> list[Finding]:
    """A process no line ties to a rank crashed on a fatal signal (a native library's crash
    banner: UCX's `Caught signal 11 (Segmentation fault: ...)`, NVIDIA/nccl#1996), or the
    launcher says a worker died of one with its local rank cut off (tatsu-lab/stanford_alpaca
    #183: `failed (exitcode: -9) local_rankroot/...`): a failure all the same, never "no failure
    found", blaming nobody, said with the host and process the banner names."""
    crashes = (
        _own_deaths(job)
        .filter(pl.col("rank").is_null())
        .with_columns(_signal_of_death())
        .filter(pl.col("signal").is_in(list(FATAL.values())) | _flagged("signal_cut"))
        .join(killed_by_lightning(job), on=["file", "line"], how="anti")
        .sort("file", "line")
    )
    crashes = _not_an_abort_told_before(job, _not_the_abort_of_a_broken_rank(job, crashes))
    if crashes.is_empty():
        return []
    first = crashes.row(0, named=True)
    if first["signal"] is None:
        return [_signal_cut(crashes, first)]
    failed = unstopped_worker(job)
    if failed is not None and first["pid"] in (None, failed.pid):
        signal = str(first["signal"])
        what = "was killed (SIGKILL)" if signal == "SIGKILL" else f"crashed on {signal}"
        return [_of_unstopped(job, failed, crashes, what, signal)]
    host, pid = first.get("host"), first.get("pid")
    place = f"host {host}, pid {pid}" if host and pid is not None else ""
    place = place or (f"pid {pid}" if pid is not None else "")
    count = crashes.height
    who = "A process" if count == 1 else f"{count} processes"
    if first["signal"] == "SIGKILL":
        summary = (
            f"{who} whose rank the logs do not say {'was' if count == 1 else 'were'} killed "
            "(SIGKILL)" + (f" ({place})" if place else "") + ": from outside the process, "
            "most often by the OOM killer or the scheduler; the others were then stopped."
        )
    else:
        where = f", innermost in {first['frame']}" if first.get("frame") else ""
        summary = (
            f"{who} whose rank the logs do not say crashed on {first['signal']}"
            + (f" ({place})" if place else "")
            + f"{where}: the process died in native code, and the others waited or were stopped."
        )
    return [
        _unblamed(
            crashes,
            part="explanation",
            summary=summary,
            fix=SIGNAL_FIXES.get(str(first["signal"]), CRASH_FIX),
            ranks=[],
            details={"exception": first["signal"], "signal": first["signal"]},
        )
    ]


def _signal_cut(crashes: pl.DataFrame, first: dict[str, object]) -> Finding:
    """A process whose crash handler announced a signal that no line of these logs names
    (Open MPI's `*** Process received signal ***`, the paste cut before `Signal:`,
    NVIDIA/nccl#1669): a crash all the same, blaming nobody."""
    host, pid = first.get("host"), first.get("pid")
    place = f" (host {host}, pid {pid})" if host and pid is not None else ""
    return _unblamed(
        crashes,
        part="explanation",
        summary=(
            f"A process whose rank the logs do not say crashed on a signal{place}: its crash "
            "handler announced it, and the lines naming the signal and where it struck are cut "
            "from these logs."
        ),
        fix=CRASH_FIX,
        ranks=[],
        details={"exception": "a signal", "signal": None, "signal_cut": True},
    )


def _fatal_fix(job: Job, who: str, it: str) -> str:
    return FATAL_FIX.format(who=who, it=it) + (RECORD_HINT if shows_torchrun(job) else "")


def _of_unstopped(
    job: Job, failed: UnstoppedWorker | ListedFailure, rows: pl.DataFrame, what: str, said: str
) -> Finding:
    """A failure no line ties to a rank, pinned on the worker torchrun did not stop, or on the
    one its summary lists."""
    signal = said if said in FATAL.values() else None
    fix = SIGNAL_FIXES.get(said) if signal else _message_fix([said], rank_list([failed.rank]))
    return _from_rows(
        pl.concat([rows, failed.stopped.head(3)], how="diagonal_relaxed").sort("file", "line"),
        severity="error",
        part="explanation",
        summary=(
            f"Rank {failed.rank} {what}: the logs do not tie the failure to a rank, but "
            f"{failed.why()}."
        ),
        fix=fix or _fatal_fix(job, rank_list([failed.rank]), it="it"),
        ranks=[failed.rank],
        confidence="medium",
        details={"exception": said, "signal": signal, "pid": failed.pid, "from_stops": True},
    )


def _as_many_listed(
    job: Job, rows: pl.DataFrame, named: str, said: str, count: int
) -> Finding | None:
    """The same error from `count` processes no line names, where torchrun's summary lists
    exactly that many workers as failed: those are the processes, the first it observed first
    (searobbersduck/AIGC_Note: two unprefixed rich tracebacks of one ImportError, then the
    summary's ranks 0 and 1, both exit code 1)."""
    listed = listed_failures(job)
    if listed.height != count:
        return None
    ranks = [int(rank) for rank in listed.get_column("rank")]
    codes = sorted({int(code) for code in listed.get_column("exitcode")})
    said_codes = ", ".join(str(code) for code in codes)
    first = first_observed_failure(job)
    said_first = f", rank {first} first" if first is not None else ""
    return _from_rows(
        pl.concat([rows, listed.head(3)], how="diagonal_relaxed").sort("file", "line"),
        severity="error",
        part="explanation",
        summary=(
            f"{capitalized(rank_list(sorted(ranks)))} raised the same error: {named}. The logs "
            f"do not tie the tracebacks to ranks, but torchrun's summary lists as many workers "
            f"as failed (exit code {said_codes}){said_first}."
        ),
        fix=_message_fix([said], rank_list(sorted(ranks))) or ALIKE_FIX,
        ranks=sorted(ranks),
        culprit_ranks=[first] if first is not None else [],
        confidence="medium",
        details={"exception": said, "alike": count, "from_summary": True},
    )


def _past_the_gpus(
    job: Job, rows: pl.DataFrame, named: str, said: str, failed: int
) -> Finding | None:
    """`invalid device ordinal` from processes no line names, on a job of one node whose launch
    command says how many it started: devices go by local rank, so the ones that failed are the
    highest local ranks (Ultra-Fast-Lane-Detection#193: `--nproc_per_node=2` on a machine
    showing one GPU, one `invalid device ordinal`: local rank 1)."""
    world = job.world_size
    if not re.search(ORDINAL, said) or world is None or world.source != "launch":
        return None
    if not job.one_node() or not 0 < failed < world.value:
        return None
    ranks = list(range(world.value - failed, world.value))
    who = rank_list(ranks)
    return _from_rows(
        rows,
        severity="error",
        part="explanation",
        summary=(
            f"{capitalized(who)} raised {named}: the logs do not tie the error to a rank, but "
            f"{world.value} processes were started on one node, each asking for the GPU of its "
            "local rank, and the ones past the GPUs the node shows are the highest local ranks "
            f"({failed} of {world.value} failed)."
        ),
        fix=ORDINAL_FIX.format(who=capitalized(who), its="its"),
        ranks=ranks,
        confidence="medium",
        details={"exception": said, "started": world.value},
    )


def _local_is_global(job: Job) -> pl.Expr:
    """A launcher's `local_rank` as the global rank when the logs show a single node (one host
    at most, and no world larger than its local ranks): torchrun's `failed (exitcode: -9)
    local_rank: 3` on a one-node job is rank 3."""
    if job.events.get_column("local_rank").drop_nulls().is_empty() or not job.one_node():
        return pl.lit(None, dtype=pl.Int32)
    return pl.col("local_rank")


# What most often kills every rank of a node alike by these signals
SHARED_DEATH_CAUSES = {
    "SIGKILL": "most likely because their host ran out of memory (the OOM killer)",
    "SIGBUS": "most likely because their node's shared memory (/dev/shm) ran out",
}


# A DataLoader worker's crash that is the rank's data loading failing: a segfault or a
# floating-point fault (a bus error is shared memory running out: the oom rule's)
WORKER_CRASH_SIGNALS = ("SIGSEGV", "SIGFPE")
WORKER_CRASH_FIX = (
    "DataLoader worker processes of {who} crashed in native code. Run the loader with "
    "`num_workers=0` to see where (a dataset's C extension, an image or audio decoder, a "
    "library that is not safe to fork). Where the script set up MPI, NCCL or CUDA before the "
    "workers started, start them with `multiprocessing_context='spawn'` (or 'forkserver') on "
    "the DataLoader instead of fork."
)


def _loader_worker_crashes(job: Job) -> list[Finding]:
    """DataLoader workers that reported their own crash (`ERROR: Unexpected segmentation fault
    encountered in worker.`) where no rank's exception or death is in the logs: the rank's
    next batch fails with them, whether or not the logs reach its `DataLoader worker (pid ...)
    exited unexpectedly` (horovod/horovod#1215: the workers of ranks 0, 1 and 4-6 crashed
    under mpirun, forked from processes that had set up MPI)."""
    crashes = job.events.filter(
        (pl.col("event") == "loader_worker_crash")
        & pl.col("signal").is_in(list(WORKER_CRASH_SIGNALS))
    ).sort("file", "line")
    if crashes.is_empty():
        return []
    ranks = sorted(crashes.get_column("rank").drop_nulls().unique().to_list())
    signal = str(crashes.get_column("signal").item(0))
    said = str(crashes.get_column("exc_message").item(0))
    who = rank_list(ranks) if ranks else "a rank the logs do not name"
    count = crashes.height
    summary = (
        f"DataLoader workers of {who} crashed ({signal}; {count} report"
        f"{'s' if count != 1 else ''}: `{clipped(said)}`): a worker process died in the "
        "dataset's or a library's native code, and the rank's data loading failed with it."
    )
    key = placed_keys(job, crashes).get_column("key").drop_nulls()
    return [
        _from_rows(
            crashes,
            severity="error",
            part="explanation",
            summary=summary,
            fix=WORKER_CRASH_FIX.format(who=who),
            ranks=ranks,
            blames_nobody=not ranks,
            order=None if key.is_empty() else float(key.min()) + AFTER_MARK,
            confidence="medium",
            details=_signal_details(signal, loader_worker=True),
        )
    ]


def _death(job: Job, signal: str, ranks: list[int], rows: pl.DataFrame) -> Finding:
    placed = placed_keys(job, rows)
    codes = rows.get_column("exitcode").drop_nulls()
    told = f"exit code {int(codes.item(0))}" if not codes.is_empty() else ""
    if not codes.is_empty() and int(codes.item(0)) >= SHELL_SIGNALED:
        told += f", which stands for {signal}"  # a shell's or a wrapper's, not a launcher's
    shell = rows.filter(pl.col("event") == "fatal_signal").get_column("exc_message").drop_nulls()
    said = ", ".join(filter(None, [told, f"`{shell.item(0)}`" if not shell.is_empty() else ""]))
    who = rank_list(ranks).capitalize()
    verb = "was killed" if signal == "SIGKILL" else "died"
    shared = _shared_by_all(job, ranks)
    rows = pl.concat([_bare_terminates_above(job, rows), rows], how="diagonal_relaxed")
    at_exit = None if shared else finished_before_all(job, rows)
    if at_exit is not None:
        return _died_at_exit(rows, f"{who} {verb} by {signal}", said, signal, at_exit)
    summary = (
        f"{who} {verb} by {signal}"
        + (f" ({said})" if said else "")
        + (
            ", without an exception or a failed collective before it: "
            + (
                f"every rank the logs show died so, {SHARED_DEATH_CAUSES[signal]}, not one "
                "rank's departure."
                if shared and signal in SHARED_DEATH_CAUSES
                else "every rank the logs show died so, of a cause they share (the build, the "
                "hardware's support, a code path every rank runs), not one rank's departure."
                if shared
                else f"{'it' if len(ranks) == 1 else 'they'} left the job, and the others "
                "waited or were stopped."
            )
        )
    )
    inferred = rows.filter(pl.col("rank_from") == BY_DESYNC_REPORT).height > 0
    if inferred:
        summary += (
            f" The crash line names no rank: the desync report names {rank_list(ranks)} as the "
            "one that stopped joining."
        )
    # a launcher's summary entry opens on its bare `[0]:`: its last field line (`traceback :
    # Signal 9 (SIGKILL) received by PID 208585`) is quoted with it
    evidence, total = evidence_from(with_exception_lines(rows))
    key = placed.get_column("key").drop_nulls()
    return Finding(
        kind="rank_exception",
        severity="error",
        part="explanation",
        summary=summary,
        # (SIGKILL and SIGBUS shared by every rank are the host's memory or /dev/shm running out)
        fix=SHARED_CRASH_FIX
        if shared and signal not in ("SIGKILL", "SIGBUS")
        else SIGNAL_FIXES.get(signal, CRASH_FIX),
        ranks=ranks,
        blames_nobody=shared,
        evidence=evidence,
        evidence_total=total,
        order=None if key.is_empty() else float(key.min()) + AFTER_MARK,
        timestamp=earliest_time(rows),
        confidence="medium" if inferred else "high",
        details=_signal_details(signal),
    )


def _signal_details(signal: str, **more: object) -> dict[str, object]:
    """The details of a death by `signal`: it is the exception, neither caught nor logged."""
    return {"exception": signal, "signal": signal, "swallowed": False, "logged": False, **more}


EXIT_CRASH_FIX = (
    "The run's work was done; the process crashed on its way out. Look at what runs at exit: "
    "objects destroyed while a thread or a CUDA stream still uses them (`pure virtual method "
    "called`, `terminate called without an active exception`), a profiler or tracer left "
    "running, `atexit` handlers. Stop profilers and join threads before the end of the "
    "script, and call `dist.destroy_process_group()` once every rank is done; run with "
    "`PYTHONFAULTHANDLER=1` to see where it crashes."
)


def _died_at_exit(
    rows: pl.DataFrame, died: str, said: str, signal: str, mark: tuple[str, int]
) -> Finding:
    """A rank that died of a signal only after its finish mark: the run's work was done and its
    teardown crashed, failing the job by its exit code (NVIDIA/Megatron-LM#1874: the training
    and validation done, `destroy_process_group() was not called` on each rank, then `pure
    virtual method called` and torchrun's `failed (exitcode: -6) local_rank: 0`)."""
    summary = (
        f"{died}" + (f" ({said})" if said else "") + f" after the run had finished "
        f"({mark[0]}:{mark[1]}): a crash while the process exited, not in training. Its exit "
        "code fails the job."
    )
    return _from_rows(
        rows.sort("file", "line"),
        severity="error",
        part="explanation",
        summary=summary,
        fix=EXIT_CRASH_FIX,
        ranks=sorted(rows.get_column("rank").drop_nulls().unique().to_list()),
        confidence="medium",
        details=_signal_details(signal, at_exit={"file": mark[0], "line": mark[1]}),
    )


# How many lines above a launcher's report of a death the process's own abort may stand (the
# launcher's stops of the other workers come between)
TERMINATE_REACH = 20


def _bare_terminates_above(job: Job, rows: pl.DataFrame) -> pl.DataFrame:
    """C++'s `terminate called` naming no exception (`... without an active exception`,
    `... recursively`) above a death in its file, of no rank or the dead rank's: how that
    process came to abort, quoted with it."""
    bare = job.events.filter((pl.col("event") == "cpp_terminate") & ~_names_an_exception())
    if bare.is_empty():
        return bare.select("file", "line", "text", "rank")
    deaths = rows.select(
        "file", pl.col("line").cast(pl.Int64).alias("_death"), pl.col("rank").alias("_rank")
    )
    return (
        bare.select("file", "line", "text", "rank")
        .join(deaths, on="file")
        .filter(
            (pl.col("line") < pl.col("_death"))
            & (pl.col("line") >= pl.col("_death") - TERMINATE_REACH)
            & (pl.col("rank").is_null() | (pl.col("rank") == pl.col("_rank")))
        )
        .with_columns(pl.coalesce("rank", "_rank").alias("rank"))
        .sort("file", "line")
        .unique(["file", "_death"], keep="last", maintain_order=True)
        .unique(["file", "line"], maintain_order=True)
        .drop("_death", "_rank")
    )


def _process_count(rows: pl.DataFrame) -> int:
    """How many processes unranked exception rows stand for: a kernel's failed assertion is
    printed by each failing GPU thread, and the host's `device-side assert triggered` follows
    in the same process, so a file's device-side rows (per host and pid) are one process
    (huggingface/pytorch-image-models#1077: two threads' assertions and the RuntimeError)."""
    device_side = rows.filter(_same_error() == CUDA_ASSERTION)
    return rows.height - device_side.height + device_side.select("file", "host", "pid").n_unique()


def _same_error() -> pl.Expr:
    """What makes two exceptions the same error: the type and message with numbers masked. A
    kernel's failed assertion and the host's `device-side assert triggered` after it are one
    error, whichever a rank's lines show (jaeyun95/error_collections: the assertion lines on
    rank 0, the host's RuntimeError on rank 1)."""
    message = pl.col("exc_message").fill_null("")
    device_side = (pl.col("exc_type") == CUDA_ASSERTION) | message.str.contains(
        "device-side assert triggered", literal=True
    )
    return (
        pl.when(device_side)
        .then(pl.lit(CUDA_ASSERTION))
        .otherwise(
            pl.concat_str(
                pl.col("exc_type"),
                message.str.replace_all(r"\d+", "N").str.slice(0, 200),
                separator=": ",
            )
        )
    )


# An exception that ends a process by pointing back at another's error (vLLM's engine after a
# worker logged its traceback and exited: `Exception: WorkerProc initialization failed due to an
# exception in a background process. See stack trace for root cause.`; vllm-project/vllm#20670)
POINTS_BACK = r"(?i)\broot cause\b|exception in a background process"


def _ended_by(job: Job, rows: pl.DataFrame) -> str | None:
    """What ended the job because of an error a process logged (`rows`): an exception after the
    first of them, raised rather than logged, that points back at another process's error;
    None when no such exception follows (the error may have been caught and the run went on)."""
    first = rows.sort("file", "line").row(0, named=True)
    later = _thrown(job).filter(
        (pl.col("file") == first["file"])
        & (pl.col("line") > first["line"])
        & ~_logged()
        & exception_text().str.contains(POINTS_BACK)
    )
    if later.is_empty():
        return None
    return later.sort("line").select(exception_text()).item(0, 0)


def _finding(job: Job, rows: pl.DataFrame, all_primary: pl.DataFrame) -> Finding:
    first = rows.row(0, named=True)
    ranks = sorted(rows.get_column("rank").unique().to_list())
    exc = first["exc_type"]
    message = (first["exc_message"] or "").strip()
    where = f" at {first['frame']}" if first["frame"] else ""
    after = [_after_effect(job, int(row["rank"]), row["key"]) for row in rows.iter_rows(named=True)]
    logged = bool(rows.get_column("logged").all())
    went_on = all(kept_going for kept_going, _, _ in after)
    ended_by = _ended_by(job, rows) if logged and not went_on else None
    swallowed = (logged and ended_by is None) or went_on
    step, stage = next(((s, st) for _, s, st in after if s is not None), (None, None))
    everyone = set(all_primary.get_column("rank").unique().to_list())
    on_all = job.progress is not None and set(job.progress.ranks) <= everyone
    shared = _shared_by_all(job, ranks)
    who = rank_list(ranks).capitalize()
    verb = "logged" if logged else "raised"
    text = f"{who} {verb} {exc}" + (f" ({clipped(message)})" if message else "") + where
    # the spawning parent's own exception, its worker's traceback cut from the paste
    # (facebookresearch/detectron2#1439: `Exception:`, then `-- Process 1 terminated with the`)
    relayed_only = bool(first["frame"] and re.search(SPAWN_JOIN_FRAME, first["frame"]))
    if relayed_only:
        text = (
            f"{who} failed under torch.multiprocessing.spawn: the parent's {exc} names "
            f"{'it' if len(ranks) == 1 else 'them'}, but the worker's own error is not in these "
            "lines"
        )
    between_steps = (
        step is not None and job.progress is not None and stage == job.progress.stage_order[-1]
    )
    if between_steps:
        text += f" after step {step}"  # between two steps: after the last stage of one
    elif step is not None:
        text += f" during step {step} ({stage})"
    fix: str | None
    if swallowed:
        # logged at error level, with nothing showing the rank going on after it (vLLM logs a
        # worker's fatal traceback before the worker exits): only what the line says
        text += ", caught it and kept going." if went_on else "."
        fix = SWALLOWED_FIX
    else:
        if ended_by is not None:
            text += f"; the job then ended on it (`{clipped(ended_by)}`)"
        text += "."
        its = "its" if len(ranks) == 1 else "their"
        fix = (
            SPAWN_RELAYED_FIX
            if relayed_only
            else ORDINAL_FIX.format(who=rank_list(ranks).capitalize(), its=its)
            if re.search(ORDINAL, message)
            else _message_fix([f"{exc}: {message}"], rank_list(ranks))
        )
        if fix is None and not shared:  # when no rank left first, the others did not wait
            it = "it" if len(ranks) == 1 else "they"
            fix = _fatal_fix(job, rank_list(ranks), it=it)
    if len(ranks) > 1:
        fix = COMMON_FIX + (f" {fix}" if fix else "")
    if on_all or shared:
        text += " Every rank raised an exception like it, so it is not one rank's divergence."
    # when all failed alike, the one torchrun saw fail first is where to read first
    seen_first = first_observed_failure(job) if shared else None
    if seen_first is not None and seen_first in ranks:
        text += f" torchrun saw rank {seen_first} fail first."
    else:
        seen_first = None
    evidence, total = evidence_from(with_exception_lines(rows))
    key = rows.get_column("key").drop_nulls()
    return Finding(
        kind="rank_exception",
        # caught and logged, it is a failure only if the rank left the path (the reasoner says)
        # or what ended the job points back at it
        severity="warning" if swallowed and logged else "error",
        part="explanation",
        summary=text,
        fix=fix,
        ranks=ranks,
        blames_nobody=shared and seen_first is None,
        culprit_ranks=[seen_first] if seen_first is not None else [],
        step=step,
        stage=stage,
        evidence=evidence,
        evidence_total=total,
        order=None if key.is_empty() else float(key.min()) + AFTER_MARK,
        timestamp=earliest_time(rows),
        confidence="high" if not key.is_empty() or not swallowed else "medium",
        details={
            "exception": exc,
            "message": message[:500],
            "swallowed": swallowed,
            "logged": logged,
            "went_on": went_on,
            "between_steps": between_steps,
            "frame": first["frame"],
        }
        | ({"relayed_only": True} if relayed_only else {}),
    )


def with_exception_lines(rows: pl.DataFrame) -> pl.DataFrame:
    """Each traceback's first line and its exception line: where it began and what it says."""
    ends = rows.filter(pl.col("end_text").is_not_null()).select(
        "file", pl.col("end_line").alias("line"), pl.col("end_text").alias("text"), "rank"
    )
    starts = rows.select("file", "line", "text", "rank")
    return pl.concat([starts, ends], how="vertical_relaxed").sort("file", "line")


def _after_effect(job: Job, rank: int, key: int | None) -> tuple[bool, int | None, str | None]:
    """Whether the rank went on after the exception, and the step it happened in.

    Placed by the marks around it: marks after it mean it was caught. Unplaced (the traceback
    is in another file than the marks): a rank whose marks go on as far as the others' did
    not die of it, so it was caught too."""
    progress = job.progress
    if progress is None or rank not in progress.ranks:
        return False, None, None
    own = progress.marks.filter(pl.col("rank") == rank)
    if key is None:
        stopped = any(d.rank == rank and d.kind == "stopped" for d in progress.departures)
        return not stopped and own.height > 1, None, None
    at = progress.key_of(int(key))
    kept_going = not own.filter(pl.col("key") > key).is_empty()
    return kept_going, at["step"], at["stage"]


RULE = Rule(kind="rank_exception", check=check, specificity=25)
