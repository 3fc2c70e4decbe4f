# ruff: noqa: E501 -- verbatim log lines
"""Lines a terminal or a paste cut at a fixed width, joined back (logforensics/hard_wraps.py)."""

from __future__ import annotations

from tests.builders import analyze_files
from tests.framing import frame

# WM-PO/WMPO#3, verbatim: Ray's memory-monitor report copied out of a 188-column terminal, every
# line padded to the width, `ray log|s` cut at the edge
PADDED_COPY = [
    "(raylet) [2025-12-07 09:57:19,206 E 393463 393463] (raylet) node_manager.cc:3277: 2 Workers (tasks / actors) killed due to memory pressure (OOM), 0 Workers crashed due to other reasons at ",
    "node (ID: 8289f87b78d161ae21bf723c7c57838345a56248dd48a2c3f0d5ac73, IP: 172.24.0.226) over the last time period. To see more information about the Workers killed on this node, use `ray log",
    "s raylet.out -ip 172.24.0.226`                                                                                                                                                              ",
    "(raylet)                                                                                                                                                                                    ",
    "(raylet) Refer to the documentation on how to address the out of memory issue: https://docs.ray.io/en/latest/ray-core/scheduling/ray-oom-prevention.html. Consider provisioning more memory ",
    "on this node or reducing task parallelism by requesting more CPUs per task. To adjust the kill threshold, set the environment variable `RAY_memory_usage_threshold` when starting Ray. To di",
]

# pytorch/pytorch#113128's console, verbatim: rank 12's NCCL watchdog timeout under torchrun's
# --tee tag (cut here at 80 columns as a terminal wraps it)
WATCHDOG = "[default4]:[rank12]:[E ProcessGroupNCCL.cpp:475] [Rank 12] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600113 milliseconds before timing out."

# NVIDIA/nccl-tests#287, verbatim: all_reduce_perf's rows, right-aligned, as wide as each other
TABLE_ROWS = [
    "           8             2     float     sum      -1     5.63    0.00    0.00      0     0.20    0.04    0.00      0",
    "          16             4     float     sum      -1     5.60    0.00    0.00      0     0.19    0.08    0.00      0",
    "          32             8     float     sum      -1     5.30    0.01    0.00      0     0.18    0.17    0.00      0",
    "          64            16     float     sum      -1     5.37    0.01    0.00      0     0.15    0.44    0.00      0",
    "         128            32     float     sum      -1     4.61    0.03    0.00      0     0.15    0.86    0.00      0",
]


def cut(line: str, width: int) -> list[str]:
    return [line[at : at + width] for at in range(0, len(line), width)]


def test_a_padded_screen_copy_is_joined_where_a_line_reached_the_edge():
    rows = frame(PADDED_COPY)
    assert rows[1]["message"].endswith("use `ray logs raylet.out -ip 172.24.0.226`")
    assert (rows[2]["message"], rows[2]["framing"]) == ("", "hard_wrap")
    # a line that ends in padding had ended there
    assert rows[0]["message"].endswith("crashed due to other reasons at")


def test_a_wrapped_console_is_read_as_its_lines(tmp_path):
    copies = [WATCHDOG.replace("12", str(rank)) for rank in (12, 13, 14)]
    lines = ["Starting training", *(piece for copy in copies for piece in cut(copy, 80))]
    lines.append("Done waiting")
    rows = frame(lines)
    whole = [row for row in rows if row["message"].startswith("[E ProcessGroupNCCL.cpp:475]")]
    assert [row["prefix_rank"] for row in whole] == [12, 13, 14]
    assert whole[0]["message"].endswith("ran for 600113 milliseconds before timing out.")
    verdict = analyze_files(tmp_path, {"console.log": lines}).verdict
    assert (verdict.finding.kind, verdict.finding.ranks) == ("collective_timeout", [12, 13, 14])


def test_ranks_copies_of_one_message_as_wide_as_the_file_are_not_joined():
    # the longest lines share their length because only the rank differs; each ends a sentence
    copies = [WATCHDOG.replace("12", str(rank)) for rank in (12, 13, 14, 15)]
    rows = frame(["Starting training", *copies])
    assert [row["message"] for row in rows[1:]] == [copy.split(":", 2)[2] for copy in copies]


def test_a_tables_rows_are_not_joined():
    # (rows alone, every one indented: read without the indentation they all share)
    rows = frame(TABLE_ROWS * 2)
    assert [row["message"].strip() for row in rows] == [row.strip() for row in TABLE_ROWS * 2]
