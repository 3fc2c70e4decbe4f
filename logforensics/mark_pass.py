"""Dense stage marks read apart from every other line, in one streaming pass over files on disk.

A job writes a stage mark per rank, step and stage: nearly every line of a long run. Lines in
the common layout (`rank=R step=S stage=X`, nothing a launcher put in front) become narrow
mark rows while the files are read, on every core, and their text is not kept; every other
line (a prefixed mark too) is handed on whole to framing and the parser families. Line counts
per file come out of the same pass, and the few mark lines a report shows without a finding
asking (each file's last) are read again from the files' ends.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from logforensics.framing import NOISE_LITERALS, STARTS_WITH_PREFIX
from logforensics.intake import LogFile, tail_lines
from parsers.stage_marks import canonical_layout, epoch, valid_stages


@dataclass(frozen=True, slots=True)
class MarkPass:
    marks: pl.DataFrame  # file, line, rank, step, stage, epoch: the plain marks
    writers: pl.DataFrame  # file, rank, marks, last_line: who wrote them
    rest: pl.DataFrame  # file, line, text: every other line
    stats: pl.DataFrame  # file, lines, blank_lines, last_line (the last non-blank one)
    tails: pl.DataFrame  # file, line, text: each file's last plain mark and last line


def read_apart(files: tuple[LogFile, ...]) -> MarkPass | None:
    """Read `files` (on disk) splitting plain marks from the rest; None when a file is not
    valid UTF-8 (the caller then reads them the careful way)."""
    text = pl.col("text")
    scan = pl.scan_lines(
        [str(log_file.path) for log_file in files],
        glob=False,
        include_file_paths="_source",
        row_index_name="_row",
        name="text",
    )
    plain = ~(text.str.contains_any(NOISE_LITERALS) | text.str.contains(STARTS_WITH_PREFIX))
    is_mark = pl.col("_at_stage").is_not_null() & pl.col("_canonical") & plain
    query = canonical_layout(scan, "text").select(
        pl.col("_source").cast(pl.Categorical),
        "_row",
        "rank",
        "step",
        pl.col("stage").cast(pl.Categorical),
        epoch("text"),
        is_mark.alias("_mark"),
        "text",
    )
    marks: list[pl.DataFrame] = []
    rest: list[pl.DataFrame] = []
    try:
        for chunk in query.collect_batches(engine="streaming", chunk_size=CHUNK_ROWS):
            marks.append(chunk.select(*MARK_COLUMNS, "_mark").filter("_mark").drop("_mark"))
            # a copy of the text: a view would keep the whole chunk's text alive
            others = chunk.select("_source", "_row", "text", "_mark").filter(~pl.col("_mark"))
            rest.append(others.select("_source", "_row", text + ""))
    except pl.exceptions.ComputeError:
        return None
    if not marks or sum(frame.height for frame in (*marks, *rest)) == 0:
        return None
    return _numbered(files, pl.concat(marks, rechunk=True), pl.concat(rest, rechunk=True))


CHUNK_ROWS = 200_000  # rows per chunk of the streaming pass: large enough, small in memory
MARK_COLUMNS = ("_source", "_row", "rank", "step", "stage", "epoch")


def _numbered(files: tuple[LogFile, ...], marks: pl.DataFrame, rest: pl.DataFrame) -> MarkPass:
    """Global rows to file and line. Every line is a mark or one of the rest, and a file's
    lines are one range of rows, in the order asked (a file with no line has none)."""
    by_path = {str(log_file.path): log_file for log_file in files}
    code = pl.col("_source").to_physical()
    starts = pl.concat(
        [
            frame.filter(pl.col("_source").ne_missing(pl.col("_source").shift(1))).select(
                code.alias("_code"), pl.col("_source").cast(pl.String), "_row"
            )
            for frame in (marks, rest)
        ]
    )
    spans = starts.group_by("_code", "_source").agg(pl.col("_row").min()).sort("_row")
    first_rows = spans.get_column("_row")
    total = pl.Series([marks.height + rest.height], dtype=first_rows.dtype)
    ends = pl.concat([first_rows.slice(1), total])
    lengths = (ends.cast(pl.Int64) - first_rows.cast(pl.Int64)).alias("lines")
    paths = spans.get_column("_source").to_list()
    names = pl.Series("file", [by_path[path].name for path in paths], dtype=pl.String)
    # file index by the source's category code: a small table, looked up row by row
    codes = spans.get_column("_code")
    index_of_code = pl.repeat(None, int(codes.max()) + 1, dtype=pl.UInt32, eager=True).scatter(
        codes, pl.int_range(len(codes), dtype=pl.UInt32, eager=True)
    )
    file_index = pl.lit(index_of_code).gather(code).alias("_file")
    line = (pl.col("_row") - pl.lit(first_rows).gather("_file") + 1).cast(pl.UInt32).alias("line")
    # a mark whose stage is no name (`stage=,`) is dropped here, before writers count marks:
    # the line is then counted among the unrecognised ones
    marks = valid_stages(marks.with_columns(file_index).with_columns(line))
    rest = rest.with_columns(file_index).with_columns(line)
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
    stats = _stats(lengths, names, writers, rest)
    tails = _tails([by_path[path] for path in paths], stats, writers)
    return MarkPass(marks, writers, rest.drop("_file"), stats, tails)


def _writers(marks: pl.DataFrame, names: pl.Series) -> pl.DataFrame:
    """`file, rank, marks, last_line`, from the runs of (file, rank) in the marks (in file and
    line order)."""
    if marks.is_empty():
        schema = {"file": pl.String, "_file": pl.UInt32, "rank": pl.Int32}
        return pl.DataFrame(schema={**schema, "marks": pl.UInt32, "last_line": pl.UInt32})
    writer = pl.col("_file").cast(pl.Int64) * (1 << 32) + pl.col("rank").cast(pl.UInt32)
    starts = (
        marks.select(writer.ne_missing(writer.shift(1)).alias("_start"))
        .with_row_index("_at")
        .filter("_start")
        .get_column("_at")
    )
    ends = pl.concat([starts.slice(1), pl.Series([marks.height], dtype=starts.dtype)]) - 1
    runs = (
        marks.select("_file", "rank")
        .gather(starts)
        .with_columns(
            (ends - starts + 1).cast(pl.UInt32).alias("marks"),
            marks.get_column("line").gather(ends).alias("last_line"),
        )
    )
    return (
        runs.group_by("_file", "rank")
        .agg(pl.col("marks").sum(), pl.col("last_line").max())
        .sort("_file", "rank")
        .select(pl.lit(names).gather("_file").alias("file"), "_file", "rank", "marks", "last_line")
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


def _tails(files: list[LogFile], stats: pl.DataFrame, writers: pl.DataFrame) -> pl.DataFrame:
    """The text of each writer's last plain mark and each file's last non-blank line, read
    from the file's end."""
    marks_of = writers.group_by("file").agg(pl.col("last_line").unique().alias("marks"))
    wanted = stats.join(marks_of, on="file")
    rows: dict[str, list] = {"file": [], "line": [], "text": []}
    by_name = {log_file.name: log_file for log_file in files}
    for name, total, last_line, marks in wanted.select(
        "file", "lines", "last_line", "marks"
    ).iter_rows():
        numbers = sorted({*marks, last_line} - {None})
        for line, text in tail_lines(by_name[name], total, numbers).items():
            rows["file"].append(name)
            rows["line"].append(line)
            rows["text"].append(text)
    return pl.DataFrame(rows, schema={"file": pl.String, "line": pl.UInt32, "text": pl.String})
