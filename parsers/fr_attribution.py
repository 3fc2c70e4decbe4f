# ruff: noqa: E501 -- verbatim log lines are quoted whole in the docstring
"""What NVIDIA's resiliency extension's Flight Recorder attribution (nvidia-resiliency-ext,
`fr_attribution`) prints when it compares the ranks' dumps of a job with many process groups
(its unit tests' reference outputs, tests/attribution/unit/reference_outputs/, 2025):

    === EXPERT_MODEL_PARALLEL_GROUP Collectives ===

      Process Group                        PG Desc              Op Type            Size      Dtype         Total NRanks                         Identified Ranks                            Missing Ranks
    -----------------------------------------------------------------------------------------
                 74    EXPERT_MODEL_PARALLEL_GROUP      nccl:all_to_all       4096x5120   BFloat16          4                              12,13,14,15                                    12,14
      Operation type distribution:
        Other operations:
          nccl:all_to_all: 6

Each table row becomes an `fr_missing` event: the ranks of its last column in `values`, the
group's id in `pg`, the collective in `op`. The summary table before the sections
(`74     | EXPERT_MODEL_PARALLEL_GROUP | nccl:all_to_all | ... | 12,14`, under a header that
says `{missing_or_completed} Ranks`) does not say which the ranks are, and is recognised only,
with the report's other lines.
"""

from __future__ import annotations

import polars as pl

from logforensics.registry import LineParser

BACKEND = r"(?:nccl|gloo|xccl|ucc|mpi|custom)"
ROW = (
    r"^\s*(?P<pg>\d+)\s+(?P<desc>[A-Za-z_][\w.-]*)\s+" + BACKEND + r":(?P<op>\w+)\s+\S+\s+"
    r"[A-Za-z]\w*\s+\d+\s+\d+(?:,\d+)*\s+(?P<missing>\d+(?:,\d+)*)\s*$"
)
# Python logging's default format before the tool's own lines (`INFO:__main__:74     | ...`)
LOGGED = r"^(?:INFO:[\w.]+:)?"
SUMMARY_ROW = (
    LOGGED + r"\s*\d+\s*\|\s*[A-Za-z_][\w.-]*\s*\|\s*" + BACKEND + r":\w+\s*\|.*\|\s*[\d,]*\s*$"
)
REPORT_LINE = (
    LOGGED + r"\s*(?:=== [A-Z][\w ]* Collectives ===|=== Collective Operations Analysis ==="
    r"|Found group types: .+|Using scheduling order: \{.*\}"
    r"|Process Group\s+PG Desc\s+Op Type\s+.*Missing Ranks|PGID\s+\|.*\| .*Ranks"
    r"|Operation type distribution:|Send/Receive pairs \(src->dst\):|Other operations:"
    r"|" + BACKEND + r":\w+: \d+)\s*$"
)
# the rule under a table's header, which reaches the parser as the line after it
RULE_LINE = r"^-{20,}\s*$"


def parse(lines: pl.DataFrame) -> pl.DataFrame:
    message = pl.col("message")
    row = message.str.extract_groups(ROW)
    missing = lines.with_columns(row.alias("_row")).filter(
        pl.col("candidate") & pl.col("_row").struct.field("missing").is_not_null()
    )
    events = missing.select(
        "file",
        "line",
        pl.lit("fr_missing").alias("event"),
        pl.lit("error").alias("severity"),
        pl.col("_row")
        .struct.field("missing")
        .str.split(",")
        .list.eval(pl.element().str.strip_chars().cast(pl.Int64, strict=False))
        .alias("values"),
        pl.col("_row").struct.field("pg").alias("pg"),
        pl.col("_row").struct.field("op").alias("op"),
    )
    recognised = lines.filter(
        message.str.contains(SUMMARY_ROW)
        | message.str.contains(REPORT_LINE)
        | (~pl.col("candidate") & message.str.contains(RULE_LINE))
    ).select("file", "line", pl.lit(None, pl.String).alias("event"))
    return pl.concat([events, recognised], how="diagonal_relaxed")


PARSER = LineParser(
    name="fr_attribution",
    literals=(
        "nccl:",
        "gloo:",
        " Collectives ===",
        "Missing Ranks",
        "Found group types:",
        "Operation type distribution:",
        "Send/Receive pairs (src->dst):",
        "Other operations:",
        "{missing_or_completed}",
        "=== Collective Operations Analysis ===",
        "Using scheduling order: {",
    ),
    parse=parse,
    context_after=1,
)
