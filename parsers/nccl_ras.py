# ruff: noqa: E501 -- verbatim log lines are quoted whole in the docstring
"""NCCL's RAS report (`ncclras`, NCCL 2.24+): the job's communicators as NCCL itself sees them,
with the ranks that fell behind or dropped out named with their process, node and GPU
(NVIDIA/nccl docs/userguide troubleshooting/ras.rst; docs/examples/08_ras/01_fault_detection):

    #0-0 (78db921d1c117b4a) MISMATCH
      Communicator ranks have different AllReduce operation counts
      7 ranks have launched up to operation 64
      Rank 7 has launched up to operation 60 -- GPU 3 managed by process 1650386 on node node1

    #0-0 (1bdb83b038775869) INCOMPLETE
      Missing communicator data from 1 rank
      Rank 7 -- GPU 3 managed by process 3748990 on node node1

    DEAD
      1 job process is considered dead (unreachable via the RAS network)
      Process 3748990 on node node1 managing GPU 3

A rank line becomes a `ras_rank` event: its rank, GPU, process and node, the operation count
it launched up to (its own, or that of the count line it is listed under) as `value`, and in
`extra` its state: `behind` when a rank of the same report launched further, `missing` when the
report lacks its data, `ahead` when it is listed at the front of a mismatch the others trail
(RAS lists the smaller group), with the report's `front` and `back` counts. A dead process (a
`DEAD` entry, or the 2.29 monitor's `PEER_DEAD: Process ...`) is a `ras_dead` event. The tables and headings around them are recognised.
"""

from __future__ import annotations

import polars as pl

from logforensics.registry import LineParser

# `#0-0 (78db921d1c117b4a) MISMATCH`, `DEAD`, `INCOMPLETE` alone: where a report's entry starts
ENTRY = r"^\s*(?:#\d+-\d+ \([0-9a-f]+\) )?(?P<state>[A-Z][A-Z_]+)\s*$"
COUNT = r"^\s*\d+ ranks? (?:has|have) launched up to operation (?P<count>\d+)\s*$"
RANK = (
    r"^\s*Rank (?P<rank>\d+)(?: has launched up to operation (?P<count>\d+))? -- GPU "
    r"(?P<gpu>\d+) managed by process (?P<pid>\d+) on node (?P<host>\S+)\s*$"
)
DEAD = (
    r"(?:^\s*|PEER_DEAD: )Process (?P<pid>\d+) on node (?P<host>\S+) managing GPU (?P<gpu>\d+)\s*$"
)
#   Nodes  Processes         GPUs  Processes     GPUs
# (total)   per node  per process    (total)  (total)
#       4          8            1         32       32
TOTALS_HEADER = r"^\(total\) +per node "
TOTALS_ROW = r"^\s*\d+(?: +\d+){4}\s*$"
# the rest of a report: its words, recognised without an event
WORDS = (
    r"^\s*(?:Communicator ranks have different .* operation counts"
    r"|Missing communicator data from \d+ (?:ranks?|job process(?:es)?)"
    r"|\d+ job process(?:es)? (?:is|are) considered dead .*"
    r"|Group +Comms +Nodes .*|# +in group .*|Nodes +Processes .*|\(total\) +per node .*"
    r"|\d+(?: +\S+){5} +(?:RUNNING|INIT|FINALIZE|ABORT)\w* +\w+"
    r"|Job summary|Communicators\.\.\..*|=+|Errors|Warnings|No communicator data collected!"
    r"|NCCL version \S+ compiled with CUDA .*|CUDA runtime version \d+, driver version \d+)\s*$"
)


def parse(lines: pl.DataFrame) -> pl.DataFrame:
    message = pl.col("message")
    rows = lines.sort("file", "line").with_columns(
        message.str.extract(ENTRY, 1).alias("_entry"),
        message.str.extract(COUNT, 1).cast(pl.Int64, strict=False).alias("_listed"),
        message.str.extract_groups(RANK).alias("_rank"),
        message.str.extract_groups(DEAD).alias("_dead"),
    )
    rank = pl.col("_rank").struct.field
    own = rank("count").cast(pl.Int64, strict=False)
    rows = rows.with_columns(
        pl.col("_entry").is_not_null().cum_sum().over("file").alias("_block"),
        pl.col("_entry").forward_fill().over("file").alias("_state"),
        pl.coalesce(own, pl.col("_listed")).alias("_count"),
    ).with_columns(
        pl.coalesce(own, pl.col("_listed").forward_fill().over("file", "_block")).alias(
            "_launched"
        ),
        pl.col("_count").max().over("file", "_block").alias("_front"),
        pl.col("_count").min().over("file", "_block").alias("_back"),
    )
    return pl.concat([_ranks(rows), _dead(rows), _words(rows)], how="diagonal_relaxed")


def _ranks(rows: pl.DataFrame) -> pl.DataFrame:
    rank = pl.col("_rank").struct.field
    found = rows.filter(pl.col("candidate") & rank("rank").is_not_null())
    # RAS lists the smaller group of a mismatch: ranks listed at the front are ahead, and the
    # ones behind are the others (NVIDIA/nccl#1911: ranks 12 and 13 at 641, the 30 others at 640)
    state = (
        pl.when(pl.col("_launched") < pl.col("_front"))
        .then(pl.lit("behind"))
        .when(pl.col("_state") == "INCOMPLETE")
        .then(pl.lit("missing"))
        .when((pl.col("_state") == "MISMATCH") & (pl.col("_back") < pl.col("_launched")))
        .then(pl.lit("ahead"))
        .otherwise(pl.lit("listed"))
    )
    return found.select(
        "file",
        "line",
        pl.lit("ras_rank").alias("event"),
        pl.when(state.is_in(["listed", "ahead"]))
        .then(pl.lit("info"))
        .otherwise(pl.lit("error"))
        .alias("severity"),
        rank("rank").cast(pl.Int32, strict=False).alias("rank"),
        rank("gpu").cast(pl.Int32, strict=False).alias("cuda_dev"),
        rank("pid").cast(pl.Int64, strict=False).alias("pid"),
        rank("host").alias("host"),
        pl.col("_launched").alias("value"),
        pl.struct(state=state, front=pl.col("_front"), back=pl.col("_back"))
        .struct.json_encode()
        .alias("extra"),
    )


def _dead(rows: pl.DataFrame) -> pl.DataFrame:
    dead = pl.col("_dead").struct.field
    return rows.filter(pl.col("candidate") & dead("pid").is_not_null()).select(
        "file",
        "line",
        pl.lit("ras_dead").alias("event"),
        pl.lit("error").alias("severity"),
        dead("gpu").cast(pl.Int32, strict=False).alias("cuda_dev"),
        dead("pid").cast(pl.Int64, strict=False).alias("pid"),
        dead("host").alias("host"),
    )


def _words(rows: pl.DataFrame) -> pl.DataFrame:
    message = pl.col("message")
    said = (
        pl.col("_entry").is_not_null()
        | pl.col("_listed").is_not_null()
        | message.str.contains(WORDS)
    )
    # the job summary's numbers under its `(total)  per node ...` header (no words to route by)
    totals = message.str.contains(TOTALS_ROW) & message.shift(1).over("file").str.contains(
        TOTALS_HEADER
    )
    return rows.filter((pl.col("candidate") & said) | totals.fill_null(False)).select(
        "file", "line", pl.lit(None, pl.String).alias("event")
    )


PARSER = LineParser(
    name="nccl_ras",
    literals=(
        "launched up to operation",
        " managed by process ",
        " managing GPU ",
        "MISMATCH",
        "INCOMPLETE",
        "DEAD",
        "Communicator ranks have different",
        "Missing communicator data",
        "considered dead",
        "Group     Comms",
        "in group",
        "RUNNING",
        "Job summary",
        "Communicators...",
        "=====",
        "Errors",
        "Warnings",
        "No communicator data",
        "Processes",
        "(total)",
        "compiled with CUDA",
        "CUDA runtime version",
    ),
    parse=parse,
    context_after=1,  # the numbers under the job summary's header
)
