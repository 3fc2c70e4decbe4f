"""A traceback's rank said by the record just above it (logforensics/announced.py)."""

from __future__ import annotations

from pathlib import Path

from tests.builders import analyze_files

THREADS = Path(__file__).resolve().parent / "data" / "threads"


def lines_of(name: str) -> list[str]:
    return (THREADS / name).read_text().splitlines()


def test_a_logged_exception_naming_its_rank_id_is_that_rank_s(tmp_path):
    # InternLM/InternLM#290: `ERROR ... Raise exception from <host> with rank id: 2`, then the
    # traceback, in a console four ranks share with no prefixes
    analysis = analyze_files(tmp_path, {"train.log": lines_of("internlm290_rank_id_exception.log")})
    assert (analysis.verdict.finding.kind, analysis.verdict.ranks) == ("rank_exception", [2])
    assert analysis.verdict.headline.startswith("Rank 2")


def test_a_record_saying_the_rank_failed_names_the_traceback_after_it(tmp_path):
    # Ascend/pytorch#54: lmdeploy's `Rank[2] failed.` over rank 2's traceback
    analysis = analyze_files(
        tmp_path, {"serve.log": lines_of("ascend_pytorch54_lmdeploy_rank_failed.log")}
    )
    exception = analysis.job.events.filter(event="exception").row(0, named=True)
    assert exception["rank"] == 2 and exception["exc_type"] == "RuntimeError"


def test_the_named_rank_is_the_traceback_s_alone(tmp_path):
    # the console's other lines (another rank's progress) keep no rank of the record's
    lines = lines_of("internlm290_rank_id_exception.log")
    others = ["2023-09-07 08:44:30,001 INFO train.py:270 in main -- step=11 loss=1.52"] * 3
    analysis = analyze_files(tmp_path, {"train.log": others + lines})
    ranked = analysis.job.events.filter(rank=2)
    assert set(ranked.get_column("event").to_list()) == {"exception"}


# mlcommons/training_results_v3.0#5, verbatim: Open MPI's UCX layer on the process that could
# not reach rank 1, then that process's own traceback (two nodes, MPI launch, no rank prefix)
UCX_PEER = [
    "[hpci5201:103648] pml_ucx.c:419  Error: ucp_ep_create(proc=1) failed: Endpoint timeout",
    "[hpci5201:103648] pml_ucx.c:472  Error: Failed to resolve UCX endpoint for rank 1",
    "Traceback (most recent call last):",
    '  File "/dev/shm/data/hugectl/train.py", line 344, in <module>',
    "    model = hugectr.Model(solver, reader, optimizer)",
    "RuntimeError: Runtime error: MPI_ERR_OTHER: known error not in list",
]


def test_a_rank_the_error_above_names_as_the_other_end_is_not_the_tracebacks(tmp_path):
    analysis = analyze_files(tmp_path, {"train.log": UCX_PEER})
    exception = analysis.job.events.filter(event="exception").row(0, named=True)
    assert exception["rank"] is None
    assert analysis.verdict.ranks == []
