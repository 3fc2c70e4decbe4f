"""Which launcher started a job's processes, as far as its lines show.

A fix is worth more in the words of the launcher that was used: how a process learns its
local rank, or whether torchrun's `@record` can make a worker's exception show first.
"""

from __future__ import annotations

import polars as pl

from logforensics.job import Job

# The launcher (or framework) a job's lines show, most telling first: a launch command, else
# what the lines themselves carry (Open MPI's `--tag-output` prefix, a framework's logger).
LAUNCHERS = (
    ("accelerate", r"\baccelerate launch\b"),
    ("deepspeed", r"(?i)\bdeepspeed\b"),
    # torchrun's command, or its agent's own lines (`torch/distributed/run.py:874]`)
    ("torchrun", r"\btorchrun\b|torch[./]distributed[./](?:run|launch|elastic)\b"),
    ("mpirun", r"(?i)\b(?:mpirun|mpiexec|horovodrun|horovod)\b|^\[\d+,\d+\]<std(?:out|err)>:"),
    ("srun", r"\bsrun\b"),
)
TORCHRUN = dict(LAUNCHERS)["torchrun"]


def launcher_of(job: Job) -> str:
    """`torchrun`, `srun`, `mpirun` (also Horovod), `deepspeed`, `accelerate`, or "" when the
    logs do not show how the processes were started."""
    commands = job.events.filter(pl.col("event") == "launch_command").get_column("message")
    texts = job.events.get_column("text")
    for lines in (commands, texts):
        for name, pattern in LAUNCHERS:
            if lines.str.contains(pattern).any():
                return name
    return ""


def shows_torchrun(job: Job) -> bool:
    """Whether torchrun's elastic agent ran the workers: its command, or its own lines (the
    agent's log records, a `ChildFailedError` summary). `accelerate launch` on several GPUs
    runs through it too."""
    return bool(job.events.get_column("text").str.contains(TORCHRUN).any())
