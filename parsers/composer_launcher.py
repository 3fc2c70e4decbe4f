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

Its first releases reported a worker's failure by the command alone, then stopped the others
(mosaicml/composer#149, verbatim):

    Error in subprocess
    ----------Subprocess STDOUT----------
    ...
    Command '['/usr/bin/python3.8', '-u', 'examples/run_mosaic_trainer.py', '-f', '...']' returned non-zero exit status 1.
    Killing subprocess 33667 with SIGTERM
    Waiting 30 seconds for processes to terminate...

The command's line, within a few lines of `Error in subprocess`, is a `worker_failed` event
with the exit code and no rank (the command does not say which); the others are recognised.
"""  # noqa: E501 -- verbatim lines

from __future__ import annotations

import polars as pl

from logforensics.registry import LineParser

EXITED = r"^Global rank (?P<rank>\d{1,7}) \(PID (?P<pid>\d+)\) exited with code (?P<code>-?\d+)\s*$"
RULE = r"^-{10}(?P<edge>Begin|End) global rank (?P<rank>\d{1,7}) (?P<stream>[A-Z]+)-{10}\s*$"
ERROR_IN_SUBPROCESS = r"^Error in subprocess\s*$"
COMMAND_FAILED = r"^Command '\[.*\]' returned non-zero exit status (\d+)\.\s*$"
# the report's other lines: its streams' rules, the workers stopped, the wait for them
REPORT_LINE = (
    r"^(?:-{10}Subprocess (?:STDOUT|STDERR)-{10}|Killing subprocess \d+ with SIG[A-Z]+"
    r"|Waiting \d+ seconds for processes to terminate\.\.\.)\s*$"
)
# how far below `Error in subprocess` its command's line stands (the streams it quotes between)
REPORT_LINES = 64
LITERALS = (
    "Global rank ",
    " global rank ",
    "Error in subprocess",
    "returned non-zero exit status",
    "Subprocess STD",
    "Killing subprocess ",
    " for processes to terminate",
)
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
    return pl.concat(
        [exits, _sections(lines, rule), _subprocess_failures(lines)], how="diagonal_relaxed"
    )


def _subprocess_failures(lines: pl.DataFrame) -> pl.DataFrame:
    """The first releases' report: a `worker_failed` with the command's exit code below
    `Error in subprocess`, the report's other lines recognised."""
    message = pl.col("message")
    opened = pl.when(message.str.contains(ERROR_IN_SUBPROCESS)).then(pl.col("line"))
    rows = lines.sort("file", "line").with_columns(
        opened.forward_fill().over("file").alias("_opened")
    )
    in_report = pl.col("_opened").is_not_null() & (
        pl.col("line") - pl.col("_opened") <= REPORT_LINES
    )
    code = message.str.extract(COMMAND_FAILED, 1).cast(pl.Int32, strict=False)
    failed = rows.filter(in_report & code.is_not_null()).select(
        "file",
        "line",
        pl.lit("worker_failed").alias("event"),
        pl.lit("error").alias("severity"),
        code.alias("exitcode"),
    )
    recognised = rows.filter(
        in_report & (message.str.contains(ERROR_IN_SUBPROCESS) | message.str.contains(REPORT_LINE))
    ).select("file", "line", pl.lit(None, pl.String).alias("event"))
    return pl.concat([failed, recognised], how="diagonal_relaxed")


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
