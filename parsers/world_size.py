# ruff: noqa: E501 -- verbatim log lines are quoted whole in the docstring
"""The world size as frameworks and launchers state it in words:

    using world size: 4, data-parallel size: 4, tensor-model-parallel size: 1, ...   (Megatron-LM)
    WORLD_SIZE=8
    world_size: 16
    Initializing distributed: GLOBAL_RANK: 1, MEMBER: 2/2                       (Lightning)
    Horovod initialized. Hostname cluster-cn-238, pid 14531, rank 2 / size 4, ...   (RETURNN)
    distributed_backend=nccl All distributed processes registered. Starting with 4 processes
    ... | fairseq.utils | ***********************CUDA enviroments for all 8 workers*****...
    [2023-06-09 05:17:52,629] [INFO] [launch.py:163:main] dist_world_size=16    (the DeepSpeed launcher)

(the Lightning lines verbatim from its users' logs); Lightning's `GLOBAL_RANK` and RETURNN's `rank 2 / size
4` are the rank of the process that prints it (not its `local rank 0 / local size 1`). The mapping-print dict (`'world_size': 4`) is `device_map`'s; a
tqdm bar's description is `progress_bars`'.

torch 1.8-2.0's store-based barrier in `init_process_group` (torch/distributed/distributed_c10d.py)
logs each rank's check-in and its completion (determined-ai/determined#8915, Determined's
`[rank=N] ||` prefix before them):

    INFO: [182] torch.distributed.distributed_c10d: Added key: store_based_barrier_key:1 to store for rank: 3
    INFO: [183] torch.distributed.distributed_c10d: Rank 1: Completed store-based barrier for key:store_based_barrier_key:1 with 8 nodes.

Key 1 is the default group's barrier, so its node count is the world size; later keys are the
barriers of `new_group` sub-groups, whose size is not the world's. Both lines name the global
rank of the process that prints them: a check-in is `store_barrier_joined` (info), so the rank
counts as seen.
"""

from __future__ import annotations

import polars as pl

from logforensics.registry import LineParser

# `world size: 4`, `WORLD_SIZE=8`, `world_size: 16`; not `'world_size': 4` (a dict), nor a
# key with a longer name (`world_size_per_node`)
STATED = r"(?i)(?:^|[^A-Za-z_'\"])world[ _]size\s*[:=]?\s*(\d+)(?:[^\w.]|$)"


MEMBER = r"GLOBAL_RANK: (\d+), MEMBER: \d+/(\d+)"
# a rank's own announcement with its world (rwth-i6/returnn#323, under Horovod):
# Horovod initialized. Hostname cluster-cn-238, pid 14531, rank 2 / size 4, local rank 0 / local size 1.
# (not after `local`: the character before ` rank` is no `l`; the regex engine has no look-behind)
RANK_OF_SIZE = r"(?:^|[^\w ]|[^l] )rank (\d+) ?/ ?size (\d+)\b"
REGISTERED = r"All distributed processes registered\. Starting with (\d+) processes"
# a process's own rank stated beside the world's size in one line, as scripts print when the
# group is up (msr-fiddle/pipedream#34, verbatim):
# Finished initializing process group; backend: gloo, rank: 14, world_size: 16
# (not `local_rank: 0, world_size: 8`: no word character before `rank`)
RANK_BESIDE_SIZE = r"(?i)(?:^|[^\w])rank\s*[:=]\s*(\d+)\s*,\s*world[ _]size\s*[:=]\s*\d+\b"
# vLLM's worker as it joins the group, its rank its own (Project-HAMi/HAMi#1853, verbatim):
# (Worker pid=2245) INFO 05-11 15:34:02 [parallel_state.py:1402] world_size=2 rank=1 local_rank=1 distributed_init_method=tcp://127.0.0.1:51949 backend=nccl
WORKER_JOINS = r"\bworld_size=\d+ rank=(\d+) local_rank=\d+ distributed_init_method="
# Ray Train's worker as it sets up its group, its rank its own (malaysia-ai/jupyter-gpu's saved
# Ray Train notebook output, verbatim):
# (RayTrainWorker pid=3653, ip=10.208.0.196) Setting up process group for: env:// [rank=0, world_size=2]
RAY_TRAIN_JOINS = r"Setting up process group for: \S+ \[rank=(\d+), world_size=(\d+)\]"
# Rank 1: Completed store-based barrier for key:store_based_barrier_key:1 with 8 nodes.
BARRIER_DONE = (
    r"(?:Rank (?P<rank>\d+): )?Completed store-based barrier for "
    r"key:store_based_barrier_key:(?P<key>\d+) with (?P<nodes>\d+) nodes"
)
# Added key: store_based_barrier_key:1 to store for rank: 3
BARRIER_JOINED = r"Added key: store_based_barrier_key:\d+ to store for rank: (\d+)"
# torch 1.x-2.0 logs a rank's wait every 10 s until the count reaches the group's size
# (s-JoL/Open-Llama#47, verbatim):
# Waiting in store based barrier to initialize process group for rank: 2, key: store_based_barrier_key:2 (world_size=8, worker_count=7, timeout=0:30:00)
BARRIER_WAITING = (
    r"Waiting in store based barrier to initialize process group for rank: (?P<rank>\d+), "
    r"key: store_based_barrier_key:(?P<key>\d+) \(world_size=(?P<size>\d+), "
    r"worker_count=(?P<count>\d+)"
)

# A rank's word, just before `init_process_group`, that it joins the group at an address (no
# world size in it): fairseq's and metaseq's `distributed_utils` (facebookresearch/metaseq#86,
# verbatim: `2022-05-10 05:09:39 | INFO | metaseq.distributed.utils | distributed init (rank 0):
# tcp://localhost:19587`) and the DeiT/MAE family's `init_distributed_mode` (implus/UM-MAE#12,
# verbatim: `| distributed init (rank 5): env://, gpu 5`)
DISTRIBUTED_INIT = r"(?:^|[\s|])distributed init \(rank (\d+)\): \S"
# ... and fairseq's word once `init_process_group` returned (XuezheMax/apollo#4, verbatim:
# `2020-10-18 02:33:50 | INFO | fairseq.distributed_utils | initialized host learnfair0892 as
# rank 3`; facebookresearch/fairseq#2329 shows the host as `<2nd node server>`, spaces in it)
INITIALIZED_HOST = r"(?:^|[\s|])initialized host .+? as rank (\d+)\b"

# DeepSpeed's `init_distributed` as it creates the torch group (its first rank's word, no rank
# in it; RLHFlow/Online-RLHF#11, verbatim: `[2024-06-11 00:23:36,254] [INFO]
# [comm.py:668:init_distributed] Initializing TorchBackend in DeepSpeed with backend nccl`)
DEEPSPEED_JOINS = r"\binit_distributed\] Initializing TorchBackend in DeepSpeed with backend \w+"
# ... and wenet's train.py, each process just before `init_process_group`, with its local GPU
# (no rank; wenet-e2e/wenet#812, verbatim: `2021-11-24 08:11:49,857 INFO training on multiple
# gpus, this gpu 7`)
WENET_JOINS = r"\btraining on multiple gpus, this gpu \d+"
# the words each framework's unranked announcement holds
UNRANKED_JOINS = DEEPSPEED_JOINS + "|" + WENET_JOINS

# fairseq's table of every worker's GPU, which rank 0 prints once the workers' answers are
# gathered (facebookresearch/fairseq#2385, verbatim; `enviroments` is fairseq's spelling):
# 2020-07-28 06:31:03 | INFO | fairseq.utils | ***********************CUDA enviroments for all 8 workers***********************
# 2020-07-28 06:31:03 | INFO | fairseq.utils | rank   0: capabilities =  7.0  ; total memory = 15.782 GB ; name = Tesla V100-PCIE-16GB
# Its rows are rank 0's lines about the others: read, no rank seen from them.
CUDA_TABLE = r"CUDA enviro?n?ments for all (\d+) workers"
CUDA_TABLE_ROW = r"\brank +\d+: capabilities = +\d+\.\d+ +; total memory = "
# the DeepSpeed launcher's count of every node's processes (DeepSpeedExamples' committed
# check-7b/training.log, verbatim):
# [2023-06-09 05:17:52,629] [INFO] [launch.py:163:main] dist_world_size=16
LAUNCHER_WORLD = r"(?:^|[\s\]])dist_world_size=(\d+)\b"


def parse(lines: pl.DataFrame) -> pl.DataFrame:
    message = pl.col("message")
    barrier = message.str.extract_groups(BARRIER_DONE)
    default_group = barrier.struct.field("key") == "1"
    waiting = message.str.extract_groups(BARRIER_WAITING)
    is_waiting = waiting.struct.field("key").is_not_null()
    # a rank announcing that it joins the group, in the words of each framework
    member_rank = message.str.extract(MEMBER, 1)
    worker_rank = message.str.extract(WORKER_JOINS, 1)
    ray_rank = message.str.extract(RAY_TRAIN_JOINS, 1)
    registered = message.str.extract(REGISTERED, 1)
    size = pl.coalesce(
        message.str.extract(STATED, 1),
        message.str.extract(MEMBER, 2),
        message.str.extract(RANK_OF_SIZE, 2),
        registered,
        message.str.extract(CUDA_TABLE, 1),
        message.str.extract(LAUNCHER_WORLD, 1),
        message.str.extract(RAY_TRAIN_JOINS, 2),
        pl.when(default_group).then(barrier.struct.field("nodes")),
    ).cast(pl.Int32, strict=False)
    waits = lines.filter(is_waiting).select(
        "file",
        "line",
        waiting.struct.field("rank").cast(pl.Int32, strict=False).alias("rank"),
        pl.lit("store_barrier_waiting").alias("event"),
        pl.lit("warning").alias("severity"),
        waiting.struct.field("key").alias("pg"),  # the barrier's key: 1 is the default group
        waiting.struct.field("size").cast(pl.Int32, strict=False).alias("nranks"),
        waiting.struct.field("count").cast(pl.Int64, strict=False).alias("value"),
    )
    # a waiting rank's `world_size` is its group's size: the world's for key 1 only
    in_sub_group = is_waiting & (waiting.struct.field("key") != "1")
    stated = (
        lines.filter(~in_sub_group)
        .select(
            "file",
            "line",
            size.alias("world_size"),
            pl.coalesce(
                member_rank,
                message.str.extract(RANK_OF_SIZE, 1),
                worker_rank,
                ray_rank,
                message.str.extract(RANK_BESIDE_SIZE, 1),
                barrier.struct.field("rank"),
            )
            .cast(pl.Int32, strict=False)
            .alias("rank"),
            pl.lit("world_size").alias("event"),
            pl.lit("info").alias("severity"),
            _setup(
                joining=member_rank.is_not_null()
                | worker_rank.is_not_null()
                | ray_rank.is_not_null(),
                ready=registered.is_not_null() | default_group.fill_null(False),
            ).alias("extra"),
        )
        .filter(pl.col("world_size").is_not_null() & (pl.col("world_size") > 0))
    )
    joined = message.str.extract(BARRIER_JOINED, 1).cast(pl.Int32, strict=False)
    checked_in = lines.filter(joined.is_not_null()).select(
        "file",
        "line",
        joined.alias("rank"),
        pl.lit("store_barrier_joined").alias("event"),
        pl.lit("info").alias("severity"),
    )
    # a sub-group's barrier done: no world size, but the end of its waits
    sub_group = lines.filter(barrier.struct.field("key").is_not_null() & ~default_group).select(
        "file",
        "line",
        barrier.struct.field("rank").cast(pl.Int32, strict=False).alias("rank"),
        pl.lit("store_barrier_done").alias("event"),
        pl.lit("info").alias("severity"),
        barrier.struct.field("key").alias("pg"),
    )
    announced = message.str.extract(DISTRIBUTED_INIT, 1).cast(pl.Int32, strict=False)
    initialized = message.str.extract(INITIALIZED_HOST, 1).cast(pl.Int32, strict=False)
    unranked = message.str.contains(UNRANKED_JOINS)
    joins = lines.filter(announced.is_not_null() | initialized.is_not_null() | unranked).select(
        "file",
        "line",
        pl.coalesce(announced, initialized).alias("rank"),
        pl.lit("group_setup").alias("event"),
        pl.lit("info").alias("severity"),
        _setup(joining=announced.is_not_null() | unranked, ready=initialized.is_not_null()).alias(
            "extra"
        ),
    )
    table_rows = lines.filter(message.str.contains(CUDA_TABLE_ROW)).select("file", "line")
    return pl.concat(
        [stated, checked_in, sub_group, waits, joins, table_rows], how="diagonal_relaxed"
    )


# Where a line stands in setting up the default process group: a rank announcing that it joins
# (Lightning's `Initializing distributed`, Ray Train's `Setting up process group for`, vLLM's
# worker) comes before `init_process_group` returns; Lightning's `All distributed processes
# registered` and the default group's completed store barrier come after it, once every rank
# joined (logforensics/setup_stall.py)
JOINING = '{"setup":"joining"}'
READY = '{"setup":"ready"}'


def _setup(*, joining: pl.Expr, ready: pl.Expr) -> pl.Expr:
    return pl.when(ready).then(pl.lit(READY)).when(joining).then(pl.lit(JOINING))


PARSER = LineParser(
    name="world_size",
    # every case the pattern reads (`World size: 2`, huggingface/datasets#7444)
    literals=(
        "orld size",
        "orld Size",
        "ORLD SIZE",
        "orld_size",
        "ORLD_SIZE",
        "MEMBER: ",
        "/ size ",
        "processes registered",
        "store_based_barrier_key",
        "CUDA enviro",
        "; total memory = ",
        "Setting up process group for: ",
        "distributed init (rank ",
        "initialized host ",
        "Initializing TorchBackend in DeepSpeed",
        "training on multiple gpus, this gpu ",
    ),
    parse=parse,
)
