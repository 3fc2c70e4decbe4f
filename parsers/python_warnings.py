# ruff: noqa: E501 -- verbatim log lines are quoted whole in the docstring
"""Python's own warnings (the `warnings` module's `file:line: Category: message`, then the
source line it points at, indented):

    /home/dengkn/miniforge3/envs/aslora/lib/python3.9/site-packages/accelerate/accelerator.py:446: FutureWarning: Passing the following arguments to `Accelerator` is deprecated and will be removed in version 1.0 of Accelerate: dict_keys(['dispatch_batches']). Please pass an `accelerate.DataLoaderConfiguration` instead:
      warnings.warn(

(Hoilap/O-LoRA's notes.) Each is a `python_warning` event (info: libraries warn of deprecations
and settings all the time), its category and message kept. One that carries CUDA's out of memory
is an `oom` event too: the GPU ran out of memory, whatever the library then did without it
(tatsu-lab/stanford_alpaca#65, FSDP's state-dict gather at the final save, the process on GPU 1):

    /local_disk0/.ephemeral_nfs/cluster_libraries/python/lib/python3.9/site-packages/torch/distributed/fsdp/fully_sharded_data_parallel.py:2224: UserWarning: Failed to clone() tensor with name lm_head.weight. ... Error: CUDA out of memory. Tried to allocate 502.00 MiB (GPU 1; 39.59 GiB total capacity; ...)
"""

from __future__ import annotations

import polars as pl

from logforensics.registry import LineParser
from parsers.log_levels import MESSAGE_CHARS, ooms_in

# `path.py:446: FutureWarning: message` (a frozen module's `<frozen importlib._bootstrap>:241`);
# a paste may cut the location off (kangben258/MCITrack#6: `UserWarning: Grad strides do not
# match bucket view strides. ...`, DDP's reducer); PyTorch's C++ warnings name their source
# file (microsoft/frameworkcontroller's elastic example: `.../torch/csrc/utils/tensor_numpy.cpp:141:
# UserWarning: The given NumPy array is not writeable, ...`)
WARNING = (
    r"^\s*(?:(?:\S.*?\.(?:pyx?|cpp|cc|cu|h|hpp)|<[\w. -]+>):\d+: )?"
    r"(?P<category>[A-Z]\w*Warning): "
    r"(?P<text>.*\S)\s*$"
)
# the source line the warning points at: indented by two spaces, after the message's lines
SOURCE_LINE = r"^  \S"
MESSAGE_LINES = 2


def parse(lines: pl.DataFrame) -> pl.DataFrame:
    found = pl.col("message").str.extract_groups(WARNING)
    rows = lines.sort("file", "line").with_columns(found.alias("_warning"))
    is_warning = pl.col("candidate") & pl.col("_warning").struct.field("category").is_not_null()
    warnings = rows.filter(is_warning)
    text = pl.col("_warning").struct.field("text")
    events = warnings.select(
        "file",
        "line",
        pl.lit("python_warning").alias("event"),
        pl.lit("info").alias("severity"),
        pl.col("_warning").struct.field("category").alias("exc_type"),
        text.str.slice(0, MESSAGE_CHARS).alias("exc_message"),
    )
    return pl.concat(
        [events, ooms_in(warnings), _source_lines(rows, is_warning)], how="diagonal_relaxed"
    )


def _source_lines(rows: pl.DataFrame, is_warning: pl.Expr) -> pl.DataFrame:
    """The indented source line a few lines after a warning, and the lines of the warning's
    message between them (`dataloader_config = DataLoaderConfiguration(...)`)."""
    since = pl.when(is_warning).then(pl.col("line")).forward_fill().over("file")
    near = rows.with_columns(since.alias("_warned_at")).filter(
        pl.col("_warned_at").is_not_null()
        & (pl.col("line") > pl.col("_warned_at"))
        & (pl.col("line") - pl.col("_warned_at") <= MESSAGE_LINES + 1)
        & ~is_warning
    )
    sources = near.filter(pl.col("message").str.contains(SOURCE_LINE))
    first = sources.group_by("file", "_warned_at").agg(pl.col("line").min().alias("_source_at"))
    return (
        near.join(first, on=["file", "_warned_at"])
        .filter(pl.col("line") <= pl.col("_source_at"))
        .select("file", "line", pl.lit(None, pl.String).alias("event"))
    )


PARSER = LineParser(
    name="python_warnings", literals=("Warning: ",), parse=parse, context_after=MESSAGE_LINES + 1
)
