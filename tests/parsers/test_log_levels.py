# ruff: noqa: E501 -- verbatim log lines
from __future__ import annotations

import polars as pl
import pytest

from tests.builders import analyze_files, finding, kinds, marks, only, parse, parsed_by


@pytest.mark.parametrize(
    ("line", "event", "rank"),
    [
        # sample_logs/skip_backward_hang: rank 2's own warning as it skips backward
        (
            "2026-11-30 15:04:31,251 WARNING rank=2 step=5 non-finite loss=nan -> skipping batch",
            "log_warning",
            2,
        ),
        (
            "[2024-01-01 10:00:00,123] [ERROR] [engine.py:120:step] gradient overflow",
            "log_error",
            None,
        ),
        ("WARNING:root:bad sample 1731, skipped", "log_warning", None),
    ],
)
def test_levels(line, event, rank):
    rows = parsed_by("log_levels", [line])
    assert rows.select("event", "rank").rows() == [(event, rank)]


@pytest.mark.parametrize(
    "line",
    [
        # torch's own Python warning (sample_logs launcher.log) and NCCL's WARN are not it
        "/work/venv/lib/python3.11/site-packages/torch/_subclasses/functional_tensor.py:368: UserWarning: Failed to initialize NumPy: No module named 'numpy'",
        "gpu-a:1:2 [0] init.cc:943 NCCL WARN Duplicate GPU detected : rank 1 and rank 0 both on CUDA device 1000",
        "rank=0 step=1 stage=x ERRORS=0",
        # unittest's banner over a failed test (pytorch/pytorch#38395)
        "ERROR: test_gloo_backend_2gpu_module (__main__.DistributedDataParallelTest)",
        # and PyTorch's test runner's, with the test's time (pytorch/pytorch#68391)
        "ERROR [21.066s]: test_forward_overlap (__main__.TestForwardOverlapWorldSizeTwo)",
        # and its verdict on the test, alone after the processes' output (pytorch/pytorch#61670,
        # behind the CI's `Jul 13 21:22:34 ` stamp)
        "ERROR (2.532s)",
    ],
)
def test_not_a_level(line):
    assert parsed_by("log_levels", [line]).is_empty()


def test_the_divergence_quotes_what_the_rank_logged_as_it_left(tmp_path):
    files = {f"rank{r}.log": marks(r, range(6)) for r in (0, 1, 3)}
    skipped = marks(2, range(6), skip={3: ("after_backward", "after_step")})
    at = skipped.index(next(line for line in skipped if "step=3 stage=before_backward" in line))
    skipped.insert(at + 1, "2026-11-29 10:00:03,002 WARNING rank=2 step=3 loss is nan, skipping")
    files["rank2.log"] = skipped
    divergence = finding(analyze_files(tmp_path, files), "stage_divergence")
    assert (
        'In between it logged: "2026-11-29 10:00:03,002 WARNING rank=2 step=3 loss is nan, skipping"'
        in divergence.summary
    )
    assert any("loss is nan" in evidence.text for evidence in divergence.evidence)


def test_an_excepthook_s_record_of_an_uncaught_exception_is_the_process_s_death(tmp_path):
    # allenai/OLMo#552, verbatim: the last metrics, then OLMo's excepthook on rank 0
    console = [
        "[2024-04-18 19:06:17] INFO     [olmo.train:816, rank=0] [step=75/739328]",
        "    train/CrossEntropyLoss=7.417",
        "[2024-04-18 19:10:41] CRITICAL [olmo.util:158, rank=0] Uncaught OLMoThreadError: generator thread data thread 3 failed",
    ]
    raised = parse(console).filter(pl.col("event") == "exception").row(0, named=True)
    assert (raised["exc_type"], raised["rank"], raised["extra"]) == ("OLMoThreadError", 0, None)
    verdict = analyze_files(tmp_path, {"rank0.log": console}).verdict
    assert (verdict.finding.kind, verdict.ranks) == ("rank_exception", [0])


# THUDM/slime#326, verbatim: a Megatron checkpoint's async writer on a two-node run
ASYNC_WRITER_EIO = "ERROR: megatron.core.dist_checkpointing.strategies.filesystem_async: Local process 0 encountered an error: [Errno 5] Input/output error"


def test_an_os_errors_own_words_in_a_logged_error_are_an_oserror():
    caught = only(parsed_by("log_levels", [ASYNC_WRITER_EIO]).filter(event="exception"))
    assert (caught["exc_type"], caught["exc_message"]) == (
        "OSError",
        "[Errno 5] Input/output error",
    )
    assert caught["rank"] is None  # `Local process 0` is the writer's, no rank


def test_a_failed_write_to_the_file_system_gets_the_storage_fix(tmp_path):
    verdict = analyze_files(tmp_path, {"train.log": [ASYNC_WRITER_EIO]}).verdict
    assert verdict.finding.kind == "rank_exception" and verdict.ranks == []
    # caught and logged: what the line says, not that the process died of it
    assert verdict.headline == "A process logged an OSError"
    assert "whose rank the logs do not say logged OSError" in verdict.finding.summary
    assert verdict.finding.fix.startswith("The file system failed the job's write or read")


# spawnaga/GeneticTrading's committed console of a 4-rank run that finished (attached_assets,
# commit 3ccecc8), verbatim, lines left out between: rank 0's dashboard could not bind its port,
# the training went on and every communicator was destroyed in order
DASHBOARD_PORT_TAKEN = [
    "2025-07-10 20:50:25 [ERROR   ] 🔸 VISUALIZATION  : ❌ Failed to start web server: [Errno 98] Address already in use",
    "[GA] Evaluated 5/15 individuals                                                                                         ",
    "[GA] Evaluated 10/15 individuals                                                                                        ",
    "[GA] Evaluated 15/15 individuals                                                                                        ",
    "[GA] Saved GA model to models/ga_models/adaptive_ga_model.pth                                                           ",
    "[GA] Evaluated 5/15 individuals                                                                                         ",
    "[GA] Evaluated 10/15 individuals                                                                                        ",
    "[GA] Evaluated 15/15 individuals                                                                                        ",
    "[GA] Saved GA model to models/ga_models/adaptive_ga_model.pth                                                           ",
    "[GA] Evaluated 5/15 individuals                                                                                         ",
    "[GA] Evaluated 10/15 individuals                                                                                        ",
    "[GA] Evaluated 15/15 individuals                                                                                        ",
    "[GA] Saved GA model to models/ga_models/adaptive_ga_model.pth                                                           ",
    "[GA] Evaluated 5/15 individuals                                                                                         ",
    "[GA] Evaluated 10/15 individuals                                                                                        ",
    "[GA] Evaluated 15/15 individuals                                                                                        ",
    "alex-System-Product-Name:20673:21182 [3] NCCL INFO comm 0x638d42266930 rank 3 nranks 4 cudaDev 3 busId 9000 - Destroy COMPLETE",
    "alex-System-Product-Name:20671:21181 [1] NCCL INFO comm 0x5b75eb8c3530 rank 1 nranks 4 cudaDev 1 busId 5000 - Destroy COMPLETE",
    "alex-System-Product-Name:20672:21184 [2] NCCL INFO comm 0x5fbd164046b0 rank 2 nranks 4 cudaDev 2 busId 8000 - Destroy COMPLETE",
    "alex-System-Product-Name:20670:21183 [0] NCCL INFO comm 0x6076c4cdeeb0 rank 0 nranks 4 cudaDev 0 busId 1000 - Destroy COMPLETE",
]


def test_an_error_logged_with_an_emoji_before_it_keeps_its_words():
    caught = only(parsed_by("log_levels", DASHBOARD_PORT_TAKEN[:1]).filter(event="exception"))
    assert (caught["exc_type"], caught["exc_message"]) == (
        "OSError",
        "[Errno 98] Address already in use",
    )


def test_an_error_logged_before_the_job_went_on_and_finished_stopped_nothing(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": DASHBOARD_PORT_TAKEN})
    assert analysis.verdict is None
    assert "rank_exception" not in kinds(analysis)
