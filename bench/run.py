"""Stage marks at cluster scale: `forensics analyze` against `rg -o` and a Python `re` loop.

    python bench/run.py                       # the four sets of the scale issue
    python bench/run.py --sets 256x3000 --repeat 3 --html

For each set (`<ranks>x<steps>`) it writes per-rank logs dense with stage marks (every rank,
every step, four stages, a noise line every `--noise-every` marks; rank ranks//2 skips
`after_backward` at step steps//2) into `--cache` (kept between runs), then times, each in a
fresh process and best of `--repeat`:

- `rg -o` extracting the stage marks (the `ripgrep` wheel's binary: `pip install '.[bench]'`;
  `grep -oE` when rg is missing),
- a hand-written Python `re` loop doing the same,
- `forensics analyze --format json` (and, with `--html`, the HTML report),

and prints MB/s, the ratios to rg, the peak RSS of the analyzer, and whether its verdict names
the planted rank and step. Targets live here, not in unit tests.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

STAGES = ("before_forward", "before_backward", "after_backward", "after_step")
NOISE = "2026-11-30 10:00:00,000 INFO throughput tokens/s=12345.6 samples/s=42.1"
MARK = r"rank=[0-9]+ step=[0-9]+ stage=[A-Za-z_]+"
DEFAULT_SETS = ("64x3000", "256x3000", "1024x750", "4096x60")
# A fresh process's peak RSS: run the command as the only child of this one-liner.
RSS_OF_CHILD = (
    "import resource, subprocess, sys; subprocess.run(sys.argv[1:], check=True, "
    "stdout=subprocess.DEVNULL); "
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
)
RE_LOOP = """
import os, re, sys
mark = re.compile(r"rank=(\\d+) step=(\\d+) stage=(\\w+)")
found = 0
for folder, _, names in os.walk(sys.argv[1]):
    for name in names:
        with open(os.path.join(folder, name), encoding="utf-8", errors="replace") as handle:
            for line in handle:
                if mark.search(line):
                    found += 1
print(found)
"""


@dataclass(frozen=True, slots=True)
class Job:
    ranks: int
    steps: int
    root: Path
    megabytes: float
    lines: int
    planted: tuple[int, int]  # rank, step


def write_job(root: Path, ranks: int, steps: int, noise_every: int) -> Job:
    planted = (ranks // 2, steps // 2)
    stamp = root / ".complete"
    if not stamp.exists():
        shutil.rmtree(root, ignore_errors=True)
        root.mkdir(parents=True)
        for rank in range(ranks):
            lines = [
                f"{{'rank': {rank}, 'local_rank': {rank % 8}, 'device': {rank % 8}, "
                f"'world_size': {ranks}, 'host': 'node-{rank // 8}'}}"
            ]
            count = 0
            for step in range(steps):
                for stage in STAGES:
                    if (rank, step) == planted and stage == "after_backward":
                        continue
                    lines.append(
                        f"2026-11-30 10:{step // 60 % 60:02d}:{step % 60:02d},000 INFO "
                        f"rank={rank} step={step} stage={stage}"
                    )
                    count += 1
                    if noise_every and count % noise_every == 0:
                        lines.append(NOISE)
            (root / f"rank{rank}.log").write_text("\n".join(lines) + "\n")
        stamp.write_text("")
    files = [path for path in root.iterdir() if path.suffix == ".log"]
    size = sum(path.stat().st_size for path in files)
    lines = sum(path.read_bytes().count(b"\n") for path in files)
    return Job(ranks, steps, root, size / 2**20, lines, planted)


# The analyzer runs as an installed tool does: with its bytecode cached (an environment that
# forbids writing bytecode would compile every module on every run).
ENV = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}


def best_of(repeat: int, command: list[str]) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(
            command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV
        )
        times.append(time.perf_counter() - start)
    return min(times)


def peak_rss_mib(command: list[str]) -> float:
    out = subprocess.run(
        [sys.executable, "-c", RSS_OF_CHILD, *command],
        check=True,
        capture_output=True,
        text=True,
        env=ENV,
    )
    return int(out.stdout.strip().splitlines()[-1]) / 1024


def grep_command(root: Path) -> tuple[str, list[str]]:
    rg = shutil.which("rg")
    if rg:
        return "rg -o", [rg, "-o", "--no-filename", MARK, str(root)]
    return "grep -oE", ["grep", "-rhoE", MARK, str(root)]


def analyze_command(root: Path, output_format: str, out: Path) -> list[str]:
    return [
        sys.executable, "-m", "logforensics", "analyze", str(root),
        "-f", output_format, "-o", str(out), "-q",
    ]  # fmt: skip


def verdict_of(report: Path, planted: tuple[int, int]) -> str:
    verdict = json.loads(report.read_text()).get("verdict") or {}
    right = verdict.get("ranks") == [planted[0]] and verdict.get("step") == planted[1]
    said = f"{verdict.get('kind')} ranks={verdict.get('ranks')} step={verdict.get('step')}"
    return ("right: " if right else "WRONG: ") + said


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", nargs="+", default=list(DEFAULT_SETS))
    parser.add_argument("--noise-every", type=int, default=50, help="a noise line every N marks")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--html", action="store_true", help="also time the HTML report")
    parser.add_argument("--no-re-loop", action="store_true", help="skip the Python re loop")
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "lf-bench")
    args = parser.parse_args()
    print(f"{os.cpu_count()} cores; best of {args.repeat}; fresh process each")
    header = "| set | MB | lines | {grep} | re loop | analyze json | ratio | peak RSS |"
    rows = []
    for spec in args.sets:
        ranks, steps = (int(part) for part in spec.split("x"))
        job = write_job(args.cache / spec, ranks, steps, args.noise_every)
        grep_name, grep = grep_command(job.root)
        grep_s = best_of(args.repeat, grep)
        loop_s = (
            None if args.no_re_loop else best_of(1, [sys.executable, "-c", RE_LOOP, str(job.root)])
        )
        with tempfile.TemporaryDirectory() as scratch:
            report = Path(scratch) / "report.json"
            command = analyze_command(job.root, "json", report)
            best_of(1, command)  # warm: bytecode written, files in the page cache
            json_s = best_of(args.repeat, command)
            rss = peak_rss_mib(command)
            verdict = verdict_of(report, job.planted)
            html_s = (
                best_of(args.repeat, analyze_command(job.root, "html", Path(scratch) / "r.html"))
                if args.html
                else None
            )
        loop_words = f"{loop_s:.2f} s ({loop_s / grep_s:.0f}×)" if loop_s else "—"
        html_words = f", html {html_s:.2f} s ({html_s / grep_s:.1f}×)" if html_s else ""
        rows.append(
            f"| {ranks:,} × {steps:,} | {job.megabytes:.0f} | {job.lines / 1e6:.2f} M "
            f"| {grep_s:.2f} s | {loop_words} | {json_s:.2f} s ({job.megabytes / json_s:.0f} "
            f"MB/s){html_words} | {json_s / grep_s:.1f}× | {rss:,.0f} MiB |"
        )
        print(rows[-1], "—", verdict, flush=True)
    print()
    print(header.format(grep=grep_name))
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
