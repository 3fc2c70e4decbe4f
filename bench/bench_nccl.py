"""Time and peak memory of `analyze` on a synthetic NCCL_DEBUG=INFO job (see nccl_job.py):

    python bench/bench_nccl.py --nodes 128 --gpus-per-node 8 --channels 32

writes one torchrun log tree per node to a temporary folder (a duplicate GPU and an InfiniBand
failure planted), times building the event table alone and the whole analysis, prints lines/s
and the peak RSS, and checks that the planted faults are what the analysis reports.
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from measure import fresh_analyze  # noqa: E402 - bench/ is the script's folder

from bench.nccl_job import JobPlan, Written, write_job  # noqa: E402
from logforensics.api import Analysis, analyze  # noqa: E402
from logforensics.events import build_events  # noqa: E402
from logforensics.intake import discover, read_lines  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--nodes", type=int, default=128)
    parser.add_argument("--gpus-per-node", type=int, default=8)
    parser.add_argument("--channels", type=int, default=32)
    args = parser.parse_args()
    world = args.nodes * args.gpus_per_node
    plan = JobPlan(
        nodes=args.nodes,
        gpus_per_node=args.gpus_per_node,
        channels=args.channels,
        duplicate=(args.nodes * 2 // 7, 2, 5),
        ib_failure=world // 2 + 5,
    )
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        written = write_job(root, plan)
        start = time.perf_counter()
        lines = read_lines(discover(root).files)
        read_seconds = time.perf_counter() - start
        table = build_events(lines.frame)
        parse_seconds = time.perf_counter() - start - read_seconds
        events = table.events.height
        del lines, table
        start = time.perf_counter()
        analysis = analyze(root)
        total_seconds = time.perf_counter() - start
        cli_seconds, cli_peak_mib = fresh_analyze(root)
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"{plan.world} ranks on {plan.nodes} hosts, {written.files} files, {written.lines:,} "
        f"lines, {written.bytes / 2**20:.0f} MiB"
    )
    print(
        f"read {read_seconds:.2f} s; parse (event table, {events:,} events) {parse_seconds:.2f} "
        f"s = {written.lines / parse_seconds:,.0f} lines/s; whole analysis {total_seconds:.2f} s "
        f"= {written.lines / total_seconds:,.0f} lines/s; peak RSS {peak_mib:.0f} MiB"
    )
    print(
        f"fresh `forensics analyze` process: {cli_seconds:.2f} s, peak RSS {cli_peak_mib:.0f} MiB "
        "(the peak above includes generating the logs)"
    )
    print(f"recognised {analysis.recognised_lines:,} of {analysis.lines:,} lines")
    report(analysis, plan, written)


def report(analysis: Analysis, plan: JobPlan, written: Written) -> None:
    """Print the findings and whether they name what was planted."""
    for finding in analysis.findings:
        print(f"  {finding.role:10} {finding.kind:16} {finding.severity:7} {finding.summary[:150]}")
    verdict = analysis.verdict.finding if analysis.verdict else None
    print(
        f"verdict: {verdict.kind if verdict else None} ranks={verdict.ranks if verdict else None}"
    )
    duplicate = [f for f in analysis.findings if f.kind == "duplicate_device"]
    errors = [f for f in analysis.findings if f.kind == "nccl_error" and f.details.get("class")]
    checks = {
        "duplicate GPU found": any(
            f.ranks == written.duplicate_ranks and f.details.get("host") == written.duplicate_host
            for f in duplicate
        ),
        "IB failure is the first NCCL error": any(
            f.ranks == [written.ib_rank] and f.details.get("peer") == written.ib_peer
            for f in errors
        ),
        "every rank attributed from its init records": analysis.job.ranks_seen
        == tuple(range(plan.world)),
    }
    for name, ok in checks.items():
        print(f"{'ok  ' if ok else 'FAIL'} {name}")


if __name__ == "__main__":
    main()
