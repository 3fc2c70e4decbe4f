"""`forensics`: the command line. Parses options, calls the library, maps errors to exit codes.

Exit codes: 0 analysis completed (whatever it found, unless --fail-on says otherwise);
1 findings at or above --fail-on; 2 usage or input error; 3 internal error (a bug).
"""

from __future__ import annotations

import signal
import sys
import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from logforensics import __version__
from logforensics.errors import LogForensicsError
from logforensics.terminal import printable
from logforensics.text import rank_ranges

if TYPE_CHECKING:
    from logforensics.api import Analysis, Upload

EXIT_OK, EXIT_FINDINGS, EXIT_INPUT, EXIT_INTERNAL = 0, 1, 2, 3
DEFAULT_HTML = "forensics-report.html"
DEFAULT_JSON = "forensics-report.json"
DEFAULT_MAX_BYTES = "4G"
MESSAGE_CHARS = 300  # of an internal error's message, on its one line
CSS_OPTION = "the stylesheet of --html-assets external"  # how errors name the CSS file

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    help="Tell why a multi-rank PyTorch job hung, from its logs alone.",
)


class OutputFormat(StrEnum):
    html = "html"
    json = "json"


class HtmlAssets(StrEnum):
    inline = "inline"
    external = "external"


class FailOn(StrEnum):
    never = "never"
    error = "error"
    warning = "warning"


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


@app.command()
def analyze(
    path: Annotated[
        Path,
        typer.Argument(
            help="A folder of logs (searched recursively), one file, an archive (.tar, .tar.gz, "
            ".tar.zst, .zip), or '-' for standard input (plain or compressed).",
        ),
    ],
    output_format: Annotated[
        OutputFormat, typer.Option("--format", "-f", help="Report format.")
    ] = OutputFormat.html,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            "-o",
            help=f"Where to write the report ('-' for stdout). Default: ./{DEFAULT_HTML} "
            f"or ./{DEFAULT_JSON}.",
        ),
    ] = None,
    events: Annotated[
        Path | None, typer.Option("--events", help="Also write the event table as Parquet.")
    ] = None,
    fail_on: Annotated[
        FailOn,
        typer.Option("--fail-on", help="Exit 1 when findings of this severity or worse exist."),
    ] = FailOn.never,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Print nothing but errors.")] = False,
    html_assets: Annotated[
        HtmlAssets,
        typer.Option(
            "--html-assets",
            help="'external' writes the CSS next to the report and links it, for viewers "
            "whose Content-Security-Policy blocks inline CSS (Jenkins' default).",
        ),
    ] = HtmlAssets.inline,
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
        reading = Reading(attempt, max_bytes, rank_from_path, job)
        external_css = html_assets is HtmlAssets.external
        code = _analyze(
            path, reading, output_format, out, events, fail_on, quiet, external_css, debug
        )
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


@dataclass(frozen=True, slots=True)
class Reading:
    """How to read PATH: the options passed on to `logforensics.api.analyze`."""

    attempt: int | None
    max_bytes: str
    rank_from_path: str | None
    job: int | None = None


def _analyze(
    path: Path,
    reading: Reading,
    output_format: OutputFormat,
    out: Path | None,
    events_path: Path | None,
    fail_on: FailOn,
    quiet: bool,
    external_css: bool = False,
    debug: bool = False,
) -> int:
    from logforensics.api import analyze_upload
    from logforensics.errors import InputError
    from logforensics.findings import SEVERITY_ORDER
    from logforensics.outputs import check_outputs, write_atomically
    from logforensics.report.model import build_upload_report
    from logforensics.report.render import render_json, render_upload_html, stylesheet
    from logforensics.schema import with_marks, write_parquet

    target = out or Path(DEFAULT_HTML if output_format is OutputFormat.html else DEFAULT_JSON)
    css_path = target.with_suffix(".css") if external_css else None
    if css_path is not None and (str(target) == "-" or output_format is OutputFormat.json):
        raise InputError("--html-assets external needs an HTML report written to a file")
    if events_path is not None and str(events_path) == "-":
        raise InputError("--events -: the event table is written to a file, not to stdout")
    outputs = {"--out": target, "--events": events_path, CSS_OPTION: css_path}
    check_outputs(outputs, path)
    from logforensics.intake import parse_size

    upload = analyze_upload(
        path,
        attempt=reading.attempt,
        max_bytes=parse_size(reading.max_bytes),
        rank_from_path=reading.rank_from_path,
    )
    upload = _chosen_job(upload, reading.job, path)
    report = build_upload_report(upload, str(path))
    if output_format is OutputFormat.json:
        text = render_json(report)
    else:
        text = render_upload_html(report, upload, css_href=css_path.name if css_path else None)
    if str(target) == "-":
        _write_stdout(text)
    else:
        write_atomically(target, lambda temporary: temporary.write_text(text, encoding="utf-8"))
    if css_path is not None:
        css = stylesheet()
        write_atomically(css_path, lambda temporary: temporary.write_text(css, encoding="utf-8"))
    if events_path is not None:
        import polars as pl

        events = pl.concat(
            [
                with_marks(analysis.job.events, analysis.job.marks, analysis.job.mark_writers)
                for analysis in upload.jobs
            ]
        )
        write_atomically(events_path, lambda temporary: write_parquet(events, str(temporary)))
    if not quiet:
        written = None if str(target) == "-" else target
        _print_summary(report, upload, written, events_path)
    rule_errors = [failure for analysis in upload.jobs for failure in analysis.rule_errors]
    for failure in rule_errors:
        _internal_error(
            _failed_rule(failure), failure, debug, also="the report holds the other rules' findings"
        )
    if rule_errors:
        return EXIT_INTERNAL
    if fail_on is FailOn.never:
        return EXIT_OK
    threshold = SEVERITY_ORDER[fail_on.value]
    worst = max(
        (SEVERITY_ORDER[f.severity] for analysis in upload.jobs for f in analysis.findings),
        default=-1,
    )
    return EXIT_FINDINGS if worst >= threshold else EXIT_OK


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


def _print_summary(
    report: dict, upload: Upload, target: Path | None, events_path: Path | None
) -> None:
    if upload.several:
        lines = _several_jobs_summary(report, upload)
    else:
        lines = _job_summary(report, upload.jobs[0])
    if target is not None:
        lines.append(f"report: {target.resolve()}")
    if events_path is not None:
        lines.append(f"events: {events_path.resolve()}")
    _say("\n".join(lines))


def _job_summary(report: dict, analysis: Analysis) -> list[str]:
    inputs = report["inputs"]
    files = inputs["files"]
    lines = [
        f"read {files} file{'s' if files != 1 else ''}, {inputs['lines']:,} lines "
        f"({inputs['unrecognised_lines']:,} not recognised), "
        f"ranks seen: {len(inputs['ranks_seen'])}"
        + (f" of {report['world_size']}" if report["world_size"] is not None else "")
        + (f"; {len(inputs['skipped'])} files skipped" if inputs["skipped"] else "")
    ]
    lines.extend(_reading_notes(analysis))
    verdict = report["verdict"]
    if verdict:
        lines.append(f"verdict: {verdict['kind']} — {verdict['summary']}")
        lines.append(f"fix: {verdict['fix']}")
    else:
        errors = sum(1 for f in report["findings"] if f["severity"] == "error")
        lines.append(
            "verdict: no failure found"
            + (f" ({errors} error findings, none a cause)" if errors else "")
        )
    lines.extend(_other_findings(analysis))
    return lines


def _other_findings(analysis: Analysis) -> list[str]:
    """Every independent cause and every warning, one line each: what the verdict does not
    say and the reader must not miss."""
    verdict = analysis.verdict
    independent = {id(f) for f in verdict.independent} if verdict else set()
    in_chain = {id(f) for f in verdict.chain} if verdict else set()
    lines = []
    for finding in analysis.findings:
        if id(finding) in independent:
            lines.append(f"also: {finding.kind} — {finding.summary}")
        elif finding.severity == "warning" and id(finding) not in in_chain:
            lines.append(f"warning: {finding.kind} — {finding.summary}")
    return lines


def _several_jobs_summary(report: dict, upload: Upload) -> list[str]:
    inputs = report["inputs"]
    lines = [
        f"read {inputs['files']} files, {inputs['lines']:,} lines: {len(upload.jobs)} jobs "
        f"({upload.why}), each analysed on its own (one with --job N)"
    ]
    for number, analysis in enumerate(upload.jobs, start=1):
        verdict = analysis.verdict
        said = (
            f"{verdict.finding.kind} — {verdict.finding.summary}" if verdict else "no failure found"
        )
        lines.append(f"job {number} ({analysis.label}): {said}")
    if upload.unattached:
        lines.append(f"not attributed to a job: {', '.join(upload.unattached)}")
    return lines


def _reading_notes(analysis: Analysis) -> list[str]:
    """What the user should know about how the input was read: restarts, inferred ranks."""
    notes = []
    inventory = analysis.job.inventory
    if len(inventory.attempts) > 1:
        others = ", ".join(str(n) for n in inventory.attempts if n != inventory.attempt)
        notes.append(
            f"torchrun restarts: analysed attempt_{inventory.attempt}; also found {others} "
            "(choose with --attempt)"
        )
    inferred = "; ".join(
        f"{rank_ranges(ranks)} by {INFERENCE_WORDS.get(source, source)}"
        for source, ranks in analysis.inferred_ranks.items()
    )
    if inferred:
        notes.append(f"ranks inferred for lines that do not state one: {inferred}")
    if analysis.lossy_files:
        notes.append(f"invalid UTF-8 replaced in {len(analysis.lossy_files)} files")
    return notes


@app.command("rules")
def list_rules() -> None:
    """List the diagnoses the analyzer runs: each finding kind and what it looks for."""
    from logforensics.registry import rules

    _print_documented((rule.kind, rule.check) for rule in rules())


@app.command("parsers")
def list_parsers() -> None:
    """List the log families the analyzer reads: each parser and what it recognises."""
    from logforensics.registry import parsers

    _print_documented((parser.name, parser.parse) for parser in parsers())


# How `rank_from` reads in a sentence.
INFERENCE_WORDS = {
    "file_content": "the rest of their file",
    "path": "file path",
    "path_local": "torchrun folder",
    "node_offset": "node offset",
    "node_index": "node index × --nproc_per_node",
    "process": "NCCL host and pid",
    "device": "the CUDA device their progress lines name (one node)",
}


def _print_documented(entries: Iterable[tuple[str, Callable[..., object]]]) -> None:
    """Each name with the first paragraph of its module's docstring (the user docs)."""
    for name, function in entries:
        doc = (sys.modules[function.__module__].__doc__ or "").strip()
        _say(f"{name}\n    {' '.join(doc.split(chr(10) * 2)[0].split())}\n", err=False)


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
