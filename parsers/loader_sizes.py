"""DataLoader lengths, as printed by the training script.

loader sizes: [125, 125, 124, 125]          # all_gather_object of len(loader), one per rank
rank=3 loader_len=124                        # one rank's own len(loader)
rank1  data.py:462  global_batch_size=3, num_local_samples=1, num_steps_per_rollout=1

A rank's own count of the batches or steps it will run (`num_batches`, `steps_per_epoch`,
`num_steps_per_rollout`: GMISWE/tinker-cloud#30, where each rank derived it from its own share
of the samples) is its loader's length for the rule that compares them, said in words too
(ltgoslo/gpt-bert#4, each of eight processes: `The dataset is: <dataset.MaskedDataset object at
0x147bfeb00890> and the number of steps are: 72`).
"""

from __future__ import annotations

import polars as pl

from logforensics.registry import LineParser
from parsers.key_values import extract_number, stated_rank

ALL_RANKS = r"loader sizes:\s*\[([0-9,\s]*)\]"
ONE_RANK_LEN = (
    r"(?:^|[\s,;(])(loader_len|len\((?:train_)?(?:data)?loader\)|num_batches|n_batches"
    r"|batches_per_epoch|steps_per_epoch|iters_per_epoch|num_steps_per_[a-z]+)\s*[=:]\s*(\d+)"
)


# the same count in words: `the number of steps are: 72`, `Number of batches: 125`
IN_WORDS = (
    r"(?i)\bnumber of (steps|batches|iterations|iters)(?: per epoch)?"
    r"(?: (?:is|are|was|were))?\s*[=:]?\s*(\d+)\b"
)


def parse(lines: pl.DataFrame) -> pl.DataFrame:
    message = pl.col("message")
    sizes_text = message.str.extract(ALL_RANKS, 1)
    sizes = (
        sizes_text.str.replace_all(r"\s", "")
        .str.split(",")
        .list.eval(pl.element().filter(pl.element() != "").cast(pl.Int64, strict=False))
    )
    # (each pattern matched once: its name and its count)
    named = message.str.extract_groups(ONE_RANK_LEN)
    in_words = message.str.extract_groups(IN_WORDS)
    found = lines.select(
        "file",
        "line",
        pl.when(sizes_text.is_not_null()).then(sizes).alias("values"),
        pl.coalesce(named.struct.field("2"), in_words.struct.field("2"))
        .cast(pl.Int64, strict=False)
        .alias("value"),
        pl.concat_list(
            pl.coalesce(
                named.struct.field("1"),
                pl.lit("number of ") + in_words.struct.field("1").str.to_lowercase(),
            )
        ).alias("names"),
        pl.coalesce(extract_number("rank", pl.Int32()), stated_rank()[0]).alias("rank"),
        extract_number("epoch", pl.Int64()),
    )
    found = found.filter(pl.col("values").is_not_null() | pl.col("value").is_not_null())
    return found.with_columns(
        pl.when(pl.col("values").is_not_null())
        .then(pl.lit("loader_sizes"))
        .otherwise(pl.lit("loader_len"))
        .alias("event"),
        # The all-ranks list is printed by one rank about everyone: it states no rank itself.
        pl.when(pl.col("values").is_not_null()).then(None).otherwise(pl.col("rank")).alias("rank"),
        pl.lit("info").alias("severity"),
    )


PARSER = LineParser(
    name="loader_sizes",
    literals=(
        "loader sizes:",
        "loader_len",
        "loader)",
        "num_batches",
        "n_batches",
        "_per_epoch",
        "num_steps_per_",
        "umber of steps",
        "umber of batches",
        "umber of iter",
        "UMBER OF",
    ),
    parse=parse,
)
