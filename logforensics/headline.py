"""The verdict in one line of plain words, for a terminal, a ticket title or a page's top:
what the blamed ranks did (and what they logged as they did it), then what it did to the
others. `Rank 2 skipped part of step 5 after a NaN loss; ranks 0, 1 and 3 waited for it
until the timeout (20 s)`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from logforensics.findings import Finding
from logforensics.rules.loader_size_mismatch import JOIN_SOURCE
from logforensics.rules.nccl_error import LIBRARY_NAMES
from logforensics.rules.rank_exception import (
    HARDWARE_FIX,
    HOROVOD_SHUT_DOWN,
    NUMERICS_FIX,
    windows_crash,
)
from logforensics.rules.stuck_location import every_process
from logforensics.shard_wait import shard_list
from logforensics.text import capitalized, clipped, duration, enumerated, rank_list
from parsers.nccl import TORCH_DUPLICATE

if TYPE_CHECKING:
    from logforensics.api import Analysis
    from logforensics.reasoner import Verdict

NO_FAILURE = "No failure found"
# What a departing rank logged, as the reason it departed: the first that fits.
LOSS_VALUE = re.compile(r"(?i)\bloss\W{0,3}(?:is\W)?(nan|inf)\b|\b(nan|inf)\W+loss")
NON_FINITE_LOSS = re.compile(r"(?i)non-finite\W+loss|loss\W+(?:is\W+)?non-finite")
EXCEPTION_NAME = re.compile(r"\b([A-Z]\w*(?:Error|Exception))\b")
OUT_OF_MEMORY = re.compile(r"(?i)out of memory")


def headline(analysis: Analysis) -> str:
    """The analysis's verdict in one line (`No failure found` when nothing failed)."""
    return verdict_headline(analysis.verdict)


def verdict_headline(verdict: Verdict | None) -> str:
    if verdict is None:
        return NO_FAILURE
    finding = verdict.finding
    what, then = WHAT.get(finding.kind, _generic)(finding, verdict)
    then = then if then is not None else _consequence(verdict)
    return f"{what}; {then}" if then else what


# A bar's or progress line's name is the work a busy rank did: the headline keeps its start (a
# label scan's bar names its folder and counts: ultralytics/yolov5#9163)
WORK_IN_HEADLINE = 60

# Each returns what happened and, when the finding itself says it, what followed (else
# None: the verdict's chain tells).
Told = tuple[str, str | None]


def _short_at_barrier(finding: Finding) -> Told:
    details = finding.details
    absent = _ranks_of(details.get("absent"))
    short = int(str(details.get("expected"))) - int(str(details.get("arrived")))
    some = "One process" if short == 1 else f"{short} processes"
    group = "`init_process_group`" if details.get("barrier_key") == "1" else "a new process group"
    return (
        f"{_who(absent) if absent else some} never reached the store barrier of {group}",
        "the others wait there",
    )


def _stage_divergence(finding: Finding, verdict: Verdict) -> Told:
    details = finding.details
    if details.get("source") == "horovod stall":
        return f"{_who(finding.ranks)} never submitted the tensor the others waited on", None
    if "barrier_key" in details:
        return _short_at_barrier(finding)
    departure = details.get("departure")
    who = _who(finding.blamed or finding.ranks)
    if departure == "other_collective":
        seq = f" at sequence number {finding.seq}" if finding.seq is not None else ""
        ops = details.get("ops")
        others = _ranks_of(details.get("other_ranks"))
        if finding.blamed and others and isinstance(ops, dict):
            mine = ops.get(str(finding.blamed[0]))
            theirs = ops.get(str(others[0]))
            number = f" #{finding.seq}" if finding.seq is not None else ""
            if mine and theirs and mine != theirs:
                place = f" as collective{number}" if number else ""
                return f"{who} ran {mine}{place} where the others ran {theirs}", None
            if mine and mine == theirs and details.get("called_from"):
                place = details["called_from"]
                return f"{who} called {mine} from {place}, not where the others called it", None
            if mine and mine == theirs:
                return f"{who} ran a different {mine} as collective{number} from the others", None
        return f"{_who(finding.ranks)} were in different collectives{seq}", None
    others = _ranks_of(details.get("other_ranks"))
    if departure == "never_issued":
        collective = f"{finding.op} #{finding.seq}" if finding.op else f"collective #{finding.seq}"
        return f"{who} never issued {collective}", None
    if departure == "main_first":
        context = details.get("context") or "main_process_first"
        return f"{who} was still busy inside {context} when the others gave up", None
    if departure == "alone_in_work":
        collective, work = details.get("collective"), details.get("work")
        return f"{who} alone waited in {collective} inside {work}", None
    if departure == "interrupted_elsewhere":
        when = "its stack was dumped" if details.get("snapshot") else "the job was interrupted"
        return (
            f"{who} {_was(finding.ranks)} outside any collective when {when}, "
            f"in {details.get('where')}",
            f"{rank_list(others)} waited in a collective at {details.get('their_place')}",
        )
    if departure == "left":
        return f"{who} left the job early, with no error", None
    if departure == "stopped_calling":
        others = rank_list(_ranks_of(details.get("other_ranks")))
        return f"{who} stopped issuing collectives after call #{details.get('calls')}", (
            f"{others} went on"
        )
    if departure == "quiet":
        return f"{who} went first, with no error of its own", None
    if departure == "exited":
        codes = ", ".join(str(code) for code in details.get("exit_codes") or [])
        return f"{who} exited with code {codes} without an error of its own", None
    if departure == "skipped_alone":
        at = f" at step {finding.step}" if finding.step is not None else ""
        return f"{who} alone said it skipped a batch or step{at}", None
    if departure == "busy":
        work = clipped(str(details.get("work")), WORK_IN_HEADLINE)
        # a guess (the unattributed bar taken for the main process's): said as one
        likely = " most likely" if finding.confidence == "low" else ""
        return f"{who} was{likely} still busy with {work} when the others gave up", None
    if departure == "file_wait":
        waiters = _who(_ranks_of(details.get("other_ranks")))
        maker = "" if finding.blames_nobody else f" {rank_list(finding.blamed)} makes"
        # (it says who waited: no clause from the chain's timeouts after it)
        return f"{waiters} gave up waiting for a file{maker}", ""
    if departure == "garbled_payload":
        receivers = _who(_ranks_of(details.get("receivers")))
        source = "" if finding.blames_nobody else f" from {rank_list(finding.blamed)}"
        return (
            f"{receivers} got another collective's data{source}: the ranks were out of step",
            None,
        )
    if departure == "ras_behind":
        launched, front = details.get("launched"), details.get("front")
        return f"{who} fell behind in collectives (NCCL RAS: operation {launched} of {front})", None
    if departure == "ras_others_behind":
        launched, front = details.get("launched"), details.get("front")
        return (
            f"The ranks NCCL's RAS report does not list fell behind in collectives (operation "
            f"{launched}, where {_who(finding.ranks).lower()} reached {front})",
            None,
        )
    if departure == "ras_gone":
        return f"{who} left the job (NCCL RAS: its process is gone)", None
    if finding.blames_nobody:
        where = f" at step {finding.step}" if finding.step is not None else ""
        if finding.step is None and finding.stage:  # a milestone: no step, its words
            where = f" before `{finding.stage}`"
        return f"{_who(finding.ranks)} stopped{where} while {rank_list(others)} went on", ""
    if departure == "skipped":
        return f"{who} skipped {_skipped(finding)}{logged_reason(finding)}", None
    if departure == "stopped":
        before = f" before step {finding.step}" if finding.step is not None else ""
        return f"{who} went quiet{before}{logged_reason(finding)}", None
    if departure == "went_ahead":
        return f"{who} went on to `{finding.stage}` while {rank_list(others)} never did", ""
    return f"{who} repeated a step the others ran once", None


def _skipped(finding: Finding) -> str:
    if finding.details.get("progress_template"):
        return str(finding.details.get("expected") or "a step")
    return f"part of step {finding.step}" if finding.step is not None else "a stage"


def logged_reason(finding: Finding) -> str:
    """What the departing rank logged as it left, when it says why: ` after a NaN loss`."""
    blamed = set(finding.blamed)
    for evidence in finding.evidence:
        if evidence.rank is not None and evidence.rank not in blamed:
            continue
        if found := LOSS_VALUE.search(evidence.text):
            value = (found.group(1) or found.group(2)).lower()
            return " after a NaN loss" if value == "nan" else " after an infinite loss"
        if NON_FINITE_LOSS.search(evidence.text):
            return " after a non-finite loss"
        if OUT_OF_MEMORY.search(evidence.text):
            return " after running out of GPU memory"
        if found := EXCEPTION_NAME.search(evidence.text):
            return f" after {_a(found.group(1))}"
    return ""


def _never_ready(finding: Finding) -> Told:
    """An inference server's shards that never finished loading (logforensics/shard_wait.py)."""
    never = finding.details["never_ready"]
    ready = finding.details.get("ready")
    if ready:
        return (
            f"{capitalized(shard_list(never))} never finished loading; {shard_list(ready)} did",
            None,
        )
    return f"{capitalized(shard_list(never))} never finished loading", "the server's start-up hung"


def _last_common_stage(finding: Finding, verdict: Verdict) -> Told:
    if "never_ready" in finding.details:
        return _never_ready(finding)
    if finding.details.get("unranked"):  # logforensics/setup_stall.py
        return (
            "The job most likely hung creating its process group",
            "the logs end there with no error",
        )
    if finding.details.get("first_communicator"):  # logforensics/setup_stall.py
        return (
            f"All {finding.details['world']} ranks hung creating their first NCCL communicator",
            "the logs end in NCCL's set-up with no error",
        )
    if "joining" in finding.details:  # logforensics/setup_stall.py
        every = (
            f"All {finding.details['world']} ranks"
            if finding.details.get("world_known")
            else "Every rank in the logs"
        )
        return (
            f"{every} hung joining the process group",
            "the logs end with no error while they connected",
        )
    return _generic(finding, verdict)


def _missing_rank(finding: Finding, verdict: Verdict) -> Told:
    if "never_ready" in finding.details:
        return _never_ready(finding)
    if "barrier_key" in finding.details:
        return _short_at_barrier(finding)
    if finding.details.get("side") == "no_libuv":
        return "The rendezvous store could not be made: this PyTorch has no libuv", (
            "the job never formed"
        )
    if "unset" in finding.details:
        return (
            "No launcher started the job's processes",
            f"{finding.details['unset']} was not set and the job never formed",
        )
    if finding.details.get("phase") == "launch":
        hosts = ", ".join(str(host) for host in finding.details.get("unreachable") or [])
        return f"The launcher could not reach {hosts} over ssh", "the job never formed"
    if finding.details.get("not_launched") and not finding.details.get("executable"):
        return "The launcher could not start its daemons on one or more nodes", None
    if finding.details.get("not_launched"):
        host = finding.details.get("host")
        on = f" on {host}" if host else ""
        who = rank_list(finding.ranks) if finding.ranks else "a process"
        return f"The launcher could not start {who}{on}", ("its executable was not found there")
    if finding.details.get("departure") == "absent":
        others = finding.details.get("other_ranks") or []
        its = "its" if len(others) == 1 else "their"
        return (
            f"{_who(finding.ranks)} left no log here; {rank_list(others)} lost {its} connection "
            "to it",
            "",
        )
    twice = finding.details.get("claimed_twice")
    if twice:
        never = rank_list(finding.details.get("never_claimed") or [])
        return f"{_who(twice)} started twice and {never} never: two nodes took the same ranks", ""
    if finding.details.get("phase") == "rendezvous":
        reporters = finding.details.get("reporters") or []
        who = _who(reporters) if reporters else "A process"
        endpoint = finding.details.get("endpoint")
        at = f" at {endpoint}" if endpoint else ""
        if finding.details.get("side") == "server":
            return f"{who} could not open the rendezvous store's port{at}: it was taken", None
        if finding.details.get("side") == "unresolved":
            return (
                f"{who} could not look up the rendezvous store's address{at}: the job never "
                "started",
                None,
            )
        if finding.details.get("side") == "server_unsaid":
            return f"{who} could not open the rendezvous store's port{at}", None
        if finding.details.get("side") == "dropped":
            return (
                f"{who} lost {'their' if len(reporters) > 1 else 'its'} connection to the "
                f"rendezvous store{at}: the job never started",
                None,
            )
        if finding.details.get("side") == "joining":
            host = finding.details.get("host")
            on = f"The agent on {host}" if host else "A node's agent"
            return f"{on} waited to join the rendezvous", "the other nodes most likely never came"
        if finding.details.get("side") == "heartbeat":
            host = finding.details.get("host")
            on = f"The agent on {host}" if host else "A node's agent"
            return (
                f"{on} lost the rendezvous store",
                "the node hosting it had stopped or was unreachable",
            )
        if finding.details.get("side") == "closed":
            who = _who(reporters) if reporters else "A node's agent"
            return f"{who} found the rendezvous already closed: the job never formed", ""
        if finding.details.get("side") == "wait" and finding.ranks:
            return (
                f"{_who(finding.ranks)} never reached the rendezvous store; rank 0, its host, "
                f"timed out waiting for {_it(finding.ranks)}",
                "",
            )
        if finding.details.get("side") == "wait":
            # the timeouts beside it are the same waits at the store, not what followed
            return f"{who} timed out waiting at the rendezvous store: the job never formed", ""
        never = (
            "a process group never formed"
            if finding.details.get("ran")
            else "the job never started"
        )
        return f"{who} could not reach the rendezvous store{at}: {never}", None
    if finding.details.get("phase") == "start-up":
        return "The logs end at start-up: the process group never formed", None
    if finding.details.get("phase") == "connect":
        reporters = finding.details.get("reporters") or []
        who = _who(reporters) if reporters else "A process"
        return f"{who} could not connect to its peers: the process group never formed", None
    who = _who(finding.blamed or finding.ranks)
    if (started := finding.details.get("started")) and finding.ranks:
        them = "it" if len(finding.ranks) == 1 else "them"
        return f"{who} never started: {rank_list(started)} waited for {them} at start-up", None
    if "nccl_world_size" in finding.details:
        return f"{who} never finished setting up NCCL", None
    before = f" before step {finding.step}" if finding.step is not None else ""
    return f"The log of {rank_list(finding.ranks)} ends without an error{before}", None


def _collective_mismatch(finding: Finding, verdict: Verdict) -> Told:
    if finding.details.get("source") == "horovod stall":
        if finding.details.get("crossed"):
            return f"{_who(finding.ranks)} ran other collectives than the other ranks", None
        if finding.blames_nobody:
            return f"{_who(finding.ranks)} and the other ranks submitted different tensors", None
        return f"{_who(finding.ranks)} alone submitted a tensor the others never did", None
    if finding.details.get("source") == "stack dumps":
        return "The stack dumps show processes waiting in different collectives", None
    if finding.details.get("departure") == "undecoded_objects":
        who = _who(_ranks_of(finding.details.get("receivers")), nobody="A process")
        return (
            f"{who} could not unpickle an object collective's data: the ranks were out of step",
            None,
        )
    if finding.details.get("source") == "sequence bookkeeping":
        return "DETAIL's sequence numbers were out of step, not the ranks (a false mismatch)", None
    if finding.details.get("source") == "loss terms":
        return f"{_who(finding.ranks)} computed other loss terms than the others", None
    if finding.details.get("source") == "deepspeed consistency check":
        return f"{_who(finding.ranks)} ran another sequence than rank 0 (DeepSpeed's check)", None
    if finding.details.get("source") == "FSDP order check":
        if finding.blames_nobody:
            who = _who(finding.ranks)
            return f"{who} all-gathered different parameters in their forward (FSDP)", None
        return f"{_who(finding.ranks)} all-gathered other parameters than the others (FSDP)", None
    if finding.details.get("source") in ("accelerate shapes", "shape prints", "printed sizes"):
        op = finding.details.get("op") or "a collective"
        if finding.blames_nobody:
            return f"The processes passed tensors of different shapes to {op}", None
        return f"{_who(finding.ranks)} passed a tensor of another shape to {op}", None
    numbers = finding.details.get("numbers")
    if finding.details.get("source") == "timeout positions" and isinstance(numbers, list):
        apart = ", ".join(f"#{number}" for number in numbers[:3])
        return f"{_who(finding.ranks)} were out of step in their collectives ({apart})", None
    if finding.part == "consequence":
        aborted = rank_list(finding.ranks) if finding.ranks else "a rank"
        return f"gloo aborted {aborted}: the ranks were in different collectives", ""
    if finding.details.get("shapes_only"):
        op = finding.op or "a collective"
        if finding.culprit_ranks:
            return f"{_who(finding.culprit_ranks)} passed a tensor of another shape to {op}", None
        return f"The ranks passed tensors of different shapes to {op}", None
    if finding.culprit_ranks:
        return f"{_who(finding.culprit_ranks)} called another collective than the others", None
    stepped = finding.details.get("out_of_step")
    if isinstance(stepped, dict):
        ahead, behind = stepped["ahead"], stepped["behind"]
        return (
            f"{_who(sorted([ahead, behind]))} were out of step in their collectives (rank "
            f"{ahead} at {stepped['op']} #{stepped['at']}, rank {behind} at "
            f"#{stepped['behind_at']})",
            None,
        )
    if finding.blames_nobody:
        return "The ranks called different collectives at the same point", None
    return f"{_who(finding.ranks)} called different collectives at the same point", None


def _loader_size_mismatch(finding: Finding, verdict: Verdict) -> Told:
    if not finding.ranks or finding.blames_nobody:
        return "The processes' DataLoaders have different lengths", None
    who = _who(finding.ranks)
    at = f" at step {finding.step}" if finding.step is not None else ""
    if finding.details.get("more_batches"):
        batch = "an extra batch" if len(finding.ranks) == 1 else "extra batches"
        return f"{who} had {batch}{at} (uneven DataLoaders)", None
    # DDP's Join told the others and every rank raised: nobody waited
    joined = "Join raised on every rank" if finding.details.get("source") == JOIN_SOURCE else None
    return f"{who} ran out of batches{at} before the others (uneven DataLoaders)", joined


def _duplicate_device(finding: Finding, verdict: Verdict) -> Told:
    who = _who(finding.ranks)
    if finding.details.get("source") == "layout":
        return f"{who} report the same local rank, most likely sharing one GPU", None
    refused = any(
        "Duplicate GPU detected" in evidence.text or "same GPU" in evidence.text
        for evidence in finding.evidence
    )
    checked = any(TORCH_DUPLICATE in evidence.text for evidence in finding.evidence)
    gpus = len(finding.details.get("bus_ids") or []) or 1
    shared = "one GPU" if gpus == 1 else f"{gpus} GPUs of one host"
    said = (
        "NCCL refused to start" if refused else "PyTorch refused to start NCCL" if checked else None
    )
    return f"{who} share {shared}", said


def _oom(finding: Finding, verdict: Verdict) -> Told:
    if finding.details.get("worker_died"):
        pids = finding.details.get("pids") or []
        who = _who(finding.ranks) if finding.ranks else "A worker process"
        if pids and not finding.ranks:
            who += f" (pid {', '.join(map(str, pids))})"
        return f"{who} died without an error of its own: most likely killed for memory", None
    if finding.details.get("loading"):
        return "A worker died without a word while loading: most likely out of host memory", None
    if finding.details.get("killer") == "shm":  # a bus error or shared memory's own words
        who = _who(finding.ranks) if finding.ranks else "The job"
        if finding.details.get("signal") == "SIGBUS":  # read from the signal alone
            return f"{who} died of a bus error: most likely out of shared memory (/dev/shm)", None
        return f"{who} ran out of shared memory (/dev/shm)", None
    if finding.details.get("killer") == "unknown":  # no memory report: read from the death
        who = _who(finding.ranks, "A process")
        if finding.details.get("signal") == "SIGKILL":
            return f"{who} {_was(finding.ranks)} killed: most likely out of host memory", None
        if "killed by signal" in str(finding.details.get("message")):
            return f"{who} lost a worker process to a kill: most likely out of host memory", None
        return f"{who} ran out of host memory", None
    if finding.details.get("killer") == "climb":  # read from the rank's own memory reports
        peak = finding.details.get("peak_gb")
        return (
            f"{_who(finding.ranks)} most likely ran out of host memory",
            f"its memory reports climbed to {peak:,.0f} GB, then its log ends",
        )
    if finding.details.get("host_memory"):
        hosts = finding.details.get("hosts") or []
        where = f" on {', '.join(map(str, hosts))}" if hosts else ""
        who = _who(finding.ranks) if finding.ranks else "The job"
        if finding.details.get("killer") == "allocation":
            return f"{who} ran out of host memory{where} (a failed allocation)", None
        if finding.details.get("killer") == "ray":
            return f"{who} ran out of host memory{where} (Ray's memory monitor)", None
        killer = "SLURM's" if finding.details.get("killer") == "slurm" else "the kernel's"
        return f"{who} ran out of host memory{where} ({killer} OOM killer)", None
    if finding.details.get("device"):
        return (
            f"{_who(finding.ranks)} could get no GPU memory at start-up (GPU full or faulty)",
            None,
        )
    what = f"{_who(finding.ranks)} ran out of {finding.details.get('memory') or 'GPU memory'}"
    if finding.details.get("in_nccl"):
        what += " inside NCCL"
    if finding.step is not None:
        what += f" at step {finding.step}"
    if finding.details.get("skipped"):
        what += " and skipped the batch"
    return what, None


def _rank_exception(finding: Finding, verdict: Verdict) -> Told:
    # a failure the logs tie to no rank is a process's: nothing says which rank it was
    who = _who(finding.ranks, "A process")
    signal = finding.details.get("signal")
    if finding.details.get("time_limit"):
        return "SLURM ended the job at its time limit, no rank having failed before", None
    if "cancelled" in finding.details:
        reason = str(finding.details["cancelled"])
        if reason == "preemption":
            return "SLURM preempted the job, no rank having failed before", None
        if reason == "job requeue":
            return "SLURM requeued the job, no rank having failed before", None
        said = f" ({reason})" if reason else " (no reason given: scancel)"
        return f"SLURM cancelled the job{said}, no rank having failed before", None
    if finding.details.get("from_outside") and signal == "SIGHUP":
        return "The launcher's terminal session closed (SIGHUP) and the job went with it", None
    if finding.details.get("from_outside"):
        return f"The launcher was sent {signal} from outside and stopped the job", None
    if signal == "SIGKILL":
        return (
            f"{who} {_was(finding.ranks)} killed (SIGKILL: the OOM killer or the scheduler)",
            None,
        )
    if signal and finding.details.get("loader_worker"):
        whose = rank_list(finding.ranks) if finding.ranks else "a rank"
        return f"DataLoader workers of {whose} crashed ({signal})", None
    if signal and finding.details.get("at_exit"):
        return f"{who} crashed ({signal}) while exiting, after the run had finished", None
    if signal:
        return f"{who} crashed ({signal})", None
    if finding.details.get("signal_cut"):
        return f"{who} crashed on a signal", "the line naming it is cut"
    if finding.details.get("relayed_only"):
        return f"{who} failed under torch.multiprocessing.spawn", "its own error is cut"
    if replicas := finding.details.get("replicas"):
        names = ", ".join(str(name) for name in replicas)
        plural = "s" if len(replicas) > 1 else ""
        return (
            f"Replica{plural} {names} exited with status {finding.details.get('exit_code')}",
            None,
        )
    if finding.details.get("exit_code") is not None:
        workers = finding.details.get("workers")
        who = f"{workers} processes" if isinstance(workers, int) and not finding.ranks else who
        code = finding.details["exit_code"]
        if isinstance(code, int) and (crash := windows_crash(code)):
            return f"{who} crashed (Windows exit code {crash})", None
        return f"{who} exited with code {code}", None
    if finding.details.get("exception") == "exit code cut":
        return "A worker exited with an error and the launcher stopped the others", None
    if finding.details.get("aborted"):
        return f"{who} went down first: its process group's abort hung", None
    if finding.details.get("workers_aborted"):
        return "A worker ended with an error and the launcher stopped the others", (
            "its report names no worker"
        )
    if finding.details.get("trainers_aborted"):
        whose = "the trainer's own log" if len(finding.ranks) == 1 else "the trainers' own logs"
        return f"{who} ended with an error (PaddlePaddle's launcher's report)", (
            f"the error is in {whose}"
        )
    if finding.details.get("died_unexpectedly"):
        own = "its" if len(finding.ranks) == 1 else "their"
        return f"{who} died unexpectedly, no error of {own} own logged", "the engine shut down"
    if finding.details.get("summary_cut"):
        return "A worker failed (torchrun's report)", "the logs do not say which rank or why"
    if finding.details.get("exiting"):
        return f"{who} crashed while exiting", "the CUDA driver was shutting down"
    if finding.details.get("service_report"):
        return "The training job failed (the training service's report)", (
            "the job's own error is not in these logs"
        )
    if finding.details.get("spawn_cut"):
        why = ": the training's numbers diverged" if finding.details.get("numerics") else ""
        return f"A spawned worker failed{why}", None
    if finding.details.get("cut") and "hosts" in finding.details:  # no rank to name
        hosts = finding.details["hosts"]
        many = int(finding.details.get("processes") or 1) > 1
        where = f" on {', '.join(map(str, hosts))}" if hosts else ""
        return (
            f"{'Processes' if many else 'A process'}{where} failed, "
            f"{'their tracebacks' if many else 'its traceback'} cut before the exception",
            "the logs do not say which ranks" if many else "the logs do not say its rank",
        )
    if finding.details.get("cut") and (
        finding.details.get("peer_lost")
        or ("frame" in finding.details and not finding.details["frame"])
    ):
        return (
            f"{who} failed, {'its' if len(finding.ranks) == 1 else 'their'} exception line cut off",
            None,
        )
    if finding.details.get("cut"):
        frame = str(finding.details.get("frame") or "")
        call = finding.details.get("call") or (
            frame.rsplit(" in ", 1)[-1] if " in " in frame else "a collective"
        )
        if not finding.blames_nobody:
            return f"{who}'s traceback stops in {call}, its exception line cut off", None
        return f"{who} was waiting in {call} when its log ends", None
    if finding.details.get("waiting"):
        return _waited(finding)
    name = _exception_name(str(finding.details.get("exception") or "exception"))
    exception = _a(name)
    if finding.details.get("every_process"):
        return f"Every process died of the same {name}", "a fault in what they all run"
    if finding.details.get("alike"):
        if finding.fix == NUMERICS_FIX and not finding.details.get("swallowed"):
            # the run's numbers, which every rank shares (DeepSpeed's fp16 loss scale at its
            # floor on several processes: ymcui/Chinese-LLaMA-Alpaca#534)
            on = who if finding.ranks else f"{finding.details['alike']} processes"
            return f"The training's numbers diverged on {on} ({name})", None
        alike = finding.details["alike"]
        if finding.ranks and (not isinstance(alike, int) or alike <= len(finding.ranks)):
            return f"{who} died of the same {name}", None
        if len(finding.ranks) == 1:
            # the one of them torchrun saw fail first (ROCm/ROCm#5259: 4 processes' GPU hang)
            return f"{alike} processes died of the same {name}", (
                f"torchrun saw rank {finding.ranks[0]} fail first"
            )
        return f"{alike} processes died of the same {name}", None
    if finding.fix == HARDWARE_FIX:
        return f"{who} died of a GPU hardware fault ({name})", None
    if finding.fix == NUMERICS_FIX and finding.ranks and not finding.details.get("swallowed"):
        # a check of the rank's own numbers failed (Megatron's NaN checks), whatever it raised
        return f"{who}'s training numbers diverged ({name})", None
    if not finding.details.get("swallowed"):
        # raised after a step's last mark: the rank finished that step, not the next
        when = "after" if finding.details.get("between_steps") else "at"
        at = f" {when} step {finding.step}" if finding.step is not None else ""
        return f"{who} died of {exception}{at}", None
    skipped = next(
        (
            f
            for f in verdict.chain
            if f.kind == "stage_divergence" and f.details.get("departure") == "skipped"
        ),
        None,
    )
    if skipped is not None:
        return f"{who} caught {exception} and skipped {_skipped(skipped)}", None
    if finding.details.get("went_on") is False:
        return f"{who} logged {exception}", None
    return f"{who} caught {exception} and kept going", None


def _reducer(finding: Finding, verdict: Verdict) -> Told:
    who = rank_list(finding.ranks) if finding.ranks else "a rank"
    counts = finding.details.get("parameter_counts")
    if isinstance(counts, dict):
        return (
            f"{who.capitalize()} built a different model than the others ({counts['odd']} "
            f"parameters, not {counts['others']})",
            None,
        )
    if finding.details.get("absent_from_check"):
        return f"{who.capitalize()} never took part in DDP's model check", None
    if "parameter_shape" in finding.details:
        index = finding.details["parameter_shape"]
        which = f"parameter {index}" if index is not None else "a parameter"
        return f"{who.capitalize()} built a different model than the others ({which}'s shape)", None
    if "parameters" not in finding.details:
        return f"DDP's reducer failed on {who}", None
    at = f" at step {finding.step}" if finding.step is not None else ""
    return f"Parameters got no gradient on {who}{at}", None


# What NCCL could not set up on a host, where its error names the part
HOST_PART_WORDS = {
    "shared_memory": "could not get shared memory (/dev/shm)",
    "interface": "found no network interface to use",
}
NCCL_WORDS = {
    "peer": "{who} lost its NCCL connection to a peer",
    "infiniband": "An InfiniBand link failed on {who}",
    "ib_device": "The InfiniBand adapter of {who} reported an error",
    "fabric": "A request on NCCL's network fabric failed on {who}",
    "cuda": "A CUDA call inside NCCL failed on {who}",
    "system": "A system call inside NCCL failed on {who}",
    "internal": "NCCL failed internally on {who}",
    "crash": "NCCL crashed in {who}",
    "usage": "NCCL refused a call on {who} (invalid usage)",
    "unknown": "NCCL failed on {who}",
    "topology": "NCCL could not map the devices of {who}",
    "foreign": "Another program connected to the NCCL port of {who}",
}


def _nccl_error(finding: Finding, verdict: Verdict) -> Told:
    details = finding.details
    if finding.part == "consequence":
        return f"{_who(finding.ranks, 'Some processes')} failed in NCCL", ""
    if details.get("transport") == "gloo":
        where = f" on {rank_list(finding.ranks)}" if finding.ranks else ""
        return f"gloo used the wrong network interface{where}: the process group never formed", None
    if details.get("transport") == "nccl" and details.get("phase") == "connect":
        where = f" on {rank_list(finding.ranks)}" if finding.ranks else ""
        if not details.get("interface"):
            return f"NCCL's connects were refused until the log ends{where}", (
                "nothing listens at the peer's address"
            )
        if finding.confidence == "low":  # listed across hosts, no connect seen failing
            return f"NCCL used the loopback interface in a job across hosts{where}", (
                "the communicator most likely never formed"
            )
        return f"NCCL bootstrapped over the loopback interface{where}", (
            "the communicator never formed"
        )
    if details.get("versions"):
        said = enumerated([str(version) for version in details["versions"]])
        return f"The processes run different NCCL versions ({said})", None
    if details.get("networks"):
        return "The nodes set up NCCL's network differently", None
    if details.get("class") == "wrong_results":
        return "The collective's results came out wrong (nccl-tests' check)", None
    if details.get("backend_error_unsaid"):
        return (
            f"{_who(finding.ranks, 'A process')} died of a DistBackendError",
            "the logs do not hold its message",
        )
    if details.get("watchdog_abort"):
        reported = _ranks_of(details.get("reported_by"))
        return (
            f"{_who(reported, 'A process')} was taken down by its NCCL watchdog",
            "the logs do not say which collective failed or why",
        )
    if details.get("checked_in_twice"):
        twice = _ranks_of(details.get("checked_in_twice"))
        return f"{_who(twice)} was started twice", "NCCL could not form the communicator"
    if details.get("class") == "invalid_rank":
        asked = _ranks_of(details.get("requested"))
        sizes = _ranks_of(details.get("nranks"))
        world = f" of a world of {sizes[0]}" if len(sizes) == 1 else ""
        return (
            f"NCCL refused {rank_list(asked) if asked else 'a rank'}{world}",
            "more processes were started than the world size says",
        )
    if details.get("common_mode") and details.get("class") == "ib_device":
        under = rank_list(finding.ranks) if finding.ranks else "several processes"
        return f"The InfiniBand adapter under {under} failed", None
    if details.get("common_mode"):
        when = " at once" if details.get("at_once") else ""
        return f"{_who(finding.ranks, 'Several processes')} hit the same NCCL error{when}", None
    host = details.get("host")
    if details.get("class") == "environment":
        owner = rank_list(finding.ranks) if finding.ranks else "a process"
        failed = HOST_PART_WORDS.get(str(details.get("host_part")), "could not set up")
        if finding.ranks and not finding.blames_nobody:  # the others set up on it
            return f"NCCL {failed} on {owner}{f' (host {host})' if host else ''}", None
        return f"NCCL {failed} on {f'host {host}' if host else f'the host of {owner}'}", None
    who = rank_list(finding.ranks) if finding.ranks else "a process"
    if not finding.ranks and host:
        who += f" on host {host}"
    if details.get("library") in LIBRARY_NAMES.values():
        return f"{details['library']} failed on {who}", None
    if details.get("sizes_disagree"):
        return f"NCCL on {who} received a message of another size than it expected", (
            "the ranks' calls differ"
        )
    words = NCCL_WORDS.get(str(details.get("class")), NCCL_WORDS["unknown"])
    return capitalized(words.format(who=who)), None


def _monitored_barrier(finding: Finding, verdict: Verdict) -> Told:
    if finding.blames_nobody:
        arrived = _ranks_of(finding.details.get("ranks_that_arrived"))
        return (
            f"{_who(arrived, 'Some ranks')} got errors from the monitored barrier's "
            f"coordinator ({rank_list(finding.ranks)})",
            "the logs do not say which rank failed",
        )
    what = f"{_who(finding.ranks)} never reached the monitored barrier"
    arrived = _ranks_of(finding.details.get("ranks_that_arrived"))
    return what, f"{rank_list(arrived)} waited for {_it(finding.ranks)}" if arrived else None


# `[/tmp/pip-install-43a3uo3a/horovod_.../horovod/common/gloo/http_store.cc:57] `: where in a
# library's source its error was raised, as gloo and c10 put it before the words (horovod's
# twice, ray-project/ray#25866)
SOURCE_PLACE = r"\[[^\[\]\s]+\.(?:cc|cpp|cu|h|hpp|py):\d+\]\s*"
HEADLINE_WORDS = 120  # of an exception's message in a headline


def _said_briefly(said: str) -> str:
    """An exception's words for a headline: without the source places its library put
    before them, its first sentence, clipped."""
    words = re.sub(SOURCE_PLACE, "", said)
    first = re.split(r"(?<=[.!?])\s+(?=[A-Z])", words, maxsplit=1)[0].rstrip(".")
    return clipped(first, HEADLINE_WORDS)


def _waited(finding: Finding) -> Told:
    """An exception whose words are a wait for other ranks that timed out."""
    exception = str(finding.details.get("exception") or "a timeout")
    said = _said_briefly(exception)
    if exception == HOROVOD_SHUT_DOWN:  # no timeout: another rank failed or finished first
        if finding.ranks:
            return f"{_who(finding.ranks)} stopped because Horovod had shut down", ""
        return (
            "A process stopped because Horovod had shut down",
            "the logs do not say which rank failed or finished first",
        )
    if finding.ranks:  # the ranks that waited are known, not the one they waited for
        return f"{_who(finding.ranks)} stopped waiting for other ranks ({said})", ""
    return (
        f"A process timed out waiting for other ranks ({said})",
        "the logs do not say its rank",
    )


def _collective_timeout(finding: Finding, verdict: Verdict) -> Told:
    details = finding.details
    culprits = finding.blamed
    if details.get("source") == "horovod stall":
        return f"{_who(finding.ranks)} never submitted the tensor the others waited on", None
    if details.get("waiting"):  # in an exception's words (rules/rank_exception.py)
        return _waited(finding)
    if details.get("departure"):  # a rank busy with its own work (busy_rank.py, main_first.py)
        return _stage_divergence(finding, verdict)
    if details.get("phase") == "rendezvous":
        if details.get("store_lost") and culprits:
            return f"Process group set-up lost the store {rank_list(culprits)} hosts", ""
        waiting = f" waiting for {rank_list(culprits)}" if culprits else ""
        return f"Process group set-up timed out{waiting}", ""
    if "arrived" in details and "expected" in details:
        return (
            "Process group set-up timed out at a store barrier that counted "
            f"{details['arrived']} arrivals for a world of {details['expected']}",
            "the extra ones an earlier attempt's (a restart) or processes started twice",
        )
    if details.get("phase") == "heartbeat":
        who = rank_list(finding.ranks) if finding.ranks else "a rank"
        waiting = details.get("waiting_ranks") or []
        if culprits and waiting:
            op = details.get("waiting_op")
            them = "it" if len(culprits) == 1 else "them"
            return (
                f"The NCCL watchdog of {rank_list(culprits)} got stuck",
                f"{rank_list(waiting)} waited for {them}" + (f" in {op}" if op else ""),
            )
        return f"The NCCL watchdog of {who} got stuck", ""
    if details.get("never_completed"):
        return (
            f"The first collective never completed on any rank ({finding.op} #{finding.seq})",
            "NCCL's transport never worked",
        )
    processes = details.get("unranked_processes")
    nobody = f"{processes:,} processes" if isinstance(processes, int) else "Some rank"
    what = f"{_who(finding.ranks, nobody)} timed out" + _in_after(finding)
    if culprits:
        said = CULPRIT_CLAUSES.get(
            str(details.get("culprits_from")), "{who} most likely never joined"
        )
        return what, said.format(who=rank_list(culprits))
    if details.get("culprits_from") == "the timeout setting":
        return what, "the timeout setting is too short"
    if details.get("ops_at_same_seq"):
        return what, "they were in different collectives at that point"
    return what, "the logs do not say why"


# How the blamed ranks stood, where "never joined" would say more than the evidence: a rank
# at a lower sequence number had joined the earlier collectives and fell behind; the rank-0
# guess is about work of its own.
CULPRIT_CLAUSES = {
    "the sequence numbers": "{who} lagged behind",
    "the desync report": "{who} lagged behind",
    "rank 0's own work": "{who} was most likely busy with work of its own",
    "rank 0's broadcast": "{who} was most likely busy with work of its own",
    "the rank alone in its own work": "{who} most likely entered it alone, in work of its own",
    # a rank whose last enqueued work is below theirs had joined and stopped short of it
    "the ranks that never enqueued it": "{who} never issued it",
    "the ranks that shut down their process group": "{who} had shut down its process group",
}


def _peer_lost(finding: Finding, verdict: Verdict) -> Told:
    if finding.details.get("node_failure"):
        nodes = finding.details.get("nodes") or []
        node = f"Node {', '.join(map(str, nodes))}" if nodes else "A node"
        if finding.details.get("launcher") == "mpirun":
            return f"{node} was lost under the job (mpirun lost its daemon there)", None
        if finding.details.get("launcher") == "ray":
            return f"{node} was lost under the job (Ray marked it dead)", None
        return f"{node} failed under the job (SLURM's node failure)", None
    if finding.details.get("hung_task"):
        pids = ", ".join(map(str, finding.details.get("pids") or []))
        who = _who(finding.ranks) if finding.ranks else f"Process {pids}"
        call, waited_in = finding.details.get("call"), finding.details.get("waited_in")
        inside = (
            f", in a {call} to {waited_in}"
            if call and waited_in
            else f", in {waited_in}"
            if waited_in
            else ", in a system call"
        )
        return f"{who} hung in the kernel{inside}", None
    if finding.details.get("launcher") == "msrun":
        nodes = ", ".join(map(str, finding.details.get("nodes") or []))
        who = _who(finding.ranks) if finding.ranks else f"Node {nodes}"
        return f"{who} went silent first: MindSpore's scheduler lost its heartbeat", None
    if finding.details.get("devices") is not None:
        peers = ", ".join(finding.details.get("peers") or [])
        who = _who(finding.ranks) if finding.ranks else f"Device {peers}"
        return f"{who} went silent first: HCCL lost its heartbeat", None
    what = f"{_who(finding.ranks, 'Some rank')} lost the connection to a peer"
    return what, "the logs do not say why"


def _flight_recorder(finding: Finding, verdict: Verdict) -> Told:
    """The first collective the Flight Recorder dumps disagree on (the rule always names it)."""
    who, number = _who(finding.ranks), f"#{finding.seq}"
    if differs := finding.details.get("differs"):  # the analyzer's culprits of a mismatch
        what = f"`{finding.op}`" if finding.op else "a collective"
        at = f" {number}" if finding.seq is not None else ""
        return f"{who} called {what}{at} {differs} than the others (Flight Recorder)", None
    if finding.seq is None:  # an analysis that names the group's collective, not its number
        what = f"`{finding.op}`" if finding.op else "a collective"
        return f"{who} never joined {what}, which the other ranks did (Flight Recorder)", None
    code = finding.details.get("code_line")
    if finding.details.get("stopped") or finding.details.get("skipped"):
        verb = "never issued" if finding.details.get("stopped") else "skipped"
        at = f", the one the others issued at {code}" if code else ""
        return f"{who} {verb} collective {number} (Flight Recorder){at}", None
    at = f", at {code}" if code else ""
    return f"{who} issued another collective as {number} (Flight Recorder){at}", None


def _stuck_location(finding: Finding, verdict: Verdict) -> Told:
    """Where py-spy found the odd ranks and where the others wait (largest group first)."""
    groups = finding.details.get("groups")
    if count := finding.details.get("unclaimed"):
        return (
            f"{every_process(count)} dumped hung waiting in {finding.details.get('waiting')}",
            None,
        )
    if finding.details.get("split"):
        return (
            f"The stack dumps show the processes apart: some in {finding.details.get('waiting')}, "
            f"some outside any collective at {finding.details.get('where')}",
            None,
        )
    if finding.details.get("outside"):
        return (
            f"A process is stuck in {finding.details.get('waiting')} at "
            f"{finding.details.get('where')}, outside any collective",
            "the others wait for it in collectives",
        )
    if finding.details.get("alone"):
        return f"{_who(finding.ranks)} is stuck outside any collective, the only rank dumped", None
    if not isinstance(groups, list) or len(groups) < 2:
        return f"{_who(finding.ranks)} {_are(finding.ranks)} stuck elsewhere than the others", None
    majority, odd = groups[0], groups[1]
    tool = finding.details.get("source") or "py-spy"
    what = f"{_who(finding.ranks)} {_are(finding.ranks)} stuck in {_place(odd)} ({tool})"
    return what, f"{rank_list(majority['ranks'])} wait in {_place(majority)}"


def _exception_name(said: str) -> str:
    """`ZMQError` of `zmq.error.ZMQError: Address already in use (addr='tcp://10.0.0.58:40043')`:
    the type without its module, never a piece of the message after it."""
    name = said.split(": ", 1)[0]
    if re.fullmatch(r"[\w.]+", name):
        return name.rsplit(".", 1)[-1]
    # a runtime's words for its failure (`CUDA failure`, `Memory access fault`)
    return name if re.fullmatch(r"[A-Z][A-Za-z]*(?: [A-Za-z]+){1,3}", name) else said


def _place(group: dict[str, Any]) -> str:
    return f"{group['waiting']} at {group['where']}"


def _was(ranks: list[int]) -> str:
    return "were" if len(ranks) > 1 else "was"


def _are(ranks: list[int]) -> str:
    return "is" if len(ranks) == 1 else "are"


def _implausible_number(finding: Finding, verdict: Verdict) -> Told:
    """Processes that joined the group beyond the world size (the only verdict of the kind)."""
    values = finding.details.get("values") or []
    if finding.details.get("extra_processes") and values:
        ranks = ", ".join(str(value) for value in values)
        return f"More processes were started than the world size (rank {ranks} joined)", None
    return _generic(finding, verdict)


def _rpc_transport(finding: Finding, verdict: Verdict) -> Told:
    """A TensorPipe link between RPC workers that never formed or broke."""
    details = finding.details
    peers = details.get("peers") or []
    to = f" to {peers[0]}" if peers else ""
    who = f"{_who(finding.ranks, 'A worker')}'s"
    if details.get("connect"):
        return f"{who} RPC agent could not connect{to} (`{details.get('error')}`)", None
    return f"{who} RPC transport{to} failed (`{details.get('error')}`)", None


def _rendezvous_split(finding: Finding, verdict: Verdict) -> Told:
    """Nodes whose agents waited in rendezvous of their own."""
    if finding.details.get("no_endpoint"):
        return (
            f"The {finding.details.get('nodes')} nodes waited in rendezvous of their own",
            "the launch names no --rdzv-endpoint",
        )
    runs = len(finding.details.get("run_ids") or [])
    why = "torchrun made up a run id on each" if finding.details.get("generated") else ""
    return f"The nodes joined {runs} different rendezvous and never met", why or None


def _worker_restart(finding: Finding, verdict: Verdict) -> Told:
    if finding.details.get("unexplained"):
        return (
            "The workers failed and the launcher restarted them",
            "the logs do not hold what the failed attempt died of",
        )
    return _generic(finding, verdict)


def _generic(finding: Finding, verdict: Verdict) -> Told:
    ranks = finding.blamed or finding.ranks
    return f"{finding.kind} on {rank_list(ranks)}" if ranks else finding.kind, None


WHAT: dict[str, Callable[[Finding, Verdict], Told]] = {
    "stage_divergence": _stage_divergence,
    "missing_rank": _missing_rank,
    "collective_mismatch": _collective_mismatch,
    "loader_size_mismatch": _loader_size_mismatch,
    "duplicate_device": _duplicate_device,
    "oom": _oom,
    "rank_exception": _rank_exception,
    "reducer_unused_params": _reducer,
    "nccl_error": _nccl_error,
    "monitored_barrier": _monitored_barrier,
    "collective_timeout": _collective_timeout,
    "peer_lost": _peer_lost,
    "fr_mismatch": _flight_recorder,
    "stuck_location": _stuck_location,
    "implausible_number": _implausible_number,
    "rpc_transport": _rpc_transport,
    "rendezvous_split": _rendezvous_split,
    "last_common_stage": _last_common_stage,
    "worker_restart": _worker_restart,
}


def _consequence(verdict: Verdict) -> str:
    """What the verdict did to the others: its first consequence; else the ranks its
    departure left waiting."""
    blamed = set(verdict.ranks)
    for finding in verdict.chain:
        if finding.part != "consequence":
            continue
        if finding.kind == "collective_timeout":
            return _timed_out(finding, blamed)
        if finding.kind == "peer_lost":
            if not finding.ranks:
                return f"another process then lost its connection to {_it(blamed)}"
            own = "its" if len(finding.ranks) == 1 else "their"
            if set(finding.ranks) <= blamed:  # the blamed rank's own peers went
                return f"{rank_list(finding.ranks)} then lost {own} connection to the others"
            return f"{rank_list(finding.ranks)} then lost {own} connection to {_it(blamed)}"
        if finding.kind == "collective_mismatch":
            aborted = rank_list(finding.ranks) if finding.ranks else "a rank"
            return f"gloo aborted {aborted} on the mismatch"
        if finding.kind == "nccl_error":
            if verdict.finding.kind == "duplicate_device":
                return "NCCL refused to start"
            if finding.details.get("after_oom"):  # the out-of-memory process's own errors
                continue
            who = rank_list(finding.ranks) if finding.ranks else "other processes"
            return f"{who} failed in NCCL after it"
    for finding in (verdict.finding, *verdict.chain):
        others = _ranks_of(finding.details.get("other_ranks"))
        if finding.details.get("departure") in ("skipped", "stopped") and others:
            return f"{rank_list(others)} waited for {_it(blamed)}"
    return ""


def _timed_out(timeout: Finding, blamed: set[int]) -> str:
    if timeout.details.get("phase") == "rendezvous":
        return "process group set-up never completed"
    waiting = [rank for rank in timeout.ranks if rank not in blamed]
    waited = timeout.details.get("timeout_ms")
    until = f" until the timeout ({duration(waited / 1000)})" if _number(waited) else ""
    where = f" in {timeout.op}" if timeout.op else ""
    if waiting and blamed:
        return f"{rank_list(waiting)} waited for {_it(blamed)}{where}{until}"
    who = rank_list(timeout.ranks) if timeout.ranks else "a rank the logs do not name"
    return f"{who} timed out" + _in_after(timeout)


def _in_after(timeout: Finding) -> str:
    waited = timeout.details.get("timeout_ms")
    where = f" in {timeout.op}" if timeout.op else ""
    return where + (f" after {duration(waited / 1000)}" if _number(waited) else "")


# --- small helpers ------------------------------------------------------------------------


def _who(ranks: Any, nobody: str = "A rank") -> str:
    return capitalized(rank_list(ranks)) if ranks else nobody


def _it(ranks: Any) -> str:
    return "it" if len(ranks) <= 1 else "them"


def _ranks_of(value: object) -> list[int]:
    return [int(rank) for rank in value] if isinstance(value, list) else []


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and value > 0


# Letters whose names begin with a vowel sound: an acronym is read letter by letter (an MPI
# error, an NCCL error, a UCX error)
VOWEL_SOUNDING_LETTERS = "AEFHILMNORSX"


def _a(word: str) -> str:
    acronym = word[:2].isupper() and word[:2].isalpha()
    vowel = word[:1] in VOWEL_SOUNDING_LETTERS if acronym else word[:1].lower() in "aeiou"
    return f"{'an' if vowel else 'a'} {word}"


def with_headlines(report: dict[str, Any], analyses: tuple[Analysis, ...]) -> dict[str, Any]:
    """The report model with each verdict's headline under `verdict.headline` (a copy: the
    model itself is left as `build_upload_report` made it). `analyses` are the upload's jobs,
    in the model's order."""
    jobs = report.get("jobs") if report.get("several_jobs") else None
    if jobs is None:
        return _with_headline(report, analyses[0])
    return {
        **report,
        "jobs": [
            _with_headline(job, analysis) for job, analysis in zip(jobs, analyses, strict=True)
        ],
    }


def _with_headline(report: dict[str, Any], analysis: Analysis) -> dict[str, Any]:
    verdict = report.get("verdict")
    if not verdict or "headline" in verdict:
        return report
    return {**report, "verdict": {**verdict, "headline": headline(analysis)}}
