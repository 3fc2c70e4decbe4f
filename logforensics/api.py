"""The library surface: `analyze(path)` does everything the CLI does except writing files."""

from __future__ import annotations

import re
import traceback
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import polars as pl

from logforensics import chunks, mark_pass, wrappers
from logforensics.attribution import compile_rank_pattern, rank_pattern
from logforensics.errors import InputError
from logforensics.events import ParsedBatch, finish_events, parse_batch, parse_files
from logforensics.findings import Finding, assign_ids
from logforensics.framing import ANSI_ESCAPE, frame_lines
from logforensics.intake import (
    DEFAULT_MAX_BYTES,
    Inventory,
    LogFile,
    discover,
    head_bytes,
    read_lines,
)
from logforensics.job import Job, build_job
from logforensics.jobs import JobFiles, split_jobs
from logforensics.paste_spacing import line_maps, with_added_blanks
from logforensics.reasoner import Verdict, reason, sort_findings
from logforensics.registry import rules
from logforensics.survived import mark_survived
from logforensics.teardown import mark_after_finish

# Lines are read and parsed this many bytes of files at a time.
BATCH_BYTES = 256 * 2**20

# How a rank was found when no line of the rank states it: the report names these.
INFERRED_SOURCES = (
    "file_content",
    "path",
    "node_offset",
    "path_local",
    "node_index",
    "process",
    "device",
    "world_of_one",
)


@dataclass(frozen=True, slots=True)
class Analysis:
    """One job's analysis."""

    job: Job
    findings: list[Finding]
    verdict: Verdict | None
    lines: int
    blank_lines: int
    recognised_lines: int
    lossy_files: tuple[str, ...]
    rule_errors: tuple[str, ...] = ()  # tracebacks of rules that failed (bugs); others still ran
    label: str = ""  # which job of the upload this is ("torchrun run 4729db6e...", a folder)
    distinct_by: tuple[str, ...] = ()  # what tells it apart from the upload's other jobs

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


@dataclass(frozen=True, slots=True)
class Upload:
    """Everything under PATH: one analysis per job found in it."""

    jobs: tuple[Analysis, ...]
    inventory: Inventory
    unattached: tuple[str, ...] = ()  # files that show no job of their own, among several jobs
    mixed: str | None = None  # a conflict between files that no folder separates, in words
    why: str = ""  # what told the jobs apart

    @property
    def several(self) -> bool:
        return len(self.jobs) > 1


def analyze(
    path: Path,
    *,
    attempt: int | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
    rank_from_path: str | None = None,
    stdin: BinaryIO | None = None,
    job: int | None = None,
) -> Analysis:
    """The analysis of the one job under `path` (see `analyze_upload`). When the upload holds
    several jobs, `job` (1-based, in the order `analyze_upload` lists them) picks one; without
    it that is an InputError listing them, never a merged verdict."""
    upload = analyze_upload(
        path, attempt=attempt, max_bytes=max_bytes, rank_from_path=rank_from_path, stdin=stdin
    )
    if job is not None:
        if not 1 <= job <= len(upload.jobs):
            raise InputError(
                f"{path}: no job {job}", hint=f"the upload holds {len(upload.jobs)} job(s)"
            )
        return upload.jobs[job - 1]
    if upload.several:
        listed = "; ".join(f"{n}: {a.label}" for n, a in enumerate(upload.jobs, start=1))
        raise InputError(
            f"{path}: holds {len(upload.jobs)} jobs ({listed})",
            hint="pick one with --job N, or analyse the folder of one job",
        )
    return upload.jobs[0]


def analyze_upload(
    path: Path,
    *,
    attempt: int | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
    rank_from_path: str | None = None,
    stdin: BinaryIO | None = None,
) -> Upload:
    """Read every log under `path`, tell the jobs in it apart, and for each build the event
    table, run every rule and choose a verdict.

    `path` is a folder, a file or an archive, or `-` for standard input (`stdin` when given).
    `attempt` picks a torchrun `--log-dir` restart (default: the latest); `max_bytes` caps the
    decompressed input; `rank_from_path` is a regex with a named group `rank` read from each
    file's path before the built-in path shapes.
    """
    pattern = compile_rank_pattern(rank_from_path) if rank_from_path is not None else None
    inventory = discover(path, attempt=attempt, max_bytes=max_bytes, stdin=stdin)
    if not inventory.files and not inventory.dumps:
        raise InputError(_nothing_readable(path, inventory))
    archive = path.name if _is_archive_upload(path, inventory) else None
    with rank_pattern(pattern, archive):
        return _analyze(path, inventory)


def _is_archive_upload(path: Path, inventory: Inventory) -> bool:
    """Whether `path` is one archive file whose members are the upload."""
    prefix = f"{path.name}!/"
    return (
        str(path) != "-"
        and path.is_file()
        and any(f.name.startswith(prefix) for f in inventory.files)
    )


def _nothing_readable(path: Path, inventory: Inventory) -> str:
    skipped = inventory.skipped
    if len(skipped) == 1:
        return f"{path}: no readable log file ({skipped[0].name}: {skipped[0].reason})"
    if skipped:
        reasons = Counter(skip.reason.split(" (")[0] for skip in skipped)
        [(reason, count)] = reasons.most_common(1)
        return (
            f"{path}: no readable log file ({len(skipped)} files skipped; {count} of them: "
            f"{reason})"
        )
    return f"{path}: no readable log file"


def _nothing_recognised(path: Path, inventory: Inventory, lines: int) -> str:
    files = inventory.files
    named = ", ".join(f.name for f in files[:3]) + (
        f" and {len(files) - 3} more" if len(files) > 3 else ""
    )
    skipped = f"; {len(inventory.skipped)} files skipped" if inventory.skipped else ""
    return (
        f"{path}: nothing here looks like a training job's log: none of the {lines:,} lines "
        f"of {named} is a line the analyzer knows{skipped}"
    )


# A training loss with its value (`loss 12.646465`, `loss=0.0963`, `'loss': 1.25`): a job's own
# report of training, in logs whose lines the analyzer may not know (wenet-e2e/wenet#941's
# `TRAIN Batch 4/203700 loss 12.646465 ... rank 0`, too few of them to learn their template)
# A job's own report of the GPUs and processes it set up (deepmodeling/deepmd-kit#4595's
# `DEEPMD INFO    computing device:      cuda:4`, `CUDA_VISIBLE_DEVICES:  unset`): a GPU job's
# log, which may have failed nowhere
TRAINING = re.compile(
    # (any loss by name: allenai/OLMo#453's `train/CrossEntropyLoss=0.0370`)
    rb"(?i)\b\w*loss['\"]?\s*[:=]?\s*-?\d+\.\d+"
    # a step or iteration counted towards its total (`[step=43362/739328]`, OLMo's), or steps
    # counted done (rwth-i6/returnn#1485: `Trained 904 steps, 0:10:02 elapsed`)
    rb"|\b(?:step|iter|iteration)\s*[:=]?\s*\d+\s*/\s*\d+"
    rb"|\btrained \d+ (?:steps|batches|epochs|iterations)\b"
    # (other accelerators' devices as torch names them: huggingface/accelerate PR 2356's
    # `device='npu:1'` in its 2-process test)
    rb"|\b(?:cuda|npu|xpu|hpu):\d+|\bCUDA_VISIBLE_DEVICES\b|\b(?:LOCAL_RANK|WORLD_SIZE)\b"
    rb"|torch\.distributed"
    # a process's own rank tag in its records (ByteDance-Seed/VeOmni PR 492's
    # `>> [Rank 3] Shard write took 2.79s`, each rank's save of its shard)
    rb"|\[rank:? ?\d+\]"
    # a job's own words for its processes (k2-fsa/snowfall#155: `Distributed training with world
    # size of 2 detected (node's local rank is 1. ...`)
    rb"|\bdistributed training\b|\bworld[ _]size\b\s*(?:of|is|:|=)\s*\d+"
    rb"|\blocal[ _]rank\b\s*(?:is|:|=)?\s*\d+"
    # the job's own training function or loop in its records (huggingface/accelerate#485:
    # loguru's `__main__:training_function:68 - time : 0:00:10.736053`), an epoch counted
    rb"|\btrain(?:ing)?_\w+|(?i:\bepoch\b)\s*[:=]?\s*\d+"
    # a trainer's banner as its training starts, and the counts under it (huggingface/open-r1
    # #483: `***** Running training *****`, `  Num Epochs = 1`, `  Total optimization steps =
    # 196` from transformers' Trainer)
    rb"|\*{3,} running training \*{3,}|\bnum epochs\s*=\s*\d|\btotal optimization steps\s*=\s*\d"
)
ANSI_ESCAPE_BYTES = re.compile(ANSI_ESCAPE.encode())
HEAD_BYTES = 256 * 1024  # of each file, looked at for the words above
HEAD_FILES = 64


def _reports_training(inventory: Inventory) -> bool:
    """Whether the first bytes of the first files report a training loss or the job's GPUs
    and processes: such logs are analysed (and may show no failure), not refused as something
    else's. Colour codes are read past, as the parsers read past them (`\x1b[32mTrained`)."""
    for log_file in inventory.files[:HEAD_FILES]:
        head = ANSI_ESCAPE_BYTES.sub(b"", head_bytes(log_file, HEAD_BYTES))
        if TRAINING.search(head):
            return True
    return False


def _analyze(path: Path, inventory: Inventory) -> Upload:
    batches: list[ParsedBatch] = []
    lossy: list[str] = []
    # files in the order of the numbers in their names (rank2 before rank10): marks then come
    # in rank order, which progress need not sort again
    small = tuple(
        sorted(
            (log_file for log_file in inventory.files if not chunks.is_large(log_file)),
            key=_natural_order,
        )
    )
    read_by_path = tuple(log_file for log_file in small if mark_pass.by_path(log_file))
    held = tuple(log_file for log_file in small if not mark_pass.by_path(log_file))
    for files in (*_file_batches(read_by_path), *_file_batches(held)):
        parsed, lossy_files = parse_files(files)
        lossy.extend(lossy_files)
        batches.extend(parsed)
    for log_file in inventory.files:
        if not chunks.is_large(log_file):
            continue
        for chunk in chunks.file_chunks(log_file):
            if chunk.lossy and log_file.name not in lossy:
                lossy.append(log_file.name)
            batches.append(parse_batch(chunk.lines, own=(chunk.first_line, chunk.last_line)))
    inventory = inventory.without_read_ahead()
    if not batches:  # hang dumps alone: where each rank stood is evidence of its own
        no_lines = {"file": pl.String, "line": pl.UInt32, "text": pl.String}
        batches.append(parse_batch(pl.DataFrame(schema=no_lines)))
    # the bytes of archive members and standard input stay: a finding may quote a line of
    # them that was not kept (a stage mark)
    stats = _merged_stats([batch.file_stats for batch in batches])
    peeled = _with_wrappers_peeled(batches, small, stats)
    if peeled is not batches:
        batches = peeled
        stats = _merged_stats([batch.file_stats for batch in batches])
    stats = with_added_blanks(stats, line_maps(inventory.files))
    # lines a launcher prefix gives a rank are a job's output, whatever they say: the job is
    # analysed (and may show no failure) rather than refused
    prefixed = any(batch.line_writers.height for batch in batches)
    dumps_only = not inventory.files
    if (
        int(stats.get_column("recognised_lines").sum()) == 0
        and not prefixed
        and not dumps_only
        and not _reports_training(inventory)
    ):
        raise InputError(
            _nothing_recognised(path, inventory, int(stats.get_column("lines").sum())),
            hint="point it at the ranks' own logs (stdout/stderr of each process)",
        )
    found = [batch.found for batch in batches if batch.found.height]
    split = split_jobs(
        [log_file.name for log_file in inventory.files],
        pl.concat(found, how="diagonal_relaxed") if found else pl.DataFrame(),
        pl.concat([batch.marks for batch in batches]),
        pl.concat([batch.mark_writers for batch in batches]),
    )
    dumps = (
        [inventory.dumps]
        if dumps_only
        else inventory.dumps_of_jobs([set(job_files.files) for job_files in split.jobs])
    )
    jobs = tuple(
        _analyze_job(
            job_files, batches, stats, inventory.of_files(set(job_files.files), own), lossy
        )
        for job_files, own in zip(split.jobs, dumps, strict=True)
    )
    return Upload(jobs, inventory, split.unattached, split.mixed, split.why)


def _analyze_job(
    job_files: JobFiles,
    batches: list[ParsedBatch],
    stats: pl.DataFrame,
    inventory: Inventory,
    lossy: list[str],
) -> Analysis:
    files = set(job_files.files)
    own = [batch.of_files(files) for batch in batches]
    job_stats = stats.filter(pl.col("file").is_in(list(files)))
    table = finish_events(own, sorted(files))
    job = build_job(table, inventory, job_stats)
    findings, rule_errors = _run_rules(job)
    findings = mark_after_finish(findings, job)
    findings = mark_survived(findings, job)
    verdict = reason(findings, job)
    findings = sort_findings(findings, verdict)
    assign_ids(findings)
    return Analysis(
        job=job,
        findings=findings,
        verdict=verdict,
        lines=int(job_stats.get_column("lines").sum()),
        blank_lines=int(job_stats.get_column("blank_lines").sum()),
        recognised_lines=int(job_stats.get_column("recognised_lines").sum()),
        lossy_files=tuple(name for name in lossy if name in files),
        rule_errors=rule_errors,
        label=job_files.label,
        distinct_by=job_files.distinct_by,
    )


def _with_wrappers_peeled(
    batches: list[ParsedBatch], files: tuple[LogFile, ...], stats: pl.DataFrame
) -> list[ParsedBatch]:
    """`batches` with the files of which fewer than half the lines were recognised (by
    `stats`, their per-file counts) parsed again, the prefix that opens nearly all of their
    lines (a workflow engine's, a log shipper's, a supervisor's tag) taken off (see
    `wrappers`), where that makes more of their lines readable; `batches` itself when no file
    has such a prefix."""
    nonblank = pl.col("lines") - pl.col("blank_lines")
    unread = stats.filter(
        (nonblank >= wrappers.FEWEST_LINES) & (pl.col("recognised_lines") * 2 < nonblank)
    ).select("file", "recognised_lines")
    if unread.is_empty():
        return batches
    names = set(unread.get_column("file").to_list())
    candidates = tuple(f for f in files if f.name in names)
    if not candidates:
        return batches
    # learnt from the files' first lines as the known framers leave them (a kubectl stamp
    # peeled first)
    heads = frame_lines(_head_lines(candidates)).select("file", pl.col("message").alias("text"))
    learned = wrappers.learned_wrappers(heads)
    if not learned:
        return batches
    lines = read_lines(tuple(f for f in candidates if f.name in learned)).frame
    reparsed = parse_batch(lines, wrappers=learned)
    before = dict(unread.iter_rows())
    after = dict(reparsed.file_stats.select("file", "recognised_lines").iter_rows())
    better = {name for name in learned if after.get(name, 0) > before.get(name, 0)}
    if not better:
        return batches
    if better != set(learned):  # parse again without the wrappers that read no more
        chosen = {name: learned[name] for name in better}
        reparsed = parse_batch(lines.filter(pl.col("file").is_in(list(better))), wrappers=chosen)
    others = set(stats.get_column("file").to_list()) - better
    return [*(batch.of_files(others) for batch in batches), reparsed]


def _head_lines(files: tuple[LogFile, ...]) -> pl.DataFrame:
    """`file, line, text`: the whole lines in the first bytes of each file (enough for the
    lines a wrapper is learnt from)."""
    names: list[str] = []
    texts: list[str] = []
    for log_file in files:
        head = head_bytes(log_file, wrappers.HEAD_BYTES)
        if len(head) == wrappers.HEAD_BYTES:  # cut inside a line: keep the lines before it
            head = head[: head.rfind(b"\n") + 1]
        decoded = head.decode("utf-8", errors="replace").split("\n")
        decoded = decoded[:-1] if decoded and not decoded[-1] else decoded
        names.extend([log_file.name] * len(decoded))
        texts.extend(decoded)
    frame = pl.DataFrame(
        {"file": names, "text": texts}, schema={"file": pl.String, "text": pl.String}
    )
    return frame.with_columns(
        (pl.int_range(pl.len(), dtype=pl.UInt32).over("file") + 1).alias("line")
    ).select("file", "line", "text")


def _merged_stats(parts: list[pl.DataFrame]) -> pl.DataFrame:
    """Per-file line statistics from batches, a large file's blocks added up."""
    stats = pl.concat(parts, how="vertical_relaxed")
    return stats.group_by("file", maintain_order=True).agg(
        pl.col("lines").sum(),
        pl.col("blank_lines").sum(),
        pl.col("recognised_lines").sum(),
        pl.col("last_line").max(),
        pl.col("last_text").sort_by("last_line", nulls_last=False).last(),
    )


def _natural_order(log_file: LogFile) -> list[tuple[int, int | str]]:
    return [
        (0, int(part)) if part.isdigit() else (1, part)
        for part in re.split(r"(\d+)", log_file.name)
        if part
    ]


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
