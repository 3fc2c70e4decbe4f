"""Ranks whose connection to a peer broke (gloo `Connection closed by peer`, `Read error ...
Connection reset by peer`), and the peers themselves lost from outside the job: a node the
scheduler lost under the step (SLURM's node failure).

Almost always a symptom: the peer process exited after its own error (or was killed), and
every rank still talking to it sees the connection drop. The peer that went first is where
to look, not the ranks that report it. gloo's `Application timeout caused pair closure` is not
one: the rank closed its own side after its own timeout (the peer may be alive and busy), so
it is the timeout's echo and no report about the peer.
"""

from __future__ import annotations

import json
from dataclasses import replace

import polars as pl

from logforensics.findings import Confidence, Finding, evidence_from
from logforensics.job import Job
from logforensics.placement import earliest_time
from logforensics.registry import Rule
from logforensics.stopped_workers import EXIT_REPORTS, child_failed_error, exit_signal
from logforensics.text import rank_list
from parsers.slurm import DUE_TO_NODE_FAILURE

LOST = ("peer_closed", "peer_reset")
FIX = (
    "Look for the rank that exited first (an exception, an abort such as gloo's size check, "
    "an OOM kill): its own log explains the failure; these ranks only saw it go."
)


NODE_FAILURE_FIX = (
    "Nothing in the job's code did this: the node crashed or lost contact with the scheduler "
    "(hardware, kernel, network). Ask the cluster's admins what happened to it (`sacct -j "
    "<job> -o JobID,State,NodeList`, the slurmctld log), exclude it (`--exclude=<node>`) and "
    "resume from the last checkpoint."
)


DAEMON_LOST_FIX = (
    "Nothing in the job's code did this: the node (or pod) went down or its network failed. "
    "Find out what happened to it (`kubectl describe pod` for an eviction or an OOM kill, the "
    "node's `dmesg -T`, the scheduler's record of the job), leave it out and resume from the "
    "last checkpoint."
)


def check(job: Job) -> list[Finding]:
    lost = _lost(job)
    return (
        _node_failures(job)
        + _heartbeats_lost(job)
        + _nodes_timed_out(job)
        + _hung_in_the_kernel(job)
        + _connections_lost(lost)
        + (
            _left_early(job, lost)
            or _exited_quietly(job, lost)
            or _quiet_peer(job, lost)
            or _absent_peer(job, lost)
        )
    )


HEARTBEAT_FIX = (
    "Find why the process on that device ended or went silent first: its own log (an "
    "exception, an OOM kill, a core dump), the host's `dmesg -T`, and the device's state "
    "(`npu-smi info`). If no process died, check the network between the hosts. The others "
    "only waited for it until HCCL_EXEC_TIMEOUT."
)


def _heartbeats_lost(job: Job) -> list[Finding]:
    """HCCL's word that it lost a device's heartbeat (`ExceptionType:[Heartbeat Lost
    Occurred]`): that device's process exited or its network went down, before the others'
    collective timed out waiting for it. The device is a rank where the reports name one host
    only (a node's devices are its local ranks, so on one node its ranks)."""
    lost = job.events.filter(pl.col("event") == "heartbeat_lost").sort("file", "line")
    if lost.is_empty():
        return []
    peers = lost.get_column("peer").unique(maintain_order=True).to_list()
    hosts = {peer.rsplit("/", 1)[0] for peer in peers} | {
        json.loads(extra)["by"].rsplit("/", 1)[0] for extra in lost.get_column("extra")
    }
    devices = sorted({int(device) for device in lost.get_column("device")})
    ranks = devices if len(hosts) == 1 and job.one_node() else []
    named = ", ".join(peers[:4])
    summary = (
        f"HCCL lost the heartbeat of device {named} (host/device): its process exited or its "
        "network went down, and the others' collective timed out waiting for it."
        + (f" On this one node that is {rank_list(ranks)}." if ranks else "")
    )
    details = {"peers": peers, "devices": devices}
    return [_lost_from_outside(lost, summary, HEARTBEAT_FIX, ranks, "medium", details)]


NODE_TIMED_OUT_FIX = (
    "Read that worker's own log first (msrun writes `worker_<rank>.log` in its `--log_dir`): "
    "it ended or hung before the others (an exception, an OOM kill, a device error), and "
    "msrun then stopped every worker. If its log ends with no error, check its host "
    "(`dmesg -T`, `npu-smi info`) and the network to the scheduler's host."
)


def _nodes_timed_out(job: Job) -> list[Finding]:
    """msrun's reading of its scheduler's log: the nodes whose heartbeat it lost (`Time out
    nodes are ['3']`, parsers/msrun.py). A worker's node id is its rank: that rank went silent
    before msrun stopped the others."""
    lost = job.events.filter(pl.col("event") == "node_timed_out").sort("file", "line")
    if lost.is_empty():
        return []
    nodes = lost.get_column("peer").unique(maintain_order=True).to_list()
    ranks = sorted({int(node) for node in nodes if node.isdigit() and len(node) < 10})
    who = rank_list(ranks) if len(ranks) == len(nodes) else f"node {', '.join(nodes)}"
    summary = (
        f"MindSpore's scheduler lost the heartbeat of {who} (msrun's analysis of its log): that "
        "worker ended or hung first, and msrun then stopped the others."
    )
    details = {"nodes": nodes, "launcher": "msrun"}
    return [_lost_from_outside(lost, summary, NODE_TIMED_OUT_FIX, ranks, "medium", details)]


def _slurm_step_cancelled() -> pl.Expr:
    return (pl.col("event") == "step_cancelled") & (pl.col("exc_message") == DUE_TO_NODE_FAILURE)


def lost_a_node(job: Job) -> bool:
    """Whether the logs say a node was lost under the job: SLURM's node failure (its `srun`
    error or the step it cancelled) or mpirun's lost daemon."""
    lost = pl.col("event").is_in(["node_failure", "node_lost"]) | _slurm_step_cancelled()
    return not job.events.filter(lost.fill_null(False)).is_empty()


def _node_failures(job: Job) -> list[Finding]:
    """The scheduler lost a node under the step (`srun: error: Node failure on X`, or the
    step `CANCELLED ... DUE TO NODE FAILURE`): every rank on it died from outside the job and
    SLURM ended the others (huggingface/m4-logs tr_141: a node crash after a finished
    validation). The ranks blamed are those the logs place on that node, if any."""
    events = job.events
    failed = events.filter(pl.col("event") == "node_failure")
    cancelled = events.filter(_slurm_step_cancelled())
    if failed.is_empty() and cancelled.is_empty():
        return _daemons_lost(job)
    nodes = _nodes(failed)
    named = ", ".join(nodes)
    summary = (
        f"The scheduler lost node{'s' if len(nodes) > 1 else ''} {named} while the job ran "
        "(SLURM's node failure) and ended the job step"
        if nodes
        else "SLURM cancelled the job step because a node failed"
    ) + ": the ranks on it died from outside the job, and the others were stopped."
    rows = pl.concat([failed, cancelled], how="diagonal_relaxed")
    return [
        _node_lost(job, rows, nodes, summary, NODE_FAILURE_FIX, "high" if nodes else "medium", {})
    ]


def _daemons_lost(job: Job) -> list[Finding]:
    """A launcher lost the daemon it kept on a node: mpirun's (`ORTE has lost communication
    with a remote daemon`, kubeflow/mpi-operator#152), or Ray's, whose raylet missed its
    heartbeats (ray-project/ray#22349: a GCP worker node shut down under Ray Train). That node
    died or its network failed, and the workers on it with it."""
    lost = job.events.filter(pl.col("event") == "node_lost")
    if lost.is_empty():
        return []
    nodes = _nodes(lost)
    plural = "s" if len(nodes) > 1 else ""
    if (lost.get_column("family") == "ray_core").all():
        summary = (
            f"Ray marked node{plural} {', '.join(nodes)} dead while the job ran (its raylet "
            "missed too many heartbeats): the node died or its network failed, and the workers "
            "on it were lost with it."
        )
        launcher = "ray"
    else:
        summary = (
            f"mpirun lost contact with its daemon on node{plural} {', '.join(nodes)} while the "
            "job ran: the node died or its network failed, and mpirun ended the job."
        )
        launcher = "mpirun"
    return [
        _node_lost(job, lost, nodes, summary, DAEMON_LOST_FIX, "medium", {"launcher": launcher})
    ]


HUNG_FIX = (
    "Nothing in the job's code can end this wait: the process is in uninterruptible sleep (state "
    "D) until {what} returns, and cannot even be killed. Check {where} on that node (its "
    "client's health and log, the storage servers; `mmhealth node show` for GPFS), keep "
    "checkpoints, logs and caches on local disk where the job can, and restart without the "
    "node if it stays stuck."
)
# a job's own process, by the command the kernel names: the interpreter or PyTorch's threads
JOB_COMMAND = r"^(?:python[\d.]*|pt_\w+|torchrun)$"


def _hung_in_the_kernel(job: Job) -> list[Finding]:
    """The kernel's hung-task report of a job's process: it stood in uninterruptible sleep for
    minutes, inside a system call that never returned (huggingface/m4-logs tr_141: a write to
    GPFS as the filesystem froze; the other 63 processes waited in a barrier). A process is the
    job's where the logs name its pid elsewhere or the kernel names it by the interpreter."""
    events = job.events
    hung = events.filter(pl.col("event") == "hung_task")
    if hung.is_empty():
        return []
    elsewhere = events.filter((pl.col("event") != "hung_task") & pl.col("pid").is_not_null())
    known = elsewhere.get_column("pid").unique().implode()
    hung = hung.filter(
        pl.col("pid").is_in(known) | pl.col("exc_message").str.contains(JOB_COMMAND)
    ).sort("file", "line")
    if hung.is_empty():
        return []
    first = hung.row(0, named=True)
    extra = hung.get_column("extra").drop_nulls()
    said = json.loads(extra.item(0)) if not extra.is_empty() else {}
    call, waited_in = said.get("call"), said.get("waited_in")
    inside = (
        f"in a {call} to {waited_in}"
        if call and waited_in
        else f"in {waited_in}"
        if waited_in
        else f"in a {call}"
        if call
        else "in a system call"
    )
    pids = hung.get_column("pid").unique(maintain_order=True).to_list()
    who = ", ".join(f"{first['exc_message']}:{pid}" for pid in pids)
    ranks = sorted(hung.get_column("rank").drop_nulls().unique().to_list())
    named = f" ({rank_list(ranks)})" if ranks else ""
    seconds = int(first["elapsed_ms"] or 0) // 1000
    summary = (
        f"The kernel reports process{'es' if len(pids) > 1 else ''} {who}{named} blocked for "
        f"more than {seconds} s, {hung.height} time{'s' if hung.height > 1 else ''} (a hung "
        f"task, in uninterruptible sleep), {inside}: the call never returned, so "
        f"{'its rank' if len(pids) == 1 else 'their ranks'} could not reach the next "
        "collective, and the others waited for it."
    )
    fix = HUNG_FIX.format(
        what=f"the {call}" if call else "the system call",
        where=waited_in or "the filesystem or device it waits on",
    )
    details = {"hung_task": True, "pids": pids, "call": call, "waited_in": waited_in}
    return [_lost_from_outside(hung, summary, fix, ranks, "medium", details)]


def _nodes(rows: pl.DataFrame) -> list[str]:
    return rows.get_column("host").drop_nulls().unique(maintain_order=True).to_list()


def _node_lost(
    job: Job,
    rows: pl.DataFrame,
    nodes: list[str],
    summary: str,
    fix: str,
    confidence: Confidence,
    details: dict[str, object],
) -> Finding:
    """A node lost from outside the job, blaming the ranks the logs place on it, if any."""
    on_them = job.events.filter(pl.col("host").is_in(nodes) & pl.col("rank").is_not_null())
    ranks = sorted(on_them.get_column("rank").unique().to_list())
    return _lost_from_outside(
        rows, summary, fix, ranks, confidence, {"node_failure": True, "nodes": nodes, **details}
    )


def _lost_from_outside(
    rows: pl.DataFrame,
    summary: str,
    fix: str,
    ranks: list[int],
    confidence: Confidence,
    details: dict[str, object],
) -> Finding:
    """A process or node the job lost from outside, its rows the evidence."""
    rows = rows.sort("file", "line")
    evidence, total = evidence_from(rows.select("file", "line", "text", "rank"))
    return Finding(
        kind="peer_lost",
        severity="error",
        part="explanation",
        summary=summary,
        fix=fix,
        ranks=ranks,
        evidence=evidence,
        evidence_total=total,
        timestamp=earliest_time(rows),
        blames_nobody=not ranks,
        confidence=confidence,
        details=details,
    )


def _lost(job: Job) -> pl.DataFrame:
    """The reports of a lost peer, but those inside a traceback that ends in Ctrl-C's
    `KeyboardInterrupt` or below the launcher's word that it was signalled from outside: when a
    stopped job's ranks exit one by one, the others' waits fail on the first one gone (a run
    here, a healthy job stopped with Ctrl-C)."""
    events = job.events
    lost = events.filter(pl.col("event").is_in(LOST))
    interrupts = events.filter(
        (pl.col("event") == "exception")
        & pl.col("exc_type").str.ends_with("KeyboardInterrupt").fill_null(False)
        & pl.col("end_line").is_not_null()
    ).select("file", pl.col("line").alias("_from"), pl.col("end_line").alias("_to"))
    signalled = events.filter(pl.col("event") == "launcher_signalled").select(
        "file", pl.col("line").alias("_from"), pl.lit(None, pl.UInt32).alias("_to")
    )
    interrupts = pl.concat([interrupts, signalled], how="vertical_relaxed")
    if lost.is_empty() or interrupts.is_empty():
        return lost
    inside = (
        lost.select("file", "line")
        .join(interrupts, on="file")
        .filter(
            (pl.col("line") >= pl.col("_from"))
            & (pl.col("_to").is_null() | (pl.col("line") <= pl.col("_to")))
        )
        .select("file", "line")
    )
    return lost.join(inside, on=["file", "line"], how="anti")


def _connections_lost(lost: pl.DataFrame) -> list[Finding]:
    if lost.is_empty():
        return []
    reporters = sorted(lost.get_column("rank").drop_nulls().unique().to_list())
    peers = sorted(lost.get_column("peer").drop_nulls().unique().to_list())
    who = rank_list(reporters).capitalize() if reporters else "Some rank"
    summary = (
        f"{who} lost the connection to a peer"
        + (f" ({', '.join(peers[:4])})" if peers else "")
        + ": the peer process exited or was killed; this is a consequence, not a cause."
    )
    evidence, total = evidence_from(
        lost.sort("file", "line")
        .unique(subset=["rank"], keep="first", maintain_order=True)
        .select("file", "line", "text", "rank")
    )
    return [
        Finding(
            kind="peer_lost",
            severity="error",
            part="consequence",
            summary=summary,
            fix=FIX,
            ranks=reporters,
            evidence=evidence,
            evidence_total=total,
            timestamp=earliest_time(lost),
            details={"peers": peers},
        )
    ]


LEFT_EARLY_FIX = (
    "Every rank must run the same steps and collectives to the end. Find where {who}'s loop "
    "ended early: a `return` or `break` on a condition only it met (no more data, an early "
    "stop of its own), fewer batches on that rank (shard with DistributedSampler; "
    "`drop_last=True`), an exit under `if rank == ...`. Decide to stop together instead: "
    "all_reduce a stop flag (MAX) every step, and leave the loop on every rank at once."
)


def _left_early(job: Job, lost: pl.DataFrame) -> list[Finding]:
    """A rank that left the job on its own while the others still waited for it in
    collectives. torchrun's summary lists every worker of its node that failed or that it
    stopped; here the failed ones lost their connection to a peer, and a local rank below the
    listed ones is missing from the list and was not stopped: it had exited on its own, with
    code 0 and no error (a run here: rank 1's early `return`, then gloo's
    `Connection closed by peer` on ranks 0 and 2)."""
    events = job.events
    listed = events.filter(pl.col("event") == "child_failed")
    if lost.is_empty() or listed.is_empty():
        return []
    stopped = set(events.filter(pl.col("event") == "worker_sigterm").get_column("pid").to_list())
    if not stopped <= set(listed.get_column("pid").to_list()):
        return []  # the agent stopped a worker its summary does not list: it had not left
    if listed.get_column("host").drop_nulls().n_unique() > 1:
        return []
    failed = set(listed.get_column("rank").drop_nulls().to_list())
    if not failed or failed != set(listed.get_column("local_rank").drop_nulls().to_list()):
        return []  # the summary's ranks are not its node's local ranks: not one node
    reporters = set(lost.get_column("rank").drop_nulls().to_list())
    if not reporters or not reporters <= failed:
        return []
    left = sorted(set(range(max(failed) + 1)) - failed)
    if not left or len(left) >= len(failed):
        return []
    own = events.filter(pl.col("rank").is_in(left) & (pl.col("severity") == "error"))
    if not own.is_empty():
        return []
    who, others = rank_list(left), rank_list(sorted(failed))
    summary = (
        f"{who.capitalize()} left the job early, with no error: torchrun's summary lists "
        f"{others} as failed or stopped and not {'it' if len(left) == 1 else 'them'}, so "
        f"{who} had already exited on {'its' if len(left) == 1 else 'their'} own "
        f"while {others} still waited for {'it' if len(left) == 1 else 'them'} in a "
        "collective (they lost their connection to it)."
    )
    rows = pl.concat([listed, lost], how="diagonal_relaxed").sort("file", "line")
    return [
        _went_first(
            rows.select("file", "line", "text", "rank"),
            lost,
            summary,
            LEFT_EARLY_FIX.format(who=who),
            left,
            "medium",
            {"departure": "left", "other_ranks": sorted(failed)},
        )
    ]


EXITED_FIX = (
    "Find where the script of {who} exits without raising: a `sys.exit({code})` or `os._exit` "
    "under a condition met on that rank alone (a check of its data, a file it could not read, an "
    "early stop of its own). The other ranks cannot go on alone: raise instead so that every "
    "rank stops, or decide together (all_reduce a flag) and stop every rank at once."
)


def exited_quietly(job: Job) -> bool:
    """Whether a rank the launcher reports as exited with a code left the others without an
    error of its own, its output in the logs (the departure `check` says)."""
    return bool(_exited_quietly(job, _lost(job)))


def _exited_quietly(job: Job, lost: pl.DataFrame) -> list[Finding]:
    """A rank the launcher reports as exited with a code of its own (1, not a signal's), whose
    output is in the logs but holds no error, while every other rank's error is a lost peer:
    it ended itself without raising (`sys.exit(1)` prints nothing), and the others, still in
    their collective, lost their connection to it (a run here: rank 1's `sys.exit(1)` after
    its own message, torchrun's summary naming it the root cause with exit code 1)."""
    events = job.events
    reporters = set(lost.get_column("rank").drop_nulls().to_list())
    if not reporters:
        return []
    exits = events.filter(
        pl.col("event").is_in(EXIT_REPORTS)
        & (pl.col("exitcode").fill_null(0) > 0)
        & exit_signal().is_null()  # (a code a signal's death leaves is no exit of its own)
        & pl.col("rank").is_not_null()
        & ~pl.col("rank").is_in(list(reporters))
    )
    exited = sorted(exits.get_column("rank").unique().to_list())
    if not exited or len(exited) > len(reporters):
        return []
    errors = events.filter(
        (pl.col("severity") == "error")
        & ~pl.col("event").is_in(EXIT_REPORTS)
        & ~about_a_peer()
        & ~child_failed_error()
    )
    if not errors.is_empty():
        return []  # an error of another kind: its own rule explains the exit
    own = events.filter(pl.col("rank").is_in(exited) & ~pl.col("event").is_in(EXIT_REPORTS))
    if own.get_column("rank").n_unique() < len(exited):
        return []  # an exited rank's output is not in the logs: its error may be elsewhere
    last_words = _last_words(job, own, lost)
    codes = sorted(set(exits.get_column("exitcode").to_list()))
    who, others = rank_list(exited), rank_list(sorted(reporters))
    one = len(exited) == 1
    said = (
        f" {who.capitalize()}'s last line: `{last_words.item(0, 'text').strip()}`."
        if one and not last_words.is_empty()
        else ""
    )
    summary = (
        f"{who.capitalize()} exited with code {', '.join(map(str, codes))} and no error of "
        f"{'its' if one else 'their'} own (no traceback, though {'its' if one else 'their'} "
        f"output is in the logs: a `sys.exit` or a check that stopped {'it' if one else 'them'}"
        f"), while {others} still waited for {'it' if one else 'them'} in a collective and "
        f"lost their connection to {'it' if one else 'them'}." + said
    )
    quoted = pl.concat(
        [
            last_words,
            exits.sort("file", "line").select("file", "line", "text", "rank"),
            lost.sort("file", "line").select("file", "line", "text", "rank"),
        ],
        how="vertical_relaxed",
    )
    fix = EXITED_FIX.format(who=who, code=codes[0])
    return [
        _went_first(
            quoted,
            lost,
            summary,
            fix,
            exited,
            "medium",
            {"departure": "exited", "exit_codes": codes, "other_ranks": sorted(reporters)},
        )
    ]


def _last_words(job: Job, own: pl.DataFrame, lost: pl.DataFrame) -> pl.DataFrame:
    """The line a rank printed after its last recognised one and before the others' lost
    peers, where it names the rank (`rank 1: found corrupt shard ..., exiting`): what it said
    as it left, which no parser reads."""
    last = own.sort("line").tail(1)
    file, after, rank = last.item(0, "file"), last.item(0, "line"), last.item(0, "rank")
    before = lost.filter(pl.col("file") == file).get_column("line").min()
    if before is None or before <= after + 1:
        return pl.DataFrame(schema={"file": pl.String, "line": pl.UInt32, "text": pl.String})
    between = pl.DataFrame(
        {"file": [file] * (before - after - 1), "line": list(range(after + 1, before))},
        schema={"file": pl.String, "line": pl.UInt32},
    ).head(20)
    names_it = rf"(?i)\brank[\s:=\[]*{rank}\b"
    return (
        job.quote(between.with_columns(pl.lit(rank, pl.Int32).alias("rank")))
        .join(job.events.select("file", "line").unique(), on=["file", "line"], how="anti")
        .filter(pl.col("text").fill_null("").str.contains(names_it))
        .tail(1)
        .select("file", "line", "text", "rank")
    )


# A lost peer as the exception that ends a rank's wait says it (gloo's, the transport's)
LOST_WORDS = r"(?i)connection closed by peer|connection reset by peer"


def about_a_peer() -> pl.Expr:
    """A rank's report that it lost a peer: the parsers' events, or an exception that ends its
    wait in those words."""
    return pl.col("event").is_in(LOST) | (
        (pl.col("event") == "exception")
        & pl.col("exc_message").str.contains(LOST_WORDS).fill_null(False)
    )


QUIET_FIX = (
    "Read the end of {who}'s own log: if it left its loop on purpose (its last lines say it "
    "stopped, finished or ran out of data), every rank must run the same steps to the end: "
    "decide to stop together (all_reduce a stop flag) and shard the data evenly "
    "(DistributedSampler, `drop_last=True`). If it stops mid-step, it was killed from outside: "
    "look for the OOM killer on its host (`dmesg -T | grep -i -E 'killed process|out of "
    "memory'`) or the scheduler's record of the job."
)


def _quiet_peer(job: Job, lost: pl.DataFrame) -> list[Finding]:
    """The ranks whose logs hold no error while every other rank's errors are a lost peer:
    they are the peers that went first, leaving their loop early or killed without a word (a
    run here: torchrun --log-dir files of rank 1's early `return`; no launcher summary)."""
    events = job.events
    reporters = set(lost.get_column("rank").drop_nulls().to_list())
    if not reporters:
        return []
    errors = events.filter(pl.col("severity") == "error")
    if not errors.filter(~about_a_peer()).is_empty():
        return []  # an error of another kind: its own rule explains the lost peers
    quiet = sorted(set(job.ranks_seen) - set(errors.get_column("rank").drop_nulls().to_list()))
    if not quiet or len(quiet) >= len(reporters) or errors.get_column("rank").null_count():
        return []
    if job.world_size is not None and job.world_size.value > len(job.ranks_seen):
        return []  # the peer that went may be a rank whose log is not here
    last = (
        job.file_stats.filter(pl.col("rank").is_in(quiet) & pl.col("last_line").is_not_null())
        .sort("rank", "last_line")
        .unique("rank", keep="last", maintain_order=True)
    )
    who, others = rank_list(quiet), rank_list(sorted(reporters))
    said = ""
    if last.height == 1 and last.item(0, "last_text"):
        said = f" {who.capitalize()}'s last line: `{str(last.item(0, 'last_text')).strip()}`."
    summary = (
        f"{who.capitalize()} {'has' if len(quiet) == 1 else 'have'} no error in the logs while "
        f"{others} lost their connection to a peer: {who} went first. It left its loop early "
        "(an early `return` or `break`, no more data) or was killed from outside without a "
        "word (the OOM killer writes to the kernel's log, not the job's)." + said
    )
    rows = pl.concat(
        [
            last.select(
                "file", pl.col("last_line").alias("line"), pl.col("last_text").alias("text"), "rank"
            ),
            lost.sort("file", "line").select("file", "line", "text", "rank"),
        ],
        how="vertical_relaxed",
    )
    return [
        _went_first(
            rows,
            lost,
            summary,
            QUIET_FIX.format(who=who),
            quiet,
            "low",
            {"departure": "quiet", "other_ranks": sorted(reporters)},
        )
    ]


ABSENT_FIX = (
    "Get {who}'s own log (its stdout and stderr, or the scheduler's output file of its node): "
    "its last lines say why it went (an exception, an OOM kill in the host's `dmesg -T`, an "
    "early exit). The other ranks only saw it go."
)


def _absent_peer(job: Job, lost: pl.DataFrame) -> list[Finding]:
    """The one rank of the world that left no line, where every error in the logs is another
    rank losing its connection to a peer: that rank is the peer they lost, its own log not in
    the upload (pytorch/examples#772: the parameter server's log alone, `world_size 2`, its
    `Connection reset by peer` when the trainer, rank 1, crashed)."""
    reporters = set(lost.get_column("rank").drop_nulls().to_list())
    world = job.world_size
    seen = set(job.ranks_seen)
    if not reporters or not seen:
        return []
    errors = job.events.filter(pl.col("severity") == "error")
    if not errors.filter(~about_a_peer()).is_empty():
        return []  # an error of another kind: its own rule explains the lost peers
    # without the world's size, a gap among the ranks seen from 0 up is a rank of the world
    # (horovod/horovod#2484: ranks 0 and 2 lose their peer, rank 1 killed, no line of its own)
    size = world.value if world is not None else max(seen) + 1
    # (sizes are log text: one rank absent is counted before any range is made)
    if size - len({rank for rank in seen if 0 <= rank < size}) != 1 or not reporters <= seen:
        return []
    absent = sorted(set(range(size)) - seen)
    who, others = rank_list(absent), rank_list(sorted(reporters))
    among = (
        f"of a world of {world.value}, {who} is the one rank not here"
        if world is not None
        else f"of ranks 0 to {max(seen)}, {who} is the one rank not here"
    )
    summary = (
        f"{who.capitalize()} left no line in these logs while {others} lost "
        f"{'its' if len(reporters) == 1 else 'their'} connection to a peer: {among}, so most "
        "likely the peer that went. Why it went is in its own log."
    )
    rows = lost.sort("file", "line").select("file", "line", "text", "rank")
    finding = _went_first(
        rows,
        lost,
        summary,
        ABSENT_FIX.format(who=who),
        absent,
        "medium" if world is not None else "low",
        {"departure": "absent", "other_ranks": sorted(reporters)},
    )
    return [replace(finding, kind="missing_rank", part="explanation")]


def _went_first(
    quoted: pl.DataFrame,
    lost: pl.DataFrame,
    summary: str,
    fix: str,
    ranks: list[int],
    confidence: Confidence,
    details: dict[str, object],
) -> Finding:
    """The departure of the ranks the others lost their connection to."""
    evidence, total = evidence_from(quoted)
    return Finding(
        kind="stage_divergence",
        severity="error",
        part="departure",
        summary=summary,
        fix=fix,
        ranks=ranks,
        evidence=evidence,
        evidence_total=total,
        confidence=confidence,
        timestamp=earliest_time(lost),
        details=details,
    )


def _diagnosis(finding: Finding) -> str:
    """A process or node the job lost from outside is a rank gone missing from the job; a
    process stuck in the kernel left the others' path alive. A broken connection is a rank
    gone missing where it stands in as the verdict (the logs say no more); as a symptom it
    keeps its own name (its ranks are the ones that lost the peer, not the peer)."""
    if finding.details.get("hung_task"):
        return "stage_divergence"
    if finding.part == "consequence" and finding.role != "root_cause":
        return "peer_lost"
    return "missing_rank"


RULE = Rule(kind="peer_lost", check=check, diagnosis=_diagnosis)
