"""Lines a terminal or a paste cut at a fixed width, joined back.

A console copied out of a terminal (or a log viewer that wraps) breaks every line longer than
its width into pieces of exactly that width, the last shorter; the pieces after the first lack
the launcher's prefix and begin mid-word (WM-PO/WMPO#3, Ray's memory-monitor report broken
mid-word at the poster's terminal width). Such a file's widest lines all have one length, and
most of them end inside a word that the next line goes on with. There the pieces are joined:
the first line of each run holds the whole text, the others are read as its continuation. A
copy of a terminal's screen pads every line to the width; there a line that reaches the edge
with a letter was cut.
"""

from __future__ import annotations

import polars as pl

# a width narrower than this is no terminal's; fewer wrapped lines than this prove nothing
MIN_WIDTH = 60
MIN_WRAPPED = 3
# a terminal cuts wherever the width falls, inside a word more often than not; a table's rows
# (right-aligned, the next row starting with spaces) are never cut
CUT_SHARE = 4


def join_hard_wraps(lines: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """`lines` (`file, line, text` and any other columns) with each wrapped run's text joined
    into its first line, and apart from them the lines joined into another, as they were."""
    widths = _wrap_widths(lines)
    if widths.is_empty():
        return lines, lines.clear()
    text, line = pl.col("text"), pl.col("line")
    wrapped = lines.join(widths, on="file")
    # (in a padded copy a line at the width that ends in spaces had ended there)
    at_width = (text.str.len_chars() == pl.col("_width")) & (
        ~pl.col("_padded") | text.str.contains(r"\S$")
    )
    consecutive = line.shift(1).over("file", order_by="line") == line - 1
    continues = (at_width.shift(1).over("file", order_by="line") & consecutive).fill_null(False)
    wrapped = wrapped.with_columns(
        continues.alias("_continues"),
        (~continues).cum_sum().over("file", order_by="line").alias("_run"),
    )
    joined = wrapped.with_columns(
        pl.when(pl.col("_run").count().over("file", "_run") > 1)
        .then(text.str.join("").over("file", "_run", order_by="line").str.strip_chars_end(" "))
        .otherwise(text)
        .alias("text")
    )
    kept = joined.filter(~pl.col("_continues")).select(lines.columns)
    continued = wrapped.filter(pl.col("_continues")).select(lines.columns)
    others = lines.join(widths, on="file", how="anti")
    return pl.concat([others, kept]), continued


def _wrap_widths(lines: pl.DataFrame) -> pl.DataFrame:
    """The files that were wrapped, with their width and whether the copy padded its lines
    (`file, _width, _padded`)."""
    text = pl.col("text")
    # first the cheap test: a file whose widest length several lines share
    length = text.str.len_chars()
    # (distinct lines: one message repeated as the widest, as a loop prints it, is no wrap)
    widest = lines.group_by("file").agg(
        length.max().alias("_width"), text.filter(length == length.max()).n_unique().alias("_at")
    )
    maybe = widest.filter((pl.col("_width") >= MIN_WIDTH) & (pl.col("_at") >= MIN_WRAPPED))
    if maybe.is_empty():
        return maybe.select("file", "_width", pl.lit(False).alias("_padded"))
    lines = lines.join(maybe.select("file", "_width"), on="file")
    following = pl.when(
        pl.col("line").shift(-1).over("file", order_by="line") == pl.col("line") + 1
    ).then(text.shift(-1).over("file", order_by="line"))
    # cut inside a word: this piece ends in a word's letter and the next goes on with one, not
    # as this one began (records as wide as each other, ranks' copies of one message or NCCL's
    # lines of each process, each begin the same way: `node1:1234:1300 [0] NCCL INFO ...`)
    mid_word = (
        (
            text.str.contains(r"\w$")
            & following.str.contains(r"^\w")
            & (following.str.slice(0, 3) != text.str.slice(0, 3))
        )
        .fill_null(False)
        .alias("_mid_word")
    )
    measured = lines.select(
        "file", "_width", text, (length == pl.col("_width")).alias("_at_width"), mid_word
    )
    at_width = pl.col("_at_width")
    cut = at_width & pl.col("_mid_word")
    # a copy out of a terminal's screen pads every line with spaces to the width: most lines
    # are as wide as the widest, and those that end in a letter were cut there
    # (a table's rows are as wide as each other too, and none of them is padded)
    padded = (
        (pl.col("_at") * 2 >= pl.col("_nonblank"))
        & (pl.col("_at") >= MIN_WRAPPED)
        & (pl.col("_padding") > 0)
    )
    return (
        measured.group_by("file")
        .agg(
            pl.col("_width").first(),
            at_width.sum().alias("_at"),
            (pl.col("text").str.strip_chars() != "").sum().alias("_nonblank"),
            (at_width & pl.col("text").str.contains(r"\S  +$")).sum().alias("_padding"),
            cut.sum().alias("_cut"),
        )
        .with_columns(padded.alias("_padded"))
        .filter(
            pl.col("_padded")
            | (pl.col("_cut") >= MIN_WRAPPED) & (pl.col("_cut") * CUT_SHARE >= pl.col("_at"))
        )
        .select("file", "_width", "_padded")
    )
