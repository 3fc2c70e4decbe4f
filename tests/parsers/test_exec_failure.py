# ruff: noqa: E501 -- test data are verbatim log lines
"""A job's command that could not be run at all (parsers/exec_failure.py)."""

from __future__ import annotations

import polars as pl
import pytest

from logforensics.i18n import translate
from tests.builders import analyze_files, parsed_by
from tests.test_i18n import english_runs

# CSCfi/pytorch-ddp-examples#1, verbatim: the module srun ran had no torchrun ("The torchrun
# command was missing, I just added it.")
NO_TORCHRUN_IN_THE_STEP = [
    "NOTE: This module uses Singularity. Some commands execute inside the container",
    "(e.g. python3, pip3).",
    "",
    "",
    "Due to MODULEPATH changes, the following have been reloaded:",
    "  1) openblas/0.3.18-omp     2) openmpi/4.1.2",
    "",
    "The following have been reloaded with a version change:",
    "  1) gcc/11.2.0 => gcc/9.4.0",
    "",
    "slurmstepd: error: execve(): torchrun: No such file or directory",
    "srun: error: g1301: task 0: Exited with exit code 2",
    "srun: launch/slurm: _step_signal: Terminating StepId=3022331.0",
]
# skypilot-org/skypilot#5181, verbatim: both nodes' shells found no torchrun (the maintainer:
# `uv pip install` had left it off the PATH)
NO_TORCHRUN_ON_ANY_NODE = [
    "(head, rank=0, pid=1113) Starting distributed training, head node: 10.1.182.124",
    "(head, rank=0, pid=1113) bash: torchrun: command not found",
    "(worker1, rank=1, pid=914, ip=10.1.145.81) Starting distributed training, head node: 10.1.182.124",
    "(worker1, rank=1, pid=914, ip=10.1.145.81) bash: torchrun: command not found",
]
# elyall/wandb_on_slurm#5, verbatim (the issue's own quoting): a script slurmstepd could not run
NOT_EXECUTABLE = [
    "slurmstepd: error: execve(): start-agent.sh: Permission denied",
    "srun: error: my-node01: task 0: Exited with exit code 13",
]


@pytest.mark.parametrize(
    ("lines", "programs"),
    [
        (NO_TORCHRUN_IN_THE_STEP, ["torchrun"]),
        (NO_TORCHRUN_ON_ANY_NODE, ["torchrun", "torchrun"]),
        (NOT_EXECUTABLE, ["start-agent.sh"]),
    ],
    ids=["execve", "shell", "permission"],
)
def test_a_command_that_could_not_be_run_is_a_launch_that_failed(lines, programs):
    failed = parsed_by("exec_failure", lines).filter(pl.col("event") == "launch_failed")
    assert failed.get_column("exc_message").to_list() == programs


@pytest.mark.parametrize(
    "lines", [NO_TORCHRUN_IN_THE_STEP, NO_TORCHRUN_ON_ANY_NODE], ids=["execve", "shell"]
)
def test_the_job_never_started_and_the_verdict_names_the_program(tmp_path, lines):
    verdict = analyze_files(tmp_path, {"console.log": lines}).verdict
    assert verdict.finding.kind == "missing_rank"
    assert "no executable `torchrun`" in verdict.finding.summary
    assert "~/.bashrc" in verdict.finding.fix
    for english in (verdict.finding.summary, verdict.finding.fix):
        assert english_runs(translate(english, "zh")) == []


def test_a_missing_tool_in_a_job_script_s_set_up_is_no_failed_launch():
    # a job script's own `nvidia-smi` where the node has none: the job's launch is not this
    lines = ["bash: nvidia-smi: command not found", "bash: module: command not found"]
    assert parsed_by("exec_failure", lines).filter(pl.col("event").is_not_null()).is_empty()


def test_a_launch_that_failed_before_the_job_went_on_is_not_the_verdict(tmp_path):
    # the same step's first attempt, then the job training in the same file
    went_on = [
        *NO_TORCHRUN_IN_THE_STEP[10:12],
        *(f"rank=0 step={step} stage=before_backward" for step in range(3)),
    ]
    analysis = analyze_files(tmp_path, {"console.log": went_on})
    assert not any(f.details.get("not_launched") for f in analysis.findings)
