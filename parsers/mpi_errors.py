# ruff: noqa: E501 -- verbatim log lines are quoted whole in the docstring
"""Open MPI's own error reports from inside a process: the library's fatal error handler, and
the notice that a process called MPI_Abort.

A process whose MPI call failed under `MPI_ERRORS_ARE_FATAL` prints a banner of `***` lines and
aborts (deepspeedai/DeepSpeed#935 under mpirun's `--tag-output` rank tags; horovod/horovod#465
on three processes of one host, untagged):

    [1,3]<stderr>:*** An error occurred in MPI_Init_thread
    [1,3]<stderr>:*** on a NULL communicator
    [1,3]<stderr>:*** MPI_ERRORS_ARE_FATAL (processes in this communicator will now abort,
    [1,3]<stderr>:***    and potentially your MPI job)
    [1,3]<stderr>:[az-wus2-v100-32gb-2-worker-cbfqfc:04757] Local abort before MPI_INIT completed completed successfully, but am not able to aggregate error messages, and not able to guarantee that all other processes were killed!

(horovod/horovod#465 shows the last line broken in three: `... completed successfully,`,
` but am not able to aggregate error messages, and not able to guarantee that all other
processes`, ` were killed!`.)

The first line is an `exception` of type `MPI error` whose message names the call, with the host
and pid the `[host:pid] Local abort` line gives; the rest are recognised without an event.

A process that called MPI_Abort itself is named by rank in a notice framed by dashes (Xilinx/
ACCL#104 after its tests failed, UCL/hemelb#4):

    MPI_ABORT was invoked on rank 1 in communicator MPI_COMM_WORLD
    with errorcode 1.

    NOTE: invoking MPI_ABORT causes Open MPI to kill all MPI processes.
    You may or may not see output from other processes, depending on
    exactly when Open MPI kills them.

That rank gave up first: an `exception` of type `MPI_ABORT` of that rank (the rank in
MPI_COMM_WORLD, the global rank of Horovod and torch's MPI backend), with its error code.

mpirun losing the daemon it started on another node (kubeflow/mpi-operator#152: a worker pod
crashed):

    ORTE has lost communication with a remote daemon.

      HNP daemon   : [[43015,0],0] on node tf-bert-...-launcher-gdqv7
      Remote daemon: [[43015,0],20] on node tf-bert-...-worker-19

    This is usually due to either a failure of the TCP network
    connection to the node, or possibly an internal failure of
    the daemon itself. We cannot recover from this failure, and
    therefore will terminate the job.

The `Remote daemon` line is a `node_lost` event with that node as its host; the notice's other
lines are recognised without an event.

MPICH and Intel MPI abort a process whose MPI call failed with its rank in the communicator
and the error stack under it, one call a line, the innermost saying what failed (Cray MPICH
puts its own header first: OLCF's PyTorch on Frontier guide, MPI_Init under an mpi4py
imported after torch; Intel MPI on EFA in aws-samples' guides):

    MPICH ERROR [Rank 0] [job id 2853270.0] [Fri Dec 13 13:41:36 2024] [frontier05084] - Abort(2665871) (rank 0 in comm 0): Fatal error in PMPI_Init_thread: Other MPI error, error stack:
    MPIR_Init_thread(170).................:
    MPIDI_CRAY_ofi_get_nic_index(1801)....: OFI invalid value for environment variable
    Abort(1091215) on node 0 (rank 0 in comm 0): Fatal error in PMPI_Init_thread: Other MPI error, error stack:

An `exception` of type `MPI error` of that rank when the communicator is comm 0 (MPI_COMM_WORLD:
the global rank), its message the fatal error and the stack's innermost words. Cray MPICH's
own complaints (`MPICH ERROR: Unable to use a NIC_POLICY of 'NUMA'. Rank 4 is not confined to
a single NUMA node.`) are errors of no rank; the stack's lines are recognised.
"""

from __future__ import annotations

import polars as pl

from logforensics.registry import LineParser

# Open MPI tags each banner line with its process, `[host:pid] `, unless mpirun tags lines
# itself (sparticlesteve/pytorch-cuda-mpi-error's Slurm output, `srun -l`: `0: [cgpu17:53890]
# *** An error occurred in MPI_Bcast`)
PROCESS_TAG = r"(?:\[(?P<host>[^\]\s:]+):(?P<pid>\d+)\] )?"
# (after other output on its line: a test runner's `test_destroy_group (__main__.TestMPIWithFork)
# ... ` awaiting its result, pytorch/pytorch#54097)
ERROR_IN_CALL = r"(?:^|\s)\s*" + PROCESS_TAG + r"\*\*\* An error occurred in (?P<call>MPI_\w+)"
# `[a34ceb6576ba:611] *** reported by process [3044540417,2]`: Open MPI's name of the process,
# [job, vpid]; the vpid is its rank in MPI_COMM_WORLD
REPORTED_BY = r"\*\*\* reported by process \[\d+,(\d+)\]\s*$"
BANNER_REST = (
    r"^\s*(?:\[[^\]\s:]+:\d+\] )?\*\*\* (?:on (?:a NULL communicator|communicator \S+)\s*$"
    r"|reported by process \[\d+,\d+\]\s*$|MPI_ERR_\w+: "
    r"|MPI_ERRORS_ARE_FATAL \(|\s+and potentially your MPI job\)\s*$)"
)
LOCAL_ABORT = r"^\s*\[(?P<host>[^\]\s:]+):(?P<pid>\d+)\] Local abort (?:before|after) MPI_INIT"
ABORT_INVOKED = r"MPI_ABORT was invoked on rank (\d+) in communicator (\S+)"
ERROR_CODE = r"^\s*with errorcode (-?\d+)\.\s*$"
MPICH_ABORT = (
    r"Abort ?\(-?[\dX]+\)(?: on node \d+)? \(rank (?P<rank>\d+) in comm (?P<comm>\d+)\): "
    r"(?P<message>Fatal error in \w+: [^,]*)"
)
# one call of the error stack: `MPIDI_CRAY_ofi_get_nic_index(1801)....: OFI invalid value ...`
MPICH_STACK = r"^\s*[A-Za-z_]\w* ?\([\dX]+\)\.*: ?(?P<said>.*?)\s*$"
STACK_LINES = 12  # an abort to the last of its stack, other ranks' lines between
CRAY_ERROR = r"^\s*MPICH ERROR: (?P<said>\S.*?)\s*$"
REMOTE_DAEMON = r"^\s*Remote daemon\s*: \[\[\d+,\d+\],\d+\] on node (\S+)\s*$"
NOTICE_REST = (
    r"^\s*(?:ORTE has lost communication with a remote daemon\."
    r"|HNP daemon\s*: \[\[\d+,\d+\],\d+\] on node \S+"
    r"|This is usually due to either a failure of the TCP network"
    r"|connection to the node, or possibly an internal failure of"
    r"|the daemon itself\. We cannot recover from this failure, and"
    r"|therefore will terminate the job\."
    r"|but am not able to aggregate error messages, and not able to guarantee that all"
    r" other processes"
    r"|were killed!"
    r"|NOTE: invoking MPI_ABORT causes Open MPI to kill all MPI processes\."
    r"|You may or may not see output from other processes, depending on"
    r"|exactly when Open MPI kills them\.)\s*$"
)


def parse(lines: pl.DataFrame) -> pl.DataFrame:
    candidates = lines.filter(pl.col("candidate"))
    return pl.concat(
        [
            _banners(candidates),
            _abort_notices(lines),
            _lost_daemons(candidates),
            _mpich_aborts(lines),
            _cray_errors(candidates),
            _recognised(candidates),
        ],
        how="diagonal_relaxed",
    )


def _lost_daemons(candidates: pl.DataFrame) -> pl.DataFrame:
    node = pl.col("message").str.extract(REMOTE_DAEMON, 1)
    return candidates.filter(node.is_not_null()).select(
        "file",
        "line",
        pl.lit("node_lost").alias("event"),
        pl.lit("error").alias("severity"),
        node.alias("host"),
    )


def _banners(candidates: pl.DataFrame) -> pl.DataFrame:
    """`*** An error occurred in MPI_X`, with the host and pid of the `[host:pid] Local abort`
    line that closes the banner (within its few lines, in the same file)."""
    said = pl.col("message").str.extract_groups(ERROR_IN_CALL)
    errors = (
        candidates.with_columns(said.alias("_said"))
        .filter(pl.col("_said").struct.field("call").is_not_null())
        .select(
            "file",
            "line",
            pl.lit("exception").alias("event"),
            pl.lit("error").alias("severity"),
            pl.lit("MPI error").alias("exc_type"),
            pl.format("An error occurred in {}", pl.col("_said").struct.field("call")).alias(
                "exc_message"
            ),
            pl.col("_said").struct.field("host").alias("_tag_host"),
            pl.col("_said").struct.field("pid").cast(pl.Int64, strict=False).alias("_tag_pid"),
        )
    )
    found = pl.col("message").str.extract_groups(LOCAL_ABORT)
    aborts = (
        candidates.with_columns(found.alias("_abort"))
        .filter(pl.col("_abort").struct.field("pid").is_not_null())
        .select(
            "file",
            "line",
            pl.col("line").alias("_abort_line"),
            pl.col("_abort").struct.field("host").alias("host"),
            pl.col("_abort").struct.field("pid").cast(pl.Int64, strict=False).alias("pid"),
        )
    )
    closed = _with_banner_line(errors, aborts)
    closed = closed.with_columns(
        pl.coalesce("_tag_host", "host").alias("host"), pl.coalesce("_tag_pid", "pid").alias("pid")
    ).drop("_abort_line", "_tag_host", "_tag_pid")
    reporter = pl.col("message").str.extract(REPORTED_BY, 1).cast(pl.Int32, strict=False)
    reported = (
        candidates.with_columns(reporter.alias("rank"))
        .filter(pl.col("rank").is_not_null())
        .select("file", "line", "rank")
    )
    closed = _with_banner_line(closed, reported)
    recognised = aborts.select("file", "line", pl.lit(None, pl.String).alias("event"))
    return pl.concat([closed, recognised], how="diagonal_relaxed")


def _with_banner_line(errors: pl.DataFrame, lines: pl.DataFrame) -> pl.DataFrame:
    """`errors` with the columns of the first of `lines` below each in its file, within its
    banner (BANNER_LINES)."""
    return errors.sort("line").join_asof(
        lines.sort("line"),
        on="line",
        by="file",
        strategy="forward",
        tolerance=BANNER_LINES,
        check_sortedness=False,  # sorted by line: within each file too
    )


BANNER_LINES = 6  # the error line to its `Local abort` line, other processes' lines between


def _abort_notices(lines: pl.DataFrame) -> pl.DataFrame:
    """`MPI_ABORT was invoked on rank N ...` and the error code on the line after it."""
    message = pl.col("message")
    rows = lines.sort("file", "line").with_columns(
        message.str.extract(ABORT_INVOKED, 1).cast(pl.Int32, strict=False).alias("_rank"),
        message.str.extract(ABORT_INVOKED, 2).alias("_communicator"),
        message.str.extract(ERROR_CODE, 1).cast(pl.Int64, strict=False).alias("_code"),
    )
    next_is_code = (pl.col("file").shift(-1) == pl.col("file")) & (
        pl.col("line").shift(-1) == pl.col("line") + 1
    )
    notices = rows.with_columns(
        pl.when(next_is_code).then(pl.col("_code").shift(-1)).alias("exitcode"),
        pl.when(next_is_code & pl.col("_code").shift(-1).is_not_null())
        .then(pl.col("line").shift(-1))
        .alias("end_line"),
    ).filter(pl.col("candidate") & pl.col("_rank").is_not_null())
    invoked = notices.select(
        "file",
        "line",
        pl.lit("exception").alias("event"),
        pl.lit("error").alias("severity"),
        pl.col("_rank").alias("rank"),
        pl.lit("MPI_ABORT").alias("exc_type"),
        pl.format(
            "MPI_ABORT was invoked on rank {} in communicator {}", "_rank", "_communicator"
        ).alias("exc_message"),
        "exitcode",
        "end_line",
    )
    codes = notices.filter(pl.col("end_line").is_not_null()).select(
        "file", pl.col("end_line").alias("line"), pl.lit(None, pl.String).alias("event")
    )
    return pl.concat([invoked, codes], how="diagonal_relaxed")


def _mpich_aborts(lines: pl.DataFrame) -> pl.DataFrame:
    """`Abort(N) (rank R in comm C): Fatal error in ...`, its message ending in the innermost
    words of the error stack after it (the last stack line that says something)."""
    said = pl.col("message").str.extract_groups(MPICH_ABORT)
    aborts = (
        lines.filter(pl.col("candidate"))
        .with_columns(said.alias("_said"))
        .filter(pl.col("_said").struct.field("rank").is_not_null())
    )
    if aborts.is_empty():
        return pl.DataFrame()
    stack = lines.filter(pl.col("message").str.contains(MPICH_STACK)).select(
        "file",
        pl.col("line").alias("_at"),
        pl.col("message").str.extract(MPICH_STACK, 1).alias("_words"),
    )
    # each abort's stack lines: those within its few lines after it, in its file
    under = (
        aborts.select("file", "line")
        .join(stack, on="file")
        .filter((pl.col("_at") > pl.col("line")) & (pl.col("_at") <= pl.col("line") + STACK_LINES))
    )
    innermost = (
        under.filter(pl.col("_words") != "")
        .group_by("file", "line")
        .agg(pl.col("_words").sort_by("_at").last().alias("_innermost"))
    )
    in_world = pl.col("_said").struct.field("comm") == "0"
    message = pl.col("_said").struct.field("message").str.strip_chars()
    events = aborts.join(innermost, on=["file", "line"], how="left").select(
        "file",
        "line",
        pl.lit("exception").alias("event"),
        pl.lit("error").alias("severity"),
        pl.when(in_world)
        .then(pl.col("_said").struct.field("rank").cast(pl.Int32, strict=False))
        .alias("rank"),
        pl.lit("MPI error").alias("exc_type"),
        pl.when(pl.col("_innermost").is_not_null())
        .then(pl.format("{}: {}", message, "_innermost"))
        .otherwise(message)
        .alias("exc_message"),
    )
    recognised = under.select(
        "file", pl.col("_at").alias("line"), pl.lit(None, pl.String).alias("event")
    ).unique()
    return pl.concat([events, recognised], how="diagonal_relaxed")


def _cray_errors(candidates: pl.DataFrame) -> pl.DataFrame:
    """Cray MPICH's complaint, an error of no rank; where the file holds an abort with its rank,
    the abort is that failure (the complaint is read, no event)."""
    said = pl.col("message").str.extract(CRAY_ERROR, 1)
    aborted = pl.col("message").str.contains(MPICH_ABORT).any().over("file")
    complaints = candidates.with_columns(aborted.alias("_aborted")).filter(said.is_not_null())
    return complaints.select(
        "file",
        "line",
        pl.when(~pl.col("_aborted")).then(pl.lit("exception")).alias("event"),
        pl.lit("error").alias("severity"),
        pl.lit("MPI error").alias("exc_type"),
        said.alias("exc_message"),
    )


def _recognised(candidates: pl.DataFrame) -> pl.DataFrame:
    """The banner's and the notice's other lines: recognised, no event of their own."""
    return candidates.filter(
        pl.col("message").str.contains(BANNER_REST) | pl.col("message").str.contains(NOTICE_REST)
    ).select("file", "line", pl.lit(None, pl.String).alias("event"))


PARSER = LineParser(
    name="mpi_errors",
    literals=(
        "*** An error occurred in MPI_",
        "*** on ",
        "*** MPI_ERRORS_ARE_FATAL",
        "*** reported by process [",
        "*** MPI_ERR_",
        "and potentially your MPI job)",
        "] Local abort ",
        "but am not able to aggregate error messages",
        "were killed!",
        "MPI_ABORT was invoked on rank",
        "NOTE: invoking MPI_ABORT",
        "You may or may not see output from other processes",
        "exactly when Open MPI kills them.",
        "ORTE has lost communication",
        "This is usually due to either a failure of the TCP network",
        "daemon",
        "connection to the node",
        "therefore will terminate the job",
        ": Fatal error in ",
        "MPICH ERROR: ",
    ),
    parse=parse,
    context_after=STACK_LINES,
)
