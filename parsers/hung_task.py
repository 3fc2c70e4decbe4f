# ruff: noqa: E501 -- verbatim log lines are quoted whole in the docstring
"""The kernel's hung-task report, pasted from `dmesg`: a process that stood in uninterruptible
sleep (state D) for longer than `hung_task_timeout_secs`, with the kernel stack it waits in
(huggingface/m4-logs tr_141, a 64-GPU job hung while one process's write to GPFS never
returned; kernel/hung_task.c):

    [Sat Mar  4 04:10:52 2023] INFO: task python:280058 blocked for more than 120 seconds.
    [Sat Mar  4 04:10:52 2023]       Tainted: P           OE    --------- -  - 4.18.0-372.36.1.el8_6.x86_64 #1
    [Sat Mar  4 04:10:52 2023] "echo 0 > /proc/sys/kernel/hung_task_timeout_secs" disables this message.
    [Sat Mar  4 04:10:52 2023] task:python          state:D stack:    0 pid:280058 ppid:279966 flags:0x00000080
    [Sat Mar  4 04:10:52 2023] Call Trace:
    [Sat Mar  4 04:10:52 2023]  cxiWaitEventWait+0x208/0x330 [mmfslinux]
    ...
    [Sat Mar  4 04:10:52 2023]  gpfs_f_rdwr_iter+0x217/0x300 [mmfslinux]
    [Sat Mar  4 04:10:52 2023]  new_sync_write+0x112/0x160
    [Sat Mar  4 04:10:52 2023]  vfs_write+0xa5/0x1b0

A `hung_task` event with the process's `pid`, its command in `exc_message`, the seconds in
`elapsed_ms` (as milliseconds) and, read from its call trace, what it waited in: `extra` holds
the system call (`read`, `write`, `open`, `fsync`) and the filesystem or driver named in the
frames (GPFS, NFS, Lustre, FUSE, the NVIDIA driver). The report's other lines are recognised.
"""

from __future__ import annotations

import polars as pl

from logforensics.registry import LineParser

HUNG = r"INFO: task (?P<command>.+?):(?P<pid>\d+) blocked for more than (?P<seconds>\d+) seconds\."
# the report's own lines after its first: recognised, no event
REPORT_LINES = (
    r"Tainted: |\"echo 0 > /proc/sys/kernel/hung_task_timeout_secs\" disables this message"
    r"|task:\S+\s+state:[A-Z] |Call Trace:|^\s*(?:\[<[0-9a-f]+>\] )?\??\s*\w+\+0x[0-9a-f]+/0x[0-9a-f]+"
    r"|^\s*R[A-Z0-9]{1,2}: [0-9a-f]{4}|Code: "
)
# the call trace, lowest frame last: the system call entered, then what it waited in
SYSCALLS = (
    ("write", r"\b(?:vfs_write|ksys_write|new_sync_write|__x64_sys_write)\+"),
    ("read", r"\b(?:vfs_read|ksys_read|new_sync_read|__x64_sys_read)\+"),
    ("open", r"\b(?:do_sys_open|do_filp_open|path_openat)\+"),
    ("fsync", r"\b(?:do_fsync|vfs_fsync_range)\+"),
)
WAITED_IN = (
    ("GPFS", r"\[mmfs(?:linux|26)?\]|\bgpfs_"),
    ("NFS", r"\[nfsv?\d*\]|\bnfs_"),
    ("Lustre", r"\[(?:lustre|ptlrpc|lnet|osc|mdc)\]"),
    ("FUSE", r"\[fuse\]|\bfuse_"),
    ("the NVIDIA driver", r"\[nvidia(?:_uvm)?\]"),
)
# dmesg's stamp in front of each line: `-T`'s wall clock, or seconds since boot
DMESG_STAMP = r"^\[(?:[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2} \d{4}|\s*\d+\.\d+)\] ?"
CONTEXT = 60  # a call trace's frames and registers after the report's first line


def parse(lines: pl.DataFrame) -> pl.DataFrame:
    message = pl.col("message").str.replace(DMESG_STAMP, "")
    marked = (
        lines.sort("file", "line")
        .with_columns(message.str.extract_groups(HUNG).alias("_hung"))
        .with_columns(
            pl.col("_hung").struct.field("pid").is_not_null().alias("_head"),
        )
        .with_columns(pl.col("_head").cum_sum().over("file").alias("_report"))
    )
    in_report = (pl.col("_report") > 0) & message.str.contains(REPORT_LINES)
    # a report's frames run on from its head, each line the next: a gap ends it
    gap = (pl.col("line").diff().fill_null(1) != 1).cast(pl.Int32)
    marked = marked.with_columns(gap.over("file", "_report").alias("_gap")).with_columns(
        (pl.col("_gap").cum_sum().over("file", "_report") == 0).alias("_contiguous")
    )
    reports = marked.filter(pl.col("_head") | (in_report & pl.col("_contiguous")))
    words = reports.group_by("file", "_report", maintain_order=True).agg(
        pl.col("line").filter(pl.col("_head")).first().alias("line"),
        pl.col("_hung").filter(pl.col("_head")).first().alias("_hung"),
        *(message.str.contains(pattern).any().alias(f"_call_{name}") for name, pattern in SYSCALLS),
        *(
            message.str.contains(pattern).any().alias(f"_in_{index}")
            for index, (_, pattern) in enumerate(WAITED_IN)
        ),
    )
    call = pl.coalesce(
        *(pl.when(pl.col(f"_call_{name}")).then(pl.lit(name)) for name, _ in SYSCALLS)
    )
    waited = pl.coalesce(
        *(
            pl.when(pl.col(f"_in_{index}")).then(pl.lit(name))
            for index, (name, _) in enumerate(WAITED_IN)
        )
    )
    hung = pl.col("_hung").struct.field
    events = words.select(
        "file",
        "line",
        pl.lit("hung_task").alias("event"),
        pl.lit("error").alias("severity"),
        hung("pid").cast(pl.Int64, strict=False).alias("pid"),
        hung("command").alias("exc_message"),
        (hung("seconds").cast(pl.Int64, strict=False) * 1000).alias("elapsed_ms"),
        pl.when(call.is_not_null() | waited.is_not_null())
        .then(pl.struct(call.alias("call"), waited.alias("waited_in")).struct.json_encode())
        .alias("extra"),
    )
    told = reports.filter(~pl.col("_head")).select(
        "file", "line", pl.lit(None, pl.String).alias("event")
    )
    return pl.concat([events, told], how="diagonal_relaxed")


PARSER = LineParser(
    name="hung_task",
    literals=(" blocked for more than ",),
    parse=parse,
    context_after=CONTEXT,
)
