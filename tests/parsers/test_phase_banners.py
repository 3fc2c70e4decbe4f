"""Banners that announce a phase of one-rank work (parsers/phase_banners.py)."""

from __future__ import annotations

import polars as pl

from parsers.phase_banners import phase_name
from tests.builders import parsed_by


def test_banners_of_evaluation_and_data_preparation_are_read():
    lines = [
        # open-mmlab/mmdetection#11096, verbatim: mmengine's and pycocotools' prints
        "10/26 11:27:48 - mmengine - INFO - Evaluating bbox...",
        "Running per image evaluation...",
        "Evaluate annotation type *bbox*",
        # kohya-ss/sd-scripts#971, verbatim
        "caching latents...",
        # lifeiteng/vall-e#86, verbatim: icefall's header names the rank
        "2023-04-13 16:00:05,622 INFO [trainer.py:626] (5/8) Computing validation loss",
        # huggingface/finetrainers#114, verbatim: a heading set off by rows of `=`
        "===== Memory before validation =====",
        # meta-pytorch/torchtune#2651, verbatim: Python logging's default `LEVEL:name:` header,
        # the line padded with spaces by the poster's terminal
        "INFO:torchtune.utils._logging:Saving checkpoint. This may take some time. Retrieving full model state dict..."
        + " " * 53,
    ]
    phases = parsed_by("phase_banners", lines)
    assert phases.get_column("line").to_list() == [1, 2, 3, 4, 5, 6, 7]
    last = phases.row(4, named=True)
    assert (last["rank"], last["rank_from"]) == (5, "content")
    names = pl.DataFrame({"message": lines}).select(phase_name(pl.col("message")))
    assert names.to_series().to_list() == [
        "Evaluating bbox",
        "Running per image evaluation",
        "Evaluate annotation type *bbox",
        "caching latents",
        "Computing validation loss",
        "Memory before validation",
        "Saving checkpoint",
    ]


def test_work_done_and_prose_that_mentions_a_phase_are_no_banners():
    lines = [
        # jpata/particleflow#390, verbatim: a report of work done
        "INFO:mlpf:Saved predictions at experiments/test_pyg-clic_20250124_032654_637048/preds_epoch_1/clic_edm_ttbar_pf/pred_0_3.parquet",
        # open-mmlab/mmdetection#11096, verbatim: loading runs on every rank
        "Loading and preparing results...",
        # the Hugging Face accelerate warning (modal-labs/llm-finetuning#82): a mention, not a phase
        "Detected kernel version 4.4.0, which is below the recommended minimum of 5.5.0; this can cause the process to hang. It is recommended to upgrade the kernel to the minimum version or higher.",
        # a rule of `=` on one side only is no heading
        "===== the checkpoint being saved here is the last one",
    ]
    assert parsed_by("phase_banners", lines).is_empty()


def test_the_main_process_s_upload_to_the_hub_is_a_banner():
    # huggingface/alignment-handbook#59, verbatim: the line before rank 0's lone timeout
    lines = ["2023-12-01 00:05:43 - INFO - __main__ - Pushing to hub..."]
    phase = parsed_by("phase_banners", lines)
    assert phase.height == 1 and phase.item(0, "event") == "phase"
