"""Which rank wrote a line, when the line itself does not say: the file's path and content.

Trust order for every event (the `rank_from` column): a launcher prefix on the line, the line's
own content (`rank=3`), the single rank the rest of the file's content names, a global rank in
the path (`rank3.log`), a local rank in the path (torchrun `attempt_0/3/stdout.log`) when the
tree shows a single node. Nothing else: no rank is ever assumed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import polars as pl

# torchrun --log-dir: <dir>/<run_id>_<rand>/attempt_<n>/<local_rank>/{stdout,stderr}.log
TORCHRUN_TREE = re.compile(r"^(?P<node>(?:.*/)?attempt_\d+)/(?P<local>\d+)/[^/]+$")
# rank3.log, rank_3.txt, rank-3/, 20240101_rank12.log, rank.0007/stdout
GLOBAL_RANK_PART = re.compile(r"(?:^|[^a-z])rank[-_.]?(\d+)(?:$|[^0-9])", re.IGNORECASE)
WORKER_PART = re.compile(r"(?:^|[^a-z])worker[-_.]?(\d+)(?:$|[^0-9])", re.IGNORECASE)
LOCAL_RANK_PART = re.compile(r"local[-_.]?rank", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class PathRank:
    """What a file's path says about its writer."""

    rank: int | None = None
    local_rank: int | None = None
    node: str | None = None  # the torchrun tree a local rank belongs to


def rank_from_path(name: str) -> PathRank:
    """Read a global rank, or a torchrun tree's local rank, from a relative path."""
    tree = TORCHRUN_TREE.match(name)
    if tree:
        return PathRank(local_rank=int(tree["local"]), node=tree["node"])
    for part in reversed(name.split("/")):
        if LOCAL_RANK_PART.search(part):
            continue
        found = GLOBAL_RANK_PART.search(part) or WORKER_PART.search(part)
        if found:
            return PathRank(rank=int(found[1]))
    return PathRank()


def path_ranks(file_names: list[str]) -> pl.DataFrame:
    """One row per file: `file, path_rank, path_local_rank, path_rank_local_only`.

    A torchrun tree's local rank is taken as the global rank only when all the trees seen
    belong to one node (one run folder); otherwise the file keeps only its local rank.
    """
    found = {name: rank_from_path(name) for name in file_names}
    nodes = {info.node for info in found.values() if info.node is not None}
    single_node = len(nodes) == 1
    return pl.DataFrame(
        {
            "file": list(found),
            "path_rank": [
                info.rank if info.rank is not None else (info.local_rank if single_node else None)
                for info in found.values()
            ],
            "path_local_rank": [info.local_rank for info in found.values()],
            "path_rank_local_only": [info.rank is None for info in found.values()],
        },
        schema={
            "file": pl.String,
            "path_rank": pl.Int32,
            "path_local_rank": pl.Int32,
            "path_rank_local_only": pl.Boolean,
        },
    )


def attribute(events: pl.DataFrame, file_names: list[str]) -> pl.DataFrame:
    """Fill `rank`, `rank_from` and `local_rank` on parsed events (see the module doc)."""
    for column in ("rank", "local_rank"):
        if column not in events.columns:
            events = events.with_columns(pl.lit(None, dtype=pl.Int32).alias(column))
    content_rank = pl.col("rank")
    file_rank = (
        events.filter(pl.col("prefix_rank").is_null() & content_rank.is_not_null())
        .group_by("file")
        .agg(pl.col("rank").unique().alias("_ranks"))
        .filter(pl.col("_ranks").list.len() == 1)
        .select("file", pl.col("_ranks").list.first().alias("file_content_rank"))
    )
    paths = path_ranks(file_names)
    events = events.join(file_rank, on="file", how="left").join(paths, on="file", how="left")
    choices = [
        ("prefix", pl.col("prefix_rank")),
        ("content", content_rank),
        ("file_content", pl.col("file_content_rank")),
        ("path", pl.when(~pl.col("path_rank_local_only")).then(pl.col("path_rank"))),
        ("path_local", pl.col("path_rank")),
    ]
    rank = pl.coalesce([value for _, value in choices])
    source = pl.when(choices[0][1].is_not_null()).then(pl.lit(choices[0][0]))
    for name, value in choices[1:]:
        source = source.when(value.is_not_null()).then(pl.lit(name))
    return events.with_columns(
        rank.cast(pl.Int32).alias("rank"),
        source.otherwise(None).alias("rank_from"),
        pl.coalesce(
            pl.col("local_rank"), pl.col("prefix_local_rank"), pl.col("path_local_rank")
        ).alias("local_rank"),
    ).drop("file_content_rank", "path_rank", "path_local_rank", "path_rank_local_only")
