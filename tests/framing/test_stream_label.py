# ruff: noqa: E501 -- test data are verbatim log lines
"""A runner's label and stream before each line (milabench's `<label> [stderr] `)."""

from __future__ import annotations

from tests.builders import analyze_files
from tests.framing import frame

# mila-iqia/milabench#281, verbatim (the start of the log block; two lines the paste wrapped)
LABELLED = [
    "diffusion-nodes.cn-n001.server.mila.quebec.nolog [stderr] [rank14]: Traceback (most recent call last):",
    'diffusion-nodes.cn-n001.server.mila.quebec.nolog [stderr] [rank14]:   File "/tmp/workspace/cuda/results/venv/torch/lib/python3.10/site-packages/diffusers/models/model_loading_utils.py", line ',
    "105, in load_state_dict",
    'diffusion-nodes.cn-n001.server.mila.quebec.nolog [stderr] [rank14]:     return safetensors.torch.load_file(checkpoint_file, device="cpu")',
    'diffusion-nodes.cn-n001.server.mila.quebec.nolog [stderr] [rank14]:   File "/tmp/workspace/cuda/results/venv/torch/lib/python3.10/site-packages/safetensors/torch.py", line 313, in load_file',
    'diffusion-nodes.cn-n001.server.mila.quebec.nolog [stderr] [rank14]:     with safe_open(filename, framework="pt", device=device) as f:',
    "diffusion-nodes.cn-n001.server.mila.quebec.nolog [stderr] [rank14]: FileNotFoundError: No such file or directory: ",
    '"/tmp/workspace/cuda/results/cache/huggingface/hub/models--stabilityai--stable-diffusion-2/snapshots/1e128c8891e52218b74cde8f26dbfc701cb99d79/vae/diffusion_pytorch_model.safetensors"',
    "diffusion-nodes.cn-n001.server.mila.quebec.nolog [stderr] ",
    "diffusion-nodes.cn-n001.server.mila.quebec.nolog [stderr] [rank14]: During handling of the above exception, another exception occurred:",
    "diffusion-nodes.cn-n001.server.mila.quebec.nolog [stderr] ",
]


def test_the_label_is_the_node_and_the_rank_prefix_inside_it_is_read():
    row = frame(LABELLED)[0]
    assert (row["prefix_node"], row["prefix_stream"], row["prefix_rank"]) == (
        "diffusion-nodes.cn-n001.server.mila.quebec.nolog",
        "stderr",
        14,
    )
    assert row["message"] == "Traceback (most recent call last):"


def test_the_rank_that_raised_is_blamed(tmp_path):
    verdict = analyze_files(tmp_path, {"milabench.log": LABELLED}).verdict
    assert verdict.finding.kind == "rank_exception" and verdict.ranks == [14]
