"""Time and peak memory of `analyze` on a generated job: many ranks, many lines of noise.

    python bench/bench_analyze.py --ranks 512 --steps 200 --noise 4

writes the logs to a temporary folder (one file per rank, one rank skipping a stage), runs the
whole analysis once, and prints lines/s and the peak RSS. Targets live here, not in unit tests.
"""

from __future__ import annotations

import argparse
import resource
import tempfile
import time
from pathlib import Path

from measure import fresh_analyze  # noqa: E402 - bench/ is the script's folder

from logforensics.api import analyze

STAGES = ("before_forward", "before_backward", "after_backward", "after_step")
NOISE = "2026-11-30 10:00:00,000 INFO some unrelated message about throughput tokens/s=12345.6"


def write_job(root: Path, ranks: int, steps: int, noise: int) -> int:
    lines_written = 0
    for rank in range(ranks):
        lines = [
            f"{{'rank': {rank}, 'local_rank': {rank % 8}, 'device': {rank % 8}, "
            f"'world_size': {ranks}, 'host': 'node-{rank // 8}'}}"
        ]
        for step in range(steps):
            for stage in STAGES:
                if rank == ranks // 2 and step == steps // 2 and stage == "after_backward":
                    continue
                lines.append(f"2026-11-30 10:00:00,000 INFO rank={rank} step={step} stage={stage}")
                lines.extend([NOISE] * noise)
        (root / f"rank{rank}.log").write_text("\n".join(lines) + "\n")
        lines_written += len(lines)
    return lines_written


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--ranks", type=int, default=512)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--noise", type=int, default=4, help="noise lines after each mark")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        lines = write_job(root, args.ranks, args.steps, args.noise)
        size = sum(path.stat().st_size for path in root.iterdir())
        start = time.perf_counter()
        analysis = analyze(root)
        seconds = time.perf_counter() - start
        cli_seconds, cli_peak_mib = fresh_analyze(root)
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    verdict = analysis.verdict.finding if analysis.verdict else None
    print(
        f"{args.ranks} ranks, {lines:,} lines, {size / 2**20:.0f} MiB: {seconds:.2f} s "
        f"({lines / seconds:,.0f} lines/s), peak RSS {peak_mib:.0f} MiB (with generating the logs)"
    )
    print(
        f"fresh `forensics analyze` process: {cli_seconds:.2f} s, peak RSS {cli_peak_mib:.0f} MiB"
    )
    print(
        f"verdict: {verdict.kind if verdict else None} ranks={verdict.ranks if verdict else None} "
        f"step={verdict.step if verdict else None}"
    )


if __name__ == "__main__":
    main()
