from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.nccl_job import JobPlan, write_job
from logforensics.api import analyze
from logforensics.i18n import translate, translate_headline
from tests.builders import analyze_files, finding, kinds, marks
from tests.test_i18n import english_runs

NCCL_DATA = Path(__file__).resolve().parent.parent / "data" / "nccl"


def mapping(rank: int, local_rank: int, device: int, host: str | None = None) -> str:
    host_part = f", 'host': '{host}'" if host else ""
    return (
        f"{{'rank': {rank}, 'local_rank': {local_rank}, 'device': {device}, "
        f"'world_size': 4{host_part}}}"
    )


def init_line(
    host: str,
    pid: int,
    rank: int,
    nranks: int,
    cuda_dev: int,
    bus: str,
    phase: str = "COMPLETE",
    comm_id: str = "0x5ae77eb5ea4ec1ee",
) -> str:
    """An NCCL 2.18.3+ init record, shaped like NVIDIA/nccl#1814's verbatim line:
    `hostname-test:984:1257 [4] NCCL INFO comm 0x557fe785f7a0 rank 36 nranks 64 cudaDev 4
    nvmlDev 4 busId 9b000 commId 0x5ae77eb5ea4ec1ee - Init COMPLETE`."""
    return (
        f"{host}:{pid}:{pid + 273} [{cuda_dev}] NCCL INFO comm 0x{0x557FE7850000 + pid:x} rank "
        f"{rank} nranks {nranks} cudaDev {cuda_dev} nvmlDev {cuda_dev} busId {bus} commId "
        f"{comm_id} - Init {phase}"
    )


BUSES = ("18000", "2a000", "3a000", "5d000")


def test_two_ranks_on_one_device_of_one_host(tmp_path):
    files = {f"rank{r}.log": [mapping(r, r, r % 3, "node-a")] for r in range(4)}
    duplicate = finding(analyze_files(tmp_path, files), "duplicate_device")
    assert duplicate.ranks == [0, 3] and duplicate.severity == "error"
    assert "LOCAL_RANK" in duplicate.fix


def test_same_ordinal_on_different_hosts_is_fine(tmp_path):
    files = {f"rank{r}.log": [mapping(r, r % 2, r % 2, f"node-{r // 2}")] for r in range(4)}
    assert "duplicate_device" not in kinds(analyze_files(tmp_path, files))


def test_without_host_nodes_are_told_apart_by_local_rank(tmp_path):
    files = {f"rank{r}.log": [mapping(r, r % 2, r % 2)] for r in range(4)}
    assert "duplicate_device" not in kinds(analyze_files(tmp_path, files))
    files = {f"rank{r}.log": [mapping(r, r, 0 if r < 2 else r)] for r in range(4)}
    assert finding(analyze_files(tmp_path / "x", files), "duplicate_device").ranks == [0, 1]


# --- NCCL ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "case", ["horovod-3929-duplicate-gpu-mpirun", "megatron-661-duplicate-gpu-barrier"]
)
def test_field_samples_are_diagnosed_as_their_truth_says(case):
    truth = json.loads((NCCL_DATA / case / "truth.json").read_text())
    analysis = analyze(NCCL_DATA / case)
    duplicates = [f for f in analysis.findings if f.kind == "duplicate_device"]
    wanted = [item for item in truth["findings"] if item["kind"] == "duplicate_device"]
    assert wanted and duplicates
    for item in wanted:
        # NCCL prints one pair per affected rank; the finding names every rank on the GPU.
        covering = [f for f in duplicates if set(item["ranks"]) <= set(f.ranks)]
        assert covering, (item["ranks"], [f.ranks for f in duplicates])
        assert any(item["evidence"] in e.text for f in covering for e in f.evidence)
    assert analysis.verdict.finding.kind == "duplicate_device"
    assert all(f.severity == "error" for f in duplicates)


def test_horovod_pairs_are_one_gpu_of_one_host():
    analysis = analyze(NCCL_DATA / "horovod-3929-duplicate-gpu-mpirun")
    duplicate = finding(analysis, "duplicate_device")
    assert duplicate.ranks == [0, 1, 2, 4, 5]
    assert duplicate.details == {"bus_id": "1000", "host": "smc-gpu-03", "source": "nccl"}
    assert "smc-gpu-03" in duplicate.summary and "1000" in duplicate.summary


def test_init_records_on_one_bus_of_one_host(tmp_path):
    lines = [init_line("node-a", 100 + r, r, 4, r, BUSES[r]) for r in range(4)]
    lines[3] = init_line("node-a", 103, 3, 4, 1, BUSES[1])  # rank 3 set the device of local 1
    analysis = analyze_files(tmp_path, {"nccl.log": lines})
    duplicate = finding(analysis, "duplicate_device")
    assert duplicate.ranks == [1, 3]
    assert [e.line for e in duplicate.evidence] == [2, 4]
    assert duplicate.details["host"] == "node-a" and duplicate.details["bus_id"] == "2a000"
    assert analysis.verdict.finding is duplicate


def test_cuda_dev_0_everywhere_is_not_a_duplicate(tmp_path):
    # CUDA_VISIBLE_DEVICES narrowed per process: every process sees its GPU as device 0
    lines = [init_line("node-a", 100 + r, r, 4, 0, BUSES[r]) for r in range(4)]
    assert "duplicate_device" not in kinds(analyze_files(tmp_path, {"nccl.log": lines}))


def test_the_same_bus_on_two_hosts_is_two_gpus(tmp_path):
    lines = [init_line(f"node-{r // 2}", 100 + r, r, 4, r % 2, BUSES[r % 2]) for r in range(4)]
    assert "duplicate_device" not in kinds(analyze_files(tmp_path, {"nccl.log": lines}))


def test_a_restarted_process_on_the_same_gpu_is_not_a_duplicate(tmp_path):
    first = [init_line("node-a", 100 + r, r, 2, r, BUSES[r]) for r in range(2)]
    again = [init_line("node-a", 200 + r, r, 2, r, BUSES[r], comm_id="0x11") for r in range(2)]
    assert "duplicate_device" not in kinds(analyze_files(tmp_path, {"nccl.log": first + again}))


def test_nccl_2_4_records_compare_nvml_devices(tmp_path):
    # NCCL 2.4.8 [src]: "comm %p rank %d nranks %d cudaDev %d nvmlDev %d - Init COMPLETE"
    lines = [
        f"node-a:{100 + r}:{100 + r} [0] NCCL INFO comm 0x7f5e3c00{r}f30 rank {r} nranks 3 "
        f"cudaDev 0 nvmlDev {min(r, 1)} - Init COMPLETE"
        for r in range(3)
    ]
    duplicate = finding(analyze_files(tmp_path, {"nccl.log": lines}), "duplicate_device")
    assert duplicate.ranks == [1, 2] and duplicate.details["bus_id"] == "nvmlDev 1"


def test_nccl_2_30_warning_without_ranks_joins_the_init_records(tmp_path):
    lines = [init_line("node-a", 100 + r, r, 2, 0, "3a000", phase="START") for r in range(2)]
    lines += [
        "",
        # NCCL 2.30.7 [src] src/init.cc
        "node-a:101:374 [0] init.cc:1057 NCCL WARN Multiple Ranks are using the same GPU/Partition. Set NCCL_MULTI_RANK_GPU_ENABLE=1 to enable this configuration.",
    ]
    duplicate = finding(analyze_files(tmp_path, {"nccl.log": lines}), "duplicate_device")
    assert duplicate.ranks == [0, 1]
    assert duplicate.evidence[0].line == 4  # NCCL's own word first
    assert "NCCL reported it" in duplicate.summary


def test_nccl_2_30_warning_alone_still_reports_the_host(tmp_path):
    line = "gpu-3:5511:5511 [2] graph/topo.cc:1977 NCCL WARN Multiple ranks detected using the same GPU on this node. Set NCCL_MULTI_RANK_GPU_ENABLE=1 to enable this configuration."
    duplicate = finding(analyze_files(tmp_path, {"nccl.log": [line]}), "duplicate_device")
    assert duplicate.severity == "error" and duplicate.details["host"] == "gpu-3"
    assert duplicate.summary.startswith("Several ranks use one GPU on host gpu-3")


# pytorch/pytorch#68666 (the PR that added PyTorch's own check before NCCL's), its test plan
# verbatim: the error and the first frames of its traceback
TORCH_CHECK = [
    "RuntimeError: Duplicated GPU device is not allowed by NCCL. Rank [0] and rank [8] both attached to GPU device 0 on the same host learngpu001.09.ftw5.facebook.com. Most likely your world_size is larger than the total number of GPUs",
    "Traceback (most recent call last):",
    '  File "/mnt/xarfuse/uid-0/184d8789-seed-nspid4026531836_cgpid11383-ns-4026531840/__run_xar_main__.py", line 309, in <module>',
    "    __invoke_main()",
]


def test_pytorch_s_own_check_names_the_pair_the_device_and_the_host(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": TORCH_CHECK})
    duplicate = analysis.verdict.finding
    assert (duplicate.kind, duplicate.ranks) == ("duplicate_device", [0, 8])
    assert duplicate.details["host"] == "learngpu001.09.ftw5.facebook.com"
    assert "(CUDA device 0)" in duplicate.summary
    assert "PyTorch refused to create the NCCL communicator" in duplicate.summary
    assert english_runs(translate(duplicate.summary, "zh")) == []
    assert analysis.verdict.headline == "Ranks 0 and 8 share one GPU; PyTorch refused to start NCCL"
    # the RuntimeError is the check's own report, no separate failure of a rank
    assert kinds(analysis) == ["duplicate_device"]
    assert english_runs(translate_headline(analysis.verdict.headline, "zh")) == []


def test_sharing_allowed_by_the_environment_is_context(tmp_path):
    lines = [init_line("node-a", 100 + r, r, 2, 0, "3a000") for r in range(2)]
    lines.append(
        "node-a:100:373 [0] NCCL INFO Multiple ranks on the same GPU detected and allowed. Disabling NVLS."
    )
    duplicate = finding(analyze_files(tmp_path, {"nccl.log": lines}), "duplicate_device")
    assert (duplicate.severity, duplicate.role) == ("warning", "context")
    assert "NCCL_MULTI_RANK_GPU_ENABLE" in duplicate.summary


def test_nccl_overrules_a_device_print_of_per_process_ordinals(tmp_path):
    files = {
        f"rank{r}.log": [
            mapping(r, r, 0, "node-a"),
            init_line("node-a", 100 + r, r, 4, 0, BUSES[r]),
        ]
        for r in range(4)
    }
    assert "duplicate_device" not in kinds(analyze_files(tmp_path, files))


def test_synthetic_job_with_a_planted_duplicate(tmp_path):
    written = write_job(
        tmp_path, JobPlan(nodes=8, channels=4, duplicate=(3, 1, 6), ib_failure=None)
    )
    analysis = analyze(tmp_path)
    duplicate = finding(analysis, "duplicate_device")
    assert duplicate.ranks == written.duplicate_ranks == [25, 30]
    assert duplicate.details["host"] == written.duplicate_host
    assert duplicate.details["bus_id"] == written.duplicate_bus
    assert analysis.verdict.finding is duplicate
    assert len([f for f in analysis.findings if f.kind == "duplicate_device"]) == 1


def abort_line(host: str, pid: int, rank: int, nranks: int, cuda_dev: int, bus: str) -> str:
    """An NCCL teardown record, shaped like formats.md §2.5's verbatim line (pytorch/pytorch
    #22834): `dlciwpwqw7kd1h3y-master-0:301:315 [3] NCCL INFO comm 0x12fd4c240 rank 3 nranks 4
    cudaDev 3 busId 70 - Abort COMPLETE`."""
    return (
        f"{host}:{pid}:{pid + 14} [{cuda_dev}] NCCL INFO comm 0x{0x12FD4C000 + pid:x} rank {rank} "
        f"nranks {nranks} cudaDev {cuda_dev} busId {bus} - Abort COMPLETE"
    )


def test_abort_records_on_one_bus_of_one_host(tmp_path):
    # an excerpt holding only the teardown: two processes aborted the same GPU's communicator
    lines = [
        abort_line("node-a", 301, 0, 2, 0, "86000"),
        abort_line("node-a", 302, 1, 2, 0, "86000"),
    ]
    duplicate = finding(analyze_files(tmp_path, {"nccl.log": lines}), "duplicate_device")
    assert duplicate.ranks == [0, 1] and duplicate.details["bus_id"] == "86000"
    assert "communicator records" in duplicate.summary


def test_abort_records_on_distinct_buses_are_fine(tmp_path):
    # NVIDIA/Fuser#3055 (verbatim): two processes of one host, each on its own GPU
    lines = [
        "dgx1v-loki-23:5890:6275 [0] NCCL INFO comm 0x7f00faaa5c00 rank 0 nranks 4 cudaDev 0 busId 6000 - Abort COMPLETE",
        "dgx1v-loki-23:5893:6277 [3] NCCL INFO comm 0x7fe3d6f51880 rank 3 nranks 4 cudaDev 3 busId b000 - Abort COMPLETE",
    ]
    assert "duplicate_device" not in kinds(analyze_files(tmp_path, {"nccl.log": lines}))


def test_local_ranks_no_node_layout_explains_are_a_shared_device(tmp_path):
    # the mapping print of sample_logs/duplicate_device (a run here), with the local ranks a
    # wrong LOCAL_RANK computation gives in a 3-rank job: {0, 1, 1}
    files = {
        f"rank{rank}.log": [
            f"{{'rank': {rank}, 'local_rank': {local}, 'device': {rank}, 'world_size': 3}}"
        ]
        + marks(rank, range(3))
        for rank, local in ((0, 0), (1, 1), (2, 1))
    }
    found = [f for f in analyze_files(tmp_path, files).findings if f.kind == "duplicate_device"]
    assert len(found) == 1 and found[0].ranks == [1, 2]
    assert found[0].severity == "warning" and "no node layout explains" in found[0].summary
    assert "No host is printed" in found[0].summary


def test_local_ranks_two_nodes_explain_are_fine(tmp_path):
    files = {
        f"rank{rank}.log": [
            f"{{'rank': {rank}, 'local_rank': {rank % 2}, 'device': {rank % 2}, 'world_size': 4}}"
        ]
        + marks(rank, range(3))
        for rank in range(4)
    }
    assert "duplicate_device" not in kinds(analyze_files(tmp_path, files))


# huggingface/accelerate#2246, verbatim: four processes on a two-GPU node, two pairs
TWO_PAIRS = [
    "qgpu2018:59522:59993 [0] init.cc:795 NCCL WARN Duplicate GPU detected : rank 6 and rank 4 "
    "both on CUDA device 31000",
    "qgpu2018:59524:59995 [1] init.cc:795 NCCL WARN Duplicate GPU detected : rank 7 and rank 5 "
    "both on CUDA device 4b000",
    "qgpu2018:59525:59994 [1] init.cc:795 NCCL WARN Duplicate GPU detected : rank 5 and rank 7 "
    "both on CUDA device 4b000",
    "qgpu2018:59523:59996 [0] init.cc:795 NCCL WARN Duplicate GPU detected : rank 4 and rank 6 "
    "both on CUDA device 31000",
]


def test_gpus_shared_on_one_host_are_one_finding(tmp_path):
    analysis = analyze_files(tmp_path, {"node1.log": TWO_PAIRS})
    shared = [f for f in analysis.findings if f.kind == "duplicate_device"]
    assert len(shared) == 1 and shared[0].ranks == [4, 5, 6, 7]
    assert sorted(shared[0].details["bus_ids"]) == ["31000", "4b000"]
    assert analysis.verdict.headline.startswith("Ranks 4-7 share 2 GPUs of one host")


def test_the_prints_of_every_rank_on_one_gpu_take_in_nccl_s_pair(tmp_path):
    # facebookresearch/ViewDiff#24 (tests/data/threads): four processes' Accelerate state on
    # cuda:0, NCCL's `Duplicate GPU detected : rank 0 and rank 1`: one finding of all four
    log = Path(__file__).parents[1] / "data" / "threads" / "viewdiff24_four_processes_one_gpu.log"
    analysis = analyze_files(
        tmp_path, {"console.log": log.read_text(encoding="utf-8").splitlines()}
    )
    shared = [f for f in analysis.findings if f.kind == "duplicate_device"]
    assert [f.ranks for f in shared] == [[0, 1, 2, 3]]
    assert analysis.verdict.ranks == [0, 1, 2, 3] and shared[0].confidence == "high"
    assert "NCCL found ranks 0 and 1 among them" in shared[0].summary
    assert "Duplicate GPU detected" in shared[0].evidence[0].text
