"""Google Cloud's training services reporting a replica (a machine of the job) that exited with
an error: Vertex AI custom jobs name it by worker pool and index, the older AI Platform (Cloud
ML Engine) by task type and index, and each quotes the replica's traceback flattened into the
same message (GoogleCloudPlatform/vertex-ai-samples#1504, verbatim but cut):

    Step #4: message: "The replica workerpool1-1 exited with a non-zero status of 1. Termination reason: Error. \\nTraceback (most recent call last):\\n  [...]\\n  File ...

(`The replica master 0 exited with a non-zero status of 1. Termination reason: Error.
Traceback ...` in tensorflow/models#4294; several replicas on one line, `The replica ps 0
exited ... The replica ps 1 exited ...`, in tensorflow/models#5845; `The replica workerpool0-0
exited with a non-zero status of 128. Termination reason: StartError.` in
GoogleCloudPlatform/vertex-ai-samples#1898.)

Each replica named is a `worker_failed` event with the exit code, the replica as its host (a
replica is a machine, which may run several ranks: no rank is read from it) and the
termination reason in `extra`.
"""  # noqa: E501 -- verbatim lines

from __future__ import annotations

import polars as pl

from logforensics.registry import LineParser

REPLICA = (
    r"The replica (?P<replica>workerpool\d+-\d+|(?:master|chief|worker|ps|evaluator) \d+) exited "
    r"with a non-zero status of (?P<code>-?\d+)\.(?: Termination reason: (?P<reason>\w+)\.)?"
)
LITERALS = ("exited with a non-zero status of",)


def parse(lines: pl.DataFrame) -> pl.DataFrame:
    said = pl.col("message").str.extract_all(REPLICA)
    reports = (
        lines.select("file", "line", said.alias("_said"))
        .filter(pl.col("_said").list.len() > 0)
        .explode("_said")
        .with_columns(pl.col("_said").str.extract_groups(REPLICA).alias("_parts"))
    )
    parts = pl.col("_parts").struct
    return reports.select(
        "file",
        "line",
        pl.lit("worker_failed").alias("event"),
        pl.lit("error").alias("severity"),
        parts.field("replica").alias("host"),
        parts.field("code").cast(pl.Int32, strict=False).alias("exitcode"),
        pl.struct(
            parts.field("replica").alias("replica"),
            parts.field("reason").alias("termination_reason"),
        )
        .struct.json_encode()
        .alias("extra"),
    )


PARSER = LineParser(name="cloud_replica", literals=LITERALS, parse=parse)
