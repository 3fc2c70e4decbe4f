"""A C or C++ assertion that failed in the process itself, as the C library prints it before it
aborts the process (SIGABRT):

    python: /home/jkkim/anaconda3/envs/transformers/lib/python3.9/site-packages/deepspeed/ops/csrc/aio/py_lib/deepspeed_py_aio_handle.cpp:223: int deepspeed_aio_handle_t::pread(const at::Tensor&, const char*, bool, bool): Assertion `static_cast<long long int>(buffer.nbytes()) == num_file_bytes' failed.

(deepspeedai/DeepSpeed#1627: DeepSpeed's NVMe offload reading back a swap file that was
empty.) The program's name, the source file and line, the function, then the condition between
a backquote and a quote. Each line is an `exception` of type `C assertion` (the C library's
`assert`, in C++ too) whose message is the condition with the file and line: the process that
printed it died of its own check, whatever follows. CUDA's device-side assertions (a kernel's
block and thread before `Assertion`) are `parsers/cuda_assert.py`'s.

A paste may break the line before `Assertion` with a trailing backslash (deepspeedai/DeepSpeed
#1070, verbatim: the same check on a parameter swap file):

    python: /usr/local/lib/python3.6/dist-packages/deepspeed/ops/csrc/aio/py_lib/deepspeed_py_aio_handle.cpp:223: int deepspeed_aio_handle_t::pread(const at::Tensor&, const char*, bool, bool): \
    Assertion `static_cast<long long int>(buffer.nbytes()) == num_file_bytes' failed.

read as the one line it was, the event on its first line.
"""  # noqa: E501 -- verbatim lines

from __future__ import annotations

import polars as pl

from logforensics.registry import LineParser
from parsers.cuda_assert import assertion_events

# `<program>: <file>:<line>: <function>: Assertion `<condition>' failed.` (glibc's wording)
FAILED_ASSERTION = (
    r"^[\w.+-]+: (?P<source>[^\s:]+):(?P<at>\d+): (?P<function>.+?): "
    r"Assertion `(?P<condition>.*)' failed\.\s*$"
)
KIND = "C assertion"


# the end of a line a paste continued with a backslash, and the start of its continuation
CONTINUED = r"\s\\\s*$"
CONTINUATION = "Assertion `"


def parse(lines: pl.DataFrame) -> pl.DataFrame:
    joined, continuations = _joined(lines)
    return pl.concat(
        [assertion_events(joined, FAILED_ASSERTION, KIND), continuations], how="diagonal_relaxed"
    )


def _joined(lines: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """`lines` with each line a backslash continues joined to the assertion on the next line,
    and the continuation lines themselves (`file, line`: read, no event of their own)."""
    message = pl.col("message")
    following = pl.col("line").shift(-1).over("file") == pl.col("line") + 1
    next_message = message.shift(-1).over("file")
    continued = (
        message.str.contains(CONTINUED) & following & next_message.str.starts_with(CONTINUATION)
    ).fill_null(False)
    ordered = lines.sort("file", "line").with_columns(continued.alias("_continued"))
    whole = message.str.replace(CONTINUED, " ") + next_message
    joined = ordered.with_columns(
        pl.when("_continued").then(whole).otherwise(message).alias("message")
    )
    after = pl.col("_continued").shift(1).over("file").fill_null(False)
    continuations = ordered.filter(after).select("file", "line")
    return joined.drop("_continued"), continuations


PARSER = LineParser(
    name="native_assert",
    literals=("' failed.", "): \\"),  # the second: a line a paste continued (see _joined)
    parse=parse,
    context_after=1,
)
