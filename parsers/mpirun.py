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

MPICH's and Intel MPI's launcher (Hydra's `mpiexec`) frame the process that ended badly by pid
and host, not rank (openai/jukebox#155):

    ===================================================================================
    =   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES
    =   PID 9665 RUNNING AT NeuroRTX6000
    =   EXIT CODE: 9
    =   CLEANING UP REMAINING PROCESSES
    =   YOU CAN IGNORE THE BELOW CLEANUP MESSAGES
    ===================================================================================
    YOUR APPLICATION TERMINATED WITH THE EXIT STRING: Killed (signal 9)

The `PID ... RUNNING AT` line is a `fatal_signal` event of that pid and host where the exit
string names a signal (or, without one, the exit code is 128 and a signal's number: `EXIT
CODE: 139`), else a `worker_failed` one with the exit code; the banner's other lines are
recognised without an event.

Open MPI's launcher that could not start a process at all prints a framed notice naming the
first rank it failed for, its node and the executable, wrapped where it likes (an mpi4py
hello-world, mpi4py/mpi4py#573, under Open MPI 5's `prterun`; QEF/q-e#32 under `mpirun`):

    prterun was unable to find the specified executable file, and therefore did
    not launch the job.  This error was first reported for process rank
    1; it may have occurred for other processes as well.
    ...
    Node:       gpu2 Executable: /home/mpi/.conda/envs/mpi/bin/python

or `mpirun was unable to launch the specified application as it could not access` / `or
execute an executable:` with `Executable:` and `Node:` lines and `while attempting to start
process rank 0.` (fastpm/fastpm#101). A `launch_failed` event of that rank on its first line,
the node in `host`, the executable in `exc_message`; the notice's lines recognised.

Its daemons not starting on the other nodes is the same failure one step earlier: the remote
shell's word that it found no `orted` (horovod/horovod#760: `bash: orted: command not found`;
#301: `bash: /usr/local/bin/orted: No such file or directory`), then `ORTE was unable to reliably
start one or more daemons.` with its list of causes. Each is a `launch_failed` event of no rank,
the shell's with `orted` in `exc_message`.
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
HYDRA_PROCESS = r"^=\s+PID (?P<pid>\d+) RUNNING AT (?P<host>\S+)\s*$"
HYDRA_EXIT_CODE = r"^=\s+EXIT CODE: (-?\d+)\s*$"
HYDRA_EXIT_STRING = (
    r"^YOUR APPLICATION TERMINATED WITH THE EXIT STRING: (?P<words>.*?) \(signal (?P<signal>\d+)\)"
)
HYDRA_CHATTER = (
    r"^=\s+(?:BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES|CLEANING UP REMAINING PROCESSES"
    r"|YOU CAN IGNORE THE BELOW CLEANUP MESSAGES)\s*$"
    r"|^YOUR APPLICATION TERMINATED WITH THE EXIT STRING: "
    r"|^This typically refers to a problem with your application\.\s*$"
    r"|^Please see the FAQ page for debugging suggestions\s*$"
)
# the banner's lines after its `PID` line, as far as its exit string
HYDRA_BANNER_LINES = 6
LAUNCH_FAILED = (
    r"was unable to (?:find the specified executable file|launch the specified application)"
)
# the rank, where the notice's wrapping leaves it: `... for process rank 0; it may ...`,
# `rank 0; it may ...` or `1; it may ...` on a line of its own, `... start process rank 0.`
LAUNCH_RANK = r"\bprocess rank (\d+)[;.]|^(?:rank )?(\d+); it may have occurred"
LAUNCH_NODE = r"(?:^|\s)Node:\s+(\S+)"
LAUNCH_EXECUTABLE = r"(?:^|\s)Executable:\s+(.+?)\s*$"
# the notice's lines after its first, as far as its `Executable:` line
LAUNCH_NOTICE_LINES = 12
REMOTE_NO_DAEMON = (
    r"^(?:ba|z)?sh: (?P<daemon>\S*\borted): (?:command not found|No such file or directory)"
)
DAEMONS_NOT_STARTED = "ORTE was unable to reliably start one or more daemons"
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
    hydra_chatter = lines.filter(pl.col("message").str.contains(HYDRA_CHATTER)).select(
        "file", "line", pl.lit(None, pl.String).alias("event")
    )
    parts = [
        _signal_deaths(lines),
        _first_exits(lines),
        _hydra_ends(lines),
        _launch_failures(lines),
        chatter,
        hydra_chatter,
    ]
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


def _launch_failures(lines: pl.DataFrame) -> pl.DataFrame:
    """The notice of a process the launcher could not start: its rank, node and executable
    from the lines after its first (LAUNCH_NOTICE_LINES at most)."""
    message = pl.col("message")
    rows = lines.sort("file", "line").with_columns(
        (pl.col("candidate") & message.str.contains(LAUNCH_FAILED)).alias("_opens")
    )
    if not rows.select(pl.col("_opens").any()).item():
        return _daemons_not_started(lines)
    opened_at = pl.when("_opens").then(pl.col("line")).forward_fill().over("file")
    rank = message.str.extract_groups(LAUNCH_RANK)
    notice = (
        rows.with_columns(opened_at.alias("_at"))
        .filter(
            pl.col("_at").is_not_null()
            & (pl.col("line").cast(pl.Int64) - pl.col("_at") <= LAUNCH_NOTICE_LINES)
        )
        .with_columns(
            pl.coalesce(rank.struct.field("1"), rank.struct.field("2"))
            .cast(pl.Int32, strict=False)
            .alias("_rank"),
            message.str.extract(LAUNCH_NODE, 1).alias("_node"),
            message.str.extract(LAUNCH_EXECUTABLE, 1).alias("_executable"),
        )
    )
    said = pl.col("_rank").is_not_null() | pl.col("_node").is_not_null()
    ends = notice.group_by("file", "_at").agg(
        pl.col("line").filter(said | pl.col("_executable").is_not_null()).max().alias("_end")
    )
    notice = notice.join(ends, on=["file", "_at"]).filter(
        pl.col("line") <= pl.coalesce("_end", "_at")
    )
    failed = notice.group_by("file", "_at", maintain_order=True).agg(
        pl.col("line").first(),
        pl.col("_end").first().alias("end_line"),
        pl.col("_rank").drop_nulls().first().alias("rank"),
        pl.col("_node").drop_nulls().first().alias("host"),
        pl.col("_executable").drop_nulls().first().alias("exc_message"),
    )
    events = failed.select(
        "file",
        "line",
        "end_line",
        pl.lit("launch_failed").alias("event"),
        pl.lit("error").alias("severity"),
        "rank",
        "host",
        "exc_message",
    )
    recognised = notice.filter(
        (pl.col("line") > pl.col("_at")) & (message.str.strip_chars() != "")
    ).select("file", "line", pl.lit(None, pl.String).alias("event"))
    return pl.concat([events, recognised, _daemons_not_started(lines)], how="diagonal_relaxed")


def _daemons_not_started(lines: pl.DataFrame) -> pl.DataFrame:
    """The remote shell's word that it found no `orted`, and ORTE's notice that its daemons
    did not start: launches that failed, of no rank."""
    message = pl.col("message")
    daemon = message.str.extract(REMOTE_NO_DAEMON, 1)
    said = pl.col("candidate") & (
        daemon.is_not_null() | message.str.contains(DAEMONS_NOT_STARTED, literal=True)
    )
    return lines.filter(said).select(
        "file",
        "line",
        pl.lit("launch_failed").alias("event"),
        pl.lit("error").alias("severity"),
        daemon.alias("exc_message"),
    )


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


def _hydra_ends(lines: pl.DataFrame) -> pl.DataFrame:
    """Hydra's banner: the process's `PID ... RUNNING AT` line, with the exit code and the exit
    string the lines after it give."""
    message = pl.col("message")
    ordered = lines.sort("file", "line")
    processes = ordered.filter(message.str.contains(HYDRA_PROCESS)).select(
        "file", "line", message.str.extract_groups(HYDRA_PROCESS).alias("_process")
    )
    if processes.is_empty():
        return processes.select("file", "line")
    codes = ordered.filter(message.str.contains(HYDRA_EXIT_CODE)).select(
        "file",
        pl.col("line").alias("_code_line"),
        message.str.extract(HYDRA_EXIT_CODE, 1).cast(pl.Int32, strict=False).alias("_code"),
    )
    strings = ordered.filter(message.str.contains(HYDRA_EXIT_STRING)).select(
        "file",
        pl.col("line").alias("_string_line"),
        message.str.extract_groups(HYDRA_EXIT_STRING).alias("_said"),
    )
    banner = pl.col("line") + HYDRA_BANNER_LINES
    code = (
        processes.join(codes, on="file")
        .filter(pl.col("_code_line").is_between("line", banner))
        .group_by("file", "line")
        .agg(pl.col("_code").sort_by("_code_line").first())
    )
    said = (
        processes.join(strings, on="file")
        .filter(pl.col("_string_line").is_between("line", banner + 2))
        .group_by("file", "line")
        .agg(pl.col("_said").sort_by("_string_line").first())
    )
    ended = processes.join(code, on=["file", "line"], how="left").join(
        said, on=["file", "line"], how="left"
    )
    # without the exit string, a code past 128 is the shell's way of saying a signal ended it
    # (139: SIGSEGV; an Intel MPI run's banner in the code index's file 36709440416)
    number = pl.coalesce(pl.col("_said").struct.field("signal"), signal_in_code(pl.col("_code")))
    name = number.replace_strict(SIGNAL_NAMES, default=None, return_dtype=pl.String)
    signalled = number.is_not_null()
    return ended.filter(signalled | (pl.col("_code").fill_null(0) != 0)).select(
        "file",
        "line",
        *how_it_ended(signalled, name),
        pl.col("_process").struct.field("pid").cast(pl.Int64, strict=False).alias("pid"),
        pl.col("_process").struct.field("host").alias("host"),
        name.alias("signal"),
        pl.when(signalled)
        .then(pl.coalesce(pl.col("_said").struct.field("words"), name))
        .alias("exc_message"),
        pl.when(~signalled).then(pl.col("_code")).alias("exitcode"),
    )


def signal_in_code(code: pl.Expr) -> pl.Expr:
    """The signal's number (a string, SIGNAL_NAMES' key) a shell's exit code past 128 says
    ended the process; null for any other code."""
    return pl.when(code.is_between(129, 128 + 64)).then(code - 128).cast(pl.String)


def how_it_ended(signalled: pl.Expr, name: pl.Expr) -> tuple[pl.Expr, pl.Expr]:
    """`event` and `severity` of a launcher's report of a process that ended: a fatal signal
    (a SIGTERM only a warning: the launcher's own, or the scheduler's) or a failed worker."""
    return (
        pl.when(signalled)
        .then(pl.lit("fatal_signal"))
        .otherwise(pl.lit("worker_failed"))
        .alias("event"),
        pl.when(name == "SIGTERM")
        .then(pl.lit("warning"))
        .otherwise(pl.lit("error"))
        .alias("severity"),
    )


PARSER = LineParser(
    name="mpirun",
    literals=(
        "noticed that process rank",
        "Process name: [[",
        "Primary job",
        "Per user-direction",
        "exited with non-zero status",
        "The first process to do so",
        " RUNNING AT ",
        "BAD TERMINATION OF ONE OF YOUR",
        "CLEANING UP REMAINING PROCESSES",
        "YOU CAN IGNORE THE BELOW CLEANUP",
        "TERMINATED WITH THE EXIT STRING",
        "This typically refers to a problem with your application",
        "Please see the FAQ page for debugging",
        "was unable to find the specified executable",
        "was unable to launch the specified application",
        "orted: ",
        DAEMONS_NOT_STARTED,
    ),
    parse=parse,
    context_after=max(HYDRA_BANNER_LINES, LAUNCH_NOTICE_LINES),
)
