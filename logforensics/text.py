"""Small helpers that turn facts into the words of summaries."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence


def rank_runs(ranks: Iterable[int]) -> list[str]:
    """Sorted ranks with runs of three or more collapsed: `["0-3", "5", "7", "8"]`."""
    values = sorted(set(ranks))
    runs: list[str] = []
    index = 0
    while index < len(values):
        end = index
        while end + 1 < len(values) and values[end + 1] == values[end] + 1:
            end += 1
        if end - index >= 2:
            runs.append(f"{values[index]}-{values[end]}")
        else:
            runs.extend(str(value) for value in values[index : end + 1])
        index = end + 1
    return runs


def enumerated(words: Sequence[str]) -> str:
    """`a`, `a and b`, `a, b and c`."""
    if len(words) < 2:
        return "".join(words)
    return f"{', '.join(words[:-1])} and {words[-1]}"


def rank_list(ranks: Iterable[int], limit: int = 8) -> str:
    """`rank 3`, `ranks 0, 1 and 3`, `ranks 0-511` (runs are collapsed), `ranks 0, 2, ... (+9)`."""
    runs = rank_runs(ranks)
    if not runs:
        return "no rank"
    if len(runs) == 1 and "-" not in runs[0]:
        return f"rank {runs[0]}"
    shown = runs[:limit]
    more = f" (+{len(runs) - limit} more)" if len(runs) > limit else ""
    return f"ranks {enumerated(shown)}{more}"


def describe_key(key: Mapping[str, object]) -> str:
    """`step 5 stage after_backward (epoch 0)`; a repeated step says which pass."""
    words = f"step {key['step']} stage {key['stage']}"
    epoch = key.get("epoch")
    if epoch is not None and epoch != -1:
        words += f" (epoch {epoch})"
    occ = key.get("occ") or 0
    if occ:
        words += f" (pass {int(occ) + 1})"
    return words


def rank_ranges(ranks: Iterable[int], limit: int = 24) -> str:
    """`0-297, 299, 300, 302-516` for a table cell: runs collapsed, long lists cut."""
    runs = rank_runs(ranks)
    shown = ", ".join(runs[:limit])
    return shown + (f", … (+{len(runs) - limit} more)" if len(runs) > limit else "")


def duration(seconds: float) -> str:
    """`1 ms`, `20 s`, `1.5 s`, `30 min`, `50 h`, `2,083 days`: a duration as a person says
    it."""
    if seconds < 0.1:
        return f"{seconds * 1000:,.0f} ms"
    if seconds < 10:
        return f"{seconds:.1f} s".replace(".0 s", " s")
    if seconds < 120:
        return f"{seconds:,.0f} s"
    if seconds < 120 * 60:
        return f"{seconds / 60:,.0f} min"
    if seconds < 72 * 3600:
        return f"{seconds / 3600:,.0f} h"
    return f"{seconds / 86400:,.0f} days"


def clipped(text: str, limit: int = 160) -> str:
    """The text cut to about `limit` characters at a word's end, `…` saying it was cut."""
    if len(text) <= limit:
        return text
    cut = text[:limit]
    space = cut.rfind(" ")
    if space > limit // 2:
        cut = cut[:space]
    return cut.rstrip(" ,.;:") + "…"


def capitalized(text: str) -> str:
    """The text with its first letter upper case (`rank 3 lagged` -> `Rank 3 lagged`)."""
    return text[:1].upper() + text[1:]


def first_sentence(text: str) -> str:
    """The text up to the end of its first sentence: a `.` (or `。`) that is not inside
    parentheses, quotes or a `code` span, followed by the next sentence or the end."""
    depth = 0
    quoted = code = False
    for index, char in enumerate(text):
        if char == "`":
            code = not code
        elif code:
            continue
        elif char in "(（":
            depth += 1
        elif char in ")）":
            depth = max(0, depth - 1)
        elif char == '"':
            quoted = not quoted
        elif char in ".。" and not depth and not quoted:
            rest = text[index + 1 :]
            if char == "。" or not rest or (rest[:1].isspace() and rest.lstrip()[:1].isupper()):
                return text[: index + 1]
    return text
