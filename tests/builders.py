"""Builders for small, realistic log trees (the Flight Recorder tests' idea: build, don't store)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import polars as pl

from logforensics.api import Analysis, analyze

STAGES = ("before_forward", "before_backward", "after_backward", "after_step")


def marks(
    rank: int,
    steps: Iterable[int],
    stages: tuple[str, ...] = STAGES,
    skip: dict[int, tuple[str, ...]] | None = None,
    stop_after: tuple[int, str] | None = None,
    timestamp: bool = True,
) -> list[str]:
    """Stage-mark lines as a training loop prints them; `skip` drops stages at a step,
    `stop_after` ends the sequence after that (step, stage)."""
    lines: list[str] = []
    for step in steps:
        for stage in stages:
            if skip and stage in skip.get(step, ()):
                continue
            stamp = (
                f"2026-11-29 10:{step // 60:02d}:{step % 60:02d},{rank:03d} INFO "
                if timestamp
                else ""
            )
            lines.append(f"{stamp}rank={rank} step={step} stage={stage}")
            if stop_after == (step, stage):
                return lines
    return lines


def write_logs(root: Path, files: dict[str, list[str]]) -> Path:
    for name, lines in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


def analyze_files(root: Path, files: dict[str, list[str]]) -> Analysis:
    return analyze(write_logs(root, files))


def kinds(analysis: Analysis) -> list[str]:
    return [finding.kind for finding in analysis.findings]


def finding(analysis: Analysis, kind: str):
    found = [f for f in analysis.findings if f.kind == kind]
    assert found, f"no {kind} finding in {kinds(analysis)}"
    return found[0]


def events_of(analysis: Analysis, event: str) -> pl.DataFrame:
    return analysis.job.events.filter(pl.col("event") == event)


def parse(lines: list[str], file: str = "job.log") -> pl.DataFrame:
    """The event table for some lines of one file."""
    from logforensics.events import build_events

    frame = pl.DataFrame(
        {"file": [file] * len(lines), "line": list(range(1, len(lines) + 1)), "text": lines},
        schema={"file": pl.String, "line": pl.UInt32, "text": pl.String},
    )
    return build_events(frame).events


def marks_of(lines: list[str], file: str = "job.log") -> pl.DataFrame:
    """The stage marks read from some lines of one file (the narrow progress table)."""
    from logforensics.events import build_events

    frame = pl.DataFrame(
        {"file": [file] * len(lines), "line": list(range(1, len(lines) + 1)), "text": lines},
        schema={"file": pl.String, "line": pl.UInt32, "text": pl.String},
    )
    table = build_events(frame)
    return table.marks.join(
        table.mark_writers.select("file", "rank", "rank_from", "last_line", "last_time"),
        on=["rank"],
        how="left",
    )


def parsed_by(parser: str, lines: list[str], file: str = "job.log") -> pl.DataFrame:
    """The events one parser made of some lines."""
    return parse(lines, file).filter(pl.col("parser") == parser)


def only(events: pl.DataFrame) -> dict:
    """The single event of a frame, as a dict (fails when there is not exactly one)."""
    assert events.height == 1, events
    return events.row(0, named=True)
