"""Peak memory and time of `forensics analyze` on hostile and broken input, full size.

    python bench/robustness.py                  # writes the inputs once into /tmp/lf-nasty
    python bench/robustness.py --cache DIR

The inputs come from `tests/robustness/nasty.py` (8 GiB gzip, zstd and zip bombs, alone, beside
a real run's logs, inside a tar and on standard input; one 300 MB line; a stage mark of rank
1,999,999,999; `world_size` 10^9 in every rank's mapping print; a tar.gz of 300,000 tiny
members; 20,000 srun reports that each name a million tasks; one line of 5,000 Horovod
stalled ops of 50 missing ranks). Each is analysed by a fresh
process; the table gives its exit code, time and peak RSS, and whether the good logs beside a
bomb kept their verdict. The bound it checks: under 300 MB and 20 s each (the 300,000
members: 20 s).
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.robustness import nasty  # noqa: E402 - the generator lives with the tests

SAMPLE = ROOT / "sample_logs" / "skip_backward_hang" / "logs"
BOUND_MIB, BOUND_SECONDS = 300, 20
GIB8 = 8 * 2**30
RSS_OF_CHILD = (
    "import resource, subprocess, sys; "
    "stdin = open(sys.argv[1], 'rb') if sys.argv[1] != '' else None; "
    "code = subprocess.run(sys.argv[2:], stdin=stdin, stdout=subprocess.DEVNULL, "
    "stderr=subprocess.DEVNULL).returncode; "
    "print(code, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
)


def write_inputs(cache: Path) -> dict[str, tuple[Path, Path | None]]:
    """Each case: the PATH to analyse and the file fed on standard input (or None)."""
    cache.mkdir(parents=True, exist_ok=True)
    cases: dict[str, tuple[Path, Path | None]] = {}

    def folder(name: str, fill) -> Path:  # written once, kept between runs
        path = cache / name.replace(" ", "_").replace(",", "")
        done = path / ".complete"
        if not done.exists():
            shutil.rmtree(path, ignore_errors=True)
            path.mkdir(parents=True)
            fill(path)
            done.write_text("")
        cases[name] = (path, None)
        return path

    gz = folder("gzip bomb, 8 GiB", lambda p: nasty.gzip_bomb(p / "zeros.log.gz", GIB8))
    folder("zstd bomb, 8 GiB", lambda p: nasty.zstd_bomb(p / "zeros.log.zst", GIB8))
    folder("zip bomb, 8 GiB", lambda p: nasty.zip_bomb(p / "zeros.zip", GIB8))

    def beside(path: Path) -> None:
        shutil.copytree(SAMPLE, path, dirs_exist_ok=True)
        shutil.copy(gz / "zeros.log.gz", path / "zeros.log.gz")

    folder("gzip bomb beside good logs", beside)
    folder(
        "gzip bomb inside a tar",
        lambda p: nasty.tar_of(p / "upload.tar", {"inner/zeros.log.gz": gz / "zeros.log.gz"}),
    )
    cases["gzip bomb on stdin"] = (Path("-"), gz / "zeros.log.gz")
    folder(
        "one 300 MB line",
        lambda p: nasty.long_line(p / "rank0.log", 300 * 2**20, before=nasty.rank_log(0)),
    )

    def huge_rank(path: Path) -> None:
        shutil.copytree(SAMPLE, path, dirs_exist_ok=True)
        (path / "stray.log").write_text("rank=1999999999 step=3 stage=before_forward\n")

    folder("stage mark of rank 1,999,999,999", huge_rank)

    def huge_world(path: Path) -> None:
        for rank in range(4):
            mapping = (
                f"{{'rank': {rank}, 'local_rank': {rank}, 'device': {rank}, "
                f"'world_size': 1000000000, 'host': 'node-0'}}\n"
            )
            (path / f"rank{rank}.log").write_text(mapping + nasty.rank_log(rank))

    folder("world_size 10^9 in every mapping print", huge_world)

    def task_reports(path: Path) -> None:
        lines = (
            f"srun: error: node{i}: tasks 0-999999: Exited with exit code 1\n"
            for i in range(20_000)
        )
        (path / "job.out").write_text("".join(lines))

    folder("20,000 srun reports of a million tasks", task_reports)

    def stalled_ops(path: Path) -> None:
        ranks = ", ".join(str(rank) for rank in range(50))
        ops = " ".join(f"allreduce.w{i} [missing ranks: {ranks}]," for i in range(5_000))
        (path / "rank0.log").write_text(f"Stalled ranks:\n{ops}\n")

    folder("one line of 5,000 stalled ops", stalled_ops)
    folder("300,000 members", lambda p: nasty.many_members(p / "parts.tar.gz", 300_000))
    return cases


def run(path: Path, stdin: Path | None, out: Path) -> tuple[int, float, float]:
    command = [sys.executable, "-m", "logforensics", "analyze", str(path), "-f", "json"]
    command += ["-o", str(out), "-q"]
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", RSS_OF_CHILD, str(stdin or ""), *command],
        capture_output=True,
        text=True,
        check=True,
    )
    seconds = time.perf_counter() - start
    code, peak_kib = done.stdout.split()
    return int(code), seconds, int(peak_kib) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "lf-nasty")
    args = parser.parse_args()
    cases = write_inputs(args.cache)
    expected = None
    with tempfile.TemporaryDirectory() as scratch:
        report = Path(scratch) / "report.json"
        run(SAMPLE, None, report)
        expected = json.loads(report.read_text())["verdict"]
        print("| input | exit | time | peak RSS | within bound | verdict |")
        print("|---|---|---|---|---|---|")
        for name, (path, stdin) in cases.items():
            report.unlink(missing_ok=True)
            code, seconds, peak = run(path, stdin, report)
            verdict = json.loads(report.read_text())["verdict"] if report.exists() else None
            said = "—"
            if verdict is not None:
                same = (verdict["kind"], verdict["ranks"]) == (expected["kind"], expected["ranks"])
                said = f"{verdict['kind']} {verdict['ranks']}" + (" (as without)" if same else "")
            # the many-members case is bound in time only (its bookkeeping grows with files)
            within = seconds < BOUND_SECONDS and (peak < BOUND_MIB or "members" in name)
            print(
                f"| {name} | {code} | {seconds:.1f} s | {peak:.0f} MiB | "
                f"{'yes' if within else 'NO'} | {said} |",
                flush=True,
            )
    print(f"\n(python {sys.version.split()[0]}, {resource.getpagesize()} B pages)")


if __name__ == "__main__":
    main()
