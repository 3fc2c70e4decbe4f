"""A rank still busy with work of its own when the others gave up waiting for it: the cause of
their timeout, which `rules/collective_timeout.py` reports as that rank's departure. (A rank
that issued a collective no other rank did, inside such work, is a stage divergence.)

Evaluation, checkpoint saving and data preparation often run on one rank only (`if rank ==
0:`, the main process's tokenizer, a framework's rank-zero evaluation). The other ranks go on
to the next collective and wait there; when the work outlasts the process group's timeout
they time out, and their reports are all the logs say unless the busy rank's own progress
shows it: a bar or a progress line of that work still running, and no timeout of its own.

    Tokenizing Prompts (num_proc=64):  92%|...| 328986/359152 [29:58<12:05, 41.59 examples/s]
    ep 1 dev eval, step 99, min_wer 0.083, ce 0.286, fer 0.969, mem_usage:cuda:0 1.6GB

(axolotl#2684: rank 1's store wait timed out after 30 minutes while the tokenizer bar stood
at 92%; rwth-i6/returnn#1621: the other processes' `Socket Timeout` while rank 0 evaluated the
dev set.)
"""

from __future__ import annotations

import json

import polars as pl

from logforensics.desync import TIMEOUT_EVENTS
from logforensics.findings import WAITED, Finding, exception_text
from logforensics.framing import frame_lines
from logforensics.job import Job
from logforensics.placement import placed_finding
from logforensics.stopped_workers import child_failed_error
from logforensics.text import duration, rank_list
from parsers.hccl import remote_rank
from parsers.phase_banners import GLUED_RECORD, phase_name
from parsers.progress_bars import bar_name

# Work a job commonly runs on one rank while the others wait: the name of the bar or of the
# progress line says it. Loading (a checkpoint, shards) runs on every rank at start-up.
ONE_RANK_WORK = (
    r"(?i)\b(?:eval|evaluat\w*|valid\w*|test(?:ing)?|predict\w*|inference|sav(?:e|ing)"
    r"|checkpoint\w*|tokeniz\w*|preprocess\w*|download\w*|upload\w*|push\w*|convert\w*|export\w*"
    # Hugging Face datasets' `.map()` bar: dataset preprocessing (`Map (num_proc=14):  70%|`)
    r"|map)\b"
)
LOADING = r"(?i)\bload"
# The training loop's own bar, named by that alone (`Train:  58%|...| 818/1421 [13:32:17<...`,
# Lightning's `Epoch 3:`, diffusers' `Steps:`): every rank runs that loop, and its clock is the
# training's, not a wait's; a rank inside it says nothing of work only it did
# (modelscope/ms-swift#5706: rank 6 timed out 13 h into the main process's `Train` bar). A
# split's name before other work (YOLO's `train: Scanning ...`) is that work's.
TRAINING_LOOP = (
    r"(?i)^(?:train(?:ing)?(?: progress| loop| epoch[\s\d/]*)?|epoch[\s\d/]*|steps?"
    r"|iter(?:ation)?s?|fit(?:ting)?)$"
)
# A monitored barrier's report that it gave up waiting (parsers/monitored_barrier.py)
BARRIER_WAITS = ("barrier_failed", "barrier_peer_error")
# The rank that prints a job's progress bars when no prefix says whose they are.
MAIN_RANK = 0
# How close (in lines) work must stand to a wait, or to its file's end, to be what a writer was
# doing when the others gave up; and how long a bar must have run, as a share of the timeout,
# to be work that outlasted it whatever its name.
NEAR = 20
LONG_SHARE = 0.9
# ... and how many timeouts a bar must have run to have begun before the others' wait
LOOP_SHARE = 4
# A line's rank stated by the line, its prefix or its path: not inferred for a whole file from
# one line's content. A writer a launcher prefix or path names by local rank (torchrun --tee's
# `[default2]:`) is one process: its other lines' rank holds for it.
_stated = (
    pl.col("rank_from").ne_missing(pl.lit("file_content")) | pl.col("local_rank").is_not_null()
)
# A progress line's name: the line up to its first separator (`ep 1 dev eval, step 99, ...`).
LINE_NAME = r"^\s*([^,|;]*)"

FIX = (
    "Work that one rank does while the others wait in a collective must finish within the "
    "process group's timeout. Run it on every rank (distributed evaluation), do it before the "
    "distributed job or once beforehand (preprocess and cache the data, then load the cache "
    "on every rank), put the others' wait after it behind a barrier with a longer timeout, or "
    "raise the timeout for it (`init_process_group(timeout=...)`; Hugging Face "
    "`--ddp_timeout`)."
)


def busy_past_timeout(job: Job) -> list[Finding]:
    waits = _waits(job)
    if waits.is_empty():
        return []
    # a wait whose rank was inferred for its whole file from another line's content (a
    # console's bar `on rank=0`) names no waiter: a console holds several ranks' lines
    waiting = set(waits.filter(_stated).get_column("rank").drop_nulls().to_list())
    timeout_ms = waits.get_column("timeout_ms").drop_nulls().max()
    activity = _last_activity(job, waits, timeout_ms)
    # a rank known not to be among known waiters, still inside a bar, was busy whatever the
    # bar's name (huggingface/nanotron#204: rank 0 grouping texts while ranks 2 and 3 waited)
    not_waiting = pl.col("_writer").is_not_null() & ~pl.col("_writer").is_in(list(waiting))
    running = pl.col("_work") | (pl.lit(bool(waiting)) & pl.col("_unfinished_bar"))
    named = activity.filter(not_waiting & running)
    # unattributed, still inside a bar while ranks that are not the main one waited: the main
    # process's bar, whatever its name but loading, which every rank does at start-up
    # (open-mmlab/mmdetection3d#1635: an unnamed evaluation bar at 5853/6019, then ranks 3, 6
    # and 7 time out)
    loading = pl.col("_name").str.contains(LOADING).fill_null(False)
    unnamed = activity.filter(pl.col("_writer").is_null() & (running & ~loading | pl.col("_work")))
    if named.get_column("_writer").n_unique() == 1:
        # without the waiting ranks' numbers the busy one may be among them: a guess
        confidence = "medium" if waiting else "low"
        busy, rows, whose = int(named.item(0, "_writer")), named, ""
    elif (
        named.is_empty()
        and waiting
        and MAIN_RANK not in waiting
        and not unnamed.is_empty()
        and waits.filter(pl.col("rank").is_null() | ~_stated).is_empty()
        and not _outside_the_workers_relay(unnamed, waits)
        and not _waited_for_someone_else(waits)
    ):
        # work no prefix attributes is most often the main process's (frameworks print
        # progress and evaluation on it alone): a guess, said as one; not when a process of
        # unknown rank timed out too, whose work it may be (cache-dit#761: `what(): [PG ID 2
        # ... Rank 0]`, a subgroup's rank, under a bar of the training loop)
        busy, rows, confidence = MAIN_RANK, unnamed, "low"
        whose = " (the main process, which prints the job's progress)"
    else:
        return []
    if _failed_on_its_own(job, busy):
        return []
    if not waits.filter(pl.col("peer_rank") == busy).is_empty():
        # a waiting rank's own report names the busy one as the rank it waited for: two
        # independent signs, however the busy one was found
        confidence = "medium"
    row = rows.row(0, named=True)
    who = rank_list(sorted(waiting)) if waiting else "the other ranks"
    summary = (
        f"Rank {busy}{whose} was still busy with work of its own ({row['_name']}"
        f"{_how_far(row)}) when {who} gave up waiting: the others wait in a collective for work "
        "only one rank does (evaluation, saving, data preparation), and it outlasted the "
        "timeout."
    )
    evidence = pl.concat([rows.select(waits.columns), waits.head(3)])
    return [
        placed_finding(
            job,
            evidence,
            kind="collective_timeout",
            severity="error",
            part="departure",
            summary=summary,
            fix=FIX,
            ranks=[busy],
            confidence=confidence,
            details={
                "departure": "busy",
                "work": row["_name"],
                "other_ranks": sorted(waiting),
            },
        )
    ]


# A collective the innermost frame of a traceback is in (`comm.py:408 in barrier`).
COLLECTIVE_FRAME = (
    r"\bin (?:barrier|monitored_barrier|all_reduce|all_gather\w*|_all_gather_base|broadcast\w*"
    r"|reduce_scatter\w*|_reduce_scatter_base|all_to_all\w*|reduce|gather|scatter)$"
)
IN_WORK = '"in_work":'
SAVE_FIX = (
    "Saving (or evaluating) through a library that issues collectives must run on every rank: "
    "accelerate's `save_state`, DeepSpeed's `save_checkpoint` and an FSDP full state dict "
    "gather from all ranks and write from the main process themselves. Call them outside "
    "`if is_main_process:` (or gather the state on every rank first and only write the files "
    "on one)."
)


def collective_inside_one_rank_work(job: Job) -> list[Finding]:
    """One process's traceback stops in a collective called from saving or evaluation code
    (`save_state` -> DeepSpeed's `save_checkpoint` -> `barrier`), and no other rank's does:
    that work issues collectives every rank must join, but only this process took its path
    (a save under `if is_main_process:`), so the others never joined (NVIDIA/nccl#1132). A
    process no line names is taken for the main one, which saves, at low confidence."""
    events = job.events
    if "extra" not in events.columns:
        return []
    stuck = events.filter(
        (pl.col("event") == "exception")
        & pl.col("extra").str.contains(IN_WORK, literal=True).fill_null(False)
        & pl.col("frame").str.contains(COLLECTIVE_FRAME).fill_null(False)
    ).sort("file", "line")
    ranks = stuck.get_column("rank").drop_nulls().unique().to_list()
    if stuck.is_empty() or len(ranks) > 1 or (ranks and stuck.get_column("rank").is_null().any()):
        return []
    if len(stuck) > 1 and not ranks:
        return []  # several unnamed processes in it: every rank may have been saving
    busy = int(ranks[0]) if ranks else MAIN_RANK
    if _failed_elsewhere(job, busy, stuck):
        return []
    row = stuck.row(0, named=True)
    work = json.loads(str(row["extra"]))["in_work"]
    collective = str(row["frame"]).rsplit(" in ", 1)[-1]
    who = f"Rank {busy}" if ranks else f"Rank {busy} (the process that saves, as a guess)"
    summary = (
        f"{who} waited in {collective} inside {work}, and no other rank did: that work issues "
        "collectives every rank must join, but only this rank took its path (a save or an "
        "evaluation under `if is_main_process:`), so the others never joined."
    )
    return [
        placed_finding(
            job,
            stuck,
            kind="stage_divergence",
            severity="error",
            part="departure",
            summary=summary,
            fix=SAVE_FIX,
            ranks=[busy],
            confidence="medium" if ranks else "low",
            details={"departure": "alone_in_work", "work": work, "collective": collective},
        )
    ]


def _failed_elsewhere(job: Job, busy: int, stuck: pl.DataFrame) -> bool:
    """Whether a rank's own failure explains the wait better: an exception that is not a
    wait, on a rank other than the stuck one. torchrun's ChildFailedError is the launcher's
    word that a worker failed, no failure of its own."""
    others = job.events.filter(
        (pl.col("event") == "exception")
        & pl.col("exc_type").is_not_null()
        & ~child_failed_error()
        & ~exception_text().str.contains(WAITED)
        & ~pl.col("rank").eq_missing(pl.lit(busy, pl.Int32))
    ).join(stuck.select("file", "line"), on=["file", "line"], how="anti")
    return not others.is_empty()


# Launchers that put their prefix on every line a worker writes, its prints included
WORKER_RELAYS = frozenset(
    ("ray", "torchrun_tee", "srun", "mpirun", "mpirun_label", "skypilot", "determined")
)


def _waited_for_someone_else(waits: pl.DataFrame) -> bool:
    """Whether a waiting rank's own report names the peer it waited for, and not as the main
    rank: a rank other than the main one (`waiting for send/recv from rank 3`), or a peer in its
    communicator's own numbering, which may be any global rank (HCCL's `from remote rank:
    [24]` under RankID 101, vllm-project/vllm-ascend#3413, beside a Ray worker's graph-capture
    bar): the wait says whom it waited for, and the guess would contradict it."""
    named = waits.filter(pl.col("peer_rank").is_not_null() & (pl.col("peer_rank") != MAIN_RANK))
    return not named.is_empty() or not waits.filter(remote_rank().is_not_null()).is_empty()


def _outside_the_workers_relay(work: pl.DataFrame, waits: pl.DataFrame) -> bool:
    """Whether every wait came through a launcher that prefixes each line its workers write and
    the unattributed work did not: a line of the driver's, no worker's (verl-project/verl#3873:
    the driver's `Training Progress` bar beside `(WorkerDict pid=97397, ip=...) [rank3]:` and
    its ALLREDUCE timeout, in a Ray console)."""
    rows = pl.concat([work.select("file", "line", "text"), waits.select("file", "line", "text")])
    framed = frame_lines(rows.unique(["file", "line"]))
    relays = {
        (file, line): set(WORKER_RELAYS) & set((framing or "").split("+"))
        for file, line, framing in framed.select("file", "line", "framing").iter_rows()
    }
    of_waits = [relays.get(key, set()) for key in waits.select("file", "line").iter_rows()]
    shared = set.intersection(*of_waits) if of_waits else set()
    return bool(shared) and all(
        not shared & relays.get(key, set()) for key in work.select("file", "line").iter_rows()
    )


def _waits(job: Job) -> pl.DataFrame:
    """Collective timeouts, exceptions that say a wait timed out, and monitored barriers that
    gave up on a rank (deepspeedai/DeepSpeed#4488: rank 3's errors waiting for rank 0 while the
    main process's `Map` bar stood at 70% after 6 hours)."""
    events = job.events
    timed_out = pl.col("event").is_in((*TIMEOUT_EVENTS, *BARRIER_WAITS)) | (
        (pl.col("event") == "exception") & exception_text().str.contains(WAITED)
    )
    return events.filter(timed_out).sort("file", "line")


def _last_activity(job: Job, waits: pl.DataFrame, timeout_ms: int | None) -> pl.DataFrame:
    """Each writer's last activity (a bar, a progress line, a phase banner) near the waits
    or at the end of its file, named, with `_work` telling whether it is work one rank does
    still running. The writer is the rank the line, its prefix or its path states; a rank
    inferred for a whole file from one line's content is no writer (a console holds several)."""
    events = job.events
    is_bar = pl.col("event") == "progress_bar"
    is_line = (pl.col("event") == "stage") & (pl.col("family") == "progress")
    is_phase = pl.col("event") == "phase"
    # a record glued to a bar's end was written after the bar
    glued = is_phase & pl.col("message").str.contains(GLUED_RECORD)
    activity = events.filter(is_bar | is_line | is_phase).sort(
        "file", "line", glued, maintain_order=True
    )
    writer = pl.when(_stated).then(pl.col("rank"))
    banner = pl.when(is_phase).then(phase_name(pl.col("message")))
    activity = activity.with_columns(
        writer.alias("_writer"),
        # a bar without a name does the work the banner before it announced
        banner.forward_fill().over("file", writer).alias("_banner"),
    )
    name = (
        pl.when(is_bar)
        .then(bar_name(pl.col("message")))
        .when(is_line)
        .then(pl.col("message").str.extract(LINE_NAME, 1).str.strip_chars(" :-"))
        .otherwise(pl.col("_banner"))
    )
    name = pl.when(name != "").then(name).otherwise(pl.col("_banner"))
    values = pl.col("values") if "values" in events.columns else pl.lit(None, pl.List(pl.Int64))
    unfinished = ~is_bar | (values.list.first() < values.list.last()).fill_null(True)
    named_work = name.str.contains(ONE_RANK_WORK) & ~name.str.contains(LOADING)
    training = name.str.contains(TRAINING_LOOP).fill_null(False) & ~named_work.fill_null(False)
    waited_ms = timeout_ms or float("inf")
    # a bar that had run for several timeouts when the others gave up began long before their
    # wait: the loop every rank runs (axolotl-ai-cloud/axolotl#967: an unnamed bar 5:58:04 into
    # training, glued to rank 6's 30-minute timeout), not work one rank did while they waited
    began_before = is_bar & (_elapsed_ms() > LOOP_SHARE * waited_ms).fill_null(False)
    long_running = is_bar & ~training & ~began_before & (_elapsed_ms() >= LONG_SHARE * waited_ms)
    # loading after a banner of one-rank work loads for that work (finetrainers#114: the
    # validation pipeline's `Loading checkpoint shards: 100%`): the phase is still running,
    # however far its loading bar got
    banner = pl.col("_banner")
    in_phase = (
        name.str.contains(LOADING)
        & banner.str.contains(ONE_RANK_WORK)
        & ~banner.str.contains(LOADING)
    ).fill_null(False)
    own_work = (named_work.fill_null(False) | long_running.fill_null(False)) & unfinished
    last = activity.group_by("_writer", maintain_order=True).last()
    return _near_waits(job, last, waits).with_columns(
        pl.when(in_phase)
        .then(banner)
        .otherwise(pl.coalesce(name, pl.lit("a progress bar")))
        .alias("_name"),
        pl.when(~in_phase).then(values).alias("_values"),
        pl.when(is_bar & ~in_phase).then(_elapsed_ms()).alias("_elapsed_ms"),
        (own_work | in_phase).alias("_work"),
        (is_bar & unfinished & ~training & ~began_before).alias("_unfinished_bar"),
    )


MINUTE_MS = 60_000  # a bar's run shorter than this says nothing of a timeout


def _elapsed_ms() -> pl.Expr:
    """A bar's elapsed time (`[29:58<12:05, ...]`, `[1:50:07<...`) in milliseconds."""
    parts = pl.col("message").str.extract(r"\[([0-9:]+)<", 1).str.split(":")
    seconds = parts.list.eval(
        pl.element().cast(pl.Int64, strict=False)
        * pl.lit(60, pl.Int64).pow(pl.len() - 1 - pl.int_range(pl.len()))
    ).list.sum()
    return seconds * 1000


def _near_waits(job: Job, last: pl.DataFrame, waits: pl.DataFrame) -> pl.DataFrame:
    """The rows of `last` within NEAR lines of a wait in their file, or of their file's end:
    work long before the hang says nothing about it."""
    line = pl.col("line").cast(pl.Int64)
    ends = job.file_stats.select("file", pl.col("last_line").cast(pl.Int64).alias("_end"))
    wait_lines = waits.select("file", pl.col("line").cast(pl.Int64).alias("_wait"))
    gaps = (
        last.select("file", "line")
        .join(wait_lines, on="file")
        .group_by("file", "line")
        .agg((pl.col("_wait") - line).abs().min().alias("_to_wait"))
    )
    placed = last.join(ends, on="file", how="left").join(gaps, on=["file", "line"], how="left")
    near = (pl.col("_to_wait") <= NEAR).fill_null(False) | (
        (pl.col("_end") - line) <= NEAR
    ).fill_null(False)
    return placed.filter(near).drop("_end", "_to_wait")


def _how_far(row: dict[str, object]) -> str:
    """How far the work had got (`, 450 of 1,000`) and how long it had run by its bar's clock
    (`, running for 30 min`: beside a timeout of 30 min, the wait it outlasted)."""
    values = row.get("_values")
    far = (
        f", {values[0]:,} of {values[1]:,}"
        if isinstance(values, list) and len(values) == 2 and values[1]
        else ""
    )
    elapsed = row.get("_elapsed_ms")
    if isinstance(elapsed, int) and elapsed >= MINUTE_MS:
        far += f", running for {duration(elapsed / 1000)}"
    return far


def _failed_on_its_own(job: Job, rank: int) -> bool:
    """Whether the busy rank raised an exception or timed out itself: then it failed, not
    lagged."""
    own = job.events.filter(
        (pl.col("rank") == rank) & _stated & pl.col("event").is_in(["exception", *TIMEOUT_EVENTS])
    )
    return not own.is_empty()
