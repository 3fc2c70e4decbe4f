from __future__ import annotations

from pathlib import Path

from logforensics.i18n import translate, translate_headline
from logforensics.registry import diagnosis
from tests.builders import analyze, analyze_files, finding, kinds
from tests.test_i18n import english_runs

THREADS = Path(__file__).resolve().parent.parent / "data" / "threads"

# hkchengrex/Cutie#125 (formats.md §8), verbatim
UNFINISHED = [
    "RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one. This error indicates that your module has parameters that were not used in producing loss. You can enable unused parameter detection by passing the keyword argument `find_unused_parameters=True` to `torch.nn.parallel.DistributedDataParallel`, and by ",
    "making sure all `forward` function outputs participate in calculating loss. ",
    "Parameters which did not receive grad for rank 3: mask_encoder.sensory_update.transform.bias, mask_encoder.sensory_update.transform.weight",
    "Parameter indices which did not receive grad for rank 3: 282 283 ",
]


def test_names_the_rank_and_its_parameters(tmp_path):
    reducer = finding(analyze_files(tmp_path, {"train.log": UNFINISHED}), "reducer_unused_params")
    assert reducer.ranks == [3]
    assert reducer.details["parameters"] == [
        "mask_encoder.sensory_update.transform.bias",
        "mask_encoder.sensory_update.transform.weight",
    ]
    assert reducer.details["parameter_indices"] == [282, 283]
    assert "find_unused_parameters=True" in reducer.fix
    assert diagnosis(reducer) == "reducer_unused_params"


def test_ready_twice(tmp_path):
    line = (
        "RuntimeError: Parameter at index 55 has been marked as ready twice. This means that "
        "multiple autograd engine  hooks have fired for this particular parameter during this "
        "iteration. You can set the environment variable TORCH_DISTRIBUTED_DEBUG to either INFO "
        "or DETAIL to print parameter names for further debugging."
    )
    analysis = analyze_files(tmp_path, {"rank1.log": [line]})
    reducer = finding(analysis, "reducer_unused_params")
    assert reducer.ranks == [1] and "static_graph=True" in reducer.fix


def test_a_rank_raising_the_ready_once_error_is_the_reducers_verdict_not_an_exception(tmp_path):
    # modelscope/ms-swift#3171 (GRPO under DDP with reentrant gradient checkpointing), verbatim
    line = (
        "[rank3]: RuntimeError: Expected to mark a variable ready only once. This error is "
        "caused by one of the following reasons: 1) Use of a module parameter outside the "
        "`forward` function. Please make sure model parameters are not shared across multiple "
        "concurrent forward-backward passes. or try to use _set_static_graph() as a workaround "
        "if this module graph does not change during training loop.2) Reused parameters in "
        "multiple reentrant backward passes. For example, if you use multiple `checkpoint` "
        "functions to wrap the same part of your model, it would result in the same set of "
        "parameters been used by different reentrant backward passes multiple times, and hence "
        "marking a variable ready multiple times. DDP does not support such use cases in "
        "default. You can try to use _set_static_graph() as a workaround if your module graph "
        "does not change over iterations."
    )
    analysis = analyze_files(tmp_path, {"train.log": [line]})
    assert analysis.verdict.finding.kind == "reducer_unused_params"
    assert analysis.verdict.finding.ranks == [3]
    assert "rank_exception" not in kinds(analysis)


def test_healthy_log_mentioning_the_reducer_is_quiet(tmp_path):
    line = "[I reducer.cpp:1313] Reducer buckets have been rebuilt in this iteration."
    assert "reducer_unused_params" not in kinds(analyze_files(tmp_path, {"a.log": [line]}))


MODEL_MISMATCH = (
    Path(__file__).parents[1] / "data" / "launchers" / "torchrun" / "model_mismatch" / "console.log"
)


def test_the_rank_whose_parameter_count_most_ranks_do_not_share_built_another_model():
    # a run here: rank 1 builds 6 parameters, ranks 0 and 2 build 4; every rank raises
    # `DDP expects same model across all ranks`, each naming itself and another rank
    analysis = analyze(MODEL_MISMATCH)
    built = analysis.verdict.finding
    assert (built.kind, analysis.verdict.ranks) == ("reducer_unused_params", [1])
    # models that differ fail DDP's collective check of their parameters: a mismatch
    assert diagnosis(built) == "collective_mismatch"
    assert "rank 1 has 6 parameters where ranks 0 and 2 have 4" in built.summary
    assert analysis.verdict.headline == (
        "Rank 1 built a different model than the others (6 parameters, not 4)"
    )
    # every rank raised it, but the exception is DDP's check, not three failures of their own
    assert "rank_exception" not in kinds(analysis)


TORCHRUN = Path(__file__).parents[1] / "data" / "launchers" / "torchrun"


def test_the_one_rank_whose_parameter_is_shaped_unlike_process_0s_built_another_model():
    # a run here: rank 2 builds a wider first layer; DDP's check raises on rank 2 alone and
    # the others lose their connection to it
    analysis = analyze(TORCHRUN / "shape_mismatch" / "console.log")
    built = analysis.verdict.finding
    assert (built.kind, analysis.verdict.ranks) == ("reducer_unused_params", [2])
    assert diagnosis(built) == "collective_mismatch"
    assert "found parameter 0 shaped unlike process 0's" in built.summary
    assert analysis.verdict.headline.startswith(
        "Rank 2 built a different model than the others (parameter 0's shape)"
    )
    assert "rank_exception" not in kinds(analysis)


def test_process_0_is_the_odd_one_when_every_other_rank_reports_its_shape():
    # the same run with rank 0 the odd one: ranks 1-3 each raise the error against process 0,
    # which raises nothing of it
    analysis = analyze(TORCHRUN / "shape_mismatch_rank0" / "console.log")
    built = analysis.verdict.finding
    assert (built.kind, analysis.verdict.ranks) == ("reducer_unused_params", [0])
    assert built.summary.startswith("Ranks 1-3 each found parameter 0 shaped unlike process 0's")
    for english in (built.summary, built.fix):
        assert english_runs(translate(english, "zh")) == []
    assert english_runs(translate_headline(analysis.verdict.headline, "zh")) == []


def test_one_report_between_two_ranks_blames_the_peer_it_names(tmp_path):
    # pytorch's own wording with two ranks, one report: no count most ranks share
    line = (
        "RuntimeError: DDP expects same model across all ranks, but Rank 0 has 382 params, "
        "while rank 1 has inconsistent 0 params."
    )
    analysis = analyze_files(tmp_path, {"rank0.log": [line]})
    built = analysis.verdict.finding
    assert (built.kind, built.ranks) == ("reducer_unused_params", [1])
    assert "parameter_counts" not in built.details


def test_counts_that_contradict_each_other_were_never_exchanged(tmp_path):
    # hpc-community.unige.ch/t/4301 (tests/data/threads): DDP's check all-gather (SeqNum 1)
    # times out on all four ranks; then rank 2 says rank 0 has 0 parameters while rank 0 says
    # it has 51: the counts are the aborted all-gather's buffer, not two models
    lines = (THREADS / "unige4301_gpu008_first_allgather.log").read_text(encoding="utf-8")
    analysis = analyze_files(tmp_path, {"train.log": lines.splitlines()})
    check = finding(analysis, "reducer_unused_params")
    assert (check.severity, check.part, check.blames_nobody) == ("warning", "context", True)
    assert "contradict each other" in check.summary
    verdict = analysis.verdict
    assert verdict.finding.kind == "collective_timeout" and verdict.ranks == []
    assert verdict.finding.details.get("never_completed") is True


# WongKinYiu/yolov7#773, verbatim: rank 5's model check got 0 as rank 0's count while rank 0
# fitted anchors alone (its bar, 3 of 1,000 rounds) and ranks 4 and 6 timed out in that check's
# ALLGATHER
YOLOV7_ANCHORS = [
    "DDP expects same model across all ranks, but Rank 5 has 288 params, while rank 0 has inconsistent 0 params.",
    "",
    "autoanchor: Evolving anchors with Genetic Algorithm: fitness = 0.7260:   0%|▏                                                                             | 3/1000 [02:03<11:24:29, 41.19s/it][E ProcessGroupNCCL.cpp:737] [Rank 4] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=2, OpType=ALLGATHER, Timeout(ms)=1800000) ran for 1807947 milliseconds before timing out.",
    "[E ProcessGroupNCCL.cpp:737] [Rank 6] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=2, OpType=ALLGATHER, Timeout(ms)=1800000) ran for 1807899 milliseconds before timing out.",
]


def test_a_zero_count_beside_the_check_s_timeout_is_the_timeout_s_echo(tmp_path):
    analysis = analyze_files(tmp_path, {"train.log": YOLOV7_ANCHORS})
    check = finding(analysis, "reducer_unused_params")
    assert (check.part, check.blames_nobody, check.ranks) == ("context", True, [0])
    assert "never arrived" in check.summary
    verdict = analysis.verdict
    assert (verdict.finding.kind, verdict.ranks) == ("collective_timeout", [0])
    assert "still busy with autoanchor" in verdict.headline
    assert english_runs(translate(check.summary, "zh")) == []


def test_a_zero_count_alone_says_the_peer_never_took_part_in_the_check(tmp_path):
    # ViTAE-Transformer/RSP#5, the reporter's one line: DDP refuses a module without trainable
    # parameters before this check, so rank 1's 0 is no model's count
    line = (
        "DDP expects same model across all ranks, but Rank 0 has 161 params, while rank 1 has "
        "inconsistent 0 params."
    )
    analysis = analyze_files(tmp_path, {"train.log": [line]})
    verdict = analysis.verdict
    assert (verdict.finding.kind, verdict.ranks) == ("reducer_unused_params", [1])
    assert verdict.headline == "Rank 1 never took part in DDP's model check"
    assert "never took part in the check" in verdict.finding.summary
    assert "DistributedDataParallel(...)" in verdict.finding.fix
    for english in (verdict.finding.summary, verdict.finding.fix):
        assert english_runs(translate(english, "zh")) == []
    assert english_runs(translate_headline(verdict.headline, "zh")) == []


# open-mmlab/mmcv#2869, verbatim (the end of DDP's message, mmcv's traceback cut to its last
# frames, torchrun's summary): the error names no rank, the summary lists rank 1 alone
MMCV_NO_RANK = [
    " In addition, you can set the environment variable TORCH_DISTRIBUTED_DEBUG to either INFO or DETAIL to print out information about which particular parameters did not receive gradient on this rank as part of this error",
    "Traceback (most recent call last):",
    '  File "/home/zhangbulin/anaconda3/envs/mmseg23/lib/python3.8/site-packages/mmcv/parallel/distributed.py", line 42, in train_step',
    "    and self.reducer._rebuild_buckets()):",
    "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
    "============================================================",
    "./train.py FAILED",
    "------------------------------------------------------------",
    "Failures:",
    "  <NO_OTHER_FAILURES>",
    "------------------------------------------------------------",
    "Root Cause (first observed failure):",
    "[0]:",
    "  time      : 2023-07-14_16:14:46",
    "  host      : localhost",
    "  rank      : 1 (local_rank: 1)",
    "  exitcode  : 1 (pid: 8283)",
    "  error_file: <N/A>",
    "  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html",
    "============================================================",
]


def test_a_reducer_error_no_line_ties_to_a_rank_is_the_one_worker_torchrun_lists(tmp_path):
    verdict = analyze_files(tmp_path, {"console.log": MMCV_NO_RANK}).verdict
    assert (verdict.finding.kind, verdict.ranks) == ("reducer_unused_params", [1])
    assert "torchrun's summary lists rank 1 alone as failed" in verdict.finding.summary
    assert english_runs(translate(verdict.finding.summary, "zh")) == []
