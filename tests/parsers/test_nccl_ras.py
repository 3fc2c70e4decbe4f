# ruff: noqa: E501 -- test data are verbatim log lines
"""NCCL's RAS report (parsers/nccl_ras.py) and the departures it names
(logforensics/ras_report.py)."""

from __future__ import annotations

import json

from tests.builders import analyze_files, parsed_by

# NVIDIA/nccl docs/userguide troubleshooting/ras.rst, verbatim: six ranks one operation behind,
# the report listing the ones behind under their count
MISMATCH_GROUP = [
    "#0-0 (27a079b828ff1a75) MISMATCH",
    "  Communicator ranks have different collective operation counts",
    "  26 ranks have launched up to operation 6650",
    "  6 ranks have launched up to operation 6649",
    "  Rank 0 -- GPU 0 managed by process 483072 on node 172.16.64.210",
]
# NVIDIA/nccl docs/examples/08_ras/01_fault_detection/README.md, verbatim: rank 7 made to sleep
STRAGGLER = [
    "Group     Comms      Nodes     Ranks     Ranks     Ranks   Status  Errors",
    "    #  in group   per comm  per node  per comm  in group",
    "    0         1          2         4         8         8  RUNNING  MISMATCH",
    "",
    "#0-0 (78db921d1c117b4a) MISMATCH",
    "  Communicator ranks have different AllReduce operation counts",
    "  7 ranks have launched up to operation 64",
    "  Rank 7 has launched up to operation 60 -- GPU 3 managed by process 1650386 on node node1",
]
# the same example with rank 7 made to exit: its data missing, then its process dead
GONE = [
    "#0-0 (1bdb83b038775869) INCOMPLETE",
    "  Missing communicator data from 1 rank",
    "  Rank 7 -- GPU 3 managed by process 3748990 on node node1",
    "",
    "DEAD",
    "  1 job process is considered dead (unreachable via the RAS network)",
    "  Process 3748990 on node node1 managing GPU 3",
]


def test_a_rank_listed_under_the_lower_count_is_behind():
    (rank,) = parsed_by("nccl_ras", MISMATCH_GROUP).filter(event="ras_rank").iter_rows(named=True)
    assert (rank["rank"], rank["value"], rank["pid"], rank["host"]) == (
        0,
        6649,
        483072,
        "172.16.64.210",
    )
    assert json.loads(rank["extra"]) == {"state": "behind", "front": 6650, "back": 6649}


def test_the_rank_that_stopped_launching_is_the_departure(tmp_path):
    analysis = analyze_files(tmp_path, {"ncclras_report.txt": STRAGGLER})
    verdict = analysis.verdict
    assert (verdict.finding.kind, verdict.ranks) == ("stage_divergence", [7])
    assert verdict.headline.startswith(
        "Rank 7 fell behind in collectives (NCCL RAS: operation 60 of 64)"
    )
    assert analysis.unrecognised_lines == 0


def test_a_rank_whose_process_is_gone_left_the_job(tmp_path):
    analysis = analyze_files(tmp_path, {"ncclras_reports.txt": GONE})
    verdict = analysis.verdict
    assert (verdict.finding.kind, verdict.ranks) == ("stage_divergence", [7])
    assert "process 3748990 on node node1, GPU 3" in verdict.finding.summary
    assert analysis.unrecognised_lines == 0


def test_a_report_with_no_rank_behind_names_nobody(tmp_path):
    healthy = [
        "Group     Comms      Nodes     Ranks     Ranks     Ranks   Status  Errors",
        "    #  in group   per comm  per node  per comm  in group",
        "    0         1          2         4         8         8  RUNNING      OK",
    ]
    analysis = analyze_files(tmp_path, {"ncclras_report.txt": healthy})
    assert analysis.verdict is None and analysis.unrecognised_lines == 0


# NVIDIA/nccl#1911, verbatim (the RAS client's report on a hung 4-node job): RAS lists the
# smaller group, here the two ranks ahead; the reporter: "rank 12 and rank 13 are not
# stragglers", the 30 ranks behind are the ones RAS does not name
AHEAD = [
    "NCCL version 2.26.2 compiled with CUDA 12.6",
    "CUDA runtime version 12060, driver version 12060",
    "",
    "Job summary",
    "===========",
    "",
    "  Nodes  Processes         GPUs  Processes     GPUs",
    "(total)   per node  per process    (total)  (total)",
    "      4          8            1         32       32",
    "",
    "Communicators... (0.00s)",
    "=============",
    "",
    "Group     Comms     Nodes     Ranks     Ranks     Ranks    Status  Errors",
    "    #  in group  per comm  per node  per comm  in group",
    "    0         1         4         8        32        32   RUNNING  MISMATCH",
    "",
    "Errors",
    "======",
    "",
    "Warnings",
    "========",
    "",
    "#0-0 (fa93daea854b060b) MISMATCH",
    "  Communicator ranks have different AllGather operation counts",
    "  30 ranks have launched up to operation 640",
    "  2 ranks have launched up to operation 641",
    "  Rank 12 -- GPU 4 managed by process 323032 on node 10.137.190.124",
    "  Rank 13 -- GPU 5 managed by process 323033 on node 10.137.190.124",
]


def test_ranks_listed_ahead_of_the_others_leave_the_ones_behind_unnamed(tmp_path):
    analysis = analyze_files(tmp_path, {"ncclras_report.txt": AHEAD})
    verdict = analysis.verdict
    assert (verdict.finding.kind, verdict.ranks) == ("stage_divergence", [])
    assert verdict.finding.blames_nobody and verdict.finding.ranks == [12, 13]
    assert verdict.headline.startswith(
        "The ranks NCCL's RAS report does not list fell behind in collectives (operation 640"
    )
    assert "ranks 12 and 13 only wait for them" in verdict.finding.summary
    assert analysis.unrecognised_lines == 0
