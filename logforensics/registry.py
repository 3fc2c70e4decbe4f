"""The one place parsers and rules are found: every module in `parsers/` that defines
`PARSER`, and every module in `logforensics/rules/` that defines `RULE`.

Adding a log family or a diagnosis is adding one file; nothing else needs editing.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from types import ModuleType
from typing import TYPE_CHECKING

import polars as pl

from logforensics.errors import ImplementationError

if TYPE_CHECKING:
    from logforensics.findings import Finding
    from logforensics.job import Job


@dataclass(frozen=True, slots=True)
class LineParser:
    """Recognises one log family.

    `parse` receives the lines whose `message` contains one of `literals` (columns
    `file, line, text, message, prefix_rank, prefix_local_rank, candidate`) and returns one row
    per recognised line: `file`, `line` and any event-schema columns it can fill, at least
    `event`. A row whose `event` is null counts the line as recognised without keeping an
    event (for bulky lines that matter only in number, such as NCCL ring and channel lines).

    A family whose messages span several lines (a traceback, a summary block) sets
    `context_after`: it then also receives up to that many lines after each candidate line of
    the same file, with `candidate` false on them.

    A `residual` family has no literals: it receives the lines no other family recognised, of
    the files that print no stage marks (frameworks' own progress lines, read by template).

    A `progress` family (stage marks) returns rows of the narrow progress table (`file, line,
    rank, rank_from, step, stage, epoch` and the writer's prefix columns), not events: a job
    prints hundreds of millions of them. Its lines are offered to no other family.

    `parse` must work on whole columns (polars expressions), never loop over lines in Python.
    """

    name: str
    literals: tuple[str, ...]
    parse: Callable[[pl.DataFrame], pl.DataFrame]
    context_after: int = 0
    residual: bool = False
    progress: bool = False


@dataclass(frozen=True, slots=True)
class Rule:
    """One diagnosis: reads the job (event table and what was derived from it), returns findings.

    `specificity` breaks ties between root-cause findings at the same point of the run: the
    rule that names the more particular cause wins (an uneven DataLoader explains the rank
    that went quiet at the epoch end).

    `diagnosis`, for a rule that names a finer fact than the diagnoses a report's reader and
    CI key on (README, "Rules"), says which of those each of its findings is: a Flight
    Recorder's "never issued #5" is a stage divergence. The report's `kind` is the diagnosis,
    its `rule` this kind.
    """

    kind: str
    check: Callable[[Job], list[Finding]]
    specificity: int = 0
    diagnosis: Callable[[Finding], str] | None = None


def _modules(package_name: str) -> list[ModuleType]:
    package = importlib.import_module(package_name)
    names = sorted(info.name for info in pkgutil.iter_modules(package.__path__))
    return [importlib.import_module(f"{package_name}.{name}") for name in names]


@cache
def parsers() -> tuple[LineParser, ...]:
    """Every registered parser, in module-name order."""
    found = [module.PARSER for module in _modules("parsers") if hasattr(module, "PARSER")]
    _refuse_duplicates([parser.name for parser in found], "parser")
    return tuple(found)


@cache
def rules() -> tuple[Rule, ...]:
    """Every registered rule, in module-name order."""
    found = [module.RULE for module in _modules("logforensics.rules") if hasattr(module, "RULE")]
    _refuse_duplicates([rule.kind for rule in found], "rule")
    return tuple(found)


def _refuse_duplicates(names: list[str], what: str) -> None:
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise ImplementationError(f"{what} {name!r} registered twice")
        seen.add(name)


def rule_of(kind: str) -> Rule | None:
    """The registered rule of that kind, if any."""
    return next((rule for rule in rules() if rule.kind == kind), None)


def diagnosis(finding: Finding) -> str:
    """The diagnosis `finding` is an instance of (its kind, unless its rule says otherwise)."""
    rule = rule_of(finding.kind)
    if rule is None or rule.diagnosis is None:
        return finding.kind
    return rule.diagnosis(finding)
