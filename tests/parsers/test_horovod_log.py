# ruff: noqa: E501 -- test data are verbatim log lines
"""Horovod's own error records (parsers/horovod_log.py)."""

from __future__ import annotations

from tests.builders import analyze_files, only, parsed_by

# NVIDIA-Merlin/NVTabular#1320 (horovodrun, two ranks), verbatim
BACKGROUND = "[1,1]<stderr>:[2021-12-14 10:18:27.983077: E /tmp/pip-install-mwp6l21a/horovod_1f03263b83654efeb4c82a546f8aadfa/horovod/common/operations.cc:649] [1]: Horovod background loop uncaught exception: CUDA error: invalid configuration argument"
SHUT_DOWN = [
    "[1,1]<stderr>:Traceback (most recent call last):",
    '[1,1]<stderr>:  File "torch_trainer.py", line 138, in <module>',
    "[1,1]<stderr>:    hvd.join(gpu_to_use)",
    "[1,1]<stderr>:horovod.common.exceptions.HorovodInternalError: Horovod has been shut down. This was caused by an exception on one of the ranks or an attempt to allreduce, allgather or broadcast a tensor after one of the ranks finished execution. If the shutdown was caused by an exception, you should see the exception in the log before the first shutdown message.",
]


def test_the_background_loops_death_is_the_ranks_exception():
    row = only(parsed_by("horovod_log", [BACKGROUND]))
    assert (row["event"], row["rank"], row["exc_message"]) == (
        "exception",
        1,
        "CUDA error: invalid configuration argument",
    )


def test_it_is_the_cause_the_shut_down_follows(tmp_path):
    analysis = analyze_files(
        tmp_path, {"output.log": ["[1,0]<stdout>:Training epoch 0", BACKGROUND, *SHUT_DOWN]}
    )
    verdict = analysis.verdict
    assert (verdict.finding.kind, verdict.ranks) == ("rank_exception", [1])
    assert "CUDA error: invalid configuration argument" in verdict.finding.summary
    (shut_down,) = [f for f in analysis.findings if "Horovod had shut down" in f.summary]
    assert shut_down.summary.endswith("error is reported above.")


# horovod/horovod#3472, verbatim: `horovodrun -np 2` with its gloo launcher, then the launcher's own
# traceback (cut where the stored copy ends)
GLOO_EXIT = [
    "Process 0 exit with status code 137.",
    "Traceback (most recent call last):",
    '  File "/home/shangyw/virtualenv/torch/bin/horovodrun", line 8, in <module>',
    "    sys.exit(run_commandline())",
    '  File "/home/shangyw/virtualenv/torch/lib/python3.6/site-packages/horovod/runner/launch.py", line 773, in run_commandline',
    "    _run(args)",
    '  File "/home/shangyw/virtualenv/torch/lib/python3.6/site-packages/horovod/runner/launch.py", line 763, in _run',
    "    return _run_static(args)",
]


def test_the_gloo_launchers_report_names_the_process_by_its_rank():
    ended = only(parsed_by("horovod_log", GLOO_EXIT[:1]))
    assert (ended["event"], ended["rank"], ended["signal"]) == ("fatal_signal", 0, "SIGKILL")
    other = only(parsed_by("horovod_log", ["Process 3 exit with status code 1."]))
    assert (other["event"], other["rank"], other["exitcode"]) == ("worker_failed", 3, 1)


def test_a_process_the_launcher_saw_killed_with_nothing_before_most_likely_ran_out_of_memory(
    tmp_path,
):
    verdict = analyze_files(tmp_path, {"console.log": GLOO_EXIT}).verdict
    assert verdict.finding.kind == "oom" and verdict.ranks == [0]
    assert "`exit status code 137`" in verdict.finding.summary
