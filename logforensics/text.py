"""Small helpers that turn facts into the words of summaries."""

from __future__ import annotations

from collections.abc import Iterable, Mapping


def rank_list(ranks: Iterable[int], limit: int = 8) -> str:
    """`rank 3`, `ranks 0, 1 and 3`, `ranks 0-511` (runs are collapsed), `ranks 0, 2, ... (+9)`."""
    values = sorted(set(ranks))
    if not values:
        return "no rank"
    if len(values) == 1:
        return f"rank {values[0]}"
    runs: list[str] = []
    start = previous = values[0]
    for value in values[1:] + [None]:
        if value is not None and value == previous + 1:
            previous = value
            continue
        if start == previous:
            runs.append(str(start))
        elif previous == start + 1:
            runs.extend([str(start), str(previous)])
        else:
            runs.append(f"{start}-{previous}")
        if value is not None:
            start = previous = value
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
