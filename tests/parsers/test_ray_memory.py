"""Ray's memory monitor killing workers (parsers/ray_memory.py)."""

from __future__ import annotations

from pathlib import Path

from tests.builders import analyze_files, finding, kinds, only, parsed_by

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


# 957944173/GAP, E1-0/runs/20260910_step60to70_e10/logs/launcher_attempt10_ram_oom_crash.log
# (at 1a8d7f5), verbatim: verl's driver raising Ray's OutOfMemoryError for its TaskRunner, and
# the monitor's words on the node and the task under it
TASK_KILLED = [
    '  File "/home/nf5468m6/miniconda3/envs/parallel-agent/lib/python3.10/site-packages/ray/_private/client_mode_hook.py", line 103, in wrapper',
    "    return func(*args, **kwargs)",
    '  File "/home/nf5468m6/miniconda3/envs/parallel-agent/lib/python3.10/site-packages/ray/_private/worker.py", line 2771, in get',
    "    values, debugger_breakpoint = worker.get_objects(object_refs, timeout=timeout)",
    '  File "/home/nf5468m6/miniconda3/envs/parallel-agent/lib/python3.10/site-packages/ray/_private/worker.py", line 921, in get_objects',
    "    raise value",
    "ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory.",
    "Memory on the node (IP: 10.29.128.7, ID: 38fa2a92ea532d8f01c076ded57079b07bd160d36c7ef5b2b9241f33) where the task (actor ID: f5a0d2adb7b8ec8fd0d857c001000000, name=TaskRunner.__init__, pid=1466649, memory used=1.42GB) was running was 121.35GB / 125.53GB (0.966714), which exceeds the memory usage threshold of 0.95. Ray killed this worker (ID: ba25116d6e85db6fd165a0cd107652d31d2d6fbc5f142f379dae1cbd) because it was the most recently scheduled task; to see more information about memory usage on this node, use `ray logs raylet.out -ip 10.29.128.7`. To see the logs of the worker, use `ray logs worker-ba25116d6e85db6fd165a0cd107652d31d2d6fbc5f142f379dae1cbd*out -ip 10.29.128.7. Top 10 memory users:",
]


def test_ray_s_out_of_memory_error_is_the_node_out_of_host_memory_not_the_gpu(tmp_path):
    killed = only(parsed_by("ray_memory", TASK_KILLED).filter(event="host_oom"))
    assert (killed["host"], killed["pid"], killed["value"]) == ("10.29.128.7", 1466649, 1)
    analysis = analyze_files(tmp_path, {"launcher.log": TASK_KILLED})
    assert analysis.verdict.headline.endswith("on 10.29.128.7 (Ray's memory monitor)")
    assert "GPU memory" not in analysis.verdict.headline
    assert kinds(analysis) == ["oom"]


def test_ray_s_out_of_memory_error_alone_is_still_the_host_s(tmp_path):
    error_only = TASK_KILLED[:-1]
    oom = finding(analyze_files(tmp_path, {"launcher.log": error_only}), "oom")
    assert oom.details["host_memory"] and "killed a task on the node" in oom.summary


# OpenRLHF/OpenRLHF#936 (its title, the reporter's own log line): the caller logged Ray's words
LOGGED_KILL = "ERROR - An error occurred during score calculation: Task was killed due to the node running low on memory."


def test_ray_s_words_for_the_kill_logged_by_its_caller_are_the_host_s(tmp_path):
    killed = only(parsed_by("ray_memory", [LOGGED_KILL]).filter(event="host_oom"))
    assert (killed["host"], killed["value"]) == (None, 1)
    oom = analyze_files(tmp_path, {"train.log": [LOGGED_KILL]}).verdict.finding
    assert oom.kind == "oom" and oom.details["host_memory"]


def test_the_raised_error_is_one_kill_not_two(tmp_path):
    # the exception line is the traceback parser's, not a second kill of this family's
    assert parsed_by("ray_memory", TASK_KILLED[:-1]).filter(event="host_oom").is_empty()


# OpenRLHF/OpenRLHF#171, verbatim: an older Ray names the node by its ID alone
NODE_BY_ID = "Memory on the node ( ID: 37f3bd9fa11d642c9e13892ee048dfc1f58c4597b77202a59a33835b) where the task (actor ID: 658f7608dec0f9a3428857d502000000, name=RewardModelRayActor.__init__, pid=5315, memory used=1.67GB) was running was 445.48GB / 468.75GB (0.950365), which exceeds the memory usage threshold of 0.95. Ray killed this worker (ID: 384252cde217c088bb1cceb44ff7b1fec88a53bd8e7c82273275b694) because it was the most recently scheduled task; to see more information about memory usage on this node, use `ray logs raylet.out -ip 33.123.202.4`. To see the logs of the worker, use `ray logs worker-384252cde217c088bb1cceb44ff7b1fec88a53bd8e7c82273275b694*out -ip 33.123.202.4. Top 10 memory users:"


def test_a_task_killed_on_a_node_named_by_its_id_alone_is_the_host_s(tmp_path):
    killed = only(parsed_by("ray_memory", [NODE_BY_ID]).filter(event="host_oom"))
    assert (killed["host"], killed["pid"]) == (None, 5315)
    oom = analyze_files(tmp_path, {"console.log": [NODE_BY_ID]}).verdict.finding
    assert oom.kind == "oom" and oom.details["host_memory"]
