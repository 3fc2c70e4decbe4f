"""tqdm progress bars, one snapshot per line (the part after the last carriage return):

     45%|████▌     | 18679/18686 [1:50:07<00:02,  2.83it/s]
    18679/18683 [1:50:07<00:01, 2.84it/s]                  # as a notebook renders it
    Epoch 0, Rank 2, world_size 3:  92%|#########2| 12/13 [00:21<00:01,  1.82s/batch]

A bar's description may say whose it is (`Rank 2`, `world_size 3`, `Epoch 0`): then the
totals are per rank (sample_logs/tqdm_rank_bars_uneven, a real run here).

Per-process bars whose totals differ by a few batches are the only trace of uneven
DataLoader lengths in many uploads (huggingface/accelerate#157).
"""

from __future__ import annotations

import polars as pl

from logforensics.registry import LineParser

# `18679/18686 [1:50:07<00:02, 2.83it/s]`, also `?it/s`, `s/it` and tqdm's own units
# (`unit="batch"`: `6.32batch/s`, `1.82s/batch`), and a postfix after the rate
# (`set_postfix`: `160/160 [00:01<00:00, 149.47it/s, train_loss=0.68]`, speechbrain#2401)
BAR = (
    r"(\d+)/(\d+) \[[0-9:]+<[0-9:?]+,\s*[0-9.?]+\s*(?:[A-Za-z]+/s|s/[A-Za-z]+)"
    r"(?:, [^\]\r]*)?(?:\]|$)"  # a postfix may be cut: by a line glued into it, or the line's end
)
# ultralytics >= 8.3's own bar: count, rate, then elapsed<remaining without brackets
# (`1/200 23G ... 1600: 95% ━━━━━━━━━━━─ 41/43 2.7it/s 15.5s<0.7s`, ultralytics#24536)
PLAIN_BAR = r"(\d+)/(\d+) +[0-9.?]+\s*(?:[A-Za-z]+/s|s/[A-Za-z]+) +[0-9.:hms]+<[0-9.:hms?]+\s*$"
# a bar over an iterable of no length: the count, its unit, then elapsed and rate without a
# remaining time (`Epoch 9, Rank 4, world_size 8: 26batch [30:06, 69.48s/batch]`,
# meta-pytorch/torchrec#189); its total is unknown
UNSIZED_BAR = (
    r"(?:^|[\s:|])(\d+)[A-Za-z]+ \[[0-9:]+,\s*[0-9.?]+(?:[A-Za-z]+/s|s/[A-Za-z]+)"
    r"(?:, [^\]\r]*)?(?:\]|$)"
)
# a bar a record cut before its counts (logforensics/framing.py keeps it apart): its value is
# its percentage, its total unknown (`...0 corrupt:   6%|▋ `, ultralytics/yolov5#9163)
CUT_BAR = r"(?:^|[\s:])(\d{1,3})%\|[▏▎▍▌▋▊▉█#1-9]* *$"
RANK = r"(?:^|[^A-Za-z_])[Rr]ank[ :=]*(\d+)"
WORLD_SIZE = r"world_size[ :=]*(\d+)"
EPOCH = r"(?:^|[^A-Za-z_])[Ee]poch[ :=]*(\d+)"


# A bar's name: what stands before its percentage or its count.
BAR_NAME = r"^\s*(.*?)[\s:]*(?:\d{1,3}%\||\d+/\d+ \[)"


def bar_name(message: pl.Expr) -> pl.Expr:
    """The description in front of a bar (`Loading checkpoint shards`), empty for none; a
    table header's column gaps close to one space (YOLO's `Class     Images     Labels`)."""
    return message.str.extract(BAR_NAME, 1).str.strip_chars(" :-").str.replace_all(r"\s{2,}", " ")


def last_snapshot(message: pl.Expr) -> pl.Expr:
    """tqdm rewrites the bar with carriage returns: the last snapshot on the line counts."""
    return message.str.split("\r").list.last()


def parse(lines: pl.DataFrame) -> pl.DataFrame:
    snapshot = last_snapshot(pl.col("message"))
    counts = snapshot.str.extract_groups(BAR)
    plain = snapshot.str.extract_groups(PLAIN_BAR)
    unsized = snapshot.str.extract(UNSIZED_BAR, 1)
    percent = snapshot.str.extract(CUT_BAR, 1)
    sized = pl.coalesce(counts.struct.field("2"), plain.struct.field("2"))
    bars = lines.select(
        "file",
        "line",
        pl.coalesce(counts.struct.field("1"), plain.struct.field("1"), unsized, percent)
        .cast(pl.Int64, strict=False)
        .alias("value"),
        sized.cast(pl.Int64, strict=False).alias("total"),
        (sized.is_not_null() | unsized.is_not_null() | percent.is_not_null()).alias("_bar"),
        snapshot.str.extract(RANK, 1).cast(pl.Int32, strict=False).alias("rank"),
        snapshot.str.extract(WORLD_SIZE, 1).cast(pl.Int32, strict=False).alias("world_size"),
        snapshot.str.extract(EPOCH, 1).cast(pl.Int64, strict=False).alias("epoch"),
    ).filter(pl.col("_bar") & pl.col("value").is_not_null())
    return bars.select(
        "file",
        "line",
        "value",
        "rank",
        "world_size",
        "epoch",
        pl.concat_list("value", "total").alias("values"),
        pl.lit("progress_bar").alias("event"),
        pl.lit("info").alias("severity"),
    )


PARSER = LineParser(
    name="progress_bars",
    literals=("/s]", "/s, ", "s/it]", "s/it, ", "s/batch]", "s/step]", "s<", "%|"),
    parse=parse,
)
