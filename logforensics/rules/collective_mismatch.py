"""Ranks that issued different collectives at the same point: the desync itself.

Sources, most direct first: TORCH_DISTRIBUTED_DEBUG=DETAIL's `Detected mismatch between
collectives on ranks` (both fingerprints), the per-collective `Running collective` lines
(the first sequence number at which the ranks' histories part), and NCCL's own device-side
check (`Mismatched collective detected ... at and around rank N`, `... may be caused by a
collective mismatch around rank N`; NCCL 2.4 to 2.9).
"""

from __future__ import annotations

import polars as pl

from logforensics.desync import (
    ROOTED_OPS,
    comparable_timeout_seqs,
    describe,
    mixed_ops_at_one_seq,
    odd_ones_out,
    per_rank_timeouts,
    points_apart,
)
from logforensics.findings import Finding, differences_masked, evidence_from, exception_text
from logforensics.garbled import undecoded_objects
from logforensics.job import Job
from logforensics.placement import earliest_time, place, placed_finding
from logforensics.plausible import rank_limit
from logforensics.registry import Rule
from logforensics.rules.rank_exception import CONSEQUENCE, MISUSED, with_exception_lines
from logforensics.rules.stage_divergence import shape_mismatch
from logforensics.teardown import finished_ranks
from logforensics.text import capitalized, rank_list

FIX = (
    "Every rank must call the same collectives in the same order with the same shapes. Look "
    "at the code path that issues the differing collective on {who}: a data-dependent branch, "
    "a `continue` or early `return` on some ranks, a metric or barrier only some ranks reach, "
    "or uneven data at the epoch end."
)


def check(job: Job) -> list[Finding]:
    return (
        _from_detail(job)
        + _from_shape_check(job)
        + _from_fsdp_order(job)
        + _from_collective_runs(job)
        + _from_nccl_calls(job)
        + _from_nccl_warning(job)
        + _from_gloo_sizes(job)
        + _from_timeout_positions(job)
        + _from_timeout_sizes(job)
        + _left_alone(job)
        + _in_another_collective(job)
        + _from_loss_keys(job)
        + _from_horovod_stall(job)
        + _from_process_shapes(job)
        + _from_printed_sizes(job)
        + _from_rank_disagreement(job)
        + undecoded_objects(job)
    )


SHAPES_FIX = (
    "Every process must pass a tensor of the same shape to `{op}`. Find why {who}'s differs: "
    "most often the last, shorter batch of data that does not divide evenly among the "
    "processes, or per-process lengths (generated sequences, variable-size outputs). Pad "
    "before gathering (`accelerator.pad_across_processes`), use `gather_for_metrics`, or give "
    "every process the same number of samples (`drop_last=True`, an even split)."
)


def _from_process_shapes(job: Job) -> list[Finding]:
    """The shapes each process passed to a collective, where they differ: accelerate's report
    (huggingface/lighteval#204: process 0 passed [1024], processes 1-7 [2048]) or the ranks'
    own prints (NVIDIA/nccl#1417: `Rank 0 tensor before allreduce: torch.Size([409600])`, the
    others 32768000). The processes in the minority are the odd ones out; as many on each
    side (two processes) says which shapes differ, not which process left the path, and
    blames nobody. accelerate's report is one process's, in its file; the ranks' prints of
    one place are compared across files."""
    rows = job.events.filter(
        (pl.col("event") == "process_shape") & pl.col("peer_rank").is_not_null()
    ).sort("file", "line")
    printed = pl.col("family") == "shape_prints"
    place = pl.when(printed).then(pl.lit("")).otherwise(pl.col("file").cast(pl.String))
    findings = []
    for _, report in rows.group_by(place.alias("_place"), "value", maintain_order=True):
        # a rank that printed it again: its last print
        shapes = dict(zip(report["peer_rank"].to_list(), report["shape"].to_list(), strict=True))
        groups = _by_fingerprint({rank: str(shape) for rank, shape in shapes.items()})
        if len(groups) < 2:
            continue
        ordered = sorted(groups.values(), key=len, reverse=True)
        majority = ordered[0]
        blames_nobody = len(ordered[1]) == len(majority)
        odd = sorted(rank for group in ordered[1:] for rank in group)
        op = str(report.item(0, "op") or "a collective")
        by_accelerate = report.item(0, "family") != "shape_prints"
        listed = _process_list if by_accelerate else rank_list
        shown = "; ".join(f"{listed(group)}: {shapes[group[0]]}" for group in ordered[:4])
        said = (
            f"accelerate's check of `{op}` found the processes passing different shapes"
            if by_accelerate
            else f"The ranks printed the shape of the tensor they pass to {op}, and it differs"
        )
        summary = f"{said} ({shown})" + (
            ": no side is a minority, so the logs do not say which process left the path."
            if blames_nobody
            else f": {rank_list(odd)} differ{'s' if len(odd) == 1 else ''} from the rest, "
            "and the collective would have hung or mixed up the data."
        )
        findings.append(
            placed_finding(
                job,
                report,
                kind="collective_mismatch",
                severity="error",
                part="departure",
                summary=summary,
                fix=SHAPES_FIX.format(op=op, who=rank_list(odd)),
                ranks=odd if not blames_nobody else sorted(shapes),
                blames_nobody=blames_nobody,
                confidence="medium",
                details={
                    "source": "accelerate shapes" if by_accelerate else "shape prints",
                    "shapes": {str(rank): shape for rank, shape in shapes.items()},
                    "op": op,
                },
            )
        )
    return findings[:1]  # the first report: later ones repeat it or follow from it


SIZES_FIX = (
    "Every process must pass a tensor of the same size to `{op}`, and these sizes follow the "
    "data (sequence lengths, a last shorter batch). Gather the sizes first and pad every "
    "tensor to the largest before `{op}` (`accelerator.pad_across_processes` does both), or "
    "trim the data to one length on every process."
)


def _from_printed_sizes(job: Job) -> list[Finding]:
    """A timed-out collective whose element count is the size of a tensor the script printed,
    where the same print shows other sizes elsewhere in the job: the processes passed tensors
    of different sizes to it (modelscope/ms-swift#2117: `gathered_logits shape:
    torch.Size([4, 966, 32020])` is rank 2's ALLGATHER of 123,725,280 elements out, the other
    prints 906 and 902 long). The prints name no rank, so this blames none."""
    timeouts = job.events.filter(
        (pl.col("event") == "collective_timeout")
        & (pl.col("numel_in").is_not_null() | pl.col("numel_out").is_not_null())
    ).sort("file", "line")
    prints = job.events.filter(pl.col("event") == "shape_print").sort("file", "line")
    if timeouts.is_empty() or prints.is_empty():
        return []
    prints = prints.with_columns(
        pl.col("shape")
        .str.extract_all(r"\d+")
        .list.eval(pl.element().cast(pl.Int64, strict=False).product())
        .list.first()
        .alias("_numel")
    )
    for timeout in timeouts.iter_rows(named=True):
        counts = {timeout["numel_in"], timeout["numel_out"]} - {None}
        matched = prints.filter(pl.col("_numel").is_in(list(counts)))
        if matched.is_empty():
            continue
        same_place = prints.filter(pl.col("value") == matched.item(0, "value"))
        shapes = list(dict.fromkeys(same_place.get_column("shape").to_list()))
        if len(shapes) < 2:
            continue
        op = str(timeout["op"] or "a collective")
        at = f" #{timeout['seq']}" if timeout["seq"] is not None else ""
        who = rank_list([timeout["rank"]]) if timeout["rank"] is not None else "A rank"
        the_timeout = (pl.col("file") == timeout["file"]) & (pl.col("line") == timeout["line"])
        rows = pl.concat([timeouts.filter(the_timeout), same_place], how="diagonal_relaxed")
        size = matched.item(0, "shape")
        summary = (
            f"{capitalized(who)} timed out in {op}{at} with {max(counts):,} elements: the size "
            f"of the printed tensor {size}, which the same print shows "
            f"as {', '.join(s for s in shapes if s != size)} elsewhere. "
            f"The processes passed tensors of different sizes to {op}, and it hung."
        )
        return [
            placed_finding(
                job,
                rows,
                kind="collective_mismatch",
                severity="error",
                part="departure",
                summary=summary,
                fix=SIZES_FIX.format(op=op),
                ranks=[],
                blames_nobody=True,
                confidence="medium",
                details={"source": "printed sizes", "shapes": shapes, "op": op},
            )
        ]
    return []


DISAGREEMENT_FIX = (
    "Every rank must run the same modules in the same order, so that ZeRO-3 fetches the same "
    "parameters on each. Find the branch {who} took: a data-dependent path (mixture-of-experts "
    "routing that leaves an expert without tokens on one rank, an `if` on the batch, generation "
    "that stops at a different length), evaluation or saving on some ranks only. Run the "
    "branch on every rank (for MoE, have every expert take part in each step), or train that "
    "model without ZeRO-3."
)


def _from_rank_disagreement(job: Job) -> list[Finding]:
    """DeepSpeed's check that every rank holds rank 0's list failed on some ranks
    (hiyouga/LlamaFactory#4428: `disagreement between rank0 and rank6`, ZeRO-3 at the first
    evaluation of a mixture-of-experts model): those ranks ran another sequence than rank 0,
    and the collectives after it no longer pair."""
    rows = job.events.filter(pl.col("event") == "rank_disagreement").sort("file", "line")
    if rows.is_empty():
        return []
    ranks = sorted(rows.get_column("rank").drop_nulls().unique().to_list())
    who = rank_list(ranks) if ranks else "a rank"
    summary = (
        f"DeepSpeed's check that every rank holds the same list as rank 0 failed on {who} "
        "(`disagreement between rank0 and rank...`): under ZeRO-3 that list traces the "
        f"parameters each rank fetched, so {who} ran other modules or another order than "
        "rank 0, and their collectives no longer pair."
    )
    return [
        placed_finding(
            job,
            rows,
            kind="collective_mismatch",
            severity="error",
            part="departure",
            summary=summary,
            fix=DISAGREEMENT_FIX.format(who=who),
            ranks=ranks,
            confidence="medium",
            details={"source": "deepspeed consistency check", "compared_with": 0},
        )
    ]


FSDP_ORDER_FIX = (
    "Every rank must run the same FSDP modules in the same order in its forward. Find why "
    "{who} did not: a branch on the data or the rank that skips or adds a wrapped module, a "
    "model built or wrapped differently on that rank (its config, its checkpoint after a "
    "resume, a module frozen only there), or a collective of its own that put it out of step "
    "(a count no model has, negative or huge, says the check's own all-gather met another "
    "collective there)."
)


def _from_fsdp_order(job: Job) -> list[Finding]:
    """FSDP's forward-order check (TORCH_DISTRIBUTED_DEBUG): it compares pairs in rank order,
    (0, 1), (0, 2), ..., and raises at the first that differs, so the ranks between 0 and the
    second one named agreed with rank 0 (mosaicml/diffusion#44: `rank 0 is all-gathering 1
    parameters while rank 4 is all-gathering -2142209024 parameters`: ranks 1-3 agreed with
    rank 0, rank 4 had left). Rank 0 against rank 1 says nothing of which one left."""
    rows = job.events.filter(pl.col("event") == "fsdp_order_mismatch").sort("file", "line")
    if rows.is_empty():
        return []
    first = rows.row(0, named=True)
    low, high = first["values"]
    theirs, mine = first["names"]
    world = job.world_size.value if job.world_size is not None else None
    if low is None or high is None or high >= rank_limit(world):
        return []  # no rank a job has (`plausible`)
    agreed = list(range(low + 1, high))
    told = f"rank {low} was all-gathering {theirs} while rank {high} was all-gathering {mine}"
    if agreed:
        summary = (
            f"FSDP's check of the forward order found the ranks all-gathering different "
            f"parameters: {told}, and {rank_list(agreed)} agreed with rank {low}. Rank {high} "
            "had left the path the others kept: its collectives no longer pair with theirs."
        )
        ranks, blames_nobody, who = [high], False, f"rank {high}"
    else:
        summary = (
            f"FSDP's check of the forward order found the ranks all-gathering different "
            f"parameters: {told}. The check does not say which of the two left the others' path."
        )
        ranks, blames_nobody, who = [low, high], True, f"rank {low} or rank {high}"
    return [
        placed_finding(
            job,
            rows,
            kind="collective_mismatch",
            severity="error",
            part="departure",
            summary=summary,
            fix=FSDP_ORDER_FIX.format(who=who),
            ranks=ranks,
            blames_nobody=blames_nobody,
            confidence="high" if agreed else "medium",
            details={"source": "FSDP order check", "pair": [low, high], "agreed": agreed},
        )
    ]


def _process_list(ranks: list[int]) -> str:
    """`process 0`, `processes 1-7`, as accelerate numbers them."""
    listed = rank_list(sorted(ranks))
    return listed.replace("ranks", "processes", 1).replace("rank", "process", 1)


STALL_FIX = (
    "Horovod waits until every rank submits the same tensors. Find why {who} did not: an "
    "exception it caught, a skipped step or batch, fewer batches (give every rank the same "
    "number: `hvd.DistributedSampler`/`drop_last=True`), or a branch that issues other "
    "collectives on it."
)
LONE_SUBMITTER_FIX = (
    "Every rank must run the same collectives: move the collective out of the `if rank == "
    "{rank}` branch (run it on every rank and use the result on rank {rank} only), or replace "
    "it with a local computation on rank {rank}."
)
STALL_SPLIT_FIX = (
    "The ranks ran different collectives, so many on each side that they differ as groups: "
    "most often one node runs other code, data or versions than the rest. Compare the "
    "checkout, the data and the environment on every node; then look for a branch that "
    "depends on the rank or the node."
)


STALL_EVENTS = ("stall", "stall_missing", "stall_ready")


def _stall_got_past(job: Job) -> pl.DataFrame | None:
    """The line that shows the job went on past the stall inspector's last report, nothing
    having failed: a progress bar that ran to its end, or a finish mark, later in the file of
    that report. The inspector warns of any tensor that waited a minute; ranks that were only
    slow get past it (ChenRocks/UNITER#33: `Stalled ranks: 0: [allgather.noname.1]` at 97% of
    an evaluation that then finished). None when nothing shows it."""
    events = job.events
    if not job.nothing_failed():
        return None
    last = (
        events.filter(pl.col("event").is_in(STALL_EVENTS))
        .group_by("file")
        .agg(pl.col("line").max().alias("_last"))
    )
    values = pl.col("values")
    ran_out = (
        (pl.col("event") == "progress_bar")
        & (values.list.len() == 2)
        & (values.list.get(0, null_on_oob=True) == values.list.get(1, null_on_oob=True))
        & (values.list.get(1, null_on_oob=True) > 0)
    )
    after = events.join(last, on="file").filter(
        (pl.col("line") > pl.col("_last"))
        & (ran_out.fill_null(False) | (pl.col("event") == "run_finished"))
    )
    return None if after.is_empty() else after.sort("file", "line").head(1)


def _stall_passed(
    job: Job, missing_rows: pl.DataFrame, missing: list[int], past: pl.DataFrame
) -> Finding:
    who = rank_list(missing)
    summary = (
        f"Horovod's stall inspector reported {who} behind the others, and the job got past it "
        "(it went on to the end of its work with nothing failing): a rank that was slow for a "
        "while, not a hang."
    )
    return placed_finding(
        job,
        pl.concat([missing_rows, past], how="diagonal_relaxed"),
        kind="collective_mismatch",
        severity="warning",
        part="context",
        summary=summary,
        fix="",
        ranks=missing,
        blames_nobody=True,
        confidence="medium",
        details={"source": "horovod stall", "got_past": True},
    )


def _from_horovod_stall(job: Job) -> list[Finding]:
    """Horovod's stall inspector names the ranks that have not submitted a tensor the others
    wait on. One missing rank, or a minority of the world (known, or at least as large as the
    ranks named), left the path; so many that they are not a minority say the ranks split into
    groups running different code (horovod/horovod#2640: ranks 0-10 never submitted an
    allreduce, the nodes ran different code), and blame no rank."""
    events = job.events
    missing_rows = events.filter(
        (pl.col("event") == "stall_missing") & pl.col("peer_rank").is_not_null()
    ).sort("file", "line")
    ready_rows = events.filter(pl.col("event") == "stall_ready").sort("file", "line")
    ready_lists = _ready_lists(ready_rows)
    ready = set().union(*ready_lists)
    if missing_rows.is_empty():
        world = _stall_world(job, ready_lists)
        missing_rows = _majority_ops(world, ready_rows, ready_lists)
        missing = _not_ready(world, _ready_lists(missing_rows))
    else:
        missing_rows = _first_report(events, missing_rows)
        missing = sorted(set(missing_rows.get_column("peer_rank").to_list()))
    if not missing:
        return []
    if (arriving := _arriving(missing_rows)) is not None:
        return [_stragglers(job, *arriving)]
    past = _stall_got_past(job)
    if past is not None:
        return [_stall_passed(job, missing_rows, missing, past)]
    if job.world_size is not None:
        blamed = len(missing) * 2 < job.world_size.value
    elif ready:
        blamed = len(missing) * 2 < len(ready | set(missing))
    else:
        # one rank, or a minority of the smallest world the named ranks allow, which is a
        # minority of any larger one (horovod/horovod#498: ranks 3 and 6, so at least 7 ranks)
        blamed = len(missing) == 1 or len(missing) * 2 < max(missing) + 1
    tensors = _tensor_names(missing_rows)
    what = tensors[0] if tensors else "a tensor"
    more = f" (and {len(tensors) - 1} more)" if len(tensors) > 1 else ""
    who = rank_list(missing)
    if not blamed and (apart := _apart_in_both_directions(job, missing_rows)) is not None:
        return [_crossed_submissions(job, missing_rows, *apart)]
    lone = None if blamed else _lone_submitter(job, missing)
    if lone is not None:
        return [_lone_submitter_finding(job, missing_rows, lone, missing, what, more, tensors)]
    elsewhere = blamed and _seen_submitting_others(events, ready, missing)
    if elsewhere:
        summary = (
            f"Horovod's stall inspector: {who} never submitted {what}{more} while the other "
            f"ranks waited for {'it' if len(missing) == 1 else 'them'}, and {who} submitted "
            "other tensors meanwhile: "
            f"{who} left the common path (another branch, a caught exception, fewer batches)."
        )
    elif blamed:
        summary = (
            f"Horovod's stall inspector: {who} never submitted {what}{more} while the other "
            f"ranks waited for {'it' if len(missing) == 1 else 'them'}. What held "
            f"{'it' if len(missing) == 1 else 'them'} the logs do not say: another branch, a "
            "caught exception, fewer batches, or work of its own that took longer."
        )
    else:
        summary = (
            f"Horovod's stall inspector: {who} never submitted {what}{more} that other ranks "
            "had: the ranks ran different collectives, too many on each side to be one rank "
            "that strayed."
        )
    return [
        placed_finding(
            job,
            missing_rows,
            # a minority seen submitting other tensors departed from the others' path (the
            # earliest divergence); one only missing is waited for, like a rank a watchdog's
            # timeout singles out; groups too large for either ran different collectives
            kind=(
                "stage_divergence"
                if elsewhere
                else "collective_timeout"
                if blamed
                else "collective_mismatch"
            ),
            severity="error",
            part="departure",
            summary=summary,
            fix=STALL_FIX.format(who=who) if blamed else STALL_SPLIT_FIX,
            ranks=missing,
            blames_nobody=not blamed,
            confidence="medium" if blamed else "low",
            details={"source": "horovod stall", "tensors": tensors[:10], "ready": sorted(ready)},
        )
    ]


def _seen_submitting_others(events: pl.DataFrame, ready: set[int], missing: list[int]) -> bool:
    """Whether the stall reports show a missing rank submitting tensors the others did not
    wait for: ready on another stalled op (horovod/horovod#336: rank 3 ready on the loss while
    ranks 0-2 wait in the gradients), or absent from another tensor's missing ranks
    (Lightning-AI/pytorch-lightning#5155: rank 0 missing from `broadcast.bool.sz`, rank 1 later
    missing from the allreduces rank 0 had gone on to). Missing alone tells that a rank never
    came, not where it went (horovod/horovod#2506: `5: [horovod_allreduce.157]` and nothing
    more)."""
    if set(missing) & ready:
        return True
    per_tensor = (
        events.filter((pl.col("event") == "stall_missing") & pl.col("peer_rank").is_not_null())
        .explode("names")
        .filter(pl.col("names").is_not_null())
        .group_by("names")
        .agg(pl.col("peer_rank").unique())
    )
    return any(
        not set(missing) <= set(ranks) for ranks in per_tensor.get_column("peer_rank").to_list()
    )


def _apart_in_both_directions(
    job: Job, missing_rows: pl.DataFrame
) -> tuple[list[int], str, str] | None:
    """Where each tensor is missing either on the same minority of ranks or on all the others,
    that minority ran other collectives than the rest: it lacks what they submitted and they
    lack what it submitted (deepinsight/insightface#1287: rank 0 missing `...noname.691941`,
    ranks 1-7 missing `...noname.691943`). The minority, a tensor it lacks, one the rest lack."""
    per_tensor = (
        missing_rows.explode("names")
        .filter(pl.col("names").is_not_null() & pl.col("peer_rank").is_not_null())
        .group_by("names", maintain_order=True)
        .agg(pl.col("peer_rank").unique().sort())
    )
    if per_tensor.height < 2:
        return None
    named = set(missing_rows.get_column("peer_rank").drop_nulls().to_list())
    size = job.world_size.value if job.world_size is not None else max(named) + 1
    if size > MAX_STALL_WORLD:
        return None
    world = set(range(size))
    sets = [set(ranks) for ranks in per_tensor.get_column("peer_rank").to_list()]
    few = min(sets, key=len)
    if len(few) * 2 >= size or not all(ranks in (few, world - few) for ranks in sets):
        return None
    tensors = per_tensor.get_column("names").to_list()
    theirs = next(t for t, ranks in zip(tensors, sets, strict=True) if ranks == few)
    its = next((t for t, ranks in zip(tensors, sets, strict=True) if ranks != few), None)
    if its is None:
        return None
    return sorted(few), theirs, its


def _crossed_submissions(
    job: Job, rows: pl.DataFrame, few: list[int], theirs: str, its: str
) -> Finding:
    who = rank_list(few)
    summary = (
        f"Horovod's stall inspector: {who} never submitted {theirs}, which every other rank "
        f"had, and submitted {its}, which none of them did: {who} ran other collectives than "
        "the rest (a skipped or extra step, a caught exception, a branch on its data)."
    )
    return placed_finding(
        job,
        rows,
        kind="collective_mismatch",
        severity="error",
        part="departure",
        summary=summary,
        fix=STALL_FIX.format(who=who),
        ranks=few,
        confidence="medium",
        details={"source": "horovod stall", "tensors": [theirs, its], "crossed": True},
    )


def _tensor_names(rows: pl.DataFrame) -> list[str]:
    """The tensors the stall reports in `rows` name, each once, in their order."""
    return list(
        dict.fromkeys(name for names in rows.get_column("names").to_list() for name in names or [])
    )


def _arriving(missing_rows: pl.DataFrame) -> tuple[pl.DataFrame, list[int], list[int]] | None:
    """Where the stall inspector's later reports of a tensor name fewer missing ranks than its
    earlier ones, the ranks were arriving one by one, late, not running other collectives
    (horovod/horovod#457: `MetricAverageCallback/...acc_0 [missing ranks: 0, 1, 3, 4]`, then
    `[missing ranks: 0, 1, 4]` after validation): the last report's rows, the ranks it still
    misses, and the ranks that arrived since the first."""
    reports = (
        missing_rows.with_columns(pl.col("names").list.first().alias("_tensor"))
        .group_by("file", "line", "_tensor", maintain_order=True)
        .agg(pl.col("peer_rank").unique().sort())
        .sort("file", "line")
    )
    for _, seen in reports.group_by("_tensor", maintain_order=True):
        sets = [set(ranks) for ranks in seen.get_column("peer_rank").to_list()]
        if len(sets) < 2 or not sets[-1] < sets[0]:
            continue
        last = seen.row(-1, named=True)
        rows = missing_rows.filter(
            (pl.col("file") == last["file"]) & (pl.col("line") == last["line"])
        )
        return rows, sorted(sets[-1]), sorted(sets[0] - sets[-1])
    return None


def _stragglers(job: Job, rows: pl.DataFrame, missing: list[int], arrived: list[int]) -> Finding:
    tensors = _tensor_names(rows)
    what = tensors[0] if tensors else "a tensor"
    who = rank_list(missing)
    summary = (
        f"Horovod's stall inspector: {who} had still not submitted {what} at its last report, "
        f"while {rank_list(arrived)} arrived after its first: the ranks reached this "
        f"collective one by one, late, and {who} never did. Work before it that some ranks do "
        "longer (evaluation, a metric, I/O) or a rank stuck there held the others."
    )
    return placed_finding(
        job,
        rows,
        # late, one by one: waited for, with no sign of another path
        kind="collective_timeout",
        severity="error",
        part="departure",
        summary=summary,
        fix=STALL_FIX.format(who=who),
        ranks=missing,
        confidence="low",
        details={"source": "horovod stall", "tensors": tensors[:10], "arrived": arrived},
    )


def _lone_submitter(job: Job, missing: list[int]) -> int | None:
    """The one rank of the world (the known one, else the smallest the named ranks allow) that
    is not missing, when every other rank is."""
    world = job.world_size.value if job.world_size is not None else max(missing) + 1
    if len(missing) < 2 or world > MAX_STALL_WORLD:
        return None
    submitted = set(range(world)) - set(missing)
    return submitted.pop() if len(submitted) == 1 else None


def _lone_submitter_finding(
    job: Job,
    rows: pl.DataFrame,
    lone: int,
    missing: list[int],
    what: str,
    more: str,
    tensors: list[str],
) -> Finding:
    """Every rank but one never submitted the op: that one ran a collective the others do not
    (horovod/horovod#600: a metric averaged on rank 0 alone, ranks 1-15 missing)."""
    summary = (
        f"Horovod's stall inspector: rank {lone} alone submitted {what}{more}, which "
        f"{rank_list(missing)} never did: rank {lone} ran a collective the others do not "
        "(code under a rank check: a callback, a metric, a checkpoint on one rank only)."
    )
    return placed_finding(
        job,
        rows,
        kind="collective_mismatch",
        severity="error",
        part="departure",
        summary=summary,
        fix=LONE_SUBMITTER_FIX.format(rank=lone),
        ranks=[lone],
        confidence="medium",
        details={"source": "horovod stall", "tensors": tensors[:10], "missing": missing},
    )


def _ready_lists(ready_rows: pl.DataFrame) -> list[set[int]]:
    return [
        {int(rank) for rank in ranks or [] if rank is not None}
        for ranks in ready_rows.get_column("values").to_list()
    ]


def _first_report(events: pl.DataFrame, missing_rows: pl.DataFrame) -> pl.DataFrame:
    """The missing ranks of each file's first stall warning, where later warnings name others:
    the first is the divergence, the later ones the ranks it then held up in their next
    collectives (Lightning-AI/pytorch-lightning#5155: rank 0 missing from `broadcast.bool.sz`,
    a minute later rank 1 from the training step's allreduces, which rank 0 had gone on to)."""
    warnings = events.filter(pl.col("event") == "stall").sort("file", "line")
    second = (
        warnings.group_by("file", maintain_order=True)
        .agg(pl.col("line").slice(1, 1).first().alias("_second"))
        .drop_nulls("_second")
    )
    if second.is_empty():
        return missing_rows
    first = missing_rows.join(second, on="file", how="left").filter(
        pl.col("_second").is_null() | (pl.col("line") < pl.col("_second"))
    )
    if first.is_empty():
        return missing_rows
    return first.drop("_second")


def _stall_world(job: Job, ready_lists: list[set[int]]) -> int:
    """The world the ready lists are of: the known one, else the ranks up to the highest ready
    one."""
    if job.world_size is not None:
        return job.world_size.value
    return max((max(ranks) for ranks in ready_lists if ranks), default=-1) + 1


def _majority_ops(
    world: int, ready_rows: pl.DataFrame, ready_lists: list[set[int]]
) -> pl.DataFrame:
    """The stalled ops that most of the world is ready on, where the ready lists split the
    ranks between ops (each waits in its own): the ranks not ready on those are the ones that
    left the common path (horovod/horovod#336: `HorovodAllreduce_loss_Mean_0 [ready ranks: 3]`
    beside the gradient allreduces `[ready ranks: 2, 0, 1]`: rank 3 strayed). All the ops when
    no op has a majority (the ranks split into groups) or the lists do not split the world."""
    if not ready_lists or len(set().union(*ready_lists)) < world:
        return ready_rows
    majority = [len(ranks) * 2 > world for ranks in ready_lists]
    if all(majority) or not any(majority):
        return ready_rows
    return ready_rows.filter(pl.Series(majority))


def _not_ready(world: int, ready_lists: list[set[int]]) -> list[int]:
    """The ranks absent from some stalled op's list of ready ranks, when the inspector names
    only those (horovod/horovod#364: `allreduce.conv1.weight [ready ranks: 0, 7, 3, 2, 4, 6]`
    in a world of 8 leaves ranks 1 and 5)."""
    ready_lists = [ranks for ranks in ready_lists if ranks]
    if not ready_lists or world > MAX_STALL_WORLD:  # a number read from the log, checked
        return []  # before a range is made
    everyone = set(range(world))
    return sorted(set().union(*(everyone - ranks for ranks in ready_lists)))


MAX_STALL_WORLD = 1 << 17

LOSS_KEYS_FIX = (
    "Every rank must compute the same loss terms every step: a model branch that produces no "
    "loss on {who} (no positive proposals, an empty crop, a modality missing from the batch) "
    "should still return its terms as zeros, so that the ranks' loss all-reduces match."
)


def _from_loss_keys(job: Job) -> list[Finding]:
    """Ranks that logged other loss terms than the rest (OpenMMLab's `loss log variables are
    different across GPUs!` with each rank's terms): their forward took another path, so their
    loss all-reduces differ from the others'. The odd ones are the minority; between two ranks,
    the one whose terms are a subset of the other's, its model having skipped a branch
    (open-mmlab/mmdetection#9291: rank 1 logged only the RPN's 3 terms, rank 0 all 11)."""
    said = (
        job.events.filter((pl.col("event") == "loss_keys") & pl.col("rank").is_not_null())
        .sort("file", "line")
        .unique(subset=["rank"], keep="last", maintain_order=True)
    )
    if said.height < 2:
        return []
    keys = {row["rank"]: frozenset(row["names"] or []) for row in said.iter_rows(named=True)}
    groups: dict[frozenset[str], list[int]] = {}
    for rank, names in keys.items():
        groups.setdefault(names, []).append(rank)
    if len(groups) < 2:
        return []
    ordered = sorted(groups.items(), key=lambda item: (-len(item[1]), -len(item[0])))
    common, majority = ordered[0]
    if len(groups) == 2 and len(majority) == len(ordered[1][1]):
        # as many on each side: the side whose terms the other's contain skipped a branch
        fewer, more = sorted(groups.items(), key=lambda item: len(item[0]))
        if not fewer[0] < more[0]:
            return []
        common, majority = more
    odd = sorted(rank for rank, names in keys.items() if names != common)
    who = rank_list(odd)
    first_odd = keys[odd[0]]
    summary = (
        f"{who.capitalize()} logged {len(first_odd)} loss terms where "
        f"{rank_list(sorted(majority))} logged {len(common)} "
        f"(missing: {', '.join(sorted(common - first_odd)[:6]) or 'none'}): "
        f"{'its' if len(odd) == 1 else 'their'} forward took another path through the model, "
        "so the ranks' loss all-reduces differ; the framework's check stopped the run where it "
        "would have hung."
    )
    return [
        placed_finding(
            job,
            said,
            kind="collective_mismatch",
            severity="error",
            part="departure",
            summary=summary,
            fix=LOSS_KEYS_FIX.format(who=who),
            ranks=odd,
            confidence="medium",
            details={"source": "loss terms", "other_ranks": sorted(majority)},
        )
    ]


def _left_alone(job: Job) -> list[Finding]:
    """Ranks that timed out in a collective while every other rank of the job said it had
    finished its run: the others got past every collective, so the call the few waited in was
    one the rest never made (pytorch#97191: rank 0 alone in an ALLREDUCE twice the size of the
    others', which ranks 1-7 completed before printing `Rank N completed`). Only when the ones
    left are fewer than the ones done."""
    timeouts = per_rank_timeouts(job.events)
    if timeouts.is_empty():
        return []
    waiting = set(timeouts.get_column("rank").to_list())
    done = finished_ranks(job)
    done = done.filter(~pl.col("rank").is_in(list(waiting)))
    finished = set(done.get_column("rank").to_list())
    world = job.world_size.value if job.world_size is not None else None
    everyone = set(range(world)) if world is not None else set(job.ranks_seen) | waiting
    if not finished or everyone != waiting | finished or len(waiting) >= len(finished):
        return []
    first = timeouts.sort("file", "line").row(0, named=True)
    op = first["op"] or "a collective"
    seq = first["seq"]
    at = f"{op} #{seq}" if seq is not None else op
    who = rank_list(sorted(waiting))
    others = rank_list(sorted(finished))
    summary = (
        f"{who.capitalize()} timed out in {at} while {others} had finished the run: they "
        f"got past every collective, so this was a call only {who} made (an extra or larger "
        "collective on a path of its own), which the others never joined."
    )
    columns = ["file", "line", "text", "rank"]
    # the timeouts first, then the marks of the ranks that were done
    rows = pl.concat([timeouts.sort("file", "line").select(columns), done.select(columns)])
    evidence, total = evidence_from(rows)
    return [
        Finding(
            kind="collective_mismatch",
            severity="error",
            part="departure",
            summary=summary,
            fix=FIX.format(who=who),
            ranks=sorted(waiting),
            op=first["op"],
            seq=seq,
            confidence="medium",
            evidence=evidence,
            evidence_total=total,
            order=place(job, timeouts),
            timestamp=earliest_time(timeouts),
            details={"source": "ranks left alone", "finished_ranks": sorted(finished)},
        )
    ]


# torch.distributed's Python calls and the op names a watchdog gives the work each issues (a
# barrier is an ALLREDUCE of one element under NCCL)
CALLED_OPS = {
    "all_reduce": {"ALLREDUCE"},
    "barrier": {"ALLREDUCE", "BARRIER"},
    "broadcast": {"BROADCAST"},
    "reduce": {"REDUCE"},
    "all_gather": {"ALLGATHER", "_ALLGATHER_BASE", "ALLGATHER_COALESCED"},
    "all_gather_into_tensor": {"ALLGATHER", "_ALLGATHER_BASE", "ALLGATHER_COALESCED"},
    "_all_gather_base": {"ALLGATHER", "_ALLGATHER_BASE"},
    "reduce_scatter": {"REDUCE_SCATTER", "_REDUCE_SCATTER_BASE"},
    "reduce_scatter_tensor": {"REDUCE_SCATTER", "_REDUCE_SCATTER_BASE"},
    "_reduce_scatter_base": {"REDUCE_SCATTER", "_REDUCE_SCATTER_BASE"},
    "all_to_all": {"ALLTOALL", "ALLTOALL_BASE"},
    "all_to_all_single": {"ALLTOALL", "ALLTOALL_BASE"},
    "gather": {"GATHER"},
    "scatter": {"SCATTER"},
    "send": {"SEND"},
    "recv": {"RECV", "RECV_ANY_SOURCE"},
}
# the innermost frame of a traceback raised inside one of them
IN_TORCH_CALL = r"torch/distributed/distributed_c10d\.py:\d+ in (\w+)$"


def _in_another_collective(job: Job) -> list[Finding]:
    """Ranks that reported no timeout while the others timed out in one op, whose own
    traceback ends inside another torch.distributed collective, torn down when the others
    gave up: they stood in a different collective at that point (Pein2017/CoordExp's record:
    rank 0 in a gloo `all_gather` under `_gather_rank_reports` while ranks 1-3 and 5-7 timed
    out in BROADCAST #78). The side that is fewer left the common path; an even split blames
    nobody."""
    timeouts = per_rank_timeouts(job.events).sort("file", "line")
    waited_in = {str(op).upper() for op in timeouts.get_column("op").drop_nulls().to_list()}
    if not waited_in:
        return []
    waiting = sorted(set(timeouts.get_column("rank").to_list()))
    said = exception_text()
    inside = (
        job.events.filter(
            (pl.col("event") == "exception")
            & pl.col("rank").is_not_null()
            & ~pl.col("rank").is_in(waiting)
            & said.str.contains(CONSEQUENCE).fill_null(False)
            & ~said.str.contains(MISUSED).fill_null(False)
        )
        .with_columns(pl.col("frame").str.extract(IN_TORCH_CALL, 1).alias("_call"))
        .filter(pl.col("_call").is_in(list(CALLED_OPS)))
        .sort("file", "line")
    )
    same_op = [call for call, ops in CALLED_OPS.items() if ops & waited_in]
    elsewhere = inside.filter(~pl.col("_call").is_in(same_op)).unique(
        "rank", keep="first", maintain_order=True
    )
    if elsewhere.is_empty():
        return []
    framed = sorted(elsewhere.get_column("rank").to_list())
    alike = _same_error_unframed(job, elsewhere, set(waiting) | set(framed))
    ranks = sorted(framed + alike.get_column("rank").to_list())
    calls = sorted(set(elsewhere.get_column("_call").to_list()))
    first = timeouts.row(0, named=True)
    at = f"{first['op']} #{first['seq']}" if first["seq"] is not None else str(first["op"])
    who, others = rank_list(ranks), rank_list(waiting)
    in_calls = " and ".join(f"`{call}`" for call in calls)
    blames_nobody = len(ranks) >= len(waiting)
    whose = "its" if len(framed) == 1 else "their"
    if not alike.is_empty():
        whose = f"{rank_list(framed)}'s"
    same = (
        f"; {rank_list(alike.get_column('rank').to_list())} raised the same error"
        if not alike.is_empty()
        else ""
    )
    summary = (
        f"{capitalized(who)} {'was' if len(ranks) == 1 else 'were'} inside {in_calls} (the "
        f"innermost frame of {whose} traceback{same}) while "
        f"{others} waited in {at}: the ranks were in different collectives at that point, "
        f"not running the same calls in the same order."
    )
    summary += (
        " As many ranks stood on each side, so nothing tells which side left the common path."
        if blames_nobody
        else f" {capitalized(who)} left the path the others took to it."
    )
    rows = pl.concat(
        [with_exception_lines(elsewhere), with_exception_lines(alike), timeouts.head(3)],
        how="diagonal_relaxed",
    )
    return [
        placed_finding(
            job,
            rows,
            kind="collective_mismatch",
            severity="error",
            part="departure",
            summary=summary,
            fix=FIX.format(who=who),
            ranks=ranks,
            op=first["op"],
            seq=first["seq"],
            blames_nobody=blames_nobody,
            confidence="low" if blames_nobody else "medium",
            details={"source": "tracebacks in other collectives", "calls": calls},
        )
    ]


def _same_error_unframed(job: Job, framed: pl.DataFrame, known: set[int]) -> pl.DataFrame:
    """The exceptions of other ranks that neither timed out nor show a frame, with the same
    error as a rank whose traceback puts it in another collective (its message but for the
    peer's address and port): the paste kept their exception line alone, and they stood where
    it stood (Pein2017/CoordExp's record: rank 4's `Connection closed by peer [...]:31485`
    beside rank 0's in `all_gather`)."""
    shapes = framed.select(differences_masked(pl.col("exc_message")).alias("_shape"))
    return (
        job.events.filter(
            (pl.col("event") == "exception")
            & pl.col("rank").is_not_null()
            & ~pl.col("rank").is_in(list(known))
            & pl.col("frame").is_null()
        )
        .with_columns(differences_masked(pl.col("exc_message")).alias("_shape"))
        .join(shapes.unique(), on="_shape", how="semi")
        .unique("rank", keep="first", maintain_order=True)
        .drop("_shape")
    )


def _from_timeout_positions(job: Job) -> list[Finding]:
    """A rank that timed out inside collective #N while the others of its group timed out
    later, at higher numbers, joined #N (it was in it) and the others completed #N: so their
    #N was not the call it ran. Different sizes or ops at one number (2U1/Qwen-VL-Series-
    Finetune#17: rank 0 in an ALLREDUCE of 544,997,376 elements at #959 while ranks 1-5 had
    gone on to #963), not a rank that never joined. Only where the numbers compare (see
    `comparable_timeout_seqs`) and the ones behind are fewer than the rest."""
    per_rank = per_rank_timeouts(job.events).filter(pl.col("seq").is_not_null())
    if per_rank.is_empty():
        return []
    findings = []
    marks = comparable_timeout_seqs(per_rank)
    for (pg,), group in marks.sort("pg").group_by("pg", maintain_order=True):
        lowest = group.get_column("mark").min()
        behind = sorted(group.filter(pl.col("mark") == lowest).get_column("rank").to_list())
        ahead = group.filter(pl.col("mark") > lowest)
        if ahead.is_empty():
            continue
        rows = per_rank.filter(
            (pl.col("pg") == pg) & pl.col("rank").is_in(behind) & (pl.col("seq") == lowest)
        )
        first = rows.sort("file", "line").row(0, named=True)
        if str(first["op"] or "").upper() in ROOTED_OPS:
            # data flows from a root along a chain: ranks up the chain complete while one down
            # it never joined (haotian-liu/LLaVA#447: ranks 6 and 7 behind in a BROADCAST that
            # 0-3 completed, ranks 4 and 5 silent); completion proves nothing of the call
            continue
        if len(behind) * 2 >= group.height:
            in_group = per_rank.filter(pl.col("pg") == pg)
            findings.append(_apart_without_majority(job, in_group, sorted(group["rank"])))
            continue
        size = f" of {first['numel_in']:,} elements" if first["numel_in"] is not None else ""
        op = first["op"] or "a collective"
        who = rank_list(behind)
        later = rank_list(sorted(ahead.get_column("rank").to_list()))
        summary = (
            f"{who.capitalize()} timed out inside {op} #{lowest}{size}, which {later} had "
            f"completed (they timed out later, at #{ahead.get_column('mark').min()} or "
            f"beyond): {who} joined #{lowest} with another call than theirs (a different size "
            "or op at that number), so it could never complete."
        )
        evidence_rows = pl.concat(
            [rows, per_rank.filter((pl.col("pg") == pg) & pl.col("rank").is_in(ahead["rank"]))],
            how="diagonal_relaxed",
        )
        findings.append(
            placed_finding(
                job,
                evidence_rows,
                kind="collective_mismatch",
                severity="error",
                part="departure",
                summary=summary,
                fix=FIX.format(who=who),
                ranks=behind,
                op=first["op"],
                seq=lowest,
                confidence="medium",
                details={"pg": pg, "source": "timeout positions"},
            )
        )
    return findings


TIMEOUT_SIZES_FIX = (
    "Every rank must pass a tensor of the same size to each collective. Different sizes at one "
    "call mean the ranks' sets of tensors differ: parameters that get gradients on some ranks "
    "only (MoE experts no token reached, a branch some batches skip: use every parameter in "
    "every step, or `find_unused_parameters=True`), ZeRO-3 or FSDP gathering different modules "
    "on different ranks (data-dependent control flow in forward), or per-rank data of uneven "
    "length gathered without padding. Look at {who}'s call."
)


def _from_timeout_sizes(job: Job) -> list[Finding]:
    """Ranks that timed out at one sequence number in the same collective with tensors of
    different sizes (axolotl-ai-cloud/axolotl#967: ALLREDUCE #20879, rank 6 with 419,044,352
    elements, rank 7 with 406,069,248): none could complete a call whose partners exchange
    other amounts. The ranks whose size is not the majority's are the odd ones out; with two
    ranks, or no majority, nobody is blamed."""
    per_rank = per_rank_timeouts(job.events)
    mixed = mixed_ops_at_one_seq(per_rank)
    if not shape_mismatch(job, mixed) or _one_behind(per_rank, mixed):
        return []
    ranks = sorted(mixed.get_column("rank").unique().to_list())
    odd = odd_ones_out(mixed)
    op, seq = mixed.item(0, "op"), mixed.item(0, "seq")
    call = f"{op} #{seq}" if seq is not None else op
    if odd:
        blamed = (
            f" {rank_list(odd).capitalize()} {'is' if len(odd) == 1 else 'are'} the odd one "
            "out: the others agree on their size."
        )
    else:
        blamed = " Nothing tells which side's size is the wrong one, so neither is blamed."
    summary = (
        f"The ranks timed out in the same collective ({call}) with tensors of different sizes "
        f"({describe(mixed)}): they were not exchanging the same data, so none could complete."
        + blamed
    )
    return [
        placed_finding(
            job,
            mixed,
            kind="collective_mismatch",
            severity="error",
            part="departure",
            summary=summary,
            fix=TIMEOUT_SIZES_FIX.format(who=rank_list(odd or ranks)),
            ranks=ranks,
            culprit_ranks=odd,
            blames_nobody=not odd,
            op=op,
            seq=seq,
            confidence="medium" if odd else "low",
            details={"pg": mixed.item(0, "pg"), "source": "timeout sizes", "shapes_only": True},
        )
    ]


def _one_behind(per_rank: pl.DataFrame, mixed: pl.DataFrame) -> bool:
    """A rank of the group still in an earlier collective than the one the sizes differ in:
    the ranks had parted there first, which `_from_timeout_positions` tells (FlagOpen/
    FlagEmbedding#764: rank 1 in ALLGATHER #6206, ranks 0 and 2 in #6207 of two sizes)."""
    seq = mixed.item(0, "seq")
    if seq is None:
        return False
    group = per_rank.filter(pl.col("pg").eq_missing(mixed.item(0, "pg")))
    return bool(group.get_column("seq").drop_nulls().min() < seq)


def _apart_without_majority(job: Job, rows: pl.DataFrame, ranks: list[int]) -> Finding:
    """Ranks of one group that timed out at different numbers with no majority among them
    (two ranks, or an even split): the ones further on had completed the number the others
    were still in, so the ranks had not run the same calls in the same order, and nothing
    tells which side left the common sequence (open-mmlab/mmsegmentation#2137: rank 0 in
    _ALLGATHER_BASE #7559, rank 1 in #7561). Not a rank that lagged: a rank that never came
    would have timed out in nothing."""
    summary = (
        f"The ranks timed out at different numbers of one process group's collectives "
        f"({points_apart(rows)}): a watchdog reports the oldest collective its rank had not "
        "completed, so the ranks further on had completed numbers the others were still in. "
        "They had not run the same calls in the same order (a collective some ranks skipped "
        "or added, or a different size at one number). Nothing tells which side left the "
        "common path, so neither is blamed."
    )
    return placed_finding(
        job,
        rows,
        kind="collective_mismatch",
        severity="error",
        part="departure",
        summary=summary,
        fix=FIX.format(who=rank_list(ranks)),
        ranks=ranks,
        blames_nobody=True,
        confidence="low",
        details={
            "pg": rows.item(0, "pg"),
            "source": "timeout positions",
            "numbers": sorted(rows.get_column("seq").drop_nulls().unique().to_list()),
        },
    )


def _from_gloo_sizes(job: Job) -> list[Finding]:
    """gloo aborts a rank whose collective received more bytes than it posted (`92 vs 4.
    Received data size doesn't match expected size`): its peer sent from a different
    collective."""
    aborts = job.events.filter(pl.col("event") == "size_mismatch").sort("file", "line")
    if aborts.is_empty():
        return []
    ranks = sorted(aborts.get_column("rank").drop_nulls().unique().to_list())
    sizes = aborts.row(0, named=True)["values"] or []
    got = f" (received {sizes[0]} bytes, expected {sizes[1]})" if len(sizes) == 2 else ""
    who = rank_list(ranks) if ranks else "a rank"
    return [
        placed_finding(
            job,
            aborts,
            kind="collective_mismatch",
            severity="error",
            part="consequence",
            summary=(
                f"gloo aborted {who}: a peer's data did not fit the collective it had posted"
                f"{got}, so the ranks were in different collectives (or sizes) at that point."
            ),
            fix=FIX.format(who=who),
            ranks=ranks,
            confidence="medium",
        )
    ]


SHAPE_CHECK_FIX = (
    "Every rank must pass a tensor of the same shape to `{op}`. Print each rank's shape before "
    "that call: the rank whose shape differs took another path to it (a last, shorter batch, "
    "per-rank lengths, a tensor built from its own data), or the ranks were at different calls."
)


def _from_shape_check(job: Job) -> list[Finding]:
    """TORCH_DISTRIBUTED_DEBUG=DETAIL's check of the shapes the ranks pass to a collective
    (PyTorch's distributed docs: `Error when verifying shape tensors for collective ALLREDUCE on
    rank 0. ...`): the ranks passed different shapes; the rank that raised it noticed, which
    says nothing of which rank's shape was the odd one. Where DETAIL's fingerprints are in
    the logs too, `_from_detail` reads them."""
    checks = job.events.filter(pl.col("event") == "shape_check_failed").sort("file", "line")
    if (
        checks.is_empty()
        or not job.events.filter(pl.col("event") == "collective_mismatch").is_empty()
    ):
        return []
    ranks = sorted(checks.get_column("rank").drop_nulls().unique().to_list())
    op = checks.item(0, "op") or "a collective"
    raised = f" (raised on {rank_list(ranks)})" if ranks else ""
    summary = (
        f"TORCH_DISTRIBUTED_DEBUG=DETAIL's check found the ranks passing tensors of different "
        f"shapes to {op}{raised}: they were not making the same call with the same data. The "
        "check does not say which rank's shape was the odd one."
    )
    return [
        placed_finding(
            job,
            checks,
            kind="collective_mismatch",
            severity="error",
            part="departure",
            summary=summary,
            fix=SHAPE_CHECK_FIX.format(op=op),
            ranks=ranks,
            op=checks.item(0, "op"),
            blames_nobody=True,
            confidence="medium",
            details={"source": "DETAIL shape check", "shapes_only": True},
        )
    ]


def _from_detail(job: Job) -> list[Finding]:
    """Each report pairs the reporting rank with one other. Only the reporter's own
    fingerprint is reliable (the other side's is often garbled, `SequenceNumber=0OpType=...`),
    so ranks are described by what they reported of themselves; a rank named in every pair is
    the odd one out."""
    reports = job.events.filter(pl.col("event") == "collective_mismatch").sort("file", "line")
    if reports.is_empty():
        return []
    if _numbers_only(reports):
        return [_bookkeeping(job, reports)]
    pairs = reports.select("rank", "peer_rank").unique()
    pair_sets = [{row["rank"], row["peer_rank"]} - {None} for row in pairs.iter_rows(named=True)]
    ranks = sorted(set().union(*pair_sets))
    common = set.intersection(*pair_sets) if len(pair_sets) > 1 else set()
    # torch <= 1.11 names no other side: each reporter says only what it ran itself
    one_sided = reports.get_column("peer_rank").is_null().all()
    stepped = _out_of_step(reports)
    own = reports.filter(pl.col("rank").is_not_null()).unique(
        subset=["rank"], keep="first", maintain_order=True
    )
    described = {
        row["rank"]: _fingerprint(row["op"], row["seq"], row["shape"], row["dtype"])
        for row in own.iter_rows(named=True)
    }
    if len(described) > 1:
        by_print = _by_fingerprint(described)
        sides = "; ".join(f"{rank_list(r)} ran {p}" for p, r in sorted(by_print.items()))
        summary = f"DETAIL caught a desync: {sides}."
    elif one_sided:
        first = reports.row(0, named=True)
        mine = _fingerprint(first["op"], first["seq"], first["shape"], first["dtype"])
        summary = (
            f"DETAIL caught a desync: rank {first['rank']} ran {mine}, and another rank a "
            "different collective."
        )
    else:
        first = reports.row(0, named=True)
        mine = _fingerprint(first["op"], first["seq"], first["shape"], first["dtype"])
        theirs = _fingerprint(
            first["peer_op"], first["peer_seq"], first["peer_shape"], first["peer_dtype"]
        )
        summary = (
            f"DETAIL caught a desync: rank {first['rank']} ran {mine} while rank "
            f"{first['peer_rank']} ran {theirs} (as rank {first['rank']} reports it)."
        )
    against = _named_by_agreeing(reports, described) if not common and not one_sided else set()
    below, agreeing = _first_to_differ(job, reports) if not common and not one_sided else ((), ())
    if common:
        summary += f" Every report involves {rank_list(common)}: the odd one out."
    elif against:
        common = against
        summary += (
            f" They agree with each other, and the rank they report against, {rank_list(common)}, "
            "ran another collective: the odd one out."
        )
    elif below:
        common = set(below)
        summary += (
            " The wrapper names the first rank, in rank order, whose collective differs from "
            f"the reporter's: {rank_list(list(agreeing))} ran the same one, and "
            f"{rank_list(list(below))}, the only other rank, is the odd one out."
        )
    elif not one_sided:
        # one pair, or pairs with no rank in common: either side may be the one that left
        # (ZhikangNiu/encodec-pytorch#30: each rank drew its own random number to choose)
        if stepped:
            summary += (
                f" Both ran {stepped['op']}, {stepped['by']} collectives apart: rank "
                f"{stepped['ahead']} had issued {stepped['by']} more than rank "
                f"{stepped['behind']}, calls the other never made or skipped."
            )
        summary += " The reports do not say which side left the common path."
    elif one_sided:
        common = _odd_fingerprint(described)
        summary += (
            f" {rank_list(common).capitalize()} reported a collective no other reporting rank "
            "ran: the odd one out."
            if common
            else f" {ONE_SIDED_WHY if _by_design(reports) else CUT_WHY} The report does not say "
            "which rank left the path."
        )
    first = reports.row(0, named=True)
    return [
        placed_finding(
            job,
            reports,
            kind="collective_mismatch",
            severity="error",
            part="departure",
            summary=summary,
            fix=FIX.format(who=rank_list(sorted(common) or ranks)),
            ranks=ranks,
            op=first["op"],
            seq=first["seq"],
            culprit_ranks=sorted(common),
            blames_nobody=not common,
            confidence="medium" if (one_sided and not common) or against or below else "high",
            details={
                "fingerprints": {str(rank): printed for rank, printed in described.items()},
                **({"shapes_only": True} if _shapes_only(reports) else {}),
                **({"out_of_step": stepped} if stepped else {}),
            },
        )
    ]


def _out_of_step(reports: pl.DataFrame) -> dict[str, object]:
    """One pair of ranks in the same op at different numbers, a few collectives apart
    (sgl-project/sglang#13227: rank 7 at BROADCAST #18, rank 0 at BROADCAST #30): which rank
    was ahead, by how many, in what op; empty for any other report."""
    pairs = reports.unique(subset=["rank", "peer_rank"])
    if pairs.height != 1:
        return {}
    report = pairs.row(0, named=True)
    seq, peer_seq = report["seq"], report["peer_seq"]
    if seq is None or peer_seq is None or seq == peer_seq or report["peer_rank"] is None:
        return {}
    if report["op"] is None or report["op"] != report["peer_op"]:
        return {}
    ahead, behind = (
        (report["rank"], report["peer_rank"])
        if seq > peer_seq
        else (report["peer_rank"], report["rank"])
    )
    return {
        "op": report["op"],
        "ahead": ahead,
        "behind": behind,
        "by": abs(seq - peer_seq),
        "at": max(seq, peer_seq),
        "behind_at": min(seq, peer_seq),
    }


def _shapes_only(reports: pl.DataFrame) -> bool:
    """Whether every report names the same collective, at the same number, on both sides,
    and only the tensors' shapes differ (aurekaresearch/OpenDDE#23: `_ALLGATHER_BASE` #0 with
    `[359, 1, 1435, 16]` on rank 1 and `[359, 1, 1436, 16]` on rank 2)."""
    same = (
        pl.col("op").eq_missing(pl.col("peer_op"))
        & pl.col("seq").eq_missing(pl.col("peer_seq"))
        & pl.col("shape").is_not_null()
        & pl.col("peer_shape").is_not_null()
        & pl.col("shape").ne_missing(pl.col("peer_shape"))
    )
    return bool(reports.select(same.fill_null(False).all()).item())


# Ranks of one job stand a few collectives apart at most (every collective waits for all);
# sequence numbers further apart than this were not counted by the same bookkeeping.
MAX_SEQ_GAP = 1000
BOOKKEEPING_FIX = (
    "Not a desync of the ranks: the debug wrapper compared sequence numbers that were never "
    "in step (PyTorch before 2.1 started gloo's at a random number, pytorch/pytorch#101422). "
    "Upgrade PyTorch, or run without TORCH_DISTRIBUTED_DEBUG=DETAIL; the job itself ran the "
    "same collective on every rank."
)


def _numbers_only(reports: pl.DataFrame) -> bool:
    """Whether every report differs in its sequence number alone, by more than ranks of one
    job can be apart: the same op, shape and dtype on both sides."""
    same = (
        pl.col("op").eq_missing(pl.col("peer_op"))
        & pl.col("shape").eq_missing(pl.col("peer_shape"))
        & pl.col("dtype").eq_missing(pl.col("peer_dtype"))
        & pl.col("op").is_not_null()
    )
    apart = (pl.col("seq") - pl.col("peer_seq")).abs() > MAX_SEQ_GAP
    return bool(reports.select((same & apart).fill_null(False).all()).item())


def _bookkeeping(job: Job, reports: pl.DataFrame) -> Finding:
    first = reports.row(0, named=True)
    ranks = sorted({first["rank"], first["peer_rank"]} - {None})
    summary = (
        f"DETAIL reports a mismatch in sequence numbers only ({first['seq']} against "
        f"{first['peer_seq']}), with the same {first['op']} on both sides: ranks of one job "
        "cannot be that far apart, so the wrapper's own numbering is wrong, not the ranks' "
        "paths."
    )
    return placed_finding(
        job,
        reports,
        kind="collective_mismatch",
        severity="error",
        part="explanation",
        summary=summary,
        fix=BOOKKEEPING_FIX,
        ranks=ranks,
        blames_nobody=True,
        confidence="medium",
        details={"source": "sequence bookkeeping"},
    )


ONE_SIDED_WHY = "Each rank reports only its own collective (torch 1.11 and older)."
CUT_WHY = "The line is cut before the other side of the report."


def _named_by_agreeing(reports: pl.DataFrame, described: dict[int, str]) -> set[int]:
    """The one rank the reports name as the other side, when the reporters that name it ran
    the same collective as each other and it is none of them: two or more ranks agree, and the
    rank they report against ran something else (Lightning-AI/pytorch-lightning#19045: ranks 1
    and 2 both in BROADCAST #152517, one of them `..., but Rank 0 is running`, the rest cut)."""
    named = set(reports.get_column("peer_rank").drop_nulls().to_list())
    by_print = _by_fingerprint(described)
    if len(named) != 1 or len(by_print) != 1:
        return set()
    (agreeing,) = by_print.values()
    return named if len(agreeing) > 1 and not named & set(agreeing) else set()


def _first_to_differ(job: Job, reports: pl.DataFrame) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The rank the reports name, when it is the only rank left once those known to agree are
    counted. DETAIL's wrapper gathers every rank's fingerprint and names the first, in rank
    order, that differs from the reporter's own: the ranks below the one named ran what the
    reporter ran (deepspeedai/DeepSpeed#7568: rank 2 names rank 3, so ranks 0-2 agree, and in a
    world of four rank 3 is the odd one out). Returns the odd rank and the agreeing ones, or
    two empty tuples."""
    named = set(reports.get_column("peer_rank").drop_nulls().to_list())
    reporters = set(reports.get_column("rank").drop_nulls().to_list())
    if len(named) != 1 or not reporters or named & reporters:
        return (), ()
    (odd,) = named
    agreeing = reporters | set(range(odd))
    world = job.world_size.value if job.world_size is not None else None
    ranks = set(range(world)) if world else set(job.ranks_seen) | reporters | named
    if world is None and ranks != set(range(max(ranks) + 1)):
        return (), ()  # ranks missing from the logs may be on either side
    if len(agreeing) < 2 or not ranks - named <= agreeing:
        return (), ()
    return (odd,), tuple(sorted(agreeing))


def _by_design(reports: pl.DataFrame) -> bool:
    """Whether the reports are torch <= 1.11's, which name one side only, rather than later
    ones cut short in the excerpt."""
    return reports.get_column("text").str.contains("is running inconsistent collective").any()


def _by_fingerprint(described: dict[int, str]) -> dict[str, list[int]]:
    """The reporting ranks grouped by the fingerprint each reported of itself."""
    by_print: dict[str, list[int]] = {}
    for rank, printed in described.items():
        by_print.setdefault(printed, []).append(rank)
    return by_print


def _odd_fingerprint(described: dict[int, str]) -> set[int]:
    """The one rank whose own fingerprint differs from what every other reporter ran (three
    reporters at least: with two, either may have left)."""
    if len(described) < 3:
        return set()
    by_print = _by_fingerprint(described)
    lone = [ranks for ranks in by_print.values() if len(ranks) == 1]
    return set(lone[0]) if len(by_print) == 2 and len(lone) == 1 else set()


def _fingerprint(op: str | None, seq: int | None, shape: str | None, dtype: str | None) -> str:
    parts = [op or "an unknown collective"]
    if seq is not None:
        parts.append(f"#{seq}")
    if shape:
        parts.append(f"shape {shape}")
    if dtype:
        parts.append(dtype)
    return " ".join(parts)


def _from_collective_runs(job: Job) -> list[Finding]:
    """The first sequence number at which ranks' `Running collective` histories differ."""
    runs = job.events.filter(
        (pl.col("event") == "collective_run")
        & pl.col("rank").is_not_null()
        & pl.col("seq").is_not_null()
    )
    if runs.is_empty() or runs.get_column("rank").n_unique() < 2:
        return []
    runs = runs.unique(
        subset=["rank", "pg", "seq"], keep="first", maintain_order=True
    ).with_columns(
        pl.concat_str(
            [
                pl.col("op").fill_null("?"),
                pl.col("shape").fill_null(""),
                pl.col("dtype").fill_null(""),
            ],
            separator="|",
        ).alias("fingerprint")
    )
    differing = (
        runs.group_by("pg", "seq")
        .agg(pl.col("fingerprint").n_unique().alias("kinds"))
        .filter(pl.col("kinds") > 1)
        .sort("seq")
    )
    if differing.is_empty():
        return _last_runs_apart(job, runs)
    seq = differing.item(0, "seq")
    pg = differing.item(0, "pg")
    at_seq = runs.filter((pl.col("seq") == seq) & pl.col("pg").eq_missing(pg)).sort("rank")
    groups = at_seq.group_by("fingerprint").agg(pl.col("rank").sort(), pl.col("op").first())
    minority = groups.sort(pl.col("rank").list.len(), "fingerprint").row(0, named=True)
    culprits = minority["rank"]
    described = "; ".join(
        f"{rank_list(row['rank'])}: {row['fingerprint'].replace('|', ' ').strip()}"
        for row in groups.sort("fingerprint").iter_rows(named=True)
    )
    return [
        placed_finding(
            job,
            at_seq,
            kind="collective_mismatch",
            severity="error",
            part="departure",
            summary=(
                f"The ranks' collective histories part at sequence number {seq}: {described}. "
                f"{rank_list(culprits).capitalize()} is the odd one out."
            ),
            fix=FIX.format(who=rank_list(culprits)),
            ranks=sorted(at_seq.get_column("rank").to_list()),
            op=minority["op"],
            seq=seq,
            culprit_ranks=culprits,
            confidence="high"
            if groups.height == 2 and len(culprits) * 2 < at_seq.height
            else "medium",
        )
    ]


def _last_runs_apart(job: Job, runs: pl.DataFrame) -> list[Finding]:
    """Where no sequence number shows two fingerprints, the ranks' last `Running collective`
    lines may still part: a minority stopped at another collective than the rest
    (Lightning-AI/pytorch-lightning#19106: rank 1's last was #3, the size of an object to
    broadcast, the other three's #4, its bytes; its logged metric keys differed, so it issued
    another number of collectives). Only a strict minority of three or more ranks is blamed."""
    lasts = runs.group_by("rank", "pg").agg(pl.all().sort_by("seq").last())
    if lasts.get_column("pg").n_unique() > 1 or lasts.height < 3:
        return []
    groups = (
        lasts.group_by("seq", "fingerprint")
        .agg(pl.col("rank").sort(), pl.col("op", "shape", "dtype").first())
        .sort(pl.col("rank").list.len(), "seq", descending=[True, False])
    )
    if groups.height < 2:
        return []
    majority = groups.row(0, named=True)
    culprits = sorted(rank for ranks in groups.get_column("rank").slice(1) for rank in ranks)
    if len(culprits) * 2 >= lasts.height:
        return []

    def stop(row: dict) -> str:
        called = _fingerprint(row["op"], None, row["shape"], row["dtype"])
        return f"{rank_list(row['rank'])} stopped at #{row['seq']} ({called})"

    odd = groups.slice(1)
    first_odd = odd.row(0, named=True)
    evidence = lasts.filter(pl.col("rank").is_in(culprits)).vstack(
        lasts.filter(~pl.col("rank").is_in(culprits)).sort("rank").head(2)
    )
    return [
        placed_finding(
            job,
            evidence,
            kind="collective_mismatch",
            severity="error",
            part="departure",
            summary=(
                "The ranks' last collectives differ: "
                + "; ".join(stop(row) for row in (*odd.iter_rows(named=True), majority))
                + ". "
                f"{rank_list(culprits).capitalize()} issued another number of collectives "
                "than the others."
            ),
            fix=FIX.format(who=rank_list(culprits)),
            ranks=sorted(lasts.get_column("rank").to_list()),
            op=first_odd["op"],
            seq=first_odd["seq"],
            culprit_ranks=culprits,
            confidence="medium",
        )
    ]


def _from_nccl_calls(job: Job) -> list[Finding]:
    """The first operation NCCL's own trace of collective calls (`NCCL_DEBUG_SUBSYS=COLL`)
    shows the processes calling differently: one operation count on a communicator of one size
    with another op, count or type (NVIDIA/nccl#147: DDP's first broadcast, 25503912 float16
    elements from GPU 0 and 53 int64 from the others; the job hung). A process's communicators
    of one size are told apart by the order it first used them in, as every process creates
    them in one order; point-to-point calls count per peer and are left out."""
    calls = job.events.filter(
        (pl.col("event") == "nccl_coll")
        & pl.col("pid").is_not_null()
        & pl.col("seq").is_not_null()
        & ~pl.col("op").is_in(["SEND", "RECV"])
    )
    if calls.is_empty():
        return []
    calls = _with_process_ranks(job, calls).sort("file", "line")
    process = pl.concat_str(
        pl.col("host").fill_null(""), pl.col("pid").cast(pl.String), separator=":"
    )
    first_use = pl.col("line").min().over("_process", "comm")
    calls = (
        _numbered_where_unnumbered(calls.with_columns(process.alias("_process")))
        .unique(["_process", "comm", "seq"], keep="first", maintain_order=True)
        .with_columns(
            pl.struct(first_use.alias("_first"), pl.col("comm"))
            .rank("dense")
            .over("_process", "nranks")
            .alias("_comm_index"),
            pl.concat_str(
                [
                    pl.col("op"),
                    pl.col("numel_in").cast(pl.String),
                    pl.col("dtype").fill_null("?"),
                ],
                separator=" ",
            ).alias("_call"),
        )
    )
    differing = (
        calls.group_by("nranks", "_comm_index", "seq")
        .agg(pl.col("_call").n_unique().alias("_kinds"), pl.col("_process").n_unique())
        .filter((pl.col("_kinds") > 1) & (pl.col("_process") > 1))
        .sort("seq", "nranks", "_comm_index")
    )
    if differing.is_empty():
        return _stopped_first(job, calls)
    point = differing.row(0, named=True)
    at = calls.filter(
        (pl.col("nranks") == point["nranks"])
        & (pl.col("_comm_index") == point["_comm_index"])
        & (pl.col("seq") == point["seq"])
    )
    groups = (
        at.group_by("_call")
        .agg(pl.col("_process").n_unique().alias("_n"), pl.col("rank").drop_nulls().unique())
        .sort("_n", "_call")
    )
    odd, majority = groups.row(0, named=True), groups.row(-1, named=True)
    blames_nobody = odd["_n"] == majority["_n"] or not odd["rank"]
    culprits = sorted(odd["rank"]) if not blames_nobody else []

    def who(row: dict) -> str:
        ranks = sorted(row["rank"])
        return rank_list(ranks) if len(ranks) == row["_n"] else f"{row['_n']} process(es)"

    described = "; ".join(
        f"{who(row)}: {row['_call']}" for row in groups.sort("_call").iter_rows(named=True)
    )
    summary = (
        f"NCCL's trace of collective calls parts at operation {point['seq']} of the "
        f"{point['nranks']}-rank communicator: {described}."
        + (f" {rank_list(culprits).capitalize()} is the odd one out." if culprits else "")
    )
    return [
        placed_finding(
            job,
            at,
            kind="collective_mismatch",
            severity="error",
            part="departure",
            summary=summary,
            fix=FIX.format(who=rank_list(culprits) if culprits else "the differing ranks"),
            ranks=sorted(at.get_column("rank").drop_nulls().unique().to_list()),
            op=odd["_call"].split(" ")[0],
            seq=point["seq"],
            culprit_ranks=culprits,
            blames_nobody=blames_nobody,
            confidence="high" if culprits and odd["_n"] * 2 < at.height else "medium",
            details={"source": "nccl_coll"},
        )
    ]


def _numbered_where_unnumbered(calls: pl.DataFrame) -> pl.DataFrame:
    """Calls a process's trace prints all with `opCount 0` (NCCL 2.10's, NVIDIA/nccl#857)
    numbered by their order on each of its communicators, as the library counts them."""
    unnumbered = (pl.col("seq").max().over("_process", "comm") == 0) & (
        pl.len().over("_process", "comm") > 1
    )
    order = pl.int_range(pl.len()).over("_process", "comm")
    return calls.with_columns(pl.when(unnumbered).then(order).otherwise("seq").alias("seq"))


# How far behind every other process of its communicator a process's calls must stop, in calls
# and as a share of theirs, to be the one that stopped issuing them (a trace cut while all ran
# differs by the few calls each had in flight)
STOPPED_BEHIND_CALLS = 20
STOPPED_BEHIND_SHARE = 0.1


def _stopped_first(job: Job, calls: pl.DataFrame) -> list[Finding]:
    """A trace of calls that all agree but ends with no failure anywhere, where one process's
    calls on a communicator stop far below every other's: it stopped issuing collectives and
    the others waited (NVIDIA/nccl#857: rank 1 at its 252nd call, ranks 0 and 2 at 339 and
    rank 3 at 321 when the hung job was stopped; nothing printed an error)."""
    if not job.nothing_failed():
        return []
    counts = (
        calls.group_by("nranks", "_comm_index", "_process")
        .agg(pl.len().alias("_calls"), pl.col("rank").drop_nulls().first())
        .with_columns(pl.col("_process").n_unique().over("nranks", "_comm_index").alias("_seen"))
        .filter(pl.col("_seen") == pl.col("nranks"))
        .sort("_calls")
    )
    for _, group in counts.group_by("nranks", "_comm_index", maintain_order=True):
        if group.height < 2:
            continue
        low, next_low = group.row(0, named=True), group.row(1, named=True)
        gap = next_low["_calls"] - low["_calls"]
        if low["rank"] is None or gap < max(
            STOPPED_BEHIND_CALLS, STOPPED_BEHIND_SHARE * next_low["_calls"]
        ):
            continue
        rank, last = int(low["rank"]), int(low["_calls"])
        others = group.slice(1)
        went_on = sorted(others.get_column("rank").drop_nulls().to_list())
        reached = others.get_column("_calls")
        summary = (
            f"Rank {rank} stopped issuing collectives after call #{last} on the "
            f"{low['nranks']}-rank communicator, while {rank_list(went_on)} went on to calls "
            f"#{reached.min()}-#{reached.max()} in NCCL's trace (every call they share agrees), "
            "and nothing failed: it left the path the others kept, and they waited."
        )
        own = calls.filter(pl.col("_process") == low["_process"]).tail(1)
        return [
            placed_finding(
                job,
                pl.concat([own, calls.filter(pl.col("_process") != low["_process"]).tail(1)]),
                kind="stage_divergence",
                severity="error",
                part="departure",
                summary=summary,
                fix=STOPPED_FIX.format(who=f"rank {rank}"),
                ranks=[rank],
                culprit_ranks=[rank],
                seq=last + 1,
                confidence="medium",
                details={"departure": "stopped_calling", "other_ranks": went_on, "calls": last},
            )
        ]
    return []


STOPPED_FIX = (
    "Find what {who} did after its last collective while the others went on: its own last "
    "lines (a DataLoader worker that hung, I/O, a lock, a CPU-side wait) or a branch that "
    "skipped collectives. Dump its stack while it hangs (`py-spy dump --pid <pid>`) to see "
    "where it stands."
)


def _with_process_ranks(job: Job, calls: pl.DataFrame) -> pl.DataFrame:
    """The calls' ranks, else each process's GPU number where the trace shows one node, one
    GPU per process and no number past the communicator's size (the launcher's one process per
    GPU: NVIDIA/nccl#147's eight processes on learnfair062)."""
    if calls.get_column("rank").null_count() == 0 or calls.get_column("host").n_unique() > 1:
        return calls
    devices = calls.group_by("pid").agg(pl.col("cuda_dev").drop_nulls().unique())
    one_each = devices.get_column("cuda_dev").list.len().eq(1).all()
    numbers = devices.get_column("cuda_dev").explode()
    if (
        not one_each
        or numbers.n_unique() != devices.height
        or numbers.max() >= calls.get_column("nranks").max()
    ):
        return calls
    return calls.with_columns(pl.coalesce("rank", "cuda_dev").alias("rank"))


def _from_nccl_warning(job: Job) -> list[Finding]:
    warnings = job.events.filter(pl.col("event") == "nccl_mismatch")
    if warnings.is_empty():
        return []
    named = sorted(warnings.get_column("comm_rank").drop_nulls().unique().to_list())
    return [
        placed_finding(
            job,
            warnings,
            kind="collective_mismatch",
            severity="error",
            part="departure",
            summary=(
                f"NCCL detected mismatched collectives at and around {rank_list(named)}: the "
                "ranks called different collectives (or sizes) at the same point."
            ),
            fix=FIX.format(who=rank_list(named)),
            ranks=named,
            confidence="medium",
        )
    ]


RULE = Rule(kind="collective_mismatch", check=check, specificity=5)
