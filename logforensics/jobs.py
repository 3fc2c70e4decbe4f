"""Tell apart the jobs in one upload, so that each gets its own verdict.

Users upload what they have: a folder holding a failed run and its re-run (torchrun reusing
one `--log-dir`), or a parent folder of several incidents. Merging them would compare ranks of
different jobs and give one confident verdict about a mixture.

Files belong to different jobs when, between them, they show:
- different torchrun runs (the `<run_id>_<random>/attempt_N/` folders of `--log-dir`, or the
  `error_file:` paths a torchrun failure summary quotes);
- different world sizes;
- the same global rank's stage marks twice with different sequences (a copy, such as a
  `--tee` console, repeats the same sequence);
- different launch commands (master address, port, node count).

The folder tree is split top-down where such a conflict exists, each sub-folder a candidate
job; loose files beside them join the job they name (a run id, the same ranks' marks), and
are listed apart when nothing ties them to one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import polars as pl

from logforensics.intake import MEMBER_SEPARATOR
from logforensics.plausible import believed_world_size

# <log_dir>/<run_id>_<random>/attempt_<n>/...: the run id is what all nodes of a job share
TORCHRUN_RUN = re.compile(r"(?:^|/)(?P<run>[^/]+)_[a-z0-9_]{8}/attempt_\d+/")
# torchrun's rendezvous endpoint or master address and port in a launch line
ENDPOINT = r"--(?:rdzv[_-]endpoint|master[_-]addr|master[_-]port)[= ](\S+)"


@dataclass(frozen=True, slots=True)
class JobFiles:
    """The files of one job, and how it is told apart from the others in the upload."""

    label: str
    files: tuple[str, ...]
    distinct_by: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Split:
    jobs: tuple[JobFiles, ...]
    unattached: tuple[str, ...] = ()  # files that name no job, when there are several
    mixed: str | None = None  # a conflict that no folder boundary separates, in words
    why: str = ""  # what told the jobs apart, in words


@dataclass(slots=True)
class _Signals:
    """What a set of files says about its job(s)."""

    runs: set[str] = field(default_factory=set)
    world_sizes: set[int] = field(default_factory=set)
    endpoints: set[str] = field(default_factory=set)
    conflicting_ranks: set[int] = field(default_factory=set)

    def conflicts(self) -> list[str]:
        reasons = []
        if len(self.runs) > 1:
            reasons.append(f"{len(self.runs)} torchrun runs ({_some(sorted(self.runs))})")
        if len(self.world_sizes) > 1:
            reasons.append(f"world sizes {', '.join(map(str, sorted(self.world_sizes)))}")
        if len(self.endpoints) > 1:
            reasons.append(f"launch endpoints {_some(sorted(self.endpoints))}")
        if self.conflicting_ranks:
            shown = ", ".join(map(str, sorted(self.conflicting_ranks)[:5]))
            reasons.append(f"two different stage-mark sequences for rank {shown}")
        return reasons


def split_jobs(
    file_names: list[str],
    events: pl.DataFrame,
    marks: pl.DataFrame,
    writers: pl.DataFrame | None = None,
) -> Split:
    """Group the files into jobs. `events` are the parsed rows of every file (before ranks are
    inferred): `file`, `event`, `rank` (as stated by the line), `world_size`, `extra`,
    `message`; `marks` the stage marks (`file, line, rank, step, stage`), `writers` who wrote
    them (`file, rank`: found from the marks when not given)."""
    facts = _FileFacts(file_names, events, marks, writers)
    reasons = facts.signals(file_names).conflicts()
    if not reasons:
        return Split((JobFiles(_label(file_names, facts), tuple(sorted(file_names))),))
    groups, mixed = _split(file_names, 0, facts)
    jobs: list[list[str]] = [group for group in groups if facts.has_job_signal(group)]
    unattached = sorted({f for group in groups if group not in jobs for f in group})
    still = [f for f in unattached if not _attach(f, jobs, facts)]
    alone, still = _folders_of_their_own(still, jobs)
    ordered = sorted([*jobs, *alone], key=lambda group: sorted(group)[0])
    return Split(
        tuple(
            JobFiles(
                _label(group, facts),
                tuple(sorted(group)),
                tuple(_distinct(group, ordered, facts)),
            )
            for group in ordered
        ),
        tuple(still),
        mixed,
        "; ".join(reasons),
    )


class _FileFacts:
    """Per-file job signals, computed once."""

    def __init__(
        self,
        file_names: list[str],
        events: pl.DataFrame,
        marks: pl.DataFrame,
        writers: pl.DataFrame | None,
    ) -> None:
        self.run_of = {name: _run_id(name) for name in file_names}
        self.named_runs = _runs_named_in_summaries(events)
        self.world_sizes = _world_sizes(events)
        self.endpoints = _endpoints(events)
        # stage marks, and the progress lines read from templates (events of their own)
        learned = (
            events.filter(pl.col("event") == "stage").select(
                "file", "line", "rank", "step", "stage"
            )
            if "stage" in events.columns
            else pl.DataFrame()
        )
        pairs = [learned.select("file", "rank")] if learned.height else []
        if writers is not None:
            pairs.append(writers.select("file", "rank"))
        self.marks = _mark_sequences(
            pl.concat(
                [marks.select("file", "line", "rank", "step", "stage"), learned],
                how="diagonal_relaxed",
            )
            if learned.height
            else marks,
            pl.concat(pairs, how="vertical_relaxed") if writers is not None else None,
        )
        self.marks_files = set(self.marks.get_column("file").unique().to_list())

    def signals(self, files: list[str]) -> _Signals:
        chosen = set(files)
        signals = _Signals()
        for name in files:
            if self.run_of.get(name):
                signals.runs.add(self.run_of[name])
            signals.world_sizes |= self.world_sizes.get(name, set())
            signals.endpoints |= self.endpoints.get(name, set())
        signals.conflicting_ranks = _conflicting_ranks(self.marks, chosen)
        return signals

    def has_job_signal(self, files: list[str]) -> bool:
        """Whether the files show a job of their own: a run, a world size or stage marks."""
        return any(
            self.run_of.get(name) or self.world_sizes.get(name) or name in self.marks_files
            for name in files
        )


def _split(files: list[str], depth: int, facts: _FileFacts) -> tuple[list[list[str]], str | None]:
    """Split `files` (all below one folder `depth` components deep) where they conflict."""
    reasons = facts.signals(files).conflicts()
    if len(files) < 2 or not reasons:
        return [files], None
    children: dict[str, list[str]] = {}
    loose: list[str] = []
    for name in files:
        parts = _parts(name)
        if len(parts) > depth + 1:
            children.setdefault(parts[depth], []).append(name)
        else:
            loose.append(name)
    if len(children) == 1 and not loose:
        return _split(files, depth + 1, facts)
    groups: list[list[str]] = []
    mixed: str | None = None
    for _, child in sorted(children.items()):
        parts, child_mixed = _split(child, depth + 1, facts)
        groups.extend(parts)
        mixed = mixed or child_mixed
    if not children:  # conflicting files side by side in one folder: by run id, if any
        by_run: dict[str | None, list[str]] = {}
        for name in loose:
            by_run.setdefault(facts.run_of.get(name) or _named_run(name, facts), []).append(name)
        if len(by_run) > 1 and None not in by_run:
            return list(by_run.values()), None
        return [files], "; ".join(reasons)
    groups.extend([name] for name in loose)
    return groups, mixed


def _attach(name: str, jobs: list[list[str]], facts: _FileFacts) -> bool:
    """Put a file that shows no job of its own into the job it names (a run id in a failure
    summary), or the only job whose ranks' marks it repeats."""
    named = _named_run(name, facts)
    homes = [group for group in jobs if named and named in {facts.run_of.get(f) for f in group}]
    if not homes:
        homes = [group for group in jobs if _repeats_marks_of(name, group, facts)]
    if len(homes) == 1:
        homes[0].append(name)
        return True
    return False


def _folders_of_their_own(
    files: list[str], jobs: list[list[str]]
) -> tuple[list[list[str]], list[str]]:
    """The files left over that share a folder no job reaches into: a job of their own, one
    that printed no world size, run or marks (a Trainer console: sample_logs/
    hf_eval_on_main_only); the rest stay unattached."""
    by_folder: dict[str, list[str]] = {}
    for name in files:
        by_folder.setdefault("/".join(_parts(name)[:-1]), []).append(name)
    taken = ["/".join(_parts(name)[:-1]) + "/" for group in jobs for name in group]
    alone: list[list[str]] = []
    left: list[str] = []
    for folder, names in sorted(by_folder.items()):
        if folder and not any(path.startswith(folder + "/") for path in taken):
            alone.append(sorted(names))
        else:
            left.extend(names)
    return alone, sorted(left)


def _named_run(name: str, facts: _FileFacts) -> str | None:
    runs = facts.named_runs.get(name, set())
    return next(iter(runs)) if len(runs) == 1 else None


def _repeats_marks_of(name: str, group: list[str], facts: _FileFacts) -> bool:
    if name not in facts.marks_files:
        return False
    together = [*group, name]
    return not _conflicting_ranks(facts.marks, set(together)) and bool(
        set(_ranks_with_marks(facts.marks, {name}))
        & set(_ranks_with_marks(facts.marks, set(group)))
    )


def _parts(name: str) -> list[str]:
    return name.replace(MEMBER_SEPARATOR, "/").split("/")


def _run_id(name: str) -> str | None:
    found = TORCHRUN_RUN.search(name.replace(MEMBER_SEPARATOR, "/"))
    return found["run"] if found else None


def _runs_named_in_summaries(events: pl.DataFrame) -> dict[str, set[str]]:
    """Runs a torchrun failure summary names through its children's `error_file:` paths."""
    if "extra" not in events.columns or events.is_empty():
        return {}
    paths = events.filter(pl.col("event") == "child_failed").select(
        "file", pl.col("extra").str.json_path_match("$.error_file").alias("path")
    )
    named: dict[str, set[str]] = {}
    for row in paths.drop_nulls().iter_rows(named=True):
        run = _run_id(row["path"])
        if run:
            named.setdefault(row["file"], set()).add(run)
    return named


def _world_sizes(events: pl.DataFrame) -> dict[str, set[int]]:
    if "world_size" not in events.columns or events.is_empty():
        return {}
    stated = (
        events.filter(believed_world_size("world_size"))
        .group_by("file")
        .agg(pl.col("world_size").mode().first())
    )
    return {row["file"]: {int(row["world_size"])} for row in stated.iter_rows(named=True)}


def _endpoints(events: pl.DataFrame) -> dict[str, set[str]]:
    if events.is_empty() or "message" not in events.columns:
        return {}
    launches = events.filter(pl.col("event") == "launch_command").select(
        "file", pl.col("message").str.extract_all(ENDPOINT).list.sort().list.join(" ").alias("at")
    )
    found: dict[str, set[str]] = {}
    for row in launches.filter(pl.col("at") != "").iter_rows(named=True):
        found.setdefault(row["file"], set()).add(row["at"])
    return found


def _mark_sequences(marks: pl.DataFrame, pairs: pl.DataFrame | None) -> pl.DataFrame:
    """Per (file, rank): the stage marks in order, as `step:stage` strings; the sequences
    themselves only for ranks with marks in more than one file (the only ones that can
    conflict), so one file per rank costs nothing here. `pairs`: the (file, rank) pairs of
    the marks, when known."""
    schema = {"file": pl.String, "rank": pl.Int32, "marks": pl.List(pl.String)}
    if marks.is_empty():
        return pl.DataFrame(schema=schema)
    if pairs is None:
        pairs = marks.select("file", "rank")
    pairs = pairs.with_columns(pl.col("file").cast(pl.String)).unique()
    shared = pairs.filter(pl.col("rank").count().over("rank") > 1).get_column("rank").unique()
    single = pairs.filter(~pl.col("rank").is_in(shared.implode())).with_columns(
        pl.lit([], dtype=pl.List(pl.String)).alias("marks")
    )
    twice = (
        marks.filter(pl.col("rank").is_in(shared.implode()))
        .with_columns(pl.col("file").cast(pl.String), pl.col("stage").cast(pl.String))
        .sort("file", "line")
        .group_by("file", "rank")
        .agg(pl.format("{}:{}", "step", "stage").alias("marks"))
    )
    return pl.concat([single.cast(schema), twice.cast(schema)])


def _ranks_with_marks(marks: pl.DataFrame, files: set[str]) -> list[int]:
    return marks.filter(pl.col("file").is_in(list(files))).get_column("rank").unique().to_list()


def _conflicting_ranks(marks: pl.DataFrame, files: set[str]) -> set[int]:
    """Ranks whose marks in two of `files` part ways (neither sequence is the start of the
    other: a copy cut short is still a copy)."""
    chosen = marks.filter(pl.col("file").is_in(list(files)))
    twice = chosen.filter(pl.col("rank").count().over("rank") > 1)
    if twice.is_empty():
        return set()
    common = twice.with_columns(pl.col("marks").list.len().min().over("rank").alias("_n"))
    prefixes = common.with_columns(
        pl.col("marks").list.head(pl.col("_n")).list.join("|").hash().alias("_prefix")
    )
    differing = prefixes.group_by("rank").agg(pl.col("_prefix").n_unique().alias("_kinds"))
    return set(differing.filter(pl.col("_kinds") > 1).get_column("rank").to_list())


def _some(items: list[str], shown: int = 3) -> str:
    """`a, b, c and 4 more`: short names (run ids are long)."""
    short = [item if len(item) <= 12 else item[:8] + "…" for item in items]
    more = f" and {len(items) - shown} more" if len(items) > shown else ""
    return ", ".join(short[:shown]) + more


def _label(files: list[str], facts: _FileFacts) -> str:
    """The job's folder (above any torchrun run folder), and its run id when it has one."""
    runs = sorted({facts.run_of[f] for f in files if facts.run_of.get(f)})
    folder = _common_folder(files)
    for run in runs:
        folder = folder.split(f"/{run}_")[0] if f"/{run}_" in f"/{folder}" else folder
        folder = "" if folder.startswith(f"{run}_") else folder
    run_words = f"torchrun run {_some(runs)}" if runs else ""
    if folder and run_words:
        return f"{folder} ({run_words})"
    return folder or run_words or (sorted(files)[0] if len(files) == 1 else "the whole upload")


def _common_folder(files: list[str]) -> str:
    split = [_parts(name)[:-1] for name in files]
    common: list[str] = []
    for parts in zip(*split, strict=False):
        if len(set(parts)) != 1:
            break
        common.append(parts[0])
    return "/".join(common)


def _distinct(group: list[str], jobs: list[list[str]], facts: _FileFacts) -> list[str]:
    """What sets this job apart from the others, in words."""
    own = facts.signals(group)
    said = []
    if own.runs:
        said.append(f"torchrun run {', '.join(sorted(own.runs))}")
    if own.world_sizes:
        said.append(f"world size {', '.join(map(str, sorted(own.world_sizes)))}")
    if len(jobs) > 1 and not said:
        said.append(f"folder {_common_folder(group) or '.'}")
    return said
