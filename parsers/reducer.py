# ruff: noqa: E501 -- verbatim log lines are quoted whole in the docstring and comments
"""DDP reducer errors (pytorch/pytorch:torch/csrc/distributed/c10d/reducer.cpp). Verbatim, long
messages cut at "...":

    RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one. This error indicates that your module has parameters that were not used in producing loss. ...
    RuntimeError: It looks like your LightningModule has parameters that were not used in producing the loss returned by training_step. ...
    Parameters which did not receive grad for rank 3: mask_encoder.sensory_update.transform.bias, mask_encoder.sensory_update.transform.weight
    Parameter indices which did not receive grad for rank 3: 282 283
    Parameter at index 447 with name base_model.model.model.layers.31.mlp.down_proj.lora_B.default.weight has been marked as ready twice. ...
    RuntimeError: DDP expects same model across all ranks, but Rank 0 has 382 params, while rank 1 has inconsistent 0 params.
    RuntimeError: [2]: params[0] in this process with sizes [12, 8] appears not to match sizes of the same param in process 0.

The reducer error is one multi-line message; each line that states a fact is its own event (the
names line only appears with TORCH_DISTRIBUTED_DEBUG=INFO/DETAIL). Its other lines and the
one-space-indented DEBUG hint are recognised without an event, as are the healthy-run notes
"Reducer buckets have been rebuilt" and torch 1.7's "find_unused_parameters=True was specified
... but did not find any unused parameters" warning.

"DDP expects same model" is raised by `verify_params_across_processes` on the rank that found the
difference: "Rank X" is that process (`process_group->getRank()`), "rank i" the one it disagrees
with. So `rank` is X, `peer_rank` is i, `values` are [X's count, i's count] and `value` is i's.

"params[N] in this process ... appears not to match" is raised by the same check when the counts
agree, on each rank (`[X]:`, its rank in the group; older releases leave it out) whose parameter
N is not shaped as in process 0: `rank` is X, `peer_rank` that process, `values` [N].
"""

from __future__ import annotations

import polars as pl

from logforensics.registry import LineParser

# Its first words only: a pasted log cut mid-sentence (facebookresearch/XLM#224 ends "... in the
# prior iteration before st") still names the error.
UNFINISHED = "Expected to have finished reduction in the prior iteration"
# Lightning's own words for it, raised before DDP's backward (chemprop/chemprop#853,
# Lightning-AI/pytorch-lightning#20328): RuntimeError: It looks like your LightningModule has
# parameters that were not used in producing the loss returned by training_step. If this is ...
LIGHTNING_UNUSED = (
    "It looks like your LightningModule has parameters that were not used in producing the loss"
)
# Parameters which did not receive grad for rank 0: text_model.final_layer_norm.bias, text_model.final_layer_norm.weight
UNUSED_NAMES = r"Parameters which did not receive grad for rank (\d+): "
UNUSED_NAMES_PREFIX = r"^.*?" + UNUSED_NAMES
# [Rank 1] Parameter: static_encoder.context_grns.3.glu.lin.bias did not get gradient in backwards pass.
# (the same error's names, one per line of c10's INFO log, TORCH_CPP_LOG_LEVEL=INFO with the
# debug level set: Nixtla/neuralforecast#1110 behind `[rank1]:[I816 21:41:23.034545571
# reducer.cpp:1989] `)
UNUSED_ONE = r"\[Rank (?P<rank>\d+)\] Parameter: (?P<name>\S+) did not get gradient"
# Parameter indices which did not receive grad for rank 2: 362 363 364 365
UNUSED_INDICES = (
    r"Parameter indices which did not receive grad for rank (?P<rank>\d+): "
    r"(?P<indices>\d+(?: +\d+)*)"
)
# Parameter at index 55 has been marked as ready twice. This means that multiple autograd engine  hooks ...
READY_TWICE = (
    r"Parameter at index (?P<index>\d+)(?: with name (?P<name>\S+))? has been marked as ready twice"
)
# RuntimeError: Expected to mark a variable ready only once. This error is caused by one of the following reasons: ...
READY_ONCE = "Expected to mark a variable ready only once"
# DDP expects same model across all ranks, but Rank 0 has 382 params, while rank 1 has inconsistent 0 params.
MODEL_MISMATCH = (
    r"DDP expects same model across all ranks, but Rank (?P<rank>\d+) has (?P<own>\d+) params, "
    r"while rank (?P<peer>\d+) has inconsistent (?P<peer_count>\d+) params"
)
# [2]: params[0] in this process with sizes [12, 8] appears not to match sizes of the same param in process 0.
# (`strides` where the sizes agree: dongrunmin/RefDiff#2)
SHAPE_MISMATCH = (
    r"(?:\[(?P<rank>\d+)\]: )?params\[(?P<index>\d+)\] in this process with sizes \[[^\]]*\] "
    r"appears not to match (?:sizes|strides) of the same param in process (?P<peer>\d+)"
)

# The unfinished-reduction error's own closing hint (reducer.cpp appends it when
# TORCH_DISTRIBUTED_DEBUG is off): standing with no opening line above it, a paste that lost the
# error's start (LizhenWangT/StyleAvatar#16) still names the error. The message spans fewer lines
# than HINT_REACH.
CUT_HINT = "did not receive gradient on this rank as part of this error"
HINT_REACH = 20

# Recognised without an event: continuation lines of the reducer error, the DEBUG hint, and
# messages of healthy runs.
RECOGNISED_ONLY = (
    "outputs participate in calculating loss",
    "wasn't able to locate the output tensors in the return value",
    "In addition, you can set the environment variable TORCH_DISTRIBUTED_DEBUG",
    "but did not find any unused parameters",
    "Reducer buckets have been rebuilt",  # "in this iteration." may be hard-wrapped
)


def _event() -> pl.Expr:
    message = pl.col("message")
    return (
        # A message joined onto one line names the parameters: keep the more specific event.
        pl.when(
            message.str.contains(UNUSED_NAMES)
            | message.str.contains(UNUSED_INDICES)
            | message.str.contains(UNUSED_ONE)
        )
        .then(pl.lit("unused_params"))
        .when(
            message.str.contains(UNFINISHED, literal=True)
            | message.str.contains(LIGHTNING_UNUSED, literal=True)
        )
        .then(pl.lit("reducer_unfinished"))
        .when(message.str.contains(READY_TWICE) | message.str.contains(READY_ONCE, literal=True))
        .then(pl.lit("ready_twice"))
        .when(message.str.contains(MODEL_MISMATCH))
        .then(pl.lit("model_mismatch"))
        .when(message.str.contains(SHAPE_MISMATCH))
        .then(pl.lit("shape_mismatch"))
    )


def _names() -> pl.Expr:
    """The comma-separated parameter names after `... for rank N: `, sliced off by replace."""
    message = pl.col("message")
    listed = message.str.replace(UNUSED_NAMES_PREFIX, "").str.strip_chars().str.split(", ")
    return pl.when(message.str.contains(UNUSED_NAMES)).then(listed)


def _hint_alone() -> pl.Expr:
    """The unfinished-reduction hint with no line of the error (its opening, the unused
    parameters it lists) in the HINT_REACH lines above it (read from `event`; the frame sorted
    by file and line)."""
    opened = pl.when(pl.col("event").is_not_null()).then(pl.col("line")).forward_fill().over("file")
    far = opened.is_null() | ((pl.col("line").cast(pl.Int64) - opened) > HINT_REACH)
    hint = pl.col("message").str.contains(CUT_HINT, literal=True)
    return hint & pl.col("event").is_null() & far


def parse(lines: pl.DataFrame) -> pl.DataFrame:
    message = pl.col("message")
    indices = message.str.extract_groups(UNUSED_INDICES)
    ready = message.str.extract_groups(READY_TWICE)
    mismatch = message.str.extract_groups(MODEL_MISMATCH)
    shape = message.str.extract_groups(SHAPE_MISMATCH)
    one = message.str.extract_groups(UNUSED_ONE)
    counts = pl.concat_list(
        mismatch.struct.field("own").cast(pl.Int64, strict=False),
        mismatch.struct.field("peer_count").cast(pl.Int64, strict=False),
    )
    found = (
        lines.sort("file", "line")
        .with_columns(_event().alias("event"))
        .with_columns(
            pl.when(_hint_alone())
            .then(pl.lit("reducer_unfinished"))
            .otherwise(pl.col("event"))
            .alias("event")
        )
        .filter(pl.col("event").is_not_null() | message.str.contains_any(list(RECOGNISED_ONLY)))
    )
    return found.select(
        "file",
        "line",
        "event",
        pl.when(pl.col("event").is_not_null()).then(pl.lit("error")).alias("severity"),
        pl.coalesce(
            message.str.extract(UNUSED_NAMES, 1),
            indices.struct.field("rank"),
            mismatch.struct.field("rank"),
            shape.struct.field("rank"),
            one.struct.field("rank"),
        )
        .cast(pl.Int32, strict=False)
        .alias("rank"),
        pl.coalesce(mismatch.struct.field("peer"), shape.struct.field("peer"))
        .cast(pl.Int32, strict=False)
        .alias("peer_rank"),
        mismatch.struct.field("peer_count").cast(pl.Int64, strict=False).alias("value"),
        pl.coalesce(
            indices.struct.field("indices")
            .str.extract_all(r"\d+")
            .list.eval(pl.element().cast(pl.Int64, strict=False)),
            pl.when(ready.struct.field("index").is_not_null()).then(
                pl.concat_list(ready.struct.field("index").cast(pl.Int64, strict=False))
            ),
            pl.when(mismatch.struct.field("own").is_not_null()).then(counts),
            pl.when(shape.struct.field("index").is_not_null()).then(
                pl.concat_list(shape.struct.field("index").cast(pl.Int64, strict=False))
            ),
        ).alias("values"),
        pl.coalesce(
            _names(),
            pl.when(ready.struct.field("name").is_not_null()).then(
                pl.concat_list(ready.struct.field("name"))
            ),
            pl.when(one.struct.field("name").is_not_null()).then(
                pl.concat_list(one.struct.field("name"))
            ),
        ).alias("names"),
    )


PARSER = LineParser(
    name="reducer",
    literals=(
        UNFINISHED,
        LIGHTNING_UNUSED,
        "did not receive grad for rank",
        " did not get gradient",
        "has been marked as ready twice",
        READY_ONCE,
        "DDP expects same model across all ranks",
        "appears not to match",
        *RECOGNISED_ONLY,
    ),
    parse=parse,
)
