"""`docker compose logs` / `docker-compose up`: the container's name, padded, then `| `."""

from __future__ import annotations

from tests.framing import frame

# pytorch/pytorch#73790, verbatim: docker-compose v1 output of a two-GPU Lightning run
COMPOSE_V1 = [
    "bug_1  | start =  2022-03-05 15:37:57.762277",
    "bug_1  | initializing distributed: GLOBAL_RANK: 1, MEMBER: 2/2",
]


def test_the_container_prefix_is_peeled_and_kept_as_the_node():
    rows = frame(COMPOSE_V1, "compose.log")
    assert [row["message"] for row in rows] == [
        "start =  2022-03-05 15:37:57.762277",
        "initializing distributed: GLOBAL_RANK: 1, MEMBER: 2/2",
    ]
    assert {row["prefix_node"] for row in rows} == {"compose bug_1"}
    assert rows[0].get("prefix_host") is None  # a container's name is no host NCCL prints


def test_under_the_container_prefix_the_launcher_s_own_prefixes_are_read():
    # the same container running torchrun --tee (its prefix as PyTorch prints it)
    rows = frame([f"trainer-1  | [default1]:{line[9:]}" for line in COMPOSE_V1], "compose.log")
    assert {row["prefix_local_rank"] for row in rows} == {1}
    assert rows[1]["message"] == "initializing distributed: GLOBAL_RANK: 1, MEMBER: 2/2"


def test_a_logger_s_columns_are_no_container_prefix():
    lines = [
        # facebookresearch/fairseq#2385, verbatim
        "2020-07-28 06:31:03 | INFO | fairseq.utils | rank   0: capabilities =  7.0  ; total memory = 15.782 GB ; name = Tesla V100-PCIE-16GB",  # noqa: E501
        "2020-07-28 06:31:03 | INFO | fairseq.utils | rank   1: capabilities =  7.0  ; total memory = 15.782 GB ; name = Tesla V100-PCIE-16GB",  # noqa: E501
        # loguru's default format
        "2024-01-01 12:00:00.000 | INFO     | __main__:main:12 - rank 0 step 3",
    ]
    assert [row["message"] for row in frame(lines, "train.log")] == lines
