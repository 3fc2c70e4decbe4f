# ruff: noqa: E501 -- verbatim log lines are quoted whole in the docstring
"""Intel's oneCCL (the `ccl` backend of torch-ccl / Intel Extension for PyTorch) reporting an
error of its own, with its process id (intel/intel-extension-for-pytorch#640, reduce_scatter on
Intel GPU Max across nodes):

    2024:05:29-19:16:18:(202165) |CCL_ERROR| worker.cpp:338 ccl_worker_func: worker 0 caught internal exception: oneCCL: ze_call.cpp:28 do_call: EXCEPTION: ze error at zeCommandQueueExecuteCommandLists, code: ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY

A `CCL_ERROR` line is an `nccl_error` of that process (oneCCL plays NCCL's part); one whose
Level Zero code says the device ran out of memory is an `oom`. `CCL_WARN` lines are recognised.
"""

from __future__ import annotations

import polars as pl

from logforensics.registry import LineParser

# 2024:05:29-19:16:18:(202165) |CCL_ERROR| <text>
# newer releases name the rank in brackets, after the time, the pid or both:
# 2026:07:02-03:29:05:[1] |CCL_ERROR| worker.cpp:338 ccl_worker_func: ... (intel/torch-xpu-ops#4241)
# 2026:06:11-20:54:10:3614083:[0] |CCL_WARN| topology recognition shows PCIe connection ...
# 2267:[0] |CCL_INFO| stream: { type: gpu, in_order: 1, device: Arc Pro B60, ... }
REPORT = (
    r"^(?:(?:\S+:)?\((?P<pid>\d+)\)"
    r"|(?:\d{4}:\d{2}:\d{2}-\d{2}:\d{2}:\d{2}:)?(?:(?P<rank_pid>\d+):)?\[(?P<rank>\d+)\])"
    r" \|CCL_(?P<level>ERROR|WARN)\| (?P<text>.*?)\s*$"
)
OUT_OF_DEVICE_MEMORY = "OUT_OF_DEVICE_MEMORY"  # ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY


def parse(lines: pl.DataFrame) -> pl.DataFrame:
    report = pl.col("message").str.extract_groups(REPORT)
    reports = lines.with_columns(report.alias("_report")).filter(
        pl.col("_report").struct.field("level").is_not_null()
    )
    text = pl.col("_report").struct.field("text")
    error = pl.col("_report").struct.field("level") == "ERROR"
    return reports.select(
        "file",
        "line",
        pl.when(error & text.str.contains(OUT_OF_DEVICE_MEMORY, literal=True))
        .then(pl.lit("oom"))
        .when(error)
        .then(pl.lit("nccl_error"))
        .alias("event"),
        pl.when(error).then(pl.lit("error")).alias("severity"),
        pl.when(error)
        .then(
            pl.coalesce(
                pl.col("_report").struct.field("pid"), pl.col("_report").struct.field("rank_pid")
            ).cast(pl.Int64, strict=False)
        )
        .alias("pid"),
        pl.when(error)
        .then(pl.col("_report").struct.field("rank").cast(pl.Int32, strict=False))
        .alias("rank"),
        pl.when(error).then(text).alias("exc_message"),
    )


PARSER = LineParser(name="oneccl", literals=("|CCL_ERROR|", "|CCL_WARN|"), parse=parse)
