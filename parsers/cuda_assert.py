"""A CUDA kernel's failed device-side assertion, one line per GPU thread that hit it, printed by
the kernel itself before the host sees `device-side assert triggered`:

    /tmp/pip-req-build-l1dtn3mo/aten/src/THC/THCTensorIndex.cu:362: void indexSelectLargeIndex(TensorInfo<T, IndexType>, ...) [with T = c10::Half, ...]: block: [4,0,0], thread: [96,0,0] Assertion `srcIndex < srcSelectDimSize` failed.

(jaeyun95/error_collections: an embedding lookup with a token id beyond the vocabulary, on
both ranks of an mpirun job; newer PyTorch prints `../aten/src/ATen/native/cuda/Indexing.cu`
the same way.) Each line is an `exception` of type `CUDA assertion` whose message is the
condition, the kernel's file and line: the rank that printed it failed in its own kernel,
whatever the host's error that follows says.
"""  # noqa: E501 -- verbatim lines

from __future__ import annotations

import polars as pl

from logforensics.registry import LineParser

# `<file>.cu:<line>: <signature>: block: [x,y,z], thread: [x,y,z] Assertion `<cond>` failed.`
KERNEL_ASSERT = (
    r"(?P<source>[\w./-]+\.cuh?):(?P<at>\d+): .*block: \[\d+,\d+,\d+\], "
    r"thread: \[\d+,\d+,\d+\] Assertion `(?P<condition>.*)` failed\."
)
KIND = "CUDA assertion"


def parse(lines: pl.DataFrame) -> pl.DataFrame:
    return assertion_events(lines, KERNEL_ASSERT, KIND)


def assertion_events(lines: pl.DataFrame, pattern: str, kind: str) -> pl.DataFrame:
    """An `exception` event of type `kind` for each line `pattern` matches (its groups:
    `source`, `at`, `condition`), its message the condition with the source file's name and
    line (`parsers/native_assert.py` reads the C library's assertions with it too)."""
    found = pl.col("message").str.extract_groups(pattern)
    source = found.struct.field("source").str.split("/").list.last()
    return (
        lines.select(
            "file",
            "line",
            pl.lit("exception").alias("event"),
            pl.lit("error").alias("severity"),
            pl.lit(kind).alias("exc_type"),
            pl.format(
                "Assertion `{}` failed ({}:{})",
                found.struct.field("condition"),
                source,
                found.struct.field("at"),
            ).alias("exc_message"),
            found.struct.field("condition").alias("_condition"),
        )
        .filter(pl.col("_condition").is_not_null())
        .drop("_condition")
    )


PARSER = LineParser(name="cuda_assert", literals=("` failed.",), parse=parse)
