"""The RDMA provider's own completion errors (parsers/rdma.py)."""

from __future__ import annotations

from tests.builders import analyze_files, only, parsed_by

# OpenRLHF/OpenRLHF#621, verbatim (Ray actor prefixes): weights pushed to the vLLM actors,
# then one actor's InfiniBand completion fails
WEIGHT_SYNC = [
    "(LLMRayActor pid=90621, ip=172.19.24.110) update weight: model.embed_tokens.weight, dtype: torch.bfloat16, shape: torch.Size([152064, 5120])",
    "(LLMRayActor pid=82505, ip=172.19.162.122) update weight: model.layers.0.self_attn.q_proj.weight, dtype: torch.bfloat16, shape: torch.Size([5120, 5120])",
    "(LLMRayActor pid=90738, ip=172.19.24.110) mlx5: host_unknown: got completion with error:",
]


def test_a_failed_completion_is_an_infiniband_error_of_the_process(tmp_path):
    error = only(parsed_by("rdma", WEIGHT_SYNC).filter(event="nccl_error"))
    # mlx5 printed `host_unknown`: the host is the Ray prefix's address
    assert (error["line"], error["host"]) == (3, "172.19.24.110")
    verdict = analyze_files(tmp_path, {"driver.log": WEIGHT_SYNC}).verdict
    assert verdict.finding.kind == "nccl_error"
    assert verdict.finding.details["class"] == "infiniband"
    assert "pid 90738" in verdict.finding.summary and "172.19.24.110" in verdict.finding.summary
