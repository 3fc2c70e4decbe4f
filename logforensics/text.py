"""Small helpers that turn facts into the words of summaries."""

from __future__ import annotations

from collections.abc import Iterable, Mapping


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


def rank_list(ranks: Iterable[int], limit: int = 8) -> str:
    """`rank 3`, `ranks 0, 1 and 3`, `ranks 0-511` (runs are collapsed), `ranks 0, 2, ... (+9)`."""
    runs = rank_runs(ranks)
    if not runs:
        return "no rank"
    if len(runs) == 1 and "-" not in runs[0]:
        return f"rank {runs[0]}"
    shown = runs[:limit]
    more = f" (+{len(runs) - limit} more)" if len(runs) > limit else ""
    if len(shown) == 1:
        return f"ranks {shown[0]}{more}"
    return f"ranks {', '.join(shown[:-1])} and {shown[-1]}{more}"


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
