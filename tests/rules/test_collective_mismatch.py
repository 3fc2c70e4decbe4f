from __future__ import annotations

from tests.builders import analyze_files, finding

# speechbrain/speechbrain#2401 (formats.md §6), verbatim
DETAIL = (
    "RuntimeError: Detected mismatch between collectives on ranks. Rank 1 is running collective: "
    "CollectiveFingerPrint(SequenceNumber=485, OpType=ALLREDUCE, TensorShape=[25], "
    "TensorDtypes=Float, TensorDeviceTypes=TensorOptions(dtype=float (default), device=cuda, "
    "layout=Strided (default), requires_grad=false (default), pinned_memory=false (default), "
    "memory_format=(nullopt))), but Rank 0 is running collective: "
    "CollectiveFingerPrint(SequenceNumber=485, OpType=BROADCAST, TensorShape=[1], "
    "TensorDtypes=Long, TensorDeviceTypes=TensorOptions(dtype=float (default), device=cuda, "
    "layout=Strided (default), requires_grad=false (default), pinned_memory=false (default), "
    "memory_format=(nullopt))).Collectives differ in the following aspects:   Op type: "
    "ALLREDUCEvs BROADCAST  Tensor Tensor shapes: 25vs 1  Tensor Tensor dtypes: Floatvs Long"
)


def running(rank: int, seq: int, op: str) -> str:
    return (
        f"[I1130 15:00:00.000000000 ProcessGroupWrapper.cpp:1] [Rank {rank}] Running collective: "
        f"CollectiveFingerPrint(SequenceNumber={seq}, OpType={op}, TensorShape=[4], "
        "TensorDtypes=Float, TensorDeviceTypes=TensorOptions(dtype=float (default), device=cpu, "
        "layout=Strided (default), requires_grad=false (default), pinned_memory=false (default), "
        "memory_format=(nullopt)))"
    )


def test_detail_report_names_both_ranks_and_fingerprints(tmp_path):
    mismatch = finding(analyze_files(tmp_path, {"rank1.log": [DETAIL]}), "collective_mismatch")
    assert mismatch.ranks == [0, 1]
    assert (mismatch.op, mismatch.seq) == ("ALLREDUCE", 485)
    assert "ALLREDUCE #485 shape [25]" in mismatch.summary and "BROADCAST" in mismatch.summary


def test_running_collective_histories_part_at_first_differing_seq(tmp_path):
    files = {
        f"rank{r}.log": [running(r, s, "ALLREDUCE") for s in range(5)] + [running(r, 5, "BARRIER")]
        for r in (0, 1, 3)
    }
    files["rank2.log"] = [running(2, s, "ALLREDUCE") for s in range(3)] + [running(2, 3, "BARRIER")]
    mismatch = finding(analyze_files(tmp_path, files), "collective_mismatch")
    assert mismatch.seq == 3 and mismatch.culprit_ranks == [2]
