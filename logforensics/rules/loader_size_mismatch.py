"""Ranks whose DataLoaders yield different numbers of batches.

At the end of an epoch the ranks with fewer batches leave the loop and enter whatever
collective follows it, while the others still run their extra step and wait in its gradient
all_reduce: a hang at the epoch end. Nobody skipped anything: the data was uneven. The ranks
named are those whose count differs from the majority's (on a tie, those with fewer batches),
so in `loader sizes: [6, 6, 7]` it is rank 2, which ran an extra batch.

Lengths come from the `loader sizes: [...]` print (an all_gather of len(loader)), per-rank
`loader_len=` prints, the steps each rank ran in an epoch it ended (`rank=N epoch=E end`
lines, or its marks reaching the end of a step and the next epoch), or per-process progress
bars.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import polars as pl

from logforensics.findings import Confidence, Evidence, Finding, evidence_from, exception_text
from logforensics.job import Job
from logforensics.plausible import MAX_LISTED_RANKS
from logforensics.registry import Rule
from logforensics.setup_stall import logs_end_there
from logforensics.text import rank_list
from parsers.progress_bars import bar_name, last_snapshot

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
    at_least: frozenset[int] = frozenset()  # ranks still running: their count is a lower bound
    # what showed the counts of processes no line names (negative keys): progress bars, prints
    told_by: str = "bars"


def check(job: Job) -> list[Finding]:
    lengths = (
        _from_all_ranks_print(job)
        or _from_per_rank_prints(job)
        or _from_unranked_prints(job)
        or _from_step_counts(job)
        or _from_progress_bars(job)
    )
    if lengths is None:
        return (
            _from_data_ends(job)
            or _from_join(job)
            or _from_uneven_statements(job)
            or _from_early_exits(job)
        )
    if len(set(lengths.by_rank.values())) < 2:
        return []
    if min(lengths.by_rank) < 0:
        return [_unlabelled(lengths)]
    odd = odd_ranks(lengths.by_rank)
    rest = sorted(set(lengths.by_rank) - set(odd))
    longer = lengths.by_rank[odd[0]] > lengths.by_rank[rest[0]]
    step = _first_uneven_step(job, lengths)
    summary = _summary(lengths, odd, rest, longer, step)
    evidence, total = evidence_from(lengths.evidence)
    return [
        Finding(
            kind="loader_size_mismatch",
            severity="error",
            part="explanation",
            summary=summary,
            fix=FIX,
            ranks=odd,
            step=step,
            epoch=lengths.epoch,
            evidence=evidence,
            evidence_total=total,
            confidence="high" if "print" in lengths.source else "medium",
            scope="job",
            retells_departure=_retold(odd, rest, longer, step),
            details={
                "batches_by_rank": {str(k): v for k, v in sorted(lengths.by_rank.items())},
                "source": lengths.source,
                "more_batches": longer,
            },
        )
    ]


def _from_data_ends(job: Job) -> list[Finding]:
    """Some ranks of a known world said their data ran out (`Reaches end of dataloader.`) and
    the others never did, nor wrote anything after: their loaders were longer, and the ranks
    that ran out went on to collectives the others do not join yet (lifeiteng/vall-e#86: ranks
    4-7 of 8). No counts: the ranks that ran out first are named."""
    ends = job.events.filter((pl.col("event") == "data_end") & pl.col("rank").is_not_null())
    world = job.world_size.value if job.world_size is not None else None
    if ends.is_empty() or world is None:
        return []
    early = sorted(ends.get_column("rank").unique().to_list())
    others = sorted(set(range(world)) - set(early)) if world <= MAX_LISTED_RANKS else []
    if not others or len(early) >= world or _others_went_on(job, ends, others):
        return []
    evidence, total = evidence_from(
        ends.unique(subset=["rank"], keep="first")
        .sort("rank")
        .select("file", "line", "text", "rank")
    )
    their = "its" if len(early) == 1 else "their"
    summary = (
        f"{rank_list(early).capitalize()} reached the end of {their} data while "
        f"{rank_list(others)} of the {world} never did: the DataLoaders yield different "
        f"numbers of batches, and {rank_list(early)} went on to collectives the others, still "
        "training, do not join."
    )
    return [
        _stated(
            summary,
            (evidence, total),
            ranks=early,
            confidence="medium",
            details={"source": "end-of-data lines", "ranks_still_running": others},
        )
    ]


def _from_early_exits(job: Job) -> list[Finding]:
    """Some ranks tore their NCCL communicators down (`... - Abort COMPLETE`, as a process
    exits) while the training bar stood short of its total, nothing failed, and the logs end
    there: those ranks left the loop while another still had a step to run, and that one waits
    for them in its collective (EleutherAI/sparsify#68: ranks 1-3 gone at 13907/13908)."""
    if not job.nothing_failed():
        return []
    ended = job.events.filter((pl.col("event") == "nccl_abort") & pl.col("rank").is_not_null())
    bars = job.events.filter(pl.col("event") == "progress_bar")
    if ended.is_empty() or bars.is_empty() or not logs_end_there(job, ended):
        return []
    worlds = ended.get_column("nranks").drop_nulls().unique()
    if worlds.len() != 1:
        return []
    world = int(worlds.item())
    gone = sorted(ended.get_column("rank").unique().to_list())
    left = sorted(set(range(world)) - set(gone)) if world <= MAX_LISTED_RANKS else []
    if not left or not gone:
        return []
    # the bar's last line: before the teardown in a console both write to, else where its own
    # file ends
    first_ends = ended.group_by("file").agg(pl.col("line").min().alias("_first_end"))
    last_bar = (
        bars.join(first_ends, on="file", how="left")
        .filter(pl.col("_first_end").is_null() | (pl.col("line") < pl.col("_first_end")))
        .sort("file", "line")
        .tail(1)
    )
    if last_bar.is_empty():
        return []
    if last_bar.item(0, "_first_end") is None and not logs_end_there(job, last_bar):
        return []
    done, total = last_bar.item(0, "values")[:2]
    if done is None or total is None or done >= total:
        return []
    evidence, count = evidence_from(
        pl.concat([last_bar.drop("_first_end"), ended.sort("rank").head(3)]).select(
            "file", "line", "text", "rank"
        )
    )
    summary = (
        f"{rank_list(gone).capitalize()} tore down {'its' if len(gone) == 1 else 'their'} NCCL "
        f"communicator{'s' if len(gone) > 1 else ''}, as a process does when it exits, while "
        f"the training bar stood at {done:,} of {total:,}, and the logs end there: "
        f"{'it' if len(gone) == 1 else 'they'} left the loop while {rank_list(left)} still had "
        f"a step to run, and {'it waits' if len(left) == 1 else 'they wait'} in that step's "
        "collective for ranks that are gone. The DataLoaders yield different numbers of batches."
    )
    return [
        _stated(
            summary,
            (evidence, count),
            ranks=gone,
            confidence="low",
            details={"source": "early exits", "ranks_still_running": left},
        )
    ]


# DDP's Join with throw_on_early_termination=True (torch/distributed/algorithms/join.py): the
# rank that ran out of batches, and what every other rank raises when it learns of it
JOIN_EXHAUSTED = r"Rank (\d+) exhausted all inputs"
JOIN_TOLD = "Detected at least one rank that exhausted inputs"
JOIN_SOURCE = "Join's exception"  # the finding's `source` detail, for the headline
JOIN_FIX = (
    "Give every rank the same number of batches: shard with `DistributedSampler(dataset, "
    "drop_last=True)` (or pad the shards to equal length) and build the loader with "
    "`drop_last=True`. If uneven inputs are intended, let Join stand in for the missing "
    "collectives instead of raising: `Join([model])` without `throw_on_early_termination`."
)


def _from_join(job: Job) -> list[Finding]:
    """DDP's Join raised on every rank at the first step a rank had no batch for: that rank
    says it exhausted its inputs, the others that one did (sample_logs/join_early_termination,
    a real run here: rank 3's 11 batches against the others' 12)."""
    raised = job.events.filter(pl.col("event") == "exception")
    said = exception_text()
    exhausted = raised.filter(said.str.contains(JOIN_EXHAUSTED)).with_columns(
        pl.coalesce(said.str.extract(JOIN_EXHAUSTED, 1).cast(pl.Int32, strict=False), "rank").alias(
            "rank"
        )
    )
    if exhausted.is_empty():
        return []
    told = raised.filter(said.str.contains(JOIN_TOLD, literal=True))
    short = sorted(exhausted.get_column("rank").drop_nulls().unique().to_list())
    longer = sorted(set(told.get_column("rank").drop_nulls().to_list()) - set(short))
    who = rank_list(short).capitalize() if short else "A rank"
    its = "its" if len(short) <= 1 else "their"
    others = f"; {rank_list(longer)} still had batches and were told so" if longer else ""
    shown = pl.concat([exhausted.sort("file", "line"), told.sort("file", "line").head(1)])
    evidence, total = evidence_from(  # the exception's own line, not its traceback's first
        shown.select(
            "file",
            pl.coalesce("end_line", "line").alias("line"),
            pl.coalesce("end_text", "text").alias("text"),
            "rank",
        )
    )
    summary = (
        f"{who} ran out of batches before the others: DDP's Join raised `Rank N exhausted all "
        f"inputs` at the first step {its} DataLoader had no batch for{others}. The DataLoaders "
        "yield different numbers of batches; `throw_on_early_termination` turned the hang "
        "into an error on every rank."
    )
    return [
        _stated(
            summary,
            (evidence, total),
            ranks=short,
            confidence="high",
            details={"source": JOIN_SOURCE, "ranks_with_batches_left": longer},
            fix=JOIN_FIX,
        )
    ]


def _from_uneven_statements(job: Job) -> list[Finding]:
    """The training loop's own words that the ranks' data were uneven (wenet's and
    CosyVoice's per-step join: `Detected uneven workload distribution`), said by ranks that
    still had batches when another ran out and left the barrier they meet at each step: the
    lengths differ; the lines do not say whose ran out (FunAudioLLM/CosyVoice#1727)."""
    said = job.events.filter(pl.col("event") == "uneven_data").sort("file", "line")
    if said.is_empty():
        return []
    ranks = sorted(said.get_column("rank").drop_nulls().unique().to_list())
    who = rank_list(ranks).capitalize() if ranks else "The ranks"
    they = "it" if len(ranks) == 1 else "they"
    # the barrier's coordinator names who never arrived: the rank whose batches ran out
    failed = job.events.filter(pl.col("event") == "barrier_failed").sort("file", "line")
    absent = sorted(
        set(failed.get_column("values").explode().drop_nulls().cast(pl.Int64).to_list())
        - set(ranks)
    )
    shown = pl.concat([failed, said], how="diagonal_relaxed").sort("file", "line")
    evidence, total = evidence_from(shown.select("file", "line", "text", "rank"))
    summary = (
        f"{who} reported an uneven workload (`Detected uneven workload distribution`): another "
        f"rank ran out of batches and left the barrier {they} met it at every step. "
    )
    summary += (
        f"The monitored barrier names {rank_list(absent)} as the one that never arrived: "
        f"{'its' if len(absent) == 1 else 'their'} batches ran out first."
        if absent
        else "The DataLoaders yield different numbers of batches; these lines do not say whose "
        "ran out."
    )
    return [
        _stated(
            summary,
            (evidence, total),
            ranks=absent or ranks,
            confidence="medium",
            details={"source": "uneven-workload lines"},
            blames_nobody=not absent,
        )
    ]


def _stated(
    summary: str,
    cited: tuple[list[Evidence], int],
    *,
    ranks: list[int],
    confidence: Confidence,
    details: dict[str, object],
    fix: str = FIX,
    blames_nobody: bool = False,
) -> Finding:
    """A finding read from lines that say the data ran out or were uneven, not from counts.
    It carries no time: the lines say so after the fact (Join as the others reach the next
    step, wenet once its barrier timed out), and the data ran out before them."""
    evidence, total = cited
    return Finding(
        kind="loader_size_mismatch",
        severity="error",
        part="explanation",
        summary=summary,
        fix=fix,
        ranks=ranks,
        blames_nobody=blames_nobody,
        evidence=evidence,
        evidence_total=total,
        confidence=confidence,
        scope="job",
        details=details,
    )


def _others_went_on(job: Job, ends: pl.DataFrame, others: list[int]) -> bool:
    """Whether any of `others` wrote a line after the first end of data: then they were not
    stuck in their extra batches."""
    first = ends.sort("file", "line").row(0, named=True)
    later = job.events.filter(
        pl.col("rank").is_in(others)
        & ((pl.col("file") != first["file"]) | (pl.col("line") > first["line"]))
    )
    return not later.is_empty()


def odd_ranks(by_rank: dict[int, int]) -> list[int]:
    """The ranks whose count differs from the one most ranks share; with no single most
    common count, the ranks with fewer batches than the largest count."""
    counts = Counter(by_rank.values()).most_common()
    if len(counts) > 1 and counts[0][1] > counts[1][1]:
        majority = counts[0][0]
        return sorted(rank for rank, length in by_rank.items() if length != majority)
    longest = max(by_rank.values())
    return sorted(rank for rank, length in by_rank.items() if length < longest)


def _summary(
    lengths: Lengths, odd: list[int], rest: list[int], longer: bool, step: int | None
) -> str:
    def count(rank: int) -> str:
        at_least = "at least " if rank in lengths.at_least else ""
        return f"{at_least}{lengths.by_rank[rank]}"

    one = len(odd) == 1
    sizes = ", ".join(f"{rank_list([rank])} has {count(rank)}" for rank in odd[:8])
    epoch = f"epoch {lengths.epoch}" if lengths.epoch is not None else "the epoch"
    where = f" (step {step})" if step is not None else ""
    unit = "batch" if len(odd) == 1 and lengths.by_rank[odd[0]] == 1 else "batches"
    summary = (
        f"DataLoader lengths differ ({lengths.source}): {sizes} {unit} while "
        f"{rank_list(rest)} {'has' if len(rest) == 1 else 'have'} {count(rest[0])}. "
    )
    if longer:
        summary += (
            f"At the end of {epoch} {rank_list(odd)} ran {'an extra batch' if one else 'extra '}"
            f"{'' if one else 'batches'}{where} while {rank_list(rest)}, out of batches, had "
            "left the loop and waited in the collective after it."
        )
    else:
        summary += (
            f"At the end of {epoch} {rank_list(odd)} ran out of batches first{where} and "
            f"{'leaves' if one else 'leave'} the loop while {rank_list(rest)} still "
            f"{'waits in its' if len(rest) == 1 else 'wait in their'} extra step's collectives."
        )
    return summary


def _retold(odd: list[int], rest: list[int], longer: bool, step: int | None) -> str:
    """The departure at the epoch end as what it was: an extra batch, or one too few."""
    where = f" (step {step})" if step is not None else ""
    if longer:
        return (
            f"{rank_list(odd).capitalize()} ran an extra batch{where} that {rank_list(rest)} "
            "did not have: they had left the epoch loop. Nothing was skipped: the data was "
            "uneven."
        )
    return (
        f"{rank_list(odd).capitalize()} ran out of batches{where} and left the epoch loop while "
        f"{rank_list(rest)} ran one more step. Nothing was skipped: the data was uneven."
    )


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
            f"the same collective. The {lengths.told_by} do not say which rank is which."
        ),
        fix=FIX,
        ranks=[],
        evidence=evidence,
        evidence_total=total,
        confidence="medium",
        scope="job",
        details={"batches_per_process": totals},
    )


def _from_all_ranks_print(job: Job) -> Lengths | None:
    prints = job.events.filter(pl.col("event") == "loader_sizes")
    for row in prints.iter_rows(named=True):
        values = row["values"] or []
        if None in values:
            continue  # a number too large to be a count (it did not fit an Int64): no count
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
    # one count per rank: the one most ranks print (`num_steps_per_rollout` over
    # `num_batches` when both are there), the last print of it
    key = pl.col("names").list.first()
    name = prints.select(key.drop_nulls().mode().sort().first()).item() or "loader_len"
    latest = prints.filter(key.eq_missing(name)).group_by("rank").agg(pl.all().last())
    latest = latest.filter(pl.col("value").is_not_null())
    by_rank = dict(zip(latest["rank"].to_list(), latest["value"].to_list(), strict=True))
    return Lengths(
        by_rank=by_rank,
        evidence=latest.sort("rank").select("file", "line", "text", "rank"),
        source=f"per-rank `{name}` prints",
        epoch=None,
    )


def _from_unranked_prints(job: Job) -> Lengths | None:
    """Counts printed by several processes at once into one console, none of them saying its
    rank (ltgoslo/gpt-bert#4: eight `... the number of steps are: 72` lines, one of them 506):
    one block of consecutive lines of one count's name, a process a line. Prints apart from
    each other may be one process's, epoch after epoch: no lengths."""
    prints = job.events.filter((pl.col("event") == "loader_len") & pl.col("rank").is_null())
    prints = prints.filter(pl.col("value").is_not_null()).sort("file", "line")
    if prints.height < 2:
        return None
    block = pl.col("line").cast(pl.Int64).diff().over("file").fill_null(1) != 1
    name = pl.col("names").list.first()
    blocks = prints.with_columns(
        (block | name.ne_missing(name.shift(1)) | (pl.col("file") != pl.col("file").shift(1)))
        .fill_null(False)
        .cum_sum()
        .alias("_block")
    )
    for _, rows in blocks.group_by("_block", maintain_order=True):
        values = rows.get_column("value").to_list()
        if len(values) >= 2 and len(set(values)) > 1:
            shown = rows.get_column("names").list.first().item(0) or "count"
            return Lengths(
                by_rank={-(index + 1): value for index, value in enumerate(values)},
                evidence=rows.select("file", "line", "text", "rank"),
                source=f"per-process `{shown}` prints",
                epoch=None,
                told_by="prints",
            )
    return None


def _from_step_counts(job: Job) -> Lengths | None:
    """Steps run per epoch, for an epoch some rank ended with fewer steps than another ran.

    A rank ended an epoch when it printed its `epoch=E end` line, went on to a later epoch,
    or its last mark of the epoch is the loop's last stage; its count is then exact. A rank
    still inside the epoch has run at least its count."""
    progress = job.progress
    if progress is None or len(progress.ranks) < 2:
        return None
    marks = progress.marks.filter(pl.col("epoch") >= 0)
    if marks.is_empty():
        return None
    ends = job.events.filter((pl.col("event") == "epoch_end") & pl.col("rank").is_not_null())
    last_stage = progress.stage_order[-1]
    per_epoch = marks.group_by("epoch", "rank").agg(
        pl.col("step").n_unique().alias("steps"),
        (pl.col("stage").sort_by("pos").last() == last_stage).alias("clean_end"),
        pl.col("file").sort_by("pos").last().cast(pl.String),
        pl.col("line").sort_by("pos").last(),
    )
    latest = marks.group_by("rank").agg(pl.col("epoch").max().alias("latest"))
    ended_lines = ends.select("epoch", "rank", pl.lit(True).alias("said_end")).unique()
    per_epoch = (
        per_epoch.join(latest, on="rank")
        .join(ended_lines, on=["epoch", "rank"], how="left")
        .with_columns(
            (
                pl.col("clean_end")
                | pl.col("said_end").fill_null(False)
                | (pl.col("latest") > pl.col("epoch"))
            ).alias("ended")
        )
    )
    for (epoch,), counts in per_epoch.sort("epoch").group_by("epoch", maintain_order=True):
        most = counts.get_column("steps").max()
        short = counts.filter((pl.col("steps") < most) & pl.col("ended"))
        if short.height and short.height < counts.height:
            running = counts.filter(~pl.col("ended")).get_column("rank").to_list()
            said = ends.filter(pl.col("epoch") == epoch).select("file", "line", "rank")
            silent = short.filter(~pl.col("rank").is_in(said.get_column("rank").to_list()))
            evidence = pl.concat([said, silent.select("file", "line", "rank")])
            return Lengths(
                by_rank=dict(zip(counts["rank"].to_list(), counts["steps"].to_list(), strict=True)),
                evidence=job.quote(evidence.sort("rank")).select("file", "line", "text", "rank"),
                source="steps per epoch",
                epoch=int(epoch),
                at_least=frozenset(running),
            )
    return None


# Bars of one loader on different ranks differ by a few batches; bars of different loaders
# (train and eval) differ far more. Totals within this share (or this many batches, for small
# loaders) of the largest are taken as one loader.
SAME_LOADER_SHARE = 0.01
SAME_LOADER_BATCHES = 2


def _from_progress_bars(job: Job) -> Lengths | None:
    """Per-process tqdm totals that differ slightly: one loader, uneven lengths. Only bars of
    one name are compared (a `Train` bar of 7 and a `Val` bar of 9 are two loaders,
    modelscope/ms-swift#8193); the name's numbers aside (`Epoch 0, Rank 2:`). The bars are
    seldom labelled with a rank, so the lengths are keyed by bar, not by rank."""
    bars = job.events.filter(pl.col("event") == "progress_bar").with_columns(
        pl.col("values").list.get(1).alias("total"),
        bar_name(last_snapshot(pl.col("message")))
        .fill_null("")
        .str.replace_all(r"\d+", "N")
        .alias("_loader"),
    )
    for _, of_one_loader in sorted(bars.group_by("_loader"), key=lambda group: str(group[0])):
        lengths = _uneven_totals(of_one_loader)
        if lengths is not None:
            return lengths
    return None


def _uneven_totals(bars: pl.DataFrame) -> Lengths | None:
    """The largest family of totals within a few batches of each other, bars of one loader."""
    totals = sorted(set(bars.get_column("total").drop_nulls().to_list()))
    for total in reversed(totals):
        slack = max(SAME_LOADER_BATCHES, total * SAME_LOADER_SHARE)
        family = [t for t in totals if total - slack <= t <= total and t > 1]
        if len(family) < 2:
            continue
        rows = bars.filter(pl.col("total").is_in(family))
        if _every_length_ran_out(rows):
            return None
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


def _every_length_ran_out(rows: pl.DataFrame) -> bool:
    """Whether a bar of each total reached its end: the processes with the most batches left
    their loop too, so the uneven lengths held nobody up (the three data-parallel vLLM workers
    of a healthy CoordExp run: 10, 10 and 11 prompts each, every bar at 100%)."""
    ended = rows.filter(pl.col("values").list.first() >= pl.col("total"))
    return set(ended.get_column("total").to_list()) >= set(rows.get_column("total").to_list())


def _first_uneven_step(job: Job, lengths: Lengths) -> int | None:
    """The first step the ranks with fewer batches never ran: one past the last step they
    printed in the epoch (the extra step of the others)."""
    progress = job.progress
    if progress is None:
        return None
    shortest = min(lengths.by_rank.values())
    short = [rank for rank, length in lengths.by_rank.items() if length == shortest]
    marks = progress.marks.filter(pl.col("rank").is_in(short))
    if lengths.epoch is not None:
        marks = marks.filter(pl.col("epoch") == lengths.epoch)
    else:
        marks = _first_epoch_with_uneven_ends(progress.marks, short)
    steps = marks.get_column("step")
    return None if steps.is_empty() else int(steps.max()) + 1


def _first_epoch_with_uneven_ends(marks: pl.DataFrame, short: list[int]) -> pl.DataFrame:
    """Without an epoch from the lengths' source: the short ranks' marks up to where the
    first of them stopped while another rank went further."""
    last = marks.group_by("rank").agg(pl.col("key").max())
    short_last = last.filter(pl.col("rank").is_in(short)).get_column("key").min()
    if short_last is None:
        return marks.clear()
    return marks.filter(pl.col("rank").is_in(short) & (pl.col("key") <= short_last))


RULE = Rule(kind="loader_size_mismatch", check=check, specificity=20)
