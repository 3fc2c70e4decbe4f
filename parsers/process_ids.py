"""The process id a rank prints for itself, the key that ties a stack dump (py-spy names
processes by pid) to a rank:

    2026-12-01 17:31:00,512 INFO rank=2 pid=18459 host=vm
    [rank 3] pid: 4242
    RANK=1 PID=777 LOCAL_RANK=1

Ray Train's controller lists its workers that way, one line each, with the global rank as
`world_rank` (`- (ip=10.7.37.122, pid=86716) world_rank=0, local_rank=0, node_rank=0`): the
workers' own lines, prefixed `(RayTrainWorker pid=86716)`, then take that rank.

A DataLoader worker's own line (`rank=0 dataloader_worker=0 pid=18769`) names its rank's
number too; a dump of that worker is its rank's either way. `local_rank`, `--bad-rank` and
`ppid` are no rank and no pid.
"""

from __future__ import annotations

import polars as pl

from logforensics.registry import LineParser
from parsers.key_values import WORD_START

RANK = WORD_START + r"\[?(?i:(?:world_|global_)?rank)\s*[=:]?\s*(\d{1,7})\b"
PID = WORD_START + r"(?i:pid)\s*[=:]\s*(\d{1,9})\b"
IP = WORD_START + r"ip=([0-9A-Fa-f][0-9A-Fa-f.:]*[0-9A-Fa-f])\b"  # Ray's worker address


def parse(lines: pl.DataFrame) -> pl.DataFrame:
    message = pl.col("message")
    return lines.select(
        "file",
        "line",
        # (or the rank its writer's tag gives: `[rank 3] pid: 4242`, the tag framed off)
        pl.coalesce(
            message.str.extract(RANK, 1).cast(pl.Int32, strict=False),
            pl.col("prefix_rank").cast(pl.Int32),
        ).alias("rank"),
        message.str.extract(PID, 1).cast(pl.Int64, strict=False).alias("pid"),
        message.str.extract(IP, 1).alias("host"),
        pl.lit("process_id").alias("event"),
        pl.lit("info").alias("severity"),
    ).filter(pl.col("rank").is_not_null() & pl.col("pid").is_not_null())


PARSER = LineParser(name="process_ids", literals=("pid", "PID"), parse=parse)
