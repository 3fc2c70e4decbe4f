"""Where each rank is stuck, from `py-spy dump` stacks taken while the job hung.

Each rank's main thread is read for what it waits in (a collective, DDP's backward, the
DataLoader, a lock, a sleep) and the innermost frame of the job's own code. Ranks standing at
the same place form a group (`ranks 0, 1, 3 in backward at train.py:246`); a smaller group
somewhere else is the odd one out, the prime suspect: the others wait for it. When every
rank stands at the same place, that place is reported as context.
"""

from __future__ import annotations

import polars as pl

from logforensics.dumps.pyspy import waits_for_others, where_stuck
from logforensics.findings import Evidence, Finding
from logforensics.job import Job
from logforensics.registry import Rule
from logforensics.text import rank_list, rank_ranges

FIX = (
    "The others wait for {who} in {theirs}. Find why {who} took another path to {mine}: a "
    "`continue` or early `return` on some ranks, a data-dependent branch, an exception caught "
    "and skipped, a barrier or metric only some ranks reach."
)


def check(job: Job) -> list[Finding]:
    stuck = where_stuck(job.dumps.stacks)
    if stuck.is_empty():
        return _unclaimed_apart(job)
    where = pl.col("user_frame").fill_null(pl.col("innermost"))
    groups = (
        stuck.with_columns(
            where.alias("_where"),
            # py-spy prints paths from the import root, faulthandler whole ones: same place
            where.str.replace(r"\((?:[^()]*/)?([^/()]*)\)$", "($1)").alias("_place"),
        )
        .group_by("waiting", "_place", maintain_order=True)
        .agg(
            pl.col("rank").sort(),
            pl.col("_where").first(),
            pl.col("file"),
            pl.col("line"),
            pl.col("line_text"),
            pl.col("other_threads").drop_nulls().first(),
            pl.col("tool").first(),
        )
        .sort(pl.col("rank").list.len(), descending=True)
    )
    rows = groups.iter_rows(named=True)
    majority = next(rows)
    odd = [row for row in groups.iter_rows(named=True)][1:]
    ranks_seen = sorted(stuck.get_column("rank").to_list())
    if not odd and len(ranks_seen) == 1 and not waits_for_others(majority["waiting"]):
        return [_alone_outside_collectives(majority)]
    if not odd:
        return [_all_alike(majority, ranks_seen)]
    if len(majority["rank"]) <= sum(len(row["rank"]) for row in odd):
        return [_no_majority(groups, ranks_seen)]
    suspects = sorted(rank for row in odd for rank in row["rank"])
    summary = (
        f"{_who(suspects).capitalize()} {_is(suspects)} stuck elsewhere than the others: "
        + "; ".join(f"{_who(row['rank'])} in {_place(row)}{_holders(row)}" for row in odd)
        + f", while {_who(majority['rank'])} wait in {_place(majority)}."
    )
    return [
        Finding(
            kind="stuck_location",
            severity="error",
            part="departure",
            summary=summary,
            fix=FIX.format(
                who=rank_list(suspects),
                theirs=_place(majority),
                mine=_place(odd[0]),
            ),
            ranks=suspects,
            evidence=_evidence(odd, majority),
            evidence_total=len(stuck),
            confidence="high" if len(majority["rank"]) >= 2 * len(suspects) else "medium",
            details={
                "source": odd[0]["tool"] or "py-spy",
                "groups": [
                    {
                        "ranks": row["rank"],
                        "waiting": row["waiting"],
                        "where": row["_where"],
                        "other_threads": row["other_threads"],
                    }
                    for row in groups.iter_rows(named=True)
                ],
            },
        )
    ]


UNCLAIMED_FIX = (
    "The processes of one job wait in different collectives: they no longer call the same "
    "collectives in the same order. Find the branch that sends some ranks to the other call: a "
    "data-dependent path (a mixture-of-experts layer, a skipped batch, a condition on the "
    "rank), an exception caught on some ranks, uneven numbers of steps. Dump each process with "
    "its rank next time (`py-spy dump --pid <pid>` into `rank<N>.txt`, or run with "
    "TORCH_DISTRIBUTED_DEBUG=DETAIL) to see which ranks took which path."
)


def _unclaimed_apart(job: Job) -> list[Finding]:
    """Stacks no rank claims whose main threads wait in different collectives
    (deepspeedai/DeepSpeed#7461: `py-spy dump`s pasted without their command lines, three
    processes in ZeRO-3's step `all_reduce`, five still in backward's `reduce_scatter_tensor`):
    the processes desynchronised, whichever ranks they were."""
    stuck = where_stuck(job.dumps.unranked)
    if stuck.is_empty():
        return []
    if stuck.height == 1 and stuck.item(0, "waiting").startswith(NAMED_WAITS):
        return [_unclaimed_alone_outside(stuck)]
    if stuck.height == 1:
        return _unclaimed_waiting(stuck)
    waits = pl.Series([waits_for_others(waiting) for waiting in stuck.get_column("waiting")])
    in_collectives = stuck.filter(waits)
    outside = stuck.filter(~waits)
    if 0 < outside.height < in_collectives.height:
        return [_unclaimed_outside(outside, in_collectives)]
    if outside.height and in_collectives.height:
        return [_unclaimed_split(outside, in_collectives)]
    if in_collectives.is_empty():
        return []
    if in_collectives.get_column("waiting").n_unique() < 2:
        return _unclaimed_waiting(in_collectives)
    groups = (
        in_collectives.group_by("waiting", maintain_order=True)
        .agg(pl.len().alias("processes"), pl.all().first())
        .sort("processes", descending=True)
    )
    said = "; ".join(
        f"{_processes(row['processes'])} in {row['waiting']} at "
        f"{row['user_frame'] or row['innermost']}"
        for row in groups.iter_rows(named=True)
    )
    return [
        Finding(
            kind="collective_mismatch",
            severity="error",
            part="departure",
            summary=(
                f"The stack dumps show the processes waiting in different collectives ({said}): "
                "they had desynchronised, each waiting for a call the others never make. The "
                "dumps do not say which ranks they were."
            ),
            fix=UNCLAIMED_FIX,
            evidence=_stack_evidence(groups, "waiting"),
            evidence_total=in_collectives.height,
            confidence="medium",
            blames_nobody=True,
            details={"source": "stack dumps", "groups": groups.height},
        )
    ]


OUTSIDE_FIX = (
    "The others wait in collectives for the process that stands elsewhere: find why it "
    "stopped in {mine}. A DataLoader blocked on its workers (a worker deadlocked or "
    "died: try `num_workers=0` for that loader to confirm, then a fresh worker start method "
    "or a timeout on the loader), I/O, a lock, or work the others do not do. Dump each "
    "process with its rank next time (`rank<N>.txt`) so the report can name it."
)


def _unclaimed_outside(outside: pl.DataFrame, in_collectives: pl.DataFrame) -> Finding:
    """Stacks no rank claims where fewer processes stand outside any collective than wait in
    one: in a hang the waiting processes wait in collectives, so the ones elsewhere are where
    the job stopped moving (bigscience's tr11 eval hang: one process of node 48 blocked in
    the DataLoader's queue while its peers waited in broadcast and all_reduce)."""
    first = outside.row(0, named=True)
    where = first["user_frame"] or first["innermost"]
    places = "; ".join(
        f"in {row['waiting']} at {row['user_frame'] or row['innermost']}, dumped in {row['file']}"
        for row in outside.unique(["waiting", "file"], maintain_order=True).iter_rows(named=True)
    )
    summary = (
        f"{_processes(outside.height).capitalize()} of the stack dumps "
        f"{'stands' if outside.height == 1 else 'stand'} outside any collective ({places}), while "
        f"{_processes(in_collectives.height)} wait in collectives: in a hang the processes "
        "that wait, wait in a collective, so this is where the job stopped moving. The dumps "
        "do not say which rank it was."
    )
    return Finding(
        kind="stuck_location",
        severity="error",
        part="departure",
        summary=summary,
        fix=OUTSIDE_FIX.format(mine=first["waiting"]),
        evidence=_stack_evidence(outside.head(3), "waiting"),
        evidence_total=outside.height,
        confidence="medium",
        details={
            "source": first["tool"] or "stack dump",
            "outside": outside.height,
            "waiting": first["waiting"],
            "where": where,
        },
    )


SPLIT_FIX = (
    "The processes no longer run the same code: those in {theirs} wait for a peer that is "
    "elsewhere, and those at {mine} are not in that collective. Find which side left the "
    "common path: the side that did not finish what the other finished (a step, a loss "
    "broadcast, an evaluation) is usually the one stuck; if those outside a collective sit "
    "in a CUDA call, their collective may be running on the GPU already. Dump each process "
    "with its rank next time (`rank<N>.txt`) so the report can name them."
)


def _unclaimed_split(outside: pl.DataFrame, in_collectives: pl.DataFrame) -> Finding:
    """Stacks no rank claims split between a collective and a place outside any, with no
    fewer outside (bigscience's 176B prequel hang: per node, 2 processes in DeepSpeed's loss
    `broadcast`, 6 back at `train (megatron/training.py:915)`, one stack of each posted): the
    processes parted ways; the dumps alone do not say which side stopped first."""
    waiting, elsewhere = _distinct_places(in_collectives), _distinct_places(outside)
    waiting_count, elsewhere_count = in_collectives.height, outside.height
    theirs = "; ".join(
        f"{row['waiting']} at {row['_where']}" for row in waiting.iter_rows(named=True)
    )
    mine = "; ".join(row["_where"] for row in elsewhere.iter_rows(named=True))
    summary = (
        f"The stack dumps show the processes apart: {_processes(waiting_count)} "
        f"{'waits' if waiting_count == 1 else 'wait'} in {theirs}, {_processes(elsewhere_count)} "
        f"{'stands' if elsewhere_count == 1 else 'stand'} outside any collective at {mine}. "
        "They no longer run the same collectives; the dumps do not say which ranks they were "
        "nor which side stopped first."
    )
    rows = pl.concat([waiting.head(3), elsewhere.head(3)], how="diagonal_relaxed")
    return Finding(
        kind="stuck_location",
        severity="error",
        part="departure",
        summary=summary,
        fix=SPLIT_FIX.format(theirs=waiting.item(0, "waiting"), mine=elsewhere.item(0, "_where")),
        evidence=_stack_evidence(rows, "_where"),
        evidence_total=waiting_count + elsewhere_count,
        confidence="low",
        blames_nobody=True,
        details={
            "source": outside.item(0, "tool") or "stack dump",
            "split": True,
            "waiting": waiting.item(0, "waiting"),
            "where": elsewhere.item(0, "_where"),
        },
    )


def _distinct_places(stacks: pl.DataFrame) -> pl.DataFrame:
    """One row per place the stacks stand (`_where`: the job's own frame, else the innermost)."""
    placed = stacks.with_columns(pl.coalesce("user_frame", "innermost").alias("_where"))
    return placed.unique(["waiting", "_where"], maintain_order=True)


UNCLAIMED_FIX_WAITING = (
    "Every stack dumped waits for the others in a collective: the rank that hung the job is "
    "one that never reached it. Dump every process next time (`py-spy dump --pid <pid>` for "
    "each, into `rank<N>.txt`, or TORCH_DISTRIBUTED_DEBUG=DETAIL) and look for the rank that "
    "stands elsewhere: a different number of steps or forward passes (ZeRO-3 needs every rank "
    "to run the same forwards: `synced_gpus=True` in `generate`), a branch on some ranks, an "
    "exception caught and skipped."
)


def _unclaimed_waiting(stuck: pl.DataFrame) -> list[Finding]:
    """Stacks no rank claims, every one waiting in the same collective: the job hung there,
    waiting for ranks that never came; which they are, the dumps cannot say (one stack:
    deepspeedai/DeepSpeed#860, a faulthandler stack in ZeRO-3's parameter fetch inside the
    model's forward; two: deepspeedai/DeepSpeed#6524, `py-spy dump`s both in ZeRO-3's
    backward). Unlike ranks all dumped alike, these may be a few of many: a rank that left the
    common path. Outside a collective a lone stack says nothing of a hang."""
    if not all(waits_for_others(waiting) for waiting in stuck.get_column("waiting")):
        return []
    first = stuck.row(0, named=True)
    places = _distinct_places(stuck)
    where = "; ".join(places.get_column("_where").to_list())
    one = stuck.height == 1
    said = (
        f"{every_process(stuck.height)} with a stack dump {'waits' if one else 'wait'} in "
        f"{first['waiting']} at {where}: the job hung there, waiting for ranks that never joined "
        "that collective. "
        + (
            "The dump does not say which rank it was"
            if one
            else "The dumps do not say which ranks they were"
        )
        + ", nor where the others stood."
    )
    return [
        Finding(
            kind="stuck_location",
            severity="error",
            part="consequence",
            summary=said,
            fix=UNCLAIMED_FIX_WAITING,
            evidence=_stack_evidence(places.head(3), "_where"),
            evidence_total=stuck.height,
            confidence="low",
            blames_nobody=True,
            details={
                "source": first["tool"] or "stack dump",
                "unclaimed": stuck.height,
                "waiting": first["waiting"],
            },
        )
    ]


# What a lone stack outside collectives may wait in to be told: a wait its frames name, not a
# guess from an idle thread in the job's own code (which may be computing between two samples)
NAMED_WAITS = ("the DataLoader", "a lock (", "a queue (")


def _unclaimed_alone_outside(stuck: pl.DataFrame) -> Finding:
    """The one stack dumped, no rank claiming it, waits outside any collective: like a lone
    rank's (`_alone_outside_collectives`), where that process stopped moving, while the ranks
    that wait would wait in a collective (lhotse-speech/lhotse#1146: a spawned icefall trainer's
    main thread waiting on its DataLoader's queue at the end of an epoch)."""
    first = stuck.row(0, named=True)
    where = first["user_frame"] or first["innermost"]
    return Finding(
        kind="stuck_location",
        severity="error",
        part="departure",
        summary=(
            f"The one process with a stack dump waits in {first['waiting']} at {where}, not in "
            "a collective: where it stopped moving. The dump does not say which rank it was."
        ),
        fix=ALONE_FIX.format(who="that process", mine=f"{first['waiting']} at {where}"),
        evidence=_stack_evidence(stuck, "innermost"),
        evidence_total=1,
        confidence="low",
        blames_nobody=True,
        details={
            "source": first["tool"] or "stack dump",
            "unclaimed": 1,
            "waiting": first["waiting"],
            "alone": True,
        },
    )


def every_process(count: int) -> str:
    """The processes of `count` stacks, all of them: `The one process`, `Both processes`."""
    return {1: "The one process", 2: "Both processes"}.get(count, f"All {count:,} processes")


def _stack_evidence(stacks: pl.DataFrame, instead: str) -> list[Evidence]:
    """Each stack's line, with its `instead` column's words where the line has no text."""
    return [
        Evidence(row["file"], int(row["line"] or 1), row["line_text"] or row[instead])
        for row in stacks.iter_rows(named=True)
    ]


def _processes(count: int) -> str:
    return "1 process" if count == 1 else f"{count:,} processes"


ALONE_FIX = (
    "Dump every rank next time (`py-spy dump --pid` for each process, or torchrun's debug "
    "server): the others' stacks say which collective they wait in. Then find why {who} "
    "stands in {mine} instead: a slow or stuck DataLoader worker, I/O, a lock, work the "
    "others do not do."
)


def _alone_outside_collectives(group: dict) -> Finding:
    """The one rank dumped stands outside any collective. In a hang the ranks that wait, wait
    in a collective; one that does not is where the job stopped (fairseq#4816: rank 0's main
    thread in the data iterator's queue while the other 31 ranks waited in all_reduce). The
    other ranks are not dumped: a guess, at low confidence."""
    rank = group["rank"][0]
    return Finding(
        kind="stuck_location",
        severity="error",
        part="departure",
        summary=(
            f"Rank {rank}, the only rank with a stack dump, waits in {_place(group)}, not in a "
            "collective: in a hang the other ranks wait in one, so this is where the job "
            "stopped moving."
        ),
        fix=ALONE_FIX.format(who=f"rank {rank}", mine=_place(group)),
        ranks=[rank],
        evidence=_evidence([], group),
        evidence_total=1,
        confidence="low",
        details={"source": group["tool"] or "py-spy", "alone": True},
    )


def _all_alike(group: dict, ranks_seen: list[int]) -> Finding:
    return Finding(
        kind="stuck_location",
        severity="info",
        part="context",
        summary=(
            f"Every rank with a stack dump ({rank_ranges(ranks_seen)}) waits in "
            f"{_place(group)}: the stacks alone do not single out a rank."
        ),
        fix="",
        ranks=ranks_seen,
        evidence=_evidence([], group),
        evidence_total=len(ranks_seen),
        details={"source": group["tool"] or "py-spy", "alike": True},
    )


def _no_majority(groups: pl.DataFrame, ranks_seen: list[int]) -> Finding:
    said = "; ".join(
        f"{_who(row['rank'])} in {_place(row)}" for row in groups.iter_rows(named=True)
    )
    return Finding(
        kind="stuck_location",
        severity="warning",
        part="context",
        summary=f"The ranks wait in different places, none held by most of them: {said}.",
        fix="",
        ranks=ranks_seen,
        evidence=[],
        evidence_total=len(ranks_seen),
        details={"source": groups.item(0, "tool") or "py-spy"},
    )


def _holders(group: dict) -> str:
    """For a rank that waits on a lock or in a blocking call: the other threads of its
    process that stand in the job's own code (one may hold what it waits for)."""
    if not group["other_threads"]:
        return ""
    return f" (other threads in the job's code, one may hold it: {group['other_threads']})"


def _place(group: dict) -> str:
    return f"{group['waiting']} at {group['_where']}"


def _evidence(odd: list[dict], majority: dict) -> list[Evidence]:
    lines = []
    for row in [*odd, majority]:
        lines.append(
            Evidence(
                row["file"][0],
                int(row["line"][0] or 1),
                row["line_text"][0] or f"{row['_where']}  [{row['waiting']}]",
                row["rank"][0],
            )
        )
    return lines


def _who(ranks: list[int]) -> str:
    return f"rank {ranks[0]}" if len(ranks) == 1 else f"ranks {rank_ranges(ranks)}"


def _is(ranks: list[int]) -> str:
    return "is" if len(ranks) == 1 else "are"


def _diagnosis(finding: Finding) -> str:
    """Ranks that stand somewhere else than the others left the common path, as do ranks
    with no place most of them share; where all stand alike is the last place they had in
    common, and so is the one collective every unclaimed dump waits in: nothing in them shows
    a departure (huggingface/transformers#22363, one `py-spy dump` in `dist.broadcast`)."""
    waiting_alike = finding.details.get("unclaimed") and finding.part == "consequence"
    return (
        "last_common_stage" if finding.details.get("alike") or waiting_alike else "stage_divergence"
    )


RULE = Rule(kind="stuck_location", check=check, specificity=20, diagnosis=_diagnosis)
