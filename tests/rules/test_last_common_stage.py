from __future__ import annotations

from tests.builders import analyze_files, finding, marks


def test_names_the_last_point_all_reached_and_who_went_further(tmp_path):
    files = {f"rank{r}.log": marks(r, range(6)) for r in (0, 1)}
    files["rank2.log"] = marks(2, range(6), stop_after=(3, "after_backward"))
    common = finding(analyze_files(tmp_path, files), "last_common_stage")
    assert (common.step, common.stage, common.ranks) == (3, "after_backward", [2])
    assert common.details["ranks_further"] == [0, 1]
    assert common.role == "context" and common.severity == "info"


def test_absent_without_stage_marks(tmp_path):
    analysis = analyze_files(
        tmp_path, {"rank0.log": ["{'rank': 0, 'local_rank': 0, 'device': 0, 'world_size': 1}"]}
    )
    assert analysis.findings == []


# deepspeedai/DeepSpeed#7044, verbatim: each rank prints a milestone naming itself
AFTER_BROADCAST = [f"Rank {rank}: After broadcast" for rank in (1, 4, 0, 3, 6, 5, 2, 7)]


def test_a_milestone_is_said_without_a_step_it_never_had(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": AFTER_BROADCAST})
    common = finding(analysis, "last_common_stage")
    assert common.stage == "After broadcast"  # the rank it names is who printed it
    assert common.step is None
    assert "step" not in common.summary
    assert common.summary == "Every rank reached `After broadcast` and no rank got further."


def test_one_ranks_progress_is_not_said_of_every_rank(tmp_path):
    # pytorch/torchtitan#1287 (a control): only rank 0's progress was in the paste
    files = {"rank0.log": marks(0, range(3))}
    common = finding(analyze_files(tmp_path, files), "last_common_stage")
    assert common.summary.startswith("Only rank 0 printed progress here; its last was step 2")
    assert "Every rank" not in common.summary


def test_every_rank_means_every_rank_that_printed_progress(tmp_path):
    files = {f"rank{r}.log": marks(r, range(3)) for r in (0, 1)}
    files["rank2.log"] = ["rank=2 world_size=4 local_rank=2"]
    common = finding(analyze_files(tmp_path, files), "last_common_stage")
    assert common.summary.startswith("Every rank that printed progress (2 of ")


def test_the_last_shared_point_is_found_far_below_where_the_ranks_stopped(tmp_path):
    # rank 0 jumped from step 1 to step 200 and ran on; rank 1 ran steps 0-150 and stopped:
    # the last point both printed is step 1, hundreds of marks below either one's end
    files = {
        "rank0.log": marks(0, [0, 1, *range(200, 260)]),
        "rank1.log": marks(1, range(151)),
    }
    common = finding(analyze_files(tmp_path, files), "last_common_stage")
    assert (common.step, common.stage) == (1, "after_step")
    assert common.details["ranks_further"] == [0, 1]
