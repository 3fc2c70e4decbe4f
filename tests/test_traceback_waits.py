"""Where the ranks' own tracebacks left them (logforensics/traceback_waits.py, reported by
rules/stage_divergence.py). The logs are real torchrun runs here (tests/data/launchers)."""

from __future__ import annotations

from pathlib import Path

from tests.builders import analyze, analyze_files

TORCHRUN = Path(__file__).parent / "data" / "launchers" / "torchrun"
INTERRUPTED = TORCHRUN / "interrupted"
BARRIER_APART = TORCHRUN / "barrier_apart"


def test_the_rank_interrupted_outside_a_collective_is_the_one_the_others_waited_for():
    # rank 1 blocked reading its batch, ranks 0 and 2 in all_reduce, then Ctrl-C
    analysis = analyze(INTERRUPTED)
    stuck = analysis.verdict.finding
    assert (stuck.kind, stuck.ranks, stuck.part) == ("stage_divergence", [1], "departure")
    assert stuck.details["departure"] == "interrupted_elsewhere"
    assert "load_batch (hang_worker.py:14)" in stuck.summary
    assert "`time.sleep(3600)  # a read that never returns`" in stuck.summary
    assert "all_reduce at main (hang_worker.py:23): `dist.all_reduce(total)`" in stuck.summary
    assert [(item.line, item.rank) for item in stuck.evidence] == [(27, 1), (45, 0)]
    assert analysis.verdict.headline.startswith(
        "Rank 1 was outside any collective when the job was interrupted"
    )
    # gloo's lost connections on ranks 0 and 2 are the Ctrl-C's echo: rank 1 exited first
    assert not [f for f in analysis.findings if f.kind == "peer_lost"]


def test_ranks_all_interrupted_in_collectives_single_out_none(tmp_path):
    lines = (INTERRUPTED / "console.log").read_text().splitlines()
    others_only = [line for line in lines if not line.startswith("[rank1]:")]
    analysis = analyze_files(tmp_path, {"console.log": others_only})
    assert not [f for f in analysis.findings if f.details.get("departure", "").endswith("where")]
    assert analysis.verdict is None or analysis.verdict.ranks != [1]


def test_the_rank_whose_timeout_is_in_another_collective_left_the_others_path():
    # rank 1 broke out of its loop into the final barrier; ranks 0 and 2 in all_reduce
    analysis = analyze(BARRIER_APART)
    apart = analysis.verdict.finding
    assert (apart.kind, apart.ranks) == ("stage_divergence", [1])
    assert apart.details["ops"] == {"0": "all_reduce", "1": "barrier", "2": "all_reduce"}
    assert "rank 1 in barrier at main (break_worker.py:21): `dist.barrier()`" in apart.summary
    assert analysis.verdict.headline.startswith(
        "Rank 1 ran barrier where the others ran all_reduce"
    )


def test_two_ranks_in_two_collectives_single_out_neither(tmp_path):
    lines = (BARRIER_APART / "console.log").read_text().splitlines()
    two = [line for line in lines if not line.startswith("[rank2]:")]
    analysis = analyze_files(tmp_path, {"console.log": two})
    assert not [f for f in analysis.findings if f.details.get("departure") == "other_collective"]


HEALTHY = TORCHRUN / "interrupted_healthy"


def test_a_healthy_job_stopped_with_ctrl_c_is_no_failure():
    # runs here: a training job stopped at a random moment; one rank in its forward pass while
    # the others were in backward's all-reduce, and one whose excepthook was interrupted too
    for case in ("forward_and_backward", "excepthook"):
        analysis = analyze(HEALTHY / case)
        assert analysis.verdict is None, (case, analysis.verdict.headline)
        assert not [f for f in analysis.findings if f.severity == "error"], case


WATCHDOG = TORCHRUN / "watchdog_stacks"


def test_the_rank_a_watchdog_dump_shows_outside_a_collective_is_the_one_the_others_waited_for():
    # a run here: faulthandler.dump_traceback_later(8) on every rank; rank 1 sleeps in
    # load_batch at step 4, ranks 0 and 2 wait in all_reduce, then time out after 20 s
    analysis = analyze(WATCHDOG)
    assert analysis.unrecognised_lines == 0
    odd = analysis.verdict.finding
    assert (odd.kind, odd.ranks, odd.confidence) == ("stage_divergence", [1], "medium")
    assert odd.details["departure"] == "interrupted_elsewhere"
    assert odd.details["snapshot"] == "faulthandler"
    assert odd.summary.startswith("When faulthandler's watchdog dumped the stacks, rank 1 stood")
    assert "load_batch (watchdog_worker.py:19)" in odd.summary
    assert analysis.verdict.headline.startswith(
        "Rank 1 was outside any collective when its stack was dumped, in load_batch"
    )


def test_a_watchdog_dump_of_a_job_whose_waits_never_failed_is_no_failure():
    # the same job without the hang: the watchdog fires mid-run, every rank in its loop
    analysis = analyze(TORCHRUN / "watchdog_stacks_healthy")
    assert analysis.unrecognised_lines == 0
    assert analysis.verdict is None


def test_a_watchdog_dump_alone_without_failed_waits_blames_nobody(tmp_path):
    # the hung run's console cut before the timeouts: a snapshot, and no wait failed after it
    lines = (WATCHDOG / "console.log").read_text().splitlines()
    cut = next(i for i, line in enumerate(lines) if "Traceback (most recent call last)" in line)
    analysis = analyze_files(tmp_path, {"console.log": lines[:cut]})
    assert not [f for f in analysis.findings if f.details.get("snapshot")]
