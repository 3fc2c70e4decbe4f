"""The earliest point at which a rank's stage marks part from what the other ranks did.

A rank that skips a stage (a `continue` on a bad batch), repeats a step, or goes quiet while
the others carry on has stopped issuing the collectives the others wait for: this is the usual
root cause of a hang that a watchdog timeout reports much later.
"""

from __future__ import annotations

import itertools

import polars as pl

from logforensics.attribution import stamp_of
from logforensics.busy_rank import collective_inside_one_rank_work
from logforensics.desync import (
    describe,
    mixed_ops_at_one_seq,
    odd_ones_out,
    per_rank_timeouts,
    sizes_apart,
)
from logforensics.exited_first import exited_first
from logforensics.file_wait import waited_for_a_file
from logforensics.findings import EVIDENCE_CAP, Evidence, Finding, evidence_from
from logforensics.garbled import garbled_payload
from logforensics.job import Job
from logforensics.never_issued import never_issued
from logforensics.placement import earliest_time, place
from logforensics.progress import Departure, Progress
from logforensics.ras_report import named_by_ras
from logforensics.registry import Rule
from logforensics.skipped_alone import SKIP_FIX, skipped_alone
from logforensics.store_barrier import short_at_barrier
from logforensics.text import rank_list
from logforensics.traceback_waits import tracebacks_apart
from parsers.phase_banners import phase_name

MAX_FINDINGS = 10

STOP_FIX = (
    "Read what {who} did after {its} last mark (the last lines of {its} log are in the "
    "evidence): an exception caught and ignored, a DataLoader that ran out early (give every "
    "rank the same number of batches: DistributedSampler, `drop_last=True`), or a blocking "
    "call that only {who} makes."
)
DESYNC_FIX = (
    "Find the code path that issues a different collective on some ranks at this point "
    "(an epoch end reached at different times, a metric or checkpoint collective on some ranks "
    "only, a `continue` past backward). Run with TORCH_DISTRIBUTED_DEBUG=DETAIL to have the "
    "mismatch reported with both fingerprints, and print stage marks per rank."
)
AHEAD_FIX = (
    "{who} left a stretch of the run the others were still in: most often an epoch's end "
    "reached early, on fewer batches (uneven shards; give every rank the same number: "
    "`DistributedSampler(..., drop_last=True)` and `drop_last=True` on the loader, or DDP's "
    "`Join`), else a phase only {who_lower} entered (an evaluation or a save inside `if rank in "
    "...`). The others then wait in a collective that never comes."
)
REPEAT_FIX = (
    "{who} ran a step again that the other ranks ran once (a retry or a restarted loop on one "
    "rank). Make retries collective, or restart every rank together."
)


def check(job: Job) -> list[Finding]:
    exact = _from_marks(job) + _from_timeouts(job)
    return (
        exact
        + never_issued(job)
        + exited_first(job)
        + collective_inside_one_rank_work(job)
        + garbled_payload(job)
        + waited_for_a_file(job)
        + named_by_ras(job)
        + short_at_barrier(job, default_group=False)
        # where the ranks' own tracebacks left them, where nothing more exact (stage marks, a
        # watchdog's sequence numbers) placed a departure
        + ([] if exact else tracebacks_apart(job) or skipped_alone(job))
    )


def _from_marks(job: Job) -> list[Finding]:
    progress = job.progress
    if progress is None or not progress.departures:
        return []
    groups = itertools.groupby(progress.departures, key=lambda d: (d.order, d.kind))
    findings = [_finding(job, progress, list(group)) for _, group in groups]
    return findings[:MAX_FINDINGS]


def _from_timeouts(job: Job) -> list[Finding]:
    """Ranks that timed out in different collectives at one SeqNum had already taken
    different code paths: a divergence the timeout reports prove without DETAIL or marks.
    The ranks whose op is not the majority's are the odd ones out (principle 6); with two
    ranks, or no majority, nothing tells which side departed."""
    mixed = mixed_ops_at_one_seq(per_rank_timeouts(job.events))
    if mixed.is_empty() or shape_mismatch(job, mixed):
        return []
    ranks = sorted(mixed.get_column("rank").unique().to_list())
    odd = odd_ones_out(mixed)
    evidence, total = evidence_from(mixed.select("file", "line", "text", "rank"))
    left, why = ([], "") if odd else left_the_step(job, mixed)
    if odd:
        who = rank_list(odd)
        said = (
            f" {who.capitalize()} {'is' if len(odd) == 1 else 'are'} the odd one out: "
            f"{'it' if len(odd) == 1 else 'they'} left the path the others kept."
        )
    elif left:
        odd = left
        said = " " + why
    else:
        said = " Nothing tells which side left the common path, so neither is blamed."
    # with no side to blame it says how the timeout came about, not where the job failed: the
    # timeout stays the verdict and tells the desync too (NVIDIA/nccl#1409, two ranks seen)
    blamed = bool(odd)
    return [
        Finding(
            kind="stage_divergence",
            severity="error" if blamed else "warning",
            part="departure" if blamed else "context",
            summary=_where_they_stood(mixed) + said,
            fix=DESYNC_FIX,
            ranks=ranks,
            culprit_ranks=odd,
            blames_nobody=not odd,
            seq=_seq_of(mixed),
            evidence=evidence,
            evidence_total=total,
            confidence="medium" if odd and not left else "low",
            order=place(job, mixed),
            timestamp=earliest_time(mixed),
            details={
                "departure": "other_collective",
                "other_ranks": sorted(set(ranks) - set(odd)),
                "ops": {str(rank): op for rank, op in mixed.select("rank", "op").iter_rows()},
            },
        )
    ]


def _where_they_stood(mixed: pl.DataFrame) -> str:
    if _seq_of(mixed) is None:
        # older torch numbers no collective: each rank timed out in its one collective
        return (
            f"Each rank timed out in a single collective, not the same one ({describe(mixed)}): "
            f"their code paths had already diverged."
        )
    return (
        f"The ranks reached the same collective sequence number in different collectives "
        f"({describe(mixed)}): their code paths had already diverged."
    )


def _seq_of(mixed: pl.DataFrame) -> int | None:
    """The sequence number the mixed reports share; reports of older torch carry none."""
    seq = mixed.item(0, "seq")
    return None if seq is None else int(seq)


# A collective this large is a training step's gradients; one of at most one element is a
# barrier, a flag or a metric, issued outside the step.
GRADIENT_SIZED = 1024


def shape_mismatch(job: Job, mixed: pl.DataFrame) -> bool:
    """One collective in different sizes at one number, with no side known to have left the
    training step: the ranks are at the same call with different tensors (a collective
    mismatch), not on different paths."""
    return sizes_apart(mixed) and not left_the_step(job, mixed)[0]


def left_the_step(job: Job, mixed: pl.DataFrame) -> tuple[list[int], str]:
    """With no majority, the side that left the training step: the ranks that announced a
    phase of their own (`Validate epoch: 1, rank: 1`), else the ranks in a one-element
    collective against the others' gradient-sized one (modelscope/FunASR#2317)."""
    ranks = set(mixed.get_column("rank").to_list())
    phases = job.events.filter((pl.col("event") == "phase") & pl.col("rank").is_in(list(ranks)))
    announced = sorted(set(phases.get_column("rank").to_list()))
    if announced and len(announced) < len(ranks):
        named = phases.filter(pl.col("rank") == announced[0])
        phase = named.select(phase_name(pl.col("message"))).item(0, 0)
        who = rank_list(announced)
        return announced, (
            f"{who.capitalize()} announced a phase of its own before it ({phase}): {who} had "
            "left the path the others kept."
        )
    sizes = mixed.group_by("rank").agg(pl.col("numel_in").max())
    small = sorted(sizes.filter(pl.col("numel_in") <= 1).get_column("rank").to_list())
    large = sizes.filter(pl.col("numel_in") >= GRADIENT_SIZED).get_column("rank").to_list()
    if small and large and len(small) + len(large) == len(ranks):
        who = rank_list(small)
        return small, (
            f"{who.capitalize()} ran a one-element collective (a barrier, a flag, a metric) where "
            f"the others ran a gradient-sized one: {who} had left the training step."
        )
    return [], ""


def _finding(job: Job, progress: Progress, departures: list[Departure]) -> Finding:
    first = departures[0]
    ranks = [departure.rank for departure in departures]
    expected = first.expected
    others = sorted(set(progress.ranks) - set(ranks))
    who = rank_list(ranks)
    template = progress.templates.get(str(expected["stage"]))

    # a progress line's counter is its own step: `iteration 9`, not `step 9 stage iteration`
    said_as = progress.said

    where = said_as(expected)
    if first.kind == "skipped":
        missed = ", ".join(first.missed_stages) or expected["stage"]
        actual = said_as(progress.key_of(first.actual_key))
        skipped = where if template else f"{missed} at step {expected['step']}"
        summary = f"{who.capitalize()} skipped {skipped}: it went on to {actual}"
        if first.order == float(first.expected_key):
            summary += f" while {rank_list(others)} ran {where}."
        else:  # nobody printed the skipped stage: the others stopped before it
            summary += (
                f"; {rank_list(others)} printed the same mark before it and did not follow "
                "(they stopped there, waiting)."
            )
        fix = SKIP_FIX
    elif first.kind == "stopped":
        # the ranks whose marks reach that point, not every other rank (some may be behind)
        reached = progress.marks.filter(pl.col("key") >= first.expected_key)
        others = sorted(set(reached.get_column("rank").unique().to_list()) - set(ranks)) or others
        summary = (
            f"{who.capitalize()} went quiet before {where}: "
            f"{rank_list(others)} went on to it and further."
        )
        its = "its" if len(ranks) == 1 else "their"
        fix = STOP_FIX.format(who=who, its=its)
    elif first.kind == "went_ahead":
        summary = (
            f"{who.capitalize()} went on to {where} while {rank_list(others)} never printed it "
            f"and printed nothing more: {who} left a stretch the others were still in."
        )
        fix = AHEAD_FIX.format(who=who.capitalize(), who_lower=who)
    else:
        summary = (
            f"{who.capitalize()} repeated an earlier step where {rank_list(others)} ran {where}."
        )
        fix = REPEAT_FIX.format(who=who.capitalize())
    if template:
        summary += f" (Progress read from lines the ranks print: `{_trimmed(template)}`.)"
    # which side left is read from the few that went on, not from a majority that agrees
    confidence = "low" if first.kind == "went_ahead" else "high"
    undecided = False
    if first.tie:
        confidence = "medium" if first.kind == "skipped" else "low"
        if first.kind == "skipped":
            summary += " As many ranks agree with it as not, so which side departed is a guess."
        else:
            # nothing but the marks: a rank that stopped and one that went on look alike
            # whichever of them left the path (principle 6)
            undecided = True
            summary += (
                f" As many ranks went on as stopped, and the marks alone cannot tell whether "
                f"{who} stopped on {'its' if len(ranks) == 1 else 'their'} own or waited for "
                f"{rank_list(others)}: neither is blamed."
            )
    evidence = _evidence(job, progress, departures)
    said = _said_while_departing(job, progress.marks.filter(pl.col("rank") == first.rank), first)
    if said.height and first.kind != "stopped":
        summary += f' In between it logged: "{_trimmed(said.item(0, "text"))}".'

    departing = job.quote(
        progress.marks.filter(
            (pl.col("rank") == first.rank) & (pl.col("pos") < first.position)
        ).tail(1)
    ).with_columns(stamp_of(pl.col("text")).alias("timestamp"))
    return Finding(
        kind="stage_divergence",
        severity="error",
        part="departure",
        summary=summary,
        fix=fix,
        ranks=ranks,
        step=None if progress.has_no_step(expected) else expected["step"],
        stage=first.missed_stages[0] if first.missed_stages else expected["stage"],
        epoch=None if expected["epoch"] == -1 else expected["epoch"],
        evidence=evidence[:EVIDENCE_CAP],
        evidence_total=len(evidence),
        confidence=confidence,
        order=first.order,
        timestamp=departing.item(0, "timestamp") if departing.height else None,
        blames_nobody=undecided,
        details={
            "departure": first.kind,
            "other_ranks": others,
            "progress_template": template,
            "missed_stages": list(first.missed_stages),
            "expected": where,
            "ranks_agreeing": first.majority_support,
        },
    )


def _evidence(job: Job, progress: Progress, departures: list[Departure]) -> list[Evidence]:
    """For each departing rank: its mark before the departure, the mark it made instead (or
    the last line of its log), and one other rank's mark at the same position."""
    marks = progress.marks
    cited: list[pl.DataFrame] = []
    lines: list[Evidence] = []
    for departure in departures:
        own = marks.filter(pl.col("rank") == departure.rank)
        around = own.filter(pl.col("pos").is_between(departure.position - 1, departure.position))
        said = _said_while_departing(job, own, departure)
        cited.extend([around.head(1), said, around.tail(around.height - 1)])
        if departure.kind == "stopped":
            lines.extend(_last_line_of(job, departure.rank, own))
    majority = marks.filter(
        (pl.col("pos") == departures[0].position) & (pl.col("key") == departures[0].expected_key)
    )
    cited.append(majority.head(1))
    rows = pl.concat(
        [
            part.select(pl.col("file").cast(pl.String), "line", "rank")
            for part in cited
            if part.height
        ]
    ).with_row_index("_order")
    quoted = _as_evidence(job.quote(rows).sort("_order"))
    # the departing ranks' last lines come after their marks, then the majority's mark
    return quoted[:-1] + lines + quoted[-1:]


SAID = ("log_warning", "log_error", "exception")
QUOTE_CHARS = 160


def _trimmed(text: str) -> str:
    text = text.strip()
    return text if len(text) <= QUOTE_CHARS else text[: QUOTE_CHARS - 1] + "…"


def _said_while_departing(job: Job, own: pl.DataFrame, departure: Departure) -> pl.DataFrame:
    """What the rank logged (warnings, errors, exceptions) in its marks file between its last
    mark on the common path and the mark it made instead: often why it left."""
    before = own.filter(pl.col("pos") == departure.position - 1)
    if before.is_empty():
        return own.clear()
    after = own.filter(pl.col("pos") == departure.position)
    start = before.item(0, "line")
    end = after.item(0, "line") if after.height else None
    window = pl.col("line") > start
    if end is not None:
        window &= pl.col("line") < end
    return (
        job.events.filter(
            (pl.col("file") == before.item(0, "file")) & pl.col("event").is_in(SAID) & window
        )
        .select("file", "line", "text", "rank")
        .head(3)
    )


def _as_evidence(rows: pl.DataFrame) -> list[Evidence]:
    return [
        Evidence(row["file"], int(row["line"]), row["text"], row["rank"])
        for row in rows.iter_rows(named=True)
    ]


def _last_line_of(job: Job, rank: int, own_marks: pl.DataFrame) -> list[Evidence]:
    """The last line of the file holding the rank's marks, when it is not the last mark."""
    if own_marks.is_empty():
        return []
    last_mark = own_marks.row(own_marks.height - 1, named=True)
    stats = job.file_stats.filter(pl.col("file") == last_mark["file"])
    if stats.is_empty() or stats.item(0, "last_line") in (None, last_mark["line"]):
        return []
    return [
        Evidence(
            last_mark["file"], int(stats.item(0, "last_line")), stats.item(0, "last_text"), rank
        )
    ]


RULE = Rule(kind="stage_divergence", check=check)
