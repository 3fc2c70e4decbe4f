"""Numbers read from logs are data, not sizes: one absurd rank, world size or list in an
otherwise normal job is quoted as an `implausible_number` warning, costs nothing, and changes
no other finding."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

from logforensics.api import Analysis, analyze
from logforensics.plausible import MAX_WORLD_SIZE
from logforensics.report.model import build_report
from logforensics.report.picture import RANK_MAP_MAX_ROWS, build_rank_map
from logforensics.report.render import render_html, render_json
from tests.builders import finding, kinds, marks, write_logs

MB = 2**20
HUGE_RANK = "rank=1999999999 step=3 stage=before_forward"
HUGE_LIST = "loader sizes: [" + ", ".join(["125"] * 199_999 + ["124"]) + "]"


def mapping(rank: int, world_size: int) -> str:
    return (
        f"{{'rank': {rank}, 'local_rank': {rank}, 'device': {rank}, "
        f"'world_size': {world_size}, 'host': 'node-0'}}"
    )


def skipping_job() -> dict[str, list[str]]:
    """Four ranks; rank 2 skips after_backward and after_step at step 3 (the verdict)."""
    files = {f"rank{r}.log": marks(r, range(6)) for r in (0, 1, 3)}
    files["rank2.log"] = marks(2, range(6), skip={3: ("after_backward", "after_step")})
    return files


def with_huge_rank(files: dict[str, list[str]]) -> tuple[str, int]:
    # another writer's mark interleaved in rank 1's log, just after its own step 3 mark
    files["rank1.log"].insert(13, HUGE_RANK)
    return "rank1.log", 14


def with_huge_world(files: dict[str, list[str]]) -> tuple[str, int]:
    for rank in range(4):
        files[f"rank{rank}.log"].insert(0, mapping(rank, 1_000_000_000))
    return "rank0.log", 1


def with_huge_list(files: dict[str, list[str]]) -> tuple[str, int]:
    files["rank0.log"].insert(0, HUGE_LIST)
    return "rank0.log", 1


def analyzed(root: Path, files: dict[str, list[str]]) -> tuple[Analysis, dict, str, str]:
    analysis = analyze(write_logs(root, files))
    report = build_report(analysis, str(root))
    return analysis, report, render_json(report), render_html(report, analysis)


def other_findings(analysis: Analysis) -> list[tuple]:
    return [
        (f.kind, f.ranks, f.culprit_ranks, f.step, f.stage, f.summary)
        for f in analysis.findings
        if f.kind != "implausible_number"
    ]


def rank_map_squares(page: str) -> int:
    """How many ranks the rank map draws (a bar stands for a run of ranks)."""
    section = page[page.index('id="rankmap-title"') :].split("</section>")[0]
    drawn = 0
    for first, last in re.findall(r"<title>ranks? (\d+)(?:-(\d+))?:", section):
        drawn += int(last or first) - int(first) + 1
    return drawn


@pytest.mark.parametrize(
    ("add_bad_line", "said"),
    [
        (with_huge_rank, "Rank 1,999,999,999 (rank1.log:14) cannot be right"),
        (with_huge_world, "World size 1,000,000,000 (4 lines, the first at rank0.log:1)"),
        (with_huge_list, "A `loader sizes` list of 200,000 numbers (rank0.log:1)"),
    ],
    ids=["rank", "world_size", "loader_sizes"],
)
def test_one_absurd_number_is_quoted_and_changes_nothing_else(tmp_path, add_bad_line, said):
    clean, clean_report, _, _ = analyzed(tmp_path / "clean", skipping_job())
    files = skipping_job()
    file, line = add_bad_line(files)
    analysis, report, json_text, page = analyzed(tmp_path / "bad", files)

    flagged = finding(analysis, "implausible_number")
    assert (flagged.severity, flagged.role, flagged.ranks) == ("warning", "context", [])
    assert said in flagged.summary
    quoted = flagged.evidence[0]
    assert (quoted.file, quoted.line) == (file, line)
    assert files[file][line - 1].startswith(quoted.text.split(" … (")[0])  # whole, or cut

    assert analysis.verdict.finding.kind == clean.verdict.finding.kind == "stage_divergence"
    assert analysis.verdict.ranks == clean.verdict.ranks == [2]
    assert analysis.verdict.finding.summary == clean.verdict.finding.summary
    assert other_findings(analysis) == other_findings(clean)
    assert analysis.job.ranks_seen == clean.job.ranks_seen == (0, 1, 2, 3)
    assert [row["rank"] for row in report["ranks"]] == [0, 1, 2, 3]
    assert report["world_size"] is None and "missing_rank" not in kinds(analysis)
    assert analysis.job.progress.ranks == (0, 1, 2, 3)

    assert rank_map_squares(page) == rank_map_squares(render_html(clean_report, clean)) == 4
    assert len(json_text.encode()) < MB and len(page.encode()) < MB


def test_a_rank_at_or_above_the_stated_world_size_is_left_out(tmp_path):
    files = skipping_job()
    for rank in range(4):
        files[f"rank{rank}.log"].insert(0, mapping(rank, 4))
    files["rank3.log"].insert(9, "rank=4 step=2 stage=before_forward")
    analysis = analyze(write_logs(tmp_path, files))
    flagged = finding(analysis, "implausible_number")
    assert "Rank 4 (rank3.log:10) cannot be right: the job states a world size of 4" in (
        flagged.summary
    )
    assert flagged.evidence[0].text == "rank=4 step=2 stage=before_forward"
    assert analysis.job.ranks_seen == (0, 1, 2, 3)
    assert analysis.verdict.ranks == [2] and "missing_rank" not in kinds(analysis)


def test_a_negative_rank_is_left_out(tmp_path):
    files = skipping_job()
    files["rank0.log"].insert(5, "rank=-1 step=1 stage=before_backward")
    analysis = analyze(write_logs(tmp_path, files))
    flagged = finding(analysis, "implausible_number")
    assert "Rank -1 (rank0.log:6) cannot be right: ranks count from 0" in flagged.summary
    assert analysis.job.ranks_seen == (0, 1, 2, 3)
    assert analysis.verdict.ranks == [2]


@pytest.mark.parametrize(
    ("line", "said"),
    [
        (
            "[rank0]: RuntimeError: [Rank 0]: Ranks 1, 1999999999 failed to pass monitoredBarrier in 2000 ms",
            "Rank 1,999,999,999 (rank0.log:25) cannot be right",
        ),
        (
            "Rank 3 successfully reached monitoredBarrier, but received errors while waiting for send/recv from rank 1999999999. Please check rank 0 logs for faulty rank.",
            "Peer rank 1,999,999,999 (rank0.log:25) cannot be right",
        ),
    ],
    ids=["barrier_list", "peer"],
)
def test_a_rank_another_line_names_is_left_out(tmp_path, line, said):
    files = skipping_job()
    files["rank0.log"].append(line)
    analysis = analyze(write_logs(tmp_path, files))
    assert said in finding(analysis, "implausible_number").summary
    assert "monitored_barrier" not in kinds(analysis)
    assert analysis.verdict.ranks == [2]


def test_an_absurd_mark_does_not_take_its_file_from_the_rank_that_wrote_it(tmp_path):
    traceback = [
        "Traceback (most recent call last):",
        '  File "/work/train.py", line 120, in main',
        '    raise ValueError("corrupt sample 1731")',
        "ValueError: corrupt sample 1731",
    ]
    files = {f"log_{r}.txt": marks(r, range(6)) for r in (0, 1)}
    files["log_2.txt"] = marks(2, range(3)) + traceback
    files["log_2.txt"].insert(3, HUGE_RANK)
    analysis = analyze(write_logs(tmp_path, files))
    # the traceback's rank comes from the rest of its file: rank 2's marks, not the stray one
    assert finding(analysis, "rank_exception").ranks == [2]
    assert analysis.verdict.finding.kind == "rank_exception"
    assert finding(analysis, "implausible_number").evidence[0].line == 4


@pytest.mark.parametrize(
    "line",
    [
        "rank=3000000000 step=3 stage=before_forward",
        "[rank2147483648]:2026-11-29 10:00:03,000 INFO rank=2147483648 step=3 stage=before_forward",
        "[rank0]: RuntimeError: [Rank 0]: Ranks 99999999999999999999999 failed to pass monitoredBarrier in 2000 ms",
        "node-0:4821:4821 [0] NCCL INFO comm 0x7f1c0c002f80 rank 9223372036854775808 nranks 99999999999 cudaDev 0 busId 1000 - Init COMPLETE",
    ],
    ids=["mark", "prefix", "rank_list", "nccl"],
)
def test_a_number_too_large_for_its_column_is_no_crash(tmp_path, line):
    files = skipping_job()
    files["rank0.log"].append(line)
    files["rank_99999999999.log"] = [line]
    analysis = analyze(write_logs(tmp_path, files))
    assert analysis.verdict.ranks == [2] and analysis.job.ranks_seen == (0, 1, 2, 3)
    report = build_report(analysis, str(tmp_path))
    assert render_json(report) and render_html(report, analysis)


@pytest.mark.parametrize(
    "line",
    [
        # fdbtrs/IDiff-Face#14's store barrier wait and sgl-project/sglang#3752's watchdog,
        # their numbers made too large: lines that tell a story of their own, read without a
        # rule or parser failing
        "[2025-03-11 05:21:04,421][torch.distributed.distributed_c10d][INFO] - Waiting in store based barrier to initialize process group for rank: 4294967296, key: store_based_barrier_key:1 (world_size=8, worker_count=1, timeout=0:30:00)",
        "[2025-03-09 00:57:15 TP4] Watchdog timeout (self.watchdog_timeout=99999999999999999999999999)",
        # NVIDIA/nccl#1911's RAS status line, its GPU's number made too large
        "  Rank 12 -- GPU 4294967296 managed by process 323032 on node 10.137.190.124",
    ],
    ids=["store_barrier", "sglang_watchdog", "ras_gpu"],
)
def test_an_event_with_a_number_too_large_is_read_without_a_failure(tmp_path, line):
    analysis = analyze(write_logs(tmp_path, {"console.log": [line, line]}))
    assert analysis.rule_errors == ()
    report = build_report(analysis, str(tmp_path))
    assert render_json(report) and render_html(report, analysis)


def test_a_world_size_within_reach_is_believed(tmp_path):
    files = {f"rank{r}.log": [mapping(r, 8)] + marks(r, range(3)) for r in range(6)}
    analysis = analyze(write_logs(tmp_path, files))
    assert finding(analysis, "missing_rank").ranks == [6, 7]
    assert "implausible_number" not in kinds(analysis)


def test_a_large_believed_world_is_counted_not_listed(tmp_path):
    files = skipping_job()
    for rank in range(4):
        files[f"rank{rank}.log"].insert(0, mapping(rank, 1_000_000))
    analysis, report, json_text, page = analyzed(tmp_path, files)
    missing = finding(analysis, "missing_rank")
    assert "The world size is 1000000 but 999,996 ranks left no log line" in missing.summary
    assert missing.ranks == [] and missing.details["absent"] == 999_996
    assert "implausible_number" not in kinds(analysis) and analysis.verdict.ranks == [2]
    # the absent ranks fold into one bar: a world of a million costs a few rows
    section = page[page.index('id="rankmap-title"') :].split("</section>")[0]
    assert section.count("<rect") <= 8 and "no log line (999996)" in section
    assert len(json_text.encode()) < MB and len(page.encode()) < MB


def test_a_line_too_long_to_quote_is_cut(tmp_path):
    files = skipping_job()
    with_huge_list(files)
    quoted = finding(analyze(write_logs(tmp_path, files)), "implausible_number").evidence[0]
    assert quoted.text.startswith("loader sizes: [125, 125, ")
    assert quoted.text.endswith("more characters)") and len(quoted.text) < 2100


def test_the_rank_map_of_a_huge_world_folds_the_ranks_alike():
    findings = [{"role": "root_cause", "ranks": [900_000], "culprit_ranks": []}]
    ranks_map = build_rank_map(findings, [0, 1, 2, 3], MAX_WORLD_SIZE, [900_000])
    assert len(ranks_map.runs) < 12
    assert "rank 900000: named by the verdict" in [run.title for run in ranks_map.runs]
    assert ("rank-absent", "no log line", MAX_WORLD_SIZE - 5) in [
        entry[:3] for entry in ranks_map.legend
    ]
    # ranks that alternate never fold: the rows drawn stop at the limit, the note says so
    many_seen = list(range(0, 2 * 32 * 2 * RANK_MAP_MAX_ROWS, 2))
    alternating = build_rank_map([], many_seen, None, [])
    assert len(alternating.row_labels) == RANK_MAP_MAX_ROWS
    assert "more rows of ranks are not drawn" in alternating.note


@pytest.mark.parametrize(
    ("module", "name"),
    [
        ("tests.parsers.test_fr_trace_text", "REPORT"),
        ("tests.parsers.test_fr_attribution", "GPU_ERROR_REPORT"),
        ("tests.parsers.test_shape_prints", "GATHERED_LOGITS"),
        ("tests.rules.test_rank_exception", "WINDOWS_CRASH"),
    ],
)
def test_numbers_past_any_integer_in_real_lines_break_no_parser_or_rule(tmp_path, module, name):
    # the real lines of families that read lists of numbers, every number made 30 digits long
    lines = getattr(importlib.import_module(module), name)
    huge = [re.sub(r"\d+", "9" * 30, line) for line in lines]
    analysis = analyze(write_logs(tmp_path, {"console.log": huge}))
    assert not analysis.rule_errors
    report = build_report(analysis, str(tmp_path))
    assert render_json(report) and render_html(report, analysis)
