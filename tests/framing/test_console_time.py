# ruff: noqa: E501 -- test data are verbatim log lines
"""A CI console's clock on every line (Jenkins' timestamper, CircleCI): peeled where it stamps
most of a file's lines, so the tracebacks under it read as tracebacks."""

from __future__ import annotations

from tests.builders import analyze_files, kinds
from tests.framing import frame

# pytorch/pytorch#11364 (Jenkins), verbatim
JENKINS = [
    "02:21:52 test_get_rank_size_full_group (__main__.TestDistBackend) ... ok",
    "02:21:53 test_get_rank_size_group (__main__.TestDistBackend) ... Process process 1:",
    "02:21:53 Traceback (most recent call last):",
    '02:21:53   File "/opt/conda/lib/python3.6/site-packages/torch/distributed/c10d/distributed_c10d.py", line 275, in _new_process_group_helper',
    "02:21:53     pg = ProcessGroupGloo(store, rank, world_size)",
    "02:21:53 RuntimeError: Broken pipe",
]
# pytorch/pytorch#30676 (CircleCI), verbatim
CIRCLECI = [
    "Dec 03 17:59:26 Traceback (most recent call last):",
    'Dec 03 17:59:26   File "/opt/conda/lib/python3.6/site-packages/torch/distributed/rendezvous.py", line 168, in _env_rendezvous_handler',
    "Dec 03 17:59:26     store = TCPStore(master_addr, master_port, world_size, start_daemon)",
    "Dec 03 17:59:26 RuntimeError: Address already in use",
]


def test_the_consoles_clock_is_peeled_from_every_line():
    assert [row["message"] for row in frame(JENKINS)][2:] == [
        "Traceback (most recent call last):",
        '  File "/opt/conda/lib/python3.6/site-packages/torch/distributed/c10d/distributed_c10d.py", line 275, in _new_process_group_helper',
        "    pg = ProcessGroupGloo(store, rank, world_size)",
        "RuntimeError: Broken pipe",
    ]
    assert frame(CIRCLECI)[-1]["message"] == "RuntimeError: Address already in use"


def test_a_clock_on_a_few_lines_only_is_left_alone():
    lines = ["12:00:01 a job's own line", "plain", "plain too", "plain again"]
    assert frame(lines)[0]["message"] == "12:00:01 a job's own line"


def test_the_stamped_logs_are_read_as_failures(tmp_path):
    assert "peer_lost" in kinds(analyze_files(tmp_path, {"ci.log": JENKINS}))
    verdict = analyze_files(tmp_path / "b", {"ci.log": CIRCLECI}).verdict
    assert verdict.finding.kind == "missing_rank"
    assert "Address already in use" in verdict.finding.summary
