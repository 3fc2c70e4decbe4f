# ruff: noqa: E501 -- verbatim log lines are quoted whole in the docstring
"""Open MPI's launcher (`mpirun`, `mpiexec`, `mpirun.real` under horovodrun) reporting which
process of the job ended first, by its MPI rank (the rank in MPI_COMM_WORLD, which Horovod and
torch's MPI backend take as the global rank):

    mpirun noticed that process rank 1 with PID xxxxxx on node xxxxxxxx exited on signal 9 (Killed).

(Kay1794/Aware-of-the-history#2; horovod/horovod#926 prints an empty node: `... with PID 0 on
node exited on signal 4 (Illegal instruction).`) The process died of that signal: a
`fatal_signal` event of that rank.

    mpirun detected that one or more processes exited with non-zero status, thus causing
    the job to be terminated. The first process to do so was:

      Process name: [[29973,1],0]
      Exit code:    1

(horovod/horovod#1421; E3SM-Project/scream#1762 shows `mpiexec` and `[[2663,1],3]`.) The
process name is `[[job, step], rank]`: a `worker_failed` event of that rank with the exit code
the next line gives. The launcher reports the first process only; the others it killed.
"""

from __future__ import annotations

import signal

import polars as pl

from logforensics.registry import LineParser

SIGNAL_DEATH = (
    r"noticed that process rank (?P<rank>\d+) with PID (?P<pid>\S+) on node "
    r"(?:(?P<host>\S+) )?exited on signal (?P<signal>\d+)(?: \((?P<words>[^)]+)\))?"
)
WRAPPED_DEATH = r"noticed that process rank \d+ with PID \S+ on node \S+ exited(?: on)?\s*$"
PROCESS_NAME = r"^\s*Process name: \[\[\d+,\d+\],(\d+)\]\s*$"
EXIT_CODE = r"^\s*Exit code: +(-?\d+)\s*$"
# signal numbers as Linux numbers them (the launchers run there)
SIGNAL_NAMES = {str(int(number)): number.name for number in signal.Signals}


# The rest of those reports, recognised without an event
CHATTER = (
    r"^\s*(?:Primary job +terminated normally, but \d+ process(?:es)? returned"
    r"|a non-zero exit code\.+ Per user-direction, the job has been aborted\."
    r"|\S*(?:mpirun|mpiexec)\S* detected that one or more processes exited with non-zero status"
    r"|the job to be terminated\. The first process to do so was:)"
)


def parse(lines: pl.DataFrame) -> pl.DataFrame:
    chatter = lines.filter(pl.col("candidate") & pl.col("message").str.contains(CHATTER)).select(
        "file", "line", pl.lit(None, pl.String).alias("event")
    )
    parts = [_signal_deaths(lines), _first_exits(lines), chatter]
    return pl.concat(parts, how="diagonal_relaxed")


def _signal_deaths(lines: pl.DataFrame) -> pl.DataFrame:
    # Open MPI 5's prterun wraps its sentence (NVIDIA/nccl-tests#295: `prterun noticed that
    # process rank 1 with PID 820212 on node neutron-nvidia exited on` / `signal 6 (Aborted).`):
    # the line after it is read on with it
    message = pl.col("message")
    following = (pl.col("file").shift(-1) == pl.col("file")) & (
        pl.col("line").shift(-1) == pl.col("line") + 1
    )
    wrapped = message.str.contains(WRAPPED_DEATH) & following
    rows = lines.sort("file", "line").with_columns(
        pl.when(wrapped)
        .then(pl.concat_str(message, pl.lit(" "), message.shift(-1).str.strip_chars()))
        .otherwise(message)
        .alias("_said"),
        pl.when(wrapped).then(pl.col("line").shift(-1)).alias("end_line"),
    )
    found = pl.col("_said").str.extract_groups(SIGNAL_DEATH)
    deaths = rows.filter(pl.col("candidate")).with_columns(found.alias("_death"))
    deaths = deaths.filter(pl.col("_death").struct.field("rank").is_not_null())
    continued = deaths.filter(pl.col("end_line").is_not_null()).select(
        "file", pl.col("end_line").alias("line"), pl.lit(None, pl.String).alias("event")
    )
    return pl.concat([_death_events(deaths), continued], how="diagonal_relaxed")


def _death_events(deaths: pl.DataFrame) -> pl.DataFrame:
    field = pl.col("_death").struct.field
    pid = field("pid").cast(pl.Int64, strict=False)
    name = field("signal").replace_strict(SIGNAL_NAMES, default=None, return_dtype=pl.String)
    return deaths.select(
        "file",
        "line",
        "end_line",
        pl.lit("fatal_signal").alias("event"),
        pl.when(name == "SIGTERM")
        .then(pl.lit("warning"))
        .otherwise(pl.lit("error"))
        .alias("severity"),
        field("rank").cast(pl.Int32, strict=False).alias("rank"),
        # Open MPI prints PID 0 where it does not know it
        pl.when(pid > 0).then(pid).alias("pid"),
        field("host").alias("host"),
        name.alias("signal"),
        pl.coalesce(field("words"), name, pl.format("signal {}", field("signal"))).alias(
            "exc_message"
        ),
    )


def _first_exits(lines: pl.DataFrame) -> pl.DataFrame:
    """A `Process name:` line and the `Exit code:` on the line after it."""
    message = pl.col("message")
    rows = lines.sort("file", "line").with_columns(
        message.str.extract(PROCESS_NAME, 1).cast(pl.Int32, strict=False).alias("rank"),
        message.str.extract(EXIT_CODE, 1).cast(pl.Int32, strict=False).alias("_code"),
    )
    next_is_code = (pl.col("file").shift(-1) == pl.col("file")) & (
        pl.col("line").shift(-1) == pl.col("line") + 1
    )
    exits = rows.with_columns(
        pl.when(next_is_code).then(pl.col("_code").shift(-1)).alias("exitcode"),
        pl.col("line").shift(-1).alias("end_line"),
    ).filter(pl.col("candidate") & pl.col("rank").is_not_null() & pl.col("exitcode").is_not_null())
    codes = exits.select(
        "file", pl.col("end_line").alias("line"), pl.lit(None, pl.String).alias("event")
    )
    failed = exits.select(
        "file",
        "line",
        pl.lit("worker_failed").alias("event"),
        pl.lit("error").alias("severity"),
        "end_line",
        "rank",
        "exitcode",
        pl.lit('{"first_to_exit":true}').alias("extra"),
    )
    return pl.concat([failed, codes], how="diagonal_relaxed")


PARSER = LineParser(
    name="mpirun",
    literals=(
        "noticed that process rank",
        "Process name: [[",
        "Primary job",
        "Per user-direction",
        "exited with non-zero status",
        "The first process to do so",
    ),
    parse=parse,
    context_after=1,
)
