"""Per-rank progress through the training loop, from stage marks.

Derived once and shared by the rules and the report:
- the stage order, learned from the logs (the mean position of each stage within a step);
- each rank's sequence of marks from its primary file (a rank's marks copied into another file,
  e.g. a launcher console under `--tee`, are not counted twice);
- a total order over (epoch, repeat, step, stage) keys, so "further" has a meaning;
- each rank's first departure from what the majority of ranks did at the same position.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

import polars as pl

from logforensics.text import describe_key

DepartureKind = Literal["skipped", "repeated", "stopped", "went_ahead"]


@dataclass(frozen=True, slots=True)
class Departure:
    """Where one rank's sequence of marks first parts from the majority's."""

    rank: int
    position: int  # index into the rank's own sequence
    kind: DepartureKind
    expected_key: int  # key index the majority emitted at this position
    actual_key: int | None  # key index the rank emitted instead (None: it emitted nothing)
    missed_stages: tuple[str, ...]  # stages of the expected step the rank never emitted
    majority_support: int  # ranks that agree on the expected key
    tie: bool  # True when as many ranks disagree as agree
    expected: dict[str, object]  # epoch, occ, step, stage the rank should have printed next
    order: float  # where it happened, in key units (between two keys when nobody printed it)


@dataclass(frozen=True, slots=True)
class Progress:
    stage_order: tuple[str, ...]
    # rank, file, line, epoch (-1: none), step, stage, stage_pos, occ, pos, key; no text (a
    # job prints hundreds of millions of marks): `Job.quote` reads the lines a finding cites
    marks: pl.DataFrame
    keys: pl.DataFrame  # key, epoch, occ, step, stage, stage_pos (sorted by key)
    ranks: tuple[int, ...]
    departures: tuple[Departure, ...]  # sorted by (expected key, rank)
    # each rank's last mark with its text and time (rank, file, line, key, text, timestamp)
    last_marks: pl.DataFrame
    # stage -> the line template it stands for, for stages read from progress lines
    templates: dict[str, str] = field(default_factory=dict)
    milestones: frozenset[str] = frozenset()  # of those, the ones without a counter

    def key_of(self, key: int) -> dict[str, object]:
        return self.keys.row(key, named=True)

    def last_key(self) -> pl.DataFrame:
        """rank, key, file, line, text, timestamp, epoch, step, stage of each rank's last mark."""
        return self.last_marks

    def said(self, key: Mapping[str, object]) -> str:
        """A position in words: `step 5 stage after_backward` for a stage mark; a progress
        line's own words (`iteration 9 (epoch 0)`); a milestone's text alone, for it has no
        counter (`After broadcast`)."""
        if str(key["stage"]) not in self.templates:
            return describe_key(key)
        words = f"`{key['stage']}`" if self.has_no_step(key) else f"{key['stage']} {key['step']}"
        epoch = key.get("epoch")
        return words + (f" (epoch {epoch})" if epoch is not None and epoch != -1 else "")

    def has_no_step(self, key: Mapping[str, object]) -> bool:
        """A milestone's step is a placeholder, never a step a line gave."""
        return str(key["stage"]) in self.milestones


# Bits of the integer that orders marks as (epoch, repeat, step, stage): numbers a log prints
# beyond them are clamped (they are data, not sizes).
EPOCH_BITS, OCC_BITS, STEP_BITS, STAGE_BITS = 14, 9, 32, 8


def build_progress(
    marks: pl.DataFrame, events: pl.DataFrame, writers: pl.DataFrame
) -> Progress | None:
    """From the narrow table of stage marks, and the progress lines read from templates
    (events of family `progress`). `writers` holds each writer's last mark with its text.
    None when there are no marks with a known rank."""
    learned = _shared_progress(
        events.filter(
            (pl.col("event") == "stage")
            & (pl.col("family") == "progress")
            & pl.col("rank").is_not_null()
        )
    )
    templates, milestones = _templates(learned)
    columns = {
        "rank": pl.Int32,
        "file": pl.Categorical,
        "line": pl.UInt32,
        "epoch": pl.Int64,
        "step": pl.Int64,
        "stage": pl.Categorical,
    }
    marks = pl.concat([part.select(list(columns)).cast(columns) for part in (marks, learned)])
    if marks.is_empty():
        return None
    marks = _epochs_from_boundaries(marks, events).with_columns(pl.col("epoch").fill_null(-1))
    marks = _primary_file_only(marks, _marks_per_file(writers, learned))
    if not marks.select(_in_rank_order().all()).item():
        marks = marks.sort("rank", "line")  # (files read in rank order need no sorting)
    marks = marks.with_columns(_position_in_rank())
    stage_order = _learn_stage_order(marks)
    stage_pos = {stage: index for index, stage in enumerate(stage_order)}
    marks = marks.with_columns(_stage_positions(marks.get_column("stage"), stage_pos))
    marks = _with_keys(marks)
    keys = (
        marks.select("key", "epoch", "occ", "step", "stage", "stage_pos").unique("key").sort("key")
    )
    ranks = tuple(marks.get_column("rank").unique().sort().to_list())
    departures = (
        _departures(marks, keys, stage_order, len(ranks), milestones)
        if _in_lockstep(learned)
        else ()
    )
    last_marks = _last_marks(marks, learned, writers)
    return Progress(stage_order, marks, keys, ranks, departures, last_marks, templates, milestones)


# How many of its own print intervals apart the ranks of one console may first show up and
# still be lock-stepped by collectives (a paste starts between two ranks' prints of one step)
LOCKSTEP_INTERVALS = 2


def _in_lockstep(learned: pl.DataFrame) -> bool:
    """Whether the progress lines learned from the ranks' prints count steps the ranks run
    together. Where several ranks print into one console, a training loop's collectives keep
    their counters within a print or two of each other; ranks that first show up many prints
    apart count a loop of their own pace (wenet-e2e/wenet#990: validation batches 3300 on
    rank 1 beside 3700 on the others), where no departure can be read from positions."""
    if learned.is_empty():
        return True
    ordered = learned.sort("file", "line")
    interval = (
        ordered.select(pl.col("step").diff().over("file", "rank").alias("gap"))
        .filter(pl.col("gap") > 0)
        .get_column("gap")
        .median()
    )
    if interval is None:
        return True
    firsts = ordered.group_by("file", "rank", maintain_order=True).first()
    spread = firsts.group_by("file").agg(
        pl.col("rank").n_unique().alias("ranks"),
        pl.col("epoch").n_unique().alias("epochs"),
        (pl.col("step").max() - pl.col("step").min()).alias("spread"),
    )
    apart = spread.filter(
        (pl.col("ranks") > 1)
        & (pl.col("epochs") == 1)
        & (pl.col("spread") > LOCKSTEP_INTERVALS * float(interval))
    )
    return apart.is_empty()


def _in_rank_order() -> pl.Expr:
    """Whether each mark follows the one before it in (rank, line) order."""
    rank, line = pl.col("rank"), pl.col("line")
    before = rank.shift(1)
    return ((rank > before) | ((rank == before) & (line > line.shift(1)))).fill_null(True)


def _position_in_rank() -> pl.Expr:
    """`pos`: the index of each mark in its rank's sequence (marks sorted by rank)."""
    row = pl.int_range(pl.len(), dtype=pl.Int32)
    return (row - _first_of_rank(row)).alias("pos")


def _first_of_rank(values: pl.Expr) -> pl.Expr:
    """The value at the first row of each row's rank (rows sorted by rank)."""
    return pl.when(pl.col("rank").ne_missing(pl.col("rank").shift(1))).then(values).forward_fill()


def _stage_positions(stages: pl.Series, stage_pos: dict[str, int]) -> pl.Expr:
    """`stage_pos`: each mark's stage's place in the order, looked up by the stage's category
    code. Looking it up by name makes a string per mark first: several times slower on
    millions of marks, most of it spent faulting in fresh memory for the strings."""
    present = stages.unique().drop_nulls()
    codes = present.to_physical()
    table: list[int | None] = [None] * (int(codes.max() or 0) + 1)
    for code, name in zip(codes.to_list(), present.cast(pl.String).to_list(), strict=True):
        table[code] = stage_pos[name]
    positions = pl.Series(table, dtype=pl.Int32)
    return pl.lit(positions).gather(pl.col("stage").to_physical()).alias("stage_pos")


def _with_keys(marks: pl.DataFrame) -> pl.DataFrame:
    """`occ` (how often the rank went back to an earlier point, a repeat or a new pass) and
    `key` (the dense rank of (epoch, occ, step, stage) over the job) for marks sorted by rank
    and position.

    Where the epochs, steps and stages the marks span make a table no larger than a few times
    the marks (steps counted without gaps, the usual case), a mark's place is its index in
    that table and its key a lookup; otherwise both come from clamped bit fields and a sort.
    """
    low_epoch, high_epoch, low_step, high_step, high_stage = marks.select(
        pl.col("epoch").min().alias("low_epoch"),
        pl.col("epoch").max().alias("high_epoch"),
        pl.col("step").min().alias("low_step"),
        pl.col("step").max().alias("high_step"),
        pl.col("stage_pos").max().alias("high_stage"),
    ).row(0)
    epochs, steps, stages = high_epoch - low_epoch + 1, high_step - low_step + 1, high_stage + 1
    limit = 4 * marks.height + 4096  # the largest lookup table built

    def table_index(occs: int) -> pl.Expr:  # (epoch, occ, step, stage) in the table
        occ = pl.col("occ").cast(pl.Int64) if occs > 1 else pl.lit(0, dtype=pl.Int64)
        epoch = (pl.col("epoch") - low_epoch) * occs + occ
        return (epoch * steps + (pl.col("step") - low_step)) * stages + pl.col("stage_pos").cast(
            pl.Int64
        )

    compact = epochs * steps * stages <= limit
    place = table_index(1) if compact else _bit_fields(with_occ=False)
    marks = marks.with_columns(place.alias("_place"))
    went_back = (pl.col("_place") <= pl.col("_place").shift(1)).fill_null(False) & (
        pl.col("pos") != 0
    )
    if marks.select(went_back.any()).item():
        backs = went_back.cast(pl.Int64).cum_sum()
        marks = marks.with_columns((backs - _first_of_rank(backs)).cast(pl.Int32).alias("occ"))
        occs = int(marks.get_column("occ").max()) + 1
        compact = compact and epochs * occs * steps * stages <= limit
        order = table_index(occs) if compact else _bit_fields(with_occ=True)
        marks = marks.with_columns(order.alias("_place"))
    else:  # the common case: every rank only went forward, the place alone orders them
        marks = marks.with_columns(pl.lit(0, dtype=pl.Int32).alias("occ"))
    if compact:
        places = marks.get_column("_place")
        seen = pl.repeat(False, int(places.max()) + 1, eager=True).scatter(places, True)
        key = pl.lit(seen.cast(pl.Int32).cum_sum() - 1).gather(pl.col("_place"))
    else:
        key = pl.col("_place").rank("dense").cast(pl.Int32) - 1
    return marks.with_columns(key.alias("key")).drop("_place")


def _bit_fields(*, with_occ: bool) -> pl.Expr:
    """(epoch, occ, step, stage) packed in one integer, each clamped to its bits (numbers a log
    prints beyond them are data, not sizes)."""

    def clamp(value: pl.Expr, bits: int) -> pl.Expr:
        return value.cast(pl.Int64).clip(0, (1 << bits) - 1)

    occ = clamp(pl.col("occ"), OCC_BITS) if with_occ else pl.lit(0, dtype=pl.Int64)
    return (
        clamp(pl.col("epoch") + 1, EPOCH_BITS) * (1 << (OCC_BITS + STEP_BITS + STAGE_BITS))
        + occ * (1 << (STEP_BITS + STAGE_BITS))
        + clamp(pl.col("step"), STEP_BITS) * (1 << STAGE_BITS)
        + clamp(pl.col("stage_pos"), STAGE_BITS)
    )


def _last_marks(marks: pl.DataFrame, learned: pl.DataFrame, writers: pl.DataFrame) -> pl.DataFrame:
    """Each rank's last mark, with its line's text and time (from its writer's record, or the
    progress line itself)."""
    last = marks.filter(pl.col("rank").ne_missing(pl.col("rank").shift(-1))).with_columns(
        pl.col("file").cast(pl.String), pl.col("stage").cast(pl.String)
    )
    texts = pl.concat(
        [
            writers.select(
                "file",
                pl.col("last_line").alias("line"),
                pl.col("last_text").alias("text"),
                pl.col("last_time").alias("timestamp"),
            ),
            learned.select("file", "line", "text", "timestamp"),
        ],
        how="vertical_relaxed",
    ).unique(["file", "line"])
    return last.join(texts, on=["file", "line"], how="left").sort("rank")


# Where a stage comes from a template of the progress lines frameworks print (not a stage
# mark), it counts only when most ranks print it: a line only rank 0 prints (a trainer's
# summary) says nothing about where the others are.
# One printed by a few ranks (two or more) as the last thing each of them printed is kept too:
# where they went that the others did not follow (progress's `_went_ahead`).
def _shared_progress(marks: pl.DataFrame) -> pl.DataFrame:
    if marks.is_empty():
        return marks
    ranks = marks.get_column("rank").n_unique()
    last = pl.col("line") == pl.col("line").max().over("file", "rank")
    shared = (
        marks.with_columns(last.alias("_last"))
        .group_by("stage")
        .agg(pl.col("rank").n_unique().alias("ranks"), pl.col("_last").all().alias("last"))
        .filter((pl.col("ranks") * 2 >= ranks) | ((pl.col("ranks") >= 2) & pl.col("last")))
        .get_column("stage")
    )
    return marks.filter(pl.col("stage").is_in(shared.implode()))


def _templates(learned: pl.DataFrame) -> tuple[dict[str, str], frozenset[str]]:
    """For stages read from progress lines: the line template each stands for, and which of
    them are milestones (no counter: the stage is all there is to say)."""
    rows = learned.select(
        "stage",
        pl.col("extra").str.json_path_match("$.template").alias("template"),
        pl.col("extra").str.contains('"milestone":true', literal=True).alias("milestone"),
    ).unique("stage")
    templates = {}
    milestones = set()
    for row in rows.iter_rows(named=True):
        templates[row["stage"]] = row["template"]
        if row["milestone"]:
            milestones.add(row["stage"])
    return templates, frozenset(milestones)


def _epochs_from_boundaries(marks: pl.DataFrame, events: pl.DataFrame) -> pl.DataFrame:
    """Marks that do not say their epoch take it from the rank's last `epoch=E start` (or
    `end`) line before them in the same file."""
    boundaries = events.filter(
        pl.col("event").is_in(("epoch_start", "epoch_end"))
        & pl.col("rank").is_not_null()
        & pl.col("epoch").is_not_null()
    ).select(
        "rank",
        pl.col("file").cast(marks.schema["file"]),
        pl.col("line").alias("boundary_line"),
        pl.col("epoch").alias("_epoch"),
    )
    if boundaries.is_empty() or marks.get_column("epoch").null_count() == 0:
        return marks
    placed = marks.sort("line").join_asof(
        boundaries.sort("boundary_line"),
        left_on="line",
        right_on="boundary_line",
        by=["rank", "file"],
        strategy="backward",
        check_sortedness=False,  # both sides are sorted by line above
    )
    return placed.with_columns(pl.coalesce("epoch", "_epoch").alias("epoch")).drop(
        "boundary_line", "_epoch"
    )


def _marks_per_file(writers: pl.DataFrame, learned: pl.DataFrame) -> pl.DataFrame:
    """`rank, file, len`: how many marks each rank has in each file (its writers counted them)."""
    return (
        pl.concat(
            [
                writers.select("rank", "file", pl.col("marks").cast(pl.UInt32).alias("len")),
                learned.group_by("rank", "file").agg(pl.len().cast(pl.UInt32)),
            ],
            how="vertical_relaxed",
        )
        .filter(pl.col("rank").is_not_null())
        .group_by("rank", "file")
        .agg(pl.col("len").sum())
    )


def _primary_file_only(marks: pl.DataFrame, counts: pl.DataFrame) -> pl.DataFrame:
    """Keep each rank's marks from one file: the one with most of them, its own file on a tie.
    `counts`: `rank, file, len`."""
    if counts.height == counts.get_column("rank").n_unique():
        return marks  # one file per rank: nothing to choose
    ranks_in_file = counts.group_by("file").agg(pl.col("rank").n_unique().alias("ranks_in_file"))
    counts = counts.join(ranks_in_file, on="file").sort(
        ["rank", "len", "ranks_in_file", "file"], descending=[False, True, False, False]
    )
    primary = counts.group_by("rank", maintain_order=True).first().select("rank", "file")
    return marks.join(
        primary.with_columns(pl.col("file").cast(marks.schema["file"])), on=["rank", "file"]
    )


def _learn_stage_order(marks: pl.DataFrame) -> tuple[str, ...]:
    """Order stages by their mean position within a step's run of marks (for marks sorted by
    rank and position), then by first sight."""
    new_step = pl.any_horizontal(
        pl.col(name).ne_missing(pl.col(name).shift(1)) for name in ("step", "epoch", "rank")
    )
    start = pl.when(new_step).then(pl.col("pos")).forward_fill()
    order = (
        marks.lazy()  # one query: the comparisons and the grouping run on both cores
        .select("stage", "pos", (pl.col("pos") - start).alias("index"))
        .group_by("stage")
        .agg(pl.col("index").mean().alias("mean_index"), pl.col("pos").min().alias("first"))
        .sort("mean_index", "first")
        .collect()
    )
    return tuple(order.get_column("stage").to_list())


def _departures(
    marks: pl.DataFrame,
    keys: pl.DataFrame,
    stage_order: tuple[str, ...],
    rank_count: int,
    milestones: frozenset[str] = frozenset(),
) -> tuple[Departure, ...]:
    if rank_count < 2:
        return ()
    mode = _majority_at_each_position(marks)
    # A position counts only where at least half of all ranks agree on what came there.
    mode = mode.filter(pl.col("support") * 2 >= rank_count)
    if mode.is_empty():
        return tuple(sorted(_own_skips(marks, keys, stage_order, set()), key=_in_order))
    last_majority_pos = mode.get_column("pos").max()
    # the majority's key at each position (null where there is none), looked up by position
    expected_at = (
        pl.DataFrame({"pos": pl.int_range(last_majority_pos + 1, dtype=pl.Int64, eager=True)})
        .join(mode.select(pl.col("pos").cast(pl.Int64), "key"), on="pos", how="left")
        .get_column("key")
    )
    in_range = pl.col("pos") <= last_majority_pos
    mismatches = (
        marks.filter(in_range)
        .filter(pl.col("key").ne_missing(pl.lit(expected_at).gather(pl.col("pos"))))
        .filter(pl.lit(expected_at).gather(pl.col("pos")).is_not_null())
        .group_by("rank")
        .agg(pl.col("pos").min().alias("mismatch_pos"))
    )
    # each rank's length: the position of its last mark, plus one (marks are sorted by rank)
    lengths = marks.filter(pl.col("rank").ne_missing(pl.col("rank").shift(-1))).select(
        "rank", (pl.col("pos") + 1).alias("length")
    )
    per_rank = lengths.join(mismatches, on="rank", how="left").with_columns(
        pl.when(pl.col("length") <= last_majority_pos).then(pl.col("length")).alias("stopped_pos")
    )
    per_rank = per_rank.with_columns(
        pl.min_horizontal("mismatch_pos", "stopped_pos").alias("position")
    ).filter(pl.col("position").is_not_null())
    departing = marks.filter(pl.col("rank").is_in(per_rank.get_column("rank").implode()))
    own_marks = departing.partition_by("rank", as_dict=True)
    at_departures = mode.filter(pl.col("pos").is_in(per_rank.get_column("position").implode()))
    mode_at = {pos: (key, support) for pos, key, support in at_departures.iter_rows()}
    departures: list[Departure] = []
    for row in per_rank.iter_rows(named=True):
        rank, position = row["rank"], row["position"]
        expected_key, support = mode_at[position]
        own = own_marks[(rank,)]
        actual = own.filter(pl.col("pos") == position)
        actual_key = None if actual.is_empty() else int(actual.item(0, "key"))
        expected = keys.row(expected_key, named=True)
        step_marks = own.filter(
            (pl.col("epoch") == expected["epoch"])
            & (pl.col("step") == expected["step"])
            & (pl.col("occ") == expected["occ"])
        )
        seen = set(step_marks.get_column("stage").to_list())
        missed = tuple(
            stage
            for stage in stage_order[expected["stage_pos"] :]
            if stage not in seen and _stage_in_step(keys, expected, stage)
        )
        if actual_key is None:
            kind: DepartureKind = "stopped"
        elif _place(keys.row(actual_key, named=True)) > _place(expected):
            if position == 0:
                continue  # its first mark: its log starts later (an excerpt), no skip before it
            kind = "skipped"
        elif position == 0:
            # its first mark, behind the others' first: its log starts earlier (an excerpt, a
            # rank running at its own pace through a loop without collectives), nothing
            # before it to repeat (wenet-e2e/wenet#990: `CV Batch 5/3300` beside 3700)
            continue
        else:
            kind = "repeated"  # went back to an earlier point, or ran the same one again
        departures.append(
            Departure(
                rank=rank,
                position=position,
                kind=kind,
                expected_key=expected_key,
                actual_key=actual_key,
                missed_stages=missed,
                majority_support=support,
                tie=support * 2 == rank_count,
                expected={name: expected[name] for name in ("epoch", "occ", "step", "stage")},
                order=float(expected_key),
            )
        )
    flagged = {departure.rank for departure in departures}
    departures.extend(_own_skips(marks, keys, stage_order, flagged))
    if not departures:
        departures = _went_ahead(marks, keys, last_majority_pos, rank_count, milestones)
    return tuple(sorted(departures, key=_in_order))


def _went_ahead(
    marks: pl.DataFrame,
    keys: pl.DataFrame,
    last_majority_pos: int,
    rank_count: int,
    milestones: frozenset[str],
) -> list[Departure]:
    """A few ranks (two or more, fewer than half) that went on to one milestone the others
    never printed, with nothing after it, while every other rank's progress ends just before:
    they left a stretch the others were still in (wenet-e2e/wenet#1895: ranks 6 and 7 print
    `before CV device N` after the first training batch, ranks 0-5 nothing more). A later
    step of the same loop on a few ranks is no such sign: an excerpt, or buffered output, cut
    between the ranks' prints of one step looks the same."""
    lengths = marks.filter(pl.col("rank").ne_missing(pl.col("rank").shift(-1))).select(
        "rank", (pl.col("pos") + 1).alias("length")
    )
    ahead = lengths.filter(pl.col("length") == last_majority_pos + 2).get_column("rank")
    behind = lengths.filter(pl.col("length") == last_majority_pos + 1).height
    if len(ahead) < 2 or len(ahead) * 2 >= rank_count or len(ahead) + behind != rank_count:
        return []
    reached = marks.filter(pl.col("pos") == last_majority_pos + 1).get_column("key").unique()
    if reached.len() != 1:
        return []
    key = int(reached.item())
    reached_key = keys.row(key, named=True)
    if str(reached_key["stage"]) not in milestones:
        return []
    expected = {name: reached_key[name] for name in ("epoch", "occ", "step", "stage")}
    return [
        Departure(
            rank=rank,
            position=last_majority_pos + 1,
            kind="went_ahead",
            expected_key=key,
            actual_key=key,
            missed_stages=(),
            majority_support=len(ahead),
            tie=False,
            expected=expected,
            order=float(key),
        )
        for rank in ahead.to_list()
    ]


def _in_order(departure: Departure) -> tuple[float, int]:
    return departure.order, departure.rank


def _majority_at_each_position(marks: pl.DataFrame) -> pl.DataFrame:
    """`pos, key, support`: the key most ranks have at each position (the smallest on a tie)
    and how many have it. One rank of the most common length is the reference: nearly every
    rank matches its key nearly everywhere, so only the marks that differ from it are counted
    key by key, and the reference key's support is the ranks that reach a position less those
    that differ there (no grouping of every mark by position)."""
    lengths = marks.filter(pl.col("rank").ne_missing(pl.col("rank").shift(-1))).select(
        "rank", (pl.col("pos") + 1).alias("length")
    )
    modal_length = lengths.get_column("length").mode().max()
    reference = lengths.filter(pl.col("length") == modal_length).get_column("rank").first()
    reference_keys = marks.filter(pl.col("rank") == reference).get_column("key")
    known = reference_keys.len()
    at_pos = pl.lit(reference_keys).gather(pl.col("pos").clip(0, known - 1))
    differs = (pl.col("pos") >= known) | pl.col("key").ne_missing(at_pos)
    odd = (
        marks.filter(differs).group_by("pos", "key").agg(pl.len().cast(pl.UInt32).alias("support"))
    )
    odd_at_pos = odd.group_by("pos").agg(pl.col("support").sum().alias("_odd"))
    # ranks reaching each position: those whose sequence is longer than it
    ends = lengths.get_column("length").sort()
    positions = pl.int_range(known, dtype=marks.schema["pos"], eager=True).alias("pos")
    reaching = lengths.height - ends.search_sorted(positions.cast(ends.dtype), side="right")
    agreeing = (
        pl.DataFrame({"pos": positions, "key": reference_keys, "_reaching": reaching})
        .join(odd_at_pos, on="pos", how="left")
        .select(
            "pos",
            "key",
            (pl.col("_reaching") - pl.col("_odd").fill_null(0)).cast(pl.UInt32).alias("support"),
        )
        .filter(pl.col("support") > 0)
    )
    return (
        pl.concat([agreeing, odd.select(agreeing.columns)])
        .sort("pos", "support", "key", descending=[False, True, False])
        .group_by("pos", maintain_order=True)
        .first()
    )


def _own_skips(
    marks: pl.DataFrame,
    keys: pl.DataFrame,
    stage_order: tuple[str, ...],
    flagged: set[int],
) -> list[Departure]:
    """Skips the position alignment cannot see: the rank jumped past regular stages of its
    step where the other ranks, having printed the same mark, did not make that jump (they
    stopped there, e.g. blocked in the collective the skipping rank no longer issues).

    A stage is regular when most (rank, step) groups print it; all ranks skipping together
    (the all_reduce(MAX) skip flag) is no departure, since the others made the same jump.
    """
    # which step (epoch, occ, step) each mark is in, as one number looked up by its key
    step_of_key = keys.select(
        pl.struct("epoch", "occ", "step").rank("dense").cast(pl.Int32).alias("step_id")
    ).get_column("step_id")
    step_id = pl.lit(step_of_key).gather(pl.col("key"))
    # a step's marks are one run of the rank's sequence: count runs, not (rank, step) groups
    with_step = marks.lazy().with_columns(step_id.alias("_step_id"))
    new_step = pl.col("rank").ne_missing(pl.col("rank").shift(1)) | pl.col("_step_id").ne_missing(
        pl.col("_step_id").shift(1)
    )
    counted = with_step.select(
        new_step.sum().alias("runs"), pl.col("stage_pos").value_counts().alias("stages")
    ).collect()
    runs = int(counted.item(0, "runs"))
    stage_counts = counted.select(pl.col("stages").explode()).unnest("stages")
    regular_pos = sorted(
        stage_counts.filter(pl.col("count") * 2 > runs).get_column("stage_pos").to_list()
    )
    next_regular = [
        next((p for p in regular_pos if p > pos), None) for pos in range(len(stage_order))
    ]
    same_rank = pl.col("rank").shift(-1) == pl.col("rank")

    def following(column: str) -> pl.Expr:  # the rank's next mark (marks are sorted by rank)
        return pl.when(same_rank).then(pl.col(column).shift(-1))

    moves = with_step.with_columns(
        following("key").alias("next_key"),
        following("_step_id").alias("_next_step_id"),
        following("stage_pos").alias("next_stage_pos"),
        pl.lit(pl.Series(next_regular, dtype=pl.Int32))
        .gather(pl.col("stage_pos"))
        .alias("regular_after"),
    )
    skips_regular = (
        pl.col("next_key").is_not_null()
        & pl.col("regular_after").is_not_null()
        & (
            (pl.col("_step_id") != pl.col("_next_step_id"))
            | (pl.col("next_stage_pos") > pl.col("regular_after"))
        )
    )
    candidates = moves.filter(skips_regular & ~pl.col("rank").is_in(list(flagged))).collect()
    if candidates.is_empty():
        return []
    # how many ranks reached each of those keys, and how many made the same move from it
    around = moves.filter(pl.col("key").is_in(candidates.get_column("key").unique().implode()))
    followers = around.group_by("key", "next_key").agg(pl.len().alias("same_move")).collect()
    reached = around.group_by("key").agg(pl.len().alias("reached")).collect()
    suspicious = (
        candidates.join(followers, on=["key", "next_key"], how="left", nulls_equal=True)
        .join(reached, on="key")
        .filter(pl.col("same_move") * 2 <= pl.col("reached"))
        .sort("rank", "pos")
        .group_by("rank", maintain_order=True)
        .first()
        .with_columns(pl.lit(step_of_key).gather(pl.col("next_key")).alias("_next_step_id"))
    )
    departures = []
    for row in suspicious.iter_rows(named=True):
        missed_pos = row["regular_after"]
        missed = tuple(
            stage_order[p]
            for p in regular_pos
            if p >= missed_pos
            and (
                row["next_stage_pos"] is None
                or row["_step_id"] != row["_next_step_id"]
                or p < row["next_stage_pos"]
            )
        )
        departures.append(
            Departure(
                rank=row["rank"],
                position=row["pos"] + 1,
                kind="skipped",
                expected_key=int(row["key"]),
                actual_key=int(row["next_key"]),
                missed_stages=missed,
                majority_support=int(row["reached"] - row["same_move"]),
                tie=False,
                expected={
                    "epoch": row["epoch"],
                    "occ": row["occ"],
                    "step": row["step"],
                    "stage": stage_order[missed_pos],
                },
                order=float(row["key"]) + 0.5,
            )
        )
    return departures


def _place(key: dict[str, object]) -> tuple[object, ...]:
    """Where a key stands in the loop, ignoring how often it was reached."""
    return (key["epoch"], key["step"], key["stage_pos"])


def _stage_in_step(keys: pl.DataFrame, expected: dict[str, object], stage: str) -> bool:
    """Whether any rank emitted `stage` in the expected step (some stages are occasional)."""
    return not keys.filter(
        (pl.col("epoch") == expected["epoch"])
        & (pl.col("step") == expected["step"])
        & (pl.col("occ") == expected["occ"])
        & (pl.col("stage") == stage)
    ).is_empty()
