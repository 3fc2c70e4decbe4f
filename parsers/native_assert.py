"""A C or C++ assertion that failed in the process itself, as the C library prints it before it
aborts the process (SIGABRT):

    python: /home/jkkim/anaconda3/envs/transformers/lib/python3.9/site-packages/deepspeed/ops/csrc/aio/py_lib/deepspeed_py_aio_handle.cpp:223: int deepspeed_aio_handle_t::pread(const at::Tensor&, const char*, bool, bool): Assertion `static_cast<long long int>(buffer.nbytes()) == num_file_bytes' failed.

(deepspeedai/DeepSpeed#1627: DeepSpeed's NVMe offload reading back a swap file that was
empty.) The program's name, the source file and line, the function, then the condition between
a backquote and a quote. Each line is an `exception` of type `C assertion` (the C library's
`assert`, in C++ too) whose message is the condition with the file and line: the process that
printed it died of its own check, whatever follows. CUDA's device-side assertions (a kernel's
block and thread before `Assertion`) are `parsers/cuda_assert.py`'s.
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


def parse(lines: pl.DataFrame) -> pl.DataFrame:
    return assertion_events(lines, FAILED_ASSERTION, KIND)


PARSER = LineParser(name="native_assert", literals=("' failed.",), parse=parse)
