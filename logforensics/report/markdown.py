"""The report as Markdown to paste into a ticket (GitHub, GitLab, Jira): the verdict in one
line, why, what to change, the causal chain, the key evidence lines, the other findings one
line each, and the facts to reproduce the run.

Log text is untrusted. Quoted lines go into fenced code blocks whose fence is longer than any
run of backticks in them, so nothing can close the block early; everything else is escaped so
that it reads as text, never as Markdown or HTML (no links, images, emphasis or tags of its
own). Terminal control sequences are dropped, as for the terminal: the file may be printed.
"""

from __future__ import annotations

import re
from typing import Any

from logforensics.headline import NO_FAILURE
from logforensics.i18n import ENGLISH, t, translated_report
from logforensics.terminal import printable
from logforensics.text import first_sentence, rank_ranges

EVIDENCE_SHOWN = 5  # lines of the verdict's own evidence
LAUNCH_SHOWN = 3
HOSTS_SHOWN = 16
QUOTE_CHARS = 2000  # of a quoted line; the HTML and JSON reports keep it whole
CHAIN_WORDS = {
    "explanation": "why",
    "departure": "where it left the path",
    "consequence": "what followed",
    "context": "context",
}
# Our own texts mark code with single backticks (the HTML report shows them as code).
INLINE_CODE = re.compile(r"`([^`\n]+)`")
# In text: what Markdown or HTML would read as markup. An underscore inside a word is text.
MARKUP = re.compile(r"[\\`*\[\]~|$]|(?<![0-9A-Za-z])_|_(?![0-9A-Za-z])")
LINE_BREAKS = re.compile(r"\r\n|[\r\n\x0b\x0c\x85\u2028\u2029]")


def render_markdown(report: dict[str, Any], lang: str = ENGLISH) -> str:
    """The Markdown summary of the report model (`logforensics.report.model`, English; a
    verdict may carry its one-line `headline`), in `lang`."""
    said = translated_report(report, lang)
    if said.get("several_jobs"):
        lines = _upload(said, lang)
    else:
        lines = [f"### {_prose(_headline(said, lang))}", ""] + _job(said, lang)
    lines += _footer(said, lang)
    return "\n".join(lines).rstrip("\n") + "\n"


def _upload(report: dict[str, Any], lang: str) -> list[str]:
    jobs = report["jobs"]
    why = t("The files come from different jobs ({why}): each is analysed on its own.", lang)
    lines = [
        f"### {_text(t('{count} jobs in this upload', lang, count=len(jobs)))}",
        "",
        _text(why.replace("{why}", report["why"])),
        "",
    ]
    for number, job in enumerate(jobs, start=1):
        job_words = _text(t("Job {number}", lang, number=number))
        label = _paren(_code(job["job"]["label"]), lang)
        lines.append(f"- {job_words}{label}{_colon(lang)}{_prose(_headline(job, lang))}")
    if report.get("unattached_files"):
        names = ", ".join(_code(name) for name in report["unattached_files"])
        unnamed = _text(t("Files that name no job (not analysed with any)", lang))
        lines += ["", f"{unnamed}{_colon(lang)}{names}"]
    for number, job in enumerate(jobs, start=1):
        title = _text(t("Job {number}", lang, number=number))
        lines += ["", f"#### {title}{_colon(lang)}{_code(job['job']['label'])}", ""]
        lines += [f"**{_prose(_headline(job, lang))}**", ""] + _job(job, lang)
    return lines


def _headline(report: dict[str, Any], lang: str) -> str:
    verdict = report.get("verdict")
    if not verdict:
        return t(NO_FAILURE, lang)
    return verdict.get("headline") or verdict["summary"]


def _job(report: dict[str, Any], lang: str) -> list[str]:
    findings = {finding["id"]: finding for finding in report["findings"]}
    verdict = report.get("verdict")
    lines = _verdict(verdict, findings, lang) if verdict else _no_verdict(report, lang)
    chain = verdict["chain"] if verdict else []
    others = [finding for finding in report["findings"] if finding["id"] not in chain]
    if others:
        lines += [_label(t("Other findings", lang), lang), ""]
        lines += [_finding_line(finding, lang) for finding in others] + [""]
    return lines + _reproduce(report, lang)


def _verdict(verdict: dict[str, Any], findings: dict[str, Any], lang: str) -> list[str]:
    facts = [_code(verdict["kind"])]
    if verdict["ranks"]:
        facts.append(_ranks(verdict["ranks"], lang))
    facts.append(_prose(verdict["where"]))
    confidence = _text(t(verdict["confidence"], lang))
    facts.append(f"{_text(t('confidence', lang))}{_colon(lang)}{confidence}")
    lines = [
        f"{_label(t('Verdict', lang), lang)} " + " · ".join(facts),
        "",
        _prose(verdict["summary"]),
        "",
        f"{_label(t('Why this one', lang), lang)} {_prose(verdict['reason'])}",
        "",
        f"{_label(t('What to change', lang), lang)} {_prose(verdict['fix'])}",
        "",
    ]
    chain = [findings[finding_id] for finding_id in verdict["chain"] if finding_id in findings]
    if len(chain) > 1:
        lines += [_label(t("How it happened", lang), lang), ""]
        for number, finding in enumerate(chain, start=1):
            part = _text(t(CHAIN_WORDS.get(finding["part"], finding["part"]), lang))
            lines.append(f"{number}. {part}{_colon(lang)}{_named(finding, lang)}")
        lines.append("")
    return lines + _evidence(chain, lang)


TEARDOWN_ONLY = (
    "The only failures came after the run had finished: a problem tearing the process groups "
    "down, not a hang in training (see the warnings below)."
)


RESTARTED = (
    "The launcher restarted the workers after a failure, and the attempt after the restart "
    "shows no failure (see the warning below for what the earlier attempt died of)."
)


FEW_RANKS = (
    "No finding of error severity; these logs show fewer than two ranks, so they cannot show "
    "whether the ranks agreed."
)


WARNINGS_ONLY = "No finding of error severity; the warnings below place no cause in the run."


def _no_verdict(report: dict[str, Any], lang: str) -> list[str]:
    return [_text(t(no_verdict_said(report), lang)), ""]


def no_verdict_said(report: dict[str, Any]) -> str:
    """What a report with no verdict says instead (in English; the Markdown and the page
    translate it)."""
    findings = report["findings"]
    if any(finding["severity"] == "error" for finding in findings):
        return "Errors were found, but none places a cause in the run; see the findings below."
    if any(
        finding["details"].get("after_finish") or finding["details"].get("exiting")
        for finding in findings
    ):
        return TEARDOWN_ONLY
    if any(finding["kind"] == "worker_restart" for finding in findings):
        return RESTARTED
    if len(report["inputs"]["ranks_seen"]) < 2:  # nothing to compare: claim no agreement
        return FEW_RANKS
    if any(finding["severity"] == "warning" for finding in findings):
        return WARNINGS_ONLY
    return "No finding of error severity: the ranks' logs agree with each other."


def _evidence(chain: list[dict[str, Any]], lang: str) -> list[str]:
    """The verdict's first lines, then the first line of each other step of the chain."""
    quoted = [(chain[0], evidence) for evidence in chain[0]["evidence"][:EVIDENCE_SHOWN]]
    quoted += [(finding, finding["evidence"][0]) for finding in chain[1:] if finding["evidence"]]
    if not quoted:
        return []
    lines = [_label(t("Key evidence", lang), lang), ""]
    for finding, evidence in quoted:
        rank = evidence.get("rank")
        where = _code(f"{evidence['file']}:{evidence['line']}")
        if rank is not None:
            where += _paren(_text(t("rank {rank}", lang, rank=rank)), lang)
        lines += [f"{where} · {_code(finding['kind'])}", ""] + _block(evidence["text"]) + [""]
    verdict = chain[0]
    more = verdict["evidence_total"] - min(len(verdict["evidence"]), EVIDENCE_SHOWN)
    if more > 0:
        key = "{count} more evidence line in the full report."
        if more != 1:
            key = "{count} more evidence lines in the full report."
        lines += [_text(t(key, lang, count=more)), ""]
    return lines


def _finding_line(finding: dict[str, Any], lang: str) -> str:
    return f"- **{_text(t(finding['severity'], lang))}** {_named(finding, lang)}"


def _named(finding: dict[str, Any], lang: str) -> str:
    """`kind` (ranks): the first sentence of its summary."""
    ranks = finding["blamed"] or finding["ranks"]
    who = _paren(_ranks(ranks, lang), lang) if ranks else ""
    said = _prose(first_sentence(finding["summary"]))
    return f"{_code(finding['kind'])}{who}{_colon(lang)}{said}"


def _world_size(facts: dict[str, Any], lang: str) -> str:
    if facts["world_size"] is not None:
        return str(facts["world_size"])
    least = facts.get("world_size_at_least")
    if least is None:
        return _text(t("unknown", lang))
    words = "unknown (at least {count}: rank {rank} is in the logs)"
    return _text(t(words, lang, count=least, rank=least - 1))


def _reproduce(report: dict[str, Any], lang: str) -> list[str]:
    facts = report["reproduce"]
    colon = _colon(lang)
    hosts = facts["hosts"]
    shown = ", ".join(_code(host) for host in hosts[:HOSTS_SHOWN])
    if len(hosts) > HOSTS_SHOWN:
        shown += f" … (+{len(hosts) - HOSTS_SHOWN})"
    settings = ", ".join(
        _code(f"{name}={value}") for name, value in facts["debug_settings"].items()
    )
    hosts_words = t("Hosts ({count})", lang, count=len(hosts)) if hosts else t("Hosts", lang)
    lines = [
        _label(t("To reproduce", lang), lang),
        "",
        f"- {_text(t('World size', lang))}{colon}" + _world_size(facts, lang),
        f"- {_text(hosts_words)}{colon}" + (shown or _text(t("not in the logs", lang))),
        f"- {_text(t('Debug settings', lang))}{colon}"
        + (settings or _text(t("none seen in the logs", lang))),
    ]
    if facts["nccl_versions"]:
        lines.append(f"- NCCL{colon}{', '.join(_code(v) for v in facts['nccl_versions'])}")
    commands = facts["launch_commands"][:LAUNCH_SHOWN]
    if not commands:
        lines.append(
            f"- {_text(t('Launch', lang))}{colon}{_text(t('no launch command in the logs', lang))}"
        )
    lines.append("")
    for command in commands:
        where = _paren(_code(f"{command['file']}:{command['line']}"), lang)
        lines += [f"{_text(t('Launch', lang))}{where}{colon.rstrip()}", ""]
        lines += _block(command["text"]) + [""]
    if facts["next_time"]:
        lines += [_label(t("Next time, to make this diagnosis surer:", lang), lang), ""]
        lines += [f"- {_prose(advice)}" for advice in facts["next_time"]] + [""]
    return lines


def _footer(report: dict[str, Any], lang: str) -> list[str]:
    inputs = report["inputs"]
    key = "logforensics {version}: {files} files, {lines} lines read from"
    if inputs["files"] == 1:
        key = "logforensics {version}: {files} file, {lines} lines read from"
    said = t(
        key,
        lang,
        version=report["tool"]["version"],
        files=f"{inputs['files']:,}",
        lines=f"{inputs['lines']:,}",
    )
    return ["---", "", f"_{_text(said)} {_code(inputs['path'])}_", ""]


# --- safe Markdown ------------------------------------------------------------------------


def _label(words: str, lang: str) -> str:
    """`**Verdict:**`, with the language's colon."""
    return f"**{_text(t('{label}:', lang, label=words.rstrip(':：')))}**"


def _colon(lang: str) -> str:
    return t(": ", lang)


def _paren(markdown: str, lang: str) -> str:
    """` (…)` around Markdown already made safe, in the language's parentheses."""
    return t(" ({text})", lang).replace("{text}", markdown)


def _ranks(ranks: list[int], lang: str) -> str:
    key = "rank {rank}" if len(ranks) == 1 else "ranks {ranks}"
    return _text(t(key, lang, rank=ranks[0], ranks=rank_ranges(ranks)))


def _prose(text: str) -> str:
    """Our text with `code` spans: the spans as code, the rest escaped."""
    said: list[str] = []
    position = 0
    for found in INLINE_CODE.finditer(text):
        said.append(_text(text[position : found.start()]))
        said.append(_code(found.group(1)))
        position = found.end()
    said.append(_text(text[position:]))
    return "".join(said)


def _text(text: str) -> str:
    """Plain text that Markdown renders as written: markup characters escaped, `<`, `>` and
    `&` as entities (no tags, no autolinks), one line."""
    flat = LINE_BREAKS.sub(" ", printable(text))
    flat = flat.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    flat = MARKUP.sub(lambda found: "\\" + found.group(0), flat)
    # a bare URL would become a link
    flat = flat.replace("://", ":\\/\\/").replace("www.", "www\\.")
    if flat[:1] and flat[:1] in "#+-=>":  # a heading, a list item, a quote starting a line
        return "\\" + flat
    number = re.match(r"\d+(?=[.)])", flat)  # an ordered list item
    return flat[: number.end()] + "\\" + flat[number.end() :] if number else flat


def _code(text: str) -> str:
    """An inline code span that no backtick in `text` can close."""
    flat = LINE_BREAKS.sub(" ", printable(str(text)))
    fence = "`" * (_longest_backtick_run(flat) + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") or flat.strip() != flat else ""
    return f"{fence}{pad}{flat}{pad}{fence}"


def _block(text: str) -> list[str]:
    """A fenced code block around a quoted log line: the fence is longer than any run of
    backticks inside, so no line of the text can close it."""
    quoted = printable(text if len(text) <= QUOTE_CHARS else text[:QUOTE_CHARS] + " …")
    quoted = re.sub(r"\r\n?", "\n", quoted)
    fence = "`" * max(3, _longest_backtick_run(quoted) + 1)
    return [f"{fence}text", *quoted.split("\n"), fence]


def _longest_backtick_run(text: str) -> int:
    return max((len(run) for run in re.findall(r"`+", text)), default=0)
