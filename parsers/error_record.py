# ruff: noqa: E501 -- verbatim log lines are quoted whole in the docstring and comments
"""torchelastic's error record printed to the console: the agent's (or a worker's) exception
as JSON, often the only copy of it in the log. Verbatim (pytorch/pytorch#64926;
facebookresearch/av_hubert#19):

    [ERROR] 2021-09-13 22:18:26,678 error_handler: {
      "message": {
        "message": "RendezvousConnectionError: The connection to the C10d store has failed. See inner exception for details.",

    ERROR:torch.distributed.elastic.multiprocessing.errors.error_handler:{
      "message": {
        "message": "RendezvousTimeoutError: ",
        "extraInfo": {
          "py_callstack": "Traceback (most recent call last):\\n  File \\"/gs/hs0/.../torch/distributed/elastic/multiprocessing/errors/__init__.py\\", line 345, in wrapper\\n ...

The inner `"message": "<Type>: <text>"` is an `exception` (its type and text, JSON escapes
undone); the record's opening lines and its `extraInfo` fields are recognised. The record
names no rank: it is the agent's own, or a worker's copied by the agent.
"""

from __future__ import annotations

import polars as pl

from logforensics.registry import LineParser
from parsers.traceback import MESSAGE_CHARS

# "message": "RendezvousConnectionError: The connection to the C10d store has failed. ...",
RECORD_MESSAGE = (
    r'^\s*"message": "(?P<type>(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Exit|Interrupt)):'
    r' ?(?P<text>.*?)",?\s*$'
)
# [ERROR] 2021-09-13 22:18:26,678 error_handler: {    ERROR:torch...error_handler:{
RECORD_START = r"error_handler: ?\{\s*$"
# the record's other fields: its nesting and the extra information torchelastic adds
RECORD_FIELD = r'^\s*"(?:message|extraInfo)": \{\s*$|^\s*"(?:py_callstack|timestamp)": '


def parse(lines: pl.DataFrame) -> pl.DataFrame:
    message = pl.col("message")
    record = message.str.extract_groups(RECORD_MESSAGE)
    text = record.struct.field("text").str.replace_all(r'\\"', '"', literal=True)
    exceptions = lines.filter(message.str.contains(RECORD_MESSAGE)).select(
        "file",
        "line",
        pl.lit("exception").alias("event"),
        pl.lit("error").alias("severity"),
        record.struct.field("type").alias("exc_type"),
        pl.when(text.str.strip_chars() != "")
        .then(text.str.strip_chars().str.slice(0, MESSAGE_CHARS))
        .alias("exc_message"),
    )
    fields = lines.filter(
        message.str.contains(RECORD_START) | message.str.contains(RECORD_FIELD)
    ).select("file", "line", pl.lit(None, dtype=pl.String).alias("event"))
    return pl.concat([exceptions, fields], how="diagonal_relaxed")


PARSER = LineParser(
    name="error_record",
    literals=(
        '"message": ',
        "error_handler:",
        '"extraInfo": ',
        '"py_callstack": ',
        '"timestamp": ',
    ),
    parse=parse,
)
