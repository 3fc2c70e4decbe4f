"""The library surface: `analyze(path)` does everything the CLI does except writing files."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from logforensics.errors import InputError
from logforensics.events import build_events
from logforensics.findings import Finding
from logforensics.intake import discover, read_lines
from logforensics.job import Job, build_job
from logforensics.registry import rules
from logforensics.verdict import Verdict, choose_verdict, sort_findings


@dataclass(frozen=True, slots=True)
class Analysis:
    job: Job
    findings: list[Finding]
    verdict: Verdict | None
    lines: int
    blank_lines: int
    recognised_lines: int
    lossy_files: tuple[str, ...]

    @property
    def unrecognised_lines(self) -> int:
        return self.lines - self.blank_lines - self.recognised_lines


def analyze(path: Path) -> Analysis:
    """Read every log under `path`, build the event table, run every rule, choose a verdict."""
    inventory = discover(path)
    if not inventory.files:
        skipped = len(inventory.skipped)
        raise InputError(
            f"{path}: no readable log file"
            + (
                f" ({skipped} files skipped: not logs, binary, empty or archives)"
                if skipped
                else ""
            )
        )
    lines = read_lines(inventory.files)
    table = build_events(lines.frame)
    job = build_job(table.events, inventory, lines.frame)
    findings = [finding for rule in rules() for finding in rule.check(job)]
    verdict = choose_verdict(findings, job)
    blank = int(job.file_stats.get_column("blank_lines").sum()) if job.file_stats.height else 0
    return Analysis(
        job=job,
        findings=sort_findings(findings),
        verdict=verdict,
        lines=lines.frame.height,
        blank_lines=blank,
        recognised_lines=table.recognised_lines,
        lossy_files=lines.lossy_files,
    )
