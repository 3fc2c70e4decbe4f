"""`forensics`: the command line. Parses options, calls the library, maps errors to exit codes.

Exit codes: 0 analysis completed (whatever it found, unless --fail-on says otherwise);
1 findings at or above --fail-on; 2 usage or input error; 3 internal error (a bug).
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from typer.core import TyperCommand, TyperGroup

from logforensics import __version__
from logforensics.errors import LogForensicsError
from logforensics.i18n import LANGUAGES
from logforensics.terminal import printable
from logforensics.text import rank_ranges

if TYPE_CHECKING:
    from rich.console import Console
    from typer import _click as click  # the click typer vendors: its Context, Command

    from logforensics.api import Upload

EXIT_OK, EXIT_FINDINGS, EXIT_INPUT, EXIT_INTERNAL = 0, 1, 2, 3
DEFAULT_OUT = {
    "html": "forensics-report.html",
    "json": "forensics-report.json",
    "md": "forensics-report.md",
}
FORMATS = ("html", "json", "md")
FAIL_ON = ("never", "error", "warning")
HTML_ASSETS = ("inline", "external")
DEFAULT_MAX_BYTES = "4G"
MESSAGE_CHARS = 300  # of an internal error's message, on its one line
CSS_OPTION = "the stylesheet of --html-assets external"  # how errors name the CSS file


class _Command(TyperCommand):
    """A command whose help shows no `<bool>` type on flags (a flag takes no value) and its
    arguments in the usage line as `PATH`, not `{PATH}`."""

    def format_help(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        _untyped_flags(self, ctx)
        super().format_help(ctx, formatter)

    def collect_usage_pieces(self, ctx: click.Context) -> list[str]:
        return [
            piece[1:-1] if piece.startswith("{") and piece.endswith("}") else piece
            for piece in super().collect_usage_pieces(ctx)
        ]


class _Group(TyperGroup):
    def format_help(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        _untyped_flags(self, ctx)
        super().format_help(ctx, formatter)


def _untyped_flags(command: click.Command, ctx: click.Context) -> None:
    for param in command.get_params(ctx):
        if getattr(param, "is_bool_flag", False) and param.metavar is None:
            param.metavar = ""


app = typer.Typer(
    cls=_Group,
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    help="Tell why a multi-rank PyTorch job hung, from its logs alone.",
)


def _version(value: bool) -> None:
    if value:
        import polars

        _say(f"logforensics {__version__} (polars {polars.__version__})", err=False)
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print versions.")
    ] = False,
) -> None:
    """Tell why a multi-rank PyTorch job hung, from its logs alone."""


@app.command(cls=_Command)
def analyze(
    path: Annotated[
        Path,
        typer.Argument(
            metavar="PATH",
            help="A folder of logs (searched recursively), one file, an archive (.tar, .tar.gz, "
            ".tar.zst, .zip), or '-' for standard input (plain or compressed).",
        ),
    ],
    output_format: Annotated[
        str,
        typer.Option(
            "--format",
            "-f",
            metavar="html|json|md",
            help="Report format: an HTML page, the JSON document, or Markdown to paste into a "
            "ticket.",
        ),
    ] = "html",
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            "-o",
            help="Where to write the report ('-' for stdout). Default: ./forensics-report.html, "
            ".json or .md.",
        ),
    ] = None,
    lang: Annotated[
        str,
        typer.Option(
            "--lang",
            metavar="en|zh",
            help="Language of the report's words and of the summary printed here (log text, "
            "file names and finding kinds stay as they are).",
        ),
    ] = "en",
    events: Annotated[
        Path | None, typer.Option("--events", help="Also write the event table as Parquet.")
    ] = None,
    fail_on: Annotated[
        str,
        typer.Option(
            "--fail-on",
            metavar="never|error|warning",
            help="Exit 1 when findings of this severity or worse exist.",
        ),
    ] = "never",
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Print nothing but errors.")] = False,
    html_assets: Annotated[
        str,
        typer.Option(
            "--html-assets",
            metavar="inline|external",
            help="'external' writes the CSS next to the report and links it, for viewers "
            "whose Content-Security-Policy blocks inline CSS (Jenkins' default).",
        ),
    ] = "inline",
    attempt: Annotated[
        int | None,
        typer.Option(
            "--attempt",
            min=0,
            help="Which torchrun --log-dir restart (attempt_N) to analyse. Default: the latest.",
        ),
    ] = None,
    max_bytes: Annotated[
        str,
        typer.Option(
            "--max-bytes",
            metavar="SIZE",
            help="Refuse inputs larger than this once decompressed (e.g. 8G, 512M).",
        ),
    ] = DEFAULT_MAX_BYTES,
    job: Annotated[
        int | None,
        typer.Option(
            "--job",
            min=1,
            help="When the upload holds several jobs, analyse only this one (1-based, as the "
            "summary lists them).",
        ),
    ] = None,
    rank_from_path: Annotated[
        str | None,
        typer.Option(
            "--rank-from-path",
            metavar="REGEX",
            help=r"Read each file's rank from its path with this regex (a named group 'rank', "
            r"e.g. 'gpu(?P<rank>\d+)\.txt$'), before the built-in path shapes.",
        ),
    ] = None,
    debug: Annotated[
        bool, typer.Option("--debug", help="On an internal error, print the full traceback.")
    ] = False,
) -> None:
    """Analyse the logs under PATH and write a report (HTML by default)."""
    try:
        writing = Writing(
            _chosen("--format", output_format, FORMATS),
            out,
            events,
            _chosen("--lang", lang, LANGUAGES),
            _chosen("--html-assets", html_assets, HTML_ASSETS) == "external",
        )
        failing = _chosen("--fail-on", fail_on, FAIL_ON)
        reading = Reading(attempt, max_bytes, rank_from_path, job)
        code = _analyze(path, reading, writing, failing, quiet, debug)
    except LogForensicsError as error:
        hint = f" ({error.hint})" if error.hint else ""
        _say(f"forensics: error: {error}{hint}")
        raise typer.Exit(EXIT_INPUT) from None
    except (typer.Exit, KeyboardInterrupt, SystemExit):
        raise
    except BaseException as error:  # a bug; a panic in polars is a BaseException
        _internal_error(_raised(error), "".join(traceback.format_exception(error)), debug)
        raise typer.Exit(EXIT_INTERNAL) from None
    raise typer.Exit(code)


def _chosen(option: str, value: str, choices: tuple[str, ...]) -> str:
    """`value` if it is one of `choices`; else one line that says what is allowed."""
    if value in choices:
        return value
    from logforensics.errors import InputError

    allowed = ", ".join(choices[:-1]) + f" or {choices[-1]}"
    raise InputError(f"{option} {value!r} is not known: choose {allowed}")


@dataclass(frozen=True, slots=True)
class Reading:
    """How to read PATH: the options passed on to `logforensics.api.analyze`."""

    attempt: int | None
    max_bytes: str
    rank_from_path: str | None
    job: int | None = None


@dataclass(frozen=True, slots=True)
class Writing:
    """What to write: the report's format, file and language, the event table, the CSS."""

    output_format: str = "html"
    out: Path | None = None
    events: Path | None = None
    lang: str = "en"
    external_css: bool = False


def _analyze(
    path: Path,
    reading: Reading,
    writing: Writing,
    fail_on: str = "never",
    quiet: bool = False,
    debug: bool = False,
) -> int:
    from logforensics.api import analyze_upload
    from logforensics.errors import InputError
    from logforensics.findings import SEVERITY_ORDER
    from logforensics.headline import with_headlines
    from logforensics.intake import parse_size
    from logforensics.outputs import check_outputs, write_atomically
    from logforensics.report.model import build_upload_report

    target = writing.out or Path(DEFAULT_OUT[writing.output_format])
    css_path = target.with_suffix(".css") if writing.external_css else None
    if css_path is not None and (str(target) == "-" or writing.output_format != "html"):
        raise InputError("--html-assets external needs an HTML report written to a file")
    if writing.events is not None and str(writing.events) == "-":
        raise InputError("--events -: the event table is written to a file, not to stdout")
    outputs = {"--out": target, "--events": writing.events, CSS_OPTION: css_path}
    check_outputs(outputs, path)
    max_bytes = parse_size(reading.max_bytes)
    with _Progress(path, shown=not quiet, lang=writing.lang):
        upload = analyze_upload(
            path,
            attempt=reading.attempt,
            max_bytes=max_bytes,
            rank_from_path=reading.rank_from_path,
        )
    upload = _chosen_job(upload, reading.job, path)
    report = build_upload_report(upload, str(path))
    headed = with_headlines(report, upload.jobs)  # for the Markdown and the summary
    text = _rendered(report, headed, upload, writing, css_path)
    if str(target) == "-":
        _write_stdout(text)
    else:
        write_atomically(target, lambda temporary: temporary.write_text(text, encoding="utf-8"))
    if css_path is not None:
        from logforensics.report.render import stylesheet

        css = stylesheet()
        write_atomically(css_path, lambda temporary: temporary.write_text(css, encoding="utf-8"))
    if writing.events is not None:
        _write_events(upload, writing.events)
    if not quiet:
        written = None if str(target) == "-" else target
        _print_summary(summary_lines(headed, upload, writing.lang, written, writing.events))
    rule_errors = [failure for analysis in upload.jobs for failure in analysis.rule_errors]
    for failure in rule_errors:
        _internal_error(
            _failed_rule(failure), failure, debug, also="the report holds the other rules' findings"
        )
    if rule_errors:
        return EXIT_INTERNAL
    if fail_on == "never":
        return EXIT_OK
    threshold = SEVERITY_ORDER[fail_on]
    worst = max(
        (SEVERITY_ORDER[f.severity] for analysis in upload.jobs for f in analysis.findings),
        default=-1,
    )
    return EXIT_FINDINGS if worst >= threshold else EXIT_OK


def _rendered(
    report: dict[str, Any],
    headed: dict[str, Any],
    upload: Upload,
    writing: Writing,
    css_path: Path | None,
) -> str:
    """The report in its format and language. The Markdown and the page show the verdicts'
    headlines (`headed`); the JSON document is the model as `build_upload_report` makes it."""
    from logforensics.i18n import translated_report

    if writing.output_format == "md":
        from logforensics.report.markdown import render_markdown

        return render_markdown(headed, writing.lang)
    if writing.output_format == "json":
        from logforensics.report.render import render_json

        return render_json(translated_report(report, writing.lang))
    from logforensics.report.render import render_upload_html

    model = translated_report(headed, writing.lang)
    css_href = css_path.name if css_path else None
    return render_upload_html(model, upload, css_href=css_href, lang=writing.lang)


def _write_events(upload: Upload, events_path: Path) -> None:
    import polars as pl

    from logforensics.outputs import write_atomically
    from logforensics.paste_spacing import line_maps, own_numbered_events
    from logforensics.schema import with_marks, write_parquet

    events = pl.concat(
        [
            with_marks(analysis.job.events, analysis.job.marks, analysis.job.mark_writers)
            for analysis in upload.jobs
        ]
    )
    events = own_numbered_events(events, line_maps(upload.inventory.files))
    write_atomically(events_path, lambda temporary: write_parquet(events, str(temporary)))


def _chosen_job(upload: Upload, job: int | None, path: Path) -> Upload:
    """The upload, or only the job `--job` names."""
    if job is None:
        return upload
    from logforensics.errors import InputError

    if not 1 <= job <= len(upload.jobs):
        raise InputError(
            f"{path}: no job {job}", hint=f"the upload holds {len(upload.jobs)} job(s)"
        )
    return replace(upload, jobs=(upload.jobs[job - 1],), unattached=())


def _write_stdout(text: str) -> None:
    from logforensics.errors import InputError

    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except OSError as error:
        raise InputError(f"cannot write the report to stdout: {error.strerror or error}") from None


def _internal_error(what: str, trace: str, debug: bool, also: str = "") -> None:
    """A bug, said in one line; with --debug its traceback first."""
    if debug:
        _say(trace.rstrip("\n"))
    advice = "the traceback is above" if debug else "run again with --debug for the traceback"
    said = "; ".join(part for part in ("a bug in logforensics", also, advice) if part)
    _say(f"forensics: internal error: {what} ({said})")


def _raised(error: BaseException) -> str:
    """`ZeroDivisionError: division by zero`: the type and the first line of the message."""
    lines = str(error).strip().splitlines()
    message = _shortened(lines[0].strip()) if lines else ""
    return f"{type(error).__name__}: {message}" if message else type(error).__name__


def _failed_rule(failure: str) -> str:
    """`rule K failed: ZeroDivisionError: …` from the traceback kept of a failed rule (its
    last exception: the first unindented line after the last traceback header)."""
    heading, _, trace = failure.partition("\n")
    last = trace.rpartition("Traceback (most recent call last):")[2]
    raised = next((line for line in last.splitlines() if line and not line[0].isspace()), "")
    return f"{heading} {_shortened(raised.strip())}".strip()


def _shortened(line: str) -> str:
    return line if len(line) <= MESSAGE_CHARS else line[: MESSAGE_CHARS - 1] + "…"


# --- the summary printed after a run --------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Said:
    """A line of the summary: a label (`verdict:`) and its words."""

    label: str
    text: str
    style: str = ""  # of the label, on a terminal
    indent: int = 0


@dataclass(frozen=True, slots=True)
class FindingRow:
    """An error or warning finding, in one line: severity, kind, ranks, role, first sentence."""

    severity: str  # `error` or `warning`
    severity_words: str  # the same in the summary's language
    kind: str
    ranks: str
    role: str
    text: str
    indent: int = 2


SummaryLine = Said | FindingRow
SEVERITY_STYLES = {"error": "bold red", "warning": "yellow"}
ROLE_WORDS = {"root_cause": "cause", "symptom": "symptom", "context": "context"}
# How a rank was told for lines that name none (`rank_from`), in plain words.
INFERENCE_WORDS = {
    "file_content": "other lines of the same file",
    "path": "the file path",
    "path_local": "the torchrun folder (local rank)",
    "node_offset": "the local rank plus the node's first rank",
    "node_index": "the node index × --nproc_per_node",
    "process": "the process (host and pid) another line ties to a rank",
    "device": "the CUDA device their progress lines name (one node)",
    "world_of_one": "a world of one process",
}
# Why files were skipped, in a few words: the first pattern that fits the reason said.
SKIP_KINDS = (
    ("not a log", r"^not a log"),
    ("over --max-bytes", r"--max-bytes"),
    ("another torchrun attempt", r"^torchrun attempt_"),
    ("a decompression bomb", r"decompression bomb"),
    ("a link", r"\blink\b"),
    ("encrypted", r"^encrypted"),
    ("empty", r"^empty"),
    ("binary", r"^binary"),
    ("unreadable", r"unreadable|not readable"),
    ("corrupt or cut short", r"corrupt|truncated"),
    ("nested too deep", r"nested deeper"),
    ("not a regular file", r"not a regular file|device or fifo"),
)


def summary_lines(
    report: dict[str, Any],
    upload: Upload,
    lang: str = "en",
    target: Path | None = None,
    events_path: Path | None = None,
) -> list[SummaryLine]:
    """What to print after a run: how the input was read, the verdict in one line, every
    error and warning finding in one line each, and where the report was written. `report`
    is the model with the verdicts' headlines (`logforensics.headline.with_headlines`)."""
    from logforensics.i18n import t, translated_report

    said = translated_report(report, lang)
    if said.get("several_jobs"):
        lines = _upload_lines(report, said, upload, lang)
    else:
        lines = _reading_lines(report, lang) + _verdict_lines(said, lang)
    if target is not None:
        lines.append(Said(t("report:", lang), str(target.resolve()), "bold"))
    if events_path is not None:
        lines.append(Said(t("events:", lang), str(events_path.resolve()), "bold"))
    return lines


def _reading_lines(report: dict[str, Any], lang: str) -> list[SummaryLine]:
    """How the input was read: files, lines, ranks; what was skipped and why; restarts,
    ranks told from other lines, bytes that were not UTF-8."""
    from logforensics.i18n import t

    inputs = report["inputs"]
    world = report["world_size"]
    seen = len(inputs["ranks_seen"])
    words = [
        _counted(inputs["files"], "read {count} file", "read {count} files", lang),
        _counted(inputs["lines"], "{count} line", "{count} lines", lang)
        + t(" ({count} not recognised)", lang, count=f"{inputs['unrecognised_lines']:,}"),
    ]
    if inputs.get("dumps"):
        words.append(
            _counted(len(inputs["dumps"]), "{count} stack dump", "{count} stack dumps", lang)
        )
    said = t(", ", lang).join(words) + t("; ", lang)
    said += (
        t("ranks seen: {count} of {world}", lang, count=seen, world=world)
        if world is not None
        else t("ranks seen: {count}", lang, count=seen)
    )
    said += _skipped_words(inputs, lang)
    lines: list[SummaryLine] = [Said("", said)]
    if len(inputs["attempts"]) > 1:
        others = ", ".join(str(n) for n in inputs["attempts"] if n != inputs["attempt"])
        lines.append(
            Said(
                "",
                t(
                    "torchrun restarts: analysed attempt_{attempt}; also found {others} "
                    "(choose with --attempt)",
                    lang,
                    attempt=inputs["attempt"],
                    others=others,
                ),
            )
        )
    if inputs["inferred_ranks"]:
        sources = t("; ", lang).join(
            t(INFERENCE_WORDS.get(how, how), lang)
            + t(" ({text})", lang, text=_rank_words(ranks, lang))
            for how, ranks in inputs["inferred_ranks"].items()
        )
        lines.append(
            Said("", t("lines that name no rank got it from: {sources}", lang, sources=sources))
        )
    if inputs["lossy_files"]:
        lines.append(
            Said(
                "",
                _counted(
                    len(inputs["lossy_files"]),
                    "invalid UTF-8 replaced in {count} file",
                    "invalid UTF-8 replaced in {count} files",
                    lang,
                ),
            )
        )
    return lines


def _skipped_words(inputs: dict[str, Any], lang: str) -> str:
    """`; skipped 3 files (not a log: 2, over --max-bytes: 1)`, or nothing."""
    from collections import Counter

    from logforensics.i18n import t

    total = inputs.get("skipped_total", len(inputs["skipped"]))
    if not total:
        return ""
    kinds = Counter(_skip_kind(skip["reason"]) for skip in inputs["skipped"])
    unlisted = total - len(inputs["skipped"])
    if unlisted > 0:
        kinds["other"] += unlisted
    reasons = t(", ", lang).join(
        t("{reason}: {count}", lang, reason=t(kind, lang), count=f"{count:,}")
        for kind, count in kinds.most_common()
    )
    said = _counted(total, "skipped {count} file", "skipped {count} files", lang)
    return t("; ", lang) + said + t(" ({reasons})", lang, reasons=reasons)


def _skip_kind(reason: str) -> str:
    import re

    return next((kind for kind, pattern in SKIP_KINDS if re.search(pattern, reason)), "other")


def _verdict_lines(report: dict[str, Any], lang: str, indent: int = 0) -> list[SummaryLine]:
    """The verdict's headline and fix, then every error and warning finding."""
    from logforensics.i18n import t

    verdict = report["verdict"]
    lines: list[SummaryLine] = []
    if verdict:
        lines.append(
            Said(t("verdict:", lang), verdict.get("headline") or verdict["summary"], "bold", indent)
        )
        lines.append(Said(t("fix:", lang), verdict["fix"], "bold green", indent))
    else:
        lines.append(Said(t("verdict:", lang), _no_failure(report, lang), "bold", indent))
    return lines + _finding_rows(report, lang, indent + 2)


def _no_failure(report: dict[str, Any], lang: str) -> str:
    from logforensics.headline import NO_FAILURE
    from logforensics.i18n import t

    errors = sum(1 for finding in report["findings"] if finding["severity"] == "error")
    said = t(NO_FAILURE, lang)
    if errors:
        said += t(" ({count} error findings, none a cause)", lang, count=errors)
    return said


def _finding_rows(report: dict[str, Any], lang: str, indent: int) -> list[SummaryLine]:
    from logforensics.i18n import t
    from logforensics.text import first_sentence

    verdict = report["verdict"]
    rows: list[SummaryLine] = []
    for finding in report["findings"]:
        if finding["severity"] not in SEVERITY_STYLES:
            continue
        ranks = finding["blamed"] or finding["ranks"]
        is_verdict = bool(verdict) and finding["id"] == verdict["finding"]
        role = "verdict" if is_verdict else ROLE_WORDS.get(finding["role"], finding["role"])
        rows.append(
            FindingRow(
                finding["severity"],
                t(finding["severity"], lang),
                finding["kind"],
                _rank_words(ranks, lang) if ranks else "",
                t(role, lang),
                # the verdict whole (what its rank logged as it left, say); the rest in brief
                finding["summary"] if is_verdict else first_sentence(finding["summary"]),
                indent,
            )
        )
    return rows


def _upload_lines(
    report: dict[str, Any], said: dict[str, Any], upload: Upload, lang: str
) -> list[SummaryLine]:
    from logforensics.i18n import t

    inputs = report["inputs"]
    lines: list[SummaryLine] = [
        Said(
            "",
            _counted(inputs["files"], "read {count} file", "read {count} files", lang)
            + t(", ", lang)
            + _counted(inputs["lines"], "{count} line", "{count} lines", lang)
            + t(
                ": {count} jobs ({why}), each analysed on its own (pick one with --job N)",
                lang,
                count=len(said["jobs"]),
                why=said["why"],
            )
            + _skipped_words(inputs, lang),
        )
    ]
    for number, job in enumerate(said["jobs"], start=1):
        label = t("job {number} ({label}):", lang, number=number, label=job["job"]["label"])
        verdict = job["verdict"]
        headline = (
            (verdict.get("headline") or verdict["summary"]) if verdict else _no_failure(job, lang)
        )
        lines.append(Said(label, headline, "bold"))
        lines.extend(_finding_rows(job, lang, indent=4))
    if upload.unattached:
        lines.append(Said(t("not attributed to a job:", lang), ", ".join(upload.unattached)))
    return lines


def _counted(count: int, one: str, many: str, lang: str) -> str:
    from logforensics.i18n import t

    return t(one if count == 1 else many, lang, count=f"{count:,}")


def _rank_words(ranks: list[int], lang: str) -> str:
    from logforensics.i18n import t

    if len(ranks) == 1:
        return t("rank {rank}", lang, rank=ranks[0])
    return t("ranks {ranks}", lang, ranks=rank_ranges(ranks))


def plain_summary(lines: list[SummaryLine]) -> str:
    """The summary as plain text (pipes, CI logs): one line each, finding columns aligned."""
    from rich.cells import cell_len

    rows = [line for line in lines if isinstance(line, FindingRow)]
    widths = [
        max((cell_len(column(row)) for row in rows), default=0)
        for column in (
            lambda row: row.severity_words,
            lambda row: row.kind,
            lambda row: row.ranks,
            lambda row: row.role,
        )
    ]
    said = []
    for line in lines:
        if isinstance(line, Said):
            said.append(" " * line.indent + line.label + _gap(line.label) + line.text)
            continue
        cells = (line.severity_words, line.kind, line.ranks, line.role)
        padded = "  ".join(
            cell + " " * (width - cell_len(cell)) for cell, width in zip(cells, widths, strict=True)
        )
        said.append(" " * line.indent + f"{padded}  {line.text}")
    return "\n".join(printable(line) for line in said)


def _gap(label: str) -> str:
    """What goes between a label and its words: a space, none after a full-width colon."""
    return " " if label and not label.endswith("：") else ""


def show_summary(lines: list[SummaryLine], console: Console) -> None:
    """The summary on a terminal: colours (unless NO_COLOR), wrapped to its width, the
    findings as a table whose last column wraps under itself."""
    from rich.table import Table
    from rich.text import Text

    index = 0
    while index < len(lines):
        line = lines[index]
        if isinstance(line, Said):
            text = Text(" " * line.indent)
            if line.label:
                text.append(printable(line.label), style=line.style or "bold")
                text.append(_gap(line.label))
            text.append(printable(line.text))
            console.print(text, overflow="fold")
            index += 1
            continue
        rows = []
        while index < len(lines) and isinstance(lines[index], FindingRow):
            rows.append(lines[index])
            index += 1
        table = Table.grid(padding=(0, 1), pad_edge=False)
        table.add_column(width=rows[0].indent - 1 if rows[0].indent > 1 else None)
        for _ in range(4):
            table.add_column(no_wrap=True)
        table.add_column(ratio=1, overflow="fold")
        for row in rows:
            table.add_row(
                "",
                Text(printable(row.severity_words), style=SEVERITY_STYLES.get(row.severity, "")),
                Text(printable(row.kind), style="cyan"),
                Text(printable(row.ranks)),
                Text(printable(row.role), style="dim"),
                Text(printable(row.text)),
            )
        console.print(table)


def _print_summary(lines: list[SummaryLine]) -> None:
    """On a terminal with rich (colour, wrapped), else plain text."""
    if not _may_be_a_terminal():
        _say(plain_summary(lines))
        return
    from rich.console import Console

    console = Console(stderr=True, highlight=False)
    if console.is_terminal and not console.is_dumb_terminal:
        show_summary(lines, console)
    else:
        _say(plain_summary(lines))


# --- progress -------------------------------------------------------------------------------

PROGRESS_DELAY = 1.0  # seconds before progress is shown: quick runs print nothing


def _may_be_a_terminal() -> bool:
    """Whether rich could take stderr for a terminal: a tty, or the variables that make it say
    so (TTY_COMPATIBLE=1, FORCE_COLOR). Asked first because rich costs a tenth of a second to
    import, which a run into a pipe need not pay."""
    if os.environ.get("TTY_COMPATIBLE") == "1" or os.environ.get("FORCE_COLOR"):
        return True
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):  # replaced by an object without it, or closed
        return False


class _Progress:
    """While the input is read, after a second, on a terminal only (stderr): how many files and
    bytes PATH holds, and how long the run has taken. Gone when the run ends."""

    def __init__(self, path: Path, shown: bool, lang: str, console: Console | None = None) -> None:
        self.path = path
        self.lang = lang
        self.files = 0
        self.bytes = 0
        self.done = threading.Event()
        self.thread: threading.Thread | None = None
        self.console = console if shown and str(path) != "-" else None
        if shown and str(path) != "-" and console is None and _may_be_a_terminal():
            from rich.console import Console

            terminal = Console(stderr=True, highlight=False)
            self.console = (
                terminal if terminal.is_terminal and not terminal.is_dumb_terminal else None
            )

    def __enter__(self) -> _Progress:
        if self.console is not None:
            self.thread = threading.Thread(target=self._run, daemon=True)
            self.thread.start()
        return self

    def __exit__(self, *raised: object) -> None:
        self.done.set()
        if self.thread is not None:
            self.thread.join()

    def _run(self) -> None:
        from rich.live import Live
        from rich.text import Text

        if self.done.wait(PROGRESS_DELAY):
            return
        started = time.monotonic() - PROGRESS_DELAY
        sizes = _file_sizes(self.path)
        with Live(console=self.console, transient=True, refresh_per_second=8) as live:
            while not self.done.is_set():
                until = time.monotonic() + 0.05
                for size in sizes:  # count a slice of the tree, then show the counts
                    self.files += 1
                    self.bytes += size
                    if time.monotonic() > until:
                        break
                live.update(Text(printable(self.words(time.monotonic() - started))))
                self.done.wait(0.1)

    def words(self, seconds: float) -> str:
        from logforensics.i18n import t

        return t(
            "reading {path}: {files} files, {size} ({seconds} s)",
            self.lang,
            path=str(self.path),
            files=f"{self.files:,}",
            size=_size(self.bytes),
            seconds=f"{seconds:.0f}",
        )


def _file_sizes(path: Path) -> Iterator[int]:
    """The size of each file under `path` (a folder, searched as `discover` does, or a file)."""
    try:
        if not path.is_dir():
            yield path.stat().st_size
            return
    except OSError:
        return
    for folder, _, names in os.walk(path):
        for name in names:
            try:
                yield os.stat(os.path.join(folder, name), follow_symlinks=False).st_size
            except OSError:
                continue


def _size(count: int) -> str:
    """`512 B`, `3.2 MB`, `41 GB`."""
    size = float(count)
    for unit in ("B", "kB", "MB", "GB"):
        if size < 1000:
            return f"{size:.0f} {unit}" if unit == "B" or size >= 10 else f"{size:.1f} {unit}"
        size /= 1000
    return f"{size:,.1f} TB"


# --- listings -------------------------------------------------------------------------------


@app.command("rules", cls=_Command)
def list_rules() -> None:
    """List the diagnoses the analyzer runs: each finding kind and what it looks for."""
    from logforensics.registry import rules

    _print_documented((rule.kind, rule.check) for rule in rules())


@app.command("parsers", cls=_Command)
def list_parsers() -> None:
    """List the log families the analyzer reads: each parser and what it recognises."""
    from logforensics.registry import parsers

    _print_documented((parser.name, parser.parse) for parser in parsers())


def _print_documented(entries: Iterable[tuple[str, Callable[..., object]]]) -> None:
    """Each name with the first paragraph of its module's docstring (the user docs)."""
    for name, function in entries:
        doc = (sys.modules[function.__module__].__doc__ or "").strip()
        _say(f"{name}\n    {first_paragraph(doc)}\n", err=False)


def first_paragraph(doc: str) -> str:
    """A docstring's first paragraph on one line. A paragraph that ends with a colon
    introduces the example lines after it: its last sentence, which says so, is left out
    (or, alone, ends with a full stop)."""
    import re

    paragraph = " ".join(doc.split("\n\n")[0].split())
    if not paragraph.endswith(":"):
        return paragraph
    sentences = re.split(r"(?<=[.)])\s+(?=[A-Z`])", paragraph)
    if len(sentences) > 1:
        return " ".join(sentences[:-1])
    return paragraph[:-1] + "."


def _say(text: str, err: bool = True) -> None:
    """Print for a person. Log text is quoted in summaries and errors: its control sequences
    (set the title, write the clipboard) must not reach the terminal."""
    typer.echo(printable(text), err=err)


def _exit_on_sigterm(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)


def main() -> None:
    # `timeout` and CI cancellations send SIGTERM: leave through Python, so that a file being
    # written is removed rather than left half-written beside the report
    signal.signal(signal.SIGTERM, _exit_on_sigterm)
    app()
