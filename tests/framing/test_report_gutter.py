# ruff: noqa: E501 -- test data are verbatim log lines
"""A runner's condensed error report: lines behind a `| ` gutter or a count (`* 1 x `)."""

from __future__ import annotations

from tests.builders import analyze_files
from tests.framing import frame

# mila-iqia/milabench#367, verbatim (the report's block up to where the stored copy cuts it):
# rank 0's DataLoader worker failed; torchrun then stopped the other worker
REPORT = [
    "        | [rank0]: FileNotFoundError: Caught FileNotFoundError in DataLoader worker process 2.",
    "    * 1 x W0909 21:54:55.983000 41207 torch/distributed/elastic/multiprocessing/api.py:900] Sending process 41240 closing signal SIGTERM",
    "        | [rank0]: Original Traceback (most recent call last):",
    '        | [rank0]:   File "/milabench/envs/venv/torch/lib/python3.12/site-packages/torch/utils/data/_utils/worker.py", line 349, in _worker_loop',
    "        | [rank0]:     data = fetcher.fetch(index)  # type: ignore[possibly-undefined]",
    "        | [rank0]:            ^^^^^^^^^^^^^^^^^^^^",
    '        | [rank0]:   File "/milabench/envs/venv/torch/lib/python3.12/site-packages/torch/utils/data/_utils/fetch.py", line 52, in fetch',
    "        | [rank0]:     data = [self.dataset[idx] for idx in possibly_batched_index]",
    "        | [rank0]:             ~~~~~~~~~~~~^^^^^",
    '        | [rank0]:   File "/milabench/envs/venv/torch/lib/python3.12/site-packages/torchvision/datasets/folder.py", line 245, in __getitem__',
    "        | [rank0]:     sample = self.loader(path)",
    "        | [rank0]:              ^^^^^^^^^^^^^^^^^",
    '        | [rank0]:   File "/milabench/envs/venv/torch/lib/python3.12/site-packages/torchvision/datasets/folder.py", line 284, in default_loader',
    "        | [rank0]:     return pil_loader(path)",
    "        | [rank0]:            ^^^^^^^^^^^^^^^^",
]


def test_the_gutter_and_the_count_are_peeled_where_they_frame_the_file():
    rows = frame(REPORT)
    assert (
        rows[0]["message"].startswith("[rank0]: FileNotFoundError") or rows[0]["prefix_rank"] == 0
    )
    assert rows[1]["message"].startswith("W0909 21:54:55.983000 41207 torch/distributed")
    assert all(row["framing"].startswith("report_gutter") for row in rows)


def test_a_table_or_a_few_indented_bars_are_left_alone():
    lines = ["| epoch | loss |", "rank=0 step=1 stage=forward", "  | not a gutter", "done", "ok"]
    assert [row["message"] for row in frame(lines)] == lines


def test_the_report_names_the_rank_that_failed(tmp_path):
    analysis = analyze_files(tmp_path, {"error_report.log": REPORT})
    assert (analysis.verdict.finding.kind, analysis.verdict.ranks) == ("rank_exception", [0])
    assert "FileNotFoundError" in analysis.verdict.finding.summary
