# ruff: noqa: E501 -- verbatim log lines are quoted whole in the docstring and comments
"""Lines that say a process finished its work or reached its normal exit: a rank that printed
one did not hang where it stopped. Verbatim:

    [rank0]:[W205 18:00:34.953145631 ProcessGroupNCCL.cpp:1538] Warning: WARNING: destroy_process_group() was not called before program exit, which can leak resources. For more info, please see https://pytorch.org/docs/stable/distributed.html#shutdown (function operator())
    [INFO:swift] End time of running main: 2026-02-05 18:00:31.710947
    Training completed. Do not forget to share your model on huggingface.co/models =)
    `Trainer.fit` stopped: `max_epochs=1` reached.
    [----------] Global test environment tear-down
    INFO:torch.distributed.elastic.agent.server.api:Local worker group finished (SUCCEEDED). Waiting 300 seconds for other agents to finish
    Rank 4 completed
    [exiting program at iteration 6] datetime: 2022-03-11 15:20:26

(modelscope/ms-swift#7992; huggingface/transformers#17478; Lightning-AI/pytorch-lightning#14428;
NVIDIA/Fuser#3055; ultralytics/yolov5#5160; pytorch/pytorch#97191;
bigscience-workshop/Megatron-DeepSpeed#265.) Each is a `run_finished` event (info); `extra`
says which end it marks (`{"finish": ...}`):

- `interpreter_exit`: ProcessGroupNCCL's destructor warns at interpreter exit when the group
  was never destroyed. Python also exits this way after an uncaught exception, so it says the
  process got to its end, not that its work succeeded.
- `main_returned`: ms-swift's entry point returned (`End time of running main`).
- `training_done`: the Hugging Face Trainer's end of `train()` (older versions name the rank:
  `Training completed for rank 6.`, the rank when no prefix states one) and Lightning's
  `Trainer.fit` stopping at `max_epochs`/`max_steps` (printed by rank 0 only).
- `rank_done`: a script's own line saying that one rank is done, and nothing else (`Rank 4
  completed`, `rank 3 finished.`): that rank got past every collective before it.
- `program_exit`: the program says it is exiting now (Megatron-LM's `[exiting program at
  iteration 6]` at its exit interval; a script's own `The program is closed.` as its last
  words).
- `tests_done`: googletest's tear-down after the last test.
- `workers_succeeded`: torchrun's agent saw every local worker exit 0 (a line of the agent,
  not of a rank).
"""

from __future__ import annotations

import polars as pl

from logforensics.registry import LineParser

# WARNING: destroy_process_group() was not called before program exit, which can leak resources. ...
INTERPRETER_EXIT = r"destroy_process_group\(\) was not called before program exit"
# [INFO:swift] End time of running main: 2026-02-05 18:00:31.710947
MAIN_RETURNED = r"\[INFO:swift\] End time of running main: "
# Training completed. Do not forget to share your model on huggingface.co/models =)
# Training completed for rank 6. Do not forget to share your model on huggingface.co/models =)
HF_TRAINER_DONE = r"Training completed(?: for rank (\d+))?\. Do not forget to share your model"
# `Trainer.fit` stopped: `max_epochs=1` reached.    `Trainer.fit` stopped: `max_steps=100` reached.
LIGHTNING_DONE = r"`Trainer\.fit` stopped: `max_(?:epochs|steps)=-?\d+` reached"
# A loop that reached its configured end, in a script's own words (Plachtaa/VITS-fast-fine-
# tuning#353: `Maximum epoch reached, closing training...`; `Max steps reached`)
MAX_REACHED = (
    r"(?i)^\s*max(?:imum|\.)?[ _]?(?:number of )?(?:epochs?|steps?|iterations?)(?:=\d+)? "
    r"(?:(?:has|have) been |is |was )?reached\b"
)
# Rank 4 completed     rank 3 finished.     [rank2] done
RANK_DONE = (
    r"(?i)^\s*\[?rank\s*[=:#]?\s*(\d+)\]?\s*:?\s*(?:has |is )?"
    r"(?:completed|complete|finished|done)\s*[.!]?\s*$"
)
# Megatron-LM at its --exit-interval, and after its training loop (bigscience-workshop/
# Megatron-DeepSpeed#265):
#   [exiting program at iteration 6] datetime: 2022-03-11 15:20:26
#   [after training is done] datetime: 2022-03-11 15:20:26
MEGATRON_EXIT = r"^\[exiting program at iteration \d+\] datetime: "
MEGATRON_DONE = r"^\[after training is done\] datetime: "
# A script saying, as its last words, that the program is closing (RVC's `train.py` at its last
# epoch, before `os._exit`: RVC-Project/Retrieval-based-Voice-Conversion-WebUI#2079):
#   INFO:yurika-test01:Training is done. The program is closed.
# (the sentence's end only: `the program is exiting because ...` is a failure's words)
PROGRAM_CLOSED = r"(?i)\bthe program (?:is|was) (?:now )?(?:closed|closing|exiting)\s*[.!]?\s*$"
# [----------] Global test environment tear-down
GTEST_DONE = r"^\s*\[-{10}\] Global test environment tear-down"
# INFO:torch.distributed.elastic.agent.server.api:Local worker group finished (SUCCEEDED). Waiting 300 seconds for other agents to finish
# (torch >= 1.10 words it `[default] worker group successfully finished. Waiting ...`;
# torchelastic 0.2 `[INFO] 2020-07-31 07:55:16,413 api: [default] All workers successfully
# finished.`, microsoft/frameworkcontroller's elastic example)
WORKERS_SUCCEEDED = (
    r"(?:Local worker group finished \((?:WorkerState\.)?SUCCEEDED\)"
    r"|worker group successfully finished)\. Waiting \d+ seconds for other agents"
    r"|\] All workers successfully finished\.\s*$"
)

FINISHES = (
    (INTERPRETER_EXIT, "interpreter_exit"),
    (MAIN_RETURNED, "main_returned"),
    (HF_TRAINER_DONE, "training_done"),
    (LIGHTNING_DONE, "training_done"),
    (MAX_REACHED, "max_reached"),
    (RANK_DONE, "rank_done"),
    (MEGATRON_EXIT, "program_exit"),
    (PROGRAM_CLOSED, "program_exit"),
    (MEGATRON_DONE, "training_done"),
    (GTEST_DONE, "tests_done"),
    (WORKERS_SUCCEEDED, "workers_succeeded"),
)


def _finish() -> pl.Expr:
    message = pl.col("message")
    pattern, name = FINISHES[0]
    finish = pl.when(message.str.contains(pattern)).then(pl.lit(name))
    for pattern, name in FINISHES[1:]:
        finish = finish.when(message.str.contains(pattern)).then(pl.lit(name))
    return finish.otherwise(pl.lit(None, dtype=pl.String))


def parse(lines: pl.DataFrame) -> pl.DataFrame:
    found = lines.with_columns(_finish().alias("_finish")).filter(pl.col("_finish").is_not_null())
    return found.select(
        "file",
        "line",
        pl.lit("run_finished").alias("event"),
        pl.lit("info").alias("severity"),
        # the rank a line names itself; attribution puts a prefix's rank first
        pl.coalesce(
            pl.col("message").str.extract(HF_TRAINER_DONE, 1),
            pl.col("message").str.extract(RANK_DONE, 1),
        )
        .cast(pl.Int32, strict=False)
        .alias("rank"),
        pl.format('{{"finish":"{}"}}', pl.col("_finish")).alias("extra"),
    )


PARSER = LineParser(
    name="finish_marks",
    literals=(
        "destroy_process_group() was not called",
        "End time of running main: ",
        "Training completed",
        "`Trainer.fit` stopped: `max_",
        "reached",
        "Global test environment tear-down",
        "worker group finished",
        "worker group successfully finished",
        "All workers successfully finished",
        "[exiting program at iteration ",
        "[after training is done]",
        "rogram is ",
        "rogram was ",
        "omplete",
        "inished",
        "done",
        "DONE",
    ),
    parse=parse,
)
