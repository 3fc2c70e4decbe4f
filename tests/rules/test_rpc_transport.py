# ruff: noqa: E501 -- test data are verbatim log lines
"""TensorPipe's link between RPC workers failing: the verdict, not the RPC call's exception."""

from __future__ import annotations

from logforensics.i18n import translate, translate_headline
from logforensics.registry import diagnosis
from tests.builders import analyze_files, kinds
from tests.test_i18n import english_runs

# pytorch/tensorpipe#201, verbatim: rank 0's console; init_rpc returned, the first rpc_sync to
# the other host was refused (its host name resolved to 127.0.1.1: pytorch/pytorch#42879)
REFUSED_CONSOLE = [
    "dist init r=0, world=2, host=learnfair1228",
    "going to try init_process_group: tcp://learnfair1228:10638",
    "got nccl, now barrier 0",
    "got nccl, now rpc 0",
    "going to try init_rpc tcp://learnfair1228:10639",
    "got rpc 0",
    "[W tensorpipe_agent.cpp:641] RPC agent for Test0 encountered error when sending outgoing request #0 to Test1: ECONNREFUSED: connection refused",
    "Traceback (most recent call last):",
    '  File "hello.py", line 63, in <module>',
    '    torch.distributed.rpc.rpc_sync("Test1", rpc_send, args=(t,))',
    '  File "/private/home/tbirch/.conda/envs/torch160/lib/python3.7/site-packages/torch/distributed/rpc/api.py", line 752, in rpc_sync',
    "    return fut.wait()",
    "RuntimeError: ECONNREFUSED:",
]
# pytorch/pytorch#104568, verbatim: both workers' logs of init_rpc over InfiniBand
WORKER0 = [
    "python torchrpc_master.py",
    "[W tensorpipe_agent.cpp:530] RPC agent for worker0 encountered error when accepting incoming pipe: eof (this error originated at tensorpipe/transport/ibv/connection_impl.cc:302)",
    "[W tensorpipe_agent.cpp:726] RPC agent for worker0 encountered error when reading incoming request from worker1: eof (this error originated at tensorpipe/transport/ibv/connection_impl.cc:302)",
]
WORKER1 = [
    "python torchrpc_slave.py",
    "[W tensorpipe_agent.cpp:940] RPC agent for worker1 encountered error when reading incoming response from worker0: transport retry counter exceeded (this error originated at tensorpipe/transport/ibv/connection_impl.cc:478)",
]


def test_a_refused_connect_is_the_cause_and_the_rpc_call_s_exception_its_symptom(tmp_path):
    analysis = analyze_files(tmp_path, {"rank0.log": REFUSED_CONSOLE})
    verdict = analysis.verdict
    assert verdict.finding.kind == "rpc_transport"
    assert diagnosis(verdict.finding) == "nccl_error"  # the report's kind
    assert verdict.headline == (
        "Rank 0's RPC agent could not connect to Test1 (`ECONNREFUSED: connection refused`)"
    )
    assert "TP_SOCKET_IFNAME" in verdict.finding.fix
    assert "rank_exception" not in kinds(analysis)
    assert english_runs(translate(verdict.finding.summary, "zh")) == []
    assert english_runs(translate(verdict.finding.fix, "zh")) == []
    assert english_runs(translate_headline(verdict.headline, "zh")) == []


def test_a_transport_whose_retries_ran_out_is_the_cause_of_the_other_s_lost_pipe(tmp_path):
    analysis = analyze_files(tmp_path, {"worker0.log": WORKER0, "worker1.log": WORKER1})
    verdict = analysis.verdict
    assert verdict.finding.kind == "rpc_transport"
    assert "transport retry counter exceeded" in verdict.finding.summary
    assert "ibstat" in verdict.finding.fix
    assert english_runs(translate(verdict.finding.fix, "zh")) == []
