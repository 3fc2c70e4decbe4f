"""Warnings and errors a training script logs itself (Python logging, DeepSpeed's logger):

    2026-11-30 15:04:31,251 WARNING rank=2 step=5 non-finite loss=nan -> skipping batch
    [2024-01-01 10:00:00,123] [ERROR] [engine.py:120:step] gradient overflow
    WARNING:root:bad sample 1731, skipped

Often the one line that says why a rank left the others' path; the stage-divergence finding
quotes it. Python's own `UserWarning:` and NCCL's `WARN` are other families.

A warning or error that carries an exception was caught and logged, and the rank went on:
it is also an `exception` event (marked `"logged": true`), and an `oom` one when the caught
error is CUDA's out of memory (fairseq's `| WARNING: ran out of memory with exception: CUDA
out of memory. Tried to allocate 3.07 GiB ...`, facebookresearch/fairseq#1164):

    2026-12-01 14:48:00,488 WARNING preprocess failed, skipping batch: ValueError('label out of range in sample 2: 1000000000.0')
"""  # noqa: E501 -- verbatim lines

from __future__ import annotations

import polars as pl

from logforensics.registry import LineParser
from parsers.key_values import extract_number

# the level as a word near the start: after a timestamp, a bracket, a logger name
LEVEL = r"^.{0,48}?(?:^|[\s\[|])(WARNING|ERROR|CRITICAL|FATAL)(?:\]|:|\s)"
# `ValueError('...')`, `ValueError: ...`, `torch.OutOfMemoryError: ...` inside the message
EXCEPTION_TYPE = r"(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception)"
CARRIED = rf"\b({EXCEPTION_TYPE})(?:\(|: )"
CARRIED_AND_AFTER = rf"\b{EXCEPTION_TYPE}((?:\(|: ).*)$"
# an OSError's own words, `[Errno 5] Input/output error`, with no type before them
# (THUDM/slime#326: `ERROR: megatron.core.dist_checkpointing.strategies.filesystem_async: Local
# process 0 encountered an error: [Errno 5] Input/output error`, a checkpoint's async writer)
OS_ERROR = r"\[Errno \d+\] \S"
UNCAUGHT = r"(?i)\b(?:uncaught|unhandled)\b"
OUT_OF_MEMORY = r"(?i)\bout of memory\b"
# `Tried to allocate 3.07 GiB`
ALLOCATION = r"Tried to allocate (\d+(?:\.\d+)?) ?([KMGT]iB)"
UNIT_BYTES = {"KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40}
# the size in bytes others give beside a rounded one (`failed to allocate 2.96G (3173555200 bytes)`)
ALLOCATION_BYTES = r"\((\d+) bytes\)"
MESSAGE_CHARS = 500
LOGGED = '{"logged":true}'


# unittest's banner over a failed test's traceback, not a record a program logged (its own
# exception line follows; pytorch/pytorch#38395):
#   ERROR: test_gloo_backend_2gpu_module (__main__.DistributedDataParallelTest)
# newer Pythons add the method to the class path; PyTorch's test runner adds the test's time
# (pytorch/pytorch#68391: `ERROR [21.066s]: test_forward_overlap (__main__.TestForwardOverlap...)`)
# and its verdict on a test as it runs it verbosely, after the test's name or, where the test's
# processes wrote in between, alone (pytorch/pytorch#61670: `ERROR (2.532s)`)
UNITTEST_BANNER = (
    r"^(?:(?:ERROR|FAIL)(?: \[\d+(?:\.\d+)?s\])?: \w+ \([\w.]+\)"
    r"|(?:\w+ \([\w.]+\) \.\.\. )?(?:ERROR|FAIL) \(\d+(?:\.\d+)?s\))\s*$"
)


def parse(lines: pl.DataFrame) -> pl.DataFrame:
    message = pl.col("message")
    level = pl.when(~message.str.contains(UNITTEST_BANNER)).then(message.str.extract(LEVEL, 1))
    found = lines.with_columns(level.alias("_level")).filter(pl.col("_level").is_not_null())
    levels = found.select(
        "file",
        "line",
        pl.when(pl.col("_level") == "WARNING")
        .then(pl.lit("log_warning"))
        .otherwise(pl.lit("log_error"))
        .alias("event"),
        _severity(),
        extract_number("rank", pl.Int32()),
        extract_number("step", pl.Int64()),
    )
    banners = lines.filter(message.str.contains(UNITTEST_BANNER)).select("file", "line")
    return pl.concat(
        [levels, _carried_exceptions(found), _caught_ooms(found), banners], how="diagonal"
    )


def _severity() -> pl.Expr:
    return (
        pl.when(pl.col("_level") == "WARNING")
        .then(pl.lit("warning"))
        .otherwise(pl.lit("error"))
        .alias("severity")
    )


def _carried_exceptions(found: pl.DataFrame) -> pl.DataFrame:
    message = pl.col("message")
    typed = message.str.extract(CARRIED, 1)
    os_error = typed.is_null() & message.str.contains(OS_ERROR)
    exc_type = pl.when(os_error).then(pl.lit("OSError")).otherwise(typed)
    # what stands before and after the type (an OSError's words are its message whole), by
    # matches: `find` counts bytes and `slice` characters, which differ after an emoji
    before = (
        pl.when(os_error)
        .then(message.str.extract(f"^(.*?){OS_ERROR}", 1))
        .otherwise(message.str.extract(f"^(.*?){CARRIED}", 1))
    )
    after = (
        pl.when(os_error)
        .then(message.str.extract(f"({OS_ERROR}.*)$", 1))
        .otherwise(message.str.extract(CARRIED_AND_AFTER, 1))
    )
    # `ValueError('...')` is a repr: its parentheses and quotes go; after `ValueError: ` the
    # message is kept whole (`Address already in use (addr='tcp://10.0.0.58:40043')`)
    text = (
        pl.when(after.str.starts_with("("))
        .then(after.str.strip_chars_start("(").str.strip_chars_end(")").str.strip_chars("'\""))
        .otherwise(after.str.strip_chars_start(": "))
    )
    return (
        found.with_columns(exc_type.alias("exc_type"), before.alias("_before"))
        .filter(pl.col("exc_type").is_not_null())
        .select(
            "file",
            "line",
            pl.lit("exception").alias("event"),
            _severity(),
            extract_number("rank", pl.Int32()),
            extract_number("step", pl.Int64()),
            "exc_type",
            text.str.slice(0, MESSAGE_CHARS).alias("exc_message"),
            # an excepthook's record of the exception the process dies of was caught by no one
            # (allenai/OLMo#552: `CRITICAL [olmo.util:158, rank=0] Uncaught OLMoThreadError:
            # generator thread data thread 3 failed`)
            pl.when(~pl.col("_before").str.contains(UNCAUGHT).fill_null(False))
            .then(pl.lit(LOGGED))
            .alias("extra"),
        )
    )


def _caught_ooms(found: pl.DataFrame) -> pl.DataFrame:
    level = found.with_columns(_severity().alias("_level_severity"))
    return (
        ooms_in(level.with_columns(extract_number("rank", pl.Int32())), "_level_severity", "rank")
        .with_columns(pl.col("_level_severity").alias("severity"), pl.lit(LOGGED).alias("extra"))
        .drop("_level_severity")
    )


def ooms_in(lines: pl.DataFrame, *carried: str) -> pl.DataFrame:
    """An `oom` event (error) for each line that carries CUDA's out of memory, with the
    allocation it asked for (`value`, bytes), the GPU it names (`device`) and the `carried`
    columns."""
    message = pl.col("message")
    amount = message.str.extract(ALLOCATION, 1).cast(pl.Float64, strict=False)
    unit = message.str.extract(ALLOCATION, 2).replace_strict(
        UNIT_BYTES, default=None, return_dtype=pl.Float64
    )
    return lines.filter(message.str.contains(OUT_OF_MEMORY)).select(
        "file",
        "line",
        pl.lit("oom").alias("event"),
        pl.lit("error").alias("severity"),
        pl.coalesce(
            (amount * unit).round(0).cast(pl.Int64, strict=False),
            message.str.extract(ALLOCATION_BYTES, 1).cast(pl.Int64, strict=False),
        ).alias("value"),
        message.str.extract(r"\bGPU #?(\d+)", 1).alias("device"),
        *carried,
    )


PARSER = LineParser(
    name="log_levels", literals=("WARNING", "ERROR", "CRITICAL", "FATAL"), parse=parse
)
