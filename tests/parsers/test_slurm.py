"""SLURM's reports of how a step's tasks ended (parsers/slurm.py), on verbatim lines."""

from __future__ import annotations

import polars as pl

from tests.builders import analyze_files, finding, parsed_by

# chrisknewman/tusas#149, verbatim
OOM_KILLED = [
    "slurmstepd: error: Detected 1 oom_kill event in StepId=440575.0. Some of the step tasks have been OOM Killed.",
    "srun: error: nid001277: tasks 1-3: Out Of Memory",
    "srun: Terminating StepId=440575.0",
    "slurmstepd: error: *** STEP 440575.0 ON nid001277 CANCELLED AT 2023-12-05T07:16:01 ***",
]


def test_srun_names_the_tasks_the_oom_killer_ended():
    found = parsed_by("slurm", OOM_KILLED, file="slurm-440575.out")
    assert found.get_column("event").to_list() == ["host_oom", "host_oom", "step_cancelled"]
    task_line = found.filter(found.get_column("line") == 2).row(0, named=True)
    assert (task_line["host"], task_line["values"]) == ("nid001277", [1, 2, 3])


def test_a_task_exit_keeps_its_code():
    # huggingface/accelerate#2960, verbatim
    line = "srun: error: SH-IDC1-10-140-24-95: task 0: Exited with exit code 1"
    found = parsed_by("slurm", [line]).row(0, named=True)
    assert (found["event"], found["exitcode"], found["values"]) == ("task_exit", 1, [0])


def test_host_memory_is_the_cause_and_said_so(tmp_path):
    analysis = analyze_files(tmp_path, {"slurm-440575.out": OOM_KILLED})
    oom = finding(analysis, "oom")
    assert oom.ranks == [1, 2, 3] and oom.details["host_memory"]
    assert "host ran out of memory (not the GPU)" in oom.summary
    assert "#SBATCH --mem" in oom.fix
    assert analysis.recognised_lines == 4
    assert analysis.verdict.headline.startswith("Ranks 1-3 ran out of host memory on nid001277")


def test_a_huge_task_range_is_cut_before_it_is_made():
    # hostile text in srun's shape: a range of a trillion tasks must not be built
    line = "srun: error: node1: tasks 0-999999999999: Out Of Memory"
    found = parsed_by("slurm", [line]).row(0, named=True)
    assert len(found["values"]) == 4096 and found["values"][:3] == [0, 1, 2]


def test_many_huge_ranges_on_one_line_share_one_list_s_worth_of_ids():
    # hostile text: a thousand ranges of ten thousand tasks make no more ids than one list
    line = "srun: error: node1: tasks " + ",".join(["0-9999"] * 1000) + ": Exited with exit code 1"
    found = parsed_by("slurm", [line]).row(0, named=True)
    assert 0 < len(found["values"]) <= 4096 and found["values"][:2] == [0, 1]


def test_only_a_file_s_first_reports_have_their_task_lists_made():
    # srun writes one report per group of tasks that ended alike: a file of thousands of them
    # is no job's, and their lists are not all built
    lines = [f"srun: error: node{i}: tasks 0-4095: Exited with exit code 1" for i in range(300)]
    found = parsed_by("slurm", lines).sort("line")
    made = found.get_column("values").list.len().fill_null(0).to_list()
    assert made[:256] == [4096] * 256 and made[256:] == [0] * 44
    assert found.height == 300  # every report is still read


def test_the_oom_kill_report_from_slurmstepds_own_log_is_host_memory(tmp_path):
    # hurryingauto3/navsim-ijepa-planning-agent, JOB_269582_OOM_POSTMORTEM.md, verbatim: the
    # step's log lines carry slurmstepd's time stamp, not its name; the count grows with each
    # kill, which is no progress
    lines = [
        '[rank6]:[W1016 08:52:32.551] Failed to check the "should dump" flag on TCPStore',
        "[2025-10-16T08:52:15.650] error: Detected 3 oom_kill events in StepId=269582.0",
        "[2025-10-16T08:52:17.707] error: Detected 4 oom_kill events in StepId=269582.0",
        "[2025-10-16T08:52:20.549] error: Detected 5 oom_kill events in StepId=269582.0",
    ]
    analysis = analyze_files(tmp_path, {"slurm-269582.out": lines})
    assert analysis.verdict.finding.kind == "oom"
    assert analysis.verdict.finding.details["host_memory"]
    assert analysis.job.progress is None or analysis.job.progress.marks.is_empty()


def test_a_node_failure_names_the_node():
    # huggingface/m4-logs tr_141 (num_workers 06): a node crashed under a DeepSpeed run
    lines = [
        "srun: error: Node failure on jean-zay-iam37",
        "srun: Job step aborted: Waiting up to 62 seconds for job step to finish.",
        "slurmstepd: error: *** STEP 1943824.0 ON jean-zay-iam17 CANCELLED AT 2023-03-06T03:17:51 DUE TO NODE FAILURE, SEE SLURMCTLD LOG FOR DETAILS ***",
    ]
    rows = parsed_by("slurm", lines).sort("line")
    failed = rows.filter(pl.col("event") == "node_failure").row(0, named=True)
    assert failed["host"] == "jean-zay-iam37"
    cancelled = rows.filter(pl.col("event") == "step_cancelled").row(0, named=True)
    assert cancelled["exc_message"] == "NODE FAILURE"
