"""torchrun / TorchElastic agent output: the ChildFailedError summary and the agent's log lines.

The summary the agent raises when a worker fails
(pytorch/pytorch:torch/distributed/elastic/multiprocessing/errors/__init__.py,
`_MSG_FORMAT_TEMPLATE` and `_FAILURE_FORMAT_TEMPLATE`; borders at most 60 wide):

    torch.distributed.elastic.multiprocessing.errors.ChildFailedError:
    ============================================================
    tools/train.py FAILED
    ------------------------------------------------------------
    Failures:
    [1]:
      time      : 2023-06-14_22:36:10
      host      : neptun.informatik.uni-kl.de
      rank      : 1 (local_rank: 1)
      exitcode  : -6 (pid: 2385923)
      error_file: <N/A>
      traceback : Signal 6 (SIGABRT) received by PID 2385923
    ------------------------------------------------------------
    Root Cause (first observed failure):
    [0]:
      ...
    ============================================================

`Failures:` may hold `  <NO_OTHER_FAILURES>`; `traceback :` may be followed by the child's
traceback indented by two more spaces (pytorch/pytorch#148976); recent torch (2.13 in
sample_logs/) names the signal after the pid: `exitcode  : -15 (pid: 4267)  (SIGTERM)`.
Before torch 1.10 the block had `Root Cause:` first, no `host`, and `time:`/`rank:`/
`exitcode:`/`error_file:`/`msg:` fields (pytorch/pytorch#64681, #66182).

Agent lines (torch/distributed/elastic/multiprocessing/api.py), in three logging eras:

    ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -6) local_rank: 1 ...
    [2024-02-09 09:09:15,164] torch.distributed.elastic.multiprocessing.api: [ERROR] failed ...
    W0801 13:23:17.366000 32974 torch/distributed/elastic/multiprocessing/api.py:900] Sending ...

with `failed (exitcode: -6) local_rank: 1 (pid: 886322) of binary: <python>` and `Sending process
33051 closing signal SIGTERM` as their tails (NVIDIA/nccl#1438, speechbrain/speechbrain#2401,
OEvortex/unsloth#10). An agent signalled itself says so before stopping its workers
(`agent/server/api.py:725] Received Signals.SIGTERM death signal, shutting down workers`).

The launcher before torchrun (`python -m torch.distributed.launch`, torch 1.x) ends by raising
its worker's exit as a `subprocess.CalledProcessError` whose command names the worker by its
`--local_rank=N` (microsoft/Swin-Transformer#267, verbatim):

    subprocess.CalledProcessError: Command '['/usr/bin/python3', '-u', 'main.py', '--local_rank=3', ...]' died with <Signals.SIGKILL: 9>.

read as that worker's failure, a signal as its negative exit code as torchrun gives it.
"""  # noqa: E501 -- verbatim lines

from __future__ import annotations

import polars as pl

from logforensics.registry import LineParser
from parsers.mpirun import SIGNAL_NAMES
from parsers.traceback import EXCEPTION_LINE, FRAME, frame_text, message_after, writer_stream

# an exception event's `extra` where it is the worker's, as torchrun's summary carries it
CARRIED_EXCEPTION = '{"in_summary":true}'
# ../ddp_train.py FAILED
TITLE = r"^\S+ FAILED\s*$"
# ============================================================
BORDER = r"^={8,}\s*$"
# ------------------------------------------------------------
SECTION = r"^-{8,}\s*$"
# Root Cause (first observed failure):        (torch < 1.10: `Root Cause:`)
ROOT_CAUSE = r"^Root Cause(?: \(first observed failure\))?:\s*$"
# Failures:                                   (torch < 1.10: `Other Failures:`)
OTHER_FAILURES = r"^(?:Other )?Failures:\s*$"
#   <NO_OTHER_FAILURES>
NO_OTHER_FAILURES = r"^\s*<NO_OTHER_FAILURES>\s*$"
# [1]:
ENTRY = r"^\[\d+\]:\s*$"
#   exitcode  : -6 (pid: 2385923)
FIELD = r"^\s+(?:time|host|rank|exitcode|error_file|traceback|msg)\s*:"
#   time      : 2023-06-14_22:36:10
TIME = r"^\s+time\s*:\s*(\d{4}-\d{2}-\d{2}_\d{2}:\d{2}:\d{2}(?:\.\d+)?)"
#   host      : neptun.informatik.uni-kl.de
HOST = r"^\s+host\s*:\s*(\S+)"
#   rank      : 1 (local_rank: 1)
RANK = r"^\s+rank\s*:\s*(?P<rank>\d+)(?:\s*\(local_rank:\s*(?P<local_rank>\d+)\))?"
#   exitcode  : -15 (pid: 4267)  (SIGTERM)
EXITCODE = (
    r"^\s+exitcode\s*:\s*(?P<exitcode>-?\d+)(?:\s*\(pid:\s*(?P<pid>\d+)\))?"
    r"(?:\s*\((?P<signal>SIG[A-Z0-9]+)\))?"
)
#   error_file: /tmp/torchelastic_ih8xk_wi/5240416c-..._sfj1zute/attempt_0/1/error.json
ERROR_FILE = r"^\s+error_file\s*:\s*(\S+)"
#   traceback : Signal 6 (SIGABRT) received by PID 2385923      (torch < 1.10: `msg: "Signal 6 ...`)
SIGNAL_RECEIVED = r'^\s+(?:traceback|msg)\s*:\s*"?Signal \d+ \((SIG[A-Z0-9]+)\) received by PID'
#   traceback : Traceback (most recent call last):
TRACEBACK_FIELD = r"^\s+traceback\s*:"
# An entry whose fields a paste ran together on one line, their labels and indentation lost
# (a torch.distributed.launch job's summary, pasted from a rendered page):
#   rank2 (local rank: 2)exitcode: -9 (pid: 36071)error file: <N/A>
#   traceback : signal 9 (SIGKILL) received by PID 36071
GLUED_ENTRY = (
    r"^\s*rank\s*:?\s*(?P<rank>\d+) ?\(local[_ ]rank: ?(?P<local_rank>\d+)\)\s*"
    r"exitcode\s*: ?(?P<exitcode>-?\d+)(?: ?\(pid: ?(?P<pid>\d+)\))?"
)
GLUED_SIGNAL = r"(?i)^\s*(?:traceback|msg)\s*:\s*\"?signal \d+ \((SIG[A-Z0-9]+)\) received by PID"
# its heading, the colon parted from it: `Root Cause (first observed failure) :`
GLUED_ROOT_CAUSE = r"^\s*Root Cause(?: \(first observed failure\))?\s*:\s*$"
# ... failed (exitcode: -6) local_rank: 1 (pid: 886322) of binary: /idas/.../bin/python
# A paste may cut or garble the tail (tatsu-lab/stanford_alpaca#183: `failed (exitcode: -9)
# local_rankroot/anaconda3/...`): the stem says the death, the tail only who when it is whole.
# Rich's console handler (`accelerate launch`) puts the level in a column before the message:
#    ERROR    failed (exitcode: -9) local_rank: 5 (pid: 22) of  api.py:673
# (huggingface/accelerate#1214; the tail wraps to the next line), or with its time column
# before that (HarderThenHarder/transformers_tasks#27: `[16:26:31] ERROR    failed (exitcode: 1)
# local_rank: 1 (pid: 17572) of binary: ...`). A logging format of the
# script's own puts a space after the logger's name (salesforce/BLIP#90:
# `[ERROR] 2022-08-21 20:11:07,312 api: failed (exitcode: -9) local_rank: 0 (pid: 28413) ...`)
# A build that names the binary first (shihao1895/MemoryVLA#20, on PAI-DLC): `failed (exitcode:
# -9) for binary located at /mnt/.../bin/python3.10 with local_rank: 0 (process ID: 71)`
WORKER_FAILED = (
    r"(?:api: ?|\] |^|^\s*(?:\[[\d:/ ]+\] +)?ERROR +)failed \(exitcode: (?P<exitcode>-?\d+)\)"
    r"(?:(?: for binary located at \S+ with)? local_rank: (?P<local_rank>\d+) "
    r"\((?:pid|process ID): (?P<pid>\d+)\))?"
)
# subprocess.CalledProcessError: Command '[..., '--local_rank=3', ...]' returned non-zero exit
# status 1. / ... died with <Signals.SIGKILL: 9>.
# the command it ran for one worker, up to the worker's local rank
WORKER_COMMAND = r"Command '\[.*?'--local[_-]rank=(?P<local_rank>\d+)'"
LEGACY_WORKER_EXIT = (
    rf"CalledProcessError: {WORKER_COMMAND}.*?\]' "
    r"(?:returned non-zero exit status (?P<status>\d+)|died with <Signals\.SIG[A-Z0-9]+: "
    r"(?P<signal>\d+)>)"
)
# ProcessFailure(local_rank=0, pid=54, exitcode=-7, error_file='<N/A>', ...): torchelastic's
# record of a failed worker, printed as it is by launchers that log it
PROCESS_FAILURE = (
    r"ProcessFailure\(local_rank=(?P<local_rank>\d+), pid=(?P<pid>\d+), "
    r"exitcode=(?P<exitcode>-?\d+)"
)
# ... Sending process 886321 closing signal SIGTERM    (the same tolerance: `... 53038 closing`)
# ... Sending process 73 the closing signal SIGTERM    (shihao1895/MemoryVLA#20, a PAI-DLC pod)
# ... api.py:766] Closing process 293866 via signal SIGTERM   (a worker run as a function:
#     NVIDIA/nvidia-resiliency-ext#18)
# ... spawn.py:165] Terminating process 3276 via signal SIGTERM   (torch.multiprocessing.spawn
#     stopping the others after one failed: tests/data/launchers/elastic_function, a run here)
WORKER_SIGTERM = (
    r"(?:Sending process (?P<pid>\d+) (?:the )?closing"
    r"|(?:Closing|Terminating) process (?P<via_pid>\d+) via)(?: signal (?P<signal>SIG[A-Z0-9]+))?"
)
# The agent itself signalled from outside, before it stops its workers
# (modelscope/ms-swift#8193: `Received Signals.SIGTERM death signal, shutting down workers`;
# newer torch prints the number: `api.py:719] Received 15 death signal, shutting down workers`,
# pytorch/pytorch#150916)
DEATH_SIGNAL = (
    r"Received (?:Signals\.)?(?P<signal>SIG[A-Z0-9]+|\d{1,2}) death signal, shutting down workers"
)
# ... the same signal as the exception torchrun's agent raises on it, which is all a console
# keeps where the warning itself failed to format (brendansu/CAV-Agent-Defense's transcript: a
# `--- Logging error ---` around it, under SLURM's preemption):
# torch.distributed.elastic.multiprocessing.api.SignalException: Process 3045566 got signal: 15
SIGNAL_EXCEPTION = r"\bSignalException: Process \d+ got signal: (?P<signal>\d{1,2})\b"
# ... the older launchers' own words for it (torch.distributed.launch before torchrun, and
# DeepSpeed's launch.py), after `Killing subprocess N` for each worker (bigscience-workshop/
# bigscience's meg_gpt2 benchmarks, under SLURM's cancellation): `Main process received SIGTERM,
# exiting`
OLD_LAUNCHER_SIGNAL = r"Main process received (?P<signal>SIG[A-Z0-9]+), exiting"
# W1130 15:04:26.975000 4263 torch/distributed/run.py:874] *****************************************
# WARNING:torch.distributed.run:
RUN_LOGGER = r"torch[./]distributed[./]run(?:\.py:\d+\]|:)"
# Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, ...
OMP_NOTICE = "Setting OMP_NUM_THREADS environment variable for each process"
# *****************************************   (the stdlib-logging era prints these bare)
STARS = r"^\*{10,}\s*$"
# ... no error file defined for parent, to copy child error file (/tmp/.../attempt_0/0/error.json)
NO_PARENT_ERROR_FILE = "no error file defined for parent, to copy child error file"

STREAM = "_stream"
NOT_AVAILABLE = "<N/A>"


def parse(lines: pl.DataFrame) -> pl.DataFrame:
    rows = _classify(lines)
    return pl.concat(
        [
            _summary(rows),
            _glued_entries(rows),
            _worker_failures(rows),
            _legacy_worker_exits(rows),
            _process_failures(rows),
            _sigterms(rows),
            _death_signals(rows),
            _agent_chatter(rows),
        ],
        how="diagonal_relaxed",
    )


def _classify(lines: pl.DataFrame) -> pl.DataFrame:
    message = pl.col("message").fill_null("")
    return lines.sort("file", "line").with_columns(
        writer_stream(lines.columns).alias(STREAM),
        message.alias("_message"),
        message.str.strip_chars().eq("").alias("_blank"),
        pl.col("text").fill_null("").str.strip_chars().eq("").alias("_text_blank"),
    )


def _next_line_matches(pattern: str) -> pl.Expr:
    """Whether the next line of the file, in the same stream, matches `pattern`."""
    following = pl.col("line").shift(-1).over(STREAM) == pl.col("line") + 1
    return following & pl.col("_message").shift(-1).over(STREAM).str.contains(pattern)


def _first_opening() -> pl.Expr:
    """The row (within its stream) where a table without its title first opens: a
    `Failures:` or `Root Cause` heading over an `[N]:` entry, an entry over its first field
    where the paste starts below the heading (hiyouga/LLaMA-Factory#2206: `[5]:` first), or
    the entry's fields where it starts below the entry."""
    message = pl.col("_message")
    heading = message.str.contains(OTHER_FAILURES) | message.str.contains(ROOT_CAUSE)
    entry = message.str.contains(ENTRY) & _next_line_matches(FIELD)
    opening = (heading & _next_line_matches(ENTRY)) | entry | _bare_fields()
    return pl.int_range(pl.len()).filter(opening).first().over(STREAM)


def _bare_fields() -> pl.Expr:
    """The first of an entry's field lines where the paste starts below its `[N]:` line: a run
    of field lines holding an `exitcode` (NVIDIA/Megatron-LM#1880: `  rank      : 0
    (local_rank: 0)`, `  exitcode  : -11 (pid: 6421)`, ..., the summary's last border)."""
    field = pl.col("_field")
    holds_exit = pl.col("_message").str.contains(EXITCODE).any().over(STREAM, "_field_run")
    above = pl.col("_message").shift(1).over(STREAM).fill_null("")
    first = ~field.shift(1).over(STREAM).fill_null(False) & ~above.str.contains(ENTRY)
    return field & first & holds_exit


def _with_field_runs(rows: pl.DataFrame) -> pl.DataFrame:
    """`rows` with `_field` (an entry's field line) and `_field_run` (which run of consecutive
    field lines it is in, within its stream)."""
    field = pl.col("_message").str.contains(FIELD)
    return rows.with_columns(field.alias("_field")).with_columns(
        (~pl.col("_field")).cum_sum().over(STREAM).alias("_field_run")
    )


def _summary(rows: pl.DataFrame) -> pl.DataFrame:
    """One `child_failed` per `[N]:` entry of each summary block; every line of the block
    (borders, title, headers, fields, the child's traceback) recognised."""
    message = pl.col("_message")
    rows = _with_field_runs(rows)
    opens = message.str.contains(TITLE) | message.str.contains(ENTRY) | _bare_fields()
    if not rows.select(opens.any()).item():
        return _no_events(rows)  # every block opens at a title, an entry or its fields
    is_title = message.str.contains(TITLE) & _next_line_matches(SECTION)
    # a paste that starts inside the table, before any title: at that heading over an entry
    # (hiyouga/ChatGLM-Efficient-Tuning#75; a border above it is no line of this family's)
    headless = (is_title.cum_sum().over(STREAM) == 0) & (
        pl.int_range(pl.len()).over(STREAM) == _first_opening()
    )
    rows = rows.with_columns(
        (message.str.contains(ENTRY) | (headless & message.str.contains(FIELD))).alias("_entry"),
        (is_title | headless).cum_sum().over(STREAM).alias("_block"),
        (message.str.contains(BORDER) & _next_line_matches(TITLE)).alias("_opening"),
    )
    in_block = pl.col("_block") > 0
    heading = (
        message.str.contains(ROOT_CAUSE)
        | message.str.contains(OTHER_FAILURES)
        | message.str.contains(NO_OTHER_FAILURES)
        | message.str.contains(SECTION)
        | message.str.contains(BORDER)
        | is_title
    )
    is_entry = pl.col("_entry")
    continuation = message.str.starts_with(" ") | message.str.starts_with("\t") | pl.col("_blank")
    closing = pl.when(in_block & message.str.contains(BORDER)).then(pl.col("line")).min()
    stray = pl.when(in_block & ~heading & ~is_entry & ~continuation).then(pl.col("line")).min()
    block_end = pl.min_horizontal(closing.over(STREAM, "_block"), stray.over(STREAM, "_block") - 1)
    rows = rows.with_columns(
        (in_block & (block_end.is_null() | (pl.col("line") <= block_end))).alias("_in_block"),
        (heading | is_entry).cum_sum().over(STREAM).alias("_part"),
        pl.when(message.str.contains(ROOT_CAUSE))
        .then(True)
        .when(message.str.contains(OTHER_FAILURES))
        .then(False)
        .forward_fill()
        .over(STREAM, "_block")
        .alias("_root_cause"),
    )
    block = rows.filter(pl.col("_in_block"))
    entries = block.filter(pl.col("_entry").first().over(STREAM, "_part"))
    events = _entries(entries)
    recognised = pl.concat([block, rows.filter(pl.col("_opening"))]).filter(~pl.col("_text_blank"))
    return pl.concat(
        [events, recognised.select("file", "line", pl.lit(None, dtype=pl.String).alias("event"))],
        how="diagonal_relaxed",
    )


def _entries(entries: pl.DataFrame) -> pl.DataFrame:
    """Fold each entry's field lines into one event on its `[N]:` line."""
    message = pl.col("_message")
    rank = message.str.extract_groups(RANK)
    exitcode = message.str.extract_groups(EXITCODE)
    indent = message.str.len_chars() - message.str.strip_chars_start().str.len_chars()
    field_indent = pl.when(message.str.contains(FIELD)).then(indent).min().over(STREAM, "_part")
    after_traceback = message.str.contains(TRACEBACK_FIELD).cum_sum().over(STREAM, "_part") > 0
    previous_indent = indent.shift(1).over(STREAM, "_part")
    exception_text = message.str.strip_chars_start()
    # The child's traceback, indented two more: its exception line is the first line back at
    # the fields' indentation after deeper (frame) lines.
    exception_line = (
        after_traceback
        & ~message.str.contains(FIELD)
        & (indent == field_indent)
        & (previous_indent > field_indent)
        & exception_text.str.contains(EXCEPTION_LINE)
    )
    exc_type = exception_text.str.extract(EXCEPTION_LINE, 1)
    error_file = message.str.extract(ERROR_FILE, 1)
    folded = entries.group_by(STREAM, "_part", maintain_order=True).agg(
        pl.col("file").first(),
        pl.col("line").first(),
        pl.col("line").filter(~pl.col("_blank")).max().alias("end_line"),
        pl.col("_root_cause").first().fill_null(False),
        rank.struct.field("rank").drop_nulls().first().cast(pl.Int32, strict=False).alias("rank"),
        rank.struct.field("local_rank")
        .drop_nulls()
        .first()
        .cast(pl.Int32, strict=False)
        .alias("local_rank"),
        message.str.extract(HOST, 1).drop_nulls().first().alias("host"),
        exitcode.struct.field("exitcode")
        .drop_nulls()
        .first()
        .cast(pl.Int32, strict=False)
        .alias("exitcode"),
        exitcode.struct.field("pid").drop_nulls().first().cast(pl.Int64, strict=False).alias("pid"),
        pl.coalesce(exitcode.struct.field("signal"), message.str.extract(SIGNAL_RECEIVED, 1))
        .drop_nulls()
        .first()
        .alias("signal"),
        message.str.extract(TIME, 1).drop_nulls().first().alias("_time"),
        error_file.drop_nulls().first().alias("_error_file"),
        exc_type.filter(exception_line).last().alias("exc_type"),
        message_after(exception_text, exc_type).filter(exception_line).last().alias("exc_message"),
        frame_text(message)
        .filter(after_traceback & message.str.contains(FRAME))
        .last()
        .alias("frame"),
        pl.col("line").filter(message.str.contains(TRACEBACK_FIELD)).first().alias("_tb_line"),
        pl.col("line").filter(exception_line).last().alias("_exc_line"),
    )
    folded = folded.filter(pl.col("rank").is_not_null() | pl.col("exitcode").is_not_null())
    return pl.concat([_child_failures(folded), _carried_exceptions(folded)], how="diagonal_relaxed")


def _carried_exceptions(folded: pl.DataFrame) -> pl.DataFrame:
    """The worker's own exception where the summary carries its traceback (the worker's entry
    point decorated with `@record`): that rank's error, as its own traceback would state it
    (pytorch/pytorch#73465: `NameError: name 'die' is not defined` under rank 304's entry)."""
    return folded.filter(
        pl.col("exc_type").is_not_null() & pl.col("_tb_line").is_not_null()
    ).select(
        "file",
        pl.col("_tb_line").alias("line"),
        pl.lit("exception").alias("event"),
        pl.lit("error").alias("severity"),
        pl.col("_exc_line").alias("end_line"),
        "rank",
        "local_rank",
        "host",
        "pid",
        "exc_type",
        "exc_message",
        "frame",
        pl.lit(CARRIED_EXCEPTION).alias("extra"),
    )


def _child_failures(folded: pl.DataFrame) -> pl.DataFrame:
    error_file_value = pl.when(pl.col("_error_file") != NOT_AVAILABLE).then(pl.col("_error_file"))
    return folded.select(
        "file",
        "line",
        pl.lit("child_failed").alias("event"),
        pl.lit("error").alias("severity"),
        "end_line",
        "rank",
        "local_rank",
        "host",
        "exitcode",
        "pid",
        "signal",
        pl.col("_time")
        .str.to_datetime("%Y-%m-%d_%H:%M:%S%.f", strict=False, time_unit="us")
        .alias("timestamp"),
        pl.struct(root_cause=pl.col("_root_cause"), error_file=error_file_value)
        .struct.json_encode()
        .alias("extra"),
        "exc_type",
        "exc_message",
        "frame",
    )


def _glued_entries(rows: pl.DataFrame) -> pl.DataFrame:
    """A `child_failed` for each entry whose fields a paste ran together (GLUED_ENTRY), its
    signal from the `traceback :` line after it, the root cause where a `Root Cause` heading
    is the last heading above it."""
    message = pl.col("_message")
    if not rows.select(message.str.contains(GLUED_ENTRY).any()).item():
        return rows.select("file", "line").clear()
    found = message.str.extract_groups(GLUED_ENTRY).struct
    heading = (
        pl.when(message.str.contains(GLUED_ROOT_CAUSE))
        .then(True)
        .when(message.str.contains(OTHER_FAILURES))
        .then(False)
    )
    marked = rows.with_columns(
        heading.forward_fill().over(STREAM).fill_null(False).alias("_root_cause"),
        pl.when(_next_line_matches(GLUED_SIGNAL))
        .then(message.shift(-1).over(STREAM).str.extract(GLUED_SIGNAL, 1))
        .alias("signal"),
    )
    events = marked.filter(found.field("rank").is_not_null()).select(
        "file",
        "line",
        pl.lit("child_failed").alias("event"),
        pl.lit("error").alias("severity"),
        found.field("rank").cast(pl.Int32, strict=False).alias("rank"),
        found.field("local_rank").cast(pl.Int32, strict=False).alias("local_rank"),
        found.field("exitcode").cast(pl.Int32, strict=False).alias("exitcode"),
        found.field("pid").cast(pl.Int64, strict=False).alias("pid"),
        "signal",
        pl.struct(root_cause=pl.col("_root_cause"), error_file=pl.lit(None, pl.String))
        .struct.json_encode()
        .alias("extra"),
    )
    said = marked.filter(
        message.str.contains(GLUED_SIGNAL) | message.str.contains(GLUED_ROOT_CAUSE)
    ).select("file", "line", pl.lit(None, pl.String).alias("event"))
    return pl.concat([events, said], how="diagonal_relaxed")


def _worker_failures(rows: pl.DataFrame) -> pl.DataFrame:
    found = pl.col("_message").str.extract_groups(WORKER_FAILED)
    return _failed_workers(rows.filter(pl.col("_message").str.contains(WORKER_FAILED)), found)


def _failed_workers(rows: pl.DataFrame, found: pl.Expr) -> pl.DataFrame:
    """`worker_failed` events from the exit code, local rank and pid groups `found` holds."""
    return rows.select(
        "file",
        "line",
        pl.lit("worker_failed").alias("event"),
        pl.lit("error").alias("severity"),
        found.struct.field("exitcode").cast(pl.Int32, strict=False).alias("exitcode"),
        found.struct.field("local_rank").cast(pl.Int32, strict=False).alias("local_rank"),
        found.struct.field("pid").cast(pl.Int64, strict=False).alias("pid"),
    )


def _legacy_worker_exits(rows: pl.DataFrame) -> pl.DataFrame:
    """`worker_failed` from the old launcher's CalledProcessError (see LEGACY_WORKER_EXIT)."""
    said = pl.col("_message").str.extract_groups(LEGACY_WORKER_EXIT)
    status, signal = said.struct.field("status"), said.struct.field("signal")
    code = pl.coalesce(
        status.cast(pl.Int32, strict=False), -signal.cast(pl.Int32, strict=False)
    ).alias("exitcode")
    found = pl.struct(code, said.struct.field("local_rank"), pl.lit(None).alias("pid"))
    return _failed_workers(rows.filter(pl.col("_message").str.contains(LEGACY_WORKER_EXIT)), found)


def _process_failures(rows: pl.DataFrame) -> pl.DataFrame:
    """Each `ProcessFailure(...)` repr on a line (a launcher built on torchelastic logging its
    failures dict, intelligent-machine-learning/dlrover#1046: `{0: ProcessFailure(local_rank=0,
    pid=54, exitcode=-7, ..., message='Signal 7 (SIGBUS) received by PID 54', ...)}`)."""
    each = pl.col("_message").str.extract_all(PROCESS_FAILURE)
    failures = (
        rows.filter(pl.col("_message").str.contains(PROCESS_FAILURE))
        .select("file", "line", each.alias("_failure"))
        .explode("_failure")
    )
    return _failed_workers(failures, pl.col("_failure").str.extract_groups(PROCESS_FAILURE))


def _sigterms(rows: pl.DataFrame) -> pl.DataFrame:
    found = pl.col("_message").str.extract_groups(WORKER_SIGTERM)
    return rows.filter(pl.col("_message").str.contains(WORKER_SIGTERM)).select(
        "file",
        "line",
        pl.lit("worker_sigterm").alias("event"),
        pl.lit("warning").alias("severity"),
        pl.coalesce(found.struct.field("pid"), found.struct.field("via_pid"))
        .cast(pl.Int64, strict=False)
        .alias("pid"),
        found.struct.field("signal").alias("signal"),
    )


def _death_signals(rows: pl.DataFrame) -> pl.DataFrame:
    """`launcher_signalled`: the agent was sent a signal (a scheduler, a user, the host) and
    shuts its workers down."""
    message = pl.col("_message")
    said = pl.coalesce(
        message.str.extract(DEATH_SIGNAL, 1),
        message.str.extract(SIGNAL_EXCEPTION, 1),
        message.str.extract(OLD_LAUNCHER_SIGNAL, 1),
    )
    signal = said.replace(SIGNAL_NAMES)  # a number by its name
    return rows.filter(said.is_not_null()).select(
        "file",
        "line",
        pl.lit("launcher_signalled").alias("event"),
        pl.lit("warning").alias("severity"),
        signal.alias("signal"),
    )


def _agent_chatter(rows: pl.DataFrame) -> pl.DataFrame:
    """The launcher's own start-up banner and error-file notice: recognised, no event."""
    message = pl.col("_message")
    banner = message.str.contains(RUN_LOGGER) | message.str.contains(OMP_NOTICE, literal=True)
    star_lines = message.str.contains(STARS)
    notice = message.str.contains(NO_PARENT_ERROR_FILE, literal=True)
    if not rows.select((banner | star_lines | notice).any()).item():
        return _no_events(rows)
    previous_is_banner = (pl.col("line").shift(1).over(STREAM) == pl.col("line") - 1) & (
        banner.shift(1).over(STREAM)
    )
    stars = star_lines & (previous_is_banner | _next_line_matches(OMP_NOTICE))
    chatter = banner | stars | notice
    return rows.filter(chatter & ~pl.col("_text_blank")).select(
        "file", "line", pl.lit(None, dtype=pl.String).alias("event")
    )


def _no_events(rows: pl.DataFrame) -> pl.DataFrame:
    return rows.clear().select("file", "line", pl.lit(None, dtype=pl.String).alias("event"))


PARSER = LineParser(
    name="elastic",
    literals=(
        "ChildFailedError",
        " FAILED",
        "Failures:",
        "Root Cause",
        "<NO_OTHER_FAILURES>",
        "========",
        "exitcode",
        "local_rank",
        "error_file",
        "traceback :",
        'File "',
        "closing signal",
        "death signal",
        " got signal: ",
        "Main process received ",
        "ProcessFailure(",
        "CalledProcessError: Command ",
        "Sending process ",
        "Closing process ",
        "Terminating process ",
        "torch/distributed/run.py",
        "torch.distributed.run",
        "OMP_NUM_THREADS",
        "no error file defined",
        "**********",
    ),
    parse=parse,
    context_after=60,
)
