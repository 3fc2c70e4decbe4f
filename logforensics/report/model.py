"""The report as plain, JSON-safe data: what both the JSON output and the HTML page show."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

import polars as pl

from logforensics import __version__
from logforensics.api import Analysis, Upload
from logforensics.dumps.pyspy import where_stuck
from logforensics.findings import Finding
from logforensics.job import Job
from logforensics.paste_spacing import line_maps, own_numbers
from logforensics.registry import diagnosis

REPORT_SCHEMA = "logforensics/report@2"


def build_upload_report(upload: Upload, input_path: str) -> dict[str, Any]:
    """The JSON document of an upload: one job's report as `build_report` makes it, or, for
    several jobs, one such report per job under `jobs` and no verdict of the whole. Lines
    are numbered as in their files (a spaced paste is read without its added blank lines)."""
    maps = line_maps(upload.inventory.files)
    return own_numbers(_upload_report(upload, input_path), maps)


def _upload_report(upload: Upload, input_path: str) -> dict[str, Any]:
    if not upload.several:
        return build_report(upload.jobs[0], input_path)
    jobs = [
        {
            **build_report(analysis, input_path),
            "job": {"number": number, "label": analysis.label, "distinct_by": analysis.distinct_by},
        }
        for number, analysis in enumerate(upload.jobs, start=1)
    ]
    return {
        "schema": REPORT_SCHEMA,
        "tool": {"name": "logforensics", "version": __version__},
        "several_jobs": True,
        "verdict": None,
        "why": upload.why,
        "jobs": jobs,
        "unattached_files": list(upload.unattached),
        "inputs": {
            "path": input_path,
            "files": len(upload.inventory.files),
            "lines": sum(job["inputs"]["lines"] for job in jobs),
            "skipped": [
                {"file": skip.name, "reason": skip.reason} for skip in upload.inventory.skipped
            ],
        },
    }


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
                "kind": diagnosis(verdict.finding),
                "rule": verdict.finding.kind,
                "headline": verdict.headline,
                "ranks": verdict.ranks,
                "step": verdict.finding.step,
                "stage": verdict.finding.stage,
                "summary": verdict.finding.summary,
                "fix": verdict.finding.fix,
                "confidence": verdict.finding.confidence,
                "reason": verdict.reason,
                "where": _where(verdict.finding),
                "finding": verdict.finding.id,
                "chain": [finding.id for finding in verdict.chain],
                "independent": [finding.id for finding in verdict.independent],
            }
            if verdict
            else None
        ),
        "findings": [_finding(finding) for finding in analysis.findings],
        "stage_order": list(job.progress.stage_order) if job.progress else [],
        "ranks": _ranks(analysis),
        "reproduce": _reproduce(analysis),
        "inputs": _inputs(analysis, input_path),
    }


LAUNCH_SHOWN = 5


def _reproduce(analysis: Analysis) -> dict[str, Any]:
    """What an engineer needs to run the job again the same way, and what to add next time."""
    events = analysis.job.events
    world = analysis.job.world_size
    hosts = sorted(events.get_column("host").drop_nulls().unique().to_list())
    commands = events.filter(pl.col("event").is_in(("launch_command", "launch_config")))
    commands = commands.unique(subset=["message"], keep="first", maintain_order=True)
    settings = (
        events.filter(pl.col("names").is_not_null() & pl.col("family").eq("launch"))
        .with_columns(
            pl.col("names").list.first().alias("name"),
            pl.col("extra").str.json_path_match("$.value").alias("value"),
        )
        .unique(subset=["name", "value"], keep="first", maintain_order=True)
        .sort("name")
    )
    debug = {row["name"]: row["value"] for row in settings.iter_rows(named=True)}
    families = set(events.get_column("family").unique().to_list())
    if "nccl" in families and "NCCL_DEBUG" not in debug:
        debug["NCCL_DEBUG"] = "INFO or WARN (NCCL lines are present)"
    versions = sorted(events.get_column("nccl_version").drop_nulls().unique().to_list())
    seen = analysis.job.ranks_seen
    return {
        "world_size": world.value if world else None,
        # without a stated world size, the highest rank in the logs bounds it from below
        "world_size_at_least": max(seen) + 1 if world is None and seen and max(seen) else None,
        "hosts": hosts,
        "launch_commands": [
            {"file": row["file"], "line": row["line"], "text": row["message"]}
            for row in commands.head(LAUNCH_SHOWN).iter_rows(named=True)
        ],
        "debug_settings": debug,
        "nccl_versions": versions,
        "next_time": _next_time(analysis, debug, families),
    }


def _next_time(analysis: Analysis, debug: dict[str, str], families: set[str]) -> list[str]:
    """The logging that would have made this diagnosis surer, where it was missing."""
    advice = []
    if analysis.job.progress is None:
        advice.append(
            "Print a stage mark per rank and step (`rank=<r> step=<s> stage=<name>`, flushed) "
            "before forward, before backward, after backward and after the optimizer step."
        )
    if debug.get("TORCH_DISTRIBUTED_DEBUG") != "DETAIL":
        advice.append(
            "Set TORCH_DISTRIBUTED_DEBUG=DETAIL (and TORCH_CPP_LOG_LEVEL=INFO) on a reproduction "
            "run: mismatching collectives are then reported with both fingerprints."
        )
    if "nccl" not in families and "watchdog" in families:
        advice.append("Set NCCL_DEBUG=WARN (or INFO) to see NCCL's own errors and device map.")
    dated = analysis.job.events.get_column("timestamp").drop_nulls().len() + (
        analysis.job.mark_writers.get_column("last_time").drop_nulls().len()
    )
    if not dated:
        advice.append("Log with timestamps, so the report can say when each rank stopped.")
    if analysis.job.world_size is None:
        advice.append("Print each rank's rank, local_rank, device and world_size once at start-up.")
    return advice


def _where(finding: Finding) -> str:
    """Where in the run the finding stands, in words."""
    if finding.step is not None:
        epoch = f" (epoch {finding.epoch})" if finding.epoch is not None else ""
        stage = f", stage {finding.stage}" if finding.stage else ""
        return f"step {finding.step}{stage}{epoch}"
    if finding.order == -1.0:
        return "at start-up, before the first training step"
    if finding.seq is not None:
        return f"collective sequence number {finding.seq}" + (
            f" ({finding.op})" if finding.op else ""
        )
    return "not placed in the run (no stage marks around it in the same file)"


def _finding(finding: Finding) -> dict[str, Any]:
    return {
        "id": finding.id,
        "kind": diagnosis(finding),
        "rule": finding.kind,
        "severity": finding.severity,
        "role": finding.role,
        "part": finding.part,
        "ranks": finding.ranks,
        "culprit_ranks": finding.culprit_ranks,
        "blamed": finding.blamed,
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
    last_lines = _last_lines(job)
    stuck = {row["rank"]: row for row in where_stuck(job.dumps.stacks).iter_rows(named=True)}
    flight = _flight_positions(job)
    ranks = []
    for facts in job.rank_facts().iter_rows(named=True):
        rank = facts["rank"]
        mark = last_marks.get(rank)
        lines = last_lines.get(rank, [])
        ranks.append(
            {
                "rank": rank,
                "host": facts["host"],
                "pid": facts["pid"],
                "device": facts["device"],
                "bus_id": facts["bus_id"],
                "nccl_version": facts["nccl_version"],
                "files": facts["files"][:RANK_FILES_SHOWN],
                "files_total": len(facts["files"]),
                "last_step": mark["step"] if mark else None,
                "last_stage": mark["stage"] if mark else None,
                "last_line": lines[0] if lines else None,
                "last_lines": lines[:RANK_FILES_SHOWN],
                # from a stack dump: what the main thread waited in, where in the job's code
                "stuck": (
                    {
                        key: stuck[rank][key]
                        for key in (
                            "waiting",
                            "user_frame",
                            "innermost",
                            "other_threads",
                            "tool",
                            "file",
                            "line",
                        )
                    }
                    if rank in stuck
                    else None
                ),
                # from a Flight Recorder dump: the last collective enqueued and completed
                "flight": flight.get(rank),
            }
        )
    return ranks


def _flight_positions(job: Job) -> dict[int, dict[str, Any]]:
    status = job.dumps.flight_status
    return {
        row["rank"]: {
            "process_group": row["pg"],
            "last_enqueued": row["last_enqueued"],
            "last_completed": row["last_completed"],
        }
        for row in status.sort("pg").iter_rows(named=True)
        if row["rank"] is not None
    }


def _last_lines(job: Job) -> dict[int, list[dict[str, Any]]]:
    """What each rank wrote last: the last line of each file that is its alone (its stdout and
    stderr can each end differently), else its last line in a shared file."""
    found: dict[int, list[dict[str, Any]]] = {}
    own = job.file_stats.filter(pl.col("rank").is_not_null() & pl.col("last_line").is_not_null())
    for row in own.sort("rank", "file").iter_rows(named=True):
        found.setdefault(row["rank"], []).append(
            {"file": row["file"], "line": row["last_line"], "text": row["last_text"]}
        )
    # a shared file: its last event, its last stage mark, or a later line its launcher prefix
    # names (a line no parser read)
    shared = pl.concat(
        [
            job.events.filter(pl.col("rank").is_not_null()).select("file", "line", "rank", "text"),
            job.mark_writers.filter(pl.col("rank").is_not_null()).select(
                "file", pl.col("last_line").alias("line"), "rank", pl.col("last_text").alias("text")
            ),
            job.line_writers.select(
                "file",
                pl.col("last_line").alias("line"),
                "rank",
                pl.lit(None, pl.String).alias("text"),
            ),
        ],
        how="vertical_relaxed",
    )
    last = (
        shared.filter(~pl.col("rank").is_in(list(found)))
        .sort("rank", "file", "line")
        .unique("rank", keep="last", maintain_order=True)
    )
    # only a prefixed line no parser kept is read again from its file
    unread = pl.col("text").is_null()
    quoted = pl.concat(
        [last.filter(~unread), job.quote(last.filter(unread))], how="vertical_relaxed"
    )
    for row in quoted.iter_rows(named=True):
        found[row["rank"]] = [{"file": row["file"], "line": row["line"], "text": row["text"]}]
    return found


# Lists that grow with the files of an upload (an archive may hold hundreds of thousands) are
# cut to their first entries; the totals say how many there are.
RANK_FILES_SHOWN = 16
FILES_LISTED = 2000


DUMP_WORDS = {
    "pyspy_text": "py-spy",
    "pyspy_json": "py-spy (JSON)",
    "fr_pickle": "Flight Recorder (pickle)",
    "fr_json": "Flight Recorder (JSON)",
    "faulthandler": "faulthandler stacks",
    "gdb_pybt": "gdb py-bt stacks",
    "debug_server": "debug server",
}


def _dumps(job: Job) -> list[dict[str, Any]]:
    """The hang dumps found beside the logs: what each is, the ranks it was used for (none:
    another dump of the same ranks was used, or it names no rank of the job)."""
    used = pl.concat(
        [
            job.dumps.stacks.select("file", "rank"),
            job.dumps.flight.select("file", "rank"),
        ]
    ).unique()
    ranks_of: dict[str, list[int]] = {}
    for file, rank in used.sort("rank").iter_rows():
        ranks_of.setdefault(file, []).append(rank)
    refused = {skip.name for skip in job.dumps.refused}
    # read for where their processes wait, though no rank is named, where no dump names one
    # (rules.stuck_location)
    unclaimed = (
        set(job.dumps.unranked.get_column("file").unique().to_list())
        if job.dumps.stacks.is_empty()
        else set()
    )
    return [
        {
            "file": dump.name,
            "kind": DUMP_WORDS.get(dump.kind, dump.kind),
            "bytes": dump.size,
            "ranks": ranks_of.get(dump.name, []),
            "used": dump.name in ranks_of or dump.name in unclaimed,
        }
        for dump in job.inventory.dumps[:FILES_LISTED]
        if dump.name not in refused
    ]


def _inputs(analysis: Analysis, input_path: str) -> dict[str, Any]:
    job = analysis.job
    inventory = job.inventory
    listed = inventory.files[:FILES_LISTED]
    names = [log_file.name for log_file in listed]
    stats = {
        row["file"]: row
        for row in job.file_stats.filter(pl.col("file").is_in(names)).iter_rows(named=True)
    }
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
            for log_file in listed
        ],
        "skipped": [
            {"file": skip.name, "reason": skip.reason}
            for skip in (job.dumps.refused + inventory.skipped)[:FILES_LISTED]
        ],
        "skipped_total": len(inventory.skipped) + len(job.dumps.refused),
        "dumps": _dumps(job),
        # files read with a remark: decoded from UTF-16, holes left out, lines cut
        "read_with_remarks": [
            {"file": note.name, "remark": note.reason} for note in inventory.notes[:FILES_LISTED]
        ],
        "attempt": inventory.attempt,
        "attempts": list(inventory.attempts),
        "error_files": [
            {
                "file": error.name,
                "bytes": error.size,
                "exc_type": error.exc_type,
                "exc_message": error.exc_message,
                "timestamp": error.timestamp.isoformat() if error.timestamp else None,
            }
            for error in inventory.error_files
        ],
        "inferred_ranks": analysis.inferred_ranks,
        "rule_errors": [failure.splitlines()[0] for failure in analysis.rule_errors],
    }
