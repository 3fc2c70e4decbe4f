"""Render the report model as JSON, or as one self-contained HTML file (no network, no JS).

The page speaks the language it is asked for: the model comes translated
(`logforensics.i18n.translated_report`), and the page's own words (the templates' `t(...)`, the
labels and notes built here and in `picture`) are looked up in the catalogue's `ui` table.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from datetime import UTC, datetime
from functools import partial
from importlib import resources
from typing import Any

import polars as pl
from markupsafe import Markup, escape

from logforensics.api import Analysis, Upload
from logforensics.i18n import ENGLISH, t, translate, translator
from logforensics.registry import diagnosis
from logforensics.report.markdown import no_verdict_said
from logforensics.report.picture import (
    FILL,
    Say,
    build_flight_grid,
    build_picture,
    build_rank_map,
)
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
    lang: str = ENGLISH,
) -> str:
    """The page of one job; with `css_href` the style sheet is linked instead of inlined (for
    viewers whose Content-Security-Policy blocks inline CSS, such as Jenkins by default). The
    page's own words are in `lang`; `report` comes already translated."""
    context = _job_context(report, analysis, "", translator(lang))
    return _render(report, None, [context], generated_at, css_href, lang)


def render_upload_html(
    report: dict[str, Any],
    upload: Upload,
    generated_at: datetime | None = None,
    css_href: str | None = None,
    lang: str = ENGLISH,
) -> str:
    """The page of an upload: one job's page, or an overview and a section per job."""
    if not upload.several:
        return render_html(report, upload.jobs[0], generated_at, css_href, lang)
    say = translator(lang)
    contexts = [
        _job_context(job_report, analysis, f"j{number}-", say)
        for number, (job_report, analysis) in enumerate(
            zip(report["jobs"], upload.jobs, strict=True), start=1
        )
    ]
    return _render(report, report, contexts, generated_at, css_href, lang)


# How each part of the causal chain is labelled where the verdict draws it.
CHAIN_WORDS = {
    "explanation": "why",
    "departure": "where it left the path",
    "consequence": "what followed",
    "context": "context",
}


def _job_context(
    report: dict[str, Any], analysis: Analysis, prefix: str, say: Say
) -> dict[str, Any]:
    """What the page needs of one job besides its report: its pictures and capped tables,
    their words in the language of `say`."""
    timeline, timeline_note = _timeline(report, analysis, say)
    progress = analysis.job.progress
    return {
        "prefix": prefix,
        "in_upload": bool(prefix),  # one job of several: its headline is not the page's
        "headline": headline_of(report, say),
        "timeline": timeline,
        "timeline_note": timeline_note,
        "picture": build_picture(progress, say) if progress else None,
        "flight": build_flight_grid(analysis.job.dumps.flight, _first_fr_seq(report), say),
        "rank_map": build_rank_map(
            report["findings"],
            report["inputs"]["ranks_seen"],
            report["world_size"],
            report["verdict"]["ranks"] if report["verdict"] else [],
            say,
            report["verdict"]["finding"] if report["verdict"] else None,
        ),
        "ranks_shown": _ranks_shown(report),
        "rank_groups": _rank_groups(report) if len(report["ranks"]) > MAX_RANK_ROWS else [],
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
    lang: str,
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
    say = translator(lang)
    env.filters["clip"] = partial(clip, say=say)
    env.filters["collapsed"] = collapsed
    # words the analyzer wrote that the model does not carry translated (a rank's stack)
    env.filters["translated"] = partial(translate, lang=lang)
    env.globals["t"] = page_translator(lang)
    env.globals["no_verdict_said"] = no_verdict_said
    moment = generated_at or datetime.now(UTC)
    return env.get_template("report.html.j2").render(
        html_lang=HTML_LANG.get(lang, lang),
        page_title=_page_title(report, upload, say),
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


# The `<html lang>` of a page in each language (the script for Chinese: it picks the fonts).
HTML_LANG = {"zh": "zh-Hans"}
# What the catalogue's own text needs escaped in a page (in text and in double-quoted
# attributes); an apostrophe stays one, as it was when the words were the template's.
PAGE_TEXT_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"})


def page_translator(lang: str) -> Callable[..., Markup]:
    """`t` for the templates (`{{ t("Findings ({count})", count=n) }}`): the fixed string in
    `lang`, as markup whose values are escaped like any `{{ value }}` (markup values, such as
    `"<code>--events</code>" | safe`, stay markup)."""
    say = translator(lang)

    def bound(text: str, /, **values: object) -> Markup:
        words = Markup(say(text).translate(PAGE_TEXT_ESCAPES))  # noqa: S704 - escaped
        return words.format(**values) if values else words

    return bound


# The page stays readable and small for thousands of ranks; the JSON report keeps every row.
MAX_RANK_ROWS = 32  # a larger job shows its ranks in groups
MAX_FILE_ROWS = 100


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


def _rank_groups(report: dict[str, Any]) -> list[dict[str, Any]]:
    """For a job too large for a row per rank: the ranks grouped by where they stopped
    (last step and stage) and how the findings name them, `dshbak -c` style, the odd groups
    first; each with its hosts and one member's last line."""
    role_of: dict[int, str] = {}
    for finding in report["findings"]:
        if finding["role"] in ("root_cause", "symptom"):
            for rank in (*finding["ranks"], *finding["culprit_ranks"]):
                role_of.setdefault(rank, finding["role"].replace("_", " "))
    groups: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for row in report["ranks"]:
        key = (row["last_step"], row["last_stage"], role_of.get(row["rank"]))
        groups.setdefault(key, []).append(row)
    shown = []
    for (step, stage, role), rows in sorted(groups.items(), key=lambda item: len(item[1])):
        hosts = sorted({row["host"] for row in rows if row["host"]})
        example = rows[0]
        shown.append(
            {
                "ranks": rank_ranges([row["rank"] for row in rows]),
                "count": len(rows),
                "last_step": step,
                "last_stage": stage,
                "role": role,
                "hosts": len(hosts),
                "host_examples": hosts[:3],
                "example_rank": example["rank"],
                "example_line": example["last_line"],
            }
        )
    return shown[:MAX_RANK_GROUPS]


MAX_RANK_GROUPS = 64


def stylesheet() -> str:
    """The report's CSS."""
    return (resources.files("logforensics") / "report" / "templates" / "report.css").read_text()


def evidence_id(evidence: dict[str, Any]) -> str:
    """A stable fragment for an evidence line; raw paths make awkward fragments."""
    digest = hashlib.sha1(evidence["file"].encode(), usedforsecurity=False).hexdigest()[:8]
    return f"ev-{digest}-{evidence['line']}"


# A log line longer than this is cut on the page (the JSON report keeps it whole).
MAX_LINE_CHARS = 1200


def clip(text: str | None, say: Say = t) -> str:
    """The line, or its start and how much was cut."""
    if text is None or len(text) <= MAX_LINE_CHARS:
        return text or ""
    more = say(" … ({count} more characters)", count=f"{len(text) - MAX_LINE_CHARS:,}")
    return text[:MAX_LINE_CHARS] + more


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
    # the details (long rank lists on a large job) stay in the JSON report
    findings = [
        {
            **{key: value for key, value in finding.items() if key != "details"},
            "evidence": [{**e, "text": clip(e["text"])} for e in finding["evidence"]],
        }
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


def headline_of(report: dict[str, Any], say: Say = t) -> str:
    """The verdict in one line of plain words (the reasoner's headline when it gives one)."""
    verdict = report["verdict"]
    if verdict is None:
        return say("No failure found")
    if verdict.get("headline"):
        return str(verdict["headline"])
    ranks = verdict["ranks"]
    who = (
        say("Rank {rank}", rank=ranks[0])
        if len(ranks) == 1
        else say("Ranks {ranks}", ranks=rank_ranges(ranks))
        if ranks
        else say("The job")
    )
    kind = verdict["kind"]
    what = say(KIND_WORDS[kind]) if kind in KIND_WORDS else kind.replace("_", " ")
    return say("{who} {what}, {where}", who=who, what=what, where=verdict["where"])


# What a verdict of each kind says its ranks did, for the headline and the page title.
KIND_WORDS = {
    "stage_divergence": "left the common path",
    "loader_size_mismatch": "ran out of batches before the others",
    "duplicate_device": "shared one GPU",
    "missing_rank": "stopped without a word",
    "collective_mismatch": "called a different collective",
    "collective_timeout": "timed out in a collective",
    "monitored_barrier": "did not reach the barrier",
    "rank_exception": "raised an exception",
    "reducer_error": "hit a DDP reducer error",
    "nccl_error": "hit an NCCL error",
    "oom": "ran out of memory",
}


def _page_title(report: dict[str, Any], upload: dict[str, Any] | None, say: Say) -> str:
    if upload is not None:
        return say("{count} jobs in one upload", count=len(upload["jobs"]))
    return headline_of(report, say)


# Findings whose claim is in their evidence's numbers (one rank's 7 batches against the others'
# 6, a shape or a sequence number that differs): their lines are never folded together.
NUMBERS_ARE_THE_CLAIM = ("loader_size_mismatch", "collective_mismatch")


def collapsed(finding: dict[str, Any]) -> list[dict[str, Any]]:
    """A finding's evidence lines that say the same from different ranks (numbers aside) as one
    line with the ranks that printed it; the JSON report keeps every line."""
    evidence: list[dict[str, Any]] = finding["evidence"]
    if finding.get("kind") in NUMBERS_ARE_THE_CLAIM:
        return [{"evidence": line, "others": 0, "ranks": ""} for line in evidence]
    groups: dict[str, dict[str, Any]] = {}
    for line in evidence:
        said = re.sub(r"\d+", "#", line["text"] or "")
        group = groups.get(said)
        if group is None or line["rank"] is None or line["rank"] in group["all_ranks"]:
            groups[f"{said}\0{len(groups)}" if group is not None else said] = {
                "evidence": line,
                "all_ranks": {line["rank"]},
                "others": 0,
            }
            continue
        group["all_ranks"].add(line["rank"])
        group["others"] += 1
    shown = []
    for group in groups.values():
        if 0 < group["others"] < 2:  # two lines read better as two lines
            shown.append({"evidence": group["evidence"], "others": 0, "ranks": ""})
            continue
        others = sorted(group["all_ranks"] - {group["evidence"]["rank"]})
        shown.append(
            {"evidence": group["evidence"], "others": group["others"], "ranks": rank_ranges(others)}
        )
    return shown


def _timeline(
    report: dict[str, Any], analysis: Analysis, say: Say
) -> tuple[list[dict[str, Any]], str]:
    """The moments the logs date: each group of ranks' last progress, the divergence, each
    finding with a time; with the time since the divergence. Empty without two of them."""
    job = analysis.job
    moments: list[tuple[datetime, str, bool]] = []
    if job.progress is not None:
        last = job.progress.last_marks.filter(pl.col("timestamp").is_not_null())
        for (step, stage), group in last.group_by("step", "stage", maintain_order=True):
            ranks = group.get_column("rank").to_list()
            who = (
                say("rank {rank}", rank=ranks[0])
                if len(ranks) == 1
                else say("ranks {ranks}", ranks=rank_ranges(ranks))
            )
            what = say(
                "last progress of {who}: step {step}, {stage}", who=who, step=step, stage=stage
            )
            moments.append((group.get_column("timestamp").max(), what, False))
    verdict = analysis.verdict.finding if analysis.verdict else None
    for finding in analysis.findings:
        if finding.timestamp is None:
            continue
        who = (
            say(" (rank {rank})", rank=finding.ranks[0])
            if len(finding.ranks) == 1
            else say(" (ranks {ranks})", ranks=rank_ranges(finding.ranks))
            if finding.ranks
            else ""
        )
        is_verdict = finding is verdict
        what = (
            say("the divergence: {kind}", kind=diagnosis(finding) + who)
            if is_verdict
            else diagnosis(finding) + who
        )
        moments.append((finding.timestamp, what, is_verdict))
    if len(moments) < 2:
        return [], ""
    moments.sort(key=lambda moment: moment[0])
    start = next((time for time, _, is_verdict in moments if is_verdict), None)
    rows = [
        {
            "time": f"{time:%Y-%m-%d %H:%M:%S}",
            "after": _after(time, start, say),
            "what": what,
            "divergence": is_verdict,
        }
        for time, what, is_verdict in moments[:TIMELINE_ROWS]
    ]
    hosts = job.events.get_column("host").drop_nulls().n_unique()
    note = (
        say("The times come from {count} hosts, whose clocks may differ.", count=hosts)
        if hosts > 1
        else ""
    )
    return rows, note


TIMELINE_ROWS = 24


def _after(time: datetime, start: datetime | None, say: Say) -> str:
    if start is None or time < start:
        return ""
    seconds = (time - start).total_seconds()
    if seconds < 120:
        return say("+{count} s", count=f"{seconds:.0f}")
    if seconds < 7200:
        return say("+{count} min", count=f"{seconds / 60:.0f}")
    return say("+{count} h", count=f"{seconds / 3600:.1f}")


def _first_fr_seq(report: dict[str, Any]) -> int | None:
    seqs = [f["seq"] for f in report["findings"] if f["rule"] == "fr_mismatch" and f["seq"]]
    return min(seqs) if seqs else None
