from __future__ import annotations

from tests.builders import analyze_files, finding

# modelscope/FunASR#2006 (field sample funasr-2006), verbatim line
OOM = "[rank2]: torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 336.00 MiB. GPU 2 has a total capacity of 79.15 GiB of which 302.75 MiB is free."
TIMEOUT = "[rank5]:[E1018 10:32:44.128370633 ProcessGroupNCCL.cpp:616] [Rank 5] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=15734, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600039 milliseconds before timing out."


def test_oom_outranks_the_timeout_it_causes(tmp_path):
    analysis = analyze_files(tmp_path, {"worker-0.log": [OOM, TIMEOUT]})
    oom = finding(analysis, "oom")
    assert oom.ranks == [2] and "336 MiB" in oom.summary
    assert analysis.verdict.finding is oom
    assert finding(analysis, "collective_timeout").role == "symptom"
