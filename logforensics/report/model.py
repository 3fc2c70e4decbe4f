"""The report as plain, JSON-safe data: what both the JSON output and the HTML page show."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

import polars as pl

from logforensics import __version__
from logforensics.api import Analysis
from logforensics.findings import Finding

REPORT_SCHEMA = "logforensics/report@1"


def build_report(analysis: Analysis, input_path: str) -> dict[str, Any]:
    """The stable JSON document (see README, "JSON output")."""
    job = analysis.job
    verdict = analysis.verdict
    world = job.world_size
    return {
        "schema": REPORT_SCHEMA,
        "tool": {"name": "logforensics", "version": __version__},
        "world_size": world.value if world else None,
        "world_size_source": (
            {"family": world.source, "file": world.file, "line": world.line} if world else None
        ),
        "verdict": (
            {
                "kind": verdict.finding.kind,
                "ranks": verdict.finding.ranks,
                "step": verdict.finding.step,
                "stage": verdict.finding.stage,
                "summary": verdict.finding.summary,
                "fix": verdict.finding.fix,
                "confidence": verdict.finding.confidence,
                "reason": verdict.reason,
                "finding": verdict.finding.anchor,
            }
            if verdict
            else None
        ),
        "findings": [_finding(finding) for finding in analysis.findings],
        "stage_order": list(job.progress.stage_order) if job.progress else [],
        "ranks": _ranks(analysis),
        "inputs": _inputs(analysis, input_path),
    }


def _finding(finding: Finding) -> dict[str, Any]:
    return {
        "id": finding.anchor,
        "kind": finding.kind,
        "severity": finding.severity,
        "role": finding.role,
        "ranks": finding.ranks,
        "step": finding.step,
        "stage": finding.stage,
        "epoch": finding.epoch,
        "op": finding.op,
        "seq": finding.seq,
        "summary": finding.summary,
        "fix": finding.fix,
        "confidence": finding.confidence,
        "note": finding.note,
        "evidence": [asdict(evidence) for evidence in finding.evidence],
        "evidence_total": finding.evidence_total,
        "details": finding.details,
    }


def _ranks(analysis: Analysis) -> list[dict[str, Any]]:
    job = analysis.job
    last_marks: dict[int, dict[str, Any]] = {}
    if job.progress is not None:
        for row in job.progress.last_key().iter_rows(named=True):
            last_marks[row["rank"]] = row
    stats = {row["file"]: row for row in job.file_stats.iter_rows(named=True)}
    ranks = []
    for rank in job.ranks_seen:
        files = job.files_of(rank)
        mark = last_marks.get(rank)
        last_line = _last_line(job.events, rank, files, stats)
        ranks.append(
            {
                "rank": rank,
                "host": job.host_of(rank),
                "files": files,
                "last_step": mark["step"] if mark else None,
                "last_stage": mark["stage"] if mark else None,
                "last_line": last_line,
            }
        )
    return ranks


def _last_line(
    events: pl.DataFrame, rank: int, files: list[str], stats: dict[str, dict[str, Any]]
) -> dict[str, Any] | None:
    """The last line of the rank's own file (the one with most of its events), else its last
    event."""
    own = events.filter(pl.col("rank") == rank)
    if own.is_empty():
        candidates = [stats[name] for name in files if name in stats and stats[name]["last_line"]]
        if not candidates:
            return None
        best = candidates[0]
        return {"file": best["file"], "line": best["last_line"], "text": best["last_text"]}
    main_file = own.group_by("file").len().sort("len", "file", descending=[True, False]).item(0, 0)
    info = stats.get(main_file)
    if info and info["rank"] == rank and info["last_line"]:
        return {"file": main_file, "line": info["last_line"], "text": info["last_text"]}
    last = own.filter(pl.col("file") == main_file).row(-1, named=True)
    return {"file": main_file, "line": last["line"], "text": last["text"]}


def _inputs(analysis: Analysis, input_path: str) -> dict[str, Any]:
    job = analysis.job
    inventory = job.inventory
    stats = {row["file"]: row for row in job.file_stats.iter_rows(named=True)}
    return {
        "path": input_path,
        "files": len(inventory.files),
        "lines": analysis.lines,
        "blank_lines": analysis.blank_lines,
        "recognised_lines": analysis.recognised_lines,
        "unrecognised_lines": analysis.unrecognised_lines,
        "bytes": sum(log_file.size for log_file in inventory.files),
        "events": job.events.height,
        "ranks_seen": list(job.ranks_seen),
        "lossy_files": list(analysis.lossy_files),
        "file_list": [
            {
                "file": log_file.name,
                "bytes": log_file.size,
                "lines": stats.get(log_file.name, {}).get("lines", 0),
                "rank": stats.get(log_file.name, {}).get("rank"),
                "rank_from": stats.get(log_file.name, {}).get("rank_from"),
            }
            for log_file in inventory.files
        ],
        "skipped": [{"file": skip.name, "reason": skip.reason} for skip in inventory.skipped],
    }
