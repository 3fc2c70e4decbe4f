"""Prefixes no framer knows, learned from a file that is nothing but them: a workflow engine or
log shipper that stamps every line of the job's output with its own metadata
(databrickslabs/dolly#139, Metaflow's task prefix)::

    2023-04-29 06:01:12.977 [177/train/578 (pid 28936)] [09c561ee-a44c-4795-967c-7183a83b3160] Traceback (most recent call last):

Used only as a fallback, for files of which fewer than half the lines were recognised: a
prefix shared by nearly every line, with numbers and identifiers masked, that holds bracketed
metadata or ends in a field separator (` | `), or a bare bracketed label on a quarter of the
lines (a supervisor's tag on its child's output), is peeled off `message` and the file is parsed
again, the prefixes the wrapper held framed in turn (a supervisor's `[TRAINING] ` tag over
torchrun's `[rank0]: ...`). The second reading is kept only where it recognises more lines.
`text` keeps the line as it was.
"""  # noqa: E501 -- a verbatim line

from __future__ import annotations

import re

import polars as pl

from logforensics.framing import PREFIX_COLUMNS, frame_lines

# the lines of a file read to learn its prefix, and the bytes read for them
HEAD_LINES = 200
HEAD_BYTES = 64 * 1024
# the share of those lines the prefix must open, and the fewest lines that make a pattern
SHARE = 0.9
FEWEST_LINES = 3
# words (space-separated) a prefix may span
MOST_WORDS = 10
UUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
UUID_MARK = "\x00U\x00"
NUMBER_MARK = "\x00N\x00"
# A supervisor that runs the job as its child tags the child's lines with a label of its own and
# prints lines of its own between them, as many as it likes (spawnaga/GeneticTrading's start
# script: 44 of 94 lines `[TRAINING] ` before torchrun's output, 31 `INFO:__main__:⏳ Waiting
# for TensorBoard...` among the others): a bare bracketed word that opens a quarter of the lines,
# and many of them, is such a tag. A label with a number in it may be a rank's, left to the
# framers.
LABEL = r"^\[[A-Za-z][A-Za-z_-]*\]$"
LABEL_SHARE = 0.25
FEWEST_LABELLED = 10
# metadata in brackets or parentheses: what tells a wrapper's prefix from a line's own words
BRACKETED = r"\[[^\]]*\]|\([^)]*\)"
# a bracketed tag a colon closes, the line's text right after it as after torchrun's own
# `[rank3]:` (huggingface/evaluate#481: `[node1:4]:ValueError: Couldn't acquire lock ...`):
# read as a word of its own
COLON_TAG = r"^(\[[^\]\s]{1,64}\]:) ?"
# or fields a separator closes: a runner's `t=114.62 | stderr | ` (a Kaggle kernel's log as
# Evan-Kim2028/open_swe_traces_research keeps it)
FIELD_SEPARATOR = " |"


def learned_wrappers(lines: pl.DataFrame) -> dict[str, str]:
    """File -> a regex of the prefix that opens nearly all of its first lines (`file, text`:
    the text as the known framers left it), for the files that have one."""
    heads = (
        lines.filter(pl.col("text").str.strip_chars() != "")
        .group_by("file", maintain_order=True)
        .head(HEAD_LINES)
    )
    masked = (
        pl.col("text")
        .str.replace(COLON_TAG, "${1} ")
        .str.replace_all(UUID, UUID_MARK)
        .str.replace_all(r"\d+", NUMBER_MARK)
        .str.split(" ")
    )
    heads = heads.with_columns(masked.alias("_words"))
    sizes = heads.group_by("file").len("_lines")
    found: dict[str, str] = {}
    for words in range(MOST_WORDS, 0, -1):
        keyed = heads.filter(~pl.col("file").is_in(list(found))).with_columns(
            pl.col("_words").list.head(words).list.join(" ").alias("_key"),
            (pl.col("_words").list.len() > words).alias("_more"),
        )
        common = (
            keyed.filter(pl.col("_more"))
            .group_by("file", "_key")
            .len("_count")
            .join(sizes, on="file")
            .filter(
                (pl.col("_lines") >= FEWEST_LINES)
                & (
                    (pl.col("_count") >= SHARE * pl.col("_lines"))
                    | (
                        pl.col("_key").str.contains(LABEL)
                        & (pl.col("_count") >= LABEL_SHARE * pl.col("_lines"))
                        & (pl.col("_count") >= FEWEST_LABELLED)
                    )
                )
            )
        )
        for file, key in common.select("file", "_key").iter_rows():
            plain = key.replace(NUMBER_MARK, "0").replace(UUID_MARK, "u")
            if re.search(BRACKETED, plain) or key.endswith(FIELD_SEPARATOR):
                found[file] = _as_regex(key)
    return found


def _as_regex(key: str) -> str:
    pattern = re.escape(key).replace(re.escape(NUMBER_MARK), r"\d+")
    after = " ?" if key.endswith("]:") else " "  # (a colon tag's space is optional)
    return "^" + pattern.replace(re.escape(UUID_MARK), UUID) + after


def peel_and_frame(framed: pl.DataFrame, wrappers: dict[str, str]) -> pl.DataFrame:
    """`framed` with each file's learned prefix taken off, and the launcher prefixes the
    wrapper held inside it framed in turn (a supervisor's `[TRAINING] ` tag over torchrun's
    output: spawnaga/GeneticTrading's `[TRAINING] [rank0]: TypeError: ...`). What the inner
    framers read (a rank, a host, a time) stands beside what the outer ones read, the inner
    one first."""
    peeled = peel_wrappers(framed, wrappers)
    wrapped = pl.col("framing").str.contains("wrapper", literal=True).fill_null(False)
    inner = peeled.filter(wrapped)
    if inner.is_empty():
        return peeled
    reframed = frame_lines(inner.select("file", "line", pl.col("message").alias("text")))
    # the inner framing's columns beside the outer ones the lines already carry
    inner_columns = ["message", *PREFIX_COLUMNS]
    merged = (
        inner.drop("message")
        .join(
            reframed.select("file", "line", *inner_columns).rename(
                {name: f"_inner_{name}" for name in inner_columns}
            ),
            on=["file", "line"],
            how="left",
        )
        .with_columns(
            pl.col("_inner_message").alias("message"),
            *(
                (
                    pl.concat_str("framing", "_inner_framing", separator="+", ignore_nulls=True)
                    if name == "framing"
                    else pl.coalesce(f"_inner_{name}", name)
                ).alias(name)
                for name in PREFIX_COLUMNS
            ),
        )
        .select(peeled.columns)
    )
    return pl.concat([peeled.filter(~wrapped), merged]).sort("file", "line")


def peel_wrappers(framed: pl.DataFrame, wrappers: dict[str, str]) -> pl.DataFrame:
    """`framed` with each file's learned prefix taken off `message`: one pass per distinct
    prefix (the files of one job share theirs, its numbers masked), not one per file."""
    by_pattern: dict[str, list[str]] = {}
    for file, pattern in wrappers.items():
        by_pattern.setdefault(pattern, []).append(file)
    for pattern, files in by_pattern.items():
        of_files = pl.col("file").is_in(files)
        framed = framed.with_columns(
            pl.when(of_files)
            .then(pl.col("message").str.replace(pattern, ""))
            .otherwise(pl.col("message"))
            .alias("message"),
            pl.when(of_files & pl.col("message").str.contains(pattern))
            .then(
                pl.concat_str(
                    pl.col("framing"), pl.lit("wrapper"), separator="+", ignore_nulls=True
                )
            )
            .otherwise(pl.col("framing"))
            .alias("framing"),
        )
    return framed
