# ruff: noqa: E501 -- test data are verbatim log lines
"""Lines that say a process finished its work or reached its normal exit (parsers/finish_marks.py),
verbatim from the public threads named at each."""

from __future__ import annotations

import json

import pytest

from tests.builders import analyze_files, only, parsed_by


@pytest.mark.parametrize(
    ("line", "finish", "rank", "rank_from"),
    [
        # modelscope/ms-swift#7992: ProcessGroupNCCL's destructor at interpreter exit
        (
            "[rank0]:[W205 18:00:34.953145631 ProcessGroupNCCL.cpp:1538] Warning: WARNING: destroy_process_group() was not called before program exit, which can leak resources. For more info, please see https://pytorch.org/docs/stable/distributed.html#shutdown (function operator())",
            "interpreter_exit",
            0,
            "prefix",
        ),
        # modelscope/ms-swift#7992: swift's entry point returned
        (
            "[INFO:swift] End time of running main: 2026-02-05 18:00:31.710947",
            "main_returned",
            None,
            None,
        ),
        # huggingface/transformers#17478: the Trainer's end of train(), and the older form that
        # names the rank
        (
            "Training completed. Do not forget to share your model on huggingface.co/models =)",
            "training_done",
            None,
            None,
        ),
        (
            "Training completed for rank 6. Do not forget to share your model on huggingface.co/models =)",
            "training_done",
            6,
            "content",
        ),
        # Lightning-AI/pytorch-lightning#14428 and invoke-ai/InvokeAI#1162 (`max_steps`)
        ("`Trainer.fit` stopped: `max_epochs=1` reached.", "training_done", None, None),
        ("`Trainer.fit` stopped: `max_steps=100` reached.", "training_done", None, None),
        # NVIDIA/Fuser#3055: googletest after the last test
        ("[----------] Global test environment tear-down", "tests_done", None, None),
        # ultralytics/yolov5#5160: torchrun's agent saw its workers exit 0
        (
            "INFO:torch.distributed.elastic.agent.server.api:Local worker group finished (SUCCEEDED). Waiting 300 seconds for other agents to finish",
            "workers_succeeded",
            None,
            None,
        ),
        # torchelastic 0.2's agent (microsoft/frameworkcontroller's elastic README, step 9)
        (
            "[INFO] 2020-07-31 07:55:16,413 api: [default] All workers successfully finished.",
            "workers_succeeded",
            None,
            None,
        ),
        # pytorch/pytorch#97191 (its repro's output, quoted in PR #97066): a script's own line
        # saying one rank is done
        ("Rank 4 completed", "rank_done", 4, "content"),
        # Plachtaa/VITS-fast-fine-tuning#353: a script's own words at its last epoch
        ("Maximum epoch reached, closing training...", "max_reached", None, None),
        # bigscience-workshop/Megatron-DeepSpeed#265: Megatron-LM at its exit interval
        (
            "[exiting program at iteration 6] datetime: 2022-03-11 15:20:26 ",
            "program_exit",
            None,
            None,
        ),
        # RVC-Project/Retrieval-based-Voice-Conversion-WebUI#2079: RVC's train.py before
        # os._exit at its last epoch (behind Python logging's `LEVEL:logger:` prefix)
        (
            "INFO:yurika-test01:Training is done. The program is closed.",
            "program_exit",
            None,
            None,
        ),
    ],
)
def test_a_finish_mark_is_an_info_event(line, finish, rank, rank_from):
    found = only(parsed_by("finish_marks", [line]))
    assert (found["event"], found["severity"], found["rank"], found["rank_from"]) == (
        "run_finished",
        "info",
        rank,
        rank_from,
    )
    assert json.loads(found["extra"]) == {"finish": finish}


def test_a_prefix_rank_wins_over_the_rank_the_line_names():
    # huggingface/transformers#17478's line behind a torchrun `[1]:` rank template (constructed)
    line = "[1]:Training completed for rank 6. Do not forget to share your model on huggingface.co/models =)"
    found = only(parsed_by("finish_marks", [line]))
    assert (found["rank"], found["rank_from"]) == (1, "prefix")


def test_a_run_that_finished_is_no_failure(tmp_path):
    # modelscope/ms-swift#7992, the two lines in the order printed
    lines = [
        "[INFO:swift] End time of running main: 2026-02-05 18:00:31.710947",
        "[rank0]:[W205 18:00:34.953145631 ProcessGroupNCCL.cpp:1538] Warning: WARNING: destroy_process_group() was not called before program exit, which can leak resources. For more info, please see https://pytorch.org/docs/stable/distributed.html#shutdown (function operator())",
    ]
    analysis = analyze_files(tmp_path, {"train.log": lines})
    assert analysis.recognised_lines == 2 and analysis.unrecognised_lines == 0
    assert analysis.verdict is None
    assert not [f for f in analysis.findings if f.severity == "error"]


@pytest.mark.parametrize(
    "line",
    [
        "Training completed in 3h 12m",  # another framework's words: not the Trainer's mark
        "rank=0 epoch=3 training completed",
        "Rank 0 completed step 12",  # more than a rank's end: progress, not a finish
        "Rank 0 is the problematic rank",
        "The program is exiting because of an unrecoverable error",  # a failure's words
    ],
)
def test_other_end_words_are_not_finish_marks(line):
    assert parsed_by("finish_marks", [line]).is_empty()
