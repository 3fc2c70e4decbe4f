# ruff: noqa: E501 -- test data are verbatim log lines
"""Tails of NCCL `Init COMPLETE` records cut by interleaved writes (parsers/nccl_fragments.py)
and the ranks the missing_rank rule then does not call stuck."""

from __future__ import annotations

from tests.builders import analyze_files, parsed_by

# nebius/nebius-solution-library soperator/test/mlperf-sd/results/reference_02x08x08_1720163290.out,
# verbatim (its world communicator's START and COMPLETE lines, in file order): a healthy
# 2 x 8 H100 Lightning run under SLURM whose processes shared one output file; six COMPLETE
# records lost their start to another process's write
WORLD_INIT = [
    "worker-0:19642:20035 [0] NCCL INFO comm 0x558ed3265fa0 rank 0 nranks 16 cudaDev 0 nvmlDev 0 busId 8d000 commId 0x753d166fb39e1659 - Init START",
    "worker-0:19643:20036 [2] NCCL INFO comm 0x55c72683f830 rank 2 nranks 16 cudaDev 2 nvmlDev 2 busId 95000 commId 0x753d166fb39e1659 - Init START",
    "worker-1:19437:19859 [2] NCCL INFO comm 0x5635fc351070 rank 10 nranks 16 cudaDev 2 nvmlDev 2 busId 95000 commId 0x753d166fb39e1659 - Init START",
    "worker-0:19592:20041 [1] NCCL INFO comm 0x5568409743a0 rank 1 nranks 16 cudaDev 1 nvmlDev 1 busId 91000 commId 0x753d166fb39e1659 - Init START",
    "worker-1:19435:19857 [0] NCCL INFO comm 0x5555845fb550 rank 8 nranks 16 cudaDev 0 nvmlDev 0 busId 8d000 commId 0x753d166fb39e1659 - Init START",
    "worker-0:19591:20038 [5] NCCL INFO comm 0x55d74a8ed200 rank 5 nranks 16 cudaDev 5 nvmlDev 5 busId af000 commId 0x753d166fb39e1659 - Init START",
    "worker-1:19401:19858 [1] NCCL INFO comm 0x55945920c340 rank 9 nranks 16 cudaDev 1 nvmlDev 1 busId 91000 commId 0x753d166fb39e1659 - Init START",
    "worker-0:19641:20037 [6] NCCL INFO comm 0x564cf01143f0 rank 6 nranks 16 cudaDev 6 nvmlDev 6 busId b3000 commId 0x753d166fb39e1659 - Init START",
    "worker-1:19433:19855 [6] NCCL INFO comm 0x5638f36447c0 rank 14 nranks 16 cudaDev 6 nvmlDev 6 busId b3000 commId 0x753d166fb39e1659 - Init START",
    "worker-0:19593:20042 [3] NCCL INFO comm 0x55d0e1ef3e70 rank 3 nranks 16 cudaDev 3 nvmlDev 3 busId 99000 commId 0x753d166fb39e1659 - Init START",
    "worker-1:19513:19856 [5] NCCL INFO comm 0x55b59b6ede30 rank 13 nranks 16 cudaDev 5 nvmlDev 5 busId af000 commId 0x753d166fb39e1659 - Init START",
    "worker-0:19640:20039 [4] NCCL INFO comm 0x556e1f7c97c0 rank 4 nranks 16 cudaDev 4 nvmlDev 4 busId ab000 commId 0x753d166fb39e1659 - Init START",
    "worker-1:19402:19853 [3] NCCL INFO comm 0x5648f2420a90 rank 11 nranks 16 cudaDev 3 nvmlDev 3 busId 99000 commId 0x753d166fb39e1659 - Init START",
    "worker-0:19639:20040 [7] NCCL INFO comm 0x56319fd69600 rank 7 nranks 16 cudaDev 7 nvmlDev 7 busId b7000 commId 0x753d166fb39e1659 - Init START",
    "worker-1:19434:19854 [4] NCCL INFO comm 0x559d3654a610 rank 12 nranks 16 cudaDev 4 nvmlDev 4 busId ab000 commId 0x753d166fb39e1659 - Init START",
    "worker-1:19436:19860 [7] NCCL INFO comm 0x55831b79cb50 rank 15 nranks 16 cudaDev 7 nvmlDev 7 busId b7000 commId 0x753d166fb39e1659 - Init START",
    "000 commId 0x753d166fb39e1659 - Init COMPLETE",
    "worker-0:19643:20036 [2] NCCL INFO comm 0x55c72683f830 rank 2 nranks 16 cudaDev 2 nvmlDev 2 busId 95000 commId 0x753d166fb39e1659 - Init COMPLETE",
    "worker-0:19640:20039 [4] NCCL INFO comm 0x556e1f7c97c0 rank 4 nranks 16 cudaDev 4 nvmlDev 4 busId ab000 commId 0x753d166fb39e1659 - Init COMPLETE",
    "worker-0:19593:20042 [3] NCCL INFO comm 0x55d0e1ef3e70 rank 3 nranks 16 cudaDev 3 nvmlDev 3 busId 99000 commId 0x753d166fb39e1659 - Init COMPLETE",
    "859 [2] NCCL INFO comm 0x5635fc351070 rank 10 nranks 16 cudaDev 2 nvmlDev 2 busId 95000 commId 0x753d166fb39e1659 - Init COMPLETE",
    "worker-0:19641:20037 [6] NCCL INFO comm 0x564cf01143f0 rank 6 nranks 16 cudaDev 6 nvmlDev 6 busId b3000 commId 0x753d166fb39e1659 - Init COMPLETE",
    "Dev 7 busId b7000 commId 0x753d166fb39e1659 - Init COMPLETE",
    "worker-0:19592:20041 [1] NCCL INFO comm 0x5568409743a0 rank 1 nranks 16 cudaDev 1 nvmlDev 1 busId 91000 commId 0x753d166fb39e1659 - Init COMPLETE",
    " 12 nranks 16 cudaDev 4 nvmlDev 4 busId ab000 commId 0x753d166fb39e1659 - Init COMPLETE",
    "worker-0:19639:20040 [7] NCCL INFO comm 0x56319fd69600 rank 7 nranks 16 cudaDev 7 nvmlDev 7 busId b7000 commId 0x753d166fb39e1659 - Init COMPLETE",
    " 14 nranks 16 cudaDev 6 nvmlDev 6 busId b3000 commId 0x753d166fb39e1659 - Init COMPLETE",
    "worker-0:19591:20038 [5] NCCL INFO comm 0x55d74a8ed200 rank 5 nranks 16 cudaDev 5 nvmlDev 5 busId af000 commId 0x753d166fb39e1659 - Init COMPLETE",
    " 11 nranks 16 cudaDev 3 nvmlDev 3 busId 99000 commId 0x753d166fb39e1659 - Init COMPLETE",
    "worker-1:19513:19856 [5] NCCL INFO comm 0x55b59b6ede30 rank 13 nranks 16 cudaDev 5 nvmlDev 5 busId af000 commId 0x753d166fb39e1659 - Init COMPLETE",
    "worker-0:19642:20035 [0] NCCL INFO comm 0x558ed3265fa0 rank 0 nranks 16 cudaDev 0 nvmlDev 0 busId 8d000 commId 0x753d166fb39e1659 - Init COMPLETE",
    "worker-1:19401:19858 [1] NCCL INFO comm 0x55945920c340 rank 9 nranks 16 cudaDev 1 nvmlDev 1 busId 91000 commId 0x753d166fb39e1659 - Init COMPLETE",
]


def test_the_tail_of_a_cut_record_keeps_its_communicator_and_the_rank_it_still_names():
    tails = parsed_by("nccl_fragments", WORLD_INIT).sort("line")
    assert tails.height == 6
    assert set(tails.get_column("comm_id").to_list()) == {"0x753d166fb39e1659"}
    assert tails.get_column("comm_rank").drop_nulls().to_list() == [10]


def test_ranks_whose_complete_records_may_have_been_cut_are_not_called_stuck(tmp_path):
    analysis = analyze_files(tmp_path, {"reference.out": WORLD_INIT})
    assert not [f for f in analysis.findings if f.kind == "missing_rank"]
    # without the tails, the same starts read as six ranks stuck in init
    whole = [line for line in WORLD_INIT if line.startswith("worker-")]
    stuck = analyze_files(tmp_path / "whole", {"reference.out": whole})
    assert [f.ranks for f in stuck.findings if f.kind == "missing_rank"] == [
        [8, 10, 11, 12, 14, 15]
    ]
