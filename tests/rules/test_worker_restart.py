"""A console holding several attempts of a torchrun job (logforensics/attempts.py and the
worker_restart rule): the findings come from the last attempt, the earlier one's failure is
quoted as context. Lines from a run here (sample_logs/restart_recovered/logs/launcher.log,
torch 2.13.0+cpu, `torchrun --max-restarts=1 --tee 3`)."""

from __future__ import annotations

from tests.builders import analyze_files, finding, kinds
from tests.conftest import SAMPLE_LOGS

CONSOLE = (SAMPLE_LOGS / "restart_recovered" / "logs" / "launcher.log").read_text().splitlines()
RESTART = next(n for n, line in enumerate(CONSOLE) if "will restart worker group" in line)
# rank 1's traceback of the first attempt, from its first line to its ValueError
TRACEBACK_START = CONSOLE.index("[default1]:[rank1]: Traceback (most recent call last):")
TRACEBACK = CONSOLE[TRACEBACK_START : TRACEBACK_START + 17]


def test_a_failure_before_the_restart_is_context_when_the_next_attempt_finished(tmp_path):
    analysis = analyze_files(tmp_path, {"launcher.log": CONSOLE})
    assert analysis.verdict is None
    assert not [f for f in analysis.findings if f.severity == "error"]
    restart = finding(analysis, "worker_restart")
    assert restart.ranks == [1] and restart.severity == "warning"
    quoted = [evidence.text for evidence in restart.evidence]
    assert quoted[0].endswith("ValueError: label out of range in batch: max |y| = 1000000000.0")
    assert "will restart worker group" in quoted[-1]


def test_a_failure_that_recurs_after_the_restart_is_the_verdict(tmp_path):
    # the first attempt up to its restart, then the same failure again in the second
    lines = CONSOLE[: RESTART + 1] + TRACEBACK
    analysis = analyze_files(tmp_path, {"launcher.log": lines})
    verdict = analysis.verdict.finding
    assert verdict.kind == "rank_exception" and verdict.ranks == [1]
    assert all(evidence.line > RESTART + 1 for evidence in verdict.evidence)
    assert "worker_restart" in kinds(analysis)


def test_without_a_restart_line_the_same_failure_is_the_verdict(tmp_path):
    lines = CONSOLE[:RESTART]
    analysis = analyze_files(tmp_path, {"launcher.log": lines})
    assert analysis.verdict.finding.ranks == [1]
    assert "worker_restart" not in kinds(analysis)


def test_with_two_restarts_the_failure_quoted_is_the_attempt_s_just_before_the_last(tmp_path):
    # the fault recurs on the second attempt, the third finishes
    lines = CONSOLE[: RESTART + 1] + TRACEBACK + [CONSOLE[RESTART]] + CONSOLE[RESTART + 1 :]
    analysis = analyze_files(tmp_path, {"launcher.log": lines})
    assert analysis.verdict is None
    (restart,) = [f for f in analysis.findings if f.kind == "worker_restart"]
    second_attempt = range(RESTART + 2, RESTART + 2 + len(TRACEBACK))
    assert restart.evidence[0].line in second_attempt
    assert restart.evidence[-1].line == RESTART + 2 + len(TRACEBACK)


def test_consoles_of_several_nodes_restarted_make_one_finding(tmp_path):
    analysis = analyze_files(tmp_path, {"node0.log": CONSOLE, "node1.log": CONSOLE})
    (restart,) = [f for f in analysis.findings if f.kind == "worker_restart"]
    assert "and in 1 other console)" in restart.summary
    assert analysis.verdict is None


def test_a_next_attempt_cut_where_it_forms_its_group_leaves_the_earlier_one_the_news(tmp_path):
    # tianweiy/CenterPoint#224, verbatim: after torchrun's restart, the next attempt's
    # traceback ends at the call that forms the process group, its exception line cut
    forming = [
        "Traceback (most recent call last):",
        '  File "./tools/train.py", line 137, in <module>',
        "    main()",
        '  File "./tools/train.py", line 86, in main',
        '    torch.distributed.init_process_group(backend="nccl", init_method="env://")',
    ]
    lines = CONSOLE[: RESTART + 1] + forming
    verdict = analyze_files(tmp_path, {"launcher.log": lines}).verdict
    assert (verdict.finding.kind, verdict.ranks) == ("rank_exception", [1])
    assert "label out of range" in verdict.finding.summary


# ylanglbw/Doc2EDAG#24, verbatim: a single-node, four-worker torchrun console that shows only
# the agent restarting its workers and starting attempt 1; nothing of attempt 0 is in the paste
RESTART_ALONE = [
    "INFO:torch.distributed.elastic.agent.server.api:[default] Worker group FAILED. 3/3 attempts left; will restart worker group",
    "INFO:torch.distributed.elastic.agent.server.api:[default] Stopping worker group",
    "INFO:torch.distributed.elastic.agent.server.api:[default] Rendezvous'ing worker group",
    "INFO:torch.distributed.elastic.agent.server.api:[default] Rendezvous complete for workers. Result:",
    "  restart_count=1",
    "  master_addr=127.0.0.1",
    "  master_port=29500",
    "  group_rank=0",
    "  group_world_size=1",
    "  local_ranks=[0, 1, 2, 3]",
    "  role_ranks=[0, 1, 2, 3]",
    "  global_ranks=[0, 1, 2, 3]",
    "  role_world_sizes=[4, 4, 4, 4]",
    "  global_world_sizes=[4, 4, 4, 4]",
    "",
    "INFO:torch.distributed.elastic.agent.server.api:[default] Starting worker group",
    "INFO:torch.distributed.elastic.multiprocessing:Setting worker0 reply file to: /tmp/torchelastic_kh8gjpdz/none_12bm0xei/attempt_1/0/error.json",
    "INFO:torch.distributed.elastic.multiprocessing:Setting worker1 reply file to: /tmp/torchelastic_kh8gjpdz/none_12bm0xei/attempt_1/1/error.json",
    "INFO:torch.distributed.elastic.multiprocessing:Setting worker2 reply file to: /tmp/torchelastic_kh8gjpdz/none_12bm0xei/attempt_1/2/error.json",
    "INFO:torch.distributed.elastic.multiprocessing:Setting worker3 reply file to: /tmp/torchelastic_kh8gjpdz/none_12bm0xei/attempt_1/3/error.json",
]


def test_a_restart_with_nothing_of_the_failed_attempt_is_the_verdict_as_reported(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": RESTART_ALONE})
    verdict = analysis.verdict
    assert verdict is not None and verdict.finding.kind == "worker_restart"
    assert (verdict.finding.confidence, verdict.ranks) == ("low", [])
    assert "`Worker group FAILED. 3/3 attempts left; will restart worker group`" in (
        verdict.finding.summary
    )
    assert verdict.headline == (
        "The workers failed and the launcher restarted them; the logs do not hold what the "
        "failed attempt died of"
    )
    assert "error.json" in verdict.finding.fix


def test_a_restart_the_next_attempt_went_on_from_is_no_failure_of_its_own(tmp_path):
    # the same restart, then the workers' progress: the attempt after it ran
    lines = [*RESTART_ALONE, *(f"[default{r}]:rank={r} step=0 stage=forward" for r in range(4))]
    analysis = analyze_files(tmp_path, {"console.log": lines})
    assert "worker_restart" not in kinds(analysis)
