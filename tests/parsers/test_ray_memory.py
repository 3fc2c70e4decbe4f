"""Ray's memory monitor killing workers (parsers/ray_memory.py)."""

from __future__ import annotations

from pathlib import Path

from tests.builders import analyze_files, only, parsed_by

THREADS = Path(__file__).resolve().parent.parent / "data" / "threads"

# hiyouga/EasyR1#185, verbatim: the raylet's report reaches the driver's output, then the
# driver's own traceback for the worker it lost
RAY_OOM = [
    "(raylet) [2025-04-02 15:02:00,117 E 135782 135782] (raylet) node_manager.cc:3069: 1 Workers (tasks / actors) killed due to memory pressure (OOM), 0 Workers crashed due to other reasons at node (ID: 351e406b196f66bb45eaad02a3b8b4725babfa8cc12949432f7ad7d8, IP: 10.95.143.76) over the last time period.",
    "(raylet) ",
    "Traceback (most recent call last):",
    '  File "/usr/lib/python3.10/runpy.py", line 196, in _run_module_as_main',
    "    return _run_code(code, main_globals, None,",
]


def test_workers_ray_killed_for_memory_pressure_are_the_node_out_of_host_memory(tmp_path):
    killed = only(parsed_by("ray_memory", RAY_OOM).filter(event="host_oom"))
    assert (killed["host"], killed["value"]) == ("10.95.143.76", 1)
    verdict = analyze_files(tmp_path, {"driver.log": RAY_OOM}).verdict
    assert verdict.finding.kind == "oom" and verdict.ranks == []
    assert verdict.headline.endswith("on 10.95.143.76 (Ray's memory monitor)")


def test_a_period_with_no_worker_killed_is_no_failure():
    quiet = [RAY_OOM[0].replace("1 Workers (tasks", "0 Workers (tasks")]
    assert parsed_by("ray_memory", quiet).filter(event="host_oom").is_empty()


def test_a_report_wrapped_by_the_paste_is_read_from_its_words(tmp_path):
    # vllm-project/vllm#1160: the count and the node wrapped onto lines of their own, Ray's
    # colours written by syslog as `#033[..m`
    lines = (THREADS / "vllm1160_raylet_wrapped_syslog.log").read_text().splitlines()
    killed = only(parsed_by("ray_memory", lines).filter(event="host_oom"))
    # the paste cut its lines at 116 columns: joined back, the node's address is read too
    assert killed["line"] == 2 and killed["host"] == "10.0.167.26"
    verdict = analyze_files(tmp_path, {"raylet.log": lines}).verdict
    assert verdict.finding.kind == "oom"
    assert verdict.headline == (
        "The job ran out of host memory on 10.0.167.26 (Ray's memory monitor)"
    )
