"""A real browser for the report: the system's Chromium driven by Playwright.

Shared by the browser tests (`tests/report/test_browser.py`) and the README screenshots
(`python -m tests.report.screenshots OUT_DIR`). Playwright's own browser download is never
used (`playwright install` needs the internet): Chromium comes from the system (Debian's
`chromium` package; `.ci/run` installs it when it can), or from `LOGFORENSICS_CHROMIUM`.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from playwright.sync_api import Browser, ConsoleMessage, Page, Request, Route, sync_playwright
from playwright.sync_api import Error as PlaywrightError

from logforensics.api import analyze_upload
from logforensics.report.model import build_upload_report
from logforensics.report.render import render_upload_html, stylesheet

ROOT = Path(__file__).resolve().parents[2]
SAMPLE_LOGS = ROOT / "sample_logs"

# Tried in this order; the environment variable names any other Chromium-based browser.
CHROMIUM_ENV = "LOGFORENSICS_CHROMIUM"
CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")

# Headless, as root in a container (no sandbox, no GPU), and quiet on a machine without
# internet: without the background-networking flags Chromium calls home at every start.
LAUNCH_ARGS = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-extensions",
)

# The report's generation time, fixed so that screenshots and pages do not change by the clock.
GENERATED_AT = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)

# Jenkins' default Content-Security-Policy (its `sandbox` directive cannot be set by a <meta>
# element, which would log an error of its own): no script, styles from the page's own
# origin only. `--html-assets external` exists for such viewers.
STRICT_CSP = "default-src 'none'; img-src 'self'; style-src 'self'"


class BrowserUnavailableError(RuntimeError):
    """No browser could be started here; the message says why."""


def chromium_path() -> str | None:
    """The Chromium to drive: `$LOGFORENSICS_CHROMIUM`, else the first on PATH."""
    named = os.environ.get(CHROMIUM_ENV)
    if named:
        return named
    for name in CHROMIUM_NAMES:
        found = shutil.which(name)
        if found:
            return found
    return None


@contextmanager
def chromium() -> Iterator[Browser]:
    """A headless Chromium for the duration of the block.

    Raises:
        BrowserUnavailableError: no Chromium was found, or the one found would not start.
    """
    executable = chromium_path()
    if executable is None:
        raise BrowserUnavailableError(
            f"no Chromium found (looked for {', '.join(CHROMIUM_NAMES)} on PATH and "
            f"${CHROMIUM_ENV}); install Debian's `chromium` package"
        )
    with sync_playwright() as playwright:
        try:
            browser = playwright.chromium.launch(
                executable_path=executable, args=list(LAUNCH_ARGS), headless=True
            )
        except PlaywrightError as error:
            first_line = str(error).strip().splitlines()[0] if str(error).strip() else "?"
            raise BrowserUnavailableError(f"{executable} would not start: {first_line}") from error
        try:
            yield browser
        finally:
            browser.close()


@dataclass
class Visit:
    """One page load, with what the page tried to do."""

    page: Page
    allowed: frozenset[str]
    console_errors: list[str] = field(default_factory=list)
    blocked_requests: list[str] = field(default_factory=list)  # each attempted, then aborted
    loaded: list[str] = field(default_factory=list)  # allowed requests that completed
    failed: list[str] = field(default_factory=list)  # allowed requests that did not


class Tab:
    """One browser tab (a page in its own context), loaded again for each visit: a new page
    costs a renderer process, a tenth of a second. JavaScript and the pixel ratio are fixed
    for the tab's life; the viewport and the colour scheme are set per visit.

    Every request but the visited file, the files allowed with it and data: URLs is recorded
    and aborted; console errors and uncaught page errors are recorded.
    """

    def __init__(
        self, browser: Browser, *, javascript: bool = True, device_scale_factor: float = 1
    ) -> None:
        self.context = browser.new_context(
            java_script_enabled=javascript,
            device_scale_factor=device_scale_factor,
            service_workers="block",
        )
        self.page = self.context.new_page()
        self.current = Visit(self.page, frozenset())
        self.context.route("**/*", self._route)
        self.page.on("request", self._request)
        self.page.on("requestfinished", lambda request: self.current.loaded.append(request.url))
        self.page.on("requestfailed", self._failed)
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda error: self.current.console_errors.append(f"{error}"))

    def visit(
        self,
        html: Path,
        *,
        width: int,
        height: int,
        color_scheme: str = "light",
        also_allowed: tuple[Path, ...] = (),
    ) -> Visit:
        """Load the file `html` afresh at this viewport and colour scheme."""
        url = html.resolve().as_uri()
        allowed = frozenset([url, *(path.resolve().as_uri() for path in also_allowed)])
        self.page.goto("about:blank")
        self.current = Visit(self.page, allowed)
        self.page.set_viewport_size({"width": width, "height": height})
        self.page.emulate_media(color_scheme=color_scheme)  # type: ignore[arg-type]
        self.page.goto(url, wait_until="load")
        return self.current

    def close(self) -> None:
        self.context.close()

    def _route(self, route: Route) -> None:
        url = route.request.url
        if url in self.current.allowed or url == "about:blank":
            route.continue_()
        else:
            route.abort("blockedbyclient")

    def _request(self, request: Request) -> None:
        # recorded here even when a Content-Security-Policy stops it before the route does
        url = request.url
        if url not in self.current.allowed and not url.startswith(("data:", "about:blank")):
            self.current.blocked_requests.append(f"{request.method} {url}")

    def _failed(self, request: Request) -> None:
        if request.url in self.current.allowed:
            self.current.failed.append(f"{request.url}: {request.failure}")

    def _console(self, message: ConsoleMessage) -> None:
        if message.type == "error":
            where = message.location.get("url", "")
            self.current.console_errors.append(
                f"{message.text} ({where})" if where else message.text
            )


@dataclass(frozen=True)
class ReportFiles:
    """A report written the two ways the CLI writes it."""

    name: str
    inline: Path  # CSS in a <style> element (the default)
    external: Path  # `--html-assets external`, served with STRICT_CSP: the page links `css`...
    css: Path  # ...written next to it
    has_progress: bool  # the (first) job has stage marks, so the page draws its progress


def write_report(
    logs: Path, out_dir: Path, name: str, input_label: str | None = None
) -> ReportFiles:
    """Analyse `logs` once and write its HTML report inline, and with external CSS as
    `forensics analyze --html-assets external` does (`<name>.css` beside `<name>.html`, in
    `out_dir/external/`), that one with STRICT_CSP."""
    upload = analyze_upload(logs)
    report = build_upload_report(upload, input_label or str(logs))
    out_dir.mkdir(parents=True, exist_ok=True)
    inline = out_dir / f"{name}.html"
    inline.write_text(render_upload_html(report, upload, GENERATED_AT), encoding="utf-8")
    external_dir = out_dir / "external"
    external_dir.mkdir(exist_ok=True)
    external = external_dir / f"{name}.html"
    css = external.with_suffix(".css")
    page = render_upload_html(report, upload, GENERATED_AT, css_href=css.name)
    # a viewer such as Jenkins sends the policy as a header; a file:// page can only carry it
    external.write_text(with_csp(page, STRICT_CSP), encoding="utf-8")
    css.write_text(stylesheet(), encoding="utf-8")
    return ReportFiles(name, inline, external, css, bool(upload.jobs[0].job.progress))


def with_csp(page: str, policy: str) -> str:
    """The page with `policy` as a <meta> Content-Security-Policy, first in its <head>."""
    head = page.index("<head>") + len("<head>")
    meta = f'\n<meta http-equiv="Content-Security-Policy" content="{policy}">'
    return page[:head] + meta + page[head:]


def sample_logs() -> dict[str, Path]:
    """Every shipped sample's `logs` folder, by sample name."""
    return {path.parent.name: path for path in sorted(SAMPLE_LOGS.glob("*/logs"))}
