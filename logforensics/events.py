"""Turn numbered lines into the event table: frame, parse, attribute, timestamp, conform."""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from logforensics import registry
from logforensics.attribution import attribute
from logforensics.framing import frame_lines
from logforensics.schema import conform, empty_events

# A leading Python-logging or ISO-8601 stamp: `2026-11-29 10:00:01,234`, `2026-11-29T10:00:01Z`,
# `[2024-05-08 08:47:31,261]`. The zone, if any, is dropped: times compare within one host only.
LEADING_TIMESTAMP = r"^\[?(\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:[.,]\d{1,9})?)"

LINE_COLUMNS = ["file", "line", "text", "message", "prefix_rank", "prefix_local_rank"]


@dataclass(frozen=True, slots=True)
class EventTable:
    events: pl.DataFrame
    recognised_lines: int  # distinct input lines at least one parser turned into an event


def build_events(lines: pl.DataFrame) -> EventTable:
    """Run every registered parser over `lines` (`file, line, text`) into one event table."""
    framed = frame_lines(lines)
    parts: list[pl.DataFrame] = []
    for parser in registry.parsers():
        candidates = framed.filter(pl.col("message").str.contains_any(list(parser.literals)))
        if candidates.is_empty():
            continue
        found = parser.parse(candidates)
        if found.is_empty():
            continue
        found = found.join(candidates.select(LINE_COLUMNS), on=["file", "line"], how="left")
        found = found.with_columns(pl.lit(parser.name).alias("parser"))
        if "family" not in found.columns:
            found = found.with_columns(pl.lit(parser.name).alias("family"))
        parts.append(found)
    if not parts:
        return EventTable(empty_events(), 0)
    events = pl.concat(parts, how="diagonal_relaxed")
    file_names = lines.get_column("file").unique().to_list()
    events = attribute(events, file_names).drop("prefix_rank", "prefix_local_rank")
    events = events.with_columns(_timestamp(events))
    table = conform(events).collect().sort("file", "line", "parser")
    recognised = table.select(pl.struct("file", "line").n_unique()).item()
    return EventTable(table, recognised)


def _timestamp(events: pl.DataFrame) -> pl.Expr:
    """A parser's own timestamp, else a leading stamp on the line."""
    stamp = (
        pl.col("message")
        .str.extract(LEADING_TIMESTAMP, 1)
        .str.replace("T", " ", literal=True)
        .str.replace(",", ".", literal=True)
        .str.to_datetime("%Y-%m-%d %H:%M:%S%.f", strict=False, time_unit="us")
    )
    if "timestamp" in events.columns:
        stamp = pl.coalesce(pl.col("timestamp"), stamp)
    return stamp.alias("timestamp")
