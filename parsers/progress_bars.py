"""tqdm progress bars, one snapshot per line (the part after the last carriage return):

     45%|████▌     | 18679/18686 [1:50:07<00:02,  2.83it/s]
    18679/18683 [1:50:07<00:01, 2.84it/s]                  # as a notebook renders it

Per-process bars whose totals differ by a few batches are the only trace of uneven
DataLoader lengths in many uploads (huggingface/accelerate#157).
"""

from __future__ import annotations

import polars as pl

from logforensics.registry import LineParser

# `18679/18686 [1:50:07<00:02, 2.83it/s]`, also `?it/s` and `s/it` rates
BAR = r"(\d+)/(\d+) \[[0-9:]+<[0-9:?]+,\s*[0-9.?]+\s*(?:it|s)/(?:s|it)\]"


def parse(lines: pl.DataFrame) -> pl.DataFrame:
    # tqdm rewrites the bar with carriage returns: the last snapshot on the line counts
    snapshot = pl.col("message").str.split("\r").list.last()
    counts = snapshot.str.extract_groups(BAR)
    bars = lines.select(
        "file",
        "line",
        counts.struct.field("1").cast(pl.Int64, strict=False).alias("value"),
        counts.struct.field("2").cast(pl.Int64, strict=False).alias("total"),
    ).drop_nulls(["value", "total"])
    return bars.select(
        "file",
        "line",
        "value",
        pl.concat_list("value", "total").alias("values"),
        pl.lit("progress_bar").alias("event"),
        pl.lit("info").alias("severity"),
    )


PARSER = LineParser(name="progress_bars", literals=("it/s]", "s/it]"), parse=parse)
