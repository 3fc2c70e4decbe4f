"""Ranks whose DataLoaders yield different numbers of batches.

The short rank leaves the epoch early and enters whatever collective follows the loop while
the other ranks still wait in the gradient all_reduce of their extra step: a hang at the
epoch end. Evidence: the `loader sizes: [...]` print (an all_gather of len(loader)), per-rank
`loader_len=` prints, or, failing both, the number of steps each rank ran in an epoch.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from logforensics.findings import Finding, evidence_from
from logforensics.job import Job
from logforensics.registry import Rule
from logforensics.text import rank_list

FIX = (
    "Give every rank the same number of batches: shard with "
    "`DistributedSampler(dataset, drop_last=True)` (or pad the shards to equal length) and "
    "build the loader with `drop_last=True`; or, if uneven inputs are intended, wrap the loop "
    "in `torch.distributed.algorithms.join.Join([model])`."
)


@dataclass(frozen=True, slots=True)
class Lengths:
    by_rank: dict[int, int]
    evidence: pl.DataFrame  # file, line, text, rank
    source: str
    epoch: int | None


def check(job: Job) -> list[Finding]:
    lengths = (
        _from_all_ranks_print(job)
        or _from_per_rank_prints(job)
        or _from_step_counts(job)
        or _from_progress_bars(job)
    )
    if lengths is None:
        return []
    longest = max(lengths.by_rank.values())
    short = sorted(rank for rank, length in lengths.by_rank.items() if length < longest)
    if not short:
        return []
    if min(lengths.by_rank) < 0:
        return [_unlabelled(lengths)]
    long_ranks = sorted(set(lengths.by_rank) - set(short))
    sizes = ", ".join(f"{rank_list([rank])} has {lengths.by_rank[rank]}" for rank in short[:8])
    epoch_words = f"epoch {lengths.epoch}" if lengths.epoch is not None else "the first epoch"
    step, stage, order = _where_short_ranks_stopped(job, short)
    where = f" at step {step}" if step is not None else ""
    summary = (
        f"DataLoader lengths differ ({lengths.source}): {sizes} batches while "
        f"{rank_list(long_ranks)} have {longest}. At the end of {epoch_words} the short "
        f"{'rank runs' if len(short) == 1 else 'ranks run'} out of batches first{where} and "
        f"{'leaves' if len(short) == 1 else 'leave'} the loop while the others still wait in "
        f"their extra step's collectives."
    )
    evidence, total = evidence_from(lengths.evidence)
    return [
        Finding(
            kind="loader_size_mismatch",
            severity="error",
            part="explanation",
            summary=summary,
            fix=FIX,
            ranks=short,
            step=step,
            stage=stage,
            epoch=lengths.epoch,
            evidence=evidence,
            evidence_total=total,
            confidence="high" if lengths.source != "steps per epoch" else "medium",
            order=order,
            details={"batches_by_rank": {str(k): v for k, v in sorted(lengths.by_rank.items())}},
        )
    ]


def _unlabelled(lengths: Lengths) -> Finding:
    """Lengths known per process but not per rank (negative keys): name no rank."""
    totals = sorted(lengths.by_rank.values())
    evidence, total = evidence_from(lengths.evidence)
    return Finding(
        kind="loader_size_mismatch",
        severity="error",
        part="explanation",
        summary=(
            f"The processes' epoch lengths differ ({lengths.source}: "
            f"{', '.join(map(str, totals))} batches): the ranks cannot all leave the epoch loop at "
            "the same collective. The bars do not say which rank is which."
        ),
        fix=FIX,
        ranks=[],
        evidence=evidence,
        evidence_total=total,
        confidence="medium",
        details={"batches_per_process": totals},
    )


def _from_all_ranks_print(job: Job) -> Lengths | None:
    prints = job.events.filter(pl.col("event") == "loader_sizes")
    for row in prints.iter_rows(named=True):
        values = row["values"] or []
        if len(set(values)) > 1:
            return Lengths(
                by_rank=dict(enumerate(values)),
                evidence=prints.filter(pl.col("values") == pl.lit(values)).select(
                    "file", "line", "text", "rank"
                ),
                source="`loader sizes` print",
                epoch=row["epoch"],
            )
    return None


def _from_per_rank_prints(job: Job) -> Lengths | None:
    prints = job.events.filter((pl.col("event") == "loader_len") & pl.col("rank").is_not_null())
    if prints.is_empty():
        return None
    latest = prints.group_by("rank").agg(pl.all().last())
    by_rank = dict(zip(latest["rank"].to_list(), latest["value"].to_list(), strict=True))
    return Lengths(
        by_rank=by_rank,
        evidence=latest.sort("rank").select("file", "line", "text", "rank"),
        source="per-rank `loader_len` prints",
        epoch=None,
    )


def _from_step_counts(job: Job) -> Lengths | None:
    """Steps run per epoch, for an epoch some rank finished cleanly with fewer steps."""
    progress = job.progress
    if progress is None or len(progress.ranks) < 2:
        return None
    marks = progress.marks.filter(pl.col("epoch") >= 0)
    if marks.is_empty():
        return None
    last_stage = progress.stage_order[-1]
    for epoch in marks.get_column("epoch").unique().sort().to_list():
        in_epoch = marks.filter(pl.col("epoch") == epoch)
        counts = in_epoch.group_by("rank").agg(
            pl.col("step").n_unique().alias("steps"),
            (pl.col("stage").sort_by("pos").last() == last_stage).alias("finished_cleanly"),
            pl.all().sort_by("pos").last(),
        )
        most = counts.get_column("steps").max()
        short = counts.filter((pl.col("steps") < most) & pl.col("finished_cleanly"))
        if short.height and short.height < counts.height:
            return Lengths(
                by_rank=dict(zip(counts["rank"].to_list(), counts["steps"].to_list(), strict=True)),
                evidence=short.sort("rank").select("file", "line", "text", "rank"),
                source="steps per epoch",
                epoch=epoch,
            )
    return None


# Bars of one loader on different ranks differ by a few batches; bars of different loaders
# (train and eval) differ far more. Totals within this ratio are taken as one loader.
SAME_LOADER_RATIO = 1.01


def _from_progress_bars(job: Job) -> Lengths | None:
    """Per-process tqdm totals that differ slightly: one loader, uneven lengths. The bars are
    seldom labelled with a rank, so the lengths are keyed by bar, not by rank."""
    bars = job.events.filter(pl.col("event") == "progress_bar").with_columns(
        pl.col("values").list.get(1).alias("total")
    )
    totals = sorted(set(bars.get_column("total").drop_nulls().to_list()))
    for total in reversed(totals):
        family = [t for t in totals if total / SAME_LOADER_RATIO <= t <= total and t > 1]
        if len(family) < 2:
            continue
        rows = bars.filter(pl.col("total").is_in(family))
        labelled = rows.filter(pl.col("rank").is_not_null())
        if labelled.get_column("rank").n_unique() == rows.height:
            by_rank = dict(
                zip(labelled["rank"].to_list(), labelled["total"].to_list(), strict=True)
            )
        else:
            by_rank = {
                -(index + 1): t for index, t in enumerate(rows.get_column("total").to_list())
            }
        return Lengths(
            by_rank=by_rank,
            evidence=rows.select("file", "line", "text", "rank"),
            source="per-process progress-bar totals",
            epoch=None,
        )
    return None


def _where_short_ranks_stopped(
    job: Job, short: list[int]
) -> tuple[int | None, str | None, float | None]:
    """The step the short ranks never reached, from their stage-mark departure."""
    progress = job.progress
    if progress is None:
        return None, None, None
    for departure in progress.departures:
        if departure.rank in short and departure.kind == "stopped":
            key = progress.key_of(departure.expected_key)
            return key["step"], key["stage"], float(departure.expected_key)
    return None, None, None


RULE = Rule(kind="loader_size_mismatch", check=check, specificity=20)
