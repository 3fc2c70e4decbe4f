# ruff: noqa: E501 -- test data are verbatim log lines
"""DDP reducer errors, verbatim from /work/shared/formats.md §8, the field samples, public
issues and torch 2.13 runs on this project's machine."""

from __future__ import annotations

import polars as pl
import pytest

from logforensics.framing import frame_lines
from parsers.reducer import PARSER
from tests.builders import analyze_files, kinds, only, parse, parsed_by

MY_PARSERS = ("reducer", "watchdog", "gloo", "detail", "monitored_barrier")


def reducer_events(lines: list[str]) -> pl.DataFrame:
    return parsed_by("reducer", lines)


def recognised(lines: list[str]) -> list[int]:
    """The line numbers the reducer parser recognises, with or without an event."""
    frame = pl.DataFrame(
        {"file": ["job.log"] * len(lines), "line": range(1, len(lines) + 1), "text": lines},
        schema={"file": pl.String, "line": pl.UInt32, "text": pl.String},
    )
    framed = frame_lines(frame)
    candidates = framed.filter(pl.col("message").str.contains_any(list(PARSER.literals)))
    found = PARSER.parse(candidates.with_columns(pl.lit(True).alias("candidate")))
    return sorted(found.get_column("line").to_list())


# hkchengrex/Cutie#125 (DETAIL on), one message over five lines
CUTIE = [
    "RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one. This error indicates that your module has parameters that were not used in producing loss. You can enable unused parameter detection by passing the keyword argument find_unused_parameters=True to torch.nn.parallel.DistributedDataParallel, and by ",
    "making sure all forward function outputs participate in calculating loss. ",
    "If you already have done the above, then the distributed data parallel module wasn't able to locate the output tensors in the return value of your module's forward function. Please include the loss function and the structure of the return value of forward of your module when reporting this issue (e.g. list, dict, iterable).",
    "Parameters which did not receive grad for rank 3: mask_encoder.sensory_update.transform.bias, mask_encoder.sensory_update.transform.weight",
    "Parameter indices which did not receive grad for rank 3: 282 283 ",
]


def test_unfinished_reduction_with_names_and_indices():
    events = reducer_events(CUTIE).sort("line")
    assert events.select("line", "event", "severity").rows() == [
        (1, "reducer_unfinished", "error"),
        (4, "unused_params", "error"),
        (5, "unused_params", "error"),
    ]
    names, indices = events.row(1, named=True), events.row(2, named=True)
    assert (names["rank"], names["names"], names["values"]) == (
        3,
        [
            "mask_encoder.sensory_update.transform.bias",
            "mask_encoder.sensory_update.transform.weight",
        ],
        None,
    )
    assert (indices["rank"], indices["values"], indices["names"]) == (3, [282, 283], None)
    # the two continuation lines are recognised too, without an event of their own
    assert recognised(CUTIE) == [1, 2, 3, 4, 5]


def test_torch_2_13_message_behind_prefixes():
    # sample_logs/reducer_unused_params (torch 2.13, backticks around the names)
    lines = [
        "[rank2]: RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one. This error indicates that your module has parameters that were not used in producing loss. You can enable unused parameter detection by passing the keyword argument `find_unused_parameters=True` to `torch.nn.parallel.DistributedDataParallel`, and by ",
        "[rank2]: making sure all `forward` function outputs participate in calculating loss. ",
        "[rank2]: If you already have done the above, then the distributed data parallel module wasn't able to locate the output tensors in the return value of your module's `forward` function. Please include the loss function and the structure of the return value of `forward` of your module when reporting this issue (e.g. list, dict, iterable).",
        "[rank2]: Parameters which did not receive grad for rank 2: aux_head.bias, aux_head.weight",
        "[rank2]: Parameter indices which did not receive grad for rank 2: 4 5",
    ]
    events = reducer_events(lines).sort("line")
    assert events.select("event", "rank", "names", "values").rows() == [
        ("reducer_unfinished", 2, None, None),
        ("unused_params", 2, ["aux_head.bias", "aux_head.weight"], None),
        ("unused_params", 2, None, [4, 5]),
    ]
    assert recognised(lines) == [1, 2, 3, 4, 5]


def test_find_unused_parameters_variant_with_truncated_names():
    # kohya-997: find_unused_parameters=True already on; the names line is cut off in the paste
    lines = [
        "RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one. This error indicates that your module has parameters that were not used in producing loss. Since `find_unused_parameters=True` is enabled, this likely  means that not all `forward` outputs participate in computing loss. You can fix this by making sure all `forward` function outputs participate in calculating loss. ",
        "If you already have done the above, then the distributed data parallel module wasn't able to locate the output tensors in the return value of your module's `forward` function. Please include the loss function and the structure of the return value of `forward` of your module when reporting this issue (e.g. list, dict, iterable).",
        "Parameters which did not receive grad for rank 0: text_model.final_layer_norm.bias, text_model.final_layer_norm.weight, text_model.encoder.layers.11.layer_norm2.bias, text_model.encoder.layers.11.layer_norm2.weight, text_model.encoder.layers.11.mlp.fc2.bias, text_model.encoder.layers.11.mlp.fc2.weight, text_model.encoder.layers.11.",
    ]
    events = reducer_events(lines).sort("line")
    assert events.get_column("event").to_list() == ["reducer_unfinished", "unused_params"]
    named = events.row(1, named=True)
    assert named["rank"] == 0
    assert named["names"][:2] == [
        "text_model.final_layer_norm.bias",
        "text_model.final_layer_norm.weight",
    ]
    assert len(named["names"]) == 7


def test_indices_without_detail_and_the_hint_line():
    # open-mmlab/mmpose#3111; showlab/Tune-A-Video#78 (the hint starts with one space)
    lines = [
        "Parameter indices which did not receive grad for rank 2: 362 363 364 365 366 367 368 369 394 395 396 397 398 399 400 401",
        " In addition, you can set the environment variable TORCH_DISTRIBUTED_DEBUG to either INFO or DETAIL to print out information about which particular parameters did not receive gradient on this rank as part of this error",
    ]
    row = only(reducer_events(lines))
    assert (row["event"], row["rank"]) == ("unused_params", 2)
    assert row["values"] == [
        362,
        363,
        364,
        365,
        366,
        367,
        368,
        369,
        394,
        395,
        396,
        397,
        398,
        399,
        400,
        401,
    ]
    assert recognised(lines) == [1, 2]


@pytest.mark.parametrize(
    ("line", "index", "name"),
    [
        # hiyouga/ChatGLM-Efficient-Tuning#114
        (
            "Parameter at index 55 has been marked as ready twice. This means that multiple autograd engine  hooks have fired for this particular parameter during this iteration. You can set the environment variable TORCH_DISTRIBUTED_DEBUG to either INFO or DETAIL to print parameter names for further debugging.",
            [55],
            None,
        ),
        # huggingface/trl#921 (DETAIL: with the name)
        (
            "Parameter at index 447 with name base_model.model.model.layers.31.mlp.down_proj.lora_B.default.weight has been marked as ready twice. This means that multiple autograd engine  hooks have fired for this particular parameter during this iteration.",
            [447],
            ["base_model.model.model.layers.31.mlp.down_proj.lora_B.default.weight"],
        ),
        # shibing624/MedicalGPT#408 (behind the excepthook prefix)
        (
            "[rank0]: Parameter at index 286 with name model.layers.23.mlp.down_proj.weight has been marked as ready twice. This means that multiple autograd engine  hooks have fired for this particular parameter during this iteration.",
            [286],
            ["model.layers.23.mlp.down_proj.weight"],
        ),
        # imatif17/Prototype-Mean-Teacher#5: the message's first line names no parameter
        (
            "RuntimeError: Expected to mark a variable ready only once. This error is caused by one of the following reasons: 1) Use of a module parameter outside the `forward` function. Please make sure model parameters are not shared across multiple concurrent forward-backward passes. or try to use _set_static_graph() as a workaround if this module graph does not change during training loop.2) Reused parameters in multiple reentrant backward passes. For example, if you use multiple `checkpoint` functions to wrap the same part of your model, it would result in the same set of parameters been used by different reentrant backward passes multiple times, and hence marking a variable ready multiple times. DDP does not support such use cases in default. You can try to use _set_static_graph() as a workaround if your module graph does not change over iterations.",
            None,
            None,
        ),
    ],
)
def test_ready_twice(line, index, name):
    row = only(reducer_events([line]))
    assert (row["event"], row["severity"], row["values"], row["names"]) == (
        "ready_twice",
        "error",
        index,
        name,
    )


def test_model_mismatch_is_reported_by_the_rank_named_first():
    # yifan123/flow_grpo#245. reducer.cpp `verify_params_across_processes`: "Rank X" is the
    # process raising the error (process_group->getRank()), "rank i" the one it disagrees with.
    line = "RuntimeError: DDP expects same model across all ranks, but Rank 0 has 382 params, while rank 1 has inconsistent 0 params."
    row = only(reducer_events([line]))
    assert (row["event"], row["severity"]) == ("model_mismatch", "error")
    assert (row["rank"], row["peer_rank"], row["value"], row["values"]) == (0, 1, 0, [382, 0])


@pytest.mark.parametrize(
    "lines",
    [
        # ctrl-transformers-9802: torch 1.7's warning on a healthy run
        [
            "[W reducer.cpp:1050] Warning: find_unused_parameters=True was specified in DDP constructor, but did not find any unused parameters. This flag results in an extra traversal of the autograd graph every iteration, which can adversely affect performance. If your model indeed never has any unused parameters, consider turning this flag off. Note that this warning may be a false positive your model has flow control causing later iterations to have unused parameters. (function operator())",
        ],
        # ctrl-snowfall-152: a healthy DDP log (the reducer note is hard-wrapped mid-word)
        [
            "2021-04-10 23:36:00,287 INFO [mmi_bigram_train.py:401] epoch 0, learning rate 0.001",
            "2021-04-10 23:36:02,585 INFO [mmi_bigram_train.py:176] batch 0, epoch 0/10 global average 2021-04-10 23:36:02,597 INFO [distributed.py:607] Reducer buckets have been rebuilt in this iterati\\",
            "on.",
            "2021-04-11 00:06:37,689 INFO [common.py:201] write training info to exp-lstm-adam-mmi-bigram-musan-dist/best-epoch-info",
            "2021-04-11 00:06:37,689 INFO [common.py:201] write training info to exp-lstm-adam-mmi-bigram-musan-dist/epoch-0-info",
            "2021-04-11 00:06:37,690 INFO [mmi_bigram_train.py:401] epoch 1, learning rate 0.001",
            "2021-04-11 00:37:08,277 INFO [common.py:201] write training info to exp-lstm-adam-mmi-bigram-musan-dist/best-epoch-info",
            "2021-04-11 00:37:08,277 INFO [common.py:201] write training info to exp-lstm-adam-mmi-bigram-musan-dist/epoch-1-info",
            "2021-04-11 00:37:08,278 INFO [mmi_bigram_train.py:401] epoch 2, learning rate 0.001",
            "2021-04-11 01:07:37,757 INFO [common.py:201] write training info to exp-lstm-adam-mmi-bigram-musan-dist/best-epoch-info",
            "2021-04-11 01:07:37,757 INFO [common.py:201] write training info to exp-lstm-adam-mmi-bigram-musan-dist/epoch-2-info",
            "2021-04-11 01:07:37,758 INFO [mmi_bigram_train.py:401] epoch 3, learning rate 0.001",
        ],
    ],
    ids=["ctrl-transformers-9802", "ctrl-snowfall-152"],
)
def test_healthy_runs_give_no_error(lines):
    events = parse(lines).filter(pl.col("parser").is_in(MY_PARSERS))
    assert events.filter(pl.col("severity") == "error").is_empty()
    # the reducer's own note is known text, counted as recognised
    reducer_notes = [number for number, line in enumerate(lines, 1) if "reducer" in line.lower()]
    assert recognised(lines) == reducer_notes == [reducer_notes[0]]


# Lightning-AI/pytorch-lightning#20328, verbatim: rank 0's stack through Lightning's
# `prepare_for_backward`, then (from another paste in the same post) Lightning's own words
# for DDP's unused-parameters error
LIGHTNING_UNUSED = [
    '[rank0]:   File "/home/ubuntu/pranav.rao/qxr_training/test_gan_lightning_ddp.py", line 196, in training_step',
    "[rank0]:     self.manual_backward(d_loss)",
    '[rank0]:   File "/home/ubuntu/miniconda3/envs/lightningTest/lib/python3.10/site-packages/pytorch_lightning/core/module.py", line 1082, in manual_backward',
    "[rank0]:     self.trainer.strategy.backward(loss, None, *args, **kwargs)",
    '[rank0]:   File "/home/ubuntu/miniconda3/envs/lightningTest/lib/python3.10/site-packages/pytorch_lightning/strategies/strategy.py", line 208, in backward',
    "[rank0]:     self.pre_backward(closure_loss)",
    '[rank0]:   File "/home/ubuntu/miniconda3/envs/lightningTest/lib/python3.10/site-packages/pytorch_lightning/strategies/ddp.py", line 317, in pre_backward',
    "[rank0]:     prepare_for_backward(self.model, closure_loss)",
    '[rank0]:   File "/home/ubuntu/miniconda3/envs/lightningTest/lib/python3.10/site-packages/pytorch_lightning/overrides/distributed.py", line 55, in prepare_for_backward',
    '[rank0]:     reducer._rebuild_buckets()  # avoids "INTERNAL ASSERT FAILED" with `find_unused_parameters=False`',
    "[rank0]: RuntimeError: It looks like your LightningModule has parameters that were not used in producing the loss returned by training_step. If this is intentional, you must enable the detection of unused parameters in DDP, either by setting the string value `strategy='ddp_find_unused_parameters_true'` or by setting the flag in the strategy with `strategy=DDPStrategy(find_unused_parameters=True)`.",
]


def test_lightning_s_words_for_unused_parameters_are_the_reducer_error(tmp_path):
    found = parsed_by("reducer", LIGHTNING_UNUSED)
    (row,) = found.filter(pl.col("event").is_not_null()).iter_rows(named=True)
    assert row["event"] == "reducer_unfinished"
    analysis = analyze_files(tmp_path, {"console.log": LIGHTNING_UNUSED})
    verdict = analysis.verdict
    assert (verdict.finding.kind, verdict.ranks) == ("reducer_unused_params", [0])
    assert "find_unused_parameters=True" in verdict.finding.fix
    # the RuntimeError that carries it is the reducer's report, not a failure of its own
    assert "rank_exception" not in kinds(analysis)


# facebookresearch/XLM#224: the posted log ends mid-sentence
XLM_CUT = [
    "INFO - 10/28/19 12:58:05 - 0:00:22 - Creating new training data iterator (ae,en) ...",
    "Traceback (most recent call last):",
    '  File "train.py", line 280, in main',
    "    trainer.mt_step(lang, lang, params.lambda_ae)",
    '  File "/opt/anaconda3-2019.7/envs/pt/lib/python3.6/site-packages/torch/nn/parallel/distributed.py", line 459, in forward',
    "    self.reducer.prepare_for_backward([])",
    "RuntimeError: Expected to have finished reduction in the prior iteration before st",
]


def test_a_reducer_error_cut_mid_sentence_is_still_the_reducer_error(tmp_path):
    (row,) = parsed_by("reducer", XLM_CUT).iter_rows(named=True)
    assert (row["line"], row["event"]) == (7, "reducer_unfinished")
    verdict = analyze_files(tmp_path, {"train.log": XLM_CUT}).verdict
    assert verdict.finding.kind == "reducer_unused_params"


def test_the_unfinished_reduction_hint_alone_names_the_error(tmp_path):
    # LizhenWangT/StyleAvatar#16, verbatim: the paste starts at the error's closing hint, then
    # torchrun's agent
    lines = [
        " In addition, you can set the environment variable TORCH_DISTRIBUTED_DEBUG to either INFO or DETAIL to print out information about which particular parameters did not receive gradient on this rank as part of this error",
        "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 0 (pid: 14910) of binary: /opt/conda/envs/py38/bin/python",
    ]
    assert only(parsed_by("reducer", lines[:1]))["event"] == "reducer_unfinished"
    assert analyze_files(tmp_path, {"train.log": lines}).verdict.finding.kind == (
        "reducer_unused_params"
    )


def test_the_hint_below_its_error_is_no_second_error():
    # Yusen-Peng/DRIP's README, verbatim: the message as DDP prints it on rank 3, the hint
    # closing the error that opened above it
    lines = [
        "[rank3]: RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one. This error indicates that your module has parameters that were not used in producing loss. You can enable unused parameter detection by passing the keyword argument `find_unused_parameters=True` to `torch.nn.parallel.DistributedDataParallel`, and by ",
        "[rank3]: making sure all `forward` function outputs participate in calculating loss. ",
        "[rank3]: If you already have done the above, then the distributed data parallel module wasn't able to locate the output tensors in the return value of your module's `forward` function. Please include the loss function and the structure of the return value of `forward` of your module when reporting this issue (e.g. list, dict, iterable).",
        "[rank3]: Parameter indices which did not receive grad for rank 3: 149 150 151 152",
        "[rank3]:  In addition, you can set the environment variable TORCH_DISTRIBUTED_DEBUG to either INFO or DETAIL to print out information about which particular parameters did not receive gradient on this rank as part of this error",
    ]
    events = parsed_by("reducer", lines).filter(pl.col("event").is_not_null())
    assert events.get_column("line").to_list() == [1, 4]


@pytest.mark.parametrize(
    ("line", "rank", "index"),
    [
        # a run here (tests/data/launchers/torchrun/shape_mismatch): DDP's check at construction
        (
            "[rank2]: RuntimeError: [2]: params[0] in this process with sizes [12, 8] appears not to match sizes of the same param in process 0.",
            2,
            0,
        ),
        # SakanaAI/text-to-lora#9, on 4 H100s
        (
            "[rank2]: RuntimeError: [2]: params[32] in this process with sizes [40960, 512] appears not to match sizes of the same param in process 0.",
            2,
            32,
        ),
        # dongrunmin/RefDiff#2: an older release, the sizes agree but not the strides, no `[N]:`
        (
            "RuntimeError: params[182] in this process with sizes [256, 256, 1, 1] appears not to match strides of the same param in process 0.",
            None,
            182,
        ),
    ],
)
def test_a_parameter_shaped_unlike_process_0s_is_reported_by_the_rank_it_names(line, rank, index):
    row = only(reducer_events([line]))
    assert (row["event"], row["severity"]) == ("shape_mismatch", "error")
    assert (row["rank"], row["peer_rank"], row["values"]) == (rank, 0, [index])


# Nixtla/neuralforecast#1110, verbatim (hard-wrapped by the poster's terminal): the unused
# parameters c10's INFO log names one per line as the reducer raises its error
UNUSED_ONE_PER_LINE = [
    "[rank1]:[I816 21:41:23.034545571 reducer.cpp:1989] [Rank 1] Parameter: static_encoder.context_grns.3.glu.lin.bias did not get gradient i",
    "n backwards pass.                                                                                                                       ",
    "[rank1]:[I816 21:41:23.034555851 reducer.cpp:1989] [Rank 1] Parameter: static_encoder.context_grns.3.glu.lin.weight did not get gradient",
    " in backwards pass.                                                                                                                     ",
]


def test_each_parameter_the_info_log_names_is_an_unused_parameter_of_its_rank(tmp_path):
    analysis = analyze_files(tmp_path, {"train.log": UNUSED_ONE_PER_LINE})
    verdict = analysis.verdict
    assert (verdict.finding.kind, verdict.ranks) == ("reducer_unused_params", [1])
    assert "static_encoder.context_grns.3.glu.lin.weight" in verdict.finding.summary
