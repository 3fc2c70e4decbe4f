"""Framing tests, one module per launcher prefix, on verbatim lines."""

from __future__ import annotations

from typing import Any

import polars as pl

from logforensics.framing import frame_lines


def frame(lines: list[str], file: str = "job.log") -> list[dict[str, Any]]:
    """The framed rows of `lines`, read as one file, with only the non-null prefix columns."""
    table = pl.DataFrame(
        {"file": [file] * len(lines), "line": list(range(1, len(lines) + 1)), "text": lines},
        schema={"file": pl.String, "line": pl.UInt32, "text": pl.String},
    )
    return [
        {name: value for name, value in row.items() if value is not None and name != "text"}
        for row in frame_lines(table).iter_rows(named=True)
    ]


def frame_one(text: str) -> dict[str, Any]:
    return frame([text])[0]
