"""`forensics`: the command line. Parses options, calls the library, maps errors to exit codes.

Exit codes: 0 analysis completed (whatever it found, unless --fail-on says otherwise);
1 findings at or above --fail-on; 2 usage or input error; 3 internal error (a bug).
"""

from __future__ import annotations

import sys
import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from logforensics import __version__
from logforensics.errors import LogForensicsError
from logforensics.text import rank_ranges

if TYPE_CHECKING:
    from logforensics.api import Analysis

EXIT_OK, EXIT_FINDINGS, EXIT_INPUT, EXIT_INTERNAL = 0, 1, 2, 3
DEFAULT_HTML = "forensics-report.html"
DEFAULT_JSON = "forensics-report.json"
DEFAULT_MAX_BYTES = "4G"

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

        typer.echo(f"logforensics {__version__} (polars {polars.__version__})")
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
    rank_from_path: Annotated[
        str | None,
        typer.Option(
            "--rank-from-path",
            metavar="REGEX",
            help=r"Read each file's rank from its path with this regex (a named group 'rank', "
            r"e.g. 'gpu(?P<rank>\d+)\.txt$'), before the built-in path shapes.",
        ),
    ] = None,
) -> None:
    """Analyse the logs under PATH and write a report (HTML by default)."""
    try:
        reading = Reading(attempt, max_bytes, rank_from_path)
        external_css = html_assets is HtmlAssets.external
        code = _analyze(path, reading, output_format, out, events, fail_on, quiet, external_css)
    except LogForensicsError as error:
        hint = f" ({error.hint})" if error.hint else ""
        typer.echo(f"forensics: error: {error}{hint}", err=True)
        raise typer.Exit(EXIT_INPUT) from None
    except typer.Exit:
        raise
    except Exception:  # a bug: say so, keep the traceback for the bug report
        traceback.print_exc(file=sys.stderr)
        typer.echo(
            "forensics: internal error (this is a bug in logforensics; the traceback above "
            "helps fix it)",
            err=True,
        )
        raise typer.Exit(EXIT_INTERNAL) from None
    raise typer.Exit(code)


@dataclass(frozen=True, slots=True)
class Reading:
    """How to read PATH: the options passed on to `logforensics.api.analyze`."""

    attempt: int | None
    max_bytes: str
    rank_from_path: str | None


def _analyze(
    path: Path,
    reading: Reading,
    output_format: OutputFormat,
    out: Path | None,
    events_path: Path | None,
    fail_on: FailOn,
    quiet: bool,
    external_css: bool = False,
) -> int:
    from logforensics.api import analyze as run_analysis
    from logforensics.errors import InputError
    from logforensics.findings import SEVERITY_ORDER
    from logforensics.report.model import build_report
    from logforensics.report.render import render_html, render_json, stylesheet
    from logforensics.schema import write_parquet

    target = out or Path(DEFAULT_HTML if output_format is OutputFormat.html else DEFAULT_JSON)
    css_path = target.with_suffix(".css") if external_css else None
    if css_path is not None and (str(target) == "-" or output_format is OutputFormat.json):
        raise InputError("--html-assets external needs an HTML report written to a file")
    for written in (target, events_path, css_path):
        if written is not None and str(written) != "-":
            _refuse_writing_into_input(path, written)
    from logforensics.intake import parse_size

    analysis = run_analysis(
        path,
        attempt=reading.attempt,
        max_bytes=parse_size(reading.max_bytes),
        rank_from_path=reading.rank_from_path,
    )
    report = build_report(analysis, str(path))
    if output_format is OutputFormat.json:
        text = render_json(report)
    else:
        text = render_html(report, analysis, css_href=css_path.name if css_path else None)
    try:
        if str(target) == "-":
            sys.stdout.write(text)
        else:
            target.write_text(text, encoding="utf-8")
        if css_path is not None:
            css_path.write_text(stylesheet(), encoding="utf-8")
        if events_path is not None:
            write_parquet(analysis.job.events, str(events_path))
    except OSError as error:
        raise InputError(f"cannot write {error.filename or target}: {error.strerror}") from None
    if not quiet:
        _print_summary(report, analysis, None if str(target) == "-" else target, events_path)
    if analysis.rule_errors:
        for failure in analysis.rule_errors:
            typer.echo(failure, err=True)
        typer.echo(
            f"forensics: internal error in {len(analysis.rule_errors)} rule(s) (a bug in "
            "logforensics; the report holds the other rules' findings)",
            err=True,
        )
        return EXIT_INTERNAL
    if fail_on is FailOn.never:
        return EXIT_OK
    threshold = SEVERITY_ORDER[fail_on.value]
    worst = max((SEVERITY_ORDER[f["severity"]] for f in report["findings"]), default=-1)
    return EXIT_FINDINGS if worst >= threshold else EXIT_OK


def _refuse_writing_into_input(input_path: Path, output: Path) -> None:
    from logforensics.errors import InputError

    resolved_input = input_path.resolve()
    resolved_output = output.resolve()
    if resolved_output == resolved_input or (
        resolved_input.is_dir() and resolved_input in resolved_output.parents
    ):
        raise InputError(
            f"{output}: refusing to write inside the input {input_path}",
            hint="pass --out with a path outside the logs",
        )


def _print_summary(
    report: dict, analysis: Analysis, target: Path | None, events_path: Path | None
) -> None:
    inputs = report["inputs"]
    lines = [
        f"read {inputs['files']} files, {inputs['lines']} lines "
        f"({inputs['unrecognised_lines']} not recognised), ranks seen: {len(inputs['ranks_seen'])}"
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
            "verdict: no root cause found" + (f" ({errors} error findings)" if errors else "")
        )
    if target is not None:
        lines.append(f"report: {target}")
    if events_path is not None:
        lines.append(f"events: {events_path}")
    typer.echo("\n".join(lines), err=True)


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
}


def _print_documented(entries: Iterable[tuple[str, Callable[..., object]]]) -> None:
    """Each name with the first paragraph of its module's docstring (the user docs)."""
    for name, function in entries:
        doc = (sys.modules[function.__module__].__doc__ or "").strip()
        typer.echo(f"{name}\n    {' '.join(doc.split(chr(10) * 2)[0].split())}\n")


def main() -> None:
    app()
