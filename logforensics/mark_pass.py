"""Dense stage marks read apart from every other line, in one streaming pass over many files.

A job writes a stage mark per rank, step and stage: nearly every line of a long run. Lines in
the common layout (`rank=R step=S stage=X`, nothing a launcher put in front) become narrow
mark rows while the files are read, on every core, and their text is not kept; every other
line (a prefixed mark too) is handed on whole to framing and the parser families. Line counts
per file come out of the same pass, and the few mark lines a report shows without a finding
asking (each file's last) are read again from the files' ends.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

import polars as pl

from logforensics import streams
from logforensics.framing import NOISE_LITERALS, STARTS_WITH_PREFIX
from logforensics.intake import READ_AHEAD_FILE, LogFile, head_bytes, tail_lines
from logforensics.literals import holds_any
from parsers.stage_marks import canonical_layout, epoch, valid_stages


@dataclass(frozen=True, slots=True)
class MarkPass:
    marks: pl.DataFrame  # file, line, rank, step, stage, epoch: the plain marks
    writers: pl.DataFrame  # file, rank, marks, last_line: who wrote them
    rest: pl.DataFrame  # file, line, text: every other line
    stats: pl.DataFrame  # file, lines, blank_lines, last_line (the last non-blank one)
    tails: pl.DataFrame  # file, line, text: each file's last plain mark and last line

    def of_files(self, files: set[str]) -> MarkPass:
        """The part that comes from `files`."""
        names = list(files)
        keep = pl.col("file").is_in(names)
        return MarkPass(
            marks=self.marks.filter(pl.col("file").cast(pl.String).is_in(names)),
            writers=self.writers.filter(keep),
            rest=self.rest.filter(keep),
            stats=self.stats.filter(keep),
            tails=self.tails.filter(keep),
        )


def read_apart(files: tuple[LogFile, ...]) -> MarkPass | None:
    """Read `files` splitting plain marks from the rest; None when a file is not valid UTF-8
    (the caller then reads them the careful way). The files are all read by path (see
    `by_path`) or all held as bytes."""
    sources = _Sources.of(files)
    if sources is None:
        return None
    where = sources.where
    scan, line, tag_fields = sources.scan(), "text", []
    if _opens_with_tags(files):
        scan, line = _behind_tags(scan), "_body"
        tag_fields = [
            pl.when(pl.col("_role") != "rank").then(pl.col("_number")).alias("prefix_local_rank"),
            (pl.col("_role") == "rank").fill_null(False).alias("_rank_tagged"),
        ]
    body = pl.col(line)
    plain = ~(holds_any(body, NOISE_LITERALS) | body.str.contains(STARTS_WITH_PREFIX))
    is_mark = pl.col("_at_stage").is_not_null() & pl.col("_canonical") & plain
    if tag_fields:  # a `[rankN]:` tag counts where it names the mark's own rank
        role = pl.col("_role")
        is_mark = is_mark & (
            role.is_null() | (role != "rank") | (pl.col("_number") == pl.col("rank"))
        )
    query = canonical_layout(scan, line).select(
        *where,
        "rank",
        "step",
        pl.col("stage").cast(pl.Categorical),
        epoch(line),
        *tag_fields,
        is_mark.fill_null(False).alias("_mark"),
        "text",
    )
    # one streaming query with two outputs: the scan and its columns are computed once, and the
    # other lines' text is copied out of the read buffers (a view would keep them all alive)
    kept = [*MARK_FIELDS, "prefix_local_rank", "_rank_tagged"] if tag_fields else MARK_FIELDS
    marks_query = query.filter("_mark").select(*where, *kept)
    rest_query = query.filter(~pl.col("_mark")).select(*where, _kept_text())
    try:
        marks_read, rest_read = pl.collect_all([marks_query, rest_query], engine="streaming")
    except pl.exceptions.ComputeError:
        return None
    return _numbered(sources, sources.spans(marks_read, rest_read), marks_read, rest_read)


# `[rank3]:` (PyTorch's own tag) or `[default3]:` (torchrun --tee's role and local rank) before
# a line: a console where a launcher tagged every rank's lines
TAG = r"^\[(?P<role>[A-Za-z_][A-Za-z0-9_-]*?)(?P<number>\d+)\]:"
# the first bytes of the first files looked at to tell such a console
SNIFFED_FILES, SNIFFED_BYTES = 8, 64 * 1024


def _opens_with_tags(files: tuple[LogFile, ...]) -> bool:
    """Whether most of the first lines of the first files open with a launcher's tag: their
    marks are then read behind it here, not framed one by one with the other lines (which
    costs several times their reading). Only the speed depends on it."""
    tags = re.compile(TAG.replace("^", "(?m)^", 1).encode())
    tagged = lines = 0
    for log_file in files[:SNIFFED_FILES]:
        head = head_bytes(log_file, SNIFFED_BYTES)
        tagged += len(tags.findall(head))
        lines += head.count(b"\n")
    return lines > 0 and tagged * 2 > lines


def _behind_tags(scan: pl.LazyFrame) -> pl.LazyFrame:
    """`scan` with each line's launcher tag read (`_role`, `_number`) and what follows it
    (`_body`: the whole line where there is none)."""
    text = pl.col("text")
    tag = text.str.extract_groups(TAG)
    role, number = tag.struct.field("role"), tag.struct.field("number")
    length = (role.str.len_chars() + number.str.len_chars() + len("[]:")).fill_null(0)
    return scan.with_columns(
        role.alias("_role"),
        number.cast(pl.Int32, strict=False).alias("_number"),
        text.str.slice(length).alias("_body"),
    )


def _kept_text() -> pl.Expr:
    """A copy of each line's text, overlong lines cut to their ends as the block reader cuts
    them (streams.MAX_LINE)."""
    text = pl.col("text")
    cut = text.str.len_chars().cast(pl.Int64) - streams.MAX_LINE - streams.KEEP
    shortened = pl.concat_str(
        text.str.head(streams.MAX_LINE),
        pl.format(" [... {} characters of this line cut ...] ", cut),
        text.str.tail(streams.KEEP),
    )
    return pl.when(cut > 0).then(shortened).otherwise(text + "").alias("text")


def by_path(log_file: LogFile) -> bool:
    """Whether a file is read by polars from disk (large files: in parallel, without a copy
    here) rather than passed as bytes (small files: a scan per file costs more than reading
    them here)."""
    return log_file.data is None and log_file.size >= LARGE_FILE


# small files are the ones intake reads whole while listing them (held up to a bound)
LARGE_FILE = READ_AHEAD_FILE
MARK_FIELDS = ("rank", "step", "stage", "epoch")


@dataclass(frozen=True, slots=True)
class _Spans:
    """Where each file's lines are among the pass's rows (files with no line left out)."""

    files: tuple[LogFile, ...]
    first_rows: pl.Series  # UInt32, ascending
    lines: pl.Series  # Int64


@dataclass(frozen=True, slots=True)
class _Sources:
    files: tuple[LogFile, ...]
    # held files: their bytes one after the other, each ending in a newline (one source scans
    # far faster than thousands), where each starts, and its line count
    blob: bytes | None = None
    starts: tuple[int, ...] = ()
    counts: tuple[int, ...] = ()

    @staticmethod
    def of(files: tuple[LogFile, ...]) -> _Sources | None:
        if all(by_path(log_file) for log_file in files):
            return _Sources(files)
        parts: list[bytes] = []
        starts: list[int] = []
        counts: list[int] = []
        at = 0
        for log_file in files:
            data = log_file.data if log_file.data is not None else _read_whole(log_file)
            ended = not data or data.endswith(b"\n")
            starts.append(at)
            counts.append(data.count(b"\n") + (0 if ended else 1))
            parts.extend((data,) if ended else (data, b"\n"))
            at += len(data) + (0 if ended else 1)
        if not at:
            return None
        return _Sources(files, b"".join(parts), tuple(starts), tuple(counts))

    @property
    def where(self) -> tuple[str, ...]:
        """The columns that place a row: its global row, and its file's path if read by path."""
        return ("_row",) if self.blob is not None else ("_source", "_row")

    def scan(self) -> pl.LazyFrame:
        if self.blob is not None:
            return pl.scan_lines(self.blob, row_index_name="_row", name="text")
        return pl.scan_lines(
            [str(log_file.location) for log_file in self.files],
            glob=False,
            include_file_paths="_source",
            row_index_name="_row",
            name="text",
        ).with_columns(pl.col("_source").cast(pl.Categorical))

    def spans(self, marks: pl.DataFrame, rest: pl.DataFrame) -> _Spans:
        if self.blob is not None:
            kept = [at for at, count in enumerate(self.counts) if count]
            lines = pl.Series("lines", [self.counts[at] for at in kept], dtype=pl.Int64)
            first_rows = (lines.cum_sum() - lines).cast(pl.UInt32)
            return _Spans(tuple(self.files[at] for at in kept), first_rows, lines)
        # read by path: each file's rows start where its path first appears
        starts = pl.concat(
            [
                frame.filter(pl.col("_source").ne_missing(pl.col("_source").shift(1))).select(
                    pl.col("_source").cast(pl.String), "_row"
                )
                for frame in (marks, rest)
            ]
        )
        spans = starts.group_by("_source").agg(pl.col("_row").min()).sort("_row")
        first_rows = spans.get_column("_row").cast(pl.UInt32)
        total = pl.Series([marks.height + rest.height], dtype=pl.Int64)
        ends = pl.concat([first_rows.slice(1).cast(pl.Int64), total])
        by_source = {str(log_file.location): log_file for log_file in self.files}
        paths = spans.get_column("_source").to_list()
        lines = (ends - first_rows.cast(pl.Int64)).alias("lines")
        return _Spans(tuple(by_source[path] for path in paths), first_rows, lines)


def _read_whole(log_file: LogFile) -> bytes:
    """A small file's bytes, read with its size as the first read's length: thousands of
    small files read this way take half the time `Path.read_bytes` takes."""
    handle = os.open(log_file.location, os.O_RDONLY | getattr(os, "O_BINARY", 0))
    try:
        parts = [os.read(handle, log_file.size + 1)]
        while parts[-1]:  # the file grew since it was listed
            parts.append(os.read(handle, 1 << 20))
    finally:
        os.close(handle)
    return b"".join(parts) if len(parts) > 2 else parts[0]


def _numbered(
    sources: _Sources, spans: _Spans, marks: pl.DataFrame, rest: pl.DataFrame
) -> MarkPass:
    """Global rows to file and line: each file's lines are one range of rows."""
    first_rows = spans.first_rows
    names = pl.Series("file", [log_file.name for log_file in spans.files], dtype=pl.String)

    def placed(frame: pl.DataFrame) -> pl.DataFrame:
        index = first_rows.search_sorted(frame.get_column("_row"), side="right") - 1
        return frame.with_columns(index.cast(pl.UInt32).alias("_file")).with_columns(
            (pl.col("_row") - pl.lit(first_rows).gather("_file") + 1).cast(pl.UInt32).alias("line")
        )

    # a mark whose stage is no name (`stage=,`) is dropped here, before writers count marks:
    # the line is then counted among the unrecognised ones
    marks = valid_stages(placed(marks))
    rest = placed(rest)
    writers = _writers(marks, names)
    marks = marks.select(
        pl.lit(names.cast(pl.Categorical)).gather("_file").alias("file"),
        "line",
        "rank",
        "step",
        "stage",
        "epoch",
    )
    rest = rest.select(pl.lit(names).gather("_file").alias("file"), "_file", "line", "text")
    stats = _stats(spans.lines, names, writers, rest)
    tails = _tails(sources, spans, stats, writers)
    return MarkPass(marks, writers, rest.drop("_file"), stats, tails)


def _writers(marks: pl.DataFrame, names: pl.Series) -> pl.DataFrame:
    """`file, rank, rank_from, prefix_local_rank, marks, last_line`: each file's writers (a rank,
    with the local rank a launcher tag gave it) with their mark counts and last lines."""
    if marks.is_empty():
        schema = {"file": pl.String, "_file": pl.UInt32, "rank": pl.Int32, "rank_from": pl.String}
        return pl.DataFrame(
            schema={
                **schema,
                "prefix_local_rank": pl.Int32,
                "marks": pl.UInt32,
                "last_line": pl.UInt32,
            }
        )
    tagged = "prefix_local_rank" in marks.columns
    keys = ["_file", "rank", *(["prefix_local_rank", "_rank_tagged"] if tagged else [])]
    writers = (
        _runs(marks, keys)
        .group_by(keys)
        .agg(pl.col("marks").sum().cast(pl.UInt32), pl.col("line").max().alias("last_line"))
    )
    if not tagged:  # (the columns added per writer, not per mark)
        writers = writers.with_columns(
            pl.lit(None, dtype=pl.Int32).alias("prefix_local_rank"),
            pl.lit(False).alias("_rank_tagged"),
        )
    return writers.sort("_file", "rank", "prefix_local_rank", nulls_last=False).select(
        pl.lit(names).gather("_file").alias("file"),
        "_file",
        "rank",
        # a `[rankN]:` tag that names the mark's own rank states it, as framing would say
        pl.when("_rank_tagged")
        .then(pl.lit("prefix"))
        .otherwise(pl.lit("content"))
        .alias("rank_from"),
        "prefix_local_rank",
        "marks",
        "last_line",
    )


def _runs(marks: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    """`keys`, `marks`, `line`: the runs of consecutive marks one writer wrote (a file holds
    one or a few), each with its length and last line. Marks come in the order of their rows,
    so a writer's marks mostly follow each other: grouping the few runs is many times cheaper
    than grouping millions of marks. Out of that order, every mark is a run of its own."""
    if not marks.get_column("_row").is_sorted():
        return marks.select(*keys, pl.lit(1, dtype=pl.UInt32).alias("marks"), "line")
    starts = pl.any_horizontal(pl.col(key).ne_missing(pl.col(key).shift(1)) for key in keys)
    at = marks.select(
        pl.int_range(pl.len(), dtype=pl.UInt32).filter(starts.fill_null(True))
    ).to_series()
    ends = at.shift(-1, fill_value=marks.height) - 1  # each run's last row
    return marks.select(pl.col(key).gather(at) for key in keys).with_columns(
        (ends - at + 1).alias("marks"), marks.get_column("line").gather(ends).alias("line")
    )


def _stats(
    lengths: pl.Series, names: pl.Series, writers: pl.DataFrame, rest: pl.DataFrame
) -> pl.DataFrame:
    """Per file: lines, blank lines, the last non-blank line (plain marks are never blank)."""
    is_blank = pl.col("text").str.strip_chars() == ""
    last_other = rest.filter(~is_blank).group_by("_file").agg(pl.col("line").max())
    last_line = (
        pl.concat([writers.select("_file", pl.col("last_line").alias("line")), last_other])
        .group_by("_file")
        .agg(pl.col("line").max().alias("last_line"))
    )
    blanks = rest.filter(is_blank).group_by("_file").agg(pl.len().alias("blank_lines"))
    files = pl.DataFrame(
        {"_file": pl.int_range(len(names), dtype=pl.UInt32, eager=True), "file": names}
    ).with_columns(lengths)
    return (
        files.join(blanks, on="_file", how="left")
        .join(last_line, on="_file", how="left")
        .select(
            "file",
            "lines",
            pl.col("blank_lines").fill_null(0).cast(pl.Int64),
            pl.col("last_line").cast(pl.UInt32),
        )
    )


# how many lines from its file's end a wanted line is cut out of the blob directly
NEAR_THE_END = 64


def _tails(
    sources: _Sources, spans: _Spans, stats: pl.DataFrame, writers: pl.DataFrame
) -> pl.DataFrame:
    """The text of each writer's last plain mark and each file's last non-blank line, read
    from the end of the file."""
    if sources.blob is not None:
        return _tails_of_blob(sources, spans, stats, writers)
    marks_of = writers.group_by("file").agg(pl.col("last_line").unique().alias("marks"))
    wanted = stats.join(marks_of, on="file")
    rows: dict[str, list] = {"file": [], "line": [], "text": []}
    by_name = {log_file.name: log_file for log_file in spans.files}
    for name, total, last_line, marks in wanted.select(
        "file", "lines", "last_line", "marks"
    ).iter_rows():
        numbers = sorted({*marks, last_line} - {None})
        found = tail_lines(by_name[name], total, numbers)
        for line, text in found.items():
            rows["file"].append(name)
            rows["line"].append(line)
            rows["text"].append(text)
    return pl.DataFrame(rows, schema={"file": pl.String, "line": pl.UInt32, "text": pl.String})


def _tails_of_blob(
    sources: _Sources, spans: _Spans, stats: pl.DataFrame, writers: pl.DataFrame
) -> pl.DataFrame:
    """`_tails` for files held in one blob. A wanted line a few lines from its file's end
    (nearly all: a writer's last mark, a file's last line) is cut out of the blob by walking
    back from the file's end; the others are picked out of one more scan of it by their rows.
    Thousands of small files cost a few lookups each, not a scan of every byte."""
    blob = sources.blob
    assert blob is not None
    wanted = (
        pl.concat(
            [
                writers.select("file", pl.col("last_line").alias("line")),
                stats.select("file", pl.col("last_line").alias("line")),
            ],
            how="vertical_relaxed",
        )
        .drop_nulls()
        .unique()
    )
    ends = sources.starts[1:] + (len(blob),)
    extent = {
        log_file.name: (start, end, count)
        for log_file, start, end, count in zip(
            sources.files, sources.starts, ends, sources.counts, strict=True
        )
    }
    rows: dict[str, list] = {"file": [], "line": [], "text": []}
    far: list[tuple[str, int]] = []
    for name, line in wanted.iter_rows():
        start, end, count = extent[name]
        if not 0 <= count - line <= NEAR_THE_END:
            far.append((name, line))
            continue
        stop = end - 1  # the newline that ends the file's last line
        for _ in range(count - line):
            stop = blob.rfind(b"\n", start, stop)
        begin = (blob.rfind(b"\n", start, stop) + 1) or start
        text = blob[begin:stop].decode()
        rows["file"].append(name)
        rows["line"].append(line)
        rows["text"].append(text.removesuffix("\r"))
    near = pl.DataFrame(rows, schema={"file": pl.String, "line": pl.UInt32, "text": pl.String})
    if not far:
        return near
    first_rows = pl.DataFrame(
        {"file": [log_file.name for log_file in spans.files], "_first": spans.first_rows}
    )
    far_rows = (
        pl.DataFrame(far, schema={"file": pl.String, "line": pl.Int64}, orient="row")
        .join(first_rows, on="file")
        .with_columns((pl.col("_first") + pl.col("line") - 1).cast(pl.UInt32).alias("_row"))
    )
    texts = (
        pl.scan_lines(blob, row_index_name="_row", name="text")
        .filter(pl.col("_row").is_in(far_rows.get_column("_row").implode()))
        .collect()
    )
    found = far_rows.join(texts, on="_row").select(
        "file", pl.col("line").cast(pl.UInt32), (pl.col("text") + "").alias("text")
    )
    return pl.concat([near, found])
