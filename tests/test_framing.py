from __future__ import annotations

import polars as pl
import pytest

from logforensics.framing import frame_lines


def framed(text: str) -> dict:
    frame = pl.DataFrame({"file": ["f"], "line": [1], "text": [text]})
    return frame_lines(frame).row(0, named=True)


@pytest.mark.parametrize(
    ("text", "message", "rank", "local_rank"),
    [
        (
            "[rank7]: Traceback (most recent call last):",
            "Traceback (most recent call last):",
            7,
            None,
        ),
        (
            "[rank1]:[E ProcessGroupNCCL.cpp:523] timeout",
            "[E ProcessGroupNCCL.cpp:523] timeout",
            1,
            None,
        ),
        ("[default0]:rank=0 step=1 stage=x", "rank=0 step=1 stage=x", None, 0),
        ("[trainer3]:[rank11]:[E1218 20:27:21.4 x.cpp:1] y", "[E1218 20:27:21.4 x.cpp:1] y", 11, 3),
        (
            "[E1218 20:27:21.426415540 ProcessGroupNCCL.cpp:629] x",
            "[E1218 20:27:21.426415540 ProcessGroupNCCL.cpp:629] x",
            None,
            None,
        ),
        ("plain line", "plain line", None, None),
        ("[Rank 0] Watchdog caught", "[Rank 0] Watchdog caught", None, None),
    ],
)
def test_peels_stacked_prefixes(text, message, rank, local_rank):
    row = framed(text)
    assert (row["message"], row["prefix_rank"], row["prefix_local_rank"]) == (
        message,
        rank,
        local_rank,
    )
