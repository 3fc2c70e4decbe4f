"""The library surface: `analyze(path)` does everything the CLI does except writing files."""

from __future__ import annotations

import traceback
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import polars as pl

from logforensics import chunks
from logforensics.attribution import compile_rank_pattern, rank_pattern
from logforensics.errors import InputError
from logforensics.events import ParsedBatch, finish_events, parse_batch
from logforensics.findings import Finding, assign_ids
from logforensics.intake import DEFAULT_MAX_BYTES, Inventory, LogFile, discover, read_lines
from logforensics.job import Job, build_job
from logforensics.reasoner import Verdict, reason, sort_findings
from logforensics.registry import rules

# Lines are read and parsed this many bytes of files at a time.
BATCH_BYTES = 32 * 2**20

# How a rank was found when no line of the rank states it: the report names these.
INFERRED_SOURCES = ("file_content", "path", "node_offset", "path_local", "node_index", "process")


@dataclass(frozen=True, slots=True)
class Analysis:
    job: Job
    findings: list[Finding]
    verdict: Verdict | None
    lines: int
    blank_lines: int
    recognised_lines: int
    lossy_files: tuple[str, ...]
    rule_errors: tuple[str, ...] = ()  # tracebacks of rules that failed (bugs); others still ran

    @property
    def unrecognised_lines(self) -> int:
        return self.lines - self.blank_lines - self.recognised_lines

    @property
    def inferred_ranks(self) -> dict[str, list[int]]:
        """Ranks some of whose events got their rank by inference, by how (a `rank_from`)."""
        inferred = (
            self.job.events.filter(pl.col("rank_from").is_in(INFERRED_SOURCES))
            .group_by("rank_from")
            .agg(pl.col("rank").unique().sort())
        )
        return {row["rank_from"]: row["rank"] for row in inferred.sort("rank_from").to_dicts()}


def analyze(
    path: Path,
    *,
    attempt: int | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
    rank_from_path: str | None = None,
    stdin: BinaryIO | None = None,
) -> Analysis:
    """Read every log under `path`, build the event table, run every rule, choose a verdict.

    `path` is a folder, a file or an archive, or `-` for standard input (`stdin` when given).
    `attempt` picks a torchrun `--log-dir` restart (default: the latest); `max_bytes` caps the
    decompressed input; `rank_from_path` is a regex with a named group `rank` read from each
    file's path before the built-in path shapes.
    """
    pattern = compile_rank_pattern(rank_from_path) if rank_from_path is not None else None
    inventory = discover(path, attempt=attempt, max_bytes=max_bytes, stdin=stdin)
    if not inventory.files:
        raise InputError(_nothing_readable(path, inventory))
    with rank_pattern(pattern):
        return _analyze(inventory)


def _nothing_readable(path: Path, inventory: Inventory) -> str:
    skipped = inventory.skipped
    if len(skipped) == 1:
        return f"{path}: no readable log file ({skipped[0].name}: {skipped[0].reason})"
    if skipped:
        return (
            f"{path}: no readable log file ({len(skipped)} files skipped: not logs, binary, "
            "empty, links or damaged archives)"
        )
    return f"{path}: no readable log file"


def _analyze(inventory: Inventory) -> Analysis:
    batches: list[ParsedBatch] = []
    lossy: list[str] = []
    line_count = 0
    small = tuple(log_file for log_file in inventory.files if not chunks.is_large(log_file))
    for files in _file_batches(small):
        lines = read_lines(files)
        lossy.extend(lines.lossy_files)
        line_count += lines.frame.height
        batches.append(parse_batch(lines.frame))
    for log_file in inventory.files:
        if not chunks.is_large(log_file):
            continue
        for chunk in chunks.file_chunks(log_file):
            if chunk.lossy and log_file.name not in lossy:
                lossy.append(log_file.name)
            line_count += chunk.last_line - chunk.first_line + 1
            batches.append(parse_batch(chunk.lines, own=(chunk.first_line, chunk.last_line)))
    file_names = [log_file.name for log_file in inventory.files]
    inventory = inventory.without_data()
    table = finish_events(batches, file_names)
    stats = _merged_stats([batch.file_stats for batch in batches])
    job = build_job(table.events, inventory, stats)
    findings, rule_errors = _run_rules(job)
    verdict = reason(findings, job)
    findings = sort_findings(findings, verdict)
    assign_ids(findings)
    blank = int(job.file_stats.get_column("blank_lines").sum()) if job.file_stats.height else 0
    return Analysis(
        job=job,
        findings=findings,
        verdict=verdict,
        lines=line_count,
        blank_lines=blank,
        recognised_lines=table.recognised_lines,
        lossy_files=tuple(lossy),
        rule_errors=rule_errors,
    )


def _merged_stats(parts: list[pl.DataFrame]) -> pl.DataFrame:
    """Per-file line statistics from batches, a large file's blocks added up."""
    stats = pl.concat(parts, how="vertical_relaxed")
    return stats.group_by("file", maintain_order=True).agg(
        pl.col("lines").sum(),
        pl.col("blank_lines").sum(),
        pl.col("last_line").max(),
        pl.col("last_text").sort_by("last_line", nulls_last=False).last(),
    )


def _file_batches(files: tuple[LogFile, ...]) -> Iterator[tuple[LogFile, ...]]:
    """Whole files, about BATCH_BYTES at a time: memory stays bounded by a batch's lines plus
    the (few) events, however large the upload."""
    batch: list[LogFile] = []
    size = 0
    for log_file in files:
        batch.append(log_file)
        size += log_file.size
        if size >= BATCH_BYTES:
            yield tuple(batch)
            batch, size = [], 0
    if batch:
        yield tuple(batch)


def _run_rules(job: Job) -> tuple[list[Finding], tuple[str, ...]]:
    """Every rule's findings. A rule that raises is a bug: its traceback is kept, the other
    rules' findings still make the report (the CLI then exits 3)."""
    findings: list[Finding] = []
    errors: list[str] = []
    for rule in rules():
        try:
            findings.extend(rule.check(job))
        except Exception:  # noqa: BLE001 - isolate one rule's bug from the rest
            errors.append(f"rule {rule.kind} failed:\n{traceback.format_exc()}")
    return findings, tuple(errors)
