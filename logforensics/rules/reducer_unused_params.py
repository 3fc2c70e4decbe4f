"""DDP reducer errors: parameters that got no gradient on some rank, or were marked ready twice.

`Expected to have finished reduction in the prior iteration` means a rank's backward did not
touch every parameter, so its gradient all_reduce buckets never completed; with DETAIL (or
INFO) the rank names the parameters. When only some ranks report it, their forward took a
data-dependent branch the others did not.
"""

from __future__ import annotations

import polars as pl

from logforensics.desync import TIMEOUT_EVENTS
from logforensics.findings import Finding
from logforensics.job import Job
from logforensics.placement import place_with_step, placed_finding
from logforensics.registry import Rule
from logforensics.stopped_workers import no_line_ties, one_reported_failure
from logforensics.text import rank_list

REDUCER_EVENTS = (
    "reducer_unfinished",
    "unused_params",
    "ready_twice",
    "model_mismatch",
    "shape_mismatch",
)
UNUSED_FIX = (
    "Make every parameter take part in the loss on every rank and every step (no branch that "
    "skips a submodule on some ranks only), or construct DDP with "
    "`find_unused_parameters=True` (slower) — or `static_graph=True` when the unused set never "
    "changes. Set TORCH_DISTRIBUTED_DEBUG=DETAIL to get the parameter names."
)
READY_TWICE_FIX = (
    "A parameter's gradient hook fired twice in one iteration: shared/reused modules, "
    "activation checkpointing with `use_reentrant=True`, or several forward passes before one "
    "backward. Use `static_graph=True`, non-reentrant checkpointing, or `no_sync()` for the "
    "extra passes."
)
MISMATCH_FIX = (
    "Build the same model on every rank before wrapping it in DDP (same parameters, same order)."
)


def check(job: Job) -> list[Finding]:
    errors = job.events.filter(
        pl.col("event").is_in(REDUCER_EVENTS) & (pl.col("severity") == "error")
    )
    if errors.is_empty():
        return []
    findings: list[Finding] = []
    unused = errors.filter(pl.col("event").is_in(("reducer_unfinished", "unused_params")))
    if not unused.is_empty():
        findings.append(_unused(job, unused))
    for event, fix, what in (
        ("ready_twice", READY_TWICE_FIX, "marked a parameter ready twice"),
        ("model_mismatch", MISMATCH_FIX, "built a different model than the others"),
    ):
        rows = errors.filter(pl.col("event") == event)
        if rows.is_empty():
            continue
        if event == "model_mismatch" and _contradicted(rows):
            findings.append(_counts_never_exchanged(job, rows))
        elif event == "model_mismatch" and _zero_counts(rows):
            findings.append(_count_never_arrived(job, rows))
        else:
            findings.append(_simple(job, rows, fix, what))
    shapes = errors.filter(pl.col("event") == "shape_mismatch")
    if not shapes.is_empty():
        findings.append(_shapes(job, shapes))
    return findings


def _shapes(job: Job, rows: pl.DataFrame) -> Finding:
    """DDP's check found a parameter shaped unlike the same one in process 0 (the reference):
    each rank that differs from it says so, and the reference itself says nothing. When every
    other rank of the job says so, the reference is the odd one (a run here: rank 0 built a
    wider layer, ranks 1-3 each reported it); otherwise the reporters are."""
    reporters = sorted(rows.get_column("rank").drop_nulls().unique().to_list())
    reference = rows.get_column("peer_rank").drop_nulls().mode().sort().to_list()[:1]
    world = job.world_size.value if job.world_size is not None else None
    everyone = set(range(world)) if world is not None else set(job.ranks_seen)
    others = everyone - set(reference)
    odd_reference = bool(reference) and len(reporters) > 1 and others <= set(reporters)
    ranks = reference if odd_reference else reporters
    indices = rows.get_column("values").drop_nulls().explode().drop_nulls()
    index = int(indices[0]) if not indices.is_empty() else None
    parameter = f"parameter {index}" if index is not None else "a parameter"
    who = rank_list(ranks) if ranks else "a rank"
    if odd_reference:
        said = (
            f"{rank_list(reporters).capitalize()} each found {parameter} shaped unlike "
            f"process {reference[0]}'s"
        )
    else:
        against = f"process {reference[0]}'s" if reference else "the first process's"
        said = f"DDP's check on {who} found {parameter} shaped unlike {against}"
    return placed_finding(
        job,
        rows,
        kind="reducer_unused_params",
        severity="error",
        part="explanation",
        summary=f"{said}: {who} built a different model than the others.",
        fix=MISMATCH_FIX,
        ranks=ranks,
        details={"parameter_shape": index, "model_differs": True},
    )


def _contradicted(rows: pl.DataFrame) -> bool:
    """Whether DDP's model-mismatch reports contradict each other: a rank's own count differs
    from the count another rank's report gives it. Then no count was exchanged: the check's
    all-gather failed and each rank read what its buffer held (a forum thread of UNIGE's HPC,
    t/4301: ranks 0 and 2 each have 51 parameters by their own word and 0 by another's, after
    all four ranks' first ALLGATHER timed out)."""
    own: dict[int, int] = {}
    said: list[tuple[int, int]] = []
    for row in rows.iter_rows(named=True):
        values = row["values"] or []
        if len(values) == 2 and row["rank"] is not None and row["peer_rank"] is not None:
            own[row["rank"]] = values[0]
            said.append((row["peer_rank"], values[1]))
    return any(rank in own and own[rank] != count for rank, count in said)


def _zero_counts(rows: pl.DataFrame) -> bool:
    """Whether every model-mismatch report gives the peer a count of 0. DDP refuses a module
    with no trainable parameter before its model check, so 0 is no model's count: the peer's
    count never reached the check's all-gather, whose unfilled slot read 0."""
    said = [row["values"][1] for row in rows.iter_rows(named=True) if len(row["values"] or []) == 2]
    return bool(said) and all(count == 0 for count in said)


ABSENT_FIX = (
    "Find what the named rank was doing while the others built DDP: work of its own before "
    "`DistributedDataParallel(...)` (data preparation, evaluation or a download on one rank), "
    "a failure there, caught or not, or a different script or configuration on its "
    "node. Every rank must reach the DDP constructor within the process group's timeout."
)


def _count_never_arrived(job: Job, rows: pl.DataFrame) -> Finding:
    """DDP's model check got 0 as a peer's parameter count: the peer never took part in it
    (WongKinYiu/yolov7#773: `... Rank 5 has 288 params, while rank 0 has inconsistent 0
    params.` beside ranks 4 and 6 timing out in ALLGATHER #2 while rank 0 still fitted anchors
    alone). Where the job's collectives timed out, the timeout's own story names who was late
    and this report is its echo; otherwise it is the one line that says which rank was absent."""
    reporters = sorted(rows.get_column("rank").drop_nulls().unique().to_list())
    absent = sorted(rows.get_column("peer_rank").drop_nulls().unique().to_list())
    told = (
        f"DDP's model check on {rank_list(reporters) if reporters else 'a rank'} got 0 as "
        f"{rank_list(absent) if absent else 'a peer'}'s parameter count"
    )
    if not job.events.filter(pl.col("event").is_in(TIMEOUT_EVENTS)).is_empty():
        return _says_nothing_of_the_models(
            job,
            rows,
            absent,
            f"{told}: that count never arrived, the check's collective having timed out, so it "
            "says nothing about the models.",
            "Look at why the check's collective timed out (the first collective of the job).",
        )
    who = rank_list(absent) if absent else "a rank"
    return placed_finding(
        job,
        rows,
        kind="reducer_unused_params",
        severity="error",
        part="explanation",
        summary=(
            f"{told}. DDP refuses a model without trainable parameters before this check, so 0 "
            f"is no model's count: {who} never took part in the check, being elsewhere when "
            "the others built DDP."
        ),
        fix=ABSENT_FIX,
        ranks=absent,
        details={"absent_from_check": True},
    )


def _counts_never_exchanged(job: Job, rows: pl.DataFrame) -> Finding:
    ranks = sorted(rows.get_column("rank").drop_nulls().unique().to_list())
    return _says_nothing_of_the_models(
        job,
        rows,
        ranks,
        f"DDP's model check on {rank_list(ranks) if ranks else 'a rank'} reported parameter "
        "counts that contradict each other (a rank's own count is not what another rank's "
        "report gives it): the check's collective failed, so the counts were never exchanged "
        "and say nothing about the models.",
        "Look at why the check's collective failed (the first collective of the job).",
    )


def _says_nothing_of_the_models(
    job: Job, rows: pl.DataFrame, ranks: list[int], summary: str, fix: str
) -> Finding:
    """A model check whose counts its failed collective never delivered: context, no blame."""
    return placed_finding(
        job,
        rows,
        kind="reducer_unused_params",
        severity="warning",
        part="context",
        summary=summary,
        fix=fix,
        ranks=ranks,
        blames_nobody=True,
    )


def _unused(job: Job, rows: pl.DataFrame) -> Finding:
    named = rows.filter(pl.col("event") == "unused_params")
    source = named if not named.is_empty() else rows
    ranks = sorted(source.get_column("rank").drop_nulls().unique().to_list())
    names = sorted({n for ns in named.get_column("names").drop_nulls().to_list() for n in ns})
    indices = sorted({i for vs in named.get_column("values").drop_nulls().to_list() for i in vs})
    what = ""
    if names:
        shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
        what = f": {shown}"
    elif indices:
        shown = " ".join(map(str, indices[:10])) + (" ..." if len(indices) > 10 else "")
        what = f" (parameter indices {shown})"
    # no line says whose error it was: the one worker a launcher reports failed is (open-mmlab/
    # mmcv#2869: mmcv's traceback, then torchrun's summary listing rank 1 alone)
    failed = None if ranks else one_reported_failure(job)
    if failed is not None:
        ranks = [failed.rank]
        rows = pl.concat([rows, failed.stopped.head(1)], how="diagonal_relaxed")
    who = rank_list(ranks) if ranks else "a rank"
    order, step, stage = place_with_step(job, rows)
    if step is not None and job.progress and stage == job.progress.stage_order[0]:
        step -= 1  # raised in the next step's forward, about the prior iteration
    summary = (
        f"DDP's reducer on {who} found parameters that received no gradient{what}"
        + (f" in step {step}" if step is not None else "")
        + "; the gradient all_reduce of that iteration never completed."
        + (no_line_ties(failed) if failed is not None else "")
    )
    return placed_finding(
        job,
        rows,
        kind="reducer_unused_params",
        severity="error",
        part="explanation",
        summary=summary,
        fix=UNUSED_FIX,
        ranks=ranks,
        step=step,
        order=order,
        details={"parameters": names, "parameter_indices": indices},
    )


def _simple(job: Job, rows: pl.DataFrame, fix: str, what: str) -> Finding:
    # `DDP expects same model ... but Rank 0 has 382 params, while rank 1 has inconsistent 0
    # params` is printed by rank 0 about rank 1: the differing rank is the peer, unless the
    # counts the reports give say which ranks most of them agree on
    mismatch = rows.item(0, "event") == "model_mismatch"
    named = "peer_rank" if mismatch else "rank"
    ranks = sorted(rows.get_column(named).drop_nulls().unique().to_list())
    summary = f"DDP's reducer on {rank_list(ranks) if ranks else 'a rank'} {what}."
    details: dict[str, object] = {"model_differs": True} if mismatch else {}
    if mismatch and (counted := _odd_counts(rows)) is not None:
        ranks, odd_count, others, their_count = counted
        summary = (
            f"DDP's model on {rank_list(ranks)} has {odd_count} parameters where "
            f"{rank_list(others)} have {their_count}: {rank_list(ranks)} {what}."
        )
        details |= {"parameter_counts": {"odd": odd_count, "others": their_count}}
    return placed_finding(
        job,
        rows,
        kind="reducer_unused_params",
        severity="error",
        part="explanation",
        summary=summary,
        fix=fix,
        ranks=ranks,
        details=details,
    )


def _odd_counts(rows: pl.DataFrame) -> tuple[list[int], int, list[int], int] | None:
    """From DDP's model-mismatch reports (each: the reporting rank's parameter count and the
    peer's, in `values`), the ranks whose count differs from the one most ranks have (a run
    here: ranks 0 and 2 with 4 parameters, rank 1 with 6, each rank's report naming another).
    None where no count is held by more ranks than any other."""
    counts: dict[int, int] = {}
    for row in rows.iter_rows(named=True):
        values = row["values"] or []
        if len(values) == 2 and row["rank"] is not None and row["peer_rank"] is not None:
            counts[row["rank"]], counts[row["peer_rank"]] = values[0], values[1]
    by_count: dict[int, list[int]] = {}
    for rank, count in sorted(counts.items()):
        by_count.setdefault(count, []).append(rank)
    if len(by_count) < 2:
        return None
    ordered = sorted(by_count.items(), key=lambda item: len(item[1]), reverse=True)
    (their_count, others), (_, second) = ordered[0], ordered[1]
    if len(others) == len(second):
        return None
    odd = sorted(rank for count, ranks in ordered[1:] for rank in ranks)
    odd_count = ordered[1][0]
    return odd, odd_count, others, their_count


def _diagnosis(finding: Finding) -> str:
    """Ranks that built different models fail DDP's check of the parameters across processes
    (a collective over their counts and shapes) before any gradient is reduced: the same
    collectives with different shapes, caught at the start (liangyn22/MCUFormer#2's supernet,
    `params[4] in this process with sizes [243, 256] appears not to match ...`)."""
    if finding.details.get("model_differs"):
        return "collective_mismatch"
    return "reducer_unused_params"


RULE = Rule(kind="reducer_unused_params", check=check, specificity=15, diagnosis=_diagnosis)
