# ruff: noqa: E501 -- verbatim log lines are quoted whole in the docstring
"""Progress that frameworks and scripts print without stage marks: any line template that
carries a counter that grows.

     [Rank 1] iteration        9/      48 | consumed samples:          160 | ...   (Megatron-LM style)
    [default2]:step 9/48 loss=0.0963 lr=0.001                (a script's own; rank from the prefix)
    [2024-08-12 23:04:07,255][root][INFO] - train, rank: 9, epoch: 0/500, data_slice: 0/5, step_in_slice: 32900/81081, ...   (FunASR)

Each writer's lines (one file, one launcher prefix, one rank the line names, one CUDA device
it names) are reduced to templates: times, hex, quoted strings, paths and decimals masked,
then every whole number. A template a writer printed at least three times, with a number
that grows from line to line (never falls, mostly rises), is progress: each such line becomes
a `stage` event whose stage is the template's name (the words before the counter) and whose
step is the counter. An earlier number that rises where the counter starts again is the
epoch. The ranks are then aligned on these exactly as on stage marks.

Lines that name a collective, or a phase begun or ended, and the rank they are about,
printed once or twice by each of several ranks, are milestones even without a counter (`past
barrier for 1`, `past all_reduce for 0`, `0 before barrier: [0, 3]`, `0 done`): each is a
stage of its own, and a rank that never printed one the others did stopped before it. The rank
is the rank word, else the number that changes from line to line of the print, else the number
that ends it. A training step's report that names its rank (`TRAIN Batch 0/0 loss 45.3 ...
rank 6`), too rare for a counter, is a milestone too, named by its words before the first
number.

This parser sees only the lines no other parser recognised, in files that print no stage
marks (their progress is known already).
"""

from __future__ import annotations

import polars as pl

from logforensics.registry import LineParser
from parsers.key_values import header_rank
from parsers.traceback import writer_stream

# A writer must print a template this often before its numbers can show a counter.
MIN_LINES = 3
# Numbers looked at per line, left to right: counters come early in progress lines.
MAX_POSITIONS = 8
# A counter falls on no more than this share of its steps (a restart, a reordered write), and
# a value of it stands on this many lines at most on average (two commands per training step
# print the step twice; an epoch number printed at every step is no counter).
MAX_FALLING = 0.05
MAX_LINES_PER_VALUE = 4

# Masks, applied in this order: what is not a counter must not look like one.
# (a duration counts as a time: SLURM's `running for 1-07:27:33`, days first, bigscience tr11)
TIME = r"(?:\d+-)?\d{1,4}[-/:]\d{1,2}[-/:]\d{1,4}(?:[ T_]\d{1,2}:\d{2}(?::\d{2})?)?(?:[.,]\d+)?"
HEX = r"\b0x[0-9a-fA-F]+\b"
QUOTED = r"'[^']*'|\"[^\"]*\""
# a path has a folder with a letter in its name (`32900/81081` is a fraction, not a path)
PATH = r"/?(?:[\w.-]*[A-Za-z][\w.-]*/)+[\w.-]+"
DECIMAL = r"-?\d+\.\d+(?:[eE][-+]?\d+)?|\d+[eE][-+]?\d+"
INTEGER = r"\d+"
# `[Rank 2]`, `rank: 9`, `Rank 6,`, `rank=3`, `RANK 1` (not `local_rank`, not `world_size`,
# not a command-line flag such as `--bad-rank 2`); failing a rank word, the process a line
# names itself by: `This is thread 0 with ...`
RANK_IN_TEXT = r"(?:^|[^A-Za-z_-])[Rr][Aa][Nn][Kk][ \t]*[:=#]?[ \t]*(\d+)"
PROCESS_IN_TEXT = r"(?i)(?:^|[^A-Za-z_])(?:thread|worker|process|proc)[ \t]*[:=#]?[ \t]*(\d+)\b"
# A line's first word, to split prints that reached the file without a newline between them
# (`... 7.50GBiter: step 0, ...`): ranks writing to one console race
FIRST_WORD = r"^\s*([^\s\d]\S{2,})"
# `mem_usage:cuda:2 7.5GB`, `cuda:2`: a device the line was printed for
DEVICE_IN_TEXT = r"\bcuda:(\d+)"
# A milestone names a collective: `past barrier for 1`, `entering all_reduce on rank 3`
COLLECTIVE_WORD = (
    r"(?i)\b(?:barrier|all_?reduce|all_?gather|broadcast|reduce_?scatter|all_?to_?all)\b"
)
# A line that reports a failure counts failures, not progress, whatever grows in it (a cluster
# agent's `error: Detected 3 oom_kill events in StepId=269582.0`, then 4, then 5), nor does one
# that reports a wait gone wrong (Ascend's runtime listing a timed-out task's waits: `The 0
# stuck notify wait context info:(context_id=2, notify_id=7)`, then 1 ... 6; Ascend/pytorch#43)
FAILURE_WORDS = (
    r"(?i)\b(?:error|errors|failed|failure|fatal|exception|killed|oom[-_]?kill"
    r"|stuck|timeout|timed out|hung)\b"
)
# Counters whose name says they number processes or devices, not progress.
# (`Killing subprocess 31867`, torch.distributed.launch stopping its workers, is no counter)
# (and numbers that name a resource: `on fd 188`, `[id=176]`, `addr 0`)
# (`id` alone, not `batch_id`: a script may count batches by it)
# (and the ids of processes, groups and threads: PaddlePaddle's launcher stopping its trainers,
# `terminate process group gid:2606667`, then 2606672 and 2606677: PaddleDetection#5202)
IDENTITY = (
    r"(?i)(?:^|[\s_])(?:rank|device|devices|gpu|cuda|node|pid|ppid|pgid|gid|tid|port|worker"
    r"|thread|process|subprocess|fd|addr|address|handle|iface|interface)$|(?:^|\s)id$"
)
# The name of a counter: the words just before it (`iteration`, `total step`, `step_in_slice`)
NAME_BEFORE = r"([A-Za-z][A-Za-z_]*(?: [A-Za-z][A-Za-z_]*)?)[^A-Za-z<]*$"


def parse(lines: pl.DataFrame) -> pl.DataFrame:
    shaped = _shaped(lines)
    if shaped.is_empty():
        return _nothing()
    counted = _counted(shaped)
    # a print that counts is progress at its count, not also a milestone (`Rank 0 batch 85`)
    milestones = _milestones(shaped).join(counted, on=["file", "line"], how="anti")
    return pl.concat([counted, milestones], how="diagonal_relaxed")


def _counted(shaped: pl.DataFrame) -> pl.DataFrame:
    # a template some writer prints often enough to show a counter, with every writer's lines
    # of it (the counter learned from one is checked on each in `_counters`)
    often = shaped.filter(
        pl.len().over("_writer", "_template").max().over("_template") >= MIN_LINES
    )
    if often.is_empty():
        return _nothing()
    counters = _counters(often)
    if counters.is_empty():
        return _nothing()
    marked = often.join(counters, on=["_writer", "_template"]).sort("_writer", "line")
    step = pl.col("_numbers").list.get(pl.col("_step_at"), null_on_oob=True)
    restarted = (step.diff() < 0).fill_null(False).cast(pl.Int64)
    rounds = restarted.cum_sum().over("_writer", "_template")
    return marked.select(
        "file",
        "line",
        pl.lit("stage").alias("event"),
        pl.lit("info").alias("severity"),
        pl.lit("progress").alias("family"),
        step.alias("step"),
        pl.when(pl.col("_epoch_at").is_not_null())
        .then(pl.col("_numbers").list.get(pl.col("_epoch_at").fill_null(0), null_on_oob=True))
        .when(pl.col("_rounds"))
        .then(rounds)
        .alias("epoch"),
        pl.col("_name").alias("stage"),
        pl.col("_rank").alias("rank"),
        pl.col("_device").alias("cuda_dev"),
        pl.struct(template=pl.col("_template")).struct.json_encode().alias("extra"),
    )


def _milestones(shaped: pl.DataFrame) -> pl.DataFrame:
    """Milestones several ranks print once or twice each (a collective, a phase begun or
    ended), with the rank they name: the rank word, else the number that differs from line to
    line of the print (its printer's), else the number that ends the line."""
    marked = shaped.filter(
        pl.col("_template").str.contains(COLLECTIVE_WORD)
        | pl.col("_template").str.contains(PHASE_WORD)
        | (pl.col("_rank").is_not_null() & pl.col("_template").str.contains(TRAINING_WORD))
    )
    named = marked.join(_printer_positions(marked), on="_template", how="left").with_columns(
        pl.coalesce(
            "_rank",
            pl.col("_numbers")
            .list.get(pl.col("_printer_at"), null_on_oob=True)
            .cast(pl.Int32, strict=False),
            pl.when(pl.col("_template").str.contains(r"<N>\W*$")).then(
                pl.col("_numbers").list.last().cast(pl.Int32, strict=False)
            ),
        ).alias("_about")
    )
    named = named.filter(pl.col("_about").is_not_null() & (pl.col("_about") < MAX_MILESTONE_RANK))
    # a print the job makes at each collective (`past barrier for 1`, `past all_reduce for 0`)
    # or at each end of a phase (`Rank 1: load weight begin.`, `... end.`): several ranks
    # printing the family make each of its prints a milestone, also one that a single rank
    # reached (pytorch/pytorch#43345: rank 1 never printed `past all_reduce`;
    # sgl-project/sglang#99: rank 0 never printed `load weight end.`)
    family = (
        pl.col("_template")
        .str.replace_all(COLLECTIVE_WORD, "<C>")
        .str.replace_all(PHASE_WORD, "<C>")
    )
    per_rank = (
        named.group_by("_template", "_about")
        .agg(pl.len().alias("_times"))
        .with_columns(family.alias("_family"))
    )
    kept = per_rank.group_by("_template", "_family").agg(pl.col("_times").max().alias("_most"))
    family_ranks = per_rank.group_by("_family").agg(
        pl.col("_about").n_unique().alias("_family_ranks")
    )
    kept = kept.join(family_ranks, on="_family")
    kept = kept.filter((pl.col("_family_ranks") >= 2) & (pl.col("_most") <= MAX_MILESTONE_REPEATS))
    milestones = named.join(kept.select("_template"), on="_template")
    return milestones.select(
        "file",
        "line",
        pl.lit("stage").alias("event"),
        pl.lit("info").alias("severity"),
        pl.lit("progress").alias("family"),
        pl.lit(0, dtype=pl.Int64).alias("step"),
        _milestone_name().alias("stage"),
        pl.col("_about").alias("rank"),
        pl.struct(template=pl.col("_template"), milestone=pl.lit(True))
        .struct.json_encode()
        .alias("extra"),
    )


def _milestone_name() -> pl.Expr:
    """A milestone's words: its template without the rank, numbers, times and the logger's
    level (`<T> INFO before CV device <N>` -> `before CV device`); a training step's report
    only up to its first number (`TRAIN Batch 0/0 loss 45.30 ...` -> `TRAIN Batch`)."""
    template = pl.col("_template").str.replace_all(RANK_PLACEHOLDER, "")
    head = template.str.extract(r"^(.*?)<[NF]>", 1)
    named = (
        pl.when(
            ~template.str.contains(COLLECTIVE_WORD)
            & ~template.str.contains(PHASE_WORD)
            & head.str.contains(r"[A-Za-z]{2}").fill_null(False)
        )
        .then(head)
        .otherwise(template)
    )
    return (
        named.str.replace_all(r"<\w>", "")
        .str.replace_all(r"[\[(][\s,;]*[\])]", "")  # what held only numbers: `[0, 3]`
        .str.replace_all(r"\s+", " ")
        .str.strip_chars(" :,-|")
        .str.replace(LEVEL_WORD, "")
    )


def _printer_positions(marked: pl.DataFrame) -> pl.DataFrame:
    """`_template, _printer_at`: in a print each rank makes once, the number that takes the
    most values from line to line (at least two, each a possible rank) is its printer's
    (pytorch/pytorch#130102: `0 before barrier: [0, 3]`, `3 before barrier: [0, 3]`, ...: the
    first number, not the group the line ends in)."""
    positions = (
        _by_position(marked.select("_template", "_numbers"))
        .group_by("_template", "_at")
        .agg(
            pl.col("_numbers").n_unique().alias("_values"),
            pl.col("_numbers").max().alias("_largest"),
        )
        .filter((pl.col("_values") >= 2) & (pl.col("_largest") < MAX_MILESTONE_RANK))
    )
    return (
        positions.sort("_values", "_at", descending=[True, False])
        .group_by("_template", maintain_order=True)
        .first()
        .select("_template", pl.col("_at").alias("_printer_at"))
    )


def _by_position(lines: pl.DataFrame) -> pl.DataFrame:
    """A row per number of each line: `_numbers` the number, `_at` its place in the line."""
    return lines.with_columns(pl.int_ranges(pl.col("_numbers").list.len()).alias("_at")).explode(
        "_numbers", "_at"
    )


# A phase a rank begins or ends, or a point it reached (`Rank 1: load weight end.`, `before CV
# device 7`, `0 done`): printed once by each rank that gets there
PHASE_WORD = (
    r"(?i)\b(?:before|after|begin|end|done|finished|entering|exiting|arrived|reached|past)\b"
)
# ... or a training step's report that names its rank (`TRAIN Batch 0/0 loss 45.30 ... rank
# 6`, wenet-e2e/wenet#1895): printed once or twice, too few for a counter, it still says the
# rank got that far
TRAINING_WORD = r"(?i)\b(?:loss|lr|batch|iter|iteration|step)\b"
# A logger's level before a milestone's words is no part of its name (`INFO before CV device`)
LEVEL_WORD = r"^(?:DEBUG|INFO|WARN|WARNING|NOTICE)\b[\s:|-]*"
# The rank a milestone names is who printed it, not what it says: out of its stage name.
RANK_PLACEHOLDER = r"(?i)\[?\brank\]?[ \t]*[:=#]?[ \t]*<N>\]?"
# A milestone names a rank of a real job, and each rank prints it a few times at most.
MAX_MILESTONE_RANK = 65536
MAX_MILESTONE_REPEATS = 3


def _unglued(lines: pl.DataFrame) -> pl.DataFrame:
    """Lines holding the same print twice or more are split into one row per print (all with
    the line's number)."""
    first = pl.col("message").str.extract(FIRST_WORD, 1)
    glued = first.is_not_null() & (pl.col("message").str.count_matches(first, literal=True) > 1)
    marked = lines.with_columns(glued.fill_null(False).alias("_glued"), first.alias("_first"))
    if not marked.get_column("_glued").any():
        return lines
    split = (
        marked.filter(pl.col("_glued"))
        .with_columns(pl.col("message").str.split(pl.col("_first")).alias("_parts"))
        .explode("_parts")
        .filter(pl.col("_parts").str.strip_chars() != "")
        .with_columns(pl.concat_str("_first", "_parts").alias("message"))
        .drop("_parts")
    )
    return pl.concat([marked.filter(~pl.col("_glued")), split]).drop("_glued", "_first")


def _shaped(lines: pl.DataFrame) -> pl.DataFrame:
    """Each line with a digit: its template, its whole numbers, its writer."""
    lines = _unglued(lines)
    message = pl.col("message").str.split("\r").list.last()
    masked = (
        message.str.replace_all(TIME, "<T>")
        .str.replace_all(HEX, "<H>")
        .str.replace_all(QUOTED, "<S>")
        .str.replace_all(PATH, "<P>")
        .str.replace_all(DECIMAL, "<F>")
    )
    rank = pl.coalesce(
        header_rank(),  # icefall's `[train.py:1055] (1/2) Epoch 1, batch 150, ...`
        pl.col("message").str.extract(RANK_IN_TEXT, 1).cast(pl.Int32, strict=False),
        pl.col("message").str.extract(PROCESS_IN_TEXT, 1).cast(pl.Int32, strict=False),
    )
    device = pl.col("message").str.extract(DEVICE_IN_TEXT, 1).cast(pl.Int32, strict=False)
    shaped = lines.filter(
        pl.col("message").str.contains(r"\d") & ~pl.col("message").str.contains(FAILURE_WORDS)
    ).with_columns(masked.alias("_masked"), rank.alias("_rank"), device.alias("_device"))
    return shaped.select(
        "file",
        "line",
        pl.concat_str(
            writer_stream(lines.columns),
            pl.col("_rank").cast(pl.String).fill_null("-"),
            pl.col("_device").cast(pl.String).fill_null("-"),
            separator="\x00",
        ).alias("_writer"),
        pl.col("_masked")
        .str.replace_all(INTEGER, "<N>")
        .str.replace_all(r"\s+", " ")
        .str.strip_chars()
        .alias("_template"),
        pl.col("_masked")
        .str.extract_all(INTEGER)
        .list.head(MAX_POSITIONS)
        .list.eval(pl.element().cast(pl.Int64, strict=False))
        .alias("_numbers"),
        "_rank",
        "_device",
    ).filter(pl.col("_numbers").list.len() > 0)


def _counters(often: pl.DataFrame) -> pl.DataFrame:
    """Per (writer, template): the position of its counter, of its epoch if the counter
    starts again at each epoch, and the template's name. Templates without one are dropped."""
    positions = (
        _by_position(often.select("_writer", "_template", "line", "_numbers"))
        .sort("_writer", "_template", "_at", "line")
        .with_columns(
            pl.col("_numbers").diff().over("_writer", "_template", "_at").alias("_change")
        )
    )
    per_position = positions.group_by("_writer", "_template", "_at").agg(
        pl.len().alias("_lines"),
        (pl.col("_change") > 0).sum().alias("_rises"),
        (pl.col("_change") < 0).sum().alias("_falls"),
        pl.col("_numbers").n_unique().alias("_values"),
        pl.col("line").filter(pl.col("_change") > 0).alias("_rise_lines"),
        pl.col("line").filter(pl.col("_change") < 0).alias("_fall_lines"),
        # every fall back to where the counter starts: it counts rounds of its own
        (pl.col("_numbers").filter(pl.col("_change") < 0).max() == pl.col("_numbers").min())
        .fill_null(False)
        .alias("_restarts"),
    )
    steady = (pl.col("_falls") <= (pl.col("_lines") * MAX_FALLING).floor()) & (
        pl.col("_lines") <= pl.col("_values") * MAX_LINES_PER_VALUE
    )
    steps = per_position.filter((pl.col("_values") >= MIN_LINES) & steady)
    # ranks print the same format: a counter learned from one writer is the counter of every
    # writer that prints the template, however few lines it wrote (the rank that printed the
    # fewest is often the one that matters)
    learned = steps.select("_template", "_at").unique()
    steps = pl.concat(
        [steps, per_position.join(learned, on=["_template", "_at"]).filter(steady)]
    ).unique(subset=["_writer", "_template", "_at"], keep="first", maintain_order=True)
    plain = (
        steps.sort("_at")
        .group_by("_writer", "_template", maintain_order=True)
        .first()
        .select("_writer", "_template", pl.col("_at").alias("_step_at"))
        .with_columns(pl.lit(None, dtype=pl.Int64).alias("_epoch_at"))
    )
    counters = pl.concat(
        [
            plain.with_columns(pl.lit(False).alias("_rounds")),
            _per_epoch_counters(per_position, plain).with_columns(pl.lit(False).alias("_rounds")),
        ]
    )
    rounds = _round_counters(per_position, counters)
    # a format counted in rounds is so on every writer, also where one round shows
    counters = pl.concat(
        [counters.join(rounds, on=["_writer", "_template"], how="anti"), rounds],
        how="diagonal_relaxed",
    )
    return counters.join(_names(often, counters), on=["_writer", "_template"], how="inner")


def _round_counters(per_position: pl.DataFrame, found: pl.DataFrame) -> pl.DataFrame:
    """A count towards a total that starts again from its first value each time it is done,
    with no epoch on its line (`RANK 12: running step 1/10` ... `10/10`, then `1/10` again
    after a `trial 7...` line: sparticlesteve/pytorch-nccl-hang): each restart is a round, the
    rounds play the epoch's part."""
    rest = per_position.join(found, on=["_writer", "_template"], how="anti")
    total_after = (
        pl.col("_template")
        .str.split("<N>")
        .list.get(pl.col("_at") + 1, null_on_oob=True)
        .str.starts_with("/")
        .fill_null(False)
    )
    rounds = rest.filter(
        (pl.col("_values") >= MIN_LINES)
        & (pl.col("_falls") > 0)
        & pl.col("_restarts")
        & (pl.col("_rises") >= (pl.col("_values") - 1) * pl.col("_falls"))
        & total_after
    )
    # a template the rounds were learned from counts rounds on every writer's lines of it
    learned = rounds.select("_template", "_at").unique()
    rounds = per_position.join(learned, on=["_template", "_at"]).filter(
        (pl.col("_falls") == 0) | pl.col("_restarts")
    )
    return (
        rounds.sort("_at")
        .group_by("_writer", "_template", maintain_order=True)
        .first()
        .select(
            "_writer",
            "_template",
            pl.col("_at").alias("_step_at"),
            pl.lit(None, dtype=pl.Int64).alias("_epoch_at"),
            pl.lit(True).alias("_rounds"),
        )
    )


def _per_epoch_counters(per_position: pl.DataFrame, plain: pl.DataFrame) -> pl.DataFrame:
    """A counter that starts again where an earlier number (the epoch) rises and only there:
    `Epoch 3 step 45/100`."""
    rest = per_position.join(plain, on=["_writer", "_template"], how="anti")
    if rest.is_empty():
        return plain.clear()
    restarting = rest.filter(
        (pl.col("_values") >= MIN_LINES)
        & (pl.col("_rises") >= pl.col("_falls"))
        & (pl.col("_falls") > 0)
    ).select("_writer", "_template", pl.col("_at").alias("_step_at"), "_fall_lines")
    epochs = rest.filter(pl.col("_falls") == 0).select(
        "_writer", "_template", pl.col("_at").alias("_epoch_at"), "_rise_lines"
    )
    pairs = restarting.join(epochs, on=["_writer", "_template"]).filter(
        (pl.col("_epoch_at") < pl.col("_step_at"))
        & (pl.col("_fall_lines").list.set_difference("_rise_lines").list.len() == 0)
    )
    return (
        pairs.sort("_step_at", "_epoch_at")
        .group_by("_writer", "_template", maintain_order=True)
        .first()
        .select("_writer", "_template", "_step_at", "_epoch_at")
    )


def _names(often: pl.DataFrame, counters: pl.DataFrame) -> pl.DataFrame:
    """The words before each template's counter: `iteration`, `step`, `total step`."""
    templates = counters.join(
        often.select("_writer", "_template").unique(), on=["_writer", "_template"]
    )
    before = pl.col("_template").str.split("<N>").list.head(pl.col("_step_at") + 1).list.join("<N>")
    # masks out first: `TRAIN Batch <N>/` names the counter after it `TRAIN Batch`, not `N`
    name = before.str.replace_all(r"<\w>", " ").str.extract(NAME_BEFORE, 1)
    # a number no word names is a counter only as a fraction (`9/48 ...`): a listing of
    # process ids (`ps` output) or sizes is not progress
    fraction = (
        pl.col("_template")
        .str.split("<N>")
        .list.get(pl.col("_step_at") + 1, null_on_oob=True)
        .str.starts_with("/")
    )
    # a number that names a process or a device is who, not how far (`LOCAL_RANK: 2 -
    # CUDA_VISIBLE_DEVICES: [0,1,2,3]`, Lightning-AI/pytorch-lightning#8139)
    identity = name.str.contains(IDENTITY).fill_null(False)
    # nor is a number that is part of a name or an index into a list: glued to the letters
    # before it (`mlx5_0`, `eth1`) or a word's subscript (`allocation method[0] is md 'sysv'`,
    # then [1] ... [6]: UCX listing its setup in one burst, sparticlesteve/pytorch-cuda-mpi-error)
    after = pl.col("_template").str.split("<N>").list.get(pl.col("_step_at") + 1, null_on_oob=True)
    part_of_a_name = before.str.contains(r"\w$") | (
        before.str.contains(r"\w\[$") & after.str.starts_with("]").fill_null(False)
    )
    return templates.filter(
        (name.is_not_null() | fraction.fill_null(False)) & ~identity & ~part_of_a_name
    ).select("_writer", "_template", pl.coalesce(name, pl.lit("progress")).alias("_name"))


def _nothing() -> pl.DataFrame:
    return pl.DataFrame(schema={"file": pl.String, "line": pl.UInt32, "event": pl.String})


PARSER = LineParser(name="progress_lines", literals=(), parse=parse, residual=True)
