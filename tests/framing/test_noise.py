# ruff: noqa: E501 -- test data are verbatim log lines
"""Terminal noise around log lines: ANSI colour codes, tqdm bars that a log line follows
without a newline, carriage-return redraws, trailing carriage returns."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from logforensics.api import analyze
from tests.builders import parse
from tests.framing import frame, frame_one

THREADS = Path(__file__).parent.parent / "data" / "threads"

# hiyouga/LlamaFactory#8261, verbatim (the issue truncated the line with "…")
BAR_THEN_LOG_LINE = (
    "  1%|▏         | 24/1752 [01:08<1:22:56,  2.88s/it][rank5]:[E602 11:17:52.185053341 "
    "ProcessGroupNCCL.cpp:632] [Rank 5] Watchdog caught collective operati…"
)


def test_log_line_after_a_progress_bar():
    row = frame_one(BAR_THEN_LOG_LINE)
    assert row["prefix_rank"] == 5
    assert row["message"] == (
        "[E602 11:17:52.185053341 ProcessGroupNCCL.cpp:632] [Rank 5] Watchdog caught "
        "collective operati…"
    )
    assert row["framing"] == "tqdm+torch_rank"


def test_the_bar_a_log_line_was_glued_to_is_kept_for_the_parsers():
    row = frame_one(BAR_THEN_LOG_LINE)
    assert row["glued"] == "  1%|▏         | 24/1752 [01:08<1:22:56,  2.88s/it]"


def test_a_line_glued_into_a_bar_s_unclosed_postfix_is_a_line_of_its_own():
    # huggingface/finetrainers#114, verbatim: the main process's print landed inside the step
    # bar's postfix, before its closing bracket
    line = (
        "Steps:   2%| | 254/12184 [3:47:24<176:05:39, 53.14s/it, gradient_norm_after_clip=0.0115, "
        "gradient_norm_before_clip=0.011===== Memory before validation ====="
    )
    row = frame_one(line)
    assert row["message"] == "===== Memory before validation ====="
    assert row["glued"].endswith("gradient_norm_before_clip=0.011")
    bars = parse([line]).filter(event="progress_bar")
    assert bars.select("line", "values").rows() == [(1, [254, 12184])]


def test_a_glued_bar_is_a_progress_bar_of_its_own_not_of_the_rank_after_it():
    # axolotl-ai-cloud/axolotl#2684, verbatim: the main process's tokenizer bar, then rank 1's
    # socket timeout on the same line
    line = (
        "Tokenizing Prompts (num_proc=64):  92%|█████████▏| 328986/359152 [29:58<12:05, 41.59 "
        "examples/s][rank1]:[W516 14:34:56.853490829 socket.cpp:464] [c10d] waitForInput: poll "
        "for socket SocketImpl(fd=79, addr=[localhost]:41170, remote=[localhost]:29500) "
        "returned 0, likely a timeout"
    )
    bars = parse([line]).filter(event="progress_bar")
    assert bars.select("line", "rank", "values").to_dicts() == [
        {"line": 1, "rank": None, "values": [328986, 359152]}
    ]


def test_a_bar_alone_stays_for_the_parsers_that_read_its_counts():
    lines = [
        "  1%|▏         | 24/1752 [01:08<1:22:56,  2.88s/it]",
        # accelerate-157-tqdm-uneven-lengths: notebook_output.txt (huggingface/accelerate#157)
        "18679/18686 [1:50:07<00:02, 2.83it/s]",
        "100%",
    ]
    assert [row["message"] for row in frame(lines)] == lines


def test_carriage_return_redraws_leave_what_the_terminal_showed():
    row = frame_one(
        "[default0]:  5%|▌         | 5/100 [00:01<00:19,  4.98it/s]\r 10%|█         | 10/100 "
        "[00:02<00:18,  4.99it/s]\r[rank0]: Traceback (most recent call last):"
    )
    assert (row["message"], row["prefix_rank"], row["prefix_local_rank"]) == (
        "Traceback (most recent call last):",
        0,
        0,
    )
    assert row["framing"] == "torchrun_tee+carriage_return+torch_rank"


def test_trailing_carriage_return_is_dropped():
    assert frame_one("rank=0 step=1 stage=x\r")["message"] == "rank=0 step=1 stage=x"
    assert frame_one(" 10%|█  | 10/100 [00:02<00:18,  4.99it/s]\r")["message"] == (
        " 10%|█  | 10/100 [00:02<00:18,  4.99it/s]"
    )


def test_ansi_colours_are_removed_before_prefixes_are_read():
    row = frame_one("\x1b[1m\x1b[36m[default1]:\x1b[0m\x1b[31mWARNING\x1b[0m rank=1 step=2")
    assert (row["message"], row["prefix_local_rank"]) == ("WARNING rank=1 step=2", 1)


def test_colours_a_syslog_wrote_as_escaped_text_are_removed_too():
    # vllm-project/vllm#1160: rsyslog writes the escape character as `#033`
    row = frame_one("#033[2m#033[33m(raylet)#033[0m Refer to the documentation on how to address")
    assert row["message"] == "(raylet) Refer to the documentation on how to address"


def test_a_paste_s_line_number_gutter_is_peeled_first():
    # hiyouga/LlamaFactory#8261, verbatim (the paste numbers every line)
    lines = [
        "[1786] [rank0]:[E602 11:17:52.399441451 ProcessGroupNCCL.cpp:2103] [PG ID 1 PG GUID 1 Rank 0] First PG on this rank to signal dumping.",
        "[1787] [rank2]:[E602 11:17:52.400612945 ProcessGroupNCCL.cpp:632] [Rank 2] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=2847, OpType=ALLREDUCE, NumelIn=197140480, NumelOut=197140480, Timeout(ms)=600000) ran for 600091 milliseconds before timing out.",
    ]
    rows = frame(lines)
    assert [row["prefix_rank"] for row in rows] == [0, 2]
    assert rows[0]["framing"] == "gutter+torch_rank"


def test_a_kaggle_log_s_seconds_and_line_number_are_a_gutter():
    # AneKazek/malesbgt, a Kaggle notebook's log committed verbatim: the seconds since the
    # start, the output's line number, then the line
    lines = [
        "704.7s\t1344\t[rank0]: RuntimeError: [enforce fail at inline_container.cc:815] . PytorchStreamWriter failed writing file data/1661: file write failed",
        "704.7s\t1388\t[rank1]:[E325 17:13:23.163175227 ProcessGroupGloo.cpp:145] Rank 1 successfully reached monitoredBarrier, but received errors while waiting for send/recv from rank 0. Please check rank 0",
        "704.7s\t1443\tE0325 17:13:24.154000 1874 torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: 1) local_rank: 0 (pid: 1886) of binary: /kaggle/working/.venv/bin/python",
    ]
    rows = frame(lines)
    assert [row.get("prefix_rank") for row in rows] == [0, 1, None]
    assert rows[0]["message"].startswith("RuntimeError: [enforce fail at inline_container.cc:815]")
    assert rows[2]["message"].startswith("E0325 17:13:24.154000 1874 torch/distributed/")


SAMPLES = Path(__file__).parents[2] / "sample_logs"


@pytest.mark.parametrize("sample", ["swallowed_exception", "tee_step_lines_stall"])
@pytest.mark.parametrize(
    "numbering",
    [["cat", "-n"], ["nl", "-ba"]],
    ids=["cat -n", "nl -ba"],
)
def test_line_numbers_a_tool_wrote_in_front_of_every_line_are_peeled(tmp_path, sample, numbering):
    # a run here: the samples' logs as `cat -n` and `nl` number them (`     1\tW1130 15:04:26...`);
    # unpeeled, a traceback's `[rank1]:` or a tee prefix is no longer at the line's start
    logs = SAMPLES / sample / "logs"
    numbered = tmp_path / "logs"
    shutil.copytree(logs, numbered)
    for log in numbered.rglob("*.log"):
        written = subprocess.run([*numbering, str(log)], capture_output=True, check=True).stdout
        log.write_bytes(written)
    plain, peeled = analyze(logs).verdict, analyze(numbered).verdict
    assert (peeled.finding.kind, peeled.ranks) == (plain.finding.kind, plain.ranks)
    assert peeled.headline == plain.headline


def test_a_number_that_does_not_grow_is_no_gutter():
    # NVIDIA/nccl#1612, verbatim: NCCL lines that kept only their device
    lines = [
        "[0] misc/socket.cc:71 NCCL WARN socketProgress: Connection closed by remote peer 10.10.1.3<36138>",
        "[0] NCCL INFO misc/socket.cc:80 -> 6",
        "[0] NCCL INFO misc/socket.cc:474 -> 6",
    ]
    assert [row["message"] for row in frame(lines)] == lines


def test_a_glued_line_s_own_torchrun_prefix_is_its_rank():
    # huggingface/nanotron#204, verbatim: rank 0's bar, then rank 2's report on the same line
    row = frame_one(
        "[default0]:Grouping texts in chunks of 2049:   8%|▊         | 726000/9672101 [02:32<30:38, 4866.01 examples/s][default2]:[E ProcessGroupNCCL.cpp:475] [Rank 2] Watchdog caught "
    )
    assert (row["prefix_local_rank"], row["glued_local_rank"]) == (2, 0)
    assert row["message"] == "[E ProcessGroupNCCL.cpp:475] [Rank 2] Watchdog caught"


# ultralytics/yolov5#9163, verbatim (tests/data/threads): rank 0's label scan at 6%, its bar cut
# before its counts by the watchdog's record
CUT_BAR = (THREADS / "yolov5_9163_label_scan.log").read_text(encoding="utf-8").splitlines()[0]


def test_a_record_that_cut_a_bar_before_its_counts_is_a_line_of_its_own():
    row = frame_one(CUT_BAR)
    assert row["message"].startswith("[E ProcessGroupNCCL.cpp:414] Some NCCL operations")
    assert row["glued"].endswith("0 corrupt:   6%|▋ ")
    bars = parse([CUT_BAR]).filter(event="progress_bar")
    assert bars.select("line", "values").rows() == [(1, [6, None])]


@pytest.mark.parametrize(
    "line",
    [
        "GPU util 50%| next batch",  # no record's bracketed header after it
        "  6%|▋         | 24/400",  # a bar that only lacks its time
    ],
)
def test_a_percentage_and_a_bar_sign_alone_glue_nothing(line):
    row = frame_one(line)
    assert row["message"] == line and row.get("glued") is None
