"""How the job was launched and with which debug settings, when the logs say so:

    + srun --label --ntasks-per-node=1 torchrun --nnodes=2 --nproc_per_node=2 train.py
    TORCH_DISTRIBUTED_DEBUG=DETAIL torchrun --nproc_per_node=4 train.py
    export NCCL_DEBUG=INFO
    [I1130 15:14:56.062390281 debug.cpp:48] [c10d] The debug level is set to DETAIL.

A variable only counts as set where the line sets it (an `export`, an assignment before a
command, the c10d banner); advice such as `run with NCCL_DEBUG=WARN for details` does not.
"""

from __future__ import annotations

import re

import polars as pl

from logforensics.registry import LineParser

LAUNCHERS = (
    "torchrun",
    "srun",
    "sbatch",
    "mpirun",
    "mpiexec",
    "deepspeed",
    "accelerate launch",
    "torch.distributed.run",
    "torch.distributed.launch",
)
# a shell's prompt before a command typed at it: `user@host:~/dir$ `, `(venv) root@host:/w# `
PROMPT = r"(?:\([\w.-]+\) )?[\w.-]+@[\w.-]+:[^\s$#]*[$#] "
# `+ srun ... torchrun ...` (set -x), `$ torchrun ...`, `VAR=x torchrun ...`, `/usr/bin/mpirun`
LAUNCH_COMMAND = (
    r"^(?:[+$] |"
    + PROMPT
    + r")?(?:[A-Z][A-Z0-9_]*=\S+ )*(?:\S*/)?(?:torchrun|srun|sbatch|mpirun|mpiexec|"
    r"deepspeed|accelerate launch|python[0-9.]* (?:-u )?-m torch\.distributed\.(?:run|launch))"
    r"(?:\s|$)"
)
# the launchers' own sentences are not commands (`mpirun noticed that process rank 1 ...`,
# `mpirun.real detected that one or more processes exited ...`)
LAUNCHER_SENTENCE = (
    r"^(?:\S*/)?(?:torchrun|srun|mpirun|mpiexec|deepspeed)\S* "
    r"(?:detected|noticed|has|was|could|is|will|failed)\b"
)
# torchrun's (and torch.distributed.launch's) processes: `--nproc_per_node=2` on each of
# `--nnodes=M` nodes, one node when the flag is absent; a range (`--nnodes=1:4`, elastic) or a
# word (`--nproc_per_node=gpu`) states no number
TORCH_LAUNCHER = r"\btorchrun\b|-m torch\.distributed\.(?:run|launch)\b"
PER_NODE = r"--nproc[_-]per[_-]node[= ](\d+)(?:\s|$)"
NODES = r"--nnodes[= ](\S+)"
MULTI_NODE_WRAPPER = r"\b(?:srun|mpirun|mpiexec|pdsh|sbatch)\b"
# the variables worth knowing to reproduce a hang
VARIABLE = (
    r"(TORCH_DISTRIBUTED_DEBUG|TORCH_CPP_LOG_LEVEL|TORCH_SHOW_CPP_STACKTRACES|NCCL_DEBUG|"
    r"NCCL_DEBUG_SUBSYS|NCCL_[A-Z0-9_]+|TORCH_NCCL_[A-Z0-9_]+|CUDA_VISIBLE_DEVICES|"
    r"CUDA_LAUNCH_BLOCKING|OMP_NUM_THREADS|LOCAL_RANK|WORLD_SIZE|MASTER_ADDR|MASTER_PORT)"
)
# `export NCCL_DEBUG=INFO`, `NCCL_DEBUG=INFO` alone, or before a launch command
ASSIGNMENT = r"^(?:[+$] |" + PROMPT + r")?(?:export )?" + VARIABLE + r"=(\S+)"
# torch's c10d banner: `[c10d] The debug level is set to DETAIL.`
DEBUG_BANNER = r"\[c10d\] The debug level is set to ([A-Z]+)"
# torchrun's agent with LOGLEVEL=INFO: `Starting elastic_operator with launch configs:`
LAUNCH_CONFIG = "Starting elastic_operator with launch configs"
# The rest of torchrun's start-up print, recognised without an event (pytorch/pytorch#64926):
#   [INFO] 2021-09-13 22:17:26,651 run: Running torch.distributed.run with args: ['/home/...', ...]
#   [INFO] 2021-09-13 22:17:26,653 run: Using nproc_per_node=2.
#   *****************************************
#   Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, to avoid ...
#     entrypoint       : main.py
#     rdzv_endpoint    : 10.28.1.16
LAUNCHER_NOISE = (
    r"Running torch\.distributed\.run with args: |Using nproc_per_node=\S+\.?$|^\*{20,}$"
    r"|^Setting OMP_NUM_THREADS environment variable for each process"
    r"|^\s+(?:entrypoint|min_nodes|max_nodes|nproc_per_node|run_id|rdzv_backend|rdzv_endpoint"
    r"|rdzv_configs|max_restarts|monitor_interval|log_dir|metrics_cfg|role|master_addr"
    r"|master_port|redirects|tee|local_addr|start_method|log_line_prefix_template)\s*: "
)


def parse(lines: pl.DataFrame) -> pl.DataFrame:
    message = pl.col("message").str.strip_chars_start()
    assignment = message.str.extract_groups(ASSIGNMENT)
    banner = message.str.extract(DEBUG_BANNER, 1)
    is_command = message.str.contains(LAUNCH_COMMAND) & ~message.str.contains(LAUNCHER_SENTENCE)
    name = pl.coalesce(
        assignment.struct.field("1"),
        pl.when(banner.is_not_null()).then(pl.lit("TORCH_DISTRIBUTED_DEBUG")),
    )
    value = pl.coalesce(assignment.struct.field("2"), banner)
    found = lines.select(
        "file",
        "line",
        pl.when(is_command)
        .then(pl.lit("launch_command"))
        .when(message.str.contains(LAUNCH_CONFIG, literal=True))
        .then(pl.lit("launch_config"))
        .when(name.is_not_null())
        .then(pl.lit("debug_setting"))
        .alias("event"),
        pl.when(name.is_not_null()).then(pl.concat_list(name.cast(pl.String))).alias("names"),
        pl.when(name.is_not_null())
        .then(
            pl.concat_str(pl.lit('{"value": "'), value.str.replace_all(r'["\\]', ""), pl.lit('"}'))
        )
        .alias("extra"),
        pl.lit("info").alias("severity"),
        pl.when(is_command).then(_world_of_command(message)).alias("world_size"),
    )
    noise = lines.filter(
        ~message.str.contains(LAUNCH_COMMAND) & pl.col("message").str.contains(LAUNCHER_NOISE)
    ).select("file", "line", pl.lit(None, dtype=pl.String).alias("event"))
    return pl.concat([found.filter(pl.col("event").is_not_null()), noise], how="diagonal_relaxed")


def _world_of_command(command: pl.Expr) -> pl.Expr:
    """The processes a torchrun command line starts: per node times nodes (ufld#193:
    `python -m torch.distributed.launch --nproc_per_node=2 train.py configs/culane.py`, 2)."""
    per_node = command.str.extract(PER_NODE, 1).cast(pl.Int32, strict=False)
    nodes = command.str.extract(NODES, 1)
    # without `--nnodes` a multi-node launcher around it may set it (torchrun reads
    # PET_NNODES): one node only when nothing wraps the command
    wrapped = command.str.contains(MULTI_NODE_WRAPPER)
    node_count = (
        pl.when(nodes.is_null() & ~wrapped).then(1).otherwise(nodes.cast(pl.Int32, strict=False))
    )
    return pl.when(command.str.contains(TORCH_LAUNCHER)).then(per_node * node_count)


def states_one_node(command: str) -> bool:
    """Whether a launch command starts one node: `--standalone`, `--nnodes=1`, or no
    `--nnodes` (`_world_of_command` reads a world from one without it only where no multi-node
    launcher wraps it)."""
    nodes = re.search(NODES, command)
    return nodes is None or nodes.group(1) == "1" or "--standalone" in command


PARSER = LineParser(
    name="launch",
    literals=(
        *LAUNCHERS,
        *("TORCH_", "NCCL_", "CUDA_", "OMP_NUM_THREADS=", "LOCAL_RANK=", "WORLD_SIZE=", "MASTER_"),
        "[c10d] The debug level",
        LAUNCH_CONFIG,
        "Running torch.distributed.run with args",
        "Using nproc_per_node=",
        "********************",
        "Setting OMP_NUM_THREADS environment variable",
        *(f"  {key}" for key in ("entrypoint", "min_nodes", "max_nodes", "nproc_per_node")),
        *(f"  {key}" for key in ("run_id", "rdzv_")),
        *(f"  {key}" for key in ("max_restarts", "monitor_interval", "log_dir", "metrics_cfg")),
        *(f"  {key}" for key in ("role", "master_", "redirects", "tee ", "local_addr")),
        *(f"  {key}" for key in ("start_method", "log_line_prefix_template")),
    ),
    parse=parse,
)
