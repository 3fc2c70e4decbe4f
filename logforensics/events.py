"""Turn numbered lines into the event table: frame, parse, attribute, timestamp, conform."""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from logforensics import registry
from logforensics.attribution import attribute
from logforensics.framing import frame_lines
from logforensics.process_map import attribute_by_process
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
    recognised: list[pl.DataFrame] = []
    for parser in registry.parsers():
        candidates = _candidates(framed, parser)
        if candidates.is_empty():
            continue
        found = parser.parse(candidates)
        if found.is_empty():
            continue
        recognised.append(found.select("file", "line"))
        found = found.filter(pl.col("event").is_not_null())
        if found.is_empty():
            continue
        line_columns = candidates.select(LINE_COLUMNS)
        found = found.drop(
            [c for c in LINE_COLUMNS if c in found.columns and c not in ("file", "line")]
        )
        found = found.join(line_columns, on=["file", "line"], how="left")
        found = found.with_columns(pl.lit(parser.name).alias("parser"))
        if "family" not in found.columns:
            found = found.with_columns(pl.lit(parser.name).alias("family"))
        parts.append(found)
    recognised_lines = pl.concat(recognised).unique().height if recognised else 0
    if not parts:
        return EventTable(empty_events(), recognised_lines)
    events = pl.concat(parts, how="diagonal_relaxed")
    file_names = lines.get_column("file").unique().to_list()
    events = attribute(events, file_names, framed).drop("prefix_rank", "prefix_local_rank")
    events = attribute_by_process(events)
    events = events.with_columns(_timestamp(events))
    table = conform(events).collect().sort("file", "line", "parser")
    return EventTable(table, recognised_lines)


def _candidates(framed: pl.DataFrame, parser: registry.LineParser) -> pl.DataFrame:
    is_candidate = pl.col("message").str.contains_any(list(parser.literals))
    if not parser.context_after:
        return framed.filter(is_candidate).with_columns(pl.lit(True).alias("candidate"))
    marked = framed.with_columns(is_candidate.alias("candidate"))
    last_candidate = pl.when(pl.col("candidate")).then(pl.col("line")).forward_fill().over("file")
    return marked.filter(
        last_candidate.is_not_null() & (pl.col("line") - last_candidate <= parser.context_after)
    )


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
