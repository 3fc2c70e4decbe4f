"""The per-rank progress picture and the rank map, drawn as inline SVG by the template.

Progress: steps across, one row per group of ranks that behaved alike (`dshbak -c` style:
`ranks 0-2047, 2049-4095` is one row when their cells are the same), the odd groups first.
Each cell says how much of a step the group ran (all stages, some, none); the cell where a
group departed from the others is outlined; its last mark is dotted. Wide runs keep the steps
around the first departure and the last steps.

Rank map: every rank of the job, a row of RANK_MAP_COLUMNS at a time; a run of ranks in the
same state is one bar, and rows whose ranks are all alike fold into one. Colours come from the
style sheet (CSS variables, light and dark), so the page and the legend agree.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import polars as pl

from logforensics.i18n import t
from logforensics.plausible import MAX_WORLD_SIZE, plausible_world_size
from logforensics.progress import Progress
from logforensics.text import rank_ranges

MAX_COLUMNS = 48
MAX_ROWS = 48  # groups of ranks drawn; the others are counted in the note
CELL = 14
GAP = 2
LABEL_WIDTH = 70
MAX_LABEL_WIDTH = 230
LABEL_CHAR = 6.6  # px per character of an 11 px label
HEADER_HEIGHT = 34

# A fixed string in the page's language (`logforensics.i18n.translator`); English by default.
Say = Callable[..., str]

# Cell states: their colours are CSS classes (`cell-full`, ...) defined in report.css.
FILL = {"full": "cell-full", "partial": "cell-partial", "none": "cell-none"}


@dataclass(frozen=True, slots=True)
class Cell:
    x: int
    y: int
    fill: str  # the CSS class of its state
    title: str
    departed: bool
    last: bool


@dataclass(frozen=True, slots=True)
class Picture:
    width: int
    height: int
    cells: list[Cell]
    row_labels: list[tuple[int, str, str]]  # (y, shown text, full text)
    column_labels: list[tuple[int, str]]  # (x, text)
    gaps: list[int]  # x of a column gap (steps left out)
    note: str
    label_width: int = LABEL_WIDTH


def build_picture(progress: Progress, say: Say = t) -> Picture:
    # the keys of a step are one run of the key order: steps and their stages come from the
    # key table, and only the marks of the drawn steps are read
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
    drawn_steps = steps.filter(pl.col("column").is_in(columns))
    drawn_keys = drawn_steps.get_column("keys").explode()
    departure_column = {rank: column_of[_step_id(key)] for rank, key in departed.items()}
    last_column = {
        row["rank"]: column_of[(row["epoch"], row["occ"], row["step"])]
        for row in progress.last_key().iter_rows(named=True)
    }
    groups = _rank_groups(progress, drawn_steps, drawn_keys, departure_column, last_column)
    shown = groups[:MAX_ROWS]
    labels = [rank_ranges(group.ranks, limit=6) for group in shown]
    label_width = _label_width(labels)
    x_of, gaps = _x_positions(columns, label_width)
    cells: list[Cell] = []
    row_labels: list[tuple[int, str, str]] = []
    for row_index, (group, label) in enumerate(zip(shown, labels, strict=True)):
        y = HEADER_HEIGHT + row_index * (CELL + GAP)
        who = _who(group.ranks, label, say)
        full = rank_ranges(group.ranks, limit=40)
        row_labels.append((y + CELL - 3, _fit(who, label_width), f"{len(group.ranks)}: {full}"))
        for column in columns:
            done, stages, last_stage = group.cells.get(column, (0, 0, None))
            step = steps.row(column, named=True)["step"]
            if not done:
                state, said = "none", say("no mark")
            else:
                state = "full" if done >= stages else "partial"
                said = say(
                    "{done}/{stages} stages, last {stage}",
                    done=done,
                    stages=stages,
                    stage=last_stage,
                )
            cells.append(
                Cell(
                    x=x_of[column],
                    y=y,
                    fill=FILL[state],
                    title=say("{who}, step {step}: {said}", who=who, step=step, said=said),
                    departed=column == group.departed,
                    last=column == group.last,
                )
            )
    column_labels = _apart(
        [
            (x_of[column] + CELL // 2, str(steps.row(column, named=True)["step"]))
            for column in columns
            if column in (columns[0], columns[-1]) or steps.row(column, named=True)["step"] % 5 == 0
        ]
    )
    hidden = groups[MAX_ROWS:]
    note = (
        say(
            "{ranks} ranks in {groups} more groups are not drawn.",
            ranks=f"{sum(len(g.ranks) for g in hidden):,}",
            groups=f"{len(hidden):,}",
        )
        if hidden
        else ""
    )
    width = (max(x_of.values()) if x_of else label_width) + CELL + 10
    height = HEADER_HEIGHT + len(shown) * (CELL + GAP) + 6
    return Picture(width, height, cells, row_labels, column_labels, gaps, note, label_width)


@dataclass(frozen=True, slots=True)
class _Group:
    ranks: list[int]
    cells: dict[int, tuple[int, int, str | None]]  # column: stages done, in the step, last
    departed: int | None  # the column where it departed
    last: int | None  # the column of its last mark


def _rank_groups(
    progress: Progress,
    drawn_steps: pl.DataFrame,
    drawn_keys: pl.Series,
    departure_column: dict[int, int],
    last_column: dict[int, int],
) -> list[_Group]:
    """Ranks whose drawn cells, departure and last mark are the same, grouped; the groups
    with a departure first, then the smaller ones (the odd ones out), the largest last."""
    column_frame = drawn_steps.select("epoch", "occ", "step", "column", "stages")
    per_cell = (
        progress.marks.filter(pl.col("key").is_in(drawn_keys.implode()))
        .group_by("rank", "epoch", "occ", "step")
        .agg(
            pl.col("stage").n_unique().alias("done"),
            pl.col("stage").sort_by("pos").last().cast(pl.String),
        )
        .join(column_frame, on=["epoch", "occ", "step"])
        .sort("rank", "column")
    )
    signatures = per_cell.group_by("rank", maintain_order=True).agg(
        pl.col("column"), pl.col("done"), pl.col("stages"), pl.col("stage")
    )
    by_key: dict[tuple, _Group] = {}
    seen: set[int] = set()
    for rank, columns, done, stages, last_stages in signatures.iter_rows():
        seen.add(rank)
        cells = {
            column: (d, s, stage)
            for column, d, s, stage in zip(columns, done, stages, last_stages, strict=True)
        }
        key = (tuple(sorted(cells.items())), departure_column.get(rank), last_column.get(rank))
        group = by_key.setdefault(key, _Group([], cells, key[1], key[2]))
        group.ranks.append(rank)
    for rank in progress.ranks:  # ranks with no mark in the drawn steps
        if rank not in seen:
            key = ((), departure_column.get(rank), last_column.get(rank))
            group = by_key.setdefault(key, _Group([], {}, key[1], key[2]))
            group.ranks.append(rank)
    groups = list(by_key.values())
    for group in groups:
        group.ranks.sort()
    return sorted(groups, key=lambda g: (g.departed is None, len(g.ranks), g.ranks[0]))


def _apart(labels: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """Column labels (centre x, text) without the ones that would overprint the label before
    them (the first column at step 1494 beside 1495); the last column's label is kept before
    its neighbour's."""
    kept: list[tuple[int, str]] = []
    for at, (x, text) in enumerate(labels):
        if kept:
            previous_x, previous = kept[-1]
            if x - previous_x < (len(previous) + len(text)) * LABEL_CHAR / 2 + 2:
                if at == len(labels) - 1 and len(kept) > 1:
                    kept[-1] = (x, text)
                continue
        kept.append((x, text))
    return kept


def _who(ranks: list[int], label: str, say: Say) -> str:
    """A row's ranks as its label says them: `rank 2`, `ranks 0, 1, 3`."""
    return say("rank {rank}", rank=label) if len(ranks) == 1 else say("ranks {ranks}", ranks=label)


def _label_width(labels: list[str]) -> int:
    """Room for the longest row label (`ranks 0-3, 5`), within the bounds."""
    widest = (int(len(f"ranks {label}") * LABEL_CHAR) + 12 for label in labels)
    return min(MAX_LABEL_WIDTH, max([LABEL_WIDTH, *widest]))


def _fit(text: str, width: int) -> str:
    """`text` cut to what a label `width` px wide shows (the full text is in its title)."""
    room = int((width - 4) / LABEL_CHAR)
    return text if len(text) <= room else text[: room - 1] + "…"


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


def _x_positions(columns: list[int], label_width: int) -> tuple[dict[int, int], list[int]]:
    x_of: dict[int, int] = {}
    gaps: list[int] = []
    x = label_width
    previous: int | None = None
    for column in columns:
        if previous is not None and column != previous + 1:
            gaps.append(x + 2)
            x += CELL
        x_of[column] = x
        x += CELL + GAP
        previous = column
    return x_of, gaps


# The rank map's states, the most telling first: (meaning, CSS class for the colour); the
# meaning is English, translated where the map is built.
RANK_MAP_COLUMNS = 32
RANK_STATES = {
    "blamed": ("named by the verdict", "rank-blamed"),
    # a verdict that blames none of its ranks (the same error on all of them, a start-up they
    # all stopped in): drawn as causes, said as the verdict's own
    "in_verdict": ("in the verdict, none of them blamed", "rank-cause"),
    "cause": ("named by another cause-like finding", "rank-cause"),
    "symptom": ("a symptom: timed out, lost a peer, failed after the others", "rank-symptom"),
    "ok": ("logged, nothing wrong seen", "rank-ok"),
    "absent": ("no log line", "rank-absent"),
}
# Rows drawn at most: rows whose ranks are all alike fold into one, so only a job whose
# odd ranks are scattered everywhere reaches it (the legend still counts every rank).
RANK_MAP_MAX_ROWS = 96


@dataclass(frozen=True, slots=True)
class RankRun:
    """Ranks `first`..`last` in one state, drawn as one bar."""

    x: int
    y: int
    width: int
    state: str  # a key of RANK_STATES
    css: str
    title: str


@dataclass(frozen=True, slots=True)
class RankMap:
    width: int
    height: int
    runs: list[RankRun]
    row_labels: list[tuple[int, str]]  # (y, first rank of the row or the folded range)
    legend: list[tuple[str, str, int, str]]  # CSS class, meaning, how many ranks, which
    note: str = ""  # what is not drawn


def build_rank_map(
    findings: list[dict[str, object]],
    ranks_seen: list[int],
    world_size: int | None,
    blamed: list[int],
    say: Say = t,
    verdict_id: str | None = None,
) -> RankMap | None:
    """Each rank's state from the findings' roles, for ranks 0 up to the world size (or the
    highest rank seen). None when fewer than two ranks are known. Work and size follow the
    ranks the logs name, not the world size: rows of ranks all in one state fold into one."""
    known = {rank for rank in ranks_seen if 0 <= rank < MAX_WORLD_SIZE}
    world = world_size if world_size is not None and plausible_world_size(world_size) else 0
    size = max(world, max(known) + 1 if known else 0)
    if size < 2:
        return None
    named: dict[str, set[int]] = {"root_cause": set(), "symptom": set(), "in_verdict": set()}
    for finding in findings:
        if verdict_id is not None and finding.get("id") == verdict_id and not blamed:
            named["in_verdict"].update(finding["ranks"])
        elif finding["role"] == "root_cause":
            # a cause names its culprits; the other ranks it lists are the ones that agreed
            # or waited (ranks 0, 2 and 3 beside rank 1's other collective), no cause
            named["root_cause"].update(finding["culprit_ranks"] or finding["ranks"])
        elif finding["role"] in named:
            named[str(finding["role"])].update(finding["ranks"], finding["culprit_ranks"])
    by_state = {
        "blamed": set(blamed),
        "in_verdict": named["in_verdict"],
        "cause": named["root_cause"],
        "symptom": named["symptom"],
        "ok": known,
    }
    state_of: dict[int, str] = {}
    for state, ranks in by_state.items():
        for rank in ranks:
            if 0 <= rank < size:
                state_of.setdefault(rank, state)
    rows = _map_rows(state_of, size)
    shown = rows[:RANK_MAP_MAX_ROWS]
    runs: list[RankRun] = []
    labels: list[tuple[int, str]] = []
    for index, (first, last, row_runs) in enumerate(shown):
        y = 6 + index * (CELL + GAP)
        labels.append(
            (y + 11, str(first) if last - first < RANK_MAP_COLUMNS else f"{first}–{last}")
        )
        for start, end, state in row_runs:
            meaning, css = RANK_STATES[state]
            cells = end - start + 1 if last - first < RANK_MAP_COLUMNS else RANK_MAP_COLUMNS
            offset = start - first if last - first < RANK_MAP_COLUMNS else 0
            who = (
                say("rank {rank}", rank=start)
                if start == end
                else say("ranks {ranks}", ranks=f"{start}-{end}")
            )
            runs.append(
                RankRun(
                    x=LABEL_WIDTH + offset * (CELL + GAP),
                    y=y,
                    width=cells * (CELL + GAP) - GAP,
                    state=state,
                    css=css,
                    title=say("{who}: {meaning}", who=who, meaning=say(meaning)),
                )
            )
    note = (
        say("{count} more rows of ranks are not drawn.", count=len(rows) - len(shown))
        if len(rows) > len(shown)
        else ""
    )
    ranks_in = {
        state: sorted(r for r, s in state_of.items() if s == state) for state in RANK_STATES
    }
    counts = {state: len(ranks) for state, ranks in ranks_in.items()}
    counts["absent"] = size - len(state_of)
    legend = [
        (css, say(meaning), counts[state], rank_ranges(ranks_in[state], limit=8))
        for state, (meaning, css) in RANK_STATES.items()
        if counts[state]
    ]
    width = LABEL_WIDTH + min(size, RANK_MAP_COLUMNS) * (CELL + GAP) + 10
    return RankMap(width, 12 + len(shown) * (CELL + GAP), runs, labels, legend, note)


def _map_rows(
    state_of: dict[int, str], size: int
) -> list[tuple[int, int, list[tuple[int, int, str]]]]:
    """The map's rows: (first rank, last rank, runs of (start, end, state)); consecutive full
    rows whose ranks are all in one state fold into one row. Work follows the ranks named,
    not `size`: the stretches between them are runs of one state."""
    named = sorted(state_of)
    rows: list[tuple[int, int, list[tuple[int, int, str]]]] = []
    row_start = 0
    while row_start < size:
        row_end = min(size, row_start + RANK_MAP_COLUMNS) - 1
        runs = _runs_in(row_start, row_end, named, state_of)
        if len(runs) == 1:  # a uniform row: fold it with the uniform rows after it
            state = runs[0][2]
            fold_end = _uniform_until(row_end, size, state, named, state_of)
            if rows and len(rows[-1][2]) == 1 and rows[-1][2][0][2] == state:
                first = rows[-1][0]
                rows[-1] = (first, fold_end, [(first, fold_end, state)])
            else:
                rows.append((row_start, fold_end, [(row_start, fold_end, state)]))
            row_start = fold_end + 1
            continue
        rows.append((row_start, row_end, runs))
        row_start = row_end + 1
    return rows


def _runs_in(
    start: int, end: int, named: list[int], state_of: dict[int, str]
) -> list[tuple[int, int, str]]:
    runs: list[tuple[int, int, str]] = []
    for rank in range(start, end + 1):
        state = state_of.get(rank, "absent")
        if runs and runs[-1][2] == state and runs[-1][1] == rank - 1:
            runs[-1] = (runs[-1][0], rank, state)
        else:
            runs.append((rank, rank, state))
    return runs


def _uniform_until(
    row_end: int, size: int, state: str, named: list[int], state_of: dict[int, str]
) -> int:
    """The last rank of the stretch of whole rows after `row_end` that are all in `state`
    (found from the named ranks, without walking the stretch)."""
    from bisect import bisect_right

    end = row_end
    while end + 1 < size:
        next_end = min(size, end + 1 + RANK_MAP_COLUMNS) - 1
        if state == "absent":
            at = bisect_right(named, end)
            if at < len(named) and named[at] <= next_end:
                break
        else:
            at = bisect_right(named, end)
            run = named[at : at + RANK_MAP_COLUMNS]
            if (
                len(run) < next_end - end
                or any(state_of[r] != state for r in run)
                or (run and (run[0] != end + 1 or run[-1] != next_end))
            ):
                break
        if next_end - end < RANK_MAP_COLUMNS:
            break  # a last partial row stays a row of its own
        end = next_end
    return end


# The Flight Recorder grid: the collectives each group of ranks issued, numbered as the
# recorder numbers them, marked where they differ from what most ranks issued at that number.
FLIGHT_COLUMNS = 40
FLIGHT_STATES = {"agree": "cell-full", "differs": "cell-differs", "none": "cell-none"}


def build_flight_grid(flight: pl.DataFrame, from_seq: int | None, say: Say = t) -> Picture | None:
    """Rows of ranks whose collectives agree, columns of sequence numbers (of the first
    process group with a disagreement, else the default one), the last FLIGHT_COLUMNS up to
    the end, starting a little before `from_seq` when it is given."""
    entries = flight.filter(~pl.col("is_p2p") & pl.col("seq").is_not_null())
    if entries.get_column("rank").n_unique() < 2:
        return None
    signature = pl.concat_str("op", "input_sizes", "input_dtypes", separator=" ", ignore_nulls=True)
    entries = entries.with_columns(signature.alias("signature"))
    pg = entries.item(0, "pg")
    entries = entries.filter(pl.col("pg") == pg)
    last = int(entries.get_column("seq").max())
    first = int(entries.get_column("seq").min())
    start = max(first, (from_seq - 6) if from_seq is not None else last - FLIGHT_COLUMNS + 1)
    columns = list(range(start, min(last, start + FLIGHT_COLUMNS - 1) + 1))
    shown = entries.filter(pl.col("seq").is_in(columns))
    majority = dict(
        shown.group_by("seq", "signature")
        .agg(pl.len().alias("votes"))
        .sort("seq", "votes", descending=[False, True])
        .group_by("seq", maintain_order=True)
        .first()
        .select("seq", "signature")
        .iter_rows()
    )
    cells_of: dict[int, dict[int, tuple[str, str]]] = {}
    for rank, seq, said, retired in shown.select("rank", "seq", "signature", "retired").iter_rows():
        state = "agree" if said == majority.get(seq) else "differs"
        note = "" if retired else say(" (not completed)")
        cells_of.setdefault(rank, {})[seq] = (state, f"#{seq} {said}{note}")
    groups: dict[tuple, list[int]] = {}
    for rank in sorted(entries.get_column("rank").unique().to_list()):
        cells = cells_of.get(rank, {})
        key = tuple((seq, cells.get(seq, ("none", ""))[0]) for seq in columns)
        groups.setdefault(key, []).append(rank)
    ordered = sorted(groups.items(), key=lambda item: (len(item[1]), item[1][0]))
    labels = [rank_ranges(ranks, limit=6) for _, ranks in ordered]
    label_width = _label_width(labels)
    x_of, gaps = _x_positions(columns, label_width)
    cells: list[Cell] = []
    row_labels: list[tuple[int, str, str]] = []
    for row_index, ((_, ranks), label) in enumerate(zip(ordered, labels, strict=True)):
        y = HEADER_HEIGHT + row_index * (CELL + GAP)
        who = _who(ranks, label, say)
        row_labels.append(
            (y + CELL - 3, _fit(who, label_width), f"{len(ranks)}: {rank_ranges(ranks)}")
        )
        for seq in columns:
            not_issued = ("none", say("#{seq}: not issued", seq=seq))
            state, said = cells_of.get(ranks[0], {}).get(seq, not_issued)
            cells.append(
                Cell(
                    x_of[seq],
                    y,
                    FLIGHT_STATES[state],
                    say("{who}, {said}", who=who, said=said),
                    state == "differs",
                    False,
                )
            )
    column_labels = [
        (x_of[seq] + CELL // 2, str(seq))
        for seq in columns
        if seq in (columns[0], columns[-1]) or seq % 5 == 0 or seq == from_seq
    ]
    width = max(x_of.values()) + CELL + 10
    height = HEADER_HEIGHT + len(ordered) * (CELL + GAP) + 6
    note = say("process group {pg}", pg=pg)
    return Picture(width, height, cells, row_labels, column_labels, gaps, note, label_width)
