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
    is_mark = text.str.contains("stage=", literal=True) & pl.col("_canonical") & plain
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
    runs: list[pl.DataFrame] = []
    try:
        for batch in query.collect_batches(engine="streaming", chunk_size=CHUNK_ROWS):
            marks.append(batch.select(*MARK_COLUMNS, "_mark").filter("_mark").drop("_mark"))
            # a copy: a view would keep the whole chunk's text alive
            rest.append(batch.select("_row", "text", "_mark").filter(~pl.col("_mark")))
            rest[-1] = rest[-1].select("_row", text + "")
            runs.append(_runs(batch))
    except pl.exceptions.ComputeError:
        return None
    if not runs:
        return None
    return _numbered(
        files, pl.concat(runs), pl.concat(marks, rechunk=True), pl.concat(rest, rechunk=True)
    )


CHUNK_ROWS = 200_000  # rows per chunk of the streaming pass: large enough, small in memory
MARK_COLUMNS = ("_row", "rank", "step", "stage", "epoch")


def _runs(batch: pl.DataFrame) -> pl.DataFrame:
    """Where each file's rows start in a chunk: `_source` (its path), `_row`."""
    starts = pl.col("_source").ne_missing(pl.col("_source").shift(1))
    return (
        batch.select("_source", "_row")
        .filter(starts)
        .select(pl.col("_source").cast(pl.String), "_row")
    )


def _numbered(
    files: tuple[LogFile, ...], runs: pl.DataFrame, marks: pl.DataFrame, rest: pl.DataFrame
) -> MarkPass:
    """Global rows to file and line. Rows come file after file, in the order asked (a file
    with no line has no row)."""
    by_path = {str(log_file.path): log_file for log_file in files}
    runs = runs.filter(pl.col("_source").ne_missing(pl.col("_source").shift(1)))
    paths = runs.get_column("_source").to_list()
    names = pl.Series([by_path[path].name for path in paths], dtype=pl.String)
    first_rows = runs.get_column("_row")
    total_rows = marks.height + rest.height
    lengths = pl.concat([first_rows.slice(1), pl.Series([total_rows], dtype=first_rows.dtype)])
    lengths = (lengths - first_rows).cast(pl.Int64)

    def placed(frame: pl.DataFrame) -> pl.DataFrame:
        index = first_rows.search_sorted(frame.get_column("_row"), side="right") - 1
        return frame.with_columns(index.alias("_file")).with_columns(
            (pl.col("_row") - pl.lit(first_rows).gather("_file") + 1).cast(pl.UInt32).alias("line")
        )

    file = pl.lit(names.cast(pl.Categorical)).gather("_file").alias("file")
    marks = placed(marks).select("_file", file, "line", "rank", "step", "stage", "epoch")
    rest = placed(rest).select("_file", file.cast(pl.String), "line", "text")
    stats = _stats(lengths, names, marks, rest)
    tails = _tails([by_path[path] for path in paths], stats, marks)
    return MarkPass(valid_stages(marks.drop("_file")), rest.drop("_file"), stats, tails)


def _stats(
    lengths: pl.Series, names: pl.Series, marks: pl.DataFrame, rest: pl.DataFrame
) -> pl.DataFrame:
    """Per file: lines, blank lines, the last non-blank line (plain marks are never blank)."""
    is_blank = pl.col("text").str.strip_chars() == ""
    last_mark = marks.filter(pl.col("_file").ne_missing(pl.col("_file").shift(-1))).select(
        "_file", "line"
    )
    last_other = rest.filter(~is_blank).group_by("_file").agg(pl.col("line").max())
    last_line = (
        pl.concat([last_mark, last_other])
        .group_by("_file")
        .agg(pl.col("line").max().alias("last_line"))
    )
    blanks = rest.filter(is_blank).group_by("_file").agg(pl.len().alias("blank_lines"))
    files = pl.DataFrame(
        {"_file": pl.int_range(len(names), dtype=pl.UInt32, eager=True), "file": names}
    ).with_columns(lengths.cast(pl.Int64).alias("lines"))
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


def _tails(files: list[LogFile], stats: pl.DataFrame, marks: pl.DataFrame) -> pl.DataFrame:
    """The text of each file's last plain mark and last non-blank line, read from its end."""
    last_marks = marks.filter(pl.col("_file").ne_missing(pl.col("_file").shift(-1))).select(
        "file", pl.col("line").alias("mark")
    )
    wanted = stats.join(last_marks.with_columns(pl.col("file").cast(pl.String)), on="file")
    rows: dict[str, list] = {"file": [], "line": [], "text": []}
    by_name = {log_file.name: log_file for log_file in files}
    for name, total, last_line, mark in wanted.select(
        "file", "lines", "last_line", "mark"
    ).iter_rows():
        numbers = sorted({mark, last_line} - {None})
        for line, text in tail_lines(by_name[name], total, numbers).items():
            rows["file"].append(name)
            rows["line"].append(line)
            rows["text"].append(text)
    return pl.DataFrame(rows, schema={"file": pl.String, "line": pl.UInt32, "text": pl.String})
