"""What PyTorch's Flight Recorder analyzer (`fr_trace`, torch.distributed.flight_recorder)
prints when it compares the ranks' dumps: the collective not every rank joined, and which
ranks are missing from it (pytorch/tutorials, the flight recorder tutorials; the current code's
words in torch/distributed/flight_recorder/components/utils.py):

    Not all ranks joining collective, sequence number: 4
    internal record id: 4
    group info: main_comm:gloo
    collective: nccl:all_reduce
    missing ranks: {1}

(older: `Not all ranks joining collective 5 at entry 4`.) The `missing ranks` line becomes an
`fr_missing` event: the ranks in `values`, the collective's sequence number and op from the
report's lines before it. Its other lines (the record, sizes, the rank-by-rank table header)
are recognised.

Where the ranks joined but called it differently, the report names the culprits and how they
differ (pytorch/pytorch#140563, a 128-rank job, verbatim, the line cut there):

    Collective 39 at entry 38 errors
    ...
    error msg: Culprit rank 22; Error type: SIZE_OR_SYNTAX_MISMATCH, Expected input sizes: '[[1025]]' does not match found input sizes: '[[262144]]', Culprit rank 110; Error type: ...

an `fr_missing` event too, every culprit in `values`, the error type (`..._MISMATCH`) in
`error_code` and what it says of the first in `exc_message`.
"""  # noqa: E501 -- verbatim lines

from __future__ import annotations

import polars as pl

from logforensics.registry import LineParser

NOT_JOINING = (
    r"^\s*Not all ranks joining collective(?:, sequence number: (?P<seq>\d+)| (?P<old>\d+) at "
    r"entry \d+)\s*$"
)
HAS_ERRORS = (
    r"^\s*Collective (?:sequence number: (?P<seq>\d+) has|(?P<old>\d+) at entry \d+) errors\s*$"
)
COLLECTIVE = r"^\s*collective: (?:\w+:)?(?P<op>\w+)\s*$"
MISSING = r"^\s*missing ranks: \{(?P<ranks>[\d, ]*)\}\s*$"
# `error msg: Culprit rank 3; Error type: ...`
CULPRIT = r"^\s*error msg: Culprit rank (?P<rank>\d+)\b"
# each culprit the message names, and how the first differs
CULPRITS = r"Culprit rank (\d+)\b"
ERROR_TYPE = (
    r"^\s*error msg: Culprit rank \d+; Error type: (?P<type>[A-Z_]+)"
    r"(?:, (?P<said>.+?))?(?:, Culprit rank |$)"
)
# how many lines after its heading a report's record runs (the analyzer prints ten)
REPORT_LINES = 12
RECORD = (
    r"^\s*(?:internal record id: \d+|group info: .+|(?:input|output) sizes: .+|world size: \d+"
    r"|expected ranks: \{[\d, ]*\}|collective state: \w+)\s*$"
)


def parse(lines: pl.DataFrame) -> pl.DataFrame:
    message = pl.col("message")
    joining = message.str.extract_groups(NOT_JOINING)
    erring = message.str.extract_groups(HAS_ERRORS)
    seq = pl.coalesce(
        joining.struct.field("seq"),
        joining.struct.field("old"),
        erring.struct.field("seq"),
        erring.struct.field("old"),
    ).cast(pl.Int64, strict=False)
    rows = lines.sort("file", "line").with_columns(
        seq.alias("_seq"),
        message.str.extract(COLLECTIVE, 1).alias("_op"),
        message.str.extract(MISSING, 1).alias("_missing"),
        message.str.extract(CULPRIT, 1).cast(pl.Int32, strict=False).alias("_culprit"),
    )
    report = pl.col("_seq").is_not_null().cum_sum().over("file")
    started = pl.when(pl.col("_seq").is_not_null()).then(pl.col("line"))
    rows = rows.with_columns(
        report.alias("_report"), started.forward_fill().over("file").alias("_started")
    ).with_columns(
        pl.col("_seq").forward_fill().over("file", "_report").alias("seq"),
        pl.col("_op").forward_fill().over("file", "_report").alias("op"),
    )
    # a report's own lines: its heading and the lines after it (how they are routed here)
    in_report = (pl.col("line") - pl.col("_started") <= REPORT_LINES).fill_null(False)
    missing = rows.filter(
        pl.col("candidate") & (pl.col("_missing").is_not_null() | pl.col("_culprit").is_not_null())
    )
    events = missing.select(
        "file",
        "line",
        pl.lit("fr_missing").alias("event"),
        pl.lit("error").alias("severity"),
        pl.when(pl.col("_culprit").is_not_null())
        .then(
            message.str.extract_all(CULPRITS).list.eval(
                pl.element().str.extract(r"(\d+)$", 1).cast(pl.Int64, strict=False)
            )
        )
        .otherwise(
            pl.col("_missing")
            .str.extract_all(r"\d+")
            .list.eval(pl.element().cast(pl.Int64, strict=False))
        )
        .alias("values"),
        "seq",
        "op",
        message.str.extract(ERROR_TYPE, 1).alias("error_code"),
        message.str.extract(ERROR_TYPE, 2).alias("exc_message"),
    )
    recognised = rows.filter(
        pl.col("_seq").is_not_null()
        | (in_report & (pl.col("_op").is_not_null() | message.str.contains(RECORD)))
    ).select("file", "line", pl.lit(None, pl.String).alias("event"))
    return pl.concat([events, recognised], how="diagonal_relaxed")


# Only a report's heading and its missing ranks route lines here (`collective: ` alone would
# bring every DETAIL `Running collective: ...` line); the record lines come as its context.
PARSER = LineParser(
    name="fr_trace_text",
    literals=(
        "Not all ranks joining collective",
        " has errors",
        " at entry ",
        "missing ranks: {",
        "Culprit rank",
    ),
    parse=parse,
    context_after=REPORT_LINES,
)
