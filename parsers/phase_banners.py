"""Lines that announce a phase of work a job often runs on one rank only: evaluation, saving
a checkpoint, preparing or caching data.

    10/26 11:27:48 - mmengine - INFO - Evaluating bbox...        (open-mmlab/mmdetection#11096)
    Running per image evaluation...                             (the same log, pycocotools)
    caching latents...                                          (kohya-ss/sd-scripts#971)
    ***** Running Evaluation *****                              (Hugging Face Trainer)
    2023-04-13 16:00:05,622 INFO [trainer.py:626] (5/8) Computing validation loss   (vall-e#86)

A banner says the phase started, not that it ended: the last one a writer printed before the
others' waits timed out says what it was busy with (`logforensics/busy_rank.py`). A phase
word counts only at the start of the message or of a clause after a log header, alone or
after `Running`/`Starting`/`Begin`, and the line must be short: prose that merely mentions
evaluation is no banner. Past tenses (`Saved predictions at ...`) report work done.
"""

from __future__ import annotations

import polars as pl

from logforensics.registry import LineParser
from parsers.key_values import stated_rank

# The words, in the present: the phase is under way.
PHASE_WORD = (
    r"(?:evaluat(?:e|ing|ion)|validat(?:e|ing|ion)|testing|predict(?:ing|ions?)|inference"
    r"|sav(?:e|ing)|checkpointing|export(?:ing)?|convert(?:ing)?|tokeniz(?:e|ing)"
    r"|preprocess(?:ing)?|cach(?:e|ing)|download(?:ing)?|upload(?:ing)?"
    # the main process publishing the model (alignment-handbook's `Pushing to hub...`)
    r"|push(?:ing)?(?: \w+){0,2} to (?:the )?(?:hf |hugging ?face )?hub)"
)
# Where a banner's words begin: the message's start, or after a log header's last separator
# (` - `, `] `, `: `), or after a row of stars, or after the header of Python logging's
# default format, `LEVEL:logger.name:` (a torchtune console, meta-pytorch/torchtune#2651:
# `INFO:torchtune.utils._logging:Saving checkpoint. This may take some time. ...`), also where
# that header follows a progress bar's end on the bar's line, the record written before the
# bar's newline (meta-pytorch/torchtune#2059: `... 101/101 [1:54:39<00:00, 69.96s/it]INFO:
# torchtune.utils._logging:Saving checkpoint. ...`)
LOGGING_HEADER = r"(?:DEBUG|INFO|WARNING|ERROR|CRITICAL):[\w.]+:"
GLUED_RECORD = rf"\]{LOGGING_HEADER}"
CLAUSE_START = rf"(?:^|\] |: | - |\*+ |^{LOGGING_HEADER}|{GLUED_RECORD})"
STARTER = (
    r"(?:(?:running|starting|start|begin(?:ning)?|now|doing|computing)\s+(?:[\w*-]+\s+){0,3})?"
)
# icefall's header puts `(rank/world) ` between the location and the message
RANK_TAG = r"(?:\(\d+/\d+\) )?"
PLAIN = rf"{CLAUSE_START}\s*{RANK_TAG}({STARTER}{PHASE_WORD}\b[^\r]*)"
# a line set off by a row of `=`, `-`, `#` or `*` on both sides is a heading: a phase word
# among its first few words announces the phase (finetrainers#114's `===== Memory before
# validation =====`)
RULE = r"(?:={3,}|-{3,}|#{3,}|\*{3,})"
HEADING = rf"^\s*{RULE}\s*((?:[\w-]+\s+){{0,3}}{PHASE_WORD}\b[^\r]*?)\s*{RULE}\s*"
BANNER = rf"(?i)(?:{HEADING}|{PLAIN})$"
# The longest a banner's clause may be (its log header not counted): a save's record may say
# what it saves (ai2cm/ace#851: `Saving latest checkpoint model trained for 3 complete epochs
# and 36738 additional batches, or 369000 total batches, with best_validation_loss ...`)
LONGEST = 240
# The longest name a phase keeps, cut at a word
NAME_CHARS = 60
# The literals a line must hold: the words' stems with their first letter left out (either
# case then matches).
LITERALS = (
    "valuat",
    "alidat",
    "esting",
    "redict",
    "nferenc",
    "aving",
    "ave ",
    "ave.",
    "heckpointing",
    "xport",
    "onvert",
    "okeniz",
    "reprocess",
    "ache",
    "aching",
    "ownload",
    "pload",
    "ushing",
)


def phase_name(message: pl.Expr) -> pl.Expr:
    """The phase a banner announces: its words, dots and stars trimmed (`Evaluating bbox`)."""
    return _name_of(_banner_words(message))


def _banner_words(message: pl.Expr) -> pl.Expr:
    """A banner's words as written, from its phase word (or starter) to the line's end: a
    heading's words, or a plain banner's; null for a line that is no banner."""
    words = message.str.extract_groups(BANNER)
    return pl.coalesce(words.struct.field("1"), words.struct.field("2"))


def _name_of(words: pl.Expr) -> pl.Expr:
    # its first sentence or clause (`Saving checkpoint. This may take some time. ...`)
    name = words.str.replace(r"(?:\. |, ).*", "").str.strip_chars(" .*:")
    cut = name.str.slice(0, NAME_CHARS).str.replace(r"\s+\S*$", "") + pl.lit("…")
    return pl.when(name.str.len_chars() > NAME_CHARS).then(cut).otherwise(name)


def parse(lines: pl.DataFrame) -> pl.DataFrame:
    words = pl.col("_words")
    banners = lines.with_columns(_banner_words(pl.col("message")).alias("_words")).filter(
        # a terminal pads the lines it wraps with spaces to its width: they are no words
        (words.str.strip_chars_end().str.len_chars() <= LONGEST)
        & _name_of(words).fill_null("").ne("")
    )
    rank, world_size = stated_rank()
    return banners.select(
        "file",
        "line",
        pl.lit("phase").alias("event"),
        pl.lit("info").alias("severity"),
        rank,
        world_size,
    )


PARSER = LineParser(name="phase_banners", literals=LITERALS, parse=parse)
