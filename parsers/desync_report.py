"""PyTorch's desync report (`TORCH_NCCL_DESYNC_DEBUG=1`), printed with a watchdog timeout.
Format strings from pytorch/pytorch:torch/csrc/distributed/c10d/TraceUtils.h (each line starts
with a tab):

    - [2] Timeout at collective: ALLREDUCE, #12
    - To our best knowledge, ranks [1, 3] are the lagging ranks that caused this timeout.
      They never joined any collectives                          (one line in the log)
      - [1] joined but didn't finish collective #12 (count from 1)
        [3] finished collective #11, but didn't join collective #12 (count from 1)

It names the ranks the others were waiting for: the report's own culprits. Its `Timeout at
collective` line is the reporting rank's own timeout (`[2]` is that rank): a `collective_timeout`
like the watchdog's, with the op and the report's collective number as `seq`
(pytorch/pytorch#152623 prints it with `#315` while the watchdog's SeqNum was 241: the two
count differently).
"""

from __future__ import annotations

import polars as pl

from logforensics.registry import LineParser

# `ranks [1, 3] are the lagging ranks that caused this timeout`
NEVER_JOINED = r"ranks \[([0-9, ]*)\] are the lagging ranks that caused this timeout"
# `[1] joined but didn't finish collective #12`
NOT_FINISHED = r"\[([0-9, ]*)\] joined but didn't finish collective #(\d+)"
# `[3] finished collective #11, but didn't join collective #12`
NOT_JOINED = r"\[([0-9, ]*)\] finished collective #\d+, but didn't join collective #(\d+)"
# `[2] Timeout at collective: ALLREDUCE, #12`
TIMEOUT_AT = r"\[(\d+)\] Timeout at collective: ([A-Za-z_]+), #(\d+)"
# The rest of the report, recognised without an event:
#   - To our best knowledge, the lagging/dead/mismatched ranks that caused the desync are:
#   - Snapshot of ranks' latest states:
#     #182 finished ranks:
#       [7] finished ALLREDUCE
REPORT_LINE = (
    r"^\s*(?:- To our best knowledge, the lagging/dead/mismatched ranks that caused the desync "
    r"are:|- Snapshot of ranks' latest states:|#\d+ (?:started|finished) ranks:|"
    r"\[[0-9, ]*\] (?:started|finished) [A-Za-z_]+)\s*$"
)


def _rank_list(text: pl.Expr) -> pl.Expr:
    return text.str.extract_all(r"\d+").list.eval(pl.element().cast(pl.Int64, strict=False))


def parse(lines: pl.DataFrame) -> pl.DataFrame:
    message = pl.col("message")
    never = message.str.extract(NEVER_JOINED, 1)
    unfinished = message.str.extract_groups(NOT_FINISHED)
    unjoined = message.str.extract_groups(NOT_JOINED)
    timeout = message.str.extract_groups(TIMEOUT_AT)
    lagging = pl.coalesce(never, unfinished.struct.field("1"), unjoined.struct.field("1"))
    found = lines.select(
        "file",
        "line",
        pl.when(lagging.is_not_null())
        .then(pl.lit("desync_report"))
        .when(timeout.struct.field("1").is_not_null())
        .then(pl.lit("collective_timeout"))
        .alias("event"),
        pl.when(lagging.is_not_null()).then(_rank_list(lagging)).alias("values"),
        pl.coalesce(
            unfinished.struct.field("2"), unjoined.struct.field("2"), timeout.struct.field("3")
        )
        .cast(pl.Int64, strict=False)
        .alias("seq"),
        timeout.struct.field("2").alias("op"),
        timeout.struct.field("1").cast(pl.Int32, strict=False).alias("comm_rank"),
        timeout.struct.field("1").cast(pl.Int32, strict=False).alias("rank"),
        pl.lit("error").alias("severity"),
        message.str.contains(REPORT_LINE).alias("_report"),
    )
    recognised = found.filter(pl.col("event").is_not_null() | pl.col("_report"))
    return recognised.with_columns(
        pl.when(pl.col("event").is_not_null()).then(pl.col("severity")).alias("severity")
    ).drop("_report")


PARSER = LineParser(
    name="desync_report",
    literals=(
        "lagging ranks",
        "joined but didn't finish",
        "but didn't join",
        "Timeout at collective:",
        "lagging/dead/mismatched ranks",
        "Snapshot of ranks' latest states",
        " ranks:",
        "] started ",
        "] finished ",
    ),
    parse=parse,
)
