"""Turn numbered lines into the event table: frame, parse, attribute, timestamp, conform."""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from logforensics import registry
from logforensics.attribution import attribute
from logforensics.framing import frame_lines
from logforensics.process_map import attribute_by_process
from logforensics.schema import conform, empty_events

LINE_COLUMNS = ["file", "line", "text", "message", "prefix_rank", "prefix_local_rank"]


@dataclass(frozen=True, slots=True)
class EventTable:
    events: pl.DataFrame
    recognised_lines: int  # distinct input lines at least one parser turned into an event


@dataclass(frozen=True, slots=True)
class ParsedBatch:
    """What one batch of whole files leaves behind once its lines are dropped."""

    found: pl.DataFrame  # parser rows with their line columns, not yet attributed
    kept_lines: pl.DataFrame  # the framed lines attribution still needs (events, launch lines)
    # per file: lines, blank_lines, recognised_lines, last_line, last_text
    file_stats: pl.DataFrame

    def of_files(self, files: set[str]) -> ParsedBatch:
        """The part of the batch that comes from `files`."""
        keep = pl.col("file").is_in(list(files))
        return ParsedBatch(
            found=self.found.filter(keep) if self.found.width else self.found,
            kept_lines=self.kept_lines.filter(keep),
            file_stats=self.file_stats.filter(keep),
        )


def build_events(lines: pl.DataFrame) -> EventTable:
    """Run every registered parser over `lines` (`file, line, text`) into one event table."""
    return finish_events([parse_batch(lines)], lines.get_column("file").unique().to_list())


def parse_batch(lines: pl.DataFrame, own: tuple[int, int] | None = None) -> ParsedBatch:
    """Frame and parse the lines of some whole files, or of one block of a large file: then
    `own` is the first and last line the block answers for, the lines around it are context
    (events and counts of the block come from its own lines only)."""
    framed = frame_lines(lines)
    parts: list[pl.DataFrame] = []
    recognised: list[pl.DataFrame] = []
    for parser in registry.parsers():
        if not parser.residual:
            _run(parser, _candidates(framed, parser), parts, recognised)
    for parser in registry.parsers():
        if parser.residual:
            _run(parser, _residual(framed, parts, recognised), parts, recognised)
    found = pl.concat(parts, how="diagonal_relaxed") if parts else pl.DataFrame()
    if "end_line" in found.columns:
        found = _with_end_text(found, lines)
    event_lines = found.select("file", "line").unique() if parts else None
    # Attribution reads the framed form of the event lines and any launch command line.
    launch_lines = pl.col("message").str.contains("--n", literal=True)
    kept = framed.filter(launch_lines)
    if event_lines is not None:
        kept = pl.concat([kept, framed.join(event_lines, on=["file", "line"])]).unique(
            ["file", "line"], maintain_order=True
        )
    recognised_rows = pl.concat(recognised).unique() if recognised else None
    if own is not None:
        in_block = pl.col("line").is_between(own[0], own[1])
        found = found.filter(in_block) if parts else found
        kept = kept.filter(in_block)
        lines = lines.filter(in_block)
        recognised_rows = recognised_rows.filter(in_block) if recognised_rows is not None else None
    stats = line_stats(lines)
    recognised = (
        recognised_rows.group_by("file").agg(pl.len().cast(pl.Int64).alias("recognised_lines"))
        if recognised_rows is not None
        else pl.DataFrame(schema={"file": pl.String, "recognised_lines": pl.Int64})
    )
    stats = stats.join(recognised, on="file", how="left").with_columns(
        pl.col("recognised_lines").fill_null(0)
    )
    return ParsedBatch(
        found=_detached(found), kept_lines=_detached(kept), file_stats=_detached(stats)
    )


def _run(
    parser: registry.LineParser,
    candidates: pl.DataFrame,
    parts: list[pl.DataFrame],
    recognised: list[pl.DataFrame],
) -> None:
    """Parse `candidates` with `parser`; add its events to `parts` and its lines to
    `recognised`."""
    if candidates.is_empty():
        return
    found = parser.parse(candidates)
    if found.is_empty():
        return
    recognised.append(found.select("file", "line"))
    found = found.filter(pl.col("event").is_not_null())
    if found.is_empty():
        return
    line_columns = candidates.select(LINE_COLUMNS)
    found = found.drop(
        [c for c in LINE_COLUMNS if c in found.columns and c not in ("file", "line")]
    )
    found = found.join(line_columns, on=["file", "line"], how="left")
    found = found.with_columns(pl.lit(parser.name).alias("parser"))
    if "family" not in found.columns:
        found = found.with_columns(pl.lit(parser.name).alias("family"))
    parts.append(found)


def _residual(
    framed: pl.DataFrame, parts: list[pl.DataFrame], recognised: list[pl.DataFrame]
) -> pl.DataFrame:
    """The lines no parser recognised, of the files that print no stage marks."""
    marked_files = [
        part.filter(pl.col("event") == "stage").get_column("file").unique() for part in parts
    ]
    with_marks = pl.concat(marked_files) if marked_files else pl.Series("file", [], pl.String)
    rest = framed.filter(~pl.col("file").is_in(with_marks.implode()))
    if rest.is_empty() or not recognised:
        return rest
    return rest.join(pl.concat(recognised).unique(), on=["file", "line"], how="anti")


def _with_end_text(found: pl.DataFrame, lines: pl.DataFrame) -> pl.DataFrame:
    """The text of a multi-line event's last line (a traceback's exception line), for
    evidence that quotes what happened, not only where the block began."""
    last = lines.select("file", pl.col("line").alias("end_line"), pl.col("text").alias("end_text"))
    has_end = pl.col("end_line").is_not_null() & (pl.col("end_line") != pl.col("line"))
    with_end = found.filter(has_end).join(last, on=["file", "end_line"], how="left")
    return pl.concat([found.filter(~has_end.fill_null(False)), with_end], how="diagonal_relaxed")


def _detached(frame: pl.DataFrame) -> pl.DataFrame:
    """A copy that owns its strings. Polars string columns are views into the buffers they
    were cut from: a few event rows would otherwise keep a whole batch's text in memory."""
    if frame.is_empty():
        return frame
    return pl.from_arrow(frame.to_arrow(compat_level=pl.CompatLevel.oldest()))


def line_stats(lines: pl.DataFrame) -> pl.DataFrame:
    """Per file: line counts and its last non-blank line."""
    is_blank = pl.col("text").str.strip_chars() == ""
    return lines.group_by("file").agg(
        pl.len().cast(pl.Int64).alias("lines"),
        is_blank.sum().cast(pl.Int64).alias("blank_lines"),
        pl.col("line").filter(~is_blank).last().alias("last_line"),
        pl.col("text").filter(~is_blank).last().alias("last_text"),
    )


def finish_events(batches: list[ParsedBatch], file_names: list[str]) -> EventTable:
    """Attribute, time and conform the events of every batch together: ranks are inferred from
    all files at once (a node's offset, a file's single writer)."""
    recognised_lines = sum(
        int(batch.file_stats.get_column("recognised_lines").sum()) for batch in batches
    )
    parts = [batch.found for batch in batches if batch.found.height]
    if not parts:
        return EventTable(empty_events(), recognised_lines)
    events = pl.concat(parts, how="diagonal_relaxed")
    kept = pl.concat([batch.kept_lines for batch in batches], how="diagonal_relaxed")
    events = attribute(events, file_names, kept).drop("prefix_rank", "prefix_local_rank")
    events = attribute_by_process(events)
    events = _glog_times(events)
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


# glog's header on torch's C++ lines and torchrun's agent lines: `[E1218 20:27:21.426415540 `,
# `E0801 13:23:20.000000 32974 ...`. It has no year.
GLOG_TIME = r"^\[?[IWEF](\d{4} \d{2}:\d{2}:\d{2}(?:\.\d{1,6})?)\d*[ \]]"


def _glog_times(events: pl.DataFrame) -> pl.DataFrame:
    """Times for glog lines, the year taken from dated lines of the same file (the only year
    that file can be in, barring a New Year's Eve run). Files with no dated line keep none."""
    years = (
        events.filter(pl.col("timestamp").is_not_null())
        .group_by("file")
        .agg(pl.col("timestamp").dt.year().max().alias("_year"))
    )
    if years.is_empty():
        return events
    glog = pl.col("message").str.extract(GLOG_TIME, 1)
    dated = pl.concat_str(pl.col("_year").cast(pl.String), glog, separator="").str.to_datetime(
        "%Y%m%d %H:%M:%S%.f", strict=False, time_unit="us"
    )
    return (
        events.join(years, on="file", how="left")
        .with_columns(pl.coalesce(pl.col("timestamp"), dated).alias("timestamp"))
        .drop("_year")
    )
