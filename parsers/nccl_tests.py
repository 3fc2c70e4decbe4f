"""nccl-tests' own checks (`all_reduce_perf` and its siblings, src/common.h): a failed CUDA or
NCCL call is printed with the host's name, the test's source line and the library's words, and
each caller up the stack repeats it as a bare `Test failure`:

    [1,8]<stdout>:192.168.0.138: Test CUDA failure common.cu:732 'invalid device ordinal'
    GENOA-06: Test NCCL failure common.cu:392 'unhandled cuda error (run with NCCL_DEBUG=INFO for details) / '
     .. GENOA-06 pid 4766: Test failure common.cu:590

(NVIDIA/nccl#348: all eight processes of the second node asking for devices 8-15;
NVIDIA/nccl-tests#287: `unhandled cuda error`, the text after ` / ` being NCCL's last error,
empty there. Framing may have taken the host already: pdsh's `host: ` looks the same.) A CUDA
failure is an `exception` of type `CUDA failure` in the process that
printed it; an NCCL failure is an `nccl_error` with NCCL's words; a relay line counts as
read, no event of its own.

The run's table of ranks says which process (host, pid) drives which rank on which device,
as NCCL's init lines do (an `nccl_tests_rank` event with `comm_rank`, `nranks` (the table's
highest rank plus one), `host`, `pid` and `cuda_dev`, for logforensics/process_map.py); the
validation summary at the end says the run finished (`run_finished`, `{"finish":
"tests_validated"}`) or that results came out wrong (`nccl_error`, `wrong results`):

    #  Rank  0 Group  0 Pid   5026 on         vm device  0 [0x00] NVIDIA H200
    # Out of bounds values : 0 OK

(Azure/azurehpc-health-checks#142: a healthy 8-GPU run; NVIDIA/nccl-tests#219's two nodes.)
"""  # noqa: E501 -- verbatim lines

from __future__ import annotations

import polars as pl

from logforensics.registry import LineParser

CHECK = (
    r"^\s*(?:(?P<host>[^\s:]+): )?Test (?P<library>CUDA|NCCL) failure (?P<source>[\w./-]+:\d+) "
    r"'(?P<words>.*)'\s*$"
)
RELAY = r"^\s*\.\. \S+ pid \d+: Test failure [\w./-]+:\d+\s*$"
KIND = "CUDA failure"
RANK_ROW = (
    r"^#\s+Rank\s+(?P<rank>\d+)\s+Group\s+\d+\s+Pid\s+(?P<pid>\d+)\s+on\s+(?P<host>\S+)"
    r"\s+device\s+(?P<device>\d+)\s"
)
VALIDATED = r"^#\s*Out of bounds values\s*:\s*(?P<wrong>\d+)\s+(?P<verdict>OK|FAILED)\s*$"
FINISHED = '{"finish":"tests_validated"}'


def parse(lines: pl.DataFrame) -> pl.DataFrame:
    return pl.concat(
        [_checks(lines), _rank_table(lines), _validation(lines)], how="diagonal_relaxed"
    )


def _rank_table(lines: pl.DataFrame) -> pl.DataFrame:
    row = pl.col("message").str.extract_groups(RANK_ROW).struct
    rows = lines.filter(row.field("rank").is_not_null())
    if rows.is_empty():
        return rows.select("file", "line")
    rank = row.field("rank").cast(pl.Int32, strict=False)
    return rows.select(
        "file",
        "line",
        pl.lit("nccl_tests_rank").alias("event"),
        pl.lit("info").alias("severity"),
        rank.alias("comm_rank"),
        (rank.cast(pl.Int64).max().over("file") + 1).alias("nranks"),
        row.field("host").alias("host"),
        row.field("pid").cast(pl.Int64, strict=False).alias("pid"),
        row.field("device").cast(pl.Int32, strict=False).alias("cuda_dev"),
    )


def _validation(lines: pl.DataFrame) -> pl.DataFrame:
    said = pl.col("message").str.extract_groups(VALIDATED).struct
    rows = lines.filter(said.field("verdict").is_not_null())
    if rows.is_empty():
        return rows.select("file", "line")
    ok = said.field("verdict") == "OK"
    return rows.select(
        "file",
        "line",
        pl.when(ok).then(pl.lit("run_finished")).otherwise(pl.lit("nccl_error")).alias("event"),
        pl.when(ok).then(pl.lit("info")).otherwise(pl.lit("error")).alias("severity"),
        pl.when(ok).then(pl.lit(FINISHED)).alias("extra"),
        pl.when(~ok)
        .then(
            pl.format(
                "{} values out of bounds: the collective's results were wrong", said.field("wrong")
            )
        )
        .alias("exc_message"),
        pl.when(~ok).then(pl.lit("wrong results")).alias("error_code"),
    )


def _checks(lines: pl.DataFrame) -> pl.DataFrame:
    message = pl.col("message")
    check = message.str.extract_groups(CHECK)
    library, words = check.struct.field("library"), check.struct.field("words")
    read = lines.filter(library.is_not_null() | message.str.contains(RELAY))
    # NCCL >= 2.13: `<ncclGetErrorString> / <ncclGetLastError>`
    parts = words.str.split(" / ")
    result = parts.list.first()
    last_error = parts.list.slice(1).list.join(" / ").str.strip_chars()
    cuda, nccl = library == "CUDA", library == "NCCL"
    return read.select(
        "file",
        "line",
        # a relay line is read, no event of its own
        pl.when(cuda)
        .then(pl.lit("exception"))
        .when(nccl)
        .then(pl.lit("nccl_error"))
        .alias("event"),
        pl.when(library.is_not_null()).then(pl.lit("error")).alias("severity"),
        pl.when(cuda).then(pl.lit(KIND)).alias("exc_type"),
        pl.when(cuda)
        .then(pl.format("{} ({})", words, check.struct.field("source")))
        .when(nccl)
        .then(pl.coalesce(pl.when(last_error != "").then(last_error), result))
        .alias("exc_message"),
        pl.when(nccl).then(result.str.replace(r"\s*\(run with .*$", "")).alias("error_code"),
        check.struct.field("host").alias("host"),
        pl.when(library.is_not_null()).then(check.struct.field("source")).alias("frame"),
    )


PARSER = LineParser(
    name="nccl_tests",
    literals=("Test CUDA failure", "Test NCCL failure", "Test failure", " Pid ", "Out of bounds"),
    parse=parse,
)
