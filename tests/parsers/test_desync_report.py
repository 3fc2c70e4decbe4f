"""Lines built from the format strings in pytorch/pytorch:torch/csrc/distributed/c10d/
TraceUtils.h (formats.md §4.8), and a filled-in report from pytorch/pytorch#152623."""

from __future__ import annotations

import pytest

from tests.builders import analyze_files, finding, only, parsed_by


@pytest.mark.parametrize(
    ("line", "ranks", "seq"),
    [
        (
            "\t - To our best knowledge, ranks [1, 3] are the lagging ranks that caused this timeout. They never joined any collectives",
            [1, 3],
            None,
        ),
        ("\t   - [1] joined but didn't finish collective #12 (count from 1)", [1], 12),
        (
            "\t     [3] finished collective #11, but didn't join collective #12 (count from 1)",
            [3],
            12,
        ),
    ],
)
def test_lagging_ranks(line, ranks, seq):
    row = only(parsed_by("desync_report", [line]))
    assert (row["event"], row["values"], row["seq"]) == ("desync_report", ranks, seq)


def test_timeout_at():
    row = only(parsed_by("desync_report", ["\t - [2] Timeout at collective: ALLREDUCE, #12"]))
    assert (row["event"], row["rank"], row["comm_rank"], row["op"], row["seq"]) == (
        "collective_timeout",
        2,
        2,
        "ALLREDUCE",
        12,
    )


def test_the_report_s_own_timeout_is_reported_with_the_rank_it_names(tmp_path):
    # pytorch/pytorch#152623 (a 2025 nightly): the report follows the watchdog's line; its lines
    # carry no `[rank0]:` prefix, the `[0]` is the reporting rank
    lines = [
        "[rank0]:[E515 18:36:47.343377708 ProcessGroupNCCL.cpp:1937] Rank 0",
        "         - [0] Timeout at collective: ALLREDUCE, #315",
        "         - To our best knowledge, the lagging/dead/mismatched ranks that caused the desync are:",
        "             [7] finished collective #182, but didn't join collective #183 (count from 1)",
    ]
    lines += [
        "         - Snapshot of ranks' latest states:",
        "           #182 finished ranks:",
        "             [7] finished ALLREDUCE",
        "           #315 started ranks:",
        "             [0, 1, 2] started ALLREDUCE",
    ]
    analysis = analyze_files(tmp_path, {"train.log": lines})
    # the `Rank 0` header says nothing by itself, but it is a line of PyTorch (c10_log)
    assert analysis.unrecognised_lines == 0
    timeout = finding(analysis, "collective_timeout")
    assert timeout.ranks == [0] and timeout.op == "ALLREDUCE" and timeout.seq == 315
    assert timeout.culprit_ranks == [7]
    assert timeout.evidence[0].text == lines[1]


def test_the_report_names_the_culprit_of_a_timeout(tmp_path):
    lines = [
        "[rank0]:[E1018 10:32:44.128370633 ProcessGroupNCCL.cpp:616] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=12, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600039 milliseconds before timing out.",
        "\t - To our best knowledge, ranks [3] are the lagging ranks that caused this timeout. They never joined any collectives",
    ]
    analysis = analyze_files(tmp_path, {"rank0.log": lines})
    assert finding(analysis, "collective_timeout").culprit_ranks == [3]
    assert analysis.verdict.ranks == [3]
