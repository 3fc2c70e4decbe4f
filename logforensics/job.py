"""Everything the rules may read about one analysed job, derived once."""

from __future__ import annotations

from dataclasses import dataclass, field

import polars as pl

from logforensics.attempts import last_attempts
from logforensics.attribution import path_ranks
from logforensics.dumps.in_logs import with_log_stacks
from logforensics.dumps.load import Dumps
from logforensics.dumps.load import load as load_dumps
from logforensics.events import EventTable, empty_line_writers, empty_mark_writers, empty_marks
from logforensics.intake import Inventory, read_lines_at
from logforensics.plausible import FLAGGED_SCHEMA, believed_rank, screen
from logforensics.progress import Progress, build_progress
from parsers.launch import states_one_node


@dataclass(frozen=True, slots=True)
class WorldSize:
    value: int
    source: str  # which event family stated it
    file: str
    line: int
    text: str


@dataclass(frozen=True, slots=True)
class Job:
    events: pl.DataFrame
    inventory: Inventory
    file_stats: pl.DataFrame  # file, lines, blank_lines, last_line, last_text, rank, rank_from
    world_size: WorldSize | None
    progress: Progress | None
    # the writers of stage marks (events.MARK_WRITER_SCHEMA): the marks themselves live in
    # `progress`, without their text
    mark_writers: pl.DataFrame = field(default_factory=empty_mark_writers)
    # file, rank, lines, last_line: the ranks launcher prefixes name, whatever their lines say
    line_writers: pl.DataFrame = field(default_factory=empty_line_writers)
    marks: pl.DataFrame = field(default_factory=empty_marks)  # every mark read (MARK_SCHEMA)
    # the lines whose ranks, world sizes or per-rank lists are not believed, left out of all
    # the above (plausible.FLAGGED_SCHEMA)
    implausible: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(schema=FLAGGED_SCHEMA))
    # hang dumps beside the logs: py-spy stacks and Flight Recorder entries, by rank
    dumps: Dumps = field(default_factory=Dumps)
    # failures and progress a console printed before its agent restarted the workers
    earlier_attempts: pl.DataFrame = field(default_factory=pl.DataFrame)

    @property
    def ranks_seen(self) -> tuple[int, ...]:
        """Ranks with at least one event, a stage mark or a file of their own."""
        found = [
            self.events.get_column("rank"),
            self.file_stats.get_column("rank"),
            self.mark_writers.get_column("rank"),
            self.line_writers.get_column("rank"),
        ]
        return tuple(sorted(set().union(*(set(c.drop_nulls().unique().to_list()) for c in found))))

    def nothing_failed(self) -> bool:
        """Whether no line of the logs reports an error (no event of severity `error`)."""
        return self.events.filter(pl.col("severity") == "error").is_empty()

    def made_progress(self) -> bool:
        """Whether the logs hold any progress a rank made (a stage mark, a progress line)."""
        return self.progress is not None and not self.progress.marks.is_empty()

    def one_node(self) -> bool:
        """Whether the logs show a single node: one host at most, and no world larger than
        the local ranks they show. A process's index on the node (its local rank, its GPU's
        number under the launcher's one-process-per-GPU convention) is then its rank."""
        if self.events.get_column("host").drop_nulls().n_unique() > 1:
            return False
        local = self.events.get_column("local_rank").drop_nulls()
        world = self.world_size
        if world is not None and world.source == "launch" and states_one_node(world.text):
            return True  # the world a one-node launch command states is that node's
        return world is None or local.is_empty() or world.value <= int(local.max()) + 1

    def span_lines(self, rows: pl.DataFrame) -> pl.DataFrame:
        """`file, line, text, _start`: every line of each row's span (`line` to `end_line`, a
        traceback's), read again from its file, with the span's first line."""
        spans = (
            rows.filter(pl.col("end_line").is_not_null())
            .select(
                "file",
                pl.int_ranges("line", pl.col("end_line").cast(pl.Int64) + 1).alias("_at"),
                pl.col("line").alias("_start"),
            )
            .explode("_at")
            .select("file", pl.col("_at").cast(pl.UInt32).alias("line"), "_start")
        )
        return read_lines_at(self.inventory, spans.select("file", "line")).join(
            spans, on=["file", "line"]
        )

    def lines_after(self, rows: pl.DataFrame, count: int, *keep: str) -> pl.DataFrame:
        """`file, line, text` and the `keep` columns of `rows`: the `count` lines after each
        row's line in its file, read again (none past the file's end)."""
        after = rows.select(
            "file",
            pl.int_ranges(pl.col("line") + 1, pl.col("line") + 1 + count)
            .cast(pl.List(pl.UInt32))
            .alias("line"),
            *keep,
        ).explode("line")
        texts = self.quote(after.select("file", "line").unique()).select("file", "line", "text")
        return after.join(texts, on=["file", "line"]).filter(pl.col("text").is_not_null())

    def quote(self, rows: pl.DataFrame) -> pl.DataFrame:
        """`rows` (`file, line, rank`) with `text`: the lines read again from their files (a
        stage mark keeps no text of its own)."""
        if "text" in rows.columns and rows.get_column("text").null_count() == 0:
            return rows
        wanted = rows.select(pl.col("file").cast(pl.String), pl.col("line").cast(pl.UInt32))
        texts = read_lines_at(self.inventory, wanted)
        quoted = rows.drop("text", strict=False).with_columns(
            pl.col("file").cast(pl.String), pl.col("line").cast(pl.UInt32)
        )
        return quoted.join(texts, on=["file", "line"], how="left")

    def rank_facts(self) -> pl.DataFrame:
        """One row per rank seen: host, pid, device, bus_id, nccl_version (first stated) and
        the files holding its lines."""
        ranks = pl.DataFrame({"rank": list(self.ranks_seen)}, schema={"rank": pl.Int32})
        attributed = self.events.filter(pl.col("rank").is_not_null())
        facts = attributed.group_by("rank").agg(
            *(
                pl.col(name).drop_nulls().first().alias(name)
                for name in ("host", "pid", "device", "bus_id", "nccl_version")
            )
        )
        # (rank, file) pairs from events, own files and mark writers, in one long table: a
        # list per rank is built once, sorted, not merged per row
        pairs = pl.concat(
            [
                frame.filter(pl.col("rank").is_not_null()).select(
                    pl.col("rank").cast(pl.Int32), pl.col("file").cast(pl.String)
                )
                for frame in (attributed, self.file_stats, self.mark_writers, self.line_writers)
            ]
        )
        files = (
            pairs.unique().sort("rank", "file").group_by("rank", maintain_order=True).agg("file")
        )
        return (
            ranks.join(facts, on="rank", how="left")
            .join(files.rename({"file": "files"}), on="rank", how="left")
            .with_columns(pl.col("files").fill_null(pl.lit([], dtype=pl.List(pl.String))))
            .sort("rank")
        )


def build_job(table: EventTable, inventory: Inventory, line_stats: pl.DataFrame) -> Job:
    """`line_stats`: per file `lines, blank_lines, last_line, last_text` (events.line_stats).
    The ranks, world sizes and per-rank lists no job can have are left out first (see
    `plausible`): nothing below is sized by a number a line prints."""
    screened = screen(table.events, table.marks, table.mark_writers)
    attempts = last_attempts(screened.events, screened.marks)
    events = attempts.events
    line_writers = table.line_writers.filter(believed_rank("rank", screened.rank_limit))
    writers = pl.concat(
        [
            screened.mark_writers.select("file", "rank", "rank_from"),
            line_writers.select("file", "rank", pl.lit("prefix").alias("rank_from")),
        ]
    )
    return Job(
        events=events,
        inventory=inventory,
        file_stats=_file_stats(events, line_stats, writers, screened.rank_limit),
        world_size=_world_size(events),
        progress=build_progress(attempts.marks, events, screened.mark_writers),
        mark_writers=screened.mark_writers,
        line_writers=line_writers,
        marks=attempts.marks,
        earlier_attempts=attempts.earlier,
        implausible=screened.flagged,
        dumps=with_log_stacks(load_dumps(inventory.dumps, events), events),
    )


def _file_stats(
    events: pl.DataFrame, stats: pl.DataFrame, writers: pl.DataFrame, rank_limit: int
) -> pl.DataFrame:
    """Per file: line counts, the last non-blank line, and the rank the whole file belongs to
    (a rank in its path only when believed)."""
    # A file belongs to a rank when every rank-attributed event or mark in it names it.
    stated = pl.concat(
        [
            events.select("file", "rank", "rank_from"),
            writers.select("file", "rank", "rank_from"),
        ]
    )
    said = (
        stated.filter(pl.col("rank").is_not_null())
        .group_by("file")
        .agg(pl.col("rank").unique().alias("ranks"), pl.col("rank_from").first())
    )
    owner = said.filter(pl.col("ranks").list.len() == 1).select(
        "file", pl.col("ranks").list.first().alias("rank"), "rank_from"
    )
    # a file processes of several ranks wrote in (their NCCL lines, their launcher prefixes) is
    # no one rank's, whatever its name says; a line's words may name other ranks
    by_process = stated.filter(pl.col("rank_from").is_in(["process", "prefix"]))
    shared = (
        by_process.group_by("file")
        .agg(pl.col("rank").drop_nulls().n_unique().alias("_writers"))
        .filter(pl.col("_writers") > 1)
        .get_column("file")
    )
    by_path = path_ranks(stats.get_column("file").to_list()).select(
        "file",
        pl.when(believed_rank("path_rank", rank_limit) & ~pl.col("file").is_in(shared.implode()))
        .then(pl.col("path_rank"))
        .alias("rank_by_path"),
        pl.when(pl.col("path_rank_local_only"))
        .then(pl.lit("path_local"))
        .otherwise(pl.lit("path"))
        .alias("from_path"),
    )
    stats = stats.join(owner, on="file", how="left").join(by_path, on="file", how="left")
    return stats.select(
        "file",
        "lines",
        "blank_lines",
        "last_line",
        "last_text",
        pl.coalesce("rank", "rank_by_path").cast(pl.Int32).alias("rank"),
        pl.when(pl.col("rank").is_not_null())
        .then(pl.col("rank_from"))
        .when(pl.col("rank_by_path").is_not_null())
        .then(pl.col("from_path"))
        .alias("rank_from"),
    ).sort("file")


def _world_size(events: pl.DataFrame) -> WorldSize | None:
    """The world size most events state (ties go to the larger value); else the size of the
    largest NCCL communicator, which is the world (its init records, or those of its teardown:
    `comm 0x3d5abb40 rank 1 nranks 2 cudaDev 1 busId 99000 - Abort COMPLETE`). `events` are
    screened: every size in them is believed (at most MAX_WORLD_SIZE)."""
    stated = events.filter(pl.col("world_size").is_not_null())
    if stated.is_empty():
        records = pl.col("event").is_in(["nccl_init", "nccl_abort"])
        inits = events.filter(records & pl.col("nranks").is_not_null())
        if inits.is_empty():
            return None
        largest = inits.filter(pl.col("nranks") == inits.get_column("nranks").max()).row(
            0, named=True
        )
        return WorldSize(
            int(largest["nranks"]), "nccl", largest["file"], largest["line"], largest["text"]
        )
    counts = stated.group_by("world_size").len().sort("len", "world_size", descending=True)
    value = int(counts.item(0, "world_size"))
    first = stated.filter(pl.col("world_size") == value).row(0, named=True)
    return WorldSize(value, first["family"], first["file"], first["line"], first["text"])
