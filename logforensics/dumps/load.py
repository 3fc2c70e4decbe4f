"""The hang dumps of a job as tables: `py-spy dump` stacks and Flight Recorder entries.

`load(dumps, events)` reads every dump the inventory found into three tables, each row
attributed to a global rank: from the dump's path (`rank3.txt`, `<prefix><rank>`), else from
the process id the logs give the rank (NCCL init lines), else (a DataLoader worker dumped with
`--subprocesses`) from its parent process. A rank dumped twice (text and JSON, plain and
`--native`) counts once: the first dump by name.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import polars as pl

from logforensics.attribution import path_ranks
from logforensics.dumps import flight_recorder, pyspy
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
        tables = flight_recorder.dump_tables(record, dump.name, by_path.get(dump.name))
        entries.append(tables.entries)
        statuses.append(tables.status)
    stacks = _stacks(dumps, by_path, events)
    return Dumps(
        stacks=stacks,
        flight=_once_per_rank(
            pl.concat(entries) if entries else _empty(flight_recorder.ENTRY_SCHEMA)
        ),
        flight_status=_once_per_rank(
            pl.concat(statuses) if statuses else _empty(flight_recorder.STATUS_SCHEMA)
        ),
        refused=tuple(refused),
    )


def _stacks(
    dumps: tuple[DumpFile, ...], by_path: dict[str, int | None], events: pl.DataFrame
) -> pl.DataFrame:
    texts = [dump for dump in dumps if dump.kind == "pyspy_text"]
    parts = []
    if texts:
        parts.append(pyspy.text_frames(_numbered_lines(texts)))
    parts.extend(
        pyspy.json_frames(dump.read(), dump.name) for dump in dumps if dump.kind == "pyspy_json"
    )
    if not parts:
        return _empty(pyspy.FRAME_SCHEMA)
    frames = pl.concat(parts).with_columns(
        pl.col("file").replace_strict(by_path, default=None, return_dtype=pl.Int32).alias("rank")
    )
    # a process the logs name (NCCL's init lines give host, pid and rank)
    known = events.filter(pl.col("pid").is_not_null() & pl.col("rank").is_not_null())
    pid_rank = dict(known.group_by("pid").agg(pl.col("rank").first()).iter_rows())
    frames = frames.with_columns(
        pl.coalesce(
            "rank", pl.col("pid").replace_strict(pid_rank, default=None, return_dtype=pl.Int32)
        ).alias("rank")
    )
    # a child process (a DataLoader worker) is its parent's rank's
    parent_rank = dict(
        frames.filter(pl.col("rank").is_not_null() & pl.col("parent_pid").is_null())
        .group_by("pid")
        .agg(pl.col("rank").first())
        .iter_rows()
    )
    frames = frames.with_columns(
        pl.when(pl.col("parent_pid").is_not_null())
        .then(pl.col("parent_pid").replace_strict(parent_rank, default=None, return_dtype=pl.Int32))
        .otherwise("rank")
        .alias("rank")
    )
    return _once_per_rank(frames.filter(pl.col("rank").is_not_null()), per=("rank", "pid"))


def _once_per_rank(table: pl.DataFrame, per: tuple[str, ...] = ("rank",)) -> pl.DataFrame:
    """Rows of one dump per `per` (the first by file name): a rank dumped in two forms is
    counted once."""
    if table.is_empty():
        return table
    chosen = (
        table.select(*per, "file").unique().sort("file").group_by(*per).agg(pl.col("file").first())
    )
    return table.join(chosen, on=[*per, "file"], how="semi")


def _numbered_lines(dumps: list[DumpFile]) -> pl.DataFrame:
    """`file, line, text` of text dumps (invalid UTF-8 replaced)."""
    frames = []
    for dump in dumps:
        text = dump.read().decode("utf-8", "replace")
        frames.append(
            pl.DataFrame({"text": text.splitlines()}).select(
                pl.lit(dump.name).alias("file"),
                pl.int_range(1, pl.len() + 1, dtype=pl.UInt32).alias("line"),
                "text",
            )
        )
    return pl.concat(frames)
