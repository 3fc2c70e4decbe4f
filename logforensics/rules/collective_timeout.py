"""Collective timeouts: which ranks timed out, on which collective, and who lagged.

A watchdog or gloo timeout fires on the ranks that waited; it is the symptom of a hang, not
its cause. What it can still tell: ranks whose last completed (or timed-out) sequence number
is lower than the others' are the laggards, and a different OpType at the same SeqNum across
ranks proves the ranks were in different collectives (a desync) even without DETAIL.
"""

from __future__ import annotations

import re

import polars as pl

from logforensics.busy_rank import LOADING, NEAR, ONE_RANK_WORK, SAVE_FIX, busy_past_timeout
from logforensics.desync import (
    ROOTED_OPS,
    TIMEOUT_EVENTS,
    comparable_timeout_seqs,
    describe,
    group_key,
    mixed_ops_at_one_seq,
    odd_ones_out,
    per_rank_timeouts,
    points_apart,
    sizes_apart,
)
from logforensics.findings import Finding, evidence_from
from logforensics.job import Job
from logforensics.main_first import main_rank_still_busy
from logforensics.never_completed import aborted_ranks
from logforensics.never_issued import never_enqueued
from logforensics.placement import clock_of, earliest_time, place, placed_finding
from logforensics.registry import Rule
from logforensics.store_barrier import overcounted_barrier
from logforensics.teardown import finished_ranks
from logforensics.text import capitalized, duration, rank_list
from parsers.hccl import remote_rank
from parsers.phase_banners import phase_name

FIX_SUSPECTS = (
    "The timeout is where the waiting ranks gave up, not why. Read what {who} did instead of "
    "joining this collective (the last lines of {its} log, in the per-rank table): an "
    "exception, a skipped step, a slow data loader or a collective the others never issued."
)
FIX_NO_SUSPECT = (
    "The timeout is where the waiting ranks gave up, not why. Compare the ranks' last lines in "
    "the per-rank table: the rank whose log stops earliest, or that reported no timeout, is "
    "the one that never joined this collective; read what it did instead."
)
FIX_NEXT_TIME = (
    "To catch the divergence itself next time, run with TORCH_DISTRIBUTED_DEBUG=DETAIL (names "
    "the mismatching collectives) and keep the stage marks; raise the timeout only if the "
    "collective is legitimately slow."
)


def timeout_fix(culprits: list[int]) -> str:
    """What to do about a timeout: look at the ranks it singles out, or find them."""
    if culprits:
        its = "its" if len(culprits) == 1 else "their"
        first = FIX_SUSPECTS.format(who=rank_list(culprits), its=its)
    else:
        first = FIX_NO_SUSPECT
    return f"{first} {FIX_NEXT_TIME}"


STORE_FIX = (
    "A rank never reached `init_process_group` (or the group's first collective) in time: it "
    "crashed or hung before it (read its log's last lines), started late (slow data or model "
    "loading before init), or cannot reach the store (MASTER_ADDR/MASTER_PORT, firewall)."
)
HEARTBEAT_FIX = (
    "The watchdog thread itself made no progress: often a CUDA/NCCL call hung inside the "
    "process, or another thread held the GIL. Take a py-spy dump of the stuck ranks; raise "
    "TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC only if the stall is expected."
)


# A watchdog timeout below this (in ms) is shorter than any collective takes.
TOO_SHORT_MS = 1000
TOO_SHORT_FIX = (
    "Set the process group's timeout to minutes, not milliseconds: "
    "`init_process_group(timeout=timedelta(minutes=30))` (or the framework's option that sets "
    "it, such as Hugging Face `--ddp_timeout` in seconds); a value in the wrong unit is the "
    "usual mistake."
)


def check(job: Job) -> list[Finding]:
    return (
        _timeouts(job)
        + _store_timeouts(job)
        + _stuck_watchdogs(job)
        + overcounted_barrier(job)
        # a rank still busy with work of its own when the others timed out: their cause
        + main_rank_still_busy(job)
        + busy_past_timeout(job)
    )


def _store_timeouts(job: Job) -> list[Finding]:
    """Rendezvous and init hangs: `[4] is setting up NCCL communicator and retrieving
    ncclUniqueId from [0] ... Socket Timeout`, `Timed out after 901 seconds waiting for
    clients. 1/3 clients joined.`, torch 1.x's `Timed out initializing process group in store
    based barrier on rank: 0, ... (world_size=4, worker_count=16, ...)`. The rank waited on is
    the one to look at."""
    stores = job.events.filter(pl.col("event") == "store_timeout")
    if stores.is_empty():
        return []
    waiting = sorted(stores.get_column("rank").drop_nulls().unique().to_list())
    waited_on = sorted(stores.get_column("peer_rank").drop_nulls().unique().to_list())
    joined = stores.filter(pl.col("value").is_not_null() & pl.col("world_size").is_not_null())
    lost = bool(waited_on) and bool(
        stores.select(pl.col("text").str.contains(STORE_GONE).all()).item()
    )
    summary = "Process group set-up failed" if lost else "Process group set-up timed out"
    if waiting:
        summary += f" on {rank_list(waiting)}"
    if lost:
        # snowflakedb/ArcticTraining#233: rank 0 exited in its data loading
        summary += (
            f": the store {rank_list(waited_on)} hosts closed the connection (its process had "
            "exited or crashed)"
        )
    elif waited_on:
        summary += f", waiting for {rank_list(waited_on)}"
    if not joined.is_empty():
        row = joined.row(0, named=True)
        if row["value"] > row["world_size"]:
            summary += (
                f"; {row['value']} processes checked in for a world of {row['world_size']}: "
                "more than the world, so the store kept an earlier attempt's arrivals (torchrun "
                "restarted the workers), ranks were started twice, or another job uses the "
                "same store (MASTER_ADDR:MASTER_PORT)"
            )
        else:
            summary += f"; only {row['value']} of {row['world_size']} processes joined the store"
    summary += ": the job never started its collectives."
    return [
        placed_finding(
            job,
            stores,
            kind="collective_timeout",
            severity="error",
            part="consequence",
            summary=summary,
            fix=STORE_FIX,
            ranks=waiting,
            culprit_ranks=waited_on,
            order=-1.0,  # set-up, before any step
            details={
                "phase": "rendezvous",
                "store_lost": lost,
                "culprits_from": "the store's host" if lost else "the store waited on",
            },
        )
    ]


# The store's host went away rather than answering late: `store->get('0') got error:
# Connection reset by peer` (recvBytes), where a late one says `Socket Timeout` or `wait timeout`
STORE_GONE = r"(?i)got error: (?:Connection reset by peer|Connection refused|Broken pipe)"


def _stuck_watchdogs(job: Job) -> list[Finding]:
    stuck = job.events.filter(pl.col("event") == "heartbeat_timeout")
    if stuck.is_empty():
        return []
    ranks = sorted(stuck.get_column("rank").drop_nulls().unique().to_list())
    seconds = stuck.get_column("value").drop_nulls()
    summary = (
        f"The NCCL watchdog of {rank_list(ranks) if ranks else 'some rank'} got stuck"
        + (f" for {duration(seconds.max())}" if len(seconds) else "")
        + " and the process was terminated: something inside the process blocked it."
    )
    stalled, waits = _stalled_while_others_waited(job, stuck)
    waiting = sorted(waits.get_column("rank").unique().to_list())
    op = waits.item(0, "op") if stalled else None
    if stalled:
        seq = waits.item(0, "seq")
        where = (f" in {op}" + (f" #{seq}" if seq is not None else "")) if op else ""
        summary += (
            f" {rank_list(waiting).capitalize()} timed out{where} meanwhile, most likely "
            f"waiting for {rank_list(stalled)}, which reported no timeout of "
            f"{'its' if len(stalled) == 1 else 'their'} own."
        )
    return [
        placed_finding(
            job,
            pl.concat([stuck, waits.head(2)], how="diagonal_relaxed"),
            kind="collective_timeout",
            severity="error",
            part="consequence",
            summary=summary,
            fix=HEARTBEAT_FIX,
            ranks=ranks,
            culprit_ranks=stalled,
            details={
                "phase": "heartbeat",
                "waiting_ranks": waiting,
                "waiting_op": op,
                **({"culprits_from": "the heartbeat monitor"} if stalled else {}),
            },
        )
    ]


def _stalled_while_others_waited(job: Job, stuck: pl.DataFrame) -> tuple[list[int], pl.DataFrame]:
    """The ranks whose watchdog got stuck without reporting a timeout of their own, while other
    ranks of their group timed out in a collective; and those timeouts. A process whose
    watchdog stalls is blocked inside itself (a hung CUDA call); the others, waiting for it in
    the next collective, time out (vllm-project/vllm#9839: rank 2 in GATHER #12471541, rank 0's
    heartbeat monitor). A rank that timed out and then stalled while aborting is no such rank,
    nor one whose stall began, by the clocks of the lines, after the others had timed out: it
    stalled in their failure's wake (verl-project/verl#1158: ranks 3 and 7 time out in ALLTOALL
    at 10:42:28; rank 2's watchdog, stuck for 480 s, is reported at 10:53:25)."""
    timeouts = job.events.filter(
        pl.col("event").is_in(TIMEOUT_EVENTS) & pl.col("rank").is_not_null()
    )
    if timeouts.is_empty():
        return [], timeouts
    timed_out = set(timeouts.get_column("rank").to_list())
    quiet = stuck.filter(pl.col("rank").is_not_null() & ~pl.col("rank").is_in(list(timed_out)))
    last_timeout = timeouts.select(_written_at().max()).item()
    if last_timeout is not None:
        stalled_from = _written_at() - pl.duration(seconds=pl.col("value").fill_null(0))
        quiet = quiet.filter(~(stalled_from > last_timeout).fill_null(False))
    # where both lines name their process group, the waits must be in the stalled rank's
    same_group = timeouts.join(
        quiet.select(pl.col("pg").alias("_pg")).unique(), how="cross"
    ).filter(pl.col("pg").is_null() | pl.col("_pg").is_null() | (pl.col("pg") == pl.col("_pg")))
    if quiet.is_empty() or same_group.is_empty():
        return [], timeouts.clear()
    stalled = sorted(quiet.get_column("rank").unique().to_list())
    waits = same_group.drop("_pg").unique(["file", "line"]).sort("file", "line")
    return stalled, waits


def _written_at() -> pl.Expr:
    """When each event's line was written (`placement.clock_of`: glog's month, day and clock on
    PyTorch's C++ lines), as a time in one leap year, for comparing lines of one run."""
    return pl.concat_str(pl.lit("2000"), clock_of()).str.to_datetime(
        "%Y%m%d %H:%M:%S%.f", strict=False, time_unit="us"
    )


def _timeouts(job: Job) -> list[Finding]:
    timeouts = job.events.filter(pl.col("event").is_in(TIMEOUT_EVENTS))
    signalled = _signalled(job, timeouts)
    if timeouts.is_empty() and signalled.is_empty():
        return []
    reporters = sorted(
        set(timeouts.get_column("rank").drop_nulls().to_list())
        | set(signalled.get_column("_timed_out").to_list())
    )
    per_rank = per_rank_timeouts(timeouts)
    seq, op = _main_collective(timeouts)
    timeout_ms = timeouts.get_column("timeout_ms").drop_nulls().max()
    mixed = mixed_ops_at_one_seq(per_rank)
    culprits, culprits_from = _culprits(job, per_rank, mixed, reporters, seq)
    desync = describe(mixed) if mixed.height else ""
    processes = _unranked_processes(timeouts, seq, op)
    words = [f"{rank_list(reporters).capitalize() if reporters else _some(processes)} timed out"]
    apart = "" if mixed.height else points_apart(per_rank)
    if apart:
        op = None  # no one collective to name: each rank gave up in its own
        words.append(f" at different points ({apart})")
    elif op:
        words.append(f" in {op}" + (f" #{seq}" if seq is not None else ""))
    elif seq is not None:
        words.append(f" in collective #{seq}")
    if timeout_ms:
        words.append(f" after {duration(timeout_ms / 1000)}")
    summary = "".join(words) + "." + _peer_in_its_group(timeouts)
    if desync and sizes_apart(mixed):
        summary += (
            f" At the same point the ranks ran one collective with tensors of different sizes "
            f"({desync}): they had desynchronised."
        )
    elif desync:
        summary += (
            f" At the same point the ranks ran different collectives ({desync}): they had "
            "desynchronised."
        )
    too_short = timeout_ms is not None and timeout_ms < TOO_SHORT_MS
    # a report no line ties to a rank may be a "silent" rank's own (LlamaFactory#8261)
    unattributed = timeouts.get_column("rank").is_null().any()
    alone, announced = (
        ([], None)
        if culprits or too_short or unattributed
        else _alone_in_its_work(job, per_rank, reporters)
    )
    silent = (
        []
        if culprits or alone or too_short or unattributed
        else _left_no_line(job, per_rank, reporters)
    )
    if too_short:
        # no collective completes in a few milliseconds: the setting is the cause
        # (instructlab/training#520 set the watchdog timeout to 1 ms on purpose)
        culprits, culprits_from = [], "the timeout setting"
        summary += (
            f" A timeout of {duration(timeout_ms / 1000)} is shorter than any collective "
            "takes: the setting, not a rank, made it fail."
        )
    elif alone:
        culprits, culprits_from = alone, ALONE_IN_ITS_WORK
    elif silent:
        culprits, culprits_from = silent, "the ranks that left no line"
    elif not culprits and (waited := _waited_for_rank_zero(job, per_rank, reporters)):
        culprits, culprits_from = [0], waited
    if culprits:
        summary += f" {capitalized(CULPRIT_WORDS[culprits_from].format(who=rank_list(culprits)))}"
    # the ranks' own reports first, then other ranks' word of the ones that left none
    reported = pl.concat([timeouts.sort("file", "line"), signalled], how="diagonal_relaxed")
    quoted = reported.unique(subset=["rank"], keep="first", maintain_order=True).select(
        "file", "line", "text", "rank"
    )
    if alone and announced is not None:  # the announcement first, then the lone timeout
        quoted = pl.concat([announced.select(quoted.columns), quoted], how="vertical_relaxed")
    evidence, total = evidence_from(quoted)
    return [
        Finding(
            kind="collective_timeout",
            severity="error",
            part="consequence",
            summary=summary,
            fix=(
                TOO_SHORT_FIX
                if too_short
                else SAVE_FIX
                if culprits_from == ALONE_IN_ITS_WORK
                else timeout_fix(culprits)
            ),
            ranks=reporters,
            op=op,
            seq=seq,
            evidence=evidence,
            evidence_total=total,
            confidence="high",
            order=place(job, reported),
            timestamp=earliest_time(reported),
            culprit_ranks=culprits,
            details={
                "timeout_ms": timeout_ms,
                "unranked_processes": processes if processes > 1 else None,
                "ops_at_same_seq": desync or None,
                "culprits_from": culprits_from,
                "silent_ranks": silent,
                # a hypothesis from the shape of the hang, not a rank the logs single out
                "suspect_confidence": "low" if culprits_from in SHAPE_OF_THE_HANG else None,
            },
        )
    ]


def _unranked_processes(timeouts: pl.DataFrame, seq: int | None, op: str | None) -> int:
    """How many processes wrote the timeouts of collective `op` #`seq` that no line ties to a
    rank, told apart by the time each says it ran (Alpha-VLLM/LLaMA2-Accessory#147: five
    `[Rank 2]` reports of one collective, each with its own time, the rank a subgroup's). One
    process's reports of several collectives count once: only the one collective is counted."""
    unranked = timeouts.filter(
        pl.col("rank").is_null()
        & pl.col("elapsed_ms").is_not_null()
        & pl.col("seq").eq_missing(seq)
        & pl.col("op").eq_missing(op)
    )
    return unranked.select("file", "elapsed_ms").unique().height


def _some(processes: int) -> str:
    return f"{processes:,} processes" if processes > 1 else "Some rank"


def _signalled(job: Job, timeouts: pl.DataFrame) -> pl.DataFrame:
    """Ranks known to have timed out only from the dumps their watchdogs signalled (torch >=
    2.4): its own `First PG on this rank to signal dumping`, or another rank's `Received a
    dump signal due to a collective timeout from  rank 2` (lsdefine/simple_GRPO#46). The rows
    are the lines that said so, `_timed_out` the rank each names."""
    own = timeouts.get_column("rank").drop_nulls().unique()
    events = job.events
    timed_out = (
        pl.when(pl.col("event") == "dump_signal")
        .then(pl.col("rank"))
        .when(pl.col("event") == "work_progress")
        .then(pl.col("peer_rank"))
    )
    signals = events.with_columns(timed_out.alias("_timed_out")).filter(
        pl.col("_timed_out").is_not_null() & ~pl.col("_timed_out").is_in(own.implode())
    )
    return signals.sort("file", "line").unique(
        subset=["_timed_out"], keep="first", maintain_order=True
    )


# How the ranks to blame were found, said in the summary; the stand-in verdict quotes the key.
# how the lone rank that announced one-process work before its timeout is singled out
ALONE_IN_ITS_WORK = "the rank alone in its own work"
CULPRIT_WORDS = {
    "the desync report": "The desync report names {who} as the lagging ranks.",
    "the sequence numbers": "{who} lagged behind (lower sequence number).",
    "the odd collective": "{who} ran another collective than the majority (the odd one out).",
    "the ranks that never reported": (
        "{who} reported no failure and made no progress past this point: the ranks that "
        "never joined, which the others were waiting for."
    ),
    # huggingface/alignment-handbook#59: the main process's `Pushing to hub...`, then its own
    # ZeRO-3 ALLGATHER timing out, rank 1 never gathering
    ALONE_IN_ITS_WORK: (
        "{who} timed out alone, in a collective that moves data, right after announcing work "
        "a job often runs on one process only (saving, uploading, evaluating): most likely it "
        "went into that work's collectives alone (under `if is_main_process:`) and the others "
        "never joined."
    ),
    # myria3d#123, ColBERT#318, axolotl#2684: rank 0 preparing data or clustering alone
    "the ranks that left no line": (
        "{who} left no line in these logs while every rank that did reported this timeout: "
        "most likely the rank the others waited for, busy on a path of its own (work only "
        "one rank does: evaluation, checkpointing, data preparation), unless its log is "
        "missing from the upload."
    ),
    # meta-pytorch/torchtune#2093: ranks 4 and 5 timed out in a 1-element ALLREDUCE while rank
    # 0 wrote a checkpoint for 16 minutes
    "rank 0's own work": (
        "{who} reported no timeout, and the collective the others waited in is a barrier or a "
        "flag (one element): most often they wait there for work only rank 0 does "
        "(checkpoint, evaluation, logging) that outlasted the timeout. A guess from the "
        "shape of the hang: read rank 0's last lines."
    ),
    # accelerate#223 (forum thread): rank 2 timed out in a BROADCAST of the training loop's
    # data loader while rank 0 evaluated alone for over 30 minutes
    "rank 0's broadcast": (
        "{who} reported no timeout, and the others waited in a broadcast, whose source is rank "
        "0 unless the code names another: most often they wait there for what only rank 0 "
        "does (a batch it dispatches, an evaluation, a checkpoint) that outlasted the "
        "timeout. A guess from the shape of the hang: read rank 0's last lines."
    ),
    "the ranks that never enqueued it": (
        "{who} had not even enqueued this collective (a lower last enqueued work): never "
        "reached it while the others waited in it."
    ),
    # a 2.13 reproducer (a validation record in the code index): rank 1 raised and tore its
    # group down while rank 0 waited in ALLREDUCE #2
    "the ranks that shut down their process group": (
        "{who} did not time out but shut down its process group (`destroy_process_group`): it "
        "had left the collectives the others still waited in."
    ),
    "the ranks that only observed the dump": (
        "{who} did not time out but only observed another rank's dump signal: not waiting in "
        "this collective when the others gave up, most likely the rank they waited for, busy on "
        "a path of its own."
    ),
    "the ranks still in set-up": (
        "It was the first collective, and {who} never reported it: still in set-up (or "
        "stuck before it) when the others gave up."
    ),
}


def _culprits(
    job: Job,
    per_rank: pl.DataFrame,
    mixed: pl.DataFrame,
    reporters: list[int],
    seq: int | None,
) -> tuple[list[int], str]:
    """The ranks the timeout reports single out, and how: named by the desync report, behind
    in sequence numbers, the odd op out (principle 6), or, with the world size known, the
    ranks that never reported (principle 5)."""
    if named := _named_by_desync_report(job):
        return named, "the desync report"
    if laggards := _laggards(job, per_rank):
        return laggards, "the sequence numbers"
    if never := never_enqueued(job, per_rank, reporters):
        return never, "the ranks that never enqueued it"
    if mixed.height:
        return odd_ones_out(mixed), "the odd collective"
    if gone := _shut_down(job, reporters):
        return gone, "the ranks that shut down their process group"
    if observers := _only_observed(job, reporters):
        return observers, "the ranks that only observed the dump"
    if job.world_size is None:
        return _own_logs_but_no_report(job, reporters)
    return _never_joined(job, reporters, seq)


def _in_default_group() -> pl.Expr:
    """A line of the default process group: no `[PG ...]` tag, or group 0."""
    return group_key(pl.col("pg")) == "0"


def _shut_down(job: Job, reporters: list[int]) -> list[int]:
    """Ranks that did not time out but tore down the default process group (the steps of
    `destroy_process_group` as ProcessGroupNCCL logs them): a rank on its way out after an
    error of its own, or done with a loop the others were still in, is in no collective."""
    if not reporters:
        return []
    shut = job.events.filter((pl.col("event") == "pg_shutdown") & _in_default_group())
    return sorted(set(shut.get_column("rank").drop_nulls().to_list()) - set(reporters))


def _only_observed(job: Job, reporters: list[int]) -> list[int]:
    """Ranks that did not time out but learnt through the store that another rank did (torch
    >= 2.4's `Observed flight recorder dump signal from another rank`), no more of them than
    ranks that timed out: their wait, if any, began later than the others' (huggingface/
    accelerate#3861: rank 0 ran validation alone while rank 1 waited in a barrier). Only for
    timeouts in the default group, which every rank is in: a rank outside a subgroup observes
    its signal all the same (PrimeIntellect-ai/prime-rl#3186, an expert group's all-to-all)."""
    observed = job.events.filter(pl.col("event") == "dump_observed")
    ranks = set(observed.get_column("rank").drop_nulls().to_list()) - set(reporters)
    in_subgroup = pl.col("event").is_in(TIMEOUT_EVENTS) & ~_in_default_group()
    if not ranks or len(ranks) > len(reporters) or not job.events.filter(in_subgroup).is_empty():
        return []
    return sorted(ranks)


def _own_logs_but_no_report(job: Job, reporters: list[int]) -> tuple[list[int], str]:
    """No world size stated, but every rank has its own log here: the ranks whose logs
    report no failure while the others timed out are the ones that never joined
    (elasticdl#1895: worker 0 kept logging `No tasks for now` while worker 1 timed out).
    One console that shows each rank from 0 up to the highest by its own lines is as whole:
    a rank that wrote there but reported nothing while the others timed out in that same
    stream never joined (a 2-process SLURM job's `[rank: 0] pinned to GPU 0` and rank 1's
    ALLREDUCE timeout alone); never more silent ranks than reporting ones."""
    if not reporters:
        return [], ""
    owned = set(job.file_stats.get_column("rank").drop_nulls().to_list())
    if set(reporters) < owned and len(owned) <= MAX_WORLD_FOR_SUSPECTS:
        silent = sorted(owned - set(reporters) - _ranks_that_failed(job))
        return (silent, "the ranks that never reported") if silent else ([], "")
    seen = set(job.ranks_seen)
    whole = bool(seen) and seen == set(range(max(seen) + 1))
    if not whole or not set(reporters) < seen or len(seen) > MAX_WORLD_FOR_SUSPECTS:
        return [], ""
    silent = sorted(seen - set(reporters) - _ranks_that_failed(job))
    if not silent or len(silent) > len(reporters):
        return [], ""
    return silent, "the ranks that never reported"


# Ops whose sizes give the group's size: an all-gather's output is `size` inputs, a reduce-
# scatter's input is `size` outputs.
GATHERS = ("ALLGATHER", "_ALLGATHER_BASE", "ALLGATHER_COALESCED", "ALLGATHER_INTO_TENSOR_COALESCED")
SCATTERS = ("REDUCE_SCATTER", "_REDUCE_SCATTER_BASE", "REDUCE_SCATTER_TENSOR_COALESCED")


def _left_no_line(job: Job, per_rank: pl.DataFrame, reporters: list[int]) -> list[int]:
    """Every rank that wrote anything reported this timeout in the default group, and a few
    ranks the group must hold wrote nothing at all: the ones the others waited for (in real
    hangs, a rank busy with work of its own), or logs missing from the upload; named as
    suspects with medium confidence, never when they are many (an excerpt that lacks most
    ranks' lines proves nothing about them). The group holds ranks 0 up to the highest rank
    seen; an all-gather's or reduce-scatter's sizes give its full size."""
    seen = set(job.ranks_seen)
    default = _all_in_default_group(per_rank, reporters)
    if default is None or seen - set(reporters):
        return []
    stated = _group_size(default) or 0
    # one rank's report is no pattern: the others may only be missing from the excerpt
    # (MLI-lab/DeepDeWedge#22: rank 1's three lines are all the paste holds), unless the
    # collective's own sizes say its group is that rank and one more, the only rank it can
    # have waited for (ivadomed/seg-sc-ms-lesion-multicontrast#53, an nnU-Net run: rank 1's
    # ALLGATHER of 3 elements into 6, alone)
    pair = stated == PAIR and len(reporters) == 1
    if len(reporters) < MIN_REPORTERS and not pair:
        return []
    size = max(reporters) + 1
    if job.world_size is not None:
        size = max(size, job.world_size.value)
    size = max(size, stated)
    if size > MAX_WORLD_FOR_SUSPECTS:  # sizes are log text: checked before any range is made
        return []
    silent = sorted(set(range(size)) - seen)
    return silent if len(silent) <= max(1, size // 4) else []


# suspects named from the shape of the hang alone, not from anything a rank's lines single out
SHAPE_OF_THE_HANG = (
    ALONE_IN_ITS_WORK,
    "rank 0's own work",
    "rank 0's broadcast",
    "the ranks that only observed the dump",
)


def _alone_in_its_work(
    job: Job, per_rank: pl.DataFrame, reporters: list[int]
) -> tuple[list[int], pl.DataFrame | None]:
    """The one rank that timed out, when its last line before the timeout (NEAR lines at most,
    no progress between) announces work a job often runs on one process (a save, an upload, an
    evaluation) and the collective moves data (no barrier, no one-element flag): it went into
    that work's collectives alone. With the announcement's row."""
    default = _all_in_default_group(per_rank, reporters)
    if default is None or len(reporters) != 1:
        return [], None
    sizes = default.get_column("numel_in").drop_nulls()
    ops = default.get_column("op").drop_nulls()
    if sizes.is_empty() or int(sizes.max()) <= 1 or bool(ops.str.contains("BARRIER").any()):
        return [], None
    rank = reporters[0]
    events = job.events
    first = (
        events.filter(pl.col("event").is_in(TIMEOUT_EVENTS) & (pl.col("rank") == rank))
        .sort("file", "line")
        .head(1)
    )
    if first.is_empty():
        return [], None
    file, line = first.item(0, "file"), int(first.item(0, "line"))
    before = events.filter(
        (pl.col("file") == file)
        & (pl.col("line") < line)
        & (pl.col("line") >= line - NEAR)
        & pl.col("event").is_in(("phase", "stage", "progress_bar"))
        & pl.col("rank").eq_missing(pl.lit(rank, pl.Int32)).or_(pl.col("rank").is_null())
    ).sort("line")
    if before.is_empty() or before.item(-1, "event") != "phase":
        return [], None
    work = before.select(phase_name(pl.col("message"))).item(-1, 0) or ""
    if not re.search(ONE_RANK_WORK, work) or re.search(LOADING, work):
        return [], None
    return [rank], before.tail(1)


def _waited_for_rank_zero(job: Job, per_rank: pl.DataFrame, reporters: list[int]) -> str | None:
    """How ranks other than 0 waited for rank 0, which reported no failure of its own: in a
    collective of one element in the default group (a barrier, a flag all-reduce: "rank 0's
    own work"), or in a broadcast, whose source is rank 0 by default ("rank 0's broadcast").
    None otherwise, and when the logs show too few of the job's ranks to say that
    (NVIDIA/dgxc-benchmarking's FAQ quotes rank 368's timeout alone): with rank 0 counted, half
    the ranks up to the highest seen."""
    default = _all_in_default_group(per_rank, reporters)
    if default is None or 0 in reporters or 0 in _ranks_that_failed(job):
        return None
    if 0 in aborted_ranks(job):
        return None  # its own watchdog's abort: it was in a collective too
    seen = set(job.ranks_seen) | {0}
    size = max(max(seen) + 1, job.world_size.value if job.world_size is not None else 0)
    if len(seen) * 2 < size:
        return None
    sizes = default.get_column("numel_in").drop_nulls()
    ops = default.get_column("op").drop_nulls()
    if (not sizes.is_empty() and int(sizes.max()) <= 1) or (
        not ops.is_empty() and bool(ops.str.contains("BARRIER").all())
    ):
        return "rank 0's own work"
    if not ops.is_empty() and bool(ops.str.to_uppercase().str.contains("BROADCAST").all()):
        return "rank 0's broadcast"
    return None


def _all_in_default_group(per_rank: pl.DataFrame, reporters: list[int]) -> pl.DataFrame | None:
    """The timeouts of the default group when every rank that reported a timeout reported one
    there, else None."""
    if not reporters:
        return None
    default = per_rank.filter(_in_default_group())
    return default if default.get_column("rank").n_unique() == len(reporters) else None


def _group_size(timeouts: pl.DataFrame) -> int | None:
    """The group size an all-gather or reduce-scatter's element counts state, or the wait's own
    report of its participants (XLA's rendezvous: `global_devices=[0,1]`), when all agree."""
    if "world_size" in timeouts.columns:
        stated = timeouts.get_column("world_size").drop_nulls().unique()
        if stated.len() == 1:
            return int(stated.item())
    numel_in, numel_out, op = pl.col("numel_in"), pl.col("numel_out"), pl.col("op")
    sizes = (
        timeouts.filter((numel_in > 0) & (numel_out > 0))
        .select(
            pl.when(op.is_in(GATHERS) & (numel_out % numel_in == 0))
            .then(numel_out // numel_in)
            .when(op.is_in(SCATTERS) & (numel_in % numel_out == 0))
            .then(numel_in // numel_out)
            .alias("size")
        )
        .get_column("size")
        .drop_nulls()
        .unique()
    )
    return int(sizes.item()) if sizes.len() == 1 else None


def _never_joined(job: Job, reporters: list[int], seq: int | None) -> tuple[list[int], str]:
    """With the world size known, ranks that report a timeout are victims; the ranks that
    reported nothing and got no further are the suspects (principle 5). On the first
    collective they are the ranks still in set-up; later, only ranks whose own logs are here
    count (an excerpt that lacks a rank's lines proves nothing about it)."""
    world = job.world_size
    if world is None or not reporters or world.value > MAX_WORLD_FOR_SUSPECTS:
        return [], ""
    silent = sorted(set(range(world.value)) - set(reporters) - _ranks_that_failed(job))
    progress = job.progress
    if progress is not None and silent:
        furthest_reporter = (
            progress.last_key().filter(pl.col("rank").is_in(reporters)).get_column("key").max()
        )
        ahead = progress.last_key().filter(
            pl.col("rank").is_in(silent) & (pl.col("key") > (furthest_reporter or -1))
        )
        silent = [r for r in silent if r not in set(ahead.get_column("rank").to_list())]
    # half the world or more unaccounted for says more about the excerpt than about them
    # (determined#8915: four of eight ranks absent from four pasted fragments)
    if not silent or len(silent) * 2 >= world.value:
        return [], ""
    started = progress is not None and bool(set(progress.ranks) & set(reporters))
    if (seq is not None and seq <= 1) or not started:
        return silent, "the ranks still in set-up"
    seen = [rank for rank in silent if rank in set(job.ranks_seen)]
    return seen, "the ranks that never reported" if seen else ""


def _ranks_that_failed(job: Job) -> set[int]:
    """Ranks that reported a failure themselves (a lost peer, their own exception), or said
    they had finished the run: they did not go silent. torchrun killing a rank at teardown is
    the launcher's word, not the rank's."""
    failed = job.events.filter((pl.col("severity") == "error") & (pl.col("family") != "elastic"))
    done = finished_ranks(job).get_column("rank")
    return set(failed.get_column("rank").drop_nulls().to_list()) | set(done.to_list())


# Ranks that must report the timeout before the ones that left no line are suspects.
MIN_REPORTERS = 2
# A group of two: one rank's timeout in it names the other.
PAIR = 2
# Naming every silent rank of a huge world would name noise: beyond this, say nothing.
MAX_WORLD_FOR_SUSPECTS = 4096


def _peer_in_its_group(timeouts: pl.DataFrame) -> str:
    """The peer a timeout's own report names in its communicator's numbering (HCCL's `remote
    rank: [24]`, parsers/hccl.py; vllm-project/vllm-ascend#3413), said as that: a position in
    the group, not a global rank."""
    peers = sorted(set(timeouts.select(remote_rank()).to_series().drop_nulls().to_list()))
    if not peers:
        return ""
    which = ", ".join(map(str, peers[:4]))
    return (
        f" It waited for rank {which} of its communicator (the library's own numbering, "
        "not necessarily the global rank)."
    )


def _main_collective(timeouts: pl.DataFrame) -> tuple[int | None, str | None]:
    """The (seq, op) most ranks timed out on; op is left out when ranks disagree on it."""
    with_seq = timeouts.filter(pl.col("seq").is_not_null())
    if with_seq.is_empty():
        ops = timeouts.get_column("op").drop_nulls().unique().to_list()
        return None, ops[0] if len(ops) == 1 else None
    counts = (
        with_seq.group_by("seq")
        .agg(pl.col("rank").n_unique().alias("ranks"), pl.col("line").min())
        .sort(["ranks", "line"], descending=[True, False])
    )
    seq = int(counts.item(0, "seq"))
    ops = with_seq.filter(pl.col("seq") == seq).get_column("op").drop_nulls().unique().to_list()
    return seq, ops[0] if len(ops) == 1 else None


def _named_by_desync_report(job: Job) -> list[int]:
    """The ranks TORCH_NCCL_DESYNC_DEBUG's report says never joined or never finished."""
    reports = job.events.filter(pl.col("event") == "desync_report")
    return sorted({rank for ranks in reports.get_column("values").to_list() for rank in ranks})


def _laggards(job: Job, per_rank: pl.DataFrame) -> list[int]:
    """Ranks whose last completed work (else timed-out seq) is below every other rank's, in the
    same process group. Different groups count separately: their numbers are not comparable."""
    # the watermark a rank printed with its own timeout (`failure detected by watchdog at work
    # sequence id: 78 PG status: last enqueued work: 79, last completed work: 77`) or without
    progress = job.events.filter(
        pl.col("event").is_in(["work_progress", "collective_timeout"])
        & pl.col("rank").is_not_null()
        & pl.col("last_completed").is_not_null()
    )
    marks = progress.group_by("pg", "rank").agg(pl.col("last_completed").max().alias("mark"))
    if marks.group_by("pg").len().filter(pl.col("len") >= 2).is_empty():
        # (one rank's own record compares with nothing: the ranks' timed-out seqs may)
        marks = comparable_timeout_seqs(per_rank)
    two_alone = _a_world_of_two(job)
    laggards: set[int] = set()
    for (pg,), group in marks.filter(pl.col("mark").is_not_null()).group_by("pg"):
        del pg
        if group.height < 2 or group.get_column("mark").n_unique() < 2:
            continue
        lowest = group.get_column("mark").min()
        low = group.filter(pl.col("mark") == lowest)
        # a strict minority behind the rest; an even split names nobody (collective_mismatch
        # says what their different numbers show)
        if low.height < group.height / 2:
            laggards.update(low.get_column("rank").to_list())
        elif group.height == 2 and two_alone and _never_issued_the_other_s(job, per_rank, low):
            laggards.update(low.get_column("rank").to_list())
    return sorted(laggards)


def _never_issued_the_other_s(job: Job, per_rank: pl.DataFrame, low: pl.DataFrame) -> bool:
    """Of a world of two, whether the rank behind is still in a collective the other could
    complete without it (a broadcast from its root, a send) and never issued the work the
    other timed out in, as far as its own record says: it stayed behind (isaac-sim/
    OmniIsaacGymEnvs#50: rank 1 still in the first BROADCAST while rank 0 waited in ALLREDUCE
    #3). In a collective both must finish, or where it had issued the other's work too
    (`last enqueued NCCL work: 127` against the other's #126, huggingface/accelerate#3250), the
    two are out of step and two cannot say which (collective_mismatch)."""
    behind = int(low.item(0, "rank"))
    ops = per_rank.filter(pl.col("rank") == behind).get_column("op").drop_nulls()
    if ops.is_empty() or str(ops.item(0)).upper() not in ROOTED_OPS:
        return False
    enqueued = job.events.filter(
        (pl.col("rank") == behind) & pl.col("last_enqueued").is_not_null()
    ).get_column("last_enqueued")
    ahead = per_rank.filter(pl.col("rank") != behind).get_column("seq").drop_nulls()
    if enqueued.is_empty() or ahead.is_empty():
        return True
    return bool(enqueued.max() < ahead.max())


def _a_world_of_two(job: Job) -> bool:
    """Whether the job is two ranks: its stated world size, else the ranks its logs show."""
    if job.world_size is not None:
        return job.world_size.value == 2
    return set(job.ranks_seen) == {0, 1}


RULE = Rule(kind="collective_timeout", check=check)
