"""The hang dumps of a job as tables: stacks (py-spy, faulthandler, gdb, the debug server's) and
Flight Recorder entries.

`load(dumps, events)` reads every dump the inventory found into three tables, each process
attributed to a global rank: from the debug server's section header, from the dump's path
(`rank3.txt`, `<prefix><rank>`; a process dumped with its parent takes the parent's), from
`RANK=`/`--rank` in its command line, or from the process id the logs give the rank (NCCL
init lines, a `pid=` print); a process none of these name whose parent is a rank's process
(a DataLoader worker dumped with `--subprocesses`) is that rank's worker. Processes no rank
claims (the torchrun agent, a paste without its command line) are kept apart (`unranked`). A
rank dumped several times counts once: py-spy text before JSON before faulthandler, then the
last file by name (the newest of the debug server's periodic snapshots).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import polars as pl

from logforensics.attribution import path_ranks
from logforensics.dumps import (
    debug_server,
    faulthandler,
    flight_recorder,
    gdb_pybt,
    pyspy,
    unstamped,
)
from logforensics.intake import DumpFile, SkippedFile


def _empty(schema: dict[str, pl.DataType]) -> pl.DataFrame:
    return pl.DataFrame(schema={**schema, "rank": pl.Int32()})


@dataclass(frozen=True, slots=True)
class Dumps:
    stacks: pl.DataFrame = field(default_factory=lambda: _empty(pyspy.FRAME_SCHEMA))
    flight: pl.DataFrame = field(default_factory=lambda: _empty(flight_recorder.ENTRY_SCHEMA))
    flight_status: pl.DataFrame = field(
        default_factory=lambda: _empty(flight_recorder.STATUS_SCHEMA)
    )
    refused: tuple[SkippedFile, ...] = ()
    # the stacks of processes no rank claims, no rank's DataLoader workers (`rank` null): a
    # pasted dump without its command line, or the torchrun agent
    unranked: pl.DataFrame = field(default_factory=lambda: _empty(pyspy.FRAME_SCHEMA))

    @property
    def empty(self) -> bool:
        return self.stacks.is_empty() and self.flight.is_empty()


def load(dumps: tuple[DumpFile, ...], events: pl.DataFrame) -> Dumps:
    if not dumps:
        return Dumps()
    by_path = dict(
        path_ranks([dump.name for dump in dumps]).select("file", "path_rank").iter_rows()
    )
    refused: list[SkippedFile] = []
    entries, statuses = [], []
    for dump in dumps:
        if not dump.kind.startswith("fr_"):
            continue
        try:
            record = flight_recorder.read_dump(dump.read(), dump.kind.removeprefix("fr_"))
        except ValueError as reason:
            refused.append(SkippedFile(dump.name, str(reason)))
            continue
        try:
            tables = flight_recorder.dump_tables(record, dump.name, by_path.get(dump.name))
        except (RecursionError, TypeError, ValueError, pl.exceptions.PolarsError) as error:
            refused.append(SkippedFile(dump.name, f"not a readable Flight Recorder dump ({error})"))
            continue
        entries.append(tables.entries)
        statuses.append(tables.status)
    stacks, unranked = _stacks(dumps, by_path, events)
    # a rank dumped as pickle and as JSON: the pickle records the Python stack of each entry
    pickles = [dump.name for dump in dumps if dump.kind == "fr_pickle"]
    pickles_first = [~pl.col("file").is_in(pickles), pl.col("file")]
    return Dumps(
        stacks=stacks,
        flight=_once_per_rank(
            pl.concat(entries) if entries else _empty(flight_recorder.ENTRY_SCHEMA),
            order=pickles_first,
        ),
        flight_status=_once_per_rank(
            pl.concat(statuses) if statuses else _empty(flight_recorder.STATUS_SCHEMA),
            order=pickles_first,
        ),
        refused=tuple(refused),
        unranked=unranked,
    )


# which dump of a rank is used when there are several (lower first)
FORM_PREFERENCE = {"pyspy_text": 0, "pyspy_json": 1, "faulthandler": 2, "gdb_pybt": 3}
# the tool each form comes from, as findings name it
TOOLS = {"faulthandler": "faulthandler", "gdb_pybt": "gdb"}


def _stacks(
    dumps: tuple[DumpFile, ...], by_path: dict[str, int | None], events: pl.DataFrame
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The stacks of each rank (once), and those of the processes no rank claims."""
    parts = [
        _forms(pyspy.text_frames(_numbered_lines(_of(dumps, "pyspy_text"))), "pyspy_text"),
        _forms(
            faulthandler.faulthandler_frames(_numbered_lines(_of(dumps, "faulthandler"))),
            "faulthandler",
        ),
        _forms(gdb_pybt.gdb_frames(_numbered_lines(_of(dumps, "gdb_pybt"))), "gdb_pybt"),
        *(
            _forms(pyspy.json_frames(dump.read(), dump.name), "pyspy_json")
            for dump in _of(dumps, "pyspy_json")
        ),
        *_server_stacks(_of(dumps, "debug_server")),
    ]
    frames = pl.concat([part for part in parts if not part.is_empty()] or parts[:1])
    if frames.is_empty():
        nothing = _empty(pyspy.FRAME_SCHEMA).with_columns(
            pl.lit(False).alias("is_worker"), pl.lit(None, pl.String).alias("tool")
        )
        return nothing, nothing
    frames = _spread_over_ranges(frames, by_path)
    known = events.filter(pl.col("pid").is_not_null() & pl.col("rank").is_not_null())
    pid_rank = dict(known.group_by("pid").agg(pl.col("rank").first()).iter_rows())
    in_file = pl.col("file").replace_strict(by_path, default=None, return_dtype=pl.Int32)
    own = frames.with_columns(
        pl.coalesce(
            "section_rank",
            pl.when(pl.col("parent_pid").is_null()).then(pl.coalesce("_range_rank", in_file)),
            "command_rank",
            pl.col("pid").replace_strict(pid_rank, default=None, return_dtype=pl.Int32),
        ).alias("rank")
    )
    ranked = (
        own.filter(pl.col("rank").is_not_null() & pl.col("pid").is_not_null())
        .group_by("file", "pid")
        .agg(pl.col("rank").first().alias("_parent_rank"))
        .rename({"pid": "parent_pid"})
    )
    attributed = own.join(ranked, on=["file", "parent_pid"], how="left").with_columns(
        pl.col("_parent_rank").is_not_null().alias("is_worker"),
        pl.coalesce("_parent_rank", "rank").alias("rank"),
    )
    chosen = _once_per_rank(
        attributed.filter(pl.col("rank").is_not_null() & ~pl.col("is_worker")),
        order=[pl.col("_form"), pl.col("file").rank("dense", descending=True)],
    )
    files = chosen.select("rank", "file").unique()
    scratch = ("_form", "_parent_rank", "section_rank", "_range_rank")
    ranked_stacks = attributed.join(files, on=["rank", "file"], how="semi").drop(*scratch)
    unranked = attributed.filter(pl.col("rank").is_null()).drop(*scratch)
    return ranked_stacks, unranked


# A dump that stands for a range of ranks with the same stack (sgl-project/sglang#22607's
# `tp1-3.log` beside `rank0.log`): a rank word, then `first-last` at the end of the name.
RANK_RANGE = r"(?i)(?:^|[/_.-])(?:ranks?|tp|dp|pp|r)_?(\d{1,6})-(\d{1,6})(?:\.\w+)?$"
LONGEST_RANGE = 4096


def _spread_over_ranges(frames: pl.DataFrame, by_path: dict[str, int | None]) -> pl.DataFrame:
    """The frames of a dump named for a range of ranks, once for each rank of it
    (`_range_rank`; null for the other dumps)."""
    spans: dict[str, list[int]] = {}
    for name, rank in by_path.items():
        found = re.search(RANK_RANGE, name)
        if rank is None and found:
            first, last = int(found[1]), int(found[2])
            if first < last and last - first < LONGEST_RANGE:
                spans[name] = list(range(first, last + 1))
    if not spans:
        return frames.with_columns(pl.lit(None, pl.Int32).alias("_range_rank"))
    ranges = pl.DataFrame(
        {"file": list(spans), "_range_rank": list(spans.values())},
        schema={"file": pl.String, "_range_rank": pl.List(pl.Int32)},
    ).explode("_range_rank")
    return frames.join(ranges, on="file", how="left")


def _of(dumps: tuple[DumpFile, ...], kind: str) -> list[DumpFile]:
    return [dump for dump in dumps if dump.kind == kind]


def _forms(frames: pl.DataFrame, kind: str, section_rank: pl.Series | None = None) -> pl.DataFrame:
    return frames.with_columns(
        pl.lit(FORM_PREFERENCE[kind], pl.Int8).alias("_form"),
        pl.lit(TOOLS.get(kind, "py-spy")).alias("tool"),
        (section_rank if section_rank is not None else pl.lit(None, pl.Int32)).alias(
            "section_rank"
        ),
    )


def _server_stacks(dumps: list[DumpFile]) -> list[pl.DataFrame]:
    """The stacks in the debug server's files, each with its section's rank."""
    if not dumps:
        return []
    lines = debug_server.sections(_numbered_lines(dumps))
    at_line = lines.select("file", "line", "section_rank")
    found = []
    for handler, kind, reader in (
        ("pyspy_dump", "pyspy_text", pyspy.text_frames),
        ("dump_traceback", "faulthandler", faulthandler.faulthandler_frames),
    ):
        section = lines.filter(pl.col("handler") == handler).select("file", "line", "text")
        frames = reader(section).join(at_line, on=["file", "line"], how="left")
        found.append(_forms(frames.drop("section_rank"), kind, frames.get_column("section_rank")))
    return found


def _once_per_rank(
    table: pl.DataFrame, order: list[pl.Expr] | None = None, per: tuple[str, ...] = ("rank",)
) -> pl.DataFrame:
    """Rows of one dump per `per`, the first by `order` (by default, by file name): a rank
    dumped in two forms is counted once."""
    if table.is_empty():
        return table
    keys = order if order is not None else [pl.col("file")]
    chosen = (
        table.with_columns(*(key.alias(f"_key{index}") for index, key in enumerate(keys)))
        .select(*per, "file", *(f"_key{index}" for index in range(len(keys))))
        .unique()
        .sort(*(f"_key{index}" for index in range(len(keys))), "file")
        .group_by(*per, maintain_order=True)
        .agg(pl.col("file").first())
    )
    return table.join(chosen, on=[*per, "file"], how="semi")


def _numbered_lines(dumps: list[DumpFile]) -> pl.DataFrame:
    """`file, line, text` of text dumps (invalid UTF-8 replaced)."""
    if not dumps:
        return pl.DataFrame(schema={"file": pl.String, "line": pl.UInt32, "text": pl.String})
    frames = []
    for dump in dumps:
        text = unstamped(dump.read()).decode("utf-8", "replace")
        frames.append(
            pl.DataFrame({"text": text.splitlines()}).select(
                pl.lit(dump.name).alias("file"),
                pl.int_range(1, pl.len() + 1, dtype=pl.UInt32).alias("line"),
                "text",
            )
        )
    return pl.concat(frames)
