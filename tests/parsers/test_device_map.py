from __future__ import annotations

import pytest

from tests.builders import analyze_files, parse


@pytest.mark.parametrize(
    ("line", "rank", "local_rank", "device", "world_size", "host"),
    [
        ("{'rank': 0, 'local_rank': 0, 'device': 0, 'world_size': 4}", 0, 0, "0", 4, None),
        ("{'world_size': 8, 'device': 3, 'rank': 7, 'local_rank': 3}", 7, 3, "3", 8, None),
        (
            "{'rank': 3, 'local_rank': 3, 'device': 0, 'world_size': 4, 'host': 'vm'}",
            3,
            3,
            "0",
            4,
            "vm",
        ),
        ('{"rank": 2, "local_rank": 2, "device": "cuda:2", "world_size": 4}', 2, 2, "2", 4, None),
        (
            "{'rank': 1, 'local_rank': 1, 'device': device(type='cuda', index=1), 'world_size': 2}",
            1,
            1,
            "1",
            2,
            None,
        ),
    ],
)
def test_reads_the_mapping_dict_in_any_order_and_style(
    line, rank, local_rank, device, world_size, host
):
    row = parse([line]).row(0, named=True)
    assert row["event"] == "device_map"
    assert (row["rank"], row["local_rank"], row["device"], row["world_size"], row["host"]) == (
        rank,
        local_rank,
        device,
        world_size,
        host,
    )


def test_a_dict_without_rank_is_not_a_mapping():
    assert parse(["{'device': 0, 'dtype': 'bf16'}"]).is_empty()


def test_a_dict_with_the_rank_and_world_but_no_device_announces_the_rank(tmp_path):
    # pytorch/PiPPy#883, verbatim: each spawned process prints its keyword arguments
    lines = [
        f"MY KWARGS ARE {{'rank': {rank}, 'local_rank': {rank}, 'world_size': 4, 'no_trace': False, 'trace_dir': './traces', 'schedules': ['gpipe'], 'device': 'cuda'}}"
        for rank in (2, 1, 0, 3)
    ]
    events = parse(lines)
    assert events.get_column("event").to_list() == ["world_size"] * 4
    assert events.get_column("rank").to_list() == [2, 1, 0, 3]
    assert set(events.get_column("world_size").to_list()) == {4}
    analysis = analyze_files(tmp_path, {"output.log": lines})
    assert analysis.verdict is None and analysis.job.ranks_seen == (0, 1, 2, 3)
