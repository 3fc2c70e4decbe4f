"""Whether a line holds any of many fixed strings, in one scan.

polars' `contains_any` (Aho-Corasick) reads the dense lines of a large job at about 1 GB/s;
the same literals as one regular-expression alternation let the regex engine pick its SIMD
literal search and run 1.5 to 3 times faster (bench/run.py measured it on stage marks and on
NCCL INFO lines, 9 to 163 literals).
"""

from __future__ import annotations

from collections.abc import Iterable

import polars as pl


def holds_any(column: str | pl.Expr, literals: Iterable[str]) -> pl.Expr:
    """True where the text holds one of `literals` (false for all when there are none)."""
    text = pl.col(column) if isinstance(column, str) else column
    alternatives = sorted(set(literals))
    if not alternatives:
        return pl.lit(False)
    # Single characters (an escape byte, a carriage return) in the alternation keep the regex
    # engine off its fast literal search: one character class and one alternation, each its
    # own scan, take about 40 % of the time of both in one (3.1 M stage marks: 0.16 s to 0.06 s).
    characters = [literal for literal in alternatives if len(literal) == 1]
    longer = [literal for literal in alternatives if len(literal) > 1]
    scans = []
    if characters:
        scans.append(text.str.contains("[" + "".join(map(_in_class, characters)) + "]"))
    if longer:
        scans.append(text.str.contains("|".join(pl.escape_regex(literal) for literal in longer)))
    return scans[0] if len(scans) == 1 else scans[0] | scans[1]


def _in_class(character: str) -> str:
    """A character as a regex character class member (`]`, `\\`, `^` and `-` escaped)."""
    return "\\" + character if character in "]\\^-[" else pl.escape_regex(character)
