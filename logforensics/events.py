"""Turn numbered lines into the event table: frame, parse, attribute, timestamp, conform."""

from __future__ import annotations

import io
from collections.abc import Iterator
from dataclasses import dataclass, field

import polars as pl

from logforensics import mark_pass, registry
from logforensics.announced import with_announced_ranks
from logforensics.attribution import GLOG_STAMP, attribute, glog_clock, stamp_of
from logforensics.framing import frame_lines
from logforensics.intake import LogFile, read_lines
from logforensics.literals import holds_any
from logforensics.process_map import attribute_by_process
from logforensics.schema import conform, empty_events
from logforensics.wrappers import peel_and_frame
from parsers.elastic import CARRIED_EXCEPTION

LINE_COLUMNS = ["file", "line", "text", "message", "prefix_rank", "prefix_local_rank"]


@dataclass(frozen=True, slots=True)
class EventTable:
    events: pl.DataFrame
    recognised_lines: int  # distinct input lines at least one parser turned into an event
    marks: pl.DataFrame = field(default_factory=lambda: empty_marks())  # progress marks
    mark_writers: pl.DataFrame = field(default_factory=lambda: empty_mark_writers())
    line_writers: pl.DataFrame = field(default_factory=lambda: empty_line_writers())


# The narrow progress table: one row per stage mark, only what placing it in the run needs.
# A mark's text is read again from its file when a finding quotes it.
MARK_SCHEMA: dict[str, pl.DataType] = {
    "file": pl.Categorical(),
    "line": pl.UInt32(),
    "rank": pl.Int32(),
    "step": pl.Int64(),
    "stage": pl.Categorical(),
    "epoch": pl.Int64(),
}
# Per writer of marks (a file, the launcher prefixes, the rank): how many, the last one and
# when; what attribution and file ownership need of them, without the marks themselves.
MARK_WRITER_SCHEMA: dict[str, pl.DataType] = {
    "file": pl.String(),
    "prefix_node": pl.String(),
    "prefix_host": pl.String(),
    "prefix_local_rank": pl.Int32(),
    "rank": pl.Int32(),
    "rank_from": pl.String(),
    "marks": pl.UInt32(),
    "last_line": pl.UInt32(),
    "last_text": pl.String(),
    "last_time": pl.Datetime("us"),
}


def empty_marks() -> pl.DataFrame:
    return pl.DataFrame(schema=MARK_SCHEMA)


def empty_mark_writers() -> pl.DataFrame:
    return pl.DataFrame(schema=MARK_WRITER_SCHEMA)


# Per rank a launcher prefix names in a file (`[rank3]:`, Open MPI's `[1,3]<stdout>:`): how many
# lines it wrote there and its last. A rank whose lines no parser knows was still there.
LINE_WRITER_SCHEMA: dict[str, pl.DataType] = {
    "file": pl.String(),
    "rank": pl.Int32(),
    "lines": pl.UInt32(),
    "last_line": pl.UInt32(),
}


def empty_line_writers() -> pl.DataFrame:
    return pl.DataFrame(schema=LINE_WRITER_SCHEMA)


@dataclass(frozen=True, slots=True)
class ParsedBatch:
    """What one batch of whole files leaves behind once its lines are dropped."""

    found: pl.DataFrame  # parser rows with their line columns, not yet attributed
    kept_lines: pl.DataFrame  # the framed lines attribution still needs (events, launch lines)
    # per file: lines, blank_lines, recognised_lines, last_line, last_text
    file_stats: pl.DataFrame
    marks: pl.DataFrame = field(default_factory=lambda: empty_marks())
    mark_writers: pl.DataFrame = field(default_factory=lambda: empty_mark_writers())
    line_writers: pl.DataFrame = field(default_factory=lambda: empty_line_writers())

    def of_files(self, files: set[str]) -> ParsedBatch:
        """The part of the batch that comes from `files`."""
        if set(self.file_stats.get_column("file").to_list()) <= files:
            return self
        keep = pl.col("file").is_in(list(files))
        in_marks = pl.col("file").is_in(pl.Series(list(files), dtype=pl.Categorical).implode())
        return ParsedBatch(
            found=self.found.filter(keep) if self.found.width else self.found,
            kept_lines=self.kept_lines.filter(keep),
            file_stats=self.file_stats.filter(keep),
            marks=self.marks.filter(in_marks),
            mark_writers=self.mark_writers.filter(keep),
            line_writers=self.line_writers.filter(keep),
        )


def build_events(lines: pl.DataFrame) -> EventTable:
    """Run every registered parser over `lines` (`file, line, text`) into one event table."""
    return finish_events([parse_batch(lines)], lines.get_column("file").unique().to_list())


def parse_batch(
    lines: pl.DataFrame,
    own: tuple[int, int] | None = None,
    wrappers: dict[str, str] | None = None,
) -> ParsedBatch:
    """Frame and parse the lines of some whole files, or of one block of a large file: then
    `own` is the first and last line the block answers for, the lines around it are context
    (events and counts of the block come from its own lines only). `wrappers` are the learned
    prefixes of some of the files (see `wrappers.learned_wrappers`)."""
    stats = line_stats(lines.filter(_in_block(own)))
    return _parse(lines, stats, None, None, own, nonblank=None, wrappers=wrappers)


def parse_files(files: tuple[LogFile, ...]) -> tuple[list[ParsedBatch], tuple[str, ...]]:
    """Read and parse whole files, the plain stage marks apart from the rest (see mark_pass);
    and the files whose invalid UTF-8 was replaced. The lines left after the marks are parsed
    some files at a time (REST_BYTES of text): a batch of files that prints few marks (NCCL
    INFO) is parsed in parts."""
    read = mark_pass.read_apart(files)
    if read is None:  # some file is not valid UTF-8: read every line the careful way
        lines = read_lines(files)
        return [parse_batch(lines.frame)], lines.lossy_files
    groups = _file_groups(read.stats.get_column("file"), read.rest, REST_BYTES)
    if len(groups) == 1:
        return [_parse_read(read)], ()
    return [_parse_read(read.of_files(group)) for group in groups], ()


REST_BYTES = 32 * 2**20


def _file_groups(files: pl.Series, rest: pl.DataFrame, limit: int) -> list[set[str]]:
    """`files` in groups whose lines of `rest` hold about `limit` bytes of text each."""
    held_text = rest.group_by("file").agg(pl.col("text").str.len_bytes().sum().alias("size"))
    sizes = (
        files.to_frame("file")
        .join(held_text, on="file", how="left", maintain_order="left")
        .with_columns(pl.col("size").fill_null(0))
    )
    groups: list[set[str]] = [set()]
    held = 0
    for name, size in sizes.iter_rows():
        if held and held + size > limit:
            groups.append(set())
            held = 0
        groups[-1].add(name)
        held += size
    return groups


def _parse_read(read: mark_pass.MarkPass) -> ParsedBatch:
    """Parse what the mark pass left: each file's last line taken from its other lines or,
    when a mark, from the file's end."""
    stats = read.stats.join(
        read.tails.select("file", pl.col("line").alias("last_line"), pl.col("text")),
        on=["file", "last_line"],
        how="left",
    ).join(
        read.rest.select("file", pl.col("line").alias("last_line"), pl.col("text")),
        on=["file", "last_line"],
        how="left",
    )
    stats = stats.select(
        "file",
        "lines",
        "blank_lines",
        "last_line",
        pl.coalesce("text", "text_right").alias("last_text"),
    )
    nonblank = stats.select(
        "file", (pl.col("lines") - pl.col("blank_lines")).cast(pl.UInt32).alias("_nonblank")
    )
    plain = (read.marks, read.writers.drop("_file"))
    return _parse(read.rest, stats, plain, read.tails, None, nonblank)


def _parse(
    lines: pl.DataFrame,
    stats: pl.DataFrame,
    plain: tuple[pl.DataFrame, pl.DataFrame] | None,
    mark_texts: pl.DataFrame | None,
    own: tuple[int, int] | None,
    nonblank: pl.DataFrame | None,
    wrappers: dict[str, str] | None = None,
) -> ParsedBatch:
    """Parse `lines`; `plain` holds the marks read apart from them and their writers
    (`file, rank, marks, last_line`), `mark_texts` the text of the writers' last marks;
    `stats` counts the lines of their files, `nonblank` the non-blank ones when `lines` are
    not all of them."""
    plain_marks, plain_writers = plain if plain is not None else (empty_marks(), None)
    framed = frame_lines(lines, nonblank)
    if wrappers:
        framed = peel_and_frame(framed, wrappers)
    rest, marks = _progress_marks(framed)
    parts: list[pl.DataFrame] = []
    recognised: list[pl.DataFrame] = []
    line_parsers = [p for p in registry.parsers() if not (p.residual or p.progress)]
    for parser, candidates in _routed(rest, line_parsers):
        _run(parser, candidates, parts, recognised)
    for parser, candidates in _routed(_glued_prints(rest), line_parsers):
        _run(parser, candidates, parts, recognised)
    # a launcher's prefix with nothing after it (an empty line of the process's): the framing
    # read all there was
    prefix_only = pl.col("framing").is_not_null() & (pl.col("message").str.strip_chars() == "")
    recognised.append(rest.filter(prefix_only).select("file", "line"))
    with_marks = marks.get_column("file").unique()
    if plain_writers is not None:
        with_marks = pl.concat([with_marks, plain_writers.get_column("file")]).unique()
    for parser in registry.parsers():
        if parser.residual:
            candidates = _residual(
                rest.filter(~pl.col("file").is_in(with_marks.implode())), recognised
            )
            _run(parser, candidates, parts, recognised)
    found = pl.concat(parts, how="diagonal_relaxed") if parts else pl.DataFrame()
    if "end_line" in found.columns:
        found = with_announced_ranks(_with_end_text(found, lines), framed)
    event_lines = found.select("file", "line").unique() if parts else None
    # Attribution reads the framed form of the event lines and any launch command line.
    launch_lines = pl.col("message").str.contains("--n", literal=True)
    kept = rest.filter(launch_lines)
    if event_lines is not None:
        kept = pl.concat([kept, rest.join(event_lines, on=["file", "line"])]).unique(
            ["file", "line"], maintain_order=True
        )
    recognised_rows = pl.concat(recognised).unique() if recognised else None
    if own is not None:
        in_block = _in_block(own)
        found = found.filter(in_block) if parts else found
        kept = kept.filter(in_block)
        marks = marks.filter(in_block)
        line_writers = _line_writers(framed.filter(in_block))
        recognised_rows = recognised_rows.filter(in_block) if recognised_rows is not None else None
    else:
        line_writers = _line_writers(framed)
    texts = framed.select("file", "line", "text", "message", "prefix_time")
    if mark_texts is not None:
        texts = pl.concat(
            [
                texts,
                mark_texts.with_columns(
                    # a mark read behind a launcher's tag is stamped after it
                    pl.col("text").str.replace(mark_pass.TAG, "").alias("message"),
                    pl.lit(None, pl.Datetime("us")).alias("prefix_time"),
                ),
            ],
            how="vertical_relaxed",
        )
    writers = _mark_writers(marks, texts)
    if plain_writers is not None and plain_writers.height:
        if "rank_from" not in plain_writers.columns:
            plain_writers = plain_writers.with_columns(pl.lit("content").alias("rank_from"))
        with_text = _with_last_text(plain_writers, texts)
        writers = _merged_writers(pl.concat([writers, with_text]))
    return ParsedBatch(
        found=_detached(found),
        kept_lines=_detached(kept),
        file_stats=_detached(_file_stats(stats, recognised_rows, writers)),
        marks=pl.concat([_narrow(plain_marks), _narrow(marks)]),
        mark_writers=_detached(writers),
        line_writers=line_writers,
    )


def _glued_prints(framed: pl.DataFrame) -> pl.DataFrame:
    """The progress bars framing cut off the front of a line, each as a line of its own (with
    its line's number) and the torchrun local rank it was written under. A rank prefix that
    came after the bar is the glued line's, not the bar's (axolotl#2684: `...[29:58<12:05,
    41.59 examples/s][rank1]:[W516 ...`)."""
    glued = framed.filter(pl.col("glued").is_not_null())
    if glued.is_empty():
        return glued
    stated_after = pl.col("framing").str.contains("tqdm+", literal=True).fill_null(False)
    return glued.with_columns(
        pl.col("glued").alias("message"),
        pl.when(~stated_after).then(pl.col("prefix_rank")).alias("prefix_rank"),
        pl.col("glued_local_rank").alias("prefix_local_rank"),
        pl.lit(None, dtype=pl.String).alias("glued"),
    )


def _in_block(own: tuple[int, int] | None) -> pl.Expr:
    return pl.col("line").is_between(own[0], own[1]) if own is not None else pl.lit(True)


def _progress_marks(framed: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The lines a progress family (stage marks) reads, parsed; and the lines left for the
    other families (a mark's line is no other family's)."""
    marks = [pl.DataFrame()]
    rest = framed
    for parser in registry.parsers():
        if not parser.progress:
            continue
        is_candidate = pl.col("message").str.contains_any(list(parser.literals))
        candidates = rest.filter(is_candidate)
        if candidates.is_empty():
            continue
        found = parser.parse(candidates)
        marks.append(found)
        rest = rest.filter(~is_candidate)
        if found.height < candidates.height:  # what it did not read is offered to the others
            unread = candidates.join(found.select("file", "line"), on=["file", "line"], how="anti")
            rest = pl.concat([rest, unread]).sort("file", "line")
    found = pl.concat(marks, how="diagonal_relaxed")
    if found.is_empty():
        return rest, pl.DataFrame(schema={**MARK_SCHEMA, "file": pl.String})
    return rest, found


def _narrow(marks: pl.DataFrame) -> pl.DataFrame:
    if marks.is_empty():
        return empty_marks()
    return marks.select(
        pl.col(name).cast(dtype) if name in marks.columns else pl.lit(None, dtype=dtype).alias(name)
        for name, dtype in MARK_SCHEMA.items()
    )


def _mark_writers(marks: pl.DataFrame, texts: pl.DataFrame) -> pl.DataFrame:
    if marks.is_empty():
        return empty_mark_writers()
    writer = [
        c for c in ("file", "prefix_node", "prefix_host", "prefix_local_rank") if c in marks.columns
    ]
    writers = marks.group_by(*writer, "rank", "rank_from").agg(
        pl.len().cast(pl.UInt32).alias("marks"), pl.col("line").max().alias("last_line")
    )
    return _with_last_text(writers, texts)


def _merged_writers(writers: pl.DataFrame) -> pl.DataFrame:
    """One row per writer, where plain marks and marks read the careful way (a line the fast
    path left, e.g. with a field before the keys) share one."""
    identity = ["file", "prefix_node", "prefix_host", "prefix_local_rank", "rank", "rank_from"]
    if writers.select(identity).n_unique() == writers.height:
        return writers
    latest = pl.col("last_line").arg_max()
    return (
        writers.group_by(identity, maintain_order=True)
        .agg(
            pl.col("marks").sum(),
            pl.col("last_line").max(),
            pl.col("last_text").get(latest),
            pl.col("last_time").get(latest),
        )
        .select(writers.columns)
    )


def _with_last_text(writers: pl.DataFrame, texts: pl.DataFrame) -> pl.DataFrame:
    """`writers` with the text and time of their last mark, in MARK_WRITER_SCHEMA."""
    last = texts.join(
        writers.select("file", pl.col("last_line").alias("line")).unique(),
        on=["file", "line"],
        how="semi",
    ).select(
        "file",
        pl.col("line").alias("last_line"),
        pl.col("text").alias("last_text"),
        leading_time().alias("last_time"),
    )
    # a line may be in `texts` twice: framed with the other lines, and read again from the
    # file's end as its last one
    last = last.unique(["file", "last_line"], keep="first")
    writers = writers.join(last, on=["file", "last_line"], how="left")
    return writers.select(
        pl.col(name).cast(dtype)
        if name in writers.columns
        else pl.lit(None, dtype=dtype).alias(name)
        for name, dtype in MARK_WRITER_SCHEMA.items()
    )


def _file_stats(
    stats: pl.DataFrame, recognised_rows: pl.DataFrame | None, writers: pl.DataFrame
) -> pl.DataFrame:
    """Per file: `stats` (line counts, its last non-blank line) and the recognised lines (the
    marks its `writers` wrote among them)."""
    counted = [
        writers.group_by("file").agg(pl.col("marks").sum().cast(pl.Int64).alias("recognised_lines"))
    ]
    if recognised_rows is not None:
        counted.append(
            recognised_rows.group_by("file").agg(pl.len().cast(pl.Int64).alias("recognised_lines"))
        )
    recognised = (
        pl.concat(counted, how="vertical_relaxed")
        .group_by("file")
        .agg(pl.col("recognised_lines").sum())
    )
    return stats.join(recognised, on="file", how="left").with_columns(
        pl.col("recognised_lines").fill_null(0)
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
    # one line can hold many events (a stall report's every op and missing rank), and each
    # carries the line's text: past the first few, only its head, so that a hostile line of
    # thousands of them costs memory in proportion to its length, not its length squared
    nth = pl.int_range(pl.len()).over("file", "line")
    many = found.height > FULL_TEXT_EVENTS and bool(
        found.select((nth >= FULL_TEXT_EVENTS).any()).item()
    )
    if not many:
        found = found.join(line_columns, on=["file", "line"], how="left")
    else:
        found = found.with_row_index("_event").filter(nth < MAX_EVENTS_PER_LINE)
        whole = nth < FULL_TEXT_EVENTS
        rest = found.filter(~whole)
        heads = _heads_of(line_columns.join(rest, on=["file", "line"], how="semi"))
        found = pl.concat(
            [
                found.filter(whole).join(line_columns, on=["file", "line"], how="left"),
                rest.join(heads, on=["file", "line"], how="left"),
            ]
        )
        found = found.sort("_event").drop("_event")
    found = found.with_columns(pl.lit(parser.name).alias("parser"))
    if "family" not in found.columns:
        found = found.with_columns(pl.lit(parser.name).alias("family"))
    parts.append(found)


# The most events one parser makes of one line, those that carry the line's whole text, and
# how much of it the others keep
MAX_EVENTS_PER_LINE = 10_000
FULL_TEXT_EVENTS = 4
HEAD_CHARS = 256


def _heads_of(line_columns: pl.DataFrame) -> pl.DataFrame:
    """The lines' columns with their text cut to HEAD_CHARS."""
    return line_columns.with_columns(
        pl.col("text").str.slice(0, HEAD_CHARS), pl.col("message").str.slice(0, HEAD_CHARS)
    )


def _residual(rest: pl.DataFrame, recognised: list[pl.DataFrame]) -> pl.DataFrame:
    """The lines no parser recognised (of the files that print no stage marks)."""
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
    copy = io.BytesIO()  # (the oldest Arrow layout writes each string out, not a view)
    frame.write_ipc(copy, compat_level=pl.CompatLevel.oldest())
    copy.seek(0)
    return pl.read_ipc(copy)


def leading_time() -> pl.Expr:
    """The stamp a line starts with (Python logging, ISO 8601), else its launcher's."""
    return pl.coalesce(stamp_of(pl.col("message")), pl.col("prefix_time"))


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
    # one chunk per column: the streaming pass hands marks over in a thousand chunks, and every
    # later pass over them (progress, the rules) pays for each (256 x 3,000: 0.03 s here, about
    # 0.08 s less in build_progress alone)
    marks = pl.concat([batch.marks for batch in batches]).rechunk()
    writers = pl.concat([batch.mark_writers for batch in batches])
    line_writers = merged_line_writers([batch.line_writers for batch in batches])
    parts = [batch.found for batch in batches if batch.found.height]
    if not parts:
        return EventTable(empty_events(), recognised_lines, marks, writers, line_writers)
    events = pl.concat(parts, how="diagonal_relaxed")
    kept = pl.concat([batch.kept_lines for batch in batches], how="diagonal_relaxed")
    events = attribute(events, file_names, kept, writers).drop("prefix_rank", "prefix_local_rank")
    events = _without_copied_exceptions(attribute_by_process(events))
    events = _glog_times(events, writers)
    table = conform(events).collect().sort("file", "line", "parser")
    return EventTable(table, recognised_lines, marks, writers, line_writers)


def _without_copied_exceptions(events: pl.DataFrame) -> pl.DataFrame:
    """Events less the exceptions torchrun's summary carries for a rank whose own traceback of
    that exception is in the logs too: the summary copies what the worker printed."""
    carried = pl.col("extra").eq_missing(CARRIED_EXCEPTION)
    if not events.select((carried & (pl.col("event") == "exception")).any()).item():
        return events
    printed = (
        events.filter((pl.col("event") == "exception") & ~carried & pl.col("rank").is_not_null())
        .select("rank", "exc_type")
        .unique()
    )
    copied = (
        events.filter((pl.col("event") == "exception") & carried)
        .join(printed, on=["rank", "exc_type"], how="semi")
        .select("file", "line", "event")
    )
    return events.join(copied, on=["file", "line", "event"], how="anti")


def merged_line_writers(parts: list[pl.DataFrame]) -> pl.DataFrame:
    """Line writers of several batches, a large file's blocks added up."""
    return (
        pl.concat(parts)
        .group_by("file", "rank", maintain_order=True)
        .agg(pl.col("lines").sum(), pl.col("last_line").max())
    )


def _line_writers(framed: pl.DataFrame) -> pl.DataFrame:
    """The ranks launcher prefixes name in each file, with their line counts and last lines."""
    return (
        framed.filter(pl.col("prefix_rank").is_not_null())
        .group_by("file", pl.col("prefix_rank").alias("rank"), maintain_order=True)
        .agg(
            pl.len().cast(pl.UInt32).alias("lines"),
            pl.col("line").max().cast(pl.UInt32).alias("last_line"),
        )
        .cast(LINE_WRITER_SCHEMA)
    )


def _routed(
    framed: pl.DataFrame, parsers: list[registry.LineParser]
) -> Iterator[tuple[registry.LineParser, pl.DataFrame]]:
    """Each parser with its candidate lines (`candidate` true for a line holding one of its
    literals, false for the context lines after one). One scan of every line finds the lines
    holding any literal; each family then looks only at those, and context windows are cut
    around its hits."""
    literals = sorted({literal for parser in parsers for literal in parser.literals})
    hits = framed.filter(holds_any("message", literals))
    present = _literals_present(hits.get_column("message"), literals)
    for parser in parsers:
        if present.isdisjoint(parser.literals):
            continue  # most families have no line in a batch: no filter of their own
        holds = pl.col("message").str.contains_any(list(parser.literals))
        own = hits.filter(holds)
        if own.is_empty():
            continue
        if not parser.context_after:
            yield parser, own.with_columns(pl.lit(True).alias("candidate"))
        elif own.height * (parser.context_after + 1) * 4 < framed.height:
            yield parser, _windows(framed, own, parser.context_after)
        else:  # hits everywhere (NCCL INFO): mark them in place
            marked = framed.with_columns(holds.alias("candidate"))
            yield parser, _after_hits(marked, parser.context_after)


def _literals_present(messages: pl.Series, literals: list[str]) -> set[str]:
    """Which of `literals` occur in `messages`, every occurrence counted (one that overlaps
    or lies inside another too): one scan for all families, where a scan per family took
    13 s on 2 M NCCL INFO lines. Read in slices, so that the matches of a slice are all
    that is held at once."""
    present: set[str] = set()
    for start in range(0, messages.len(), PRESENCE_SLICE):
        matched = messages.slice(start, PRESENCE_SLICE).str.extract_many(literals, overlapping=True)
        present.update(matched.list.unique().explode().drop_nulls().unique().to_list())
    return present


PRESENCE_SLICE = 1 << 18


def _windows(framed: pl.DataFrame, hits: pl.DataFrame, after: int) -> pl.DataFrame:
    """`hits` and the `after` lines that follow each in its file (`candidate` false)."""
    hit_lines = hits.select("file", "line", pl.lit(True).alias("candidate"))
    window = hit_lines.select(
        "file", pl.int_ranges("line", pl.col("line") + after + 1, dtype=pl.UInt32).alias("line")
    ).explode("line")
    around = framed.join(window.unique(), on=["file", "line"], how="semi", maintain_order="left")
    marked = around.join(
        hit_lines, on=["file", "line"], how="left", maintain_order="left"
    ).with_columns(pl.col("candidate").fill_null(False))
    return _after_hits(marked, after)


def _after_hits(marked: pl.DataFrame, after: int) -> pl.DataFrame:
    """The rows of `marked` (with `candidate`) at most `after` lines after a candidate."""
    last_hit = pl.when(pl.col("candidate")).then(pl.col("line")).forward_fill().over("file")
    return marked.filter(last_hit.is_not_null() & (pl.col("line") - last_hit <= after))


# glog's header at the start of a message (see attribution.GLOG_STAMP)
GLOG_TIME = rf"^\[?{GLOG_STAMP}\d*[ \]]"


def _glog_times(events: pl.DataFrame, writers: pl.DataFrame) -> pl.DataFrame:
    """Times for glog lines, the year taken from dated lines of the same file (the only year
    that file can be in, barring a New Year's Eve run). Files with no dated line keep none."""
    dated = pl.concat(
        [
            events.select("file", "timestamp"),
            writers.select("file", pl.col("last_time").alias("timestamp")),
        ]
    )
    years = (
        dated.filter(pl.col("timestamp").is_not_null())
        .group_by("file")
        .agg(pl.col("timestamp").dt.year().max().alias("_year"))
    )
    if years.is_empty():
        return events
    dated = pl.concat_str(
        pl.col("_year").cast(pl.String), glog_clock(pl.col("message"), GLOG_TIME)
    ).str.to_datetime("%Y%m%d %H:%M:%S%.f", strict=False, time_unit="us")
    return (
        events.join(years, on="file", how="left")
        .with_columns(pl.coalesce(pl.col("timestamp"), dated).alias("timestamp"))
        .drop("_year")
    )
