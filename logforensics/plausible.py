"""Numbers read from logs are data, not sizes: which ranks, world sizes and per-rank lists the
analysis believes.

- A world size (a mapping print's `'world_size'`, `world size: N`, NCCL's `nranks`) is
  believed from 1 to MAX_WORLD_SIZE (2**20 = 1,048,576 ranks, about ten times the largest
  training jobs run so far). The logs of a large job may hold a few ranks' files only, so a
  world size is not judged against the ranks seen.
- A rank (a line's own, a peer it names, the ranks a monitored barrier or desync report
  lists) is believed from 0 to the largest believed world size the job states, minus one (an
  elastic job may grow: not the size most lines state); with none stated, up to
  MAX_WORLD_SIZE - 1.
- A per-rank list (`loader sizes: [...]`, one number per rank) is believed when it is no
  longer than that world size; with none stated, than LIST_SLACK times the ranks the logs
  show (the highest rank seen + 1), and never less than MIN_LIST_LIMIT.

Whatever is not believed is left out of the job (the rows of the lines that state it dropped,
as if the lines were not there; a rank that was only inferred forgotten) and kept in
`Screened.flagged`, which `rules/implausible_number.py` quotes. Nothing is then sized by more
than MAX_WORLD_SIZE ranks, whatever a line prints.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

MAX_WORLD_SIZE = 1 << 20
# A world size is log text: ranks are listed one by one (a range made from it) only up to
# this many; past it a finding counts them and names none.
MAX_LISTED_RANKS = 65_536
LIST_SLACK = 8
MIN_LIST_LIMIT = 64
# The `rank_from` of a rank written in the line itself; the other sources infer it (a path, a
# node's offset): such a line is kept, without the rank.
STATED_RANK_SOURCES = ("prefix", "content")
# The per-rank lists: events whose `values` hold one number per rank of the world.
PER_RANK_LISTS = ("loader_sizes",)
# Events whose `values` are ranks (the ranks a monitored barrier or a desync report names).
RANK_LISTS = ("barrier_failed", "desync_report")

FLAGGED_SCHEMA: dict[str, pl.DataType] = {
    "file": pl.String(),
    "line": pl.UInt32(),
    "text": pl.String(),  # null for a stage mark (its text is read back when quoted)
    "rank": pl.Int32(),  # the writer's rank, when believed
    "number": pl.String(),  # rank, peer_rank, world_size, nranks or list
    "value": pl.Int64(),  # the number as read (a list: its length)
    "limit": pl.Int64(),  # the largest value believed (a rank: at least 0 as well)
    "source": pl.String(),  # the event or rank source that read it
    "event": pl.String(),  # the event of the line (a stage mark's: stage_mark)
}


@dataclass(frozen=True, slots=True)
class Screened:
    """The job's tables with every number not believed left out, and those numbers' lines."""

    events: pl.DataFrame
    marks: pl.DataFrame
    mark_writers: pl.DataFrame
    flagged: pl.DataFrame  # FLAGGED_SCHEMA
    rank_limit: int  # ranks below it are believed (and from 0)


def plausible_world_size(value: int | None) -> bool:
    """Whether a job can have `value` ranks."""
    return value is not None and 1 <= value <= MAX_WORLD_SIZE


def believed_world_size(column: str) -> pl.Expr:
    """True where `column` holds a world size to believe, null where it holds none."""
    return pl.col(column).is_between(1, MAX_WORLD_SIZE)


def believed_rank(column: str, limit: int) -> pl.Expr:
    """True where `column` holds a rank to believe, null where it holds none."""
    return pl.col(column).is_between(0, limit - 1)


def largest_world_size(world_sizes: pl.Series) -> int | None:
    """The largest believed world size stated: ranks below it are believed (an elastic job
    may grow, so not the size most lines state)."""
    believed = world_sizes.filter(world_sizes.is_between(1, MAX_WORLD_SIZE))
    return None if believed.is_empty() else int(believed.cast(pl.Int64).max())


def rank_limit(world_size: int | None) -> int:
    """One past the highest rank to believe."""
    if world_size is not None and plausible_world_size(world_size):
        return world_size
    return MAX_WORLD_SIZE


def list_limit(world_size: int | None, highest_rank: int | None) -> int:
    """The longest per-rank list to believe (see the module doc)."""
    if world_size is not None and plausible_world_size(world_size):
        return world_size
    shown = highest_rank + 1 if highest_rank is not None else 0
    return min(max(LIST_SLACK * shown, MIN_LIST_LIMIT), MAX_WORLD_SIZE)


def screen(events: pl.DataFrame, marks: pl.DataFrame, writers: pl.DataFrame) -> Screened:
    """Leave out of the job the numbers no job can have (see the module doc).

    A world size or `nranks` not believed is cleared (the rest of its line stays: a mapping
    print's rank and device are still good). A row whose own line states a rank, a peer rank
    or a list of ranks not believed is dropped, as if the line were not there; an inferred
    rank (from a path, a node offset) is forgotten and the row kept. A per-rank list too long
    is dropped. The tables are copied only when something is left out.
    """
    flagged = [_world_sizes_not_believed(events)]
    if flagged[0].height:
        stated_world = pl.col("world_size").is_null() | believed_world_size("world_size")
        events = events.filter(stated_world | (pl.col("event") != "world_size")).with_columns(
            pl.when(believed_world_size(name)).then(pl.col(name)).alias(name)
            for name in ("world_size", "nranks")
        )
    world = largest_world_size(events.get_column("world_size"))
    limit = rank_limit(world)
    events, ranks_flagged = _ranks_not_believed(events, limit)
    flagged.append(ranks_flagged)
    # every rank of a mark is its writer's: the few writers tell whether any mark is to go
    bad_writer = pl.col("rank").is_not_null() & ~believed_rank("rank", limit)
    if writers.select(bad_writer.any()).item():
        flagged.append(_marks_not_believed(marks, limit))
        marks = marks.filter(believed_rank("rank", limit))
        writers = writers.filter(~bad_writer)
    ranks = pl.concat([events.get_column("rank"), writers.get_column("rank")]).drop_nulls()
    longest = list_limit(world, None if ranks.is_empty() else int(ranks.max()))
    too_long = pl.col("event").is_in(PER_RANK_LISTS) & (pl.col("values").list.len() > longest)
    long_lists = events.filter(too_long)
    if long_lists.height:
        flagged.append(_flag(long_lists, "list", pl.col("values").list.len(), longest, "event"))
        events = events.filter(~too_long.fill_null(False))
    flagged_rows = pl.concat(flagged).with_columns(
        pl.when(believed_rank("rank", limit)).then(pl.col("rank")).alias("rank")
    )
    return Screened(events, marks, writers, flagged_rows, limit)


def _world_sizes_not_believed(events: pl.DataFrame) -> pl.DataFrame:
    parts = []
    for number in ("world_size", "nranks"):
        rows = events.filter(pl.col(number).is_not_null() & ~believed_world_size(number))
        parts.append(_flag(rows, number, pl.col(number), MAX_WORLD_SIZE, "event"))
    return pl.concat(parts)


def _ranks_not_believed(events: pl.DataFrame, limit: int) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The events without the ranks not believed, and the lines that held them."""
    bad_rank = pl.col("rank").is_not_null() & ~believed_rank("rank", limit)
    bad_peer = pl.col("peer_rank").is_not_null() & ~believed_rank("peer_rank", limit)
    flagged = pl.concat(
        [
            _flag(events.filter(bad_rank), "rank", pl.col("rank"), limit - 1, "rank_from"),
            _flag(events.filter(bad_peer), "peer_rank", pl.col("peer_rank"), limit - 1, "event"),
        ]
    )
    # a null in a list of ranks is a number too large for its column
    outside = ~pl.element().is_between(0, limit - 1).fill_null(False)
    listed = events.filter(
        pl.col("event").is_in(RANK_LISTS) & pl.col("values").list.eval(outside).list.any()
    )
    first_outside = pl.col("values").list.eval(pl.element().filter(outside)).list.first()
    flagged = pl.concat([flagged, _flag(listed, "rank", first_outside, limit - 1, "event")])
    if flagged.is_empty():
        return events, flagged
    stated = pl.col("rank_from").is_in(STATED_RANK_SOURCES).fill_null(True)
    kept = events.filter(~((bad_rank & stated) | bad_peer)).with_columns(
        pl.when(bad_rank).then(None).otherwise(pl.col(name)).alias(name)
        for name in ("rank", "rank_from")
    )
    if listed.height:
        place = ["file", "line", "event"]
        kept = kept.join(listed.select(place), on=place, how="anti", maintain_order="left")
    return kept, flagged


def _marks_not_believed(marks: pl.DataFrame, limit: int) -> pl.DataFrame:
    bad = marks.filter(pl.col("rank").is_not_null() & ~believed_rank("rank", limit))
    return bad.select(
        pl.col("file").cast(pl.String),
        pl.col("line").cast(pl.UInt32),
        pl.lit(None, dtype=pl.String).alias("text"),
        pl.lit(None, dtype=pl.Int32).alias("rank"),
        pl.lit("rank").alias("number"),
        pl.col("rank").cast(pl.Int64).alias("value"),
        pl.lit(limit - 1, dtype=pl.Int64).alias("limit"),
        pl.lit("stage mark").alias("source"),
        pl.lit("stage_mark").alias("event"),
    )


def _flag(rows: pl.DataFrame, number: str, value: pl.Expr, limit: int, source: str) -> pl.DataFrame:
    """FLAGGED_SCHEMA rows for event `rows` whose `number` is not believed, with the writer's
    rank (a mapping print of rank 0 that states a huge world) unless the rank is the number."""
    writer = pl.lit(None) if number == "rank" else pl.col("rank")
    return rows.select(
        pl.col("file").cast(pl.String),
        pl.col("line").cast(pl.UInt32),
        pl.col("text").cast(pl.String),
        writer.cast(pl.Int32).alias("rank"),
        pl.lit(number).alias("number"),
        value.cast(pl.Int64).alias("value"),
        pl.lit(limit, dtype=pl.Int64).alias("limit"),
        pl.col(source).cast(pl.String).alias("source"),
        pl.col("event").cast(pl.String).alias("event"),
    )
