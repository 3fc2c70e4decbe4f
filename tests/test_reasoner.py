"""The causal model, principle by principle, each on a real log: a `sample_logs/` run made
here (torch 2.13 CPU, gloo) or a public excerpt kept in tests/data with its source."""

from __future__ import annotations

from logforensics.api import analyze
from tests.builders import finding, write_logs
from tests.conftest import SAMPLE_LOGS

FIELD = SAMPLE_LOGS.parent / "tests" / "data" / "field_samples"
THREADS = SAMPLE_LOGS.parent / "tests" / "data" / "threads"


def kinds_of(chain) -> list[str]:
    return [link.kind for link in chain]


def test_1_a_guess_never_outranks_a_sure_finding_about_the_same_ranks():
    # two ranks: rank 0 stops inside step 6's backward, rank 1 goes on to step 7 and raises
    # DDP's reducer error; the marks alone cannot tell who left the path
    analysis = analyze(SAMPLE_LOGS / "reducer_two_ranks" / "logs")
    quiet = finding(analysis, "stage_divergence")
    assert quiet.confidence == "low" and quiet.blamed == []
    assert analysis.verdict.finding.kind == "reducer_unused_params"
    assert analysis.verdict.ranks == [1] and analysis.verdict.finding.confidence == "high"


def test_2_the_rank_that_went_quiet_waited_for_the_one_that_failed():
    analysis = analyze(SAMPLE_LOGS / "reducer_two_ranks" / "logs")
    quiet = finding(analysis, "stage_divergence")
    assert kinds_of(analysis.verdict.chain)[:2] == ["reducer_unused_params", "stage_divergence"]
    assert quiet.role == "symptom"
    assert "rank 0 went quiet waiting for rank 1" in quiet.note.lower()


def test_3_uneven_data_is_an_extra_batch_not_a_skip():
    # no `loader sizes` print: 6, 6 and 7 batches show in the epoch lines and marks only
    analysis = analyze(SAMPLE_LOGS / "uneven_epoch_lines" / "logs")
    verdict = analysis.verdict.finding
    assert (verdict.kind, analysis.verdict.ranks, verdict.step) == ("loader_size_mismatch", [2], 6)
    departure = finding(analysis, "stage_divergence")
    assert "ran an extra batch" in departure.summary and "Rank 2 skipped" not in departure.summary
    assert kinds_of(analysis.verdict.chain)[:2] == ["loader_size_mismatch", "stage_divergence"]


def test_3_the_rank_named_is_the_one_that_differs_from_the_majority():
    # `loader sizes: [12, 12, 12, 11]`: the short rank is the odd one
    analysis = analyze(SAMPLE_LOGS / "uneven_loader_hang" / "logs")
    assert analysis.verdict.ranks == [3] and analysis.verdict.finding.step == 11


def test_4_an_abort_proves_a_mismatch_not_who_departed():
    # gloo aborts rank 2 (`Received data size doesn't match expected size`); rank 2 is also
    # the rank that skipped backward, which the marks show, not the abort
    analysis = analyze(SAMPLE_LOGS / "size_mismatch_abort" / "logs")
    abort = finding(analysis, "collective_mismatch")
    assert abort.part == "consequence" and abort.role == "symptom" and abort.blamed == []
    assert analysis.verdict.finding.kind == "stage_divergence"
    assert abort in analysis.verdict.chain


def test_5_timeout_reporters_are_victims_the_rank_still_in_set_up_is_the_suspect():
    # ranks 0-2 time out in DDP's first collective (a victim may instead see its peer close,
    # depending on the run); rank 3 printed only that it was still loading its dataset
    analysis = analyze(SAMPLE_LOGS / "first_collective_timeout" / "logs")
    timeout = analysis.verdict.finding
    assert timeout.kind == "collective_timeout" and set(timeout.ranks) <= {0, 1, 2}
    assert analysis.verdict.ranks == [3]
    assert "still in set-up" in timeout.summary


def test_6_with_two_ranks_and_nothing_else_neither_is_blamed():
    # NVIDIA/nccl#1409: rank 3 ALLREDUCE and rank 7 BROADCAST at one SeqNum, nothing else
    analysis = analyze(FIELD / "nccl-1409-epoch-end-mixed-ops")
    divergence = finding(analysis, "stage_divergence")
    assert divergence.ranks == [3, 7] and divergence.blamed == []
    assert "neither is blamed" in divergence.summary
    assert analysis.verdict.ranks == []


def test_6_the_odd_one_out_of_a_desync_is_blamed():
    # TORCH_DISTRIBUTED_DEBUG=DETAIL: every mismatch report pairs rank 1 with another rank
    analysis = analyze(SAMPLE_LOGS / "detail_mismatch" / "logs")
    detail = next(
        f for f in analysis.findings if f.kind == "collective_mismatch" and f.culprit_ranks
    )
    assert detail.blamed == [1] and "odd one out" in detail.summary


def test_8_a_swallowed_exception_where_the_rank_departed_is_the_verdict():
    analysis = analyze(SAMPLE_LOGS / "swallowed_exception" / "logs")
    verdict = analysis.verdict.finding
    assert (verdict.kind, analysis.verdict.ranks, verdict.step) == ("rank_exception", [1], 4)
    assert "ValueError" in verdict.summary and "label out of range" in verdict.summary
    assert "re-raise" in verdict.fix and "all_reduce(MAX)" not in verdict.fix
    assert kinds_of(analysis.verdict.chain)[:2] == ["rank_exception", "stage_divergence"]


def test_8_a_warning_that_carries_the_exception_is_the_verdict_too():
    analysis = analyze(SAMPLE_LOGS / "swallowed_warning" / "logs")
    verdict = analysis.verdict.finding
    assert (verdict.kind, analysis.verdict.ranks, verdict.step) == ("rank_exception", [1], 4)
    assert verdict.severity == "error" and "ValueError" in verdict.summary


def test_monitored_barrier_seen_from_the_waiting_ranks_names_the_coordinator():
    analysis = analyze(SAMPLE_LOGS / "monitored_barrier_rank0_late" / "logs")
    barrier = finding(analysis, "monitored_barrier")
    assert barrier.ranks == [0] and barrier.details["ranks_that_arrived"] == [1, 2, 3]
    assert analysis.verdict.ranks == [0]


def test_8_a_caught_oom_on_one_rank_explains_the_hang_the_others_report(tmp_path):
    # facebookresearch/fairseq#869, verbatim: the OOM is caught and the batch skipped on one
    # process; with NCCL the others then time out in the collective it never joined
    # (watchdog line: XPixelGroup/BasicSR#737, verbatim)
    files = {
        "rank3.log": [
            "| WARNING: ran out of memory with exception: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 7.93 GiB total capacity; 7.20 GiB already allocated; 17.56 MiB free; 46.25 MiB cached);",
            " Skipping batch",
        ],
        "rank1.log": [
            "[rank1]:[E626 06:24:44.903881913 ProcessGroupNCCL.cpp:616] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=808, OpType=ALLREDUCE, NumelIn=9801523, NumelOut=9801523, Timeout(ms)=600000) ran for 600020 milliseconds before timing out."
        ],
    }
    analysis = analyze(write_logs(tmp_path, files))
    oom = finding(analysis, "oom")
    assert analysis.verdict.finding is oom and analysis.verdict.ranks == [3]
    assert oom.severity == "error" and "caught it and skipped the batch" in oom.summary
    assert oom.confidence == "medium"


def test_a_caught_exception_on_a_healthy_run_is_no_verdict(tmp_path):
    # the same caught OOM with nothing failing after it: a warning, not a failure
    files = {
        "rank3.log": [
            "| WARNING: ran out of memory with exception: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 7.93 GiB total capacity; 7.20 GiB already allocated; 17.56 MiB free; 46.25 MiB cached);",
        ]
    }
    analysis = analyze(write_logs(tmp_path, files))
    assert analysis.verdict is None
    assert finding(analysis, "oom").severity == "warning"


def test_10_dumps_that_single_out_the_verdicts_rank_confirm_it():
    # the marks show rank 2 skipping backward at step 5; its py-spy dump shows it alone in
    # the epoch-end barrier while the others wait in backward
    analysis = analyze(SAMPLE_LOGS / "pyspy_hang" / "logs")
    stacks = finding(analysis, "stuck_location")
    assert analysis.verdict.finding.kind == "stage_divergence" and analysis.verdict.ranks == [2]
    assert stacks in analysis.verdict.chain and stacks.role == "context"
    assert "the py-spy stacks single out rank 2 too" in analysis.verdict.reason
    assert analysis.verdict.finding.confidence == "high"


def test_10_dumps_that_single_out_another_rank_are_shown_beside_the_verdict(tmp_path):
    # the same job with ranks 0 and 2's dumps swapped: the stacks now single out rank 0
    import shutil

    logs = SAMPLE_LOGS / "pyspy_hang" / "logs"
    root = tmp_path / "logs"
    shutil.copytree(logs / "torchrun", root / "torchrun")
    (root / "pyspy").mkdir()
    for rank, dump in {0: 2, 1: 1, 2: 0, 3: 3}.items():
        shutil.copy(logs / "pyspy" / f"rank{dump}.txt", root / "pyspy" / f"rank{rank}.txt")
    analysis = analyze(root)
    stacks = finding(analysis, "stuck_location")
    assert stacks.ranks == [0]
    assert analysis.verdict.finding.kind == "stage_divergence" and analysis.verdict.ranks == [2]
    assert stacks not in analysis.verdict.chain and stacks not in analysis.verdict.independent
    assert "single out rank 0 instead" in analysis.verdict.reason
    assert "read both" in stacks.note
    assert analysis.verdict.finding.confidence == "medium"


def test_a_job_wide_failure_the_clocks_put_after_a_departure_does_not_explain_it(tmp_path):
    # modelscope/ms-swift#10183, verbatim: DETAIL's mismatch on rank 2 in DDP's buffer
    # broadcast, then, a second later, NCCL's socket return codes of two processes as the job
    # went down: they follow the mismatch, they do not explain it
    detail = (
        "2026-09-17 13:40:02 [rank2]: RuntimeError: Detected mismatch between collectives on "
        "ranks. Rank 2 is running collective: CollectiveFingerPrint(SequenceNumber=8372, "
        "OpType=BROADCAST, TensorShape=[24084544], TensorDtypes=Float, TensorDeviceTypes="
        "TensorOptions(dtype=float (default), device=cuda, layout=Strided (default), "
        "requires_grad=false (default), pinned_memory=false (default), memory_format=(nullopt)))"
        ", but Rank 0 is running collective: CollectiveFingerPrint(SequenceNumber=8372, "
        "OpType=BROADCAST, TensorShape=[64], TensorDtypes=Float, TensorDeviceTypes="
        "TensorOptions(dtype=float (default), device=cuda, layout=Strided (default), "
        "requires_grad=false (default), pinned_memory=false (default), memory_format=(nullopt)))"
        ".Collectives differ in the following aspects:   Tensor Tensor shapes: 24084544vs 64"
    )
    chains = [
        "2026-09-17 13:40:03 standalone-q1xmje-13716191-worker-0:229:558816 [3] NCCL INFO misc/socket.cc:81 -> 3",
        "2026-09-17 13:40:03 standalone-q1xmje-13716191-worker-0:228:277 [2] NCCL INFO misc/socket.cc:943 -> 3",
        "2026-09-17 13:40:03 standalone-q1xmje-13716191-worker-0:229:558816 [3] NCCL INFO misc/socket.cc:868 -> 3",
        "2026-09-17 13:40:03 standalone-q1xmje-13716191-worker-0:228:558817 [2] NCCL INFO misc/socket.cc:64 -> 3",
    ]
    analysis = analyze(write_logs(tmp_path, {"output.log": [detail, *chains]}))
    assert analysis.verdict.finding.kind == "collective_mismatch"
    nccl = finding(analysis, "nccl_error")
    assert nccl.role == "symptom" and "by the logs' clocks" in nccl.note
    assert analysis.verdict.independent == ()


def test_with_nothing_else_to_order_them_the_failure_printed_first_in_one_console_is_first(
    tmp_path,
):
    # huggingface/optimum-habana#1426: rank 6's graph-compile failure (its traceback's head cut
    # off by the thread's window), then rank 2's, raised inside the all-gather rank 6 left
    console = (THREADS / "optimum_habana1426_rank6_first.log").read_text().splitlines()
    analysis = analyze(write_logs(tmp_path, {"console.log": console}))
    assert (analysis.verdict.finding.kind, analysis.verdict.ranks) == ("rank_exception", [6])
    assert [f.ranks for f in analysis.findings if f.kind == "rank_exception"] == [[6], [2]]


def test_a_departure_whose_own_line_says_why_is_not_called_unexplained():
    # sample_logs/skip_backward_hang: rank 2 logs `non-finite loss=nan -> skipping batch` as it
    # skips; the headline reads it, and the reason must not say nothing does
    verdict = analyze(SAMPLE_LOGS / "skip_backward_hang" / "logs").verdict
    assert verdict.headline.startswith("Rank 2 skipped part of step 5 after a NaN loss")
    assert "Its own log says why it departed: after a NaN loss." in verdict.reason
    assert "Nothing in the logs says why it departed" not in verdict.reason
