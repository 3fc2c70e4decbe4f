from __future__ import annotations

import pytest

from tests.builders import only, parsed_by


@pytest.mark.parametrize(
    ("line", "size"),
    [
        # sample_logs/megatron_style_skip (Megatron-LM's argument print), a run here
        (
            "using world size: 4, data-parallel size: 4, tensor-model-parallel size: 1, pipeline-model-parallel size: 1",
            4,
        ),
        ("WORLD_SIZE=8", 8),
    ],
)
def test_world_size_in_words(line, size):
    (row,) = parsed_by("world_size", [line]).select("world_size").rows()
    assert row == (size,)


@pytest.mark.parametrize(
    "line",
    [
        "{'rank': 0, 'local_rank': 0, 'device': 0, 'world_size': 4}",  # device_map's
        "world_size_per_node = 8",
    ],
)
def test_other_shapes_are_not_read_here(line):
    assert parsed_by("world_size", [line]).is_empty()


def test_lightnings_member_line_states_the_world_and_the_rank():
    # Lightning-AI/pytorch-lightning#19606, verbatim
    found = only(parsed_by("world_size", ["Initializing distributed: GLOBAL_RANK: 0, MEMBER: 1/5"]))
    assert (found["world_size"], found["rank"]) == (5, 0)
