from __future__ import annotations

from tests.builders import analyze_files, finding, kinds


def mapping(rank: int, local_rank: int, device: int, host: str | None = None) -> str:
    host_part = f", 'host': '{host}'" if host else ""
    return (
        f"{{'rank': {rank}, 'local_rank': {local_rank}, 'device': {device}, "
        f"'world_size': 4{host_part}}}"
    )


def test_two_ranks_on_one_device_of_one_host(tmp_path):
    files = {f"rank{r}.log": [mapping(r, r, r % 3, "node-a")] for r in range(4)}
    duplicate = finding(analyze_files(tmp_path, files), "duplicate_device")
    assert duplicate.ranks == [0, 3] and duplicate.severity == "error"
    assert "LOCAL_RANK" in duplicate.fix


def test_same_ordinal_on_different_hosts_is_fine(tmp_path):
    files = {f"rank{r}.log": [mapping(r, r % 2, r % 2, f"node-{r // 2}")] for r in range(4)}
    assert "duplicate_device" not in kinds(analyze_files(tmp_path, files))


def test_without_host_nodes_are_told_apart_by_local_rank(tmp_path):
    files = {f"rank{r}.log": [mapping(r, r % 2, r % 2)] for r in range(4)}
    assert "duplicate_device" not in kinds(analyze_files(tmp_path, files))
    files = {f"rank{r}.log": [mapping(r, r, 0 if r < 2 else r)] for r in range(4)}
    assert finding(analyze_files(tmp_path / "x", files), "duplicate_device").ranks == [0, 1]
