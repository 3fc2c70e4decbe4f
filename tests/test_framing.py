"""frame_lines as the pipeline uses it: the columns it adds, the order it keeps, and prefixes
of several launchers stacked on one line (per-launcher cases live in tests/framing/)."""

from __future__ import annotations

import polars as pl
import pytest

from logforensics import framing
from logforensics.api import analyze
from logforensics.framing import FRAME_COLUMNS, PREFIX_COLUMNS, frame_lines
from tests.conftest import SAMPLE_LOGS
from tests.framing import frame, frame_one


def lines_frame(texts: list[str], file: str = "f") -> pl.DataFrame:
    return pl.DataFrame(
        {"file": [file] * len(texts), "line": list(range(1, len(texts) + 1)), "text": texts},
        schema={"file": pl.String, "line": pl.UInt32, "text": pl.String},
    )


def test_adds_the_documented_columns_and_keeps_rows_in_order():
    texts = ["plain", "[default1]:x", "another plain", "[rank2]: y", ""]
    framed = frame_lines(lines_frame(texts))
    assert framed.columns == ["file", "line", "text", *FRAME_COLUMNS]
    assert framed.select(*PREFIX_COLUMNS).schema == pl.Schema(PREFIX_COLUMNS)
    assert framed.get_column("text").to_list() == texts
    assert framed.get_column("message").to_list() == ["plain", "x", "another plain", "y", ""]


def test_lines_without_prefix_or_noise_skip_the_peeling(monkeypatch):
    peeled: list[int] = []
    real_peel = framing._peel

    def counting_peel(frame, nonblank):
        peeled.append(frame.height)
        return real_peel(frame, nonblank)

    monkeypatch.setattr(framing, "_peel", counting_peel)
    texts = [
        "2026-11-30 10:00:00,000 INFO rank=3 step=12 stage=before_forward",
        "W1130 15:04:26.975000 4263 torch/distributed/run.py:874] *****",
        '  File "/x.py", line 3, in main',
        "RuntimeError: boom",
    ]
    frame_lines(lines_frame(texts * 1000))
    assert peeled == []
    frame_lines(lines_frame([*texts, "[default0]:x"]))
    assert peeled == [1]


def test_four_launchers_stacked_on_one_line():
    # pdsh host, srun task (wrapping torchrun: a node), torchrun --tee, PyTorch's own prefix
    row = frame_one(
        "node04: 1: [default3]:[rank7]:[E617 15:17:35.519071987 ProcessGroupNCCL.cpp:681] "
        "[Rank 7] Some NCCL operations have failed or timed out."
    )
    assert row["message"] == (
        "[E617 15:17:35.519071987 ProcessGroupNCCL.cpp:681] [Rank 7] Some NCCL operations have "
        "failed or timed out."
    )
    assert (row["prefix_host"], row["prefix_node_index"], row["prefix_local_rank"]) == (
        "node04",
        1,
        3,
    )
    assert row["prefix_rank"] == 7
    assert row["framing"] == "pdsh+srun+torchrun_tee+torch_rank"


@pytest.mark.parametrize(
    "text",
    [
        "Traceback (most recent call last):",
        "{'rank': 0, 'local_rank': 0, 'device': 0, 'world_size': 4}",
        "smc-gpu-03:29881:30401 [0] NCCL INFO init.cc:903 -> 5",
        "W1130 15:04:26.975000 4263 torch/distributed/run.py:874] *****",
        "/work/venv/lib/python3.11/site-packages/torch/_subclasses/functional_tensor.py:368: "
        "UserWarning: Failed to initialize NumPy",
        "",
    ],
)
def test_unprefixed_lines_are_left_alone(text):
    assert frame([text]) == [{"file": "job.log", "line": 1, "message": text}]


@pytest.mark.parametrize("sample", ["two_node_slurm", "swallowed_exception", "pyspy_hang"])
def test_blanks_a_paste_leaves_after_each_line_change_no_verdict(tmp_path, sample):
    # the sample's files, every line ending in blanks as a paste or a padded terminal leaves them
    source = SAMPLE_LOGS / sample / "logs"
    for path in source.rglob("*"):
        if path.is_file():
            copy = tmp_path / path.relative_to(source)
            copy.parent.mkdir(parents=True, exist_ok=True)
            lines = path.read_text(encoding="utf-8").splitlines()
            copy.write_text("".join(f"{line}  \t \n" for line in lines), encoding="utf-8")
    plain, padded = analyze(source).verdict, analyze(tmp_path).verdict
    assert (padded.finding.kind, padded.ranks, padded.headline) == (
        plain.finding.kind,
        plain.ranks,
        plain.headline,
    )
