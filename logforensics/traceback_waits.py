"""Where each rank stood, from its own traceback: the collective it waited in when the wait
failed (a timeout, a lost peer), or wherever it was when the hung job was interrupted (Ctrl-C's
`KeyboardInterrupt` prints every rank's stack). parsers/traceback.py keeps, per traceback,
the collective its frames pass through and the innermost frame of the job's own code.

Ranks standing elsewhere than most of the others are the ones the others waited for:

    rank 1 in load_batch (train.py:6) `time.sleep(...)`, ranks 0, 2 in all_reduce (train.py:17)
    rank 1 in barrier (train.py:13), ranks 0, 2 in all_reduce (train.py:11)

A departure for rules/stage_divergence.py, read where no stage marks or watchdog sequence
numbers say more.
"""

from __future__ import annotations

import polars as pl

from logforensics.findings import Confidence, Evidence, Finding
from logforensics.job import Job
from logforensics.text import rank_list

# A frame of a call that blocks: a lock, a queue, a socket or pipe, a child process, the
# DataLoader waiting for its workers
BLOCKING_FRAME = (
    r"(?:threading|queue|selectors|socket|ssl|subprocess|connection|popen_fork|dataloader)\.py"
    r":\d+ in (?:wait|get|poll|_poll|select|recv\w*|_recv\w*|read\w*|acquire|join"
    r"|_wait_for_tstate_lock|communicate|_try_get_data|_get_data)$"
)
# ... or the job's own call of one, the innermost frame (C code below it: `time.sleep(...)`,
# `f.read()`, `queue.get()`); a computation called the same way looks alike and is no wait
BLOCKING_CALL = r"\b(?:sleep|wait|join|acquire|recv\w*|read\w*|get|input|select|poll)\("
INTERRUPTED_FIX = (
    "The others waited for {who} in a collective at {theirs}; {who} stood at {mine} instead. "
    "If that is work of its own (reading data, I/O, a lock, evaluation), find why it blocked "
    "or ran that long there; if it is another part of the loop, find the branch that took it "
    "there (a `continue` or early `return`, an exception caught and skipped). Next time dump "
    "every rank before stopping a hung job (`py-spy dump --pid <pid>`)."
)
APART_FIX = (
    "Every rank must call the same collectives in the same order. {Who} waited in {mine} "
    "while the others waited in {theirs}: find the branch that took {who} there (a `break` "
    "or early `return` out of the loop, a step skipped, a barrier or metric only some ranks "
    "reach). Run with TORCH_DISTRIBUTED_DEBUG=DETAIL to have the mismatch named at the call."
)


def tracebacks_apart(job: Job) -> list[Finding]:
    rows = _places(job)
    if rows.get_column("rank").n_unique() < 2:
        return []
    elsewhere = rows.filter(pl.col("collective") == "")
    if not elsewhere.is_empty():
        return _interrupted_elsewhere(job, rows)
    return _in_other_collectives(job, rows)


def _places(job: Job) -> pl.DataFrame:
    """Per rank, its last traceback that says where it stood: file, rank, frame (its own
    code's innermost), line (that frame's code), collective ("" for none), and its text."""
    extra = pl.col("extra")
    placed = job.events.filter(
        pl.col("event").is_in(["exception", "stack_snapshot", "collective_timeout"])
        & pl.col("rank").is_not_null()
        & extra.str.contains('"own_frame"', literal=True).fill_null(False)
        & extra.str.contains('"collective"', literal=True).fill_null(False)
    )
    if placed.is_empty():
        return pl.DataFrame(
            schema={
                "file": pl.String,
                "rank": pl.Int32,
                "innermost": pl.String,
                "frame": pl.String,
                "line": pl.UInt32,
                "collective": pl.String,
                "snapshot": pl.String,
                "text": pl.String,
                "code": pl.String,
            }
        )
    snapshot = extra.str.json_path_match("$.snapshot")
    own_line = extra.str.json_path_match("$.own_line").cast(pl.UInt32)
    rows = (
        # a rank's stack snapshot, taken while it hung, over its later tracebacks; else its last
        placed.with_columns(snapshot.alias("snapshot"))
        .sort(pl.col("snapshot").is_not_null(), "file", "line")
        .unique("rank", keep="last", maintain_order=True)
        .select(
            "file",
            "rank",
            pl.col("frame").alias("innermost"),
            extra.str.json_path_match("$.own_frame").alias("frame"),
            # a traceback's code line follows its frame; a snapshot shows frames alone
            pl.when(pl.col("snapshot").is_null())
            .then(own_line + 1)
            .otherwise(own_line)
            .alias("line"),
            extra.str.json_path_match("$.collective").fill_null("").alias("collective"),
            "snapshot",
        )
    )
    code = job.quote(rows.select("file", "line", "rank")).select(
        "file",
        "line",
        "text",
        pl.col("text").str.replace(r"^\[[^\]]*\]:\s*", "").str.strip_chars().alias("code"),
    )
    return (
        rows.join(code, on=["file", "line"], how="left")
        .with_columns(pl.when(pl.col("snapshot").is_null()).then(pl.col("code")).alias("code"))
        .sort("rank")
    )


def _interrupted_elsewhere(job: Job, rows: pl.DataFrame) -> list[Finding]:
    """Ranks interrupted outside any collective while most waited in one."""
    odd = rows.filter(pl.col("collective") == "")
    waiting = rows.filter(pl.col("collective") != "")
    if waiting.is_empty() or odd.height >= waiting.height:
        return []
    # a snapshot of a running job has ranks outside collectives too, computing: only a rank
    # blocked in a call (a sleep, a read, a library's wait) had stopped the others (runs here:
    # healthy jobs stopped with Ctrl-C, one rank in forward, the others in the all-reduce)
    blocked = (
        (pl.col("innermost") == pl.col("frame")) & pl.col("code").str.contains(BLOCKING_CALL)
    ) | pl.col("innermost").str.contains(BLOCKING_FRAME)
    # a watchdog's snapshot is taken because the process had stood too long; the others'
    # waits that failed after it say the job hung there
    snapshot = pl.col("snapshot").is_not_null()
    watched = odd.select(snapshot.all()).item() and _waits_failed(job)
    if not watched and not odd.select(blocked.fill_null(False).all()).item():
        return []
    suspects, waiters = odd.get_column("rank").to_list(), waiting.get_column("rank").to_list()
    mine, theirs = odd.row(0, named=True), waiting.row(0, named=True)
    when = (
        "When faulthandler's watchdog dumped the stacks"
        if mine["snapshot"]
        else "When the job was interrupted"
    )
    summary = (
        f"{when}, {rank_list(suspects)} stood in {_code_place(mine)}, "
        f"outside any collective, while {rank_list(waiters)} waited in {theirs['collective']} "
        f"at {_code_place(theirs)}: the others waited for {rank_list(suspects)}."
    )
    return [
        _departure(
            summary,
            INTERRUPTED_FIX.format(
                who=rank_list(suspects), theirs=_place(theirs), mine=_place(mine)
            ),
            suspects,
            [*odd.iter_rows(named=True), theirs],
            rows.height,
            # an interrupt is a snapshot: it shows a hang only because people stop hung jobs
            "medium",
            {
                "departure": "interrupted_elsewhere",
                "other_ranks": waiters,
                "where": _place(mine),
                "their_place": _place(theirs),
                **({"snapshot": mine["snapshot"]} if mine["snapshot"] else {}),
            },
        )
    ]


def _waits_failed(job: Job) -> bool:
    """Whether a rank's wait in a collective ended in an exception (a timeout, a lost peer),
    not in an interrupt."""
    return not job.events.filter(
        (pl.col("event") == "exception")
        & ~pl.col("exc_type").str.ends_with("KeyboardInterrupt").fill_null(False)
        & pl.col("extra").str.contains('"collective":"[a-z_]+"').fill_null(False)
    ).is_empty()


def _in_other_collectives(job: Job, rows: pl.DataFrame) -> list[Finding]:
    """Ranks whose waits failed in another collective, or at another call of one, than most
    of the others'."""
    groups = (
        rows.group_by("collective", "frame", maintain_order=True)
        .agg(pl.col("rank"), pl.len().alias("size"))
        .sort("size", descending=True, maintain_order=True)
    )
    if groups.height < 2:
        return []
    majority = groups.row(0, named=True)
    if majority["size"] <= groups.get_column("size").sum() - majority["size"]:
        return []  # no place most of them share: nothing singles a side out
    waiters = sorted(majority["rank"])
    odd = rows.filter(~pl.col("rank").is_in(waiters))
    suspects = odd.get_column("rank").to_list()
    theirs = rows.filter(pl.col("rank") == waiters[0]).row(0, named=True)
    mine = odd.row(0, named=True)
    # (Flight Recorder's stacks of the failed collective are frames alone, no traceback)
    told = "stacks" if rows.get_column("snapshot").is_not_null().all() else "tracebacks"
    one_op = rows.get_column("collective").n_unique() == 1
    if one_op:  # one collective, called from different places
        said = "; ".join(
            f"{rank_list(group.get_column('rank').to_list())} at "
            f"{_code_place(group.row(0, named=True))}"
            for _, group in odd.group_by("frame", maintain_order=True)
        )
        opening = (
            f"The ranks' {told} stop at different calls of {mine['collective']}: {said}, while "
            f"{rank_list(waiters)} waited at {_code_place(theirs)}."
        )
    else:
        said = "; ".join(
            f"{rank_list(group.get_column('rank').to_list())} in {_wait(group.row(0, named=True))}"
            for _, group in odd.group_by("collective", "frame", maintain_order=True)
        )
        opening = (
            f"The ranks' {told} stop in different collectives: {said}, while "
            f"{rank_list(waiters)} waited in {_wait(theirs)}."
        )
    summary = (
        f"{opening} {rank_list(suspects).capitalize()} "
        f"had left the path the others kept: the collectives no longer matched."
    )
    ops = {str(row["rank"]): row["collective"] for row in rows.iter_rows(named=True)}
    return [
        _departure(
            summary,
            APART_FIX.format(
                Who=rank_list(suspects).capitalize(),
                who=rank_list(suspects),
                mine=f"{mine['collective']} at {_place(mine)}",
                theirs=f"{theirs['collective']} at {_place(theirs)}",
            ),
            suspects,
            [*odd.iter_rows(named=True), theirs],
            rows.height,
            "high" if rows.height - len(suspects) >= 2 * len(suspects) else "medium",
            {
                "departure": "other_collective",
                "other_ranks": waiters,
                "ops": ops,
                **({"called_from": _place(mine)} if one_op else {}),
            },
        )
    ]


def _departure(
    summary: str,
    fix: str,
    ranks: list[int],
    quoted: list[dict],
    total: int,
    confidence: Confidence,
    details: dict[str, object],
) -> Finding:
    return Finding(
        kind="stage_divergence",
        severity="error",
        part="departure",
        summary=summary,
        fix=fix,
        ranks=ranks,
        evidence=[
            Evidence(row["file"], int(row["line"]), row["text"] or row["frame"], row["rank"])
            for row in quoted
        ],
        evidence_total=total,
        confidence=confidence,
        details=details,
    )


def _place(row: dict) -> str:
    """`load_batch (train.py:6)` from `/job/train.py:6 in load_batch`."""
    where, _, function = str(row["frame"]).rpartition(" in ")
    return f"{function} ({where.replace(chr(92), '/').rsplit('/', 1)[-1]})"


def _code_place(row: dict) -> str:
    return _place(row) + (f": `{row['code']}`" if row["code"] else "")


def _wait(row: dict) -> str:
    return f"{row['collective']} at {_code_place(row)}"
