# ruff: noqa: E501 -- test data are verbatim log lines
"""`torchx log`'s `<role>/<replica> ` in front of each line it fetches: the replica is one node's
launcher (a node), not a rank."""

from __future__ import annotations

from tests.builders import analyze_files
from tests.framing import frame

# pytorch/torchx#492 (the PR's test run), verbatim: a two-node elastic job on Ray, node 0's
# agent completing its rendezvous
RAY_RENDEZVOUS = [
    "ray/0 (CommandActor pid=494377) INFO:torch.distributed.elastic.multiprocessing:Setting worker0 reply file to: /tmp/torchelastic_vyq136c_/compute_world_size-mpr03nzqvvg3td_nu4r0f6t/attempt_0/0/error.json",
    "ray/0 (CommandActor pid=494406) INFO:torch.distributed.elastic.agent.server.api:[] Rendezvous complete for workers. Result:",
    "ray/0 (CommandActor pid=494406)   restart_count=0",
    "ray/0 (CommandActor pid=494406)   master_addr=tristanr-arch2",
    "ray/0 (CommandActor pid=494406)   master_port=48089",
    "ray/0 (CommandActor pid=494406)   group_rank=0",
    "ray/0 (CommandActor pid=494406)   group_world_size=2",
    "ray/0 (CommandActor pid=494406)   local_ranks=[0]",
    "ray/0 (CommandActor pid=494406)   role_ranks=[0]",
    "ray/0 (CommandActor pid=494406)   global_ranks=[0]",
    "ray/0 (CommandActor pid=494406)   role_world_sizes=[2]",
    "ray/0 (CommandActor pid=494406)   global_world_sizes=[2]",
    "ray/0 (CommandActor pid=494406)",
    "ray/0 (CommandActor pid=494406) INFO:torch.distributed.elastic.agent.server.api:[] Starting worker group",
    "ray/0 (CommandActor pid=494406) INFO:torch.distributed.elastic.multiprocessing:Setting worker0 reply file to: /tmp/torchelastic_t38mo11i/compute_world_size-mpr03nzqvvg3td_ehvp80_p/attempt_0/0/error.json",
]


def test_the_replica_prefix_names_a_node_and_the_launcher_s_prefix_inside_it_is_read():
    rows = frame(RAY_RENDEZVOUS)
    assert {row["prefix_node"] for row in rows} == {"torchx ray/0"}
    assert not [row for row in rows if "prefix_rank" in row]
    assert {row["prefix_pid"] for row in rows} == {494377, 494406}
    assert rows[12]["message"] == ""  # an empty line of the actor's
    assert rows[11]["message"] == "  global_world_sizes=[2]"


def test_a_healthy_rendezvous_is_read_as_a_job_of_two_with_no_failure(tmp_path):
    analysis = analyze_files(tmp_path, {"torchx.log": RAY_RENDEZVOUS})
    assert analysis.verdict is None
    assert analysis.job.world_size is not None and analysis.job.world_size.value == 2
    # the agent's block and its lines around it are recognised
    assert analysis.unrecognised_lines == 0


def test_a_slash_and_number_on_a_few_lines_is_no_prefix():
    lines = ["epoch/3 done in 12 s", "loss 0.25", "loss 0.24", "loss 0.23"]
    rows = frame(lines)
    assert not [row for row in rows if "prefix_node" in row]
    assert rows[0]["message"] == "epoch/3 done in 12 s"


# NVIDIA-NeMo/Speech#14348, verbatim: NeMo-Run's local executor names the role after the task
# (`i.pretrain`), then torchrun's tee prefix and PyTorch's own; Megatron's NaN check names the
# rank that found it
NEMO_RUN_NAN = [
    "i.pretrain/0 [default2]:[rank2]: RuntimeError: Rank 2, node dcfai-xe9680-01, device 2, iteration -1: Unexpected result nan (message='found NaN in local grad norm for bucket #0 in backward pass before data-parallel communication collective')"
]


def test_a_role_named_with_dots_is_a_replica_prefix_and_the_rank_inside_it_is_read(tmp_path):
    row = frame(NEMO_RUN_NAN)[0]
    assert (row["prefix_node"], row.get("prefix_rank")) == ("torchx i.pretrain/0", 2)
    assert row["message"].startswith("RuntimeError: Rank 2, node dcfai-xe9680-01")
    verdict = analyze_files(tmp_path, {"train.log": NEMO_RUN_NAN}).verdict
    assert (verdict.finding.kind, verdict.ranks) == ("rank_exception", [2])
    assert verdict.finding.fix.startswith("The training's numbers diverged")
