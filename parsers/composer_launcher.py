"""MosaicML Composer's launcher (`composer -n 8 train.py`, LLM Foundry's usual launch) reporting
the workers that ended with an error, each by global rank with its pid and exit code, then
quoting what that worker wrote (mosaicml/llm-foundry#203, verbatim):

    Global rank 0 (PID 786) exited with code -6
    Global rank 1 (PID 787) exited with code -6
    ----------Begin global rank 1 STDOUT----------
    Initializing model...
    ...
    ----------End global rank 1 STDOUT----------
    ----------Begin global rank 1 STDERR----------
    ...

(composer/cli/launcher.py prints a rank's exit, then its captured STDOUT and STDERR between
these rules.) The exit is a `process_id` event stating the pid's rank and the exit code; each
quoted section a `rank_section` event from its Begin line to its End line, whose lines are that
rank's (`attribution`). A section whose End line the paste lost runs to the next Begin line or
the end of the file. The launcher's word of the first crash (`Rank 1 crashed with exit code
-6.`) is `parsers/process_exit.py`'s.
"""

from __future__ import annotations

import polars as pl

from logforensics.registry import LineParser

EXITED = r"^Global rank (?P<rank>\d{1,7}) \(PID (?P<pid>\d+)\) exited with code (?P<code>-?\d+)\s*$"
RULE = r"^-{10}(?P<edge>Begin|End) global rank (?P<rank>\d{1,7}) (?P<stream>[A-Z]+)-{10}\s*$"
LITERALS = ("Global rank ", " global rank ")
TO_THE_END = 2**32 - 1  # the last line a file can have


def parse(lines: pl.DataFrame) -> pl.DataFrame:
    message = pl.col("message")
    exited = message.str.extract_groups(EXITED)
    rule = message.str.extract_groups(RULE)
    exits = lines.filter(exited.struct.field("rank").is_not_null()).select(
        "file",
        "line",
        exited.struct.field("rank").cast(pl.Int32, strict=False).alias("rank"),
        exited.struct.field("pid").cast(pl.Int64, strict=False).alias("pid"),
        exited.struct.field("code").cast(pl.Int32, strict=False).alias("exitcode"),
        pl.lit("process_id").alias("event"),
        pl.lit("info").alias("severity"),
    )
    return pl.concat([exits, _sections(lines, rule)], how="diagonal_relaxed")


def _sections(lines: pl.DataFrame, rule: pl.Expr) -> pl.DataFrame:
    """A `rank_section` per Begin line, ending at the next rule of the file (its End line, or
    the next section's Begin line, whose section it is not) or, with none, the file's end."""
    rules = lines.filter(rule.struct.field("rank").is_not_null()).select(
        "file",
        "line",
        rule.struct.field("edge").alias("_edge"),
        rule.struct.field("rank").cast(pl.Int32, strict=False).alias("rank"),
    )
    if rules.is_empty():
        return rules.select("file", "line", "rank")
    following = pl.col("line").shift(-1).over("file", order_by="line")
    ended_by_end = pl.col("_edge").shift(-1).over("file", order_by="line") == "End"
    return rules.with_columns(
        # a section the paste cut short runs to the file's end
        pl.when(following.is_null())
        .then(pl.lit(TO_THE_END, dtype=pl.UInt32))
        .when(ended_by_end)
        .then(following)
        .otherwise(following - 1)
        .alias("end_line")
    ).select(
        "file",
        "line",
        "rank",
        pl.when(pl.col("_edge") == "Begin").then("end_line").alias("end_line"),
        # an End line is read, and is no event of its own
        pl.when(pl.col("_edge") == "Begin").then(pl.lit("rank_section")).alias("event"),
        pl.lit("info").alias("severity"),
    )


PARSER = LineParser(name="composer_launcher", literals=LITERALS, parse=parse)
