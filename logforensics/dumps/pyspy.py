"""`py-spy dump` output: where each thread of each process stood when the dump was taken.

Text (plain, `--native`, `--locals`, `--subprocesses`), one block per process:

    Process 18459: /work/venv/bin/python3 -u train.py --bad-rank 2
    Python v3.11.7 (/usr/bin/python3.11)
    Parent Process 18455: ...                  (only for a child, with --subprocesses)

    Thread 18459 (idle): "MainThread"          (idle, active, active+gil)
        barrier (torch/distributed/distributed_c10d.py:5356)
            Arguments:                         (--locals: indented deeper, skipped)
        pthread_cond_wait (libc.so.6)          (--native: a library, no line)
        train (train.py:267)

frames innermost first; processes of `--subprocesses` are separated by a line of dashes.
`--json` gives a list of threads: `pid`, `thread_id`, `os_thread_id`, `thread_name`,
`active`, `owns_gil`, `frames` [{`name`, `filename`, `short_filename`, `line`, ...}].
The text is read as lines in one polars pass (colour codes dropped, headers found by pattern
and carried forward over their frames); the JSON with the json module, a thread at a time.
"""

from __future__ import annotations

import json
import re
import sys

import polars as pl

FRAME_SCHEMA: dict[str, pl.DataType] = {
    "file": pl.String(),  # the dump file
    "pid": pl.Int64(),
    "parent_pid": pl.Int64(),  # the process that forked it (a DataLoader worker's rank)
    "command": pl.String(),
    "command_rank": pl.Int32(),  # `RANK=3` or `--rank 3` in the command line
    "thread_id": pl.Int64(),
    "thread_name": pl.String(),
    "thread_state": pl.String(),  # idle, active, active+gil
    "depth": pl.Int32(),  # 0: the innermost frame
    "function": pl.String(),
    "source": pl.String(),  # file as py-spy prints it, or the native library
    "source_line": pl.Int64(),  # null for a native frame
    "line": pl.UInt32(),  # where the frame is in the dump file (text dumps)
    "text": pl.String(),  # that line as written (text dumps)
}

PROCESS = r"^Process (\d+): (.*)$"
PARENT = r"^Parent Process (\d+):"
# a thread's id in decimal, or in hex as a pasted block (`Thread 0x7FA6E7C01740`) has it
THREAD = r'^\s*Thread (0x[0-9A-Fa-f]+|\d+) \(([a-z+]+)\): "(.*)"$'
# a frame: four spaces in py-spy's own output, fewer in a pasted block; `--locals` lines are
# indented deeper
FRAME = r"^ {0,4}(\S.*) \(([^()]*?)(?::(\d+))?\)$"
# a frame of Python code, which a pasted block without its headers must begin with
PYTHON_FRAME = r"^ {0,4}\S+ \([^()]*\.py:\d+\)$"
# a global rank in a command line; `--local_rank` and `LOCAL_RANK=` are not one
COMMAND_RANK = r"(?:^|[\s;])(?:RANK=|--rank[= ]|--global[_-]rank[= ])(\d{1,7})\b"
ANSI = r"\x1b\[[0-9;]*[A-Za-z]"
# the command that took the dump, pasted with its shell prompt above it (lhotse-speech/lhotse
# #1146: `(dev_swbd) user@host:~/dev_swbd/icefall$ py-spy dump -p 3740553`)
COMMAND_ECHO = r"\bpy-spy dump\b"


def looks_like_text_dump(head: bytes) -> bool:
    """py-spy's output, or a block of it pasted without its process header: a thread header
    or Python frames from the first line on (fairseq#4816's `Thread 0x7FA6E7C01740 (idle):
    "MainThread"`, sglang#22607's frames alone)."""
    if not _may_open_a_dump(head):
        return False
    text = re.sub(ANSI, "", head[:1024].decode("utf-8", "replace"))
    lines = text.splitlines()
    if lines and re.search(COMMAND_ECHO, lines[0]):
        lines = lines[1:]
    if lines and lines[0].startswith("Process "):
        return any(line.startswith("Python v") for line in lines[1:3])
    first = [line for line in lines if line.strip()][:3]
    if len(first) < 2 or not all(re.match(THREAD, line) or re.match(FRAME, line) for line in first):
        return False
    # under a thread header any frames do (`--native`: `sched_yield (libc.so.6)`); frames
    # alone must be Python's
    return re.match(THREAD, first[0]) is not None or _python_frames(first)


def _may_open_a_dump(head: bytes) -> bool:
    """A necessary condition, cheap enough for every file listed: the first line of a dump is
    a process header, a thread header (which holds `"`) or a frame (which holds `)`)."""
    window = head[:1024]
    return b")" in window or b'"' in window or b"Process " in window


def _python_frames(lines: list[str]) -> bool:
    return bool(lines) and all(re.match(PYTHON_FRAME, line) for line in lines)


def looks_like_json_dump(head: bytes) -> bool:
    text = head.lstrip()[:2048]
    return text.startswith(b"[") and b'"thread_name"' in text and b'"frames"' in text


def text_frames(lines: pl.DataFrame) -> pl.DataFrame:
    """FRAME_SCHEMA rows from the lines (`file, line, text`) of text dumps."""
    text = pl.col("text")
    per_file = ["file"]
    lines = lines.with_columns(pl.col("text").alias("_written"), text.str.replace_all(ANSI, ""))
    marked = lines.with_columns(
        text.str.extract(PROCESS, 1).cast(pl.Int64, strict=False).alias("_pid"),
        text.str.extract(PROCESS, 2).alias("_command"),
        text.str.extract(PARENT, 1).cast(pl.Int64, strict=False).alias("_parent"),
        text.str.extract_groups(THREAD).alias("_thread"),
        text.str.extract_groups(FRAME).alias("_frame"),
    ).with_columns(
        pl.col("_pid").is_not_null().cum_sum().over(per_file).alias("_process_block"),
        pl.col("_thread")
        .struct.field("1")
        .is_not_null()
        .cum_sum()
        .over(per_file)
        .alias("_thread_block"),
    )
    block = ["file", "_process_block"]
    thread = ["file", "_process_block", "_thread_block"]
    carried = marked.with_columns(
        pl.col("_pid").forward_fill().over(per_file),
        pl.col("_command").forward_fill().over(per_file),
        pl.col("_parent").forward_fill().over(block),
        _thread_id(pl.col("_thread").struct.field("1")).forward_fill().over(thread),
        pl.col("_thread").struct.field("2").forward_fill().over(thread).alias("thread_state"),
        pl.col("_thread").struct.field("3").forward_fill().over(thread).alias("thread_name"),
    )
    # frames pasted without any thread header: one thread, taken for the main one (the
    # thread a user pastes from a hung rank)
    headless = pl.col("_thread").struct.field("1").is_null().all().over(per_file)
    carried = carried.with_columns(
        pl.when(headless).then(pl.lit(0, pl.Int64)).otherwise("thread_id").alias("thread_id"),
        pl.when(headless).then(pl.lit("MainThread")).otherwise("thread_name").alias("thread_name"),
    )
    frames = carried.filter(
        pl.col("_frame").struct.field("1").is_not_null() & pl.col("thread_id").is_not_null()
    )
    return frames.select(
        "file",
        pl.col("_pid").alias("pid"),
        pl.col("_parent").alias("parent_pid"),
        pl.col("_command").alias("command"),
        pl.col("_command")
        .str.extract(COMMAND_RANK, 1)
        .cast(pl.Int32, strict=False)
        .alias("command_rank"),
        "thread_id",
        "thread_name",
        "thread_state",
        (pl.int_range(pl.len()).over(thread).cast(pl.Int32)).alias("depth"),
        pl.col("_frame").struct.field("1").alias("function"),
        pl.col("_frame").struct.field("2").alias("source"),
        pl.col("_frame").struct.field("3").cast(pl.Int64, strict=False).alias("source_line"),
        pl.col("line").cast(pl.UInt32),
        pl.col("_written").alias("text"),
    )


def _thread_id(written: pl.Expr) -> pl.Expr:
    hexadecimal = written.str.strip_prefix("0x").str.to_integer(base=16, strict=False)
    decimal = written.cast(pl.Int64, strict=False)
    return (
        pl.when(written.str.starts_with("0x"))
        .then(hexadecimal)
        .otherwise(decimal)
        .cast(pl.Int64)
        .alias("thread_id")
    )


def json_frames(data: bytes, file: str) -> pl.DataFrame:
    """FRAME_SCHEMA rows from a `--json` dump; an unreadable one gives none."""
    try:
        threads = json.loads(data.decode("utf-8", "replace"))
    except (json.JSONDecodeError, RecursionError):
        return pl.DataFrame(schema=FRAME_SCHEMA)
    rows = []
    for thread in threads if isinstance(threads, list) else []:
        if not isinstance(thread, dict) or not isinstance(thread.get("frames"), list):
            continue
        state = "active" if thread.get("active") else "idle"
        if thread.get("owns_gil"):
            state += "+gil"
        for depth, frame in enumerate(thread["frames"][:MAX_FRAMES]):
            if not isinstance(frame, dict):
                continue
            rows.append(
                {
                    "file": file,
                    "pid": _number(thread.get("pid")),
                    "parent_pid": None,
                    "command": None,
                    "command_rank": None,
                    "thread_id": _number(thread.get("os_thread_id") or thread.get("thread_id")),
                    "thread_name": str(thread.get("thread_name") or ""),
                    "thread_state": state,
                    "depth": depth,
                    "function": str(frame.get("name") or ""),
                    "source": str(frame.get("short_filename") or frame.get("filename") or ""),
                    "source_line": _number(frame.get("line")),
                    "line": None,
                    "text": None,
                }
            )
    return pl.DataFrame(rows, schema=FRAME_SCHEMA) if rows else pl.DataFrame(schema=FRAME_SCHEMA)


MAX_FRAMES = 1000


def _number(value: object) -> int | None:
    return value if isinstance(value, int) and -(2**62) < value < 2**62 else None


# --- where a thread waits ---------------------------------------------------------------

COLLECTIVES = frozenset(
    "all_reduce all_gather all_gather_into_tensor all_gather_object barrier broadcast "
    "broadcast_object_list reduce reduce_scatter reduce_scatter_tensor all_to_all "
    "all_to_all_single gather scatter send recv isend irecv monitored_barrier".split()
)
STDLIB = frozenset(sys.stdlib_module_names)
# Installed training libraries: py-spy names a site-packages module by its import path
# (`deepspeed/runtime/zero/stage3.py`), which reads like the job's own relative path, so
# their frames are told apart by the package (deepspeedai/DeepSpeed#6524: ZeRO-3's and
# accelerate's frames between autograd and `training_loop (src/.../fine_tune_accelerate.py)`)
LIBRARIES = frozenset(
    "accelerate apex bitsandbytes colossalai datasets deepspeed flash_attn horovod "
    "huggingface_hub lightning lightning_fabric mmcv mmengine numpy peft pytorch_lightning ray "
    "safetensors timm tokenizers torchaudio torchvision tqdm transformers triton trl vllm "
    "xformers".split()
)
# Libraries' own waits for a collective, named after what they gather: DeepSpeed ZeRO-3 fetches
# a module's parameters before its forward (an all-gather every rank must join;
# deepspeedai/DeepSpeed#860's faulthandler stack in `fetch_sub_module` ->
# `_synchronize_communication`)
LIBRARY_COLLECTIVES = (
    (
        ("fetch_sub_module", "_synchronize_communication", "_all_gather_params"),
        "deepspeed/runtime/zero",
        "dist.all_gather (DeepSpeed ZeRO-3's parameter fetch)",
    ),
)


def is_user_frame(source: str | None, line: int | None) -> bool:
    """A frame of the job's own code: a Python file outside torch, site-packages and the
    standard library."""
    if not source or line is None or source.startswith("<"):
        return False
    if source.startswith(("torch/", "torch\\")) or "site-packages" in source:
        return False
    top = source.replace("\\", "/").split("/", 1)[0].removesuffix(".py")
    return top not in STDLIB and top not in LIBRARIES


# native frames of a thread blocked on a lock or a condition (`--native`)
LOCK_WAITS = (
    "acquire_lock",
    "pthread_mutex_lock",
    "pthread_cond_wait",
    "pthread_cond_timedwait",
    "sem_wait",
    "sem_timedwait",
)
LOCK_LIKE = ("a lock", "a queue", "a blocking call")


def waiting_in(
    functions: list[str],
    sources: list[str | None],
    numbers: list[int | None] | None = None,
    state: str | None = None,
) -> str:
    """What a thread's frames (innermost first) say it waits in, in words. A thread idle in
    the job's own code with no known wait in its stack is blocked in a call into C (a lock,
    I/O, a device sync); a thread busy there is running."""
    # a lock or queue the DataLoader waits on is its wait for a batch (bigscience's tr11 eval
    # hang: `wait (threading.py:306)` / `get (queue.py:179)` / `_try_get_data
    # (torch/utils/data/dataloader.py:1011)`)
    in_loader = any(source and source.endswith("dataloader.py") for source in sources)
    for function, source in zip(functions, sources, strict=True):
        name = function.rsplit(".", 1)[-1]
        if in_loader and name in ("wait", "acquire", "get"):
            return "the DataLoader (waiting for a batch)"
        if name in COLLECTIVES and source and "distributed" in source:
            return f"dist.{name}"
        for names, library, words in LIBRARY_COLLECTIVES:
            if name in names and source and library in source:
                return words
        if name in ("_engine_run_backward", "backward") and source and "autograd" in source:
            return f"backward ({_gradient_reduction(sources)})"
        if "DataLoader" in function or "_next_data" in function:
            return "the DataLoader (waiting for a batch)"
        if name == "sleep" and source and source.startswith("time"):
            return "time.sleep"
        if name in ("wait", "acquire") and source and source.startswith("threading"):
            return f"a lock ({function})"
        if name == "get" and source and source.startswith("queue"):
            return f"a queue ({function})"
    lines = numbers if numbers is not None else [0] * len(functions)
    native = [function for function, line in zip(functions, lines, strict=True) if line is None]
    if any(wait in function for function in native for wait in LOCK_WAITS):
        return "a lock"
    if state == "idle":
        return "a blocking call (a lock, I/O or a device sync)"
    return "running"


# Who reduces the gradients a backward waits on, by the frames around it (innermost first):
# DeepSpeed's ZeRO engine (deepspeedai/DeepSpeed#3032: `backward
# (deepspeed/runtime/zero/stage_1_and_2.py:2013)` under autograd's), FSDP's hooks, else DDP's
GRADIENT_REDUCERS = (
    ("deepspeed/", "DeepSpeed's gradient reduction"),
    ("fsdp/", "FSDP's gradient reduce-scatter"),
)


def _gradient_reduction(sources: list[str | None]) -> str:
    for source in sources:
        path = (source or "").replace("\\", "/")
        for part, words in GRADIENT_REDUCERS:
            if part in path:
                return words
    return "DDP's gradient all-reduce"


def waits_for_others(waiting: str) -> bool:
    """Whether what `waiting_in` said a thread waits in is a collective (or DDP's backward,
    whose all-reduce waits for every rank): a wait for the other ranks."""
    return waiting.startswith(("dist.", "backward"))


STUCK_SCHEMA: dict[str, pl.DataType] = {
    "rank": pl.Int32(),
    "pid": pl.Int64(),
    "file": pl.String(),
    "line": pl.UInt32(),  # the user frame's line in the dump (text dumps)
    "line_text": pl.String(),  # that line as written
    "thread_state": pl.String(),
    "waiting": pl.String(),  # what it waits in, in words (see `waiting_in`)
    "user_frame": pl.String(),  # `function (file:line)` of the innermost frame of the job's code
    "innermost": pl.String(),  # `function (file:line)` of the innermost frame
    # when it waits on a lock or a blocking call: the process's other threads in the job's
    # own code (one of them may hold what it waits for), busy ones first
    "other_threads": pl.String(),
    "tool": pl.String(),  # py-spy or faulthandler
}


def where_stuck(stacks: pl.DataFrame) -> pl.DataFrame:
    """Per rank (its own process, not a DataLoader worker): where its main thread stood.
    STUCK_SCHEMA. Stacks no rank claims give a row per main thread of each file (a paste
    without `Process` headers holds no process id)."""
    own = stacks.filter(~pl.col("is_worker")) if "is_worker" in stacks.columns else stacks
    # (a dump of one thread alone, its outer frames cut from the paste, is its process's; a log
    # holding several ranks' stacks, none with a process id, holds one such dump per rank)
    alone = pl.col("thread_id").n_unique().over("file", "pid", "rank") == 1
    main_thread = (
        (pl.col("thread_name") == "MainThread") | (pl.col("thread_id") == pl.col("pid")) | alone
    )
    threads = own.sort("rank", "file", "pid", "thread_id", "depth")
    rows = []
    # a rank's process is one row (as chosen by `load`); unclaimed ones a row per main thread
    unclaimed = pl.when(pl.col("rank").is_null()).then(pl.col("thread_id")).alias("_thread")
    for (rank, file, pid, _), frames in (
        threads.filter(main_thread)
        .with_columns(unclaimed)
        .group_by("rank", "file", "pid", "_thread", maintain_order=True)
    ):
        functions = frames.get_column("function").to_list()
        sources = frames.get_column("source").to_list()
        numbers = frames.get_column("source_line").to_list()
        state = frames.item(0, "thread_state")
        user = _user_index(sources, numbers)
        shown = user if user is not None else 0
        waiting = waiting_in(functions, sources, numbers, state)
        others = (
            _other_threads(
                threads.filter(
                    pl.col("rank").eq_missing(rank)
                    & (pl.col("file") == file)
                    & pl.col("pid").eq_missing(pid)
                    & ~main_thread
                )
            )
            if waiting.startswith(LOCK_LIKE)
            else None
        )
        rows.append(
            {
                "rank": rank,
                "pid": pid,
                "file": frames.item(0, "file"),
                "line": frames.item(shown, "line"),
                "line_text": frames.item(shown, "text"),
                "thread_state": state,
                "waiting": waiting,
                "user_frame": _frame_words(functions, sources, numbers, user),
                "innermost": _frame_words(functions, sources, numbers, 0),
                "other_threads": others,
                "tool": frames.item(0, "tool") if "tool" in frames.columns else "py-spy",
            }
        )
    return pl.DataFrame(rows, schema=STUCK_SCHEMA) if rows else pl.DataFrame(schema=STUCK_SCHEMA)


def _user_index(sources: list[str | None], numbers: list[int | None]) -> int | None:
    return next(
        (
            index
            for index, (source, number) in enumerate(zip(sources, numbers, strict=True))
            if is_user_frame(source, number)
        ),
        None,
    )


def _other_threads(frames: pl.DataFrame) -> str | None:
    """`"writer" (active+gil) at holder (train.py:7)` for each other thread with a frame of
    the job's own code, busy threads first."""
    said = []
    for (_, name, state), thread in frames.group_by(
        "thread_id", "thread_name", "thread_state", maintain_order=True
    ):
        functions = thread.get_column("function").to_list()
        sources = thread.get_column("source").to_list()
        numbers = thread.get_column("source_line").to_list()
        user = _user_index(sources, numbers)
        if user is not None:
            words = _frame_words(functions, sources, numbers, user)
            said.append((state == "idle", f'"{name}" ({state}) at {words}'))
    # commas, not semicolons: the rule's summary parts its groups of ranks with semicolons
    return ", ".join(words for _, words in sorted(said, key=lambda pair: pair[0])) or None


def _frame_words(
    functions: list[str], sources: list[str | None], numbers: list[int | None], at: int | None
) -> str | None:
    if at is None:
        return None
    place = sources[at] if numbers[at] is None else f"{sources[at]}:{numbers[at]}"
    return f"{functions[at]} ({place})"
