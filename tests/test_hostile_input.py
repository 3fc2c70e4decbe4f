"""Logs are untrusted input: odd, huge or malicious lines must be read, counted and reported,
never crash the analysis."""

from __future__ import annotations

import random

from logforensics.api import analyze
from logforensics.report.model import build_report
from logforensics.report.render import render_html, render_json


def test_garbage_never_crashes_and_every_line_is_counted(tmp_path):
    rng = random.Random(7)
    noise = bytes(rng.randrange(256) for _ in range(20_000)).replace(b"\x00", b"")
    lines = [
        b"rank=99999999999999999999 step=99999999999999999999999 stage=x",
        b"rank=1 step=-3 stage=",
        b"{'rank': 1e9, 'device': 'cuda:-1', 'world_size': -4}",
        b"loader sizes: [1, , 2, x, 99999999999999999999999]",
        b"\x1b[31m[rank0]:\x1b[0m Traceback (most recent call last):",
        b"[rank0]: " + b"A" * 1_000_000,
        b"Watchdog caught collective operation timeout: WorkNCCL(SeqNum=, OpType=, Timeout(ms)=)",
        b"host:1:2 [0] NCCL INFO comm 0x0 rank 5 nranks 4 cudaDev 0 busId zz - Init COMPLETE",
        b"Ranks 1,,, 2 failed to pass monitoredBarrier in  ms",
        b"\r\r\r12/13 [00:01<00:00, 1.0it/s]\r",
        noise,
    ]
    (tmp_path / "rank0.log").write_bytes(b"\n".join(lines))
    (tmp_path / "rank1.log").write_bytes(b"\xc3\x28" + noise)  # invalid UTF-8 (not a BOM)
    analysis = analyze(tmp_path)
    assert (
        analysis.lines
        == analysis.recognised_lines + analysis.unrecognised_lines + analysis.blank_lines
    )
    assert analysis.unrecognised_lines > 0
    assert "rank1.log" in analysis.lossy_files
    report = build_report(analysis, str(tmp_path))
    assert render_json(report)
    assert render_html(report, analysis)
