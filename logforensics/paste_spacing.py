"""A paste that put a blank line after every line, read as the lines it spaced out.

Some pastes and copies out of web pages double every line end: each line is followed by a
blank one and the file's own blank lines come in threes. Read as they are, no traceback's
frames follow each other and no torchrun summary's entries do. Such a text is read without
the blanks the paste added (the lines it spaced out, with their own blank lines); the report
still numbers lines as the file does (`own_numbers`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import polars as pl

if TYPE_CHECKING:
    from logforensics.intake import LogFile

# fewer lines with text than this in a file's first bytes prove nothing
MIN_SPACED = 4


@dataclass(frozen=True, slots=True)
class LineMap:
    """The file's own number of each line read (`originals[k - 1]` for line k)."""

    originals: pl.Series  # UInt32
    added_blanks: int  # blank lines the paste added, left out

    def own_number(self, line: int) -> int:
        if 1 <= line <= self.originals.len():
            return int(self.originals[line - 1])
        return line


def spaced(head: bytes) -> bool:
    """Whether a text's first bytes are a spaced paste: no two lines with text touch, and
    every run of blank lines between them is odd (the blank after a line, or a blank of the
    file's own doubled beside it)."""
    if not _first_line_spaced(head):
        return False
    ends = head.count(b"\n")
    # (most texts have few blank lines: counted in C before any line is looked at)
    if ends < 2 * MIN_SPACED or (head.count(b"\n\n") + head.count(b"\n\r\n")) * 5 < ends * 2:
        return False
    lines = head.split(b"\n")[:-1]  # the last may be cut by the sniff
    filled = [bool(line.strip()) for line in lines]
    first = filled.index(True) if True in filled else len(filled)
    runs: list[int] = []
    run = 0
    for has_text in filled[first:]:
        if has_text:
            runs.append(run)
            run = 0
        else:
            run += 1
    between = runs[1:]
    return len(runs) >= MIN_SPACED and all(run % 2 == 1 for run in between)


def _first_line_spaced(head: bytes) -> bool:
    """Whether the first line with text is followed by a blank one, as in every spaced paste:
    two short scans that spare most files the counts over their first bytes."""
    text = head.lstrip()
    end = text.find(b"\n")
    after = text.find(b"\n", end + 1) if end >= 0 else -1
    return after >= 0 and not text[end + 1 : after].strip()


def unspaced(data: bytes) -> tuple[bytes, LineMap]:
    """`data` without the blank lines the paste added: after each line (a blank of the file's
    own too) the paste put one, so in a run of blank lines after a line with text every second
    blank is the file's own, and in the run the text opens with, the first and every second."""
    body = data[:-1] if data.endswith(b"\n") else data
    # (Latin-1 maps each byte to one character and back: any bytes survive the round trip)
    lines = pl.DataFrame({"text": pl.Series([body.decode("latin-1")]).str.split("\n").explode()})
    blank = pl.col("text").str.strip_chars(" \t\r") == ""
    run = (blank != blank.shift(1)).fill_null(True).cum_sum()
    runs = lines.with_row_index("line", offset=1).with_columns(
        blank.alias("_blank"), run.alias("_run")
    )
    at = pl.int_range(pl.len()).over("_run")
    own_blank = at % 2 == pl.when(pl.col("_run") == 1).then(0).otherwise(1)
    kept = runs.filter(~pl.col("_blank") | own_blank)
    text = kept.select(pl.col("text").str.join("\n")).item() + "\n"
    originals = kept.get_column("line").cast(pl.UInt32)
    return text.encode("latin-1"), LineMap(originals, lines.height - kept.height)


def line_maps(files: Iterable[LogFile]) -> dict[str, LineMap]:
    return {log_file.name: log_file.line_map for log_file in files if log_file.line_map}


def with_added_blanks(stats: pl.DataFrame, maps: dict[str, LineMap]) -> pl.DataFrame:
    """Per-file line counts (`file, lines, blank_lines, ...`) with the blank lines a spaced
    paste added counted back: every line of the file is counted, read or left out."""
    if not maps:
        return stats
    added = pl.DataFrame(
        {"file": list(maps), "_added": [line_map.added_blanks for line_map in maps.values()]},
        schema={"file": pl.String, "_added": stats.schema["lines"]},
    )
    plus = pl.col("_added").fill_null(0)
    return (
        stats.join(added, on="file", how="left", maintain_order="left")
        .with_columns(pl.col("lines") + plus, pl.col("blank_lines") + plus)
        .drop("_added")
    )


def own_numbers(document: Any, maps: dict[str, LineMap]) -> Any:
    """A report document with every line it points at (`{"file": ..., "line": ...}`, and a
    block's `end_line`) numbered as in the file, not as read."""
    if not maps:
        return document
    if isinstance(document, list):
        return [own_numbers(item, maps) for item in document]
    if not isinstance(document, dict):
        return document
    renumbered = {key: own_numbers(value, maps) for key, value in document.items()}
    line_map = maps.get(document.get("file")) if isinstance(document.get("file"), str) else None
    if line_map is not None:
        for key in ("line", "end_line"):
            if isinstance(renumbered.get(key), int):
                renumbered[key] = line_map.own_number(renumbered[key])
    return renumbered


def own_numbered_events(events: pl.DataFrame, maps: dict[str, LineMap]) -> pl.DataFrame:
    """The event table with `line` and `end_line` numbered as in the file."""
    if not maps:
        return events
    table = pl.concat(
        [
            pl.DataFrame(
                {
                    "file": name,
                    "_read": pl.int_range(1, line_map.originals.len() + 1, eager=True),
                    "_own": line_map.originals,
                },
                schema={"file": pl.String, "_read": pl.UInt32, "_own": pl.UInt32},
            )
            for name, line_map in maps.items()
        ]
    )
    numbered = events.with_columns(pl.col("file").cast(pl.String).alias("_file"))
    for column in ("line", "end_line"):
        if column not in events.columns:
            continue
        numbered = (
            numbered.join(
                table.rename({"file": "_file", "_read": column}),
                on=["_file", column],
                how="left",
                maintain_order="left",
            )
            .with_columns(pl.coalesce("_own", column).cast(events.schema[column]).alias(column))
            .drop("_own")
        )
    return numbered.drop("_file")
