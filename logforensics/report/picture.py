"""The per-rank progress picture: ranks down, steps across, drawn as inline SVG by the template.

Each cell says how much of a step a rank ran (all stages, some, none). The cell where a rank
departed from the others is outlined; each rank's last mark is dotted. Wide runs keep the
steps around the first departure and the last steps; large jobs keep the ranks that matter.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from logforensics.plausible import MAX_WORLD_SIZE, plausible_world_size
from logforensics.progress import Progress

MAX_COLUMNS = 48
MAX_ROWS = 64
CELL = 14
GAP = 2
LABEL_WIDTH = 70
HEADER_HEIGHT = 34

FILL = {"full": "#3b8a4a", "partial": "#e0a526", "none": "#e4e4e4"}


@dataclass(frozen=True, slots=True)
class Cell:
    x: int
    y: int
    fill: str
    title: str
    departed: bool
    last: bool


@dataclass(frozen=True, slots=True)
class Picture:
    width: int
    height: int
    cells: list[Cell]
    row_labels: list[tuple[int, str]]  # (y, text)
    column_labels: list[tuple[int, str]]  # (x, text)
    gaps: list[int]  # x of a column gap (steps left out)
    note: str


def build_picture(progress: Progress) -> Picture:
    # the keys of a step are one run of the key order: steps and their stages come from the
    # key table, and only the marks of the drawn ranks and steps are read
    steps = (
        progress.keys.group_by("epoch", "occ", "step")
        .agg(
            pl.col("key").min().alias("first_key"),
            pl.col("key").alias("keys"),
            pl.col("stage").n_unique().alias("stages"),
        )
        .sort("first_key")
        .with_row_index("column")
    )
    departed = {d.rank: d.expected for d in progress.departures}
    column_of = {
        (row["epoch"], row["occ"], row["step"]): row["column"]
        for row in steps.select("epoch", "occ", "step", "column").iter_rows(named=True)
    }
    columns = _choose_columns(steps.height, [column_of[_step_id(k)] for k in departed.values()])
    ranks = _choose_rows(progress.ranks, list(departed))
    drawn_steps = steps.filter(pl.col("column").is_in(columns))
    drawn_keys = drawn_steps.get_column("keys").explode()
    per_cell = (
        progress.marks.filter(
            pl.col("rank").is_in(ranks) & pl.col("key").is_in(drawn_keys.implode())
        )
        .group_by("rank", "epoch", "occ", "step")
        .agg(pl.col("stage").n_unique().alias("done"), pl.col("stage").sort_by("pos").last())
        .join(drawn_steps.select("epoch", "occ", "step", "stages"), on=["epoch", "occ", "step"])
    )
    done = {
        (row["rank"], column_of[(row["epoch"], row["occ"], row["step"])]): row
        for row in per_cell.iter_rows(named=True)
    }
    last_column = {
        row["rank"]: column_of[(row["epoch"], row["occ"], row["step"])]
        for row in progress.last_key().iter_rows(named=True)
    }
    x_of, gaps = _x_positions(columns)
    cells: list[Cell] = []
    row_labels: list[tuple[int, str]] = []
    for row_index, rank in enumerate(ranks):
        y = HEADER_HEIGHT + row_index * (CELL + GAP)
        row_labels.append((y + CELL - 3, f"rank {rank}"))
        departure_column = column_of[_step_id(departed[rank])] if rank in departed else None
        for column in columns:
            info = done.get((rank, column))
            step_row = steps.row(column, named=True)
            if info is None:
                state, title = "none", "no mark"
            else:
                state = "full" if info["done"] >= info["stages"] else "partial"
                title = f"{info['done']}/{info['stages']} stages, last {info['stage']}"
            cells.append(
                Cell(
                    x=x_of[column],
                    y=y,
                    fill=FILL[state],
                    title=f"rank {rank}, step {step_row['step']}: {title}",
                    departed=column == departure_column,
                    last=column == last_column.get(rank),
                )
            )
    column_labels = [
        (x_of[column] + CELL // 2, str(steps.row(column, named=True)["step"]))
        for column in columns
        if column in (columns[0], columns[-1]) or steps.row(column, named=True)["step"] % 5 == 0
    ]
    hidden_rows = len(progress.ranks) - len(ranks)
    note = f"{hidden_rows} ranks that behaved like the others are not drawn." if hidden_rows else ""
    width = (max(x_of.values()) if x_of else LABEL_WIDTH) + CELL + 10
    height = HEADER_HEIGHT + len(ranks) * (CELL + GAP) + 6
    return Picture(width, height, cells, row_labels, column_labels, gaps, note)


def _step_id(key: dict[str, object]) -> tuple[object, object, object]:
    return (key["epoch"], key["occ"], key["step"])


def _choose_columns(count: int, departure_columns: list[int]) -> list[int]:
    if count <= MAX_COLUMNS:
        return list(range(count))
    tail = list(range(count - MAX_COLUMNS // 2, count))
    if not departure_columns:
        return list(range(count - MAX_COLUMNS, count))
    first = min(departure_columns)
    head = list(range(max(0, first - 6), min(count, first - 6 + MAX_COLUMNS // 2)))
    return sorted(set(head) | set(tail))


def _choose_rows(ranks: tuple[int, ...], departed: list[int]) -> list[int]:
    if len(ranks) <= MAX_ROWS:
        return list(ranks)
    keep = set(departed[: MAX_ROWS // 2])
    for rank in ranks:
        if len(keep) >= MAX_ROWS:
            break
        keep.add(rank)
    return sorted(keep)


def _x_positions(columns: list[int]) -> tuple[dict[int, int], list[int]]:
    x_of: dict[int, int] = {}
    gaps: list[int] = []
    x = LABEL_WIDTH
    previous: int | None = None
    for column in columns:
        if previous is not None and column != previous + 1:
            gaps.append(x + 2)
            x += CELL
        x_of[column] = x
        x += CELL + GAP
        previous = column
    return x_of, gaps


# The rank map: every rank of the job as one square, coloured by what the logs say of it.
RANK_MAP_COLUMNS = 32
# A larger job draws only the ranks the logs or findings name, up to this many; the legend
# still counts every rank.
RANK_MAP_MAX_SQUARES = 4096
RANK_STATES = {
    "blamed": ("#8b1a1a", "named by the verdict"),
    "cause": ("#d9534f", "named by another cause-like finding"),
    "symptom": ("#e0a526", "a symptom: timed out, lost a peer, failed after the others"),
    "ok": ("#3b8a4a", "logged, nothing wrong seen"),
    "absent": ("#cfcfd4", "no log line"),
}


@dataclass(frozen=True, slots=True)
class RankSquare:
    x: int
    y: int
    fill: str
    title: str
    rank: int


@dataclass(frozen=True, slots=True)
class RankMap:
    width: int
    height: int
    squares: list[RankSquare]
    legend: list[tuple[str, str, int]]  # colour, meaning, how many ranks
    note: str = ""  # what is not drawn


def build_rank_map(
    findings: list[dict[str, object]],
    ranks_seen: list[int],
    world_size: int | None,
    blamed: list[int],
) -> RankMap | None:
    """Each rank's state from the findings' roles, for ranks 0 up to the world size (or the
    highest rank seen). None when fewer than two ranks are known.

    Only the ranks named or seen are looked at: the others are counted, never listed, so a
    large world costs no more than a small one. Beyond RANK_MAP_MAX_SQUARES ranks, only named
    and seen ranks are drawn (named first, up to that many)."""
    known = {rank for rank in ranks_seen if 0 <= rank < MAX_WORLD_SIZE}
    world = world_size if world_size is not None and plausible_world_size(world_size) else 0
    size = max(world, max(known) + 1 if known else 0)
    if size < 2:
        return None
    named: dict[str, set[int]] = {"root_cause": set(), "symptom": set()}
    for finding in findings:
        if finding["role"] in named:
            named[str(finding["role"])].update(finding["ranks"], finding["culprit_ranks"])
    by_state = {
        "blamed": set(blamed),
        "cause": named["root_cause"],
        "symptom": named["symptom"],
        "ok": known,
    }
    state_of: dict[int, str] = {}
    for state, ranks in by_state.items():
        for rank in ranks:
            if 0 <= rank < size:
                state_of.setdefault(rank, state)
    absent = size - len(state_of)
    if size <= RANK_MAP_MAX_SQUARES:
        drawn = list(range(size))
        note = ""
    else:
        drawn = _named_first(state_of, by_state)
        hidden = size - len(drawn)
        note = (
            f"{size:,} ranks: only the {len(drawn):,} the logs or findings name are drawn "
            f"({hidden:,} are not)."
        )
    squares = [
        RankSquare(
            x=LABEL_WIDTH + (index % RANK_MAP_COLUMNS) * (CELL + GAP),
            y=6 + (index // RANK_MAP_COLUMNS) * (CELL + GAP),
            fill=RANK_STATES[state_of.get(rank, "absent")][0],
            title=f"rank {rank}: {RANK_STATES[state_of.get(rank, 'absent')][1]}",
            rank=rank,
        )
        for index, rank in enumerate(drawn)
    ]
    counts = {state: 0 for state in RANK_STATES}
    for state in state_of.values():
        counts[state] += 1
    counts["absent"] = absent
    legend = [
        (colour, meaning, counts[state])
        for state, (colour, meaning) in RANK_STATES.items()
        if counts[state]
    ]
    rows = (len(drawn) + RANK_MAP_COLUMNS - 1) // RANK_MAP_COLUMNS
    width = LABEL_WIDTH + min(len(drawn), RANK_MAP_COLUMNS) * (CELL + GAP) + 10
    return RankMap(width, 12 + rows * (CELL + GAP), squares, legend, note)


def _named_first(state_of: dict[int, str], by_state: dict[str, set[int]]) -> list[int]:
    """Up to RANK_MAP_MAX_SQUARES of the ranks with a state, the most telling states first;
    in rank order."""
    order = {state: index for index, state in enumerate(by_state)}
    chosen = sorted(state_of, key=lambda rank: (order[state_of[rank]], rank))
    return sorted(chosen[:RANK_MAP_MAX_SQUARES])
