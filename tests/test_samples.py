"""End to end on the shipped sample logs (real torchrun + gloo runs): each scenario's
expected.json says what a user must be told (for an upload of several jobs, per job)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from logforensics.api import Analysis, analyze_upload
from logforensics.dumps.pyspy import where_stuck
from logforensics.registry import diagnosis
from tests.conftest import SAMPLE_LOGS

SCENARIOS = sorted(path.parent for path in SAMPLE_LOGS.glob("*/expected.json"))


def test_there_are_samples():
    assert len(SCENARIOS) >= 4


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda path: path.name)
def test_sample_is_diagnosed_as_expected(scenario: Path):
    expected = json.loads((scenario / "expected.json").read_text())
    upload = analyze_upload(scenario / "logs")
    if "jobs" not in expected:
        assert not upload.several, [job.label for job in upload.jobs]
        check_job(upload.jobs[0], expected)
        return
    assert len(upload.jobs) == len(expected["jobs"]), [job.label for job in upload.jobs]
    for wanted in expected["jobs"]:
        (job,) = [
            job
            for job in upload.jobs
            if any(f"/{wanted['run_id']}/" in f"/{log.name}" for log in job.job.inventory.files)
        ]
        check_job(job, wanted)


def check_job(analysis: Analysis, expected: dict) -> None:
    world = analysis.job.world_size
    assert (world.value if world else None) == expected["world_size"]
    verdict = expected["verdict"]
    if verdict is None:
        assert analysis.verdict is None
    else:
        chosen = analysis.verdict.finding
        # `kind` is the diagnosis the report states; `rule`, where given, the finer fact
        assert (diagnosis(chosen), analysis.verdict.ranks, chosen.step) == (
            verdict["kind"],
            verdict["ranks"],
            verdict["step"],
        )
        assert chosen.kind == verdict.get("rule", chosen.kind)
        assert chosen.evidence, "the verdict must cite lines"
        if "seq" in verdict:
            assert chosen.seq == verdict["seq"]
        if "chain" in verdict:  # explanation -> departure -> consequences, as kinds
            chain = [diagnosis(finding) for finding in analysis.verdict.chain]
            assert chain[: len(verdict["chain"])] == verdict["chain"], chain
    for wanted in expected["findings_include"]:
        matching = [
            f
            for f in analysis.findings
            if diagnosis(f) == wanted["kind"] and f.kind == wanted.get("rule", f.kind)
        ]
        assert matching, f"no {wanted['kind']} finding"
        if "ranks" in wanted:
            assert any(sorted(f.ranks) == sorted(wanted["ranks"]) for f in matching), [
                f.ranks for f in matching
            ]
    errors = [f for f in analysis.findings if f.severity == "error"]
    assert (not errors) == expected["no_error"], [f.summary for f in errors]
    if "stuck" in expected:  # where each rank's main thread stood in its stack dump
        stuck = {
            str(row["rank"]): row["user_frame"]
            for row in where_stuck(analysis.job.dumps.stacks).iter_rows(named=True)
        }
        assert stuck == expected["stuck"]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda path: path.name)
def test_every_evidence_line_is_a_real_line_of_its_file(scenario: Path):
    for analysis in analyze_upload(scenario / "logs").jobs:
        # a Flight Recorder or py-spy JSON dump has no lines: its evidence names the entry
        records = {
            dump.name
            for dump in analysis.job.inventory.dumps
            if dump.kind.endswith(("json", "pickle"))
        }
        for found in analysis.findings:
            for evidence in found.evidence:
                if evidence.file in records:
                    continue
                path = scenario / "logs" / evidence.file
                # lines end at a newline only: a tqdm bar's carriage returns stay inside
                lines = path.read_bytes().decode(errors="replace").split("\n")
                assert lines[evidence.line - 1].removesuffix("\r") == evidence.text


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda path: path.name)
def test_no_line_is_counted_recognised_twice(scenario: Path):
    # the whole folder, its run.sh and README too; a mark that is both its file's last line
    # and a line of the framed batch counts once (a first version of reading tagged marks in
    # the pass counted it for its writer twice: -138 lines not recognised)
    for analysis in analyze_upload(scenario).jobs:
        assert 0 <= analysis.recognised_lines <= analysis.lines - analysis.blank_lines
