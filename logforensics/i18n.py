"""The report in another language than English.

The analyzer writes its sentences in English, with the facts of the run (ranks, steps,
stage names, quoted log text) filled in. A catalogue (`logforensics/catalogue/<lang>.toml`)
maps each English sentence pattern to a sentence of the language, so translating happens
once, on the finished report, and the English stays what the rules and the reasoner wrote.

A catalogue holds three tables:

- `ui`: fixed strings (labels, headings), English -> translation; `t()` looks them up;
- `sentence`: patterns that cover a text sentence by sentence (`translate()`);
- `phrase`: patterns matched against a whole value: the facts a sentence quotes that are
  themselves words (`ranks 0, 1 and 3`, `step 5 stage after_backward`, `20 s`).

A pattern is `en`, an English template whose `{name}` placeholders match any text, or `re`,
a regular expression with named groups (and an `anchor`: a literal every match contains, so
that most patterns are skipped without running them). Its translation `zh` names the groups:
`{name}` inserts the English verbatim (log text, file names, kinds, numbers), `{name:t}`
translates it as a phrase or sentences first, `{name:list}` writes an English enumeration
(`0, 1 and 3`) the language's way. Text no pattern covers stays English.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any

ENGLISH = "en"
LANGUAGES = ("en", "zh")
# Where a sentence may end inside a text: before whitespace, after one of these.
SENTENCE_ENDS = '.)"'
# A pattern spans at most this many of those places (a fix of several sentences, a quoted
# message with full stops in it): a longer text is never matched whole, so costs stay linear.
MAX_ENDS = 12
PLACEHOLDER = re.compile(r"\{(\w+)\}")
LEADING_GROUP = r"(?:(?![.;:]\s+[A-Z]).)+?"
SLOT = re.compile(r"\{(\w+)(?::(\w+))?\}")
# `{?name}...{/}`: written only when the group `name` matched some text.
CONDITIONAL = re.compile(r"\{\?(\w+)\}(.*?)\{/\}", re.DOTALL)


@dataclass(frozen=True, slots=True)
class Pattern:
    """One English pattern and its translation."""

    regex: re.Pattern[str]
    template: str
    anchor: str  # a literal every match contains ("" when none is known)


@dataclass(frozen=True, slots=True)
class Catalogue:
    lang: str
    ui: dict[str, str]
    sentences: tuple[Pattern, ...]
    phrases: tuple[Pattern, ...]
    headlines: tuple[Pattern, ...] = ()  # the clauses of a verdict's headline


@cache
def catalogue(lang: str) -> Catalogue:
    """The catalogue of `lang` (empty for English)."""
    if lang not in LANGUAGES:
        raise ValueError(f"no catalogue for language {lang!r}; known: {', '.join(LANGUAGES)}")
    if lang == ENGLISH:
        return Catalogue(lang, {}, (), ())
    # imported here: an English report (the usual run) never reads a catalogue
    import tomllib
    from importlib import resources

    text = (resources.files("logforensics") / "catalogue" / f"{lang}.toml").read_text("utf-8")
    data = tomllib.loads(text)
    return Catalogue(
        lang,
        dict(data.get("ui", {})),
        tuple(_pattern(entry, lang) for entry in data.get("sentence", [])),
        tuple(_pattern(entry, lang) for entry in data.get("phrase", [])),
        tuple(_pattern(entry, lang) for entry in data.get("headline", [])),
    )


def _pattern(entry: dict[str, str], lang: str) -> Pattern:
    if "en" in entry:
        regex, anchor = _template_regex(entry["en"])
    else:
        regex, anchor = entry["re"], entry.get("anchor", "")
    try:
        compiled = re.compile(regex, re.DOTALL)
    except re.error as error:
        raise ValueError(f"catalogue {lang}: bad pattern {regex!r}: {error}") from None
    template = entry[lang]
    used = {found.group(1) for found in SLOT.finditer(template)}
    used |= {found.group(1) for found in CONDITIONAL.finditer(template)}
    if unknown := used - set(compiled.groupindex):
        raise ValueError(f"catalogue {lang}: {template!r} names no group of {regex!r}: {unknown}")
    return Pattern(compiled, template, anchor)


def _template_regex(template: str) -> tuple[str, str]:
    """`{who} ran out of GPU memory.` as a regex with a lazy group per placeholder (a name
    used twice must match the same text), and its longest literal as the anchor."""
    parts = PLACEHOLDER.split(template)
    literals = parts[0::2]
    names = parts[1::2]
    regex = re.escape(literals[0])
    seen: set[str] = set()
    for index, (name, literal) in enumerate(zip(names, literals[1:], strict=True)):
        # a placeholder that opens the sentence (`{who} reported no timeout`) stops at the
        # sentence before it: it would otherwise take that sentence in when the catalogue
        # has no pattern of its own for it
        group = LEADING_GROUP if index == 0 and not literals[0] else ".+?"
        regex += f"(?P={name})" if name in seen else f"(?P<{name}>{group})"
        seen.add(name)
        regex += re.escape(literal)
    return regex, max(literals, key=len)


# --- fixed strings ------------------------------------------------------------------------


def t(text: str, lang: str = ENGLISH, /, **values: object) -> str:
    """A fixed string of the interface in `lang`, with `values` filled in: `t("Findings
    ({count})", "zh", count=3)`. A string the catalogue lacks stays English."""
    said = catalogue(lang).ui.get(text, text) if lang != ENGLISH else text
    return said.format(**values) if values else said


def translator(lang: str) -> Callable[..., str]:
    """`t` bound to one language, for templates: `{{ t("Verdict") }}`."""

    def bound(text: str, /, **values: object) -> str:
        return t(text, lang, **values)

    return bound


# --- sentences ----------------------------------------------------------------------------


def translate(text: str, lang: str) -> str:
    """A text the analyzer wrote (a summary, a fix, a note), in `lang`. Sentences no pattern
    covers stay English."""
    if lang == ENGLISH or not text:
        return text
    book = catalogue(lang)
    cover = _Cover(text, book)
    said = cover.whole()
    if said is None:
        said = _phrase(text, book)
    return said if said is not None else cover.best()


def translate_headline(text: str, lang: str) -> str:
    """A verdict's headline (`logforensics.headline`), clause by clause."""
    if lang == ENGLISH or not text:
        return text
    book = catalogue(lang)
    clauses = [
        _phrase(clause, book, book.headlines) or translate(clause, lang)
        for clause in text.split("; ")
    ]
    return book.ui.get("; ", "; ").join(clauses)


def _phrase(value: str, book: Catalogue, patterns: tuple[Pattern, ...] = ()) -> str | None:
    for pattern in patterns or book.phrases:
        if pattern.anchor and pattern.anchor not in value:
            continue
        found = pattern.regex.fullmatch(value)
        if found is not None:
            return _render(pattern.template, found, book)
    return None


def _words(value: str, book: Catalogue) -> str:
    """A fact quoted in a sentence: as sentences, else as a phrase (also when it was
    lower-cased to continue another sentence), else as it is."""
    if not value:
        return value
    for candidate in (value, value[:1].upper() + value[1:]):
        said = _Cover(candidate, book).whole()
        if said is None:
            said = _phrase(candidate, book)
        if said is not None:
            return said
    return value


def _render(template: str, found: re.Match[str], book: Catalogue) -> str:
    def slot(match: re.Match[str]) -> str:
        name, how = match.group(1), match.group(2)
        value = found.group(name) or ""
        if how == "t":
            return _words(value, book)
        if how == "list":
            return _enumeration(value, book)
        if how == "code":  # quoted text, shown as code (as it is, if a backtick would break it)
            return f"`{value}`" if value and "`" not in value else value
        return value

    def conditional(match: re.Match[str]) -> str:
        return match.group(2) if found.group(match.group(1)) else ""

    return SLOT.sub(slot, CONDITIONAL.sub(conditional, template))


def _enumeration(value: str, book: Catalogue) -> str:
    """`0, 1 and 3` -> `0、1 和 3` (the separators from the catalogue's ui table)."""
    comma = book.ui.get(", (in a list)", ", ")
    and_word = book.ui.get(" and (in a list)", " and ")
    head, _, last = value.rpartition(" and ")
    if not head:
        return value.replace(", ", comma)
    return head.replace(", ", comma) + and_word + last


class _Cover:
    """A text split into sentences the catalogue knows, left to right; where a pattern's
    match can end at several places, every place is tried until the rest is covered too."""

    def __init__(self, text: str, book: Catalogue) -> None:
        self.text = text
        self.book = book
        self.ends = [
            end
            for end in range(1, len(text) + 1)
            if end == len(text) or (text[end].isspace() and text[end - 1] in SENTENCE_ENDS)
        ]
        self.memo: dict[int, str | None] = {}

    def whole(self) -> str | None:
        return self._from(self._next(0))

    def best(self) -> str:
        """The translation, keeping English the sentences no pattern covers."""
        said: list[str] = []
        position = self._next(0)
        while position < len(self.text):
            covered = self._from(position)
            if covered is not None:
                said.append(covered)
                break
            found = self._first_match(position)
            if found is not None:
                pattern, match = found
                said.append(_render(pattern.template, match, self.book))
                position = self._next(match.end())
                continue
            stop = next((end for end in self.ends if end > position), len(self.text))
            said.append(self.text[position:stop] + (" " if stop < len(self.text) else ""))
            position = self._next(stop)
        return "".join(said)

    def _first_match(self, position: int) -> tuple[Pattern, re.Match[str]] | None:
        for pattern in self.book.sentences:
            for found in self._matches(pattern, position):
                return pattern, found
        return None

    def _next(self, end: int) -> int:
        while end < len(self.text) and self.text[end].isspace():
            end += 1
        return end

    def _from(self, position: int) -> str | None:
        if position >= len(self.text):
            return ""
        if position in self.memo:
            return self.memo[position]
        self.memo[position] = None  # no loops through a position being covered
        for pattern in self.book.sentences:
            for found in self._matches(pattern, position):
                rest = self._from(self._next(found.end()))
                if rest is not None:
                    said = _render(pattern.template, found, self.book) + rest
                    self.memo[position] = said
                    return said
        return None

    def _matches(self, pattern: Pattern, position: int) -> Iterator[re.Match[str]]:
        if pattern.anchor and self.text.find(pattern.anchor, position) < 0:
            return
        later = [end for end in self.ends if end > position][:MAX_ENDS]
        for end in later:
            if pattern.anchor and self.text.find(pattern.anchor, position, end) < 0:
                continue
            found = pattern.regex.fullmatch(self.text, position, end)
            if found is not None:
                yield found


# --- the report ---------------------------------------------------------------------------


def translated_report(report: dict[str, Any], lang: str) -> dict[str, Any]:
    """The report model (`logforensics.report.model`) with its words in `lang`: the verdict's
    summary, reason, place, fix and headline, each finding's summary, note and fix, the advice
    to reproduce, the reasons files were skipped, the jobs' labels. Log text, file names,
    finding kinds and option names stay as they are. English returns `report` itself."""
    if lang == ENGLISH:
        return report
    catalogue(lang)  # an unknown language fails here, before any copying
    said = copy.deepcopy(report)
    _translate_job(said, lang)
    for job in said.get("jobs") or []:
        _translate_job(job, lang)
        facts = job.get("job") or {}
        if "label" in facts:
            facts["label"] = translate(facts["label"], lang)
        if "distinct_by" in facts:
            facts["distinct_by"] = [translate(words, lang) for words in facts["distinct_by"]]
    if said.get("why"):
        parts = [translate(part, lang) for part in said["why"].split("; ")]
        said["why"] = catalogue(lang).ui.get("; ", "; ").join(parts)
    return said


VERDICT_WORDS = ("summary", "reason", "where", "fix")
FINDING_WORDS = ("summary", "note", "fix")


def _translate_job(report: dict[str, Any], lang: str) -> None:
    verdict = report.get("verdict")
    if verdict:
        for key in VERDICT_WORDS:
            if isinstance(verdict.get(key), str):
                verdict[key] = translate(verdict[key], lang)
        if isinstance(verdict.get("headline"), str):
            verdict["headline"] = translate_headline(verdict["headline"], lang)
    for finding in report.get("findings") or []:
        for key in FINDING_WORDS:
            if isinstance(finding.get(key), str):
                finding[key] = translate(finding[key], lang)
    reproduce = report.get("reproduce")
    if reproduce:
        reproduce["next_time"] = [translate(advice, lang) for advice in reproduce["next_time"]]
        book = catalogue(lang)
        reproduce["debug_settings"] = {
            name: _phrase(value, book) or value
            for name, value in reproduce["debug_settings"].items()
        }
    inputs = report.get("inputs") or {}
    for skipped in inputs.get("skipped") or []:
        skipped["reason"] = translate(skipped["reason"], lang)
    for remark in inputs.get("read_with_remarks") or []:
        remark["remark"] = translate(remark["remark"], lang)
