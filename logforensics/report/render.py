"""Render the report model as JSON, or as one self-contained HTML file (no network, no JS)."""

from __future__ import annotations

import hashlib
import json
import re
from datetime import UTC, datetime
from importlib import resources
from typing import Any

from markupsafe import Markup, escape

from logforensics.api import Analysis, Upload
from logforensics.report.picture import FILL, build_picture, build_rank_map
from logforensics.text import rank_ranges


def render_json(report: dict[str, Any]) -> str:
    """The report as JSON, laid out for reading down to the second level (a finding, a rank
    per line) and compact below it: the indenting encoder is pure Python and slow on the
    per-rank tables of a large job, the compact one is not."""
    return _layered(report, 0) + "\n"


LAYERED_DEPTH = 2


def _layered(value: Any, depth: int) -> str:
    if depth >= LAYERED_DEPTH or not isinstance(value, dict | list) or not value:
        return json.dumps(value, ensure_ascii=False)
    pad, inner = "  " * depth, "  " * (depth + 1)
    if isinstance(value, dict):
        items = [
            f"{inner}{json.dumps(str(key), ensure_ascii=False)}: {_layered(item, depth + 1)}"
            for key, item in value.items()
        ]
        return "{\n" + ",\n".join(items) + f"\n{pad}}}"
    items = [f"{inner}{_layered(item, depth + 1)}" for item in value]
    return "[\n" + ",\n".join(items) + f"\n{pad}]"


def render_html(
    report: dict[str, Any],
    analysis: Analysis,
    generated_at: datetime | None = None,
    css_href: str | None = None,
) -> str:
    """The page of one job; with `css_href` the style sheet is linked instead of inlined (for
    viewers whose Content-Security-Policy blocks inline CSS, such as Jenkins by default)."""
    return _render(report, None, [_job_context(report, analysis, "")], generated_at, css_href)


def render_upload_html(
    report: dict[str, Any],
    upload: Upload,
    generated_at: datetime | None = None,
    css_href: str | None = None,
) -> str:
    """The page of an upload: one job's page, or an overview and a section per job."""
    if not upload.several:
        return render_html(report, upload.jobs[0], generated_at, css_href)
    contexts = [
        _job_context(job_report, analysis, f"j{number}-")
        for number, (job_report, analysis) in enumerate(
            zip(report["jobs"], upload.jobs, strict=True), start=1
        )
    ]
    return _render(report, report, contexts, generated_at, css_href)


# How each part of the causal chain is labelled where the verdict draws it.
CHAIN_WORDS = {
    "explanation": "why",
    "departure": "where it left the path",
    "consequence": "what followed",
    "context": "context",
}


def _job_context(report: dict[str, Any], analysis: Analysis, prefix: str) -> dict[str, Any]:
    """What the page needs of one job besides its report: its pictures and capped tables."""
    return {
        "prefix": prefix,
        "picture": build_picture(analysis.job.progress) if analysis.job.progress else None,
        "rank_map": build_rank_map(
            report["findings"],
            report["inputs"]["ranks_seen"],
            report["world_size"],
            report["verdict"]["ranks"] if report["verdict"] else [],
        ),
        "ranks_shown": _ranks_shown(report),
        "files_shown": report["inputs"]["file_list"][:MAX_FILE_ROWS],
        "by_id": {finding["id"]: finding for finding in report["findings"]},
        "chain_words": CHAIN_WORDS,
    }


def _render(
    report: dict[str, Any],
    upload: dict[str, Any] | None,
    contexts: list[dict[str, Any]],
    generated_at: datetime | None,
    css_href: str | None,
) -> str:
    import jinja2  # only the HTML report needs it: JSON runs start faster without

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("logforensics", "report/templates"),
        autoescape=True,  # every byte of log text on the page is untrusted
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
    )
    env.filters["evidence_id"] = evidence_id
    env.filters["inline_code"] = inline_code
    env.filters["rank_ranges"] = rank_ranges
    env.filters["clip"] = clip
    moment = generated_at or datetime.now(UTC)
    return env.get_template("report.html.j2").render(
        report=report,
        upload=upload,
        contexts=contexts,
        fill=FILL,
        generated_at=moment.strftime("%Y-%m-%d %H:%M:%S UTC"),
        # machine-readable findings ride along; the full document is `--format json`
        embedded_json=_script_safe_json(_embedded(report)),
        css=Markup(stylesheet()),  # our own file, not log text
        css_href=css_href,
    )


# The page stays readable and small for thousands of ranks; the JSON report keeps every row.
MAX_RANK_ROWS = 256
MAX_FILE_ROWS = 500


def _ranks_shown(report: dict[str, Any]) -> list[dict[str, Any]]:
    """The ranks a cause or symptom names first, then the others in order, up to
    MAX_RANK_ROWS (context findings such as the last common stage name nearly everyone)."""
    ranks = report["ranks"]
    if len(ranks) <= MAX_RANK_ROWS:
        return ranks
    named = {
        rank
        for finding in report["findings"]
        if finding["role"] != "context"
        for rank in (*finding["ranks"], *finding["culprit_ranks"])
    }
    keep = {row["rank"] for row in ranks if row["rank"] in named}
    for row in ranks:
        if len(keep) >= MAX_RANK_ROWS:
            break
        keep.add(row["rank"])
    return [row for row in ranks if row["rank"] in keep]


def stylesheet() -> str:
    """The report's CSS."""
    return (resources.files("logforensics") / "report" / "templates" / "report.css").read_text()


def evidence_id(evidence: dict[str, Any]) -> str:
    """A stable fragment for an evidence line; raw paths make awkward fragments."""
    digest = hashlib.sha1(evidence["file"].encode(), usedforsecurity=False).hexdigest()[:8]
    return f"ev-{digest}-{evidence['line']}"


# A log line longer than this is cut on the page (the JSON report keeps it whole).
MAX_LINE_CHARS = 1200


def clip(text: str | None) -> str:
    """The line, or its start and how much was cut."""
    if text is None or len(text) <= MAX_LINE_CHARS:
        return text or ""
    return f"{text[:MAX_LINE_CHARS]} … ({len(text) - MAX_LINE_CHARS:,} more characters)"


def inline_code(text: str) -> Markup:
    """Escape, then show `backticked` spans as code (our own fix texts use them)."""
    escaped = str(escape(text))
    return Markup(re.sub(r"`([^`]+)`", r"<code>\1</code>", escaped))  # noqa: S704 - escaped


def _embedded(report: dict[str, Any]) -> dict[str, Any]:
    """The verdict and findings for scripts reading the page, lines cut like on the page."""
    if "jobs" in report:
        return {
            "schema": report["schema"],
            "several_jobs": True,
            "jobs": [_embedded(job) for job in report["jobs"]],
        }
    findings = [
        {**finding, "evidence": [{**e, "text": clip(e["text"])} for e in finding["evidence"]]}
        for finding in report["findings"]
    ]
    return {
        "schema": report["schema"],
        "world_size": report["world_size"],
        "verdict": report["verdict"],
        "findings": findings,
    }


def _script_safe_json(report: dict[str, Any]) -> Markup:
    """JSON that cannot close its <script> element or break a JS string (Lighthouse's rule)."""
    text = json.dumps(report, ensure_ascii=False)
    text = text.replace("<", "\\u003c").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    return Markup(text)  # noqa: S704 - made safe just above
