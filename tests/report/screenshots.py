"""Screenshots of sample reports for the README, taken by the browser the tests use.

    python -m tests.report.screenshots OUT_DIR [SAMPLE ...] [--full-page] [--scale 2]

writes OUT_DIR/<sample>-1400.png (a desktop) and OUT_DIR/<sample>-390.png (a phone), light
colour scheme, JavaScript on; the samples default to skip_backward_hang and two_node_slurm.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from tests.report.browser import BrowserUnavailableError, Tab, chromium, sample_logs, write_report

DEFAULT_SAMPLES = ("skip_backward_hang", "two_node_slurm")
# Width: height of the first screen shown (390 x 844 is a current iPhone's CSS viewport).
VIEWPORTS = {1400: 1100, 390: 844}


def take(
    out_dir: Path, samples: list[str], full_page: bool = False, scale: float = 1
) -> list[Path]:
    """Write the screenshots; returns their paths."""
    logs = sample_logs()
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    with tempfile.TemporaryDirectory() as scratch, chromium() as browser:
        tab = Tab(browser, device_scale_factor=scale)
        try:
            for name in samples:
                report = write_report(logs[name], Path(scratch), name, f"sample_logs/{name}/logs")
                for width, height in VIEWPORTS.items():
                    seen = tab.visit(report.inline, width=width, height=height)
                    problems = seen.console_errors + seen.blocked_requests
                    if problems:
                        print(f"screenshots: {name} at {width} px: {problems}", file=sys.stderr)
                    path = out_dir / f"{name}-{width}.png"
                    seen.page.screenshot(path=path, full_page=full_page)
                    written.append(path)
        finally:
            tab.close()
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.report.screenshots", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("out_dir", type=Path, metavar="OUT_DIR")
    parser.add_argument("samples", nargs="*", metavar="SAMPLE", default=list(DEFAULT_SAMPLES))
    parser.add_argument("--full-page", action="store_true", help="the whole page, not one screen")
    parser.add_argument("--scale", type=float, default=1, help="device pixel ratio (default 1)")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.samples) - set(sample_logs()))
    if unknown:
        parser.error(f"no sample {', '.join(unknown)} (have: {', '.join(sample_logs())})")
    try:
        written = take(args.out_dir, args.samples, args.full_page, args.scale)
    except BrowserUnavailableError as reason:
        print(f"screenshots: {reason}", file=sys.stderr)
        return 2
    for path in written:
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
