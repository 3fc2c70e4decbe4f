"""Which rank wrote a line, when the line itself does not say: prefixes, content, path, node.

Trust order for every event (the `rank_from` column):

1. `prefix`: a launcher or PyTorch prefix that states a global rank (`[rank3]:`, an MPI rank,
   an srun task id that is a rank; see `framing`);
2. `content`: the line's own content (`rank=3`);
3. `file_content`: the single rank the rest of the file's content names (of the lines with
   the same launcher prefixes: one writer's lines); where it names none, the one rank its
   `[rankN]:` tags name, when its bare lines are one process's;
4. `path`: a global rank in the path (`rank3.log`, `rank.0007/stdout`, `…_rank12.log`,
   submitit's `12345_3_log.err`, or the user's `--rank-from-path` pattern);
5. `node_offset`: a local rank (torchrun `--tee` prefix, torchrun `--log-dir` folder) plus its
   node's rank offset, where lines of the same node state both a global and a local rank
   (`{'rank': 6, 'local_rank': 2, ...}` gives node offset 4) and agree on it;
6. `path_local`: a torchrun `--log-dir` local rank taken as global because the whole input
   shows a single node;
7. `node_index`: a local rank plus node index × `--nproc_per_node`, where the node index comes
   from an srun task id wrapping a torchrun agent (or a Kubeflow pod name) and the launch
   command line in the logs states `--nproc_per_node`;
8. `world_of_one`: rank 0, where the largest world the logs state is one process and no line
   states another rank (the launcher's own lines excepted).

Nothing else: no rank is ever assumed. A node is what a node prefix names (an srun task that
wraps torchrun, a pdsh host, a kubectl pod, a Ray worker's ip), else the torchrun `--log-dir`
tree or Kubeflow pod the file belongs to, else the file itself.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from functools import lru_cache

import polars as pl

from logforensics.announced import OWN_RANK
from logforensics.errors import InputError
from logforensics.framing import PREFIX_COLUMNS, frame_lines
from logforensics.plausible import believed_rank, largest_world_size, rank_limit
from parsers.process_exit import REPORTED

# torchrun --log-dir: <dir>/<run_id>_<rand>/attempt_<n>/<local_rank>/{stdout,stderr}.log
TORCHRUN_TREE = re.compile(r"^(?P<node>(?:.*/)?attempt_\d+)/(?P<local>\d+)/[^/]+$")
# rank3.log, rank_3.txt, rank-3/, 20240101_rank12.log, rank.0007/stdout
GLOBAL_RANK_PART = re.compile(r"(?:^|[^a-z])rank[-_.]?(\d+)(?:$|[^0-9])", re.IGNORECASE)
WORKER_PART = re.compile(r"(?:^|[^a-z])worker[-_.]?(\d+)(?:$|[^0-9])", re.IGNORECASE)
LOCAL_RANK_PART = re.compile(r"local[-_.]?rank", re.IGNORECASE)
# Kubeflow PyTorchJob pods `<job>-master-0`, `<job>-worker-<i>` (training-operator
# GenGeneralName); RANK is 0 for the master and i + 1 for worker i. A pod is a node: one rank,
# or several when nprocPerNode > 1.
KUBEFLOW_POD = re.compile(
    r"^(?P<pod>[a-z0-9](?:[-a-z0-9]*[a-z0-9])?-(?P<role>master|worker)-(?P<index>\d+))(?:[._].*)?$"
)
# submitit's per-task logs on SLURM, `srun --output <folder>/%j_%t_log.out --error
# <folder>/%j_%t_log.err` (`%A_%a_%t` for an array job), as its generated `*_submission.sh`
# shows (theislab/IMPA's `.submitit/14164533/14164533_submission.sh`): `%t` is srun's task id,
# the SLURM_PROCID submitit's distributed environment takes for the global rank
SUBMITIT_TASK_LOG = re.compile(r"^\d+(?:_\d+)?_(?P<task>\d+)_log\.(?:out|err)$")
# NCCL_DEBUG_FILE=<name>.%h.%p: nccl.node-a.43121 (host, pid; nccl src/debug.cc)
NCCL_DEBUG_FILE = re.compile(r"^[^./]+\.(?P<host>[A-Za-z][A-Za-z0-9-]*)\.(?P<pid>\d+)$")
NOT_HOSTS = frozenset({"log", "txt", "out", "err", "stdout", "stderr", "json", "gz", "zst"})
# The launch command as a batch script echoes it (`set -x`) or a user pasted it:
# + torchrun --nnodes=2 --nproc_per_node=2 --node_rank=0 train.py
NPROC_PER_NODE = (
    r"(?:torchrun|torch\.distributed\.run|torch\.distributed\.launch|deepspeed)\b"
    r".*?--(?:nproc[_-]per[_-]node|num[_-]gpus)[= ](\d+)\b"
)
# A message that starts with its own date stamp keeps it; only bare lines take the launcher's.
# A leading Python-logging or ISO-8601 stamp: `2026-11-29 10:00:01,234`, `2026-11-29T10:00:01Z`,
# `[2024-05-08 08:47:31,261]`. The zone, if any, is dropped: times compare within one host only.
LEADING_TIMESTAMP = r"^\[?(\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:[.,]\d{1,9})?)"

# Set by `logforensics.api.analyze` for one run: the user's `--rank-from-path` pattern.
RANK_FROM_PATH: ContextVar[re.Pattern[str] | None] = ContextVar("rank_from_path", default=None)
# Set for one run whose input is an archive file: its members' names begin `<archive>!/`. The
# name the user gave the upload says no more of a writer than a folder's name does (a paste
# packed as `case-rank0-absent.tar.gz` is no file of rank 0), so paths are read inside it.
UPLOAD_ARCHIVE: ContextVar[str | None] = ContextVar("upload_archive", default=None)


@dataclass(frozen=True, slots=True)
class PathRank:
    """What a file's path says about its writer."""

    rank: int | None = None
    local_rank: int | None = None
    node: str | None = None  # the torchrun tree or Kubeflow pod the file belongs to
    node_index: int | None = None  # that node's index in the job, when the name says it
    host: str | None = None
    pid: int | None = None


def compile_rank_pattern(pattern: str) -> re.Pattern[str]:
    """The user's `--rank-from-path` regex; it must hold a named group `rank`."""
    try:
        compiled = re.compile(pattern)
    except re.error as error:
        raise InputError(f"--rank-from-path {pattern!r}: not a valid regex ({error})") from None
    if "rank" not in compiled.groupindex:
        raise InputError(
            f"--rank-from-path {pattern!r}: no named group 'rank'",
            hint=r"write the rank's digits as (?P<rank>\d+), e.g. 'gpu(?P<rank>\d+)\.txt$'",
        )
    return compiled


@contextmanager
def rank_pattern(pattern: re.Pattern[str] | None, archive: str | None = None) -> Iterator[None]:
    """Use `pattern` for path ranks (before the built-in shapes) within the block; `archive`
    names the archive file that is the whole upload, if it is one."""
    token = RANK_FROM_PATH.set(pattern)
    archive_token = UPLOAD_ARCHIVE.set(archive)
    try:
        yield
    finally:
        UPLOAD_ARCHIVE.reset(archive_token)
        RANK_FROM_PATH.reset(token)


def rank_from_path(name: str, kubeflow: bool = False) -> PathRank:
    """Read a global rank, a local rank and node, or a process identity from a relative path.

    Archive members (`logs.tar.gz!/node1/rank3.log`) are read as paths. `kubeflow` says the
    input holds a `<job>-master-N` pod, so `<job>-worker-<i>` names pods, not ranks.
    """
    archive = UPLOAD_ARCHIVE.get()
    if archive is not None and name.startswith(f"{archive}!/"):
        name = name[len(archive) + 2 :]
    path = name.replace("!/", "/")
    pattern = RANK_FROM_PATH.get()
    if pattern is not None:
        found = pattern.search(path)
        if found and found["rank"] is not None:
            return PathRank(rank=_path_number(found["rank"]))
    tree = TORCHRUN_TREE.match(path)
    if tree:
        return PathRank(local_rank=_path_number(tree["local"]), node=tree["node"])
    parts = path.split("/")
    if kubeflow:
        for index, part in enumerate(reversed(parts)):
            pod = KUBEFLOW_POD.match(part)
            if pod:
                node = "/".join(parts[: len(parts) - index - 1] + [pod["pod"]])
                offset = 0 if pod["role"] == "master" else 1
                index_in_job = _path_number(pod["index"])
                return PathRank(
                    node=node, node_index=None if index_in_job is None else index_in_job + offset
                )
    for part in reversed(parts):
        if not LOCAL_RANK_PART.search(part) and (found := GLOBAL_RANK_PART.search(part)):
            return PathRank(rank=_path_number(found[1]))
    for index, part in enumerate(reversed(parts)):
        pod = KUBEFLOW_POD.match(part)
        if pod and pod["role"] == "worker":
            # a `<job>-worker-<i>` pod without its master in the input: under a PyTorchJob
            # worker i is rank i + 1, under elastic rendezvous ranks follow the join order;
            # the pod number is no rank either way
            return PathRank(node="/".join(parts[: len(parts) - index - 1] + [pod["pod"]]))
    if task_log := SUBMITIT_TASK_LOG.match(parts[-1]):
        return PathRank(rank=_path_number(task_log["task"]))
    for part in reversed(parts):
        if LOCAL_RANK_PART.search(part):
            continue
        found = WORKER_PART.search(part)
        if found:
            return PathRank(rank=_path_number(found[1]))
    process = NCCL_DEBUG_FILE.match(parts[-1])
    if process and process["host"].lower() not in NOT_HOSTS:
        return PathRank(host=process["host"], pid=_path_number(process["pid"], PID_LIMIT))
    return PathRank()


# A number in a path is data: beyond what its column holds it says nothing (a rank that fits
# but no job can have is left to `plausible`, which flags it).
RANK_LIMIT = 2**31 - 1  # the largest Int32
PID_LIMIT = 2**63 - 1


def _path_number(digits: str, limit: int = RANK_LIMIT) -> int | None:
    value = int(digits)
    return value if value <= limit else None


PATH_RANK_SCHEMA: dict[str, pl.DataType] = {
    "file": pl.String(),
    "path_rank": pl.Int32(),
    "path_local_rank": pl.Int32(),
    "path_rank_local_only": pl.Boolean(),
    "path_node": pl.String(),
    "path_node_index": pl.Int32(),
    "path_host": pl.String(),
    "path_pid": pl.Int64(),
}


def path_ranks(file_names: list[str]) -> pl.DataFrame:
    """One row per file: what its path says (columns of PATH_RANK_SCHEMA).

    A job's files are read twice (job facts, then attribution): the answer is kept for the
    last few sets of names (it depends on the set, not the order), with the user's rank
    pattern as part of the key.

    A torchrun tree's local rank is taken as the global rank (`path_rank`) only when all the
    trees seen belong to one node (one run folder); otherwise the file keeps only its local
    rank. `path_rank_local_only` is true when the path states no global rank itself.
    """
    return _path_ranks(tuple(sorted(set(file_names))), RANK_FROM_PATH.get(), UPLOAD_ARCHIVE.get())


@lru_cache(maxsize=4)
def _path_ranks(
    file_names: tuple[str, ...], _pattern: re.Pattern[str] | None, _archive: str | None
) -> pl.DataFrame:
    """`path_ranks` (`_pattern` and `_archive`, the context in force, are part of the key
    only)."""
    kubeflow = any(
        KUBEFLOW_POD.match(part) and "-master-" in part
        for name in file_names
        for part in name.replace("!/", "/").split("/")
    )
    found = {name: rank_from_path(name, kubeflow) for name in file_names}
    trees = {
        info.node for info in found.values() if info.node is not None and info.node_index is None
    }
    single_node = len(trees) == 1
    rows = [
        (
            name,
            info.rank if info.rank is not None else (info.local_rank if single_node else None),
            info.local_rank,
            info.rank is None,
            info.node,
            info.node_index,
            info.host,
            info.pid,
        )
        for name, info in found.items()
    ]
    return pl.DataFrame(rows, schema=PATH_RANK_SCHEMA, orient="row")


def attribute(
    events: pl.DataFrame,
    file_names: list[str],
    lines: pl.DataFrame | None = None,
    mark_writers: pl.DataFrame | None = None,
) -> pl.DataFrame:
    """Fill `rank`, `rank_from` and `local_rank` on parsed events (see the module doc); fill
    `host`, `pid` and `timestamp` from prefixes and paths where the parser left them empty.

    `lines` is the framed line table (`framing.frame_lines`): with it the prefix columns are
    taken from it as they are, and a launch command's `--nproc_per_node` can be read. Without
    it the event lines are framed again on their own. `prefix_rank` and `prefix_local_rank` are
    kept (the caller drops them); the other prefix columns are consumed here.

    `mark_writers` (one row per writer of stage marks, with the rank its marks state) inform
    the inferences (a file's one writer, a node's offset) as the marks themselves would.
    """
    events = _ensure_columns(_with_prefix_columns(events, lines)).with_columns(
        pl.lit(False).alias("_writer_row")
    )
    # a rank no job can have (see `plausible`) informs no inference: it would spoil a file's
    # single writer or a node's offset for the file's other lines
    limit = rank_limit(largest_world_size(events.get_column("world_size")))
    if mark_writers is not None and mark_writers.height:
        believed = mark_writers.filter(believed_rank("rank", limit))
        events = pl.concat([events, _as_rows(believed)], how="diagonal_relaxed")
    events = _summary_block_ranks(events)
    paths = path_ranks(file_names)
    events = events.join(
        _file_content_ranks(events, limit), on=WRITER, how="left", nulls_equal=True
    ).join(paths, on="file", how="left")
    local = pl.coalesce(
        pl.col("local_rank"), pl.col("prefix_local_rank"), pl.col("path_local_rank")
    )
    events = events.with_columns(local.alias("local_rank"), _node_key().alias("_node"))
    events = events.join(_node_offsets(events, limit), on="_node", how="left")
    nproc = _nproc_per_node(lines)
    node_index = pl.coalesce(pl.col("prefix_node_index"), pl.col("path_node_index"))
    # a progress line's CUDA device (`mem_usage:cuda:2`) tells the processes of one node apart
    one_node = _hosts(events) <= 1
    device = pl.when(pl.lit(one_node) & (pl.col("family") == "progress")).then(pl.col("cuda_dev"))
    choices = [
        ("prefix", pl.col("prefix_rank")),
        ("content", pl.coalesce(pl.col("rank"), pl.col("_block_rank"))),
        ("file_content", pl.col("file_content_rank")),
        ("path", pl.when(~pl.col("path_rank_local_only")).then(pl.col("path_rank"))),
        ("node_offset", pl.col("_offset") + pl.col("local_rank")),
        ("path_local", pl.col("path_rank")),
        ("node_index", node_index * pl.lit(nproc, dtype=pl.Int32) + pl.col("local_rank")),
        ("device", device),
        ("world_of_one", _world_of_one(events, limit)),
    ]
    rank = pl.coalesce([value for _, value in choices])
    source = pl.when(choices[0][1].is_not_null()).then(pl.lit(choices[0][0]))
    for name, value in choices[1:]:
        source = source.when(value.is_not_null()).then(pl.lit(name))
    consumed = [name for name in PREFIX_COLUMNS if name not in ("prefix_rank", "prefix_local_rank")]
    return (
        events.with_columns(
            rank.cast(pl.Int32).alias("rank"),
            source.otherwise(None).alias("rank_from"),
            pl.coalesce(pl.col("host"), pl.col("prefix_host"), pl.col("path_host")).alias("host"),
            pl.coalesce(pl.col("pid"), pl.col("prefix_pid"), pl.col("path_pid")).alias("pid"),
            _timestamp().alias("timestamp"),
            _repeats_in_extra().alias("extra"),
        )
        .filter(~pl.col("_writer_row"))
        .drop(
            "_writer_row",
            "file_content_rank",
            "_block_rank",
            *(name for name in PATH_RANK_SCHEMA if name != "file"),
            "_node",
            "_offset",
            *(name for name in consumed if name in events.columns),
        )
    )


# the launcher's own lines: no worker wrote them
LAUNCHER_FAMILIES = ("elastic", "launch")


def _world_of_one(events: pl.DataFrame, limit: int) -> pl.Expr:
    """Rank 0 for every worker line of a job whose largest stated world is one process and
    whose lines state no other rank (cnulab/RealNet#54: `python -m torch.distributed.launch
    --nproc_per_node=1 ...`, then the worker's argparse refusal): there is no other rank to
    have written them."""
    stated = events.get_column("rank").drop_nulls()
    if limit != 1 or not stated.is_in([0]).all():
        return pl.lit(None, dtype=pl.Int32)
    return pl.when(~pl.col("family").is_in(LAUNCHER_FAMILIES).fill_null(False)).then(
        pl.lit(0, dtype=pl.Int32)
    )


def _as_rows(mark_writers: pl.DataFrame) -> pl.DataFrame:
    """Stand-in rows for the writers of stage marks: what their marks state of the rank."""
    stated_by_prefix = pl.col("rank_from") == "prefix"
    return mark_writers.select(
        "file",
        "prefix_node",
        "prefix_host",
        "prefix_local_rank",
        pl.when(stated_by_prefix).then(pl.col("rank")).alias("prefix_rank"),
        pl.when(~stated_by_prefix).then(pl.col("rank")).alias("rank"),
        pl.lit("stage_marks").alias("family"),
        pl.lit(True).alias("_writer_row"),
    )


def _hosts(events: pl.DataFrame) -> int:
    """How many hosts the events name (prefixes, NCCL lines)."""
    named = pl.concat([events.get_column("host"), events.get_column("prefix_host")])
    return named.drop_nulls().n_unique()


def _ensure_columns(events: pl.DataFrame) -> pl.DataFrame:
    wanted: dict[str, pl.DataType] = {
        "rank": pl.Int32(),
        "world_size": pl.Int32(),
        "family": pl.String(),
        "cuda_dev": pl.Int32(),
        "local_rank": pl.Int32(),
        "host": pl.String(),
        "pid": pl.Int64(),
        "timestamp": pl.Datetime("us"),
        "extra": pl.String(),
        **PREFIX_COLUMNS,
    }
    return events.with_columns(
        pl.lit(None, dtype=dtype).alias(name)
        for name, dtype in wanted.items()
        if name not in events.columns
    )


def _with_prefix_columns(events: pl.DataFrame, lines: pl.DataFrame | None) -> pl.DataFrame:
    """Join the prefix columns the events lack, from the framed lines or by framing again."""
    missing = [name for name in PREFIX_COLUMNS if name not in events.columns]
    if not missing or events.is_empty():
        return events
    if lines is None and not {"text", "message"} <= set(events.columns):
        return events
    if lines is not None and set(missing) <= set(lines.columns):
        return events.join(lines.select("file", "line", *missing), on=["file", "line"], how="left")
    own_lines = events.select("file", "line", "text").unique(["file", "line"])
    reframed = frame_lines(own_lines).rename(
        {name: f"_re_{name}" for name in ("message", "prefix_rank", "prefix_local_rank")}
    )
    events = events.join(
        reframed.select(
            "file", "line", *missing, "_re_message", "_re_prefix_rank", "_re_prefix_local_rank"
        ),
        on=["file", "line"],
        how="left",
    )
    # Framed alone, a line can be read differently than among all its file's lines (the
    # per-file rules); keep what framing again says only where it peeled the same prefixes.
    same = (
        pl.col("_re_message").eq_missing(pl.col("message"))
        & pl.col("_re_prefix_rank").eq_missing(pl.col("prefix_rank"))
        & pl.col("_re_prefix_local_rank").eq_missing(pl.col("prefix_local_rank"))
    )
    return events.with_columns(
        pl.when(same).then(pl.col(name)).alias(name) for name in missing
    ).drop("_re_message", "_re_prefix_rank", "_re_prefix_local_rank")


# One writer's lines within a file: a file can interleave processes (torchrun --tee, srun, pdsh)
WRITER = ["file", "prefix_node", "prefix_host", "prefix_local_rank"]


# Families whose `rank` names another process than the writer: torchrun's failure summary
# lists the ranks it saw fail, in the agent's own log.
ABOUT_OTHERS = ("elastic",)


# A launcher's block quoting one worker's output: torchrun's failure-summary entry, Composer's
# section of a rank's captured STDOUT or STDERR (parsers/composer_launcher.py)
BLOCK_EVENTS = ("child_failed", "rank_section")


def _summary_block_ranks(events: pl.DataFrame) -> pl.DataFrame:
    """`_block_rank`: the rank of the launcher's block a line falls in: torchrun's
    failure-summary entry (`[1]:` ... `rank : 0 (local_rank: 0)` ... `traceback : ...`), where
    the agent quotes each failed child's traceback, or Composer's section of a rank's output.
    Its lines are that worker's, not the launcher's."""
    if "end_line" not in events.columns:
        return events.with_columns(pl.lit(None, dtype=pl.Int32).alias("_block_rank"))
    blocks = events.filter(
        pl.col("event").is_in(BLOCK_EVENTS)
        & pl.col("rank").is_not_null()
        & pl.col("end_line").is_not_null()
    ).select(
        "file",
        pl.col("line").cast(pl.Int64).alias("_block_start"),
        pl.col("end_line").cast(pl.Int64).alias("_block_end"),
        pl.col("rank").alias("_block_rank"),
    )
    if blocks.is_empty():
        return events.with_columns(pl.lit(None, dtype=pl.Int32).alias("_block_rank"))
    placed = (
        events.with_row_index("_order")
        .with_columns(pl.col("line").cast(pl.Int64).alias("_line"))
        .sort("_line")
        .join_asof(
            blocks.sort("_block_start"),
            left_on="_line",
            right_on="_block_start",
            by="file",
            strategy="backward",
            check_sortedness=False,  # both sides are sorted above
        )
    )
    inside = (pl.col("_line") > pl.col("_block_start")) & (pl.col("_line") <= pl.col("_block_end"))
    return (
        placed.with_columns(pl.when(inside).then(pl.col("_block_rank")).alias("_block_rank"))
        .sort("_order")
        .drop("_order", "_line", "_block_start", "_block_end")
    )


def _file_content_ranks(events: pl.DataFrame, limit: int) -> pl.DataFrame:
    """Per writer of a file, the one rank its content names (outside rank-prefixed lines and
    the failure summary's quotes of other processes); none for a writer whose lines name two
    or more process ids: several processes share that console (RETURNN's `Unhandled
    exception ... proc 25926` from three processes, returnn#1621), and one of them naming its
    rank says nothing of the others' lines."""
    about_others = (
        (pl.col("family").is_in(ABOUT_OTHERS) if "family" in events.columns else pl.lit(False))
        | pl.col("_block_rank").is_not_null()
        # mp.spawn's parent quoting a child's traceback (`-- Process 3 terminated with the
        # following error:`): that child's rank, not the rank of the console's other lines
        # (fairseq#869: rank 0's caught OOM above it)
        | (
            pl.col("extra").str.contains_any([OWN_RANK, REPORTED]).fill_null(False)
            if "extra" in events.columns
            else pl.lit(False)
        )
    )
    # the process a line names itself, else the one its prefix names (Ray's `(Actor pid=N)`:
    # actors of one console, openrlhf/OpenRLHF#265)
    pid = pl.coalesce("pid", "prefix_pid")
    # lines under a process's prefix and lines under none are two writers: a Ray worker's
    # `(RayTrainWorker pid=N) ... [rank=0, world_size=4]` says nothing of the driver's own
    # lines beside it (ray-project/ray#49260)
    prefixed = pl.col("prefix_pid").is_not_null()
    # a console where PyTorch's `[rankN]:` tags name several ranks is several processes' too:
    # one rank its untagged lines name says nothing of the others (ROCm/ROCm#4021: `[Rank 2]`
    # in a watchdog line the tag had not framed, the runtime's unranked reports around it)
    tagged_ranks = pl.col("prefix_rank").drop_nulls().n_unique()
    processes = events.group_by(WRITER).agg(
        (pid.drop_nulls().n_unique() + (prefixed.any() & ~prefixed.all()).cast(pl.UInt32)).alias(
            "_pids"
        ),
        tagged_ranks.alias("_tagged"),
    )
    named = (
        events.filter(
            pl.col("prefix_rank").is_null() & believed_rank("rank", limit) & ~about_others
        )
        .group_by(WRITER)
        .agg(pl.col("rank").unique().alias("_ranks"))
        .filter(pl.col("_ranks").list.len() == 1)
        .join(processes, on=WRITER, how="left", nulls_equal=True)
        .filter((pl.col("_pids").fill_null(0) < 2) & (pl.col("_tagged").fill_null(0) < 2))
        .select(*WRITER, pl.col("_ranks").list.first().alias("file_content_rank"))
    )
    return pl.concat([named, _one_tagged_process(events, processes, named)])


def _one_tagged_process(
    events: pl.DataFrame, processes: pl.DataFrame, named: pl.DataFrame
) -> pl.DataFrame:
    """Per writer whose content names no rank: the one rank its `[rankN]:` tags name, where its
    untagged lines name one process and nothing else does. PyTorch tags what a rank writes to
    stderr (its traceback) while NCCL writes its own lines bare: one process's bare NCCL lines
    beside one rank's tagged traceback are that rank's (sail-sg/zero-bubble-pipeline-parallelism
    #60: `lzm-h200-10:74737:75914 [1] ... NCCL WARN NET/Socket : ... message truncated`, then
    `[rank9]: Traceback (most recent call last):`). A tagged line that names an NCCL result
    of its own is left to the rules, which tie a process's chain to the wrapper of the same
    result only (pytorch/pytorch#150852)."""
    tagged = (
        events.filter(pl.col("prefix_rank").is_not_null())
        .group_by(WRITER)
        .agg(
            pl.col("prefix_rank").first().alias("file_content_rank"),
            pl.col("text").str.contains("NCCL", literal=True).any().alias("_says_nccl"),
        )
    )
    return (
        tagged.join(processes, on=WRITER, how="inner", nulls_equal=True)
        .filter((pl.col("_tagged") == 1) & (pl.col("_pids") == 1) & ~pl.col("_says_nccl"))
        .join(named, on=WRITER, how="anti", nulls_equal=True)
        .select(*WRITER, pl.col("file_content_rank").cast(named.schema["file_content_rank"]))
    )


def _node_key() -> pl.Expr:
    """Which node wrote the line: a node prefix, a host prefix, the path's node, else the file."""
    return pl.coalesce(
        pl.concat_str(pl.col("file"), pl.lit("!"), pl.col("prefix_node")),
        pl.concat_str(pl.lit("host:"), pl.col("prefix_host")),
        pl.concat_str(pl.lit("path:"), pl.col("path_node")),
        pl.concat_str(pl.lit("file:"), pl.col("file")),
    )


def _node_offsets(events: pl.DataFrame, limit: int) -> pl.DataFrame:
    """Per node, global minus local rank where its lines state both and all agree (ranks
    below `limit` only)."""
    stated = pl.coalesce(pl.col("prefix_rank"), pl.col("rank"), _world_comm_rank(events))
    from_pairs = (
        events.filter(stated.is_between(0, limit - 1) & pl.col("local_rank").is_not_null())
        .group_by("_node")
        .agg((stated - pl.col("local_rank")).unique().alias("_offsets"))
        .filter(pl.col("_offsets").list.len() == 1)
        .select("_node", pl.col("_offsets").list.first().cast(pl.Int32).alias("_offset"))
    )
    stated_offsets = _stated_offsets(events)
    from_pairs = pl.concat(
        [stated_offsets, from_pairs.join(stated_offsets, on="_node", how="anti")]
    )
    return pl.concat(
        [from_pairs, _host_order_offsets(events).join(from_pairs, on="_node", how="anti")]
    )


def _stated_offsets(events: pl.DataFrame) -> pl.DataFrame:
    """Per node, the offset torchrun's rendezvous result states outright (`node_ranks` events,
    parsers/rendezvous.py), where the node's results agree."""
    if not {"event", "value"} <= set(events.columns):
        return pl.DataFrame(schema={"_node": pl.String, "_offset": pl.Int32})
    return (
        events.filter(pl.col("event") == "node_ranks")
        .group_by("_node")
        .agg(pl.col("value").unique().alias("_offsets"))
        .filter(pl.col("_offsets").list.len() == 1)
        .select("_node", pl.col("_offsets").list.first().cast(pl.Int32).alias("_offset"))
    )


def _host_order_offsets(events: pl.DataFrame) -> pl.DataFrame:
    """Per host, its lowest world rank, when the NCCL inits of the world communicator show every
    rank and each host holds a run of consecutive ranks of the same length (torchrun's
    node_rank * nproc_per_node + local_rank)."""
    world_rank = _world_comm_rank(events)
    hosts = (
        events.filter(world_rank.is_not_null() & pl.col("host").is_not_null())
        .group_by("host")
        .agg(world_rank.unique().alias("_ranks"))
        .with_columns(
            pl.col("_ranks").list.len().alias("_count"),
            pl.col("_ranks").list.min().cast(pl.Int32).alias("_offset"),
        )
    )
    empty = pl.DataFrame(schema={"_node": pl.String, "_offset": pl.Int32})
    if hosts.is_empty() or "nranks" not in events.columns:
        return empty
    counts = hosts.get_column("_count")
    consecutive = (
        hosts.get_column("_ranks").list.max() - hosts.get_column("_offset") + 1
    ) == counts
    world_size = events.get_column("nranks").max()
    if counts.n_unique() != 1 or not consecutive.all() or counts.sum() != world_size:
        return empty
    return hosts.select(pl.concat_str(pl.lit("host:"), pl.col("host")).alias("_node"), "_offset")


def _world_comm_rank(events: pl.DataFrame) -> pl.Expr:
    """The rank an NCCL init names in the world communicator (the largest one seen)."""
    if not {"comm_rank", "nranks"} <= set(events.columns):
        return pl.lit(None, dtype=pl.Int32)
    world_size = events.get_column("nranks").max()
    if world_size is None:
        return pl.lit(None, dtype=pl.Int32)
    return pl.when(pl.col("nranks") == world_size).then(pl.col("comm_rank")).cast(pl.Int32)


def _nproc_per_node(lines: pl.DataFrame | None) -> int | None:
    """`--nproc_per_node N` from a launch command line in the logs, when all such lines agree."""
    if lines is None or "message" not in lines.columns:
        return None
    stated = (
        lines.filter(pl.col("message").str.contains("--n", literal=True))
        .select(
            pl.col("message")
            .str.extract(NPROC_PER_NODE, 1)
            .cast(pl.Int32, strict=False)
            .drop_nulls()
        )
        .to_series()
        .unique()
    )
    return int(stated.item()) if stated.len() == 1 else None


# glog's header on torch's C++ lines and torchrun's agent lines: `E0801 13:23:20.000000 32974`,
# `[E1218 20:27:21.426415540 `: month and day (c10 leaves the month unpadded: `W326` is March
# 26), then the clock. It has no year.
GLOG_STAMP = r"[IWEF](\d{3,4}) (\d{2}:\d{2}:\d{2}(?:\.\d{1,6})?)"


def glog_clock(text: pl.Expr, header: str) -> pl.Expr:
    """`MMDD HH:MM:SS.ffffff` from the glog header `header` (a pattern around GLOG_STAMP) finds
    in `text`, null where it finds none: text that sorts in time within one year."""
    return pl.concat_str(
        text.str.extract(header, 1).str.zfill(4), pl.lit(" "), text.str.extract(header, 2)
    )


def stamp_of(line: pl.Expr) -> pl.Expr:
    """The date and time a line starts with (Python logging, ISO 8601), or null."""
    return (
        line.str.extract(LEADING_TIMESTAMP, 1)
        .str.replace("T", " ", literal=True)
        .str.replace(",", ".", literal=True)
        .str.to_datetime("%Y-%m-%d %H:%M:%S%.f", strict=False, time_unit="us")
    )


def _timestamp() -> pl.Expr:
    """The parser's stamp, else the line's own leading stamp, else the launcher's."""
    return pl.coalesce(pl.col("timestamp"), stamp_of(pl.col("message")), pl.col("prefix_time"))


def _repeats_in_extra() -> pl.Expr:
    """A Ray-deduplicated line stands for several: say so in `extra` when it is free."""
    repeated = pl.concat_str(
        pl.lit('{"repeated": '), pl.col("prefix_repeats").cast(pl.String), pl.lit("}")
    )
    return pl.coalesce(pl.col("extra"), repeated)
