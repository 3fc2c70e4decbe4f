# ruff: noqa: E501 -- verbatim log lines are quoted whole in the docstring
"""The job's command that could not be run at all: the shell or SLURM's step daemon found no
such program, or could not execute it, so no process of the job started there.

    slurmstepd: error: execve(): torchrun: No such file or directory         (CSCfi/pytorch-ddp-examples#1)
    slurmstepd: error: execve(): start-agent.sh: Permission denied           (elyall/wandb_on_slurm#5)
    (head, rank=0, pid=1113) bash: torchrun: command not found               (skypilot-org/skypilot#5181)

Each is a `launch_failed` event with the program in `exc_message`. slurmstepd's `execve()`
is always the step's own command. A shell's `command not found` is only the job's launch when
it names a launcher or an interpreter (`torchrun`, `deepspeed`, `python3`, ...): a missing
`nvidia-smi` or `module` in a job script's set-up is no such failure. Open MPI's `orted` is its
launcher's own (parsers/mpirun.py).
"""

from __future__ import annotations

import polars as pl

from logforensics.registry import LineParser

# slurmstepd: error: execve(): torchrun: No such file or directory
EXECVE = (
    r"\bslurmstepd(?:-\S+)?: error: execve\(\): (?P<program>.+?): "
    r"(?:No such file or directory|Permission denied)\s*$"
)
# What starts a distributed job's processes: the launchers and the interpreter they run.
LAUNCHER = r"torchrun|deepspeed|accelerate|horovodrun|mpirun|mpiexec|srun|python(?:\d+(?:\.\d+)?)?"
# bash: torchrun: command not found      (dash: `/bin/sh: 1: torchrun: not found`)
SHELL_NOT_FOUND = (
    rf"(?:^|\s)(?:/(?:usr/)?bin/)?(?:ba|z|da)?sh: (?:line \d+: |\d+: )?"
    rf"(?P<program>(?:\S*/)?(?:{LAUNCHER})): (?:command )?not found\s*$"
)


def parse(lines: pl.DataFrame) -> pl.DataFrame:
    message = pl.col("message")
    program = pl.coalesce(message.str.extract(EXECVE, 1), message.str.extract(SHELL_NOT_FOUND, 1))
    return (
        lines.filter(pl.col("candidate"))
        .with_columns(program.alias("exc_message"))
        .filter(pl.col("exc_message").is_not_null())
        .select(
            "file",
            "line",
            pl.lit("launch_failed").alias("event"),
            pl.lit("error").alias("severity"),
            "exc_message",
        )
    )


PARSER = LineParser(
    name="exec_failure",
    literals=("error: execve(): ", "command not found", ": not found"),
    parse=parse,
)
