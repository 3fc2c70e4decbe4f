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


def parse(lines: pl.DataFrame) -> pl.DataFrame:
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
    literals=("Test CUDA failure", "Test NCCL failure", "Test failure"),
    parse=parse,
)
