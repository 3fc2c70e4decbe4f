from __future__ import annotations

from logforensics.i18n import translate, translate_headline
from tests.builders import analyze_files, finding, marks
from tests.test_i18n import english_runs


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


# Lightning-AI/pytorch-lightning#18221, verbatim: four ranks registered, then rank 0's NCCL lines
# as it set up the first communicator, and the job hung (NCCL_P2P_DISABLE=1 helped)
FIRST_COMMUNICATOR_HUNG = [
    "(metal) user2@dell:~/metal$ NCCL_DEBUG=info python pretrain_gs_recon_linkers.py",
    "train_dataset:321843,test_dataset:3251",
    "Using 16bit Automatic Mixed Precision (AMP)",
    "GPU available: True (cuda), used: True",
    "TPU available: False, using: 0 TPU cores",
    "IPU available: False, using: 0 IPUs",
    "HPU available: False, using: 0 HPUs",
    "Initializing distributed: GLOBAL_RANK: 0, MEMBER: 1/4",
    "train_dataset:321843,test_dataset:3251",
    "train_dataset:321843,test_dataset:3251",
    "train_dataset:321843,test_dataset:3251",
    "Initializing distributed: GLOBAL_RANK: 3, MEMBER: 4/4",
    "Initializing distributed: GLOBAL_RANK: 2, MEMBER: 3/4",
    "Initializing distributed: GLOBAL_RANK: 1, MEMBER: 2/4",
    "----------------------------------------------------------------------------------------------------",
    "distributed_backend=nccl",
    "All distributed processes registered. Starting with 4 processes",
    "----------------------------------------------------------------------------------------------------",
    "",
    "dell:2942883:2942883 [0] NCCL INFO Bootstrap : Using ens111f0:10.176.42.153<0>",
    "dell:2942883:2942883 [0] NCCL INFO NET/Plugin : No plugin found (libnccl-net.so), using internal implementation",
    "dell:2942883:2942883 [0] NCCL INFO cudaDriverVersion 12000",
    "NCCL version 2.14.3+cuda11.8",
    "dell:2942883:2943186 [0] NCCL INFO Failed to open libibverbs.so[.1]",
]


def test_a_job_whose_logs_end_in_its_first_communicator_s_set_up_hung_there(tmp_path):
    verdict = analyze_files(tmp_path, {"console.log": FIRST_COMMUNICATOR_HUNG}).verdict
    assert verdict.finding.kind == "last_common_stage"
    assert verdict.headline == (
        "All 4 ranks hung creating their first NCCL communicator; the logs end in NCCL's set-up "
        "with no error"
    )
    assert "NCCL_P2P_DISABLE=1" in verdict.finding.fix
    for english in (verdict.finding.summary, verdict.finding.fix):
        assert english_runs(translate(english, "zh")) == []
    assert english_runs(translate_headline(verdict.headline, "zh")) == []


def test_a_communicator_that_completed_is_no_hang_in_its_set_up(tmp_path):
    # a communicator's completion as NCCL prints it (NVIDIA/nccl#629, verbatim)
    completed = [
        *FIRST_COMMUNICATOR_HUNG,
        "A03-R28-I49-3-9000018:193027:193119 [7] NCCL INFO comm 0x7fdf08000d00 rank 15 nranks 16 cudaDev 7 busId e7000 - Init COMPLETE",
    ]
    analysis = analyze_files(tmp_path, {"console.log": completed})
    assert not any(f.details.get("first_communicator") for f in analysis.findings)
