# ruff: noqa: E501 -- verbatim log lines are quoted whole in the docstring
"""Huawei Ascend's runtime reporting a failed call of its collective library (HCCL), as
torch_npu prints it under the Python exception:

    RuntimeError: [ERROR] HCCL error in: torch_npu/csrc/distributed/ProcessGroupHCCL.cpp:64
    [ERROR] 2024-05-21-11:57:54 (PID:927000, Device:3, RankID:3) ERR02200 DIST call hccl api failed.
    EJ0001: 2024-05-21-11:57:54.167.645 Failed to initialize the HCCP process. Reason: Maybe the last training process is running.

(hiyouga/LLaMA-Factory#3839: a previous job's process still held the NPU.) The `(PID, Device,
RankID)` line names the process, its device and its rank in the communicator; the `E<class><4
digits>:` line after it says what failed. A wait for another rank that timed out
(ascend/vllm-ascend#486, `[rank1]:` prefixed):

    [rank1]: [ERROR] 2025-04-08-18:07:20 (PID:1292363, Device:1, RankID:1) ERR01100 OPS call acl api failed.
    [rank1]: EI0006: [PID: 1292363] 2025-04-08-18:07:20.444.436 Getting socket times out. Reason: Remote Rank did not send the data in time. Please check the reason for the rank being stuck

or a device task of the collective that timed out, under the runtime's unstamped header
(Ascend/pytorch#43, a barrier after 1836 s, `worker-1:` prefixed):

    worker-1: [ERROR] 2024-07-03-11:28:40 (PID:639, Device:0, RankID:16) ERR00100 PTA call acl api failed.
    worker-1: EI9999: Inner Error!
    worker-1: EI9999: 2024-07-03-11:28:40.419.527  The error from device(chipId:0, dieId:0), serial number is 1, hccl fftsplus task timeout occurred during task execution, stream_id:4, ...

is a `collective_timeout` of the rank that waited; a device whose memory ran out an `oom`;
any other failure an `nccl_error` (HCCL plays NCCL's part), with the reason as its message. Either is read at the `(PID, ...)` line.
"""

from __future__ import annotations

import polars as pl

from logforensics.registry import LineParser

# [ERROR] 2024-05-21-11:57:54 (PID:927000, Device:3, RankID:3) ERR02200 DIST call hccl api failed.
FAILED_CALL = (
    r"\[ERROR\] \S+ \(PID:(?P<pid>\d+), Device:(?P<device>-?\d+), RankID:(?P<rank>-?\d+)\) "
    r"(?P<code>ERR\d+) (?P<what>.+?)\.?\s*$"
)
# EJ0001: 2024-05-21-11:57:54.167.645 Failed to initialize ...   EI0006: [PID: 1292363] ... Getting ...
# (stamped: the runtime's `EI9999: Inner Error!` header before its stamped lines says nothing)
REASON = r"^\s*(?P<code>E[A-Z]\d{4}): (?:\[PID: \d+\] )?\d{4}-\d\d-\d\d-\S+\s+(?P<reason>.+?)\s*$"
# a wait that gave up: a socket's or a device task's (`hccl fftsplus task timeout occurred`)
WAITED = r"(?i)times? out|timed out|did not send the data in time|\btimeout\b"
# the device's memory ran out under the failed call (hiyouga/LLaMA-Factory#5322, ZeRO-3 on
# eight 910B: `EL0004: 2024-08-28-16:15:00.358.141 Failed to allocate memory.`, then the
# runtime's `reason=[driver error:out of memory]`): the rank's OOM, not the library's failure
OUT_OF_MEMORY = r"(?i)failed to allocate memory|\bout of memory\b"
# a device task's wait that gave up, told by the runtime without a failed call's line above it
# (a MindSpore job's console and plog on 910B, discuss.mindspore.cn/t/topic/1156: one rank
# evaluated for longer than HCCL_EXEC_TIMEOUT while the others waited):
#   EE9999 The error from device(chipId:3, dieId:0), serial number is 1, event wait timeout occurred during task execution, stream_id:122, sq_id:122, task_id:790, event_id=73, timeout=1980.[FUNC:...]
#   ProcessStarsWaitTimeoutErrorInfo:The error from device(chipId:2, dieId:0), serial number is 1, event wait timeout occurred during task execution, ...
DEVICE_WAIT = (
    r"The error from device\(chipId:(?P<device>\d+), dieId:\d+\), serial number is \d+, "
    r"(?P<what>[\w ]*?time ?out) occurred during task execution"
    r"(?:.*?\btimeout=(?P<seconds>\d{1,12})\b)?"  # (seconds: more would overflow in ms)
)
# the peer a wait names, in the communicator's own numbering (not the global rank: a subgroup's
# position, vllm-project/vllm-ascend#3413: `... from remote rank: [24]` under RankID 101)
REMOTE_RANK = r"remote rank:? ?\[(\d{1,9})\]"
# the limit it gave up at: `timeout:1836.` (seconds), `timeout:30min(default)`
TIMEOUT_SECONDS = r"\btimeout:(\d{1,12})(?:\D|$)"
TIMEOUT_MINUTES = r"\btimeout:(\d{1,10})min\b"
REASON_LINES = 3  # from the failed call to its reason, a wrapped line between
# HCCL's report of a device whose heartbeat stopped, under a wait that timed out (Ascend/pytorch's
# troubleshooting case `HCCL_timeout.md`: EI0002 on device 0, device 1's process gone):
#     Cluster Exception Location[IP/ID]:[90.90.92.240/1], Arrival Time:[Thu Nov 28 11:56:34 2024], Discoverer:[90.90.92.240/0], ExceptionType:[Heartbeat Lost Occurred], Possible Reason:1. Process has exited, 2. Network Disconnected
HEARTBEAT_LOST = (
    r"Cluster Exception Location\[IP/ID\]:\[(?P<host>[^/\]]+)/(?P<device>\d+)\], "
    r"Arrival Time:\[[^\]]*\], Discoverer:\[(?P<by_host>[^/\]]+)/(?P<by_device>\d+)\], "
    r"ExceptionType:\[Heartbeat Lost Occurred\]"
)


def parse(lines: pl.DataFrame) -> pl.DataFrame:
    message = pl.col("message")
    call = message.str.extract_groups(FAILED_CALL)
    calls = (
        lines.filter(pl.col("candidate"))
        .with_columns(call.alias("_call"))
        .filter(pl.col("_call").struct.field("pid").is_not_null())
        .select(
            "file",
            "line",
            pl.col("_call").struct.field("pid").cast(pl.Int64, strict=False).alias("pid"),
            pl.col("_call").struct.field("device").alias("device"),
            pl.col("_call").struct.field("rank").cast(pl.Int32, strict=False).alias("rank"),
            pl.format(
                "{} {}",
                pl.col("_call").struct.field("code"),
                pl.col("_call").struct.field("what"),
            ).alias("_said"),
        )
    )
    said = message.str.extract_groups(REASON)
    reasons = (
        lines.with_columns(said.alias("_reason"))
        .filter(pl.col("_reason").struct.field("code").is_not_null())
        .select(
            "file",
            pl.col("line").alias("_reason_line"),
            pl.format(
                "{}: {}",
                pl.col("_reason").struct.field("code"),
                pl.col("_reason").struct.field("reason"),
            ).alias("_reason_text"),
        )
    )
    joined = calls.sort("line").join_asof(
        reasons.sort("_reason_line"),
        left_on="line",
        right_on="_reason_line",
        by="file",
        strategy="forward",
        tolerance=REASON_LINES,
        check_sortedness=False,  # sorted by line: within each file too
    )
    reason = pl.col("_reason_text")
    waited = reason.fill_null("").str.contains(WAITED)
    ran_out = reason.fill_null("").str.contains(OUT_OF_MEMORY)
    failures = joined.select(
        "file",
        "line",
        pl.when(ran_out)
        .then(pl.lit("oom"))
        .when(waited)
        .then(pl.lit("collective_timeout"))
        .otherwise(pl.lit("nccl_error"))
        .alias("event"),
        pl.lit("error").alias("severity"),
        "pid",
        "rank",
        "device",
        pl.coalesce(reason, "_said").alias("exc_message"),
        pl.when(waited)
        .then(
            pl.coalesce(
                reason.str.extract(TIMEOUT_MINUTES, 1).cast(pl.Int64, strict=False) * 60_000,
                reason.str.extract(TIMEOUT_SECONDS, 1).cast(pl.Int64, strict=False) * 1000,
            )
        )
        .alias("timeout_ms"),
        pl.col("_reason_line").alias("end_line"),
        pl.format('{{"remote_rank":{}}}', reason.fill_null("").str.extract(REMOTE_RANK, 1)).alias(
            "extra"
        ),
    )
    recognised = reasons.select(
        "file", pl.col("_reason_line").alias("line"), pl.lit(None, pl.String).alias("event")
    )
    return pl.concat(
        [
            failures,
            recognised,
            _heartbeats_lost(lines),
            _device_waits(lines.join(calls.select("file").unique(), on="file", how="anti")),
        ],
        how="diagonal_relaxed",
    )


def remote_rank() -> pl.Expr:
    """The peer a wait's report names in its communicator's numbering, as `parse` keeps it in
    the event's `extra` (REMOTE_RANK); null where it names none."""
    return pl.col("extra").str.extract(r'"remote_rank":(\d+)', 1).cast(pl.Int64, strict=False)


def _device_waits(lines: pl.DataFrame) -> pl.DataFrame:
    """`collective_timeout` of the device whose task's wait gave up, in files with no failed
    call's line (that line carries the failure, these its runtime's detail: Ascend/pytorch#43's
    `event wait timeout` eleven lines under the barrier's failed call): its limit in seconds
    (`timeout=1980`, HCCL_EXEC_TIMEOUT's), the device its `chipId`."""
    message = pl.col("message")
    wait = message.str.extract_groups(DEVICE_WAIT)
    return (
        lines.with_columns(wait.alias("_wait"))
        .filter(
            pl.col("_wait").struct.field("device").is_not_null() & ~message.str.contains(REASON)
        )
        .select(
            "file",
            "line",
            pl.lit("collective_timeout").alias("event"),
            pl.lit("error").alias("severity"),
            pl.col("_wait").struct.field("device").alias("device"),
            pl.format(
                "{} on device {}",
                pl.col("_wait").struct.field("what"),
                pl.col("_wait").struct.field("device"),
            ).alias("exc_message"),
            (pl.col("_wait").struct.field("seconds").cast(pl.Int64, strict=False) * 1000).alias(
                "timeout_ms"
            ),
        )
    )


def _heartbeats_lost(lines: pl.DataFrame) -> pl.DataFrame:
    """`heartbeat_lost`: the device HCCL lost (`peer`: host/device, `device`), and in `extra`
    the device that noticed."""
    lost = pl.col("message").str.extract_groups(HEARTBEAT_LOST)
    return (
        lines.with_columns(lost.alias("_lost"))
        .filter(pl.col("_lost").struct.field("device").is_not_null())
        .select(
            "file",
            "line",
            pl.lit("heartbeat_lost").alias("event"),
            pl.lit("error").alias("severity"),
            pl.format(
                "{}/{}",
                pl.col("_lost").struct.field("host"),
                pl.col("_lost").struct.field("device"),
            ).alias("peer"),
            pl.col("_lost").struct.field("device").alias("device"),
            pl.format(
                '{{"by":"{}/{}"}}',
                pl.col("_lost").struct.field("by_host"),
                pl.col("_lost").struct.field("by_device"),
            ).alias("extra"),
        )
    )


PARSER = LineParser(
    name="hccl",
    literals=(
        "RankID:",
        "EJ0",
        "EI0",
        "EE0",
        "EH0",
        "EL0",
        "EZ0",
        "Cluster Exception Location",
        "occurred during task execution",
    ),
    parse=parse,
    context_after=REASON_LINES,
)
