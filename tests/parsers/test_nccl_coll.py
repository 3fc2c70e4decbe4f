"""NCCL's trace of collective calls, NCCL_DEBUG_SUBSYS=COLL (parsers/nccl_coll.py)."""
# ruff: noqa: E501 -- verbatim log lines

from __future__ import annotations

from tests.builders import analyze_files, only, parsed_by

# NVIDIA/nccl#147 (teng-li's paste), verbatim: DDP's first broadcasts on an 8-GPU node, one of
# them two processes' writes on one line, one that lost its identity
NCCL_147 = [
    "learnfair062:32619:32711 [2] NCCL INFO learnfair062:32629:32629 [7] NCCL INFO Broadcast: opCount 0 sendbuff 0x7f372c7f5400 recvbuff 0x7f372c7f5400 count 53 datatype 4 op 0 root 0 comm 0x7f372005a260 [nranks=8] stream 0x5599dafdc1f0",
    "learnfair062:32625:32625 [5] NCCL INFO Broadcast: opCount 0 sendbuff 0x7f6b687f5400 recvbuff 0x7f6b687f5400 count 53 datatype 4 op 0 root 0 comm 0x7f6b5c05a260 [nranks=8] stream 0x561c1ee8dfb0",
    "learnfair062:32615:32615 [0] NCCL INFO Broadcast: opCount 0 sendbuff 0x7f88e4000000 recvbuff 0x7f88e4000000 count 25503912 datatype 6 op 0 root 0 comm 0x7f88e005a260 [nranks=8] stream 0x55f20d2f5db0",
    "learnfair062:32615:32615 [0] NCCL INFO Launch mode Parallel",
    "learnfair062:32617:32617 [1] NCCL INFO Broadcast: opCount 0 sendbuff 0x7f3bfe7f5400 recvbuff 0x7f3bfe7f5400 count 53 datatype 4 op 0 root 0 comm 0x7f3bf405a260 [nranks=8] stream 0x55d5ffb73110",
    "Broadcast: opCount 1 sendbuff 0x7f5836000000 recvbuff 0x7f5836000000 count 25503912 datatype 6 op 0 root 0 comm 0x7f584405a260 [nranks=8] stream 0x563448681ac0",
    "learnfair062:32617:32617 [1] NCCL INFO Broadcast: opCount 1 sendbuff 0x7f3be4000000 recvbuff 0x7f3be4000000 count 25503912 datatype 6 op 0 root 0 comm 0x7f3bf405a260 [nranks=8] stream 0x55d5ffb73110",
]

# NVIDIA/nccl#203, verbatim: two GPUs of one process's job calling the same all-reduces
NCCL_203 = [
    "gpu1:13135:13922 [0] NCCL INFO AllReduce: opCount 1a sendbuff 0x10048f82700 recvbuff 0x10048f82800 count 64 datatype 7 op 0 root 0 comm 0x7f0c741162f0 [nranks=2] stream 0x7f0c74002f00",
    "gpu1:13135:13923 [1] NCCL INFO AllReduce: opCount 1a sendbuff 0x107b43e2300 recvbuff 0x107b43e1c00 count 64 datatype 7 op 0 root 0 comm 0x7f0c7410f0e0 [nranks=2] stream 0x7f0c74001f60",
    "gpu1:13135:13922 [0] NCCL INFO AllReduce: opCount 1b sendbuff 0x10051319000 recvbuff 0x1004af19000 count 237184 datatype 7 op 0 root 0 comm 0x7f0c741162f0 [nranks=2] stream 0x7f0c74002f00",
    "gpu1:13135:13923 [1] NCCL INFO AllReduce: opCount 1b sendbuff 0x107b56b7400 recvbuff 0x107b5b71400 count 237184 datatype 7 op 0 root 0 comm 0x7f0c7410f0e0 [nranks=2] stream 0x7f0c74001f60",
]

# pytorch/torchtitan#1369, verbatim: two processes' tensor-parallel all-gathers and
# reduce-scatters, in step with each other
TORCHTITAN_1369 = [
    "hopper01:191370:191425 [1] NCCL INFO AllGather: opCount d sendbuff 0x7fa921200000 recvbuff 0x7fa915800000 count 2097152 datatype 7 op 0 root 0 comm 0x55fca23fc0f0 [nranks=2] stream 0x55fca193e8e0",
    "hopper01:191369:191420 [0] NCCL INFO ReduceScatter: opCount e sendbuff 0x7fdf57c00000 recvbuff 0x7fdf61a00000 count 2097152 datatype 7 op 0 root 0 comm 0x55e290bd32d0 [nranks=2] stream 0x55e29067e430",
    "hopper01:191369:191420 [0] NCCL INFO AllGather: opCount f sendbuff 0x7fdf61200000 recvbuff 0x7fdf55800000 count 2097152 datatype 7 op 0 root 0 comm 0x55e290bd32d0 [nranks=2] stream 0x55e29067e430",
    "hopper01:191370:191425 [1] NCCL INFO ReduceScatter: opCount e sendbuff 0x7fa917c00000 recvbuff 0x7fa921a00000 count 2097152 datatype 7 op 0 root 0 comm 0x55fca23fc0f0 [nranks=2] stream 0x55fca193e8e0",
    "hopper01:191370:191425 [1] NCCL INFO AllGather: opCount f sendbuff 0x7fa921200000 recvbuff 0x7fa915800000 count 2097152 datatype 7 op 0 root 0 comm 0x55fca23fc0f0 [nranks=2] stream 0x55fca193e8e0",
]


def test_a_collective_call_is_read_with_its_process_count_type_and_communicator():
    calls = parsed_by("nccl_coll", NCCL_147).filter(event="nccl_coll")
    odd = only(calls.filter(pid=32615))
    assert (odd["host"], odd["cuda_dev"], odd["op"], odd["seq"]) == (
        "learnfair062",
        0,
        "BROADCAST",
        0,
    )
    assert (odd["numel_in"], odd["dtype"], odd["nranks"]) == (25503912, "float16", 8)
    # the interleaved line is the inner process's call; the line without identity has none
    assert only(calls.filter(line=1))["pid"] == 32629
    assert calls.filter(line=6).is_empty()
    assert only(calls.filter(pid=32617, line=7))["seq"] == 1


def test_hex_operation_counts_are_numbers():
    calls = parsed_by("nccl_coll", NCCL_203).filter(event="nccl_coll")
    assert sorted(set(calls.get_column("seq").to_list())) == [0x1A, 0x1B]


def test_the_process_whose_call_differs_at_one_operation_count_is_the_odd_one_out(tmp_path):
    analysis = analyze_files(tmp_path, {"coll.log": NCCL_147})
    assert analysis.unrecognised_lines == 0
    mismatch = analysis.verdict.finding
    assert (mismatch.kind, mismatch.seq, analysis.verdict.ranks) == ("collective_mismatch", 0, [0])
    assert "BROADCAST 25503912 float16" in mismatch.summary
    assert "BROADCAST 53 int64" in mismatch.summary


def test_calls_in_step_are_no_mismatch(tmp_path):
    for lines in (NCCL_203, TORCHTITAN_1369):
        analysis = analyze_files(tmp_path, {"coll.log": lines})
        assert not [f for f in analysis.findings if f.kind == "collective_mismatch"]
