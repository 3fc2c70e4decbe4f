"""Evidence of a desync in timeout reports alone: different collectives at one sequence number."""

from __future__ import annotations

import polars as pl

from logforensics.text import rank_list

TIMEOUT_EVENTS = ("collective_timeout", "transport_timeout")

# Collectives some ranks can complete before all have joined: the others' completion says
# nothing of a late rank's call
ROOTED_OPS = frozenset(
    {"BROADCAST", "REDUCE", "GATHER", "SCATTER", "SEND", "RECV", "RECV_ANY_SOURCE", "_COALESCED"}
)


def group_key(pg: pl.Expr) -> pl.Expr:
    """The process group a report's `pg` names, without its description: `0 (default_pg)` and
    an untagged line are the default group `0`, `12 (EXPERT_MODEL_PARALLEL_GROUP)` is `12`, a
    hash GUID is itself (PrimeIntellect-ai/prime-rl#3186: `d03ba143833c`, an expert group, is
    no default group for starting with a letter, nor group 3 for starting with a 3)."""
    return pg.str.replace(r"\s*\(.*\)$", "").fill_null("0")


def per_rank_timeouts(events: pl.DataFrame) -> pl.DataFrame:
    """One timeout row per (rank, pg, seq, op): the watchdog repeats itself several times.

    `pg` is reduced to the group id, a line without a PG tag being the default group 0
    (`[Rank 3] Watchdog caught ...` and `[PG ID 0 PG GUID 0(default_pg) Rank 3]` agree),
    unless its `[Rank N]` is not the rank its prefix gives: then it is the rank within some
    other group (NVIDIA/nccl#1610: `[rank13]:... [Rank 1] Watchdog caught ...`), a group of
    its own that compares with no other rank's.
    """
    untagged = pl.col("pg").is_null()
    other_group = (
        untagged & pl.col("comm_rank").is_not_null() & (pl.col("comm_rank") != pl.col("rank"))
    )
    timeouts = events.filter(
        pl.col("event").is_in(TIMEOUT_EVENTS) & pl.col("rank").is_not_null()
    ).with_columns(
        pl.col("pg").is_not_null().alias("pg_tagged"),
        (untagged & ~other_group.fill_null(False)).alias("_untagged"),
        pl.when(other_group.fill_null(False))
        .then(pl.format("? of rank {}", pl.col("rank")))
        .otherwise(group_key(pl.col("pg")))
        .alias("pg"),
    )
    return (
        _apart_by_timeout(_one_failure_told_twice(timeouts))
        .drop("_untagged")
        .unique(subset=["rank", "pg", "seq", "op"], keep="first", maintain_order=True)
    )


def _apart_by_timeout(timeouts: pl.DataFrame) -> pl.DataFrame:
    """Untagged reports whose timeout is not the one most untagged reports name: a process
    group has one timeout, so they are another group's, whose numbers compare with no other's
    (FlagOpen/FlagEmbedding#764: rank 0's ALLREDUCE #6029 at 600000 ms beside every rank's
    ALLGATHER #6206-6207 at 1800000 ms)."""
    untagged = ~pl.col("pg_tagged") & pl.col("timeout_ms").is_not_null()
    timeouts_named = timeouts.filter(untagged).get_column("timeout_ms")
    if timeouts_named.n_unique() < 2:
        return timeouts
    usual = timeouts_named.mode().sort().item(0)
    other = untagged & (pl.col("timeout_ms") != usual)
    return timeouts.with_columns(
        pl.when(other)
        .then(pl.format("{} (timeout {} ms)", pl.col("pg"), pl.col("timeout_ms")))
        .otherwise("pg")
        .alias("pg")
    )


def _one_failure_told_twice(timeouts: pl.DataFrame) -> pl.DataFrame:
    """Torch 2.5-2.7 tells one timeout twice: `[Rank 0] Watchdog caught ... (SeqNum=5730,
    OpType=BROADCAST ...)` with no group, then `[PG ID 4 PG GUID 67 Rank 0] failure detected
    by watchdog at work sequence id: 5730` with no op (vllm-project/vllm#23448). Where a rank's
    untagged report and the tagged ones at its number name one group, they are one failure:
    the untagged report is in that group, and the group's report has its op."""
    at = ("rank", "seq")
    tagged_pg = pl.when(pl.col("pg_tagged")).then(pl.col("pg"))
    one_group = (tagged_pg.drop_nulls().n_unique().over(at) == 1) & pl.col("seq").is_not_null()
    adopted = pl.col("_untagged") & one_group
    timeouts = timeouts.with_columns(
        pl.when(adopted).then(tagged_pg.drop_nulls().first().over(at)).otherwise("pg").alias("pg"),
        (pl.col("pg_tagged") | adopted).alias("pg_tagged"),
    )
    # a rank whose paste kept only its untagged line is in the group every tagged report of the
    # job names, where they name one (hiyouga/LLaMA-Factory#2902: rank 0's `[PG 1 Rank 0]`
    # record beside rank 1's bare `[Rank 1] Watchdog caught ... SeqNum=1517`)
    tagged_pg = pl.when(pl.col("pg_tagged")).then(pl.col("pg"))
    only_group = tagged_pg.drop_nulls().n_unique() == 1
    untold = pl.col("_untagged") & ~pl.col("pg_tagged").any().over("rank")
    timeouts = timeouts.with_columns(
        pl.when(untold & only_group)
        .then(tagged_pg.drop_nulls().first())
        .otherwise("pg")
        .alias("pg")
    )
    within = ("rank", "pg", "seq")
    named_op = pl.col("op").drop_nulls()
    one_op = (named_op.n_unique().over(within) == 1) & pl.col("seq").is_not_null()
    return timeouts.with_columns(
        pl.when(pl.col("op").is_null() & one_op)
        .then(named_op.first().over(within))
        .otherwise("op")
        .alias("op")
    )


def _fingerprint() -> pl.Expr:
    """What a rank was running: the op, and its size where printed."""
    return pl.concat_str(
        [pl.col("op"), pl.col("numel_in").cast(pl.String).fill_null("?")], separator="|"
    )


def mixed_ops_at_one_seq(timeouts: pl.DataFrame) -> pl.DataFrame:
    """The per-rank timeout rows at the first (pg, seq) where ranks name different ops or
    sizes. Reports without a SeqNum (older torch) compare when each rank timed out in one
    collective only: then they all stand at the same point."""
    with_op = timeouts.filter(pl.col("op").is_not_null()).with_columns(
        _fingerprint().alias("_fingerprint")
    )
    sequenced = with_op.filter(pl.col("seq").is_not_null())
    if sequenced.is_empty():
        one_each = with_op.group_by("rank").agg(pl.len().alias("reports"))
        if one_each.height < 2 or one_each.get_column("reports").max() != 1:
            return with_op.clear().drop("_fingerprint")
        if with_op.get_column("_fingerprint").n_unique() < 2:
            return with_op.clear().drop("_fingerprint")
        return with_op.sort("rank").drop("_fingerprint")
    mixed = (
        sequenced.group_by("pg", "seq")
        .agg(pl.col("_fingerprint").n_unique().alias("kinds"))
        .filter(pl.col("kinds") > 1)
        .sort("seq")
    )
    if mixed.is_empty():
        return with_op.clear().drop("_fingerprint")
    seq, pg = mixed.item(0, "seq"), mixed.item(0, "pg")
    at_seq = sequenced.filter((pl.col("seq") == seq) & pl.col("pg").eq_missing(pg))
    return at_seq.sort("rank").drop("_fingerprint")


def sizes_apart(mixed: pl.DataFrame) -> bool:
    """Mixed reports that name one op, each with its size: the ranks stood at the same call of
    the same collective with tensors of different sizes, a shape mismatch, not on different
    code paths (axolotl-ai-cloud/axolotl#967: rank 6's ALLREDUCE #20879 of 419,044,352
    elements, rank 7's of 406,069,248)."""
    if mixed.is_empty():
        return False
    ops, sizes = mixed.get_column("op"), mixed.get_column("numel_in")
    if ops.null_count() or ops.n_unique() != 1 or sizes.null_count():
        return False
    # a coalesced work bundles several collectives: its count is no one tensor's size
    # (modelscope/DiffSynth-Studio#458: COALESCED #610 gives four ranks four counts)
    return "COALESCED" not in str(ops.item(0)).upper()


def odd_ones_out(mixed: pl.DataFrame) -> list[int]:
    """The ranks whose collective differs from what a strict majority ran at the same point;
    none when there is no strict majority (two ranks, or a tie)."""
    groups = (
        mixed.with_columns(_fingerprint().alias("_fingerprint"))
        .group_by("_fingerprint")
        .agg(pl.col("rank").unique().sort())
        .with_columns(pl.col("rank").list.len().alias("size"))
        .sort("size", descending=True)
    )
    if groups.height < 2 or groups.item(0, "size") == groups.item(1, "size"):
        return []
    majority = set(groups.item(0, "rank"))
    return sorted(set(mixed.get_column("rank").to_list()) - majority)


def describe(rows: pl.DataFrame) -> str:
    """`"SeqNum 80078: rank 3 ALLREDUCE (2106881 elements), rank 7 BROADCAST (5056 elements)"`."""
    parts = []
    for row in rows.iter_rows(named=True):
        size = f" ({row['numel_in']} elements)" if row["numel_in"] is not None else ""
        parts.append(f"rank {row['rank']} {row['op']}{size}")
    seq = rows.item(0, "seq")
    where = f"SeqNum {seq}" if seq is not None else "their last collective"
    return f"{where}: " + ", ".join(parts)


def comparable_timeout_seqs(per_rank: pl.DataFrame) -> pl.DataFrame:
    """Each rank's timed-out seq per group, where seqs can be compared across ranks. Lines
    without a PG tag (torch < 2.3) may come from different groups: their numbers compare only
    when every rank timed out on one collective (NeMo's model- and data-parallel groups give
    one rank 96117..96125 and another 64088 in pytorch-lightning#19487)."""
    seqs = per_rank.group_by("pg", "rank").agg(
        pl.col("seq").max().alias("mark"),
        pl.col("seq").n_unique().alias("seqs"),
        pl.col("pg_tagged").all().alias("tagged"),
    )
    comparable = seqs.group_by("pg").agg(
        (pl.col("tagged").all() | (pl.col("seqs").max() == 1)).alias("comparable")
    )
    return seqs.join(comparable.filter(pl.col("comparable")), on="pg").select("pg", "rank", "mark")


def points_apart(per_rank: pl.DataFrame, shown: int = 4) -> str:
    """Where each rank timed out, when the ranks name different sequence numbers in one group
    (`rank 0: _REDUCE_SCATTER_BASE #122; rank 1: _ALLGATHER_BASE #126`); "" when they agree
    (huggingface/accelerate#3250: the headline named rank 0's collective for both)."""
    placed = per_rank.filter(pl.col("seq").is_not_null() & pl.col("rank").is_not_null())
    if placed.get_column("pg").n_unique() != 1 or placed.get_column("seq").n_unique() < 2:
        return ""
    points = (
        placed.group_by("seq")
        .agg(pl.col("rank").unique().sort(), pl.col("op").drop_nulls().first())
        .sort("seq")
        .iter_rows(named=True)
    )
    said = [
        f"{rank_list(row['rank'])}: {row['op'] or 'collective'} #{row['seq']}" for row in points
    ]
    return "; ".join(said[:shown]) + ("; ..." if len(said) > shown else "")
