# ruff: noqa: E501 -- test data are verbatim log lines
"""SGLang's scheduler watchdog (parsers/sglang.py)."""

from __future__ import annotations

from tests.builders import analyze_files, kinds, parsed_by

# sgl-project/sglang#3752, verbatim: every TP scheduler's watchdog fires within a second, then
# the server's main process kills its process tree and the shell says so
WATCHDOGS_FIRED = [
    "[2025-03-09 00:57:15 TP4] Watchdog timeout (self.watchdog_timeout=300)",
    "[2025-03-09 00:57:15 TP6] Watchdog timeout (self.watchdog_timeout=300)",
    "[2025-03-09 00:57:15 TP1] Watchdog timeout (self.watchdog_timeout=300)",
    "[2025-03-09 00:57:15 TP2] Watchdog timeout (self.watchdog_timeout=300)",
    "[2025-03-09 00:57:15 TP5] Watchdog timeout (self.watchdog_timeout=300)",
    "[2025-03-09 00:57:15 TP7] Watchdog timeout (self.watchdog_timeout=300)",
    "[2025-03-09 00:57:16 TP3] Watchdog timeout (self.watchdog_timeout=300)",
    "[2025-03-09 00:57:16 TP0] Watchdog timeout (self.watchdog_timeout=300)",
    "[2025-03-09 00:57:20] Received sigquit from a child proces. It usually means the child failed.",
    "Killed",
]


def test_a_scheduler_s_watchdog_is_its_rank_s_timeout():
    rows = parsed_by("sglang", WATCHDOGS_FIRED).filter(event="collective_timeout")
    assert sorted(rows.get_column("rank").to_list()) == list(range(8))
    assert set(rows.get_column("timeout_ms").to_list()) == {300_000}


def test_the_kill_after_every_rank_timed_out_is_the_teardown_not_a_cause(tmp_path):
    analysis = analyze_files(tmp_path, {"server.log": WATCHDOGS_FIRED})
    assert analysis.verdict.finding.kind == "collective_timeout"
    assert analysis.verdict.finding.ranks == list(range(8))
    assert "oom" not in kinds(analysis) and "rank_exception" not in kinds(analysis)
    assert analysis.unrecognised_lines == 0
