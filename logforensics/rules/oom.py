"""Out of GPU memory on a rank. The rank dies or leaves the loop; the others then wait in their
next collective until a watchdog fires, so the OOM, not the timeout, is the cause.

NCCL's own allocations fail the same way (`include/alloc.h:178 NCCL WARN Cuda failure 'out of
memory'`): the process's NCCL could not set up its buffers, and its rank is the one the NCCL
process map gives it.

Host memory runs out too: SLURM's cgroup OOM killer ends the step's tasks (`srun: error:
nid001277: tasks 1-3: Out Of Memory`). Launched one task per rank, the task ids are the ranks;
under torchrun (an agent per node) a task is a node, and its ranks are not told."""

from __future__ import annotations

import re
from dataclasses import replace

import polars as pl

from logforensics.busy_rank import LOADING
from logforensics.findings import Finding, evidence_from
from logforensics.job import Job
from logforensics.placement import earliest_raise, earliest_time, place_with_step, placed_finding
from logforensics.registry import Rule
from logforensics.rules.rank_exception import (
    HARDWARE,
    killed_by_lightning,
    out_of_host_memory,
    out_of_shared_memory,
)
from logforensics.stopped_workers import no_line_ties, one_reported_failure
from logforensics.text import capitalized, clipped, duration, rank_list, rank_ranges
from parsers.process_exit import FAILED_HOST_ALLOCATION
from parsers.progress_bars import bar_name
from parsers.ray_memory import MONITOR as RAY_MONITOR
from parsers.traceback import (
    KV_CACHE_OUT_OF_MEMORY,
    OTHER_DEVICE_OUT_OF_MEMORY,
    XLA_OUT_OF_MEMORY,
)

SKIP_FIX = (
    " Skipping a batch on one rank desynchronises the collectives: decide the skip together "
    "(`dist.all_reduce` of an OOM flag with `ReduceOp.MAX`, then every rank skips) or let the "
    "error propagate."
)
NCCL_FIX = (
    " NCCL needs GPU memory of its own for its buffers (per peer and channel): leave it room "
    "before the first collective, or shrink them with NCCL_BUFFSIZE and fewer channels "
    "(NCCL_MAX_NCHANNELS)."
)
FIX = (
    "Reduce the memory {who} needs at that step: a smaller (or length-capped) batch, gradient "
    "accumulation, activation checkpointing, or freeing references kept across steps. A rank "
    "that needs more than the others often sees longer sequences or a larger shard of data."
)


KV_CACHE_FIX = (
    " Here vLLM's engine found no GPU memory left for its KV cache as it started: free what "
    "the training model holds on the same GPUs before the engine starts (offload it), raise "
    "`gpu_memory_utilization`, or lower `max_model_len`."
)


HOST_FIX = (
    "The processes on {where} used more host memory than the job may: raise the step's memory "
    "(`#SBATCH --mem` / `--mem-per-gpu`) or cut what each rank holds in host memory "
    "(DataLoader workers and prefetch_factor, pinned memory, a dataset loaded whole by every "
    "rank, checkpoints gathered on one rank). `sacct -j <job> -o JobID,MaxRSS,ReqMem` shows "
    "how close each step came."
)


SHARED_MEMORY_FIX = (
    "Give the node's shared memory room: a container's /dev/shm is 64 MB unless told (`docker "
    "run --shm-size=16g` or `--ipc=host`; on Kubernetes a memory-backed emptyDir mounted at "
    "/dev/shm); `df -h /dev/shm` on the node shows its size. DataLoader workers hand every "
    "batch over through it: fewer workers (`num_workers`) or a smaller `prefetch_factor` need "
    "less."
)


def check(job: Job) -> list[Finding]:
    host = _host(job)
    return (
        _gpu(job)
        + (host or _killed(job) or _ray_workers_died(job) or _loader_workers_bus_errors(job))
        or _vanished_while_loading(job)
        or _memory_climb(job)
    )


# A process's own report of its resident host memory, with a size (wenet's `RSS MEM USE:
# 212.04G`, wenet-e2e/wenet#989)
HOST_MEMORY_REPORT = r"\bRSS\b[^\d\n]{0,16}(?P<size>\d+(?:\.\d+)?) ?(?P<unit>[KMGT])(?:i?B)?\b"
MEMORY_WORDS = ["RSS"]  # a cheap test before the pattern above
GB_PER_UNIT = {"K": 2**-20, "M": 2**-10, "G": 1.0, "T": 1024.0}
CLIMB = 4  # the last report at least this many times the first,
CLIMB_TO_GB = 16  # and at least this many GB
MIN_REPORTS = 3


def _memory_climb(job: Job) -> list[Finding]:
    """A rank's own reports of host memory climb many-fold, the last the highest, and its log
    ends there (wenet-e2e/wenet#989: rank 0's `RSS MEM USE` from 5.11G to 212.04G in 88 s,
    the system then killed it): the kernel's OOM killer leaves no line in the process's own
    log, the climb is its trace. Low confidence: read from the numbers alone."""
    size = pl.col("text").str.extract_groups(HOST_MEMORY_REPORT)
    ranked = job.events.filter(pl.col("rank").is_not_null())
    reports = (
        ranked.filter(pl.col("text").str.contains_any(MEMORY_WORDS))
        .unique(["file", "line"], keep="first")
        .with_columns(
            (
                size.struct.field("size").cast(pl.Float64, strict=False)
                * size.struct.field("unit").replace_strict(GB_PER_UNIT, default=None)
            ).alias("_gb")
        )
        .filter(pl.col("_gb").is_not_null())
        .sort("file", "line")
    )
    if reports.is_empty():
        return []
    # where the rank's log ends: its file's last line when the file is the rank's alone, else
    # its last line the analyzer read
    last_events = ranked.group_by("rank", "file").agg(pl.col("line").max().alias("_last_line"))
    own_files = job.file_stats.filter(pl.col("rank").is_not_null()).select(
        "file", "rank", pl.col("last_line").cast(pl.UInt32).alias("_file_end")
    )
    last_events = last_events.join(
        own_files, on=["file", "rank"], how="left", nulls_equal=False
    ).select("rank", "file", pl.coalesce("_file_end", "_last_line").alias("_last_line"))
    climbs = (
        reports.group_by("rank", maintain_order=True)
        .agg(
            pl.len().alias("_reports"),
            pl.col("_gb").first().alias("_first"),
            pl.col("_gb").last().alias("_last"),
            pl.col("_gb").max().alias("_peak"),
            pl.col("line").last().alias("_line"),
            pl.col("file").last().alias("file"),
        )
        .join(last_events, on=["rank", "file"])
        .filter(
            (pl.col("_reports") >= MIN_REPORTS)
            & (pl.col("_last") == pl.col("_peak"))
            & (pl.col("_last") >= CLIMB * pl.col("_first"))
            & (pl.col("_last") >= CLIMB_TO_GB)
            & (pl.col("_line") == pl.col("_last_line"))
        )
    )
    return [_climb_finding(job, reports, row) for row in climbs.iter_rows(named=True)]


def _climb_finding(job: Job, reports: pl.DataFrame, climb: dict) -> Finding:
    rank = int(climb["rank"])
    own = reports.filter(pl.col("rank") == rank)
    times = own.get_column("timestamp").drop_nulls()
    over = (
        f" in {duration((times.max() - times.min()).total_seconds())}"
        if times.len() > 1 and times.max() > times.min()
        else ""
    )
    shown = pl.concat([own.head(1), own.tail(1)]).unique(["file", "line"], maintain_order=True)
    evidence, total = evidence_from(shown.select("file", "line", "text", "rank"))
    return Finding(
        kind="oom",
        severity="error",
        part="explanation",
        summary=(
            f"Rank {rank}'s own reports of host memory climbed from {climb['_first']:,.2f} GB "
            f"to {climb['_last']:,.2f} GB{over}, and its log ends at the last one: most likely "
            "the host ran out of memory and the kernel's OOM killer ended the process, which "
            "leaves no line in its own log."
        ),
        fix=HOST_FIX.format(where=f"rank {rank}'s host"),
        ranks=[rank],
        evidence=evidence,
        evidence_total=total,
        order=place_with_step(job, own.tail(1))[0],
        timestamp=earliest_time(own.tail(1)),
        confidence="low",
        details={"host_memory": True, "killer": "climb", "peak_gb": climb["_last"], "hosts": []},
    )


def _killed(job: Job) -> list[Finding]:
    """Deaths the host running out of memory most likely caused (see
    `rank_exception.out_of_host_memory`), said as rank_exception reads them, as OOMs."""
    return [_as_oom(finding) for finding in out_of_host_memory(job)]


WORKER_DIED_FIX = (
    "Read the dead worker's own log on its node (Ray keeps it under "
    "`/tmp/ray/session_latest/logs/`, `worker-*-<pid>.out` and `.err`) and the node's kernel "
    "log for the OOM killer (`dmesg -T | grep -i -E 'killed process|out of memory'`): most "
    "often the process ran its host (or its container's limit) out of memory; give it more, or "
    "load less at once (fewer DataLoader workers, no whole-dataset cache in RAM). A native "
    "crash (SIGSEGV) shows in that `.err` file."
)


# a worker's own lines that show it going down: its watchdog's timeout too (the watchdog then
# takes the process down; a paste can stop before it says so)
OWN_GOING_DOWN = ("process_abort", "fatal_signal", "exception", "collective_timeout")


TERMINATED_WORKER = r"\bThe process receives a SIG(?:TERM|INT)\b"


def _ray_workers_died(job: Job) -> list[Finding]:
    """A worker process Ray saw die without an error of its own: `A worker died or was killed
    ... by an unexpected system error`, or an actor that `died unexpectedly`. Ray's own first
    guess is the OOM killer (ray-project/ray#31828: the container's memory ran out; the poster
    gave it more), its K8s wording `may have exceeded K8s pod memory limits`: read, like an
    unexplained SIGKILL, as the host most likely running out of memory. Not where the node it
    ran on was lost: that explains it."""
    events = job.events
    # (Ray's other exit types are the worker's own doing: an exit it asked for, an error it
    # raised in its creation task)
    unexpected = pl.col("exc_message").is_null() | pl.col("exc_message").str.starts_with(
        "SYSTEM_ERROR"
    )
    # Ray's detail of a worker that a SIGTERM ended (its shutdown, a person, the scheduler):
    # asked to stop, not killed for memory, whose killer sends SIGKILL (johnson7788/
    # RLDecisionAgent's verl notes: `... The process receives a SIGTERM.` after the run ended)
    terminated = pl.col("text").str.contains(TERMINATED_WORKER).fill_null(False)
    died = events.filter((pl.col("event") == "worker_died") & unexpected & ~terminated)
    lost_nodes = events.filter(pl.col("event").is_in(["node_lost", "node_failure"]))
    on_lost_node = pl.col("host").is_in(lost_nodes.get_column("host").drop_nulls().implode())
    died = died.filter(~on_lost_node.fill_null(False))
    # nor a worker whose own lines show it going down: its watchdog taking the process down, a
    # fatal signal, an exception (a verl SFT run: rank 1's watchdog aborted it after its timeout,
    # then Ray saw the actor die)
    # (by its pid: a driver's ActorDiedError may take the dead worker's rank from the file)
    own = events.filter(pl.col("event").is_in(OWN_GOING_DOWN)).get_column("pid").drop_nulls()
    died = died.filter(~pl.col("pid").is_in(own.implode()).fill_null(False))
    # nor a worker that died after another process crashed on a signal of its own in the same
    # output (PeterGriffinJin/Search-R1#134: a WorkerDict's `Fatal Python error: Floating point
    # exception`, then the raylet's word of another worker's death): the crash took the job
    # down, no memory ran out
    died = died.join(_first_crashes(events), on="file", how="left").filter(
        pl.col("_crashed_at").is_null() | (pl.col("line") < pl.col("_crashed_at"))
    )
    # nor one that died after Lightning's launcher in it reported a child's error: Lightning
    # then kills its own process and the other children (Nixtla/neuralforecast#1291: `[rank:
    # 1] Child process with PID 23026 terminated with code 1. Forcefully terminating all other
    # processes`, then the raylet's word of the Tune worker's death)
    died = died.join(killed_by_lightning(job), on=["file", "line"], how="anti")
    if died.is_empty() or _actors_failed_to_start(events, died):
        return []
    ranks = sorted(died.get_column("rank").drop_nulls().unique().to_list()) or _failed_in_train(
        events, died
    )
    processes = [
        f"pid {row['pid']}" + (f" on {row['host']}" if row["host"] else "")
        for row in died.unique(["pid", "host"], maintain_order=True).iter_rows(named=True)
        if row["pid"] is not None
    ]
    who = rank_list(ranks).capitalize() if ranks else "A worker process"
    if processes and not ranks:
        who += f" ({', '.join(processes)})"
    told = died.get_column("exc_message").drop_nulls()
    said = f" (Ray: {clipped(told.item(0), 160)})" if not told.is_empty() else ""
    summary = (
        f"{who} died without an error of its own{said}: it was killed from outside (most "
        "often by the OOM killer, as its host or container ran out of memory) or crashed in "
        "native code."
    )
    pids = died.get_column("pid").drop_nulls().to_list()
    details = {"worker_died": True, "pids": pids, "host_memory": True, "killer": "ray"}
    return [
        _died_for_memory(
            job, died, summary, WORKER_DIED_FIX, ranks, details, blames_nobody=not ranks
        )
    ]


def _first_crashes(events: pl.DataFrame) -> pl.DataFrame:
    """Per file, the line of its first process crash on a signal of the process's own (a fatal
    signal other than the SIGKILL a killer sends): `file, _crashed_at`."""
    crashes = events.filter(
        (pl.col("event") == "fatal_signal") & (pl.col("signal").fill_null("") != "SIGKILL")
    )
    return crashes.group_by("file").agg(pl.col("line").min().alias("_crashed_at"))


# Ray's words for an actor whose class or creation task failed in the worker: the worker's
# exit that follows is that failure's, no kill (zhiyuanhubj/logic-rl-formula's grpo.log: `The
# actor with name WorkerDict failed to import on the worker`, flash-attn built for another torch)
ACTOR_NEVER_STARTED = r"failed to import on the worker|error raised in its creation task"


def _actors_failed_to_start(events: pl.DataFrame, died: pl.DataFrame) -> bool:
    """Whether Ray said, before the first of these deaths in its file, that an actor failed to
    start in its worker."""
    first = (
        died.sort("file", "line")
        .group_by("file", maintain_order=True)
        .agg(pl.col("line").first().alias("_died"))
    )
    failed = events.filter(
        (pl.col("event") == "exception")
        & pl.col("exc_message").str.contains(ACTOR_NEVER_STARTED).fill_null(False)
    )
    before = failed.join(first, on="file").filter(pl.col("line") < pl.col("_died"))
    return not before.is_empty()


def _failed_in_train(events: pl.DataFrame, died: pl.DataFrame) -> list[int]:
    """The rank Ray Train names for the one worker process that died (`Worker 0 has failed.`,
    after the death in the same console: ray-project/ray#47461), when one died and one is
    named; else none."""
    if died.get_column("pid").n_unique() != 1:
        return []
    first = died.sort("line").row(0, named=True)
    named = events.filter(
        (pl.col("event") == "train_worker_failed")
        & (pl.col("file") == first["file"])
        & (pl.col("line") > first["line"])
    ).get_column("value")
    named = named.drop_nulls()  # (a number past an Int64 names no worker)
    return [int(named.item(0))] if named.n_unique() == 1 else []


def _died_for_memory(
    job: Job,
    rows: pl.DataFrame,
    summary: str,
    fix: str,
    ranks: list[int],
    details: dict[str, object],
    blames_nobody: bool = False,
) -> Finding:
    """A death the host's (or node's shared) memory running out most likely caused, told by
    `rows`, its evidence."""
    return placed_finding(
        job,
        rows,
        kind="oom",
        severity="error",
        part="explanation",
        summary=summary,
        fix=fix,
        ranks=ranks,
        blames_nobody=blames_nobody,
        confidence="medium",
        details=details,
    )


def _as_oom(death: Finding) -> Finding:
    """rank_exception's finding of a death as an OOM; a bus error's is the node's shared
    memory (/dev/shm)."""
    shared = out_of_shared_memory(death)
    return replace(
        death,
        kind="oom",
        fix=SHARED_MEMORY_FIX if shared else death.fix,
        details={**death.details, "host_memory": True, "killer": "shm" if shared else "unknown"},
        confidence="low" if death.confidence == "low" else "medium",
    )


def _loader_workers_bus_errors(job: Job) -> list[Finding]:
    """DataLoader workers that reported a bus error before they died (`ERROR: Unexpected bus
    error encountered in worker. This might be caused by insufficient shared memory (shm).`,
    NVIDIA/Megatron-LM#878), with no death of a rank the logs tell: the node's shared memory
    ran out under the workers, and the ranks whose workers they were failed with them."""
    crashes = job.events.filter(
        (pl.col("event") == "loader_worker_crash") & (pl.col("signal") == "SIGBUS")
    ).sort("file", "line")
    if crashes.is_empty():
        return []
    ranks = sorted(crashes.get_column("rank").drop_nulls().unique().to_list())
    count = crashes.height
    whose = f" of {rank_list(ranks)}" if ranks else ""
    summary = (
        f"DataLoader workers{whose} hit a bus error ({count} report{'s' if count != 1 else ''}: "
        "`insufficient shared memory (shm)`): the node's shared memory (/dev/shm), through "
        "which workers hand batches over, ran out, and the ranks failed with their workers."
    )
    details = {"host_memory": True, "killer": "shm", "signal": "SIGBUS", "hosts": []}
    return [_died_for_memory(job, crashes, summary, SHARED_MEMORY_FIX, ranks, details)]


LOADING_FIX = (
    "Find the worker that died: torchrun's failure summary (`exitcode: -9` is SIGKILL) and the "
    "node's kernel log (`dmesg -T | grep -i -e oom -e killed`). If it was the OOM killer, load "
    "the checkpoint with less host memory: `low_cpu_mem_usage=True` / a `device_map`, "
    "sharded or memory-mapped (safetensors) loading, fewer ranks per node loading at once, or "
    "a node with more RAM."
)


def _vanished_while_loading(job: Job) -> list[Finding]:
    """torchrun stopped the workers (`Sending process N closing signal SIGTERM`: one of them
    had died) while they were loading a model, and no process says why: no exception, no
    exit code, no error of NCCL's. A process that vanishes without a word while every rank
    reads a large checkpoint into host memory was most often ended by the kernel's OOM
    killer (hiyouga/LlamaFactory#8836: gpt-oss-120b at `Loading checkpoint shards: 47%`)."""
    events = job.events
    stopped = events.filter(pl.col("event") == "worker_sigterm").sort("file", "line")
    said = events.filter(
        pl.col("event").is_in(["exception", "process_exit", "nccl_error", "oom", "host_oom"])
        | (pl.col("severity") == "error") & (pl.col("event") != "worker_sigterm")
    )
    if stopped.is_empty() or not said.is_empty():
        return []
    first = stopped.row(0, named=True)
    before = events.filter(
        pl.col("event").is_in(["progress_bar", "phase"])
        & (pl.col("file") == first["file"])
        & (pl.col("line") <= first["line"])
    ).sort("line")
    if before.is_empty():
        return []
    message = pl.col("message")
    named = pl.coalesce(bar_name(message), message.str.strip_chars(" :"))
    last = before.tail(1).with_columns(named.alias("_what")).row(0, named=True)
    values = last.get("values") or []
    if not re.search(LOADING, str(last["message"])) or (
        len(values) == 2 and values[1] is not None and values[0] >= values[1]
    ):
        return []
    what = last["_what"]
    summary = (
        f"A worker died while the ranks were loading ({what}) and torchrun stopped the others; "
        "no process says why. A process that vanishes without an error while every rank "
        "loads a large checkpoint into host memory is most often ended by the host's OOM "
        "killer."
    )
    evidence, total = evidence_from(
        pl.concat([before.tail(1), stopped.head(3)]).select("file", "line", "text", "rank")
    )
    return [
        Finding(
            kind="oom",
            severity="error",
            part="explanation",
            summary=summary,
            fix=LOADING_FIX,
            ranks=[],
            evidence=evidence,
            evidence_total=total,
            confidence="low",
            order=place_with_step(job, stopped)[0],
            timestamp=earliest_time(stopped),
            details={"host_memory": True, "killer": None, "loading": what},
        )
    ]


def _host(job: Job) -> list[Finding]:
    killed = job.events.filter(pl.col("event") == "host_oom")
    if killed.is_empty():
        return []
    hosts = sorted(set(killed.get_column("host").drop_nulls()))
    where = ", ".join(hosts) if hosts else "the node"
    raised = pl.col("exc_type").is_not_null() & ~pl.col("exc_message").is_in(
        [RAY_MONITOR, FAILED_HOST_ALLOCATION]
    ).fill_null(False)
    if killed.select(raised.all()).item():
        # the process's own exception: the host refused it memory (MemoryError, ENOMEM)
        ranks = sorted(killed.get_column("rank").drop_nulls().unique().to_list())
        first = killed.sort("file", "line").row(0, named=True)
        said = clipped(f"{first['exc_type']}: {first['exc_message'] or ''}".rstrip(": "))
        who = rank_list(ranks) if ranks else "a process"
        summary = (
            f"The host refused {who} memory on {where} (`{said}`): the host ran out of "
            "memory (not the GPU)."
        )
        return [_host_finding(job, killed, summary, where, ranks, "allocation", hosts)]
    if killed.get_column("exc_message").eq_missing(FAILED_HOST_ALLOCATION).all():
        # the process's own runtime gave up on an allocation and aborted: no killer
        # (the Rust runtime's `memory allocation of N bytes failed`, DeepSpeedExamples#321)
        ranks = sorted(killed.get_column("rank").drop_nulls().unique().to_list())
        summary = (
            f"A host allocation failed on {where} and {rank_list(ranks) if ranks else 'a process'}"
            " aborted (`memory allocation of ... bytes failed`): the host ran out of memory (not "
            "the GPU)."
        )
        return [_host_finding(job, killed, summary, where, ranks, "allocation", hosts)]
    if killed.get_column("exc_message").eq_missing(RAY_MONITOR).all():
        # (the caller's `OutOfMemoryError` counts no worker: the monitor's lines do)
        workers = int(killed.get_column("value").fill_null(0).sum())
        killed_what = f"{workers} worker{'s' if workers != 1 else ''}" if workers else "a task"
        summary = (
            f"Ray's memory monitor killed {killed_what} on "
            f"{where} for memory pressure: the host ran out of memory (not the GPU); the "
            "training's errors about a lost worker follow from it."
        )
        return [_host_finding(job, killed, summary, where, [], "ray", hosts)]
    tasks = sorted({task for ids in killed.get_column("values").drop_nulls() for task in ids})
    per_node = not job.events.filter(pl.col("family") == "elastic").is_empty()
    # a kernel report's pid, mapped to its rank by the logs' pid map
    by_pid = killed.get_column("rank").drop_nulls().unique().to_list()
    ranks = sorted(set(by_pid) | (set() if per_node else set(tasks)))
    from_slurm = bool(killed.get_column("family").eq("slurm").any())
    killer = "SLURM's OOM killer" if from_slurm else "The kernel's OOM killer"
    if tasks:
        told = f"srun task{'s' if len(tasks) != 1 else ''} {rank_ranges(tasks)}"
    elif by_pid:
        told = rank_list(sorted(by_pid))
    else:
        told = "the step's processes" if from_slurm else "a process"
    summary = f"{killer} ended {told} on {where}: the host ran out of memory (not the GPU)"
    summary += (
        "; each task is a node's torchrun agent here, so which rank grew is not told."
        if per_node and tasks
        else "."
    )
    killed_by = "slurm" if from_slurm else "kernel"
    return [_host_finding(job, killed, summary, where, ranks, killed_by, hosts, tasks)]


def _host_finding(
    job: Job,
    rows: pl.DataFrame,
    summary: str,
    where: str,
    ranks: list[int],
    killer: str,
    hosts: list[str],
    tasks: list[int] | None = None,
) -> Finding:
    evidence, total = evidence_from(
        rows.sort("file", "line").select("file", "line", "text", "rank")
    )
    return Finding(
        kind="oom",
        severity="error",
        part="explanation",
        summary=summary,
        fix=HOST_FIX.format(where=where),
        ranks=ranks,
        evidence=evidence,
        evidence_total=total,
        order=place_with_step(job, rows)[0],
        timestamp=earliest_time(rows),
        # an allocation's abort names no killer: how the host ran out is told less surely
        confidence="medium" if killer == "allocation" else "high",
        details={"host_memory": True, "killer": killer, "srun_tasks": tasks or [], "hosts": hosts},
    )


DEVICE_FIX = (
    "Check the GPU before the batch size: `nvidia-smi` on that node for other processes on the "
    "device (a previous job's leftovers, two ranks given one GPU) and for Xid or ECC errors "
    "(`dmesg -T | grep -i xid`); take a faulty node out of the job (SLURM `--exclude`)."
)


def _gpu(job: Job) -> list[Finding]:
    ooms = job.events.filter(pl.col("event") == "oom")
    if ooms.is_empty():
        return []
    ranks = sorted(ooms.get_column("rank").drop_nulls().unique().to_list())
    order, step, stage = place_with_step(job, ooms)
    requested = ooms.get_column("value").drop_nulls()
    asked = f" while allocating {requested.max() / 2**20:,.0f} MiB" if len(requested) else ""
    # without a rank, the GPU the message names says which process it was
    devices = sorted(ooms.get_column("device").drop_nulls().unique().to_list())
    hosts = ooms.get_column("host").drop_nulls().unique().to_list()
    pids = ooms.get_column("pid").drop_nulls().unique().to_list()
    on_host = (
        f"a process on host {hosts[0]}"
        if len(hosts) == 1
        else f"the process with pid {pids[0]}"
        if len(pids) == 1
        else "a rank"
    )
    on_gpu = f"the process on GPU {devices[0]}" if len(devices) == 1 else on_host
    from_gpu = _ranks_on_gpus(job, devices) if not ranks and devices else None
    if from_gpu is not None:
        ranks = sorted(from_gpu[0])
    # no line says whose it was: the one worker a launcher reports failed is
    # (HarderThenHarder/transformers_tasks#27: an unranked traceback, then torchrun's agent's
    # `failed (exitcode: 1) local_rank: 1`)
    reported = None if ranks or from_gpu is not None else one_reported_failure(job)
    if reported is not None:
        ranks = [reported.rank]
    who = rank_list(ranks) if ranks else on_gpu
    if from_gpu is not None:
        who += f" (on GPU{'s' if len(devices) > 1 else ''} {', '.join(devices)})"
    in_nccl = bool(ooms.get_column("family").eq("nccl").any())
    in_oneccl = bool(ooms.get_column("family").eq("oneccl").any())
    # XLA names the device (`TPU:6`), or only says its runtime ran out: not a GPU's words
    on_tpu = bool(devices) and all(str(device).startswith("TPU") for device in devices)
    said_by_xla = ooms.get_column("text").str.contains(XLA_OUT_OF_MEMORY).all()
    for_kv_cache = bool(ooms.get_column("text").str.contains(KV_CACHE_OUT_OF_MEMORY).any())
    # an NPU's or XPU's allocator says so in CUDA's words with its device's name
    other_device = (
        ooms.get_column("text").str.contains(OTHER_DEVICE_OUT_OF_MEMORY)
        | ooms.get_column("family").eq("hccl")
    ).all()
    memory = (
        "TPU memory" if on_tpu else "device memory" if said_by_xla or other_device else "GPU memory"
    )
    summary = f"{capitalized(who)} ran out of {memory}{asked}" + (
        f" at step {step} ({stage})" if step is not None else ""
    )
    # the CUDA runtime's own `CUDA error: out of memory` (no allocation size) before the first
    # step: nothing of the model's was allocated yet (bigscience tr1's faulty node, at the
    # first barrier)
    device = (
        not len(requested)
        and step is None
        and not job.made_progress()
        and bool(ooms.get_column("text").str.contains("(?i)CUDA error: out of memory").any())
    )
    if in_nccl:
        summary += " inside NCCL, which could not allocate its buffers"
    if in_oneccl:
        summary += " inside oneCCL, in a collective (`ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY`)"
    faulty = device and _gpu_hardware_failed(job)
    if device:
        summary += (
            " at start-up, before any training step and with no allocation size: the GPU was "
            "already full (another process on it) or faulty, not short of memory for the model"
        )
    if faulty:
        summary += "; the logs also show the GPU hardware failing, which explains it"
    # fairseq-style training loops catch the OOM, log it and skip the batch on that rank only
    caught = bool(
        ooms.get_column("extra").str.contains('"logged":true', literal=True).fill_null(False).all()
    )
    # ... but a logged traceback alone says it was caught, not what the rank did next (vLLM's
    # worker logs it and hands it to its driver, rhymes-ai/Aria#24): a skip only where said
    skipped = caught and _skip_said(job, ooms)
    if skipped:
        summary += (
            ", caught it and skipped the batch: a skip the other ranks did not make, so their "
            "collectives no longer pair."
        )
    elif caught:
        summary += ", caught and logged (no line says what the rank did next)."
    else:
        summary += "."
    shown = ooms.select("file", "line", "text", "rank")
    if reported is not None:
        shown = pl.concat([shown, reported.stopped.head(1).select(shown.columns)])
    evidence, total = evidence_from(shown.sort("file", "line"))
    # caught and logged, it is a failure if the rank left the path (the reasoner sees that in
    # the marks), or if the run is not seen to go on after it and ends in an error
    # (fairseq#708: the skip, then nothing until the traceback of the user's Ctrl-C)
    stalled = caught and _ended_badly_after(job, ooms)
    if stalled:
        summary += " Nothing in the logs shows the run going on after it."
    if from_gpu is not None:
        summary += " " + from_gpu[1]
    if reported is not None:
        summary += no_line_ties(reported)
    return [
        Finding(
            kind="oom",
            severity="error" if (stalled or not caught) and not faulty else "warning",
            part="departure" if stalled else "context" if faulty else "explanation",
            summary=summary,
            fix=DEVICE_FIX
            if device
            else FIX.format(who=who)
            + (NCCL_FIX if in_nccl else "")
            + (SKIP_FIX if skipped else "")
            + (KV_CACHE_FIX if for_kv_cache else ""),
            confidence="medium" if device or stalled or from_gpu or reported else "high",
            ranks=ranks,
            step=step,
            stage=stage,
            evidence=evidence,
            evidence_total=total,
            order=order,
            timestamp=earliest_raise(job, ooms),
            details={
                "swallowed": caught,
                "skipped": skipped,
                "in_nccl": in_nccl,
                "device": device,
                "memory": memory,
            },
        )
    ]


# fairseq's `| WARNING: ran out of memory with exception: ...` then ` Skipping batch`
SKIP_WORDS = r"(?i)\bskip(?:ping|ped|s)?\b"


def _skip_said(job: Job, ooms: pl.DataFrame) -> bool:
    """Whether an out-of-memory line, or the line after it, says the batch was skipped."""
    after = ooms.select("file", (pl.col("line").cast(pl.UInt32) + 1).alias("line"), "rank")
    texts = pl.concat([ooms.get_column("text"), job.quote(after).get_column("text")])
    return bool(texts.fill_null("").str.contains(SKIP_WORDS).any())


def _gpu_hardware_failed(job: Job) -> bool:
    """Whether any exception or line of the job names a GPU hardware fault (an uncorrectable
    ECC error, an Xid, a GPU off the bus): a faulty GPU then explains an out-of-memory error
    before the first step (bigscience tr1's chronicles: the ECC crash, then the relaunch on the
    same node dying of `CUDA error: out of memory` at its first barrier)."""
    said = pl.coalesce("exc_message", "text").fill_null("")
    return not job.events.filter(said.str.contains(HARDWARE)).is_empty()


def _ranks_on_gpus(job: Job, devices: list[str]) -> tuple[list[int], str] | None:
    """The ranks behind the GPUs unranked OOM messages name (see `_rank_on_gpu`), each
    process's message naming its own GPU (DeepSpeed's two workers' `(GPU 1; ...)` and `(GPU 0;
    ...)`); None unless every GPU settles its rank."""
    found = [_rank_on_gpu(job, device) for device in devices]
    if any(one is None for one in found):
        return None
    if len(found) == 1:
        return [found[0][0]], found[0][1]
    ranks = [one[0] for one in found]
    return ranks, (
        f"No line names their ranks: on a single node with one process per GPU, numbered in "
        f"order (the launcher's convention), the processes on GPUs {', '.join(devices)} are "
        f"ranks {', '.join(map(str, ranks))}."
    )


def _rank_on_gpu(job: Job, device: str) -> tuple[int, str] | None:
    """The rank behind the one GPU that unranked OOM messages name, with how it was found: the
    rank whose own device print names that GPU, or, where the logs show a single node and no
    device prints, the rank numbered as the GPU (one process per GPU in order: torchrun's and
    `mp.spawn`'s convention). None where neither settles it."""
    if not device.isdigit() or job.events.get_column("host").drop_nulls().n_unique() > 1:
        return None
    printed = job.events.filter((pl.col("event") == "device_map") & pl.col("rank").is_not_null())
    if not printed.is_empty():
        names = [device, f"cuda:{device}"]
        there = printed.filter(pl.col("device").is_in(names)).get_column("rank").unique()
        if len(there) != 1:
            return None
        rank = int(there.item())
        return rank, f"No line names its rank: rank {rank} printed GPU {device} as its device."
    world = job.world_size
    if not job.one_node() or (world is not None and world.value <= int(device)):
        return None
    return int(device), (
        f"No line names its rank: on a single node with one process per GPU, numbered in "
        f"order (the launcher's convention), the process on GPU {device} is rank {device}."
    )


def _ended_badly_after(job: Job, ooms: pl.DataFrame) -> bool:
    """Whether the first OOM's file goes on to an error (a traceback, a timeout) with no
    progress mark or finish mark in between."""
    first = ooms.sort("file", "line").row(0, named=True)
    later = (pl.col("file") == first["file"]) & (pl.col("line") > first["line"])
    after = job.events.filter(later)
    failed = after.filter((pl.col("severity") == "error") & (pl.col("event") != "oom"))
    if failed.is_empty():
        return False
    failed_at = int(failed.get_column("line").min())
    before_failure = pl.col("line") < failed_at
    finished = after.filter((pl.col("event") == "run_finished") & before_failure)
    marks = job.progress.marks if job.progress is not None else None
    progressed = marks is not None and not marks.filter(later & before_failure).is_empty()
    return not progressed and finished.is_empty()


RULE = Rule(kind="oom", check=check, specificity=30)
