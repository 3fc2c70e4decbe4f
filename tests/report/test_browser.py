"""The HTML report in a real browser (headless Chromium): every sample and a 4,096-rank job, on
a desktop and a phone (1,400 and 390 px wide), light and dark, with JavaScript on and off; a
case's id names all four (`skip_backward_hang-390-dark-js_off`).

Each case checks what a reader of the ticket would notice: errors in the console, requests
to the network (there must be none: each is recorded and aborted), the colour scheme not
followed, the verdict (`section.verdict`, or `section.jobs` for several jobs) or the progress
picture (the `svg[role=img]` of the section labelled `…progress-title`) not within the first
two screens, and a page wider than the screen: with every folded <details> opened, no element
may reach past the viewport unless it is inside a scroll container (overflow-x auto or
scroll); the failure names the outermost such boxes and the innermost elements causing them.
With `--html-assets external` (served with Jenkins' Content-Security-Policy) the page must
load its stylesheet, look as with the CSS inline, and hold no inline script.

No browser here (`chromium` missing and none named by $LOGFORENSICS_CHROMIUM) skips these
tests with the reason; `.ci/run` installs Debian's `chromium` when it can.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser

from tests.builders import marks, write_logs
from tests.report.browser import (
    BrowserUnavailableError,
    ReportFiles,
    Tab,
    Visit,
    chromium,
    sample_logs,
    write_report,
)

SAMPLES = sample_logs()
LARGE = "large_4096_ranks"
REPORTS = [*SAMPLES, LARGE]

# A desktop and a phone (390 x 844 is the CSS viewport of a current iPhone).
VIEWPORTS = {1400: 900, 390: 844}
SCHEMES = ("light", "dark")
JAVASCRIPT = {"js_on": True, "js_off": False}

# The verdict and the picture must start within this many screens of the top.
SCREENS = 2
# ...and show this much of themselves there (all of themselves when shorter).
SHOWN_PX = 100


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    try:
        with chromium() as started:
            yield started
    except BrowserUnavailableError as reason:
        pytest.skip(f"no browser can be started: {reason}")


@pytest.fixture(scope="module")
def tabs(browser: Browser) -> Iterator[dict[str, Tab]]:
    """A tab with JavaScript and one without, reused by every case."""
    opened = {setting: Tab(browser, javascript=on) for setting, on in JAVASCRIPT.items()}
    yield opened
    for tab in opened.values():
        tab.close()


class Reports:
    """Each report analysed and written once, on first use, for the whole module."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.written: dict[str, ReportFiles] = {}

    def __getitem__(self, name: str) -> ReportFiles:
        if name not in self.written:
            if name == LARGE:
                logs, label = large_job(self.root / "large" / "logs"), f"synthetic/{LARGE}"
            else:
                logs, label = SAMPLES[name], f"sample_logs/{name}/logs"
            self.written[name] = write_report(logs, self.root / "reports", name, label)
        return self.written[name]


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> Reports:
    return Reports(tmp_path_factory.mktemp("browser"))


def large_job(root: Path) -> Path:
    """4,096 ranks, a file each, three steps; rank 2,731 skips `after_step` at step 1."""
    files = {
        f"rank{rank}.log": marks(
            rank, range(3), skip={1: ("after_step",)} if rank == 2731 else None, timestamp=False
        )
        for rank in range(4096)
    }
    return write_logs(root, files)


@pytest.mark.parametrize("javascript", JAVASCRIPT)
@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("width", VIEWPORTS)
@pytest.mark.parametrize("name", REPORTS)
def test_report_reads_well_in_a_browser(
    tabs: dict[str, Tab], reports: Reports, name: str, width: int, scheme: str, javascript: str
) -> None:
    files = reports[name]
    seen = tabs[javascript].visit(
        files.inline, width=width, height=VIEWPORTS[width], color_scheme=scheme
    )
    problems = page_problems(seen, scheme, files.has_progress)
    if problems:
        pytest.fail("\n".join(problems), pytrace=False)


@pytest.mark.parametrize("name", REPORTS, ids=lambda name: f"{name}-1400-light-js_on")
def test_external_assets_load_the_stylesheet_and_run_no_inline_script(
    tabs: dict[str, Tab], reports: Reports, name: str
) -> None:
    files = reports[name]
    tab, size = tabs["js_on"], {"width": 1400, "height": VIEWPORTS[1400]}
    inline_styles = tab.visit(files.inline, **size).page.evaluate(STYLE_JS)
    seen = tab.visit(files.external, also_allowed=(files.css,), **size)
    problems = []
    css_url = files.css.resolve().as_uri()
    if css_url not in seen.loaded or seen.failed:
        problems.append(f"the stylesheet {files.css.name} was not loaded ({seen.failed})")
    links = seen.page.evaluate(STYLESHEETS_JS)
    if links != [css_url]:
        problems.append(f"expected one linked stylesheet, {css_url}; got {links}")
    styles = seen.page.evaluate(STYLE_JS)
    differ = [
        f"{element} {{{prop}: {value} (inline: {inline_styles.get(element, {}).get(prop)})}}"
        for element, props in styles.items()
        for prop, value in props.items()
        if inline_styles.get(element, {}).get(prop) != value
    ]
    if differ:
        problems.append(
            f"{len(differ)} computed styles differ from the inline-CSS page: {differ[:8]}"
        )
    inline = seen.page.evaluate(INLINE_SCRIPTS_JS)
    if inline:
        problems.append(f"inline scripts, which a strict Content-Security-Policy blocks: {inline}")
    # the policy's complaints (an inline script or style it blocked) are console errors
    problems += page_problems(seen, "light", files.has_progress)
    if problems:
        pytest.fail("\n".join(problems), pytrace=False)


def page_problems(seen: Visit, scheme: str, has_progress: bool) -> list[str]:
    """What every case checks, in words: requests to the network, console errors, the colour
    scheme not followed, the verdict or the picture far from the top (as the page opens), and
    horizontal overflow (with every folded <details> opened, as a reader would)."""
    problems = []
    if seen.blocked_requests:
        problems.append(f"requests (blocked): {seen.blocked_requests}")
    if seen.console_errors:
        problems.append(f"console errors: {seen.console_errors}")
    first = seen.page.evaluate(FIRST_SCREENS_JS)
    colours = first["colours"]
    if (colours["background_luminance"] < 0.5) != (scheme == "dark"):
        problems.append(f"the {scheme} colour scheme is not followed: {colours}")
    if colours["contrast"] < 4.5:
        problems.append(f"body text contrast {colours['contrast']:.1f}:1, under 4.5:1 ({colours})")
    screens = SCREENS * first["innerHeight"]
    near_top = first["near_top"]
    # several jobs: the overview of the jobs is what opens the page; each job's picture
    # follows its own verdict further down
    if not has_progress or seen.page.query_selector("section.jobs") is not None:
        del near_top["progress picture"]
    for what, box in near_top.items():
        if box is None:
            problems.append(f"no {what} on the page")
        elif not box["shown"]:
            problems.append(f"the {what} ({box['selector']}) is not displayed")
        elif box["top"] < 0 or box["top"] + min(box["height"], SHOWN_PX) > screens:
            problems.append(
                f"the {what} ({box['selector']}) starts at {box['top']:.0f} px, past the first "
                f"{SCREENS} screens ({screens} px)"
            )
    seen.page.evaluate(OPEN_FOLDS_JS)
    overflow = seen.page.evaluate(OVERFLOW_JS)
    if overflow["offenders"] or overflow["scrollWidth"] > overflow["innerWidth"]:
        problems.append(overflow_message(overflow))
    return problems


def overflow_message(overflow: dict[str, Any]) -> str:
    """The elements past the viewport, grouped by their shape (tag.class of the last three
    levels) and section, each group with its widest element's full selector."""
    groups: dict[tuple[str, str, bool], list[dict[str, Any]]] = {}
    for offender in overflow["offenders"]:
        key = (offender["shape"], offender["section"], offender["folded"])
        groups.setdefault(key, []).append(offender)
    lines = [
        f"horizontal overflow at {overflow['innerWidth']} px: the document is "
        f"{overflow['scrollWidth']} px wide; {len(overflow['offenders'])} elements reach past "
        "the viewport outside any scroll container (overflow-x: auto or scroll); outermost "
        "boxes and innermost causes:"
    ]
    for (shape, section, folded), members in groups.items():
        widest = max(members, key=lambda offender: offender["right"])
        count = f"{len(members)} x " if len(members) > 1 else ""
        where = f"{section}, in a folded <details> once opened" if folded else section
        lines.append(
            f"  {count}{shape} in {where}: {widest['kind']} {widest['width']:.0f} px wide, "
            f"right edge {widest['right']:.0f} px (widest: {widest['selector']})"
        )
    return "\n".join(lines)


# A CSS selector for an element: its path from the nearest ancestor with an id.
SELECTOR_JS = """
const selector = (el) => {
  const parts = [];
  for (let e = el; e && e !== document.documentElement; e = e.parentElement) {
    if (e.id) { parts.unshift(e.localName + "#" + CSS.escape(e.id)); break; }
    let part = e.localName;
    if (typeof e.className === "string" && e.className.trim())
      part += "." + e.className.trim().split(/\\s+/).map(CSS.escape).join(".");
    const same = e.parentElement
      ? [...e.parentElement.children].filter((s) => s.localName === e.localName) : [];
    if (same.length > 1) part += `:nth-of-type(${same.indexOf(e) + 1})`;
    parts.unshift(part);
  }
  return parts.join(" > ");
};
"""

# As the page opens: the colours of the body and where the verdict and the progress picture
# are. An upload of several jobs opens with its overview (each job's verdict), then job 1.
FIRST_SCREENS_JS = (
    """
() => {
"""
    + SELECTOR_JS
    + """
  const luminance = (colour) => {
    const [r, g, b] = colour.match(/[\\d.]+/g).slice(0, 3).map(Number).map((v) => {
      v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const transparent = (colour) => colour === "transparent" || /rgba\\(.*, 0\\)$/.test(colour);
  const body = getComputedStyle(document.body);
  let background = body.backgroundColor;
  if (transparent(background))
    background = getComputedStyle(document.documentElement).backgroundColor;
  if (transparent(background))  // the canvas: Chromium's default dark canvas is #121212
    background = matchMedia("(prefers-color-scheme: dark)").matches &&
      getComputedStyle(document.documentElement).colorScheme.includes("dark")
      ? "rgb(18, 18, 18)" : "rgb(255, 255, 255)";
  const [bg, fg] = [luminance(background), luminance(body.color)];
  const place = (el) => {
    if (!el) return null;
    const r = el.getBoundingClientRect(), style = getComputedStyle(el);
    return {
      selector: selector(el), top: r.top + window.scrollY, height: r.height,
      shown: r.width > 0 && r.height > 0 && style.visibility === "visible",
    };
  };
  const verdict = document.querySelector("section.jobs") ||
    document.querySelector("section.verdict");
  const progress = document.querySelector(
    "section[aria-labelledby$='progress-title'] svg[role=img]");
  return {
    innerHeight: window.innerHeight,
    colours: {background, text: body.color, background_luminance: bg,
              contrast: (Math.max(bg, fg) + 0.05) / (Math.min(bg, fg) + 0.05)},
    near_top: {"verdict": place(verdict), "progress picture": place(progress)},
  };
}
"""
)

# Open every folded <details>, marked so that what it held can be told apart.
OPEN_FOLDS_JS = """
() => document.querySelectorAll("details:not([open])").forEach((fold) => {
  fold.setAttribute("data-test-folded", "");
  fold.open = true;
})
"""

# Every element that reaches past the viewport and is not inside a scroll container (its own
# box, or its content spilling out with overflow-x visible): the outermost too-wide boxes and
# the innermost elements that make them so, with a selector, a shape and their section.
OVERFLOW_JS = (
    """
() => {
"""
    + SELECTOR_JS
    + """
  const vw = window.innerWidth, root = document.documentElement;
  const shape = (el) => {
    const parts = [];
    for (let e = el; e && e !== document.body && parts.length < 3; e = e.parentElement) {
      let part = e.localName;
      if (typeof e.className === "string" && e.className.trim())
        part += "." + e.className.trim().split(/\\s+/).join(".");
      parts.unshift(part);
    }
    return parts.join(" > ");
  };
  const section = (el) => {
    const s = el.closest("section[aria-labelledby]");
    return s ? "#" + s.getAttribute("aria-labelledby") : "no section";
  };
  const scrolls = (el) => ["auto", "scroll"].includes(getComputedStyle(el).overflowX);
  const inScroller = (el) => {
    for (let a = el.parentElement; a && a !== document.body && a !== root; a = a.parentElement)
      if (scrolls(a)) return true;
    return false;
  };
  const clippedBySvg = (el) => {
    const svg = el.ownerSVGElement;
    return svg && getComputedStyle(svg).overflow !== "visible";
  };
  const found = new Map();
  for (const el of document.body.querySelectorAll("*")) {
    if (clippedBySvg(el)) continue;
    const r = el.getBoundingClientRect();
    if (!r.width) continue;  // nothing to see (a <br>, a collapsed element)
    const box = r.right > vw + 0.5 || r.left < -0.5;
    let right = r.right;
    if (!box && el.scrollWidth > el.clientWidth + 1 && getComputedStyle(el).overflowX === "visible")
      right = r.left + el.scrollWidth;
    if (!box && right <= vw + 0.5) continue;
    if (inScroller(el)) continue;
    found.set(el, {kind: box ? "box" : "content", left: r.left, right, width: right - r.left});
  }
  const hasFoundInside = new Set();
  for (const el of found.keys())
    for (let a = el.parentElement; a && !hasFoundInside.has(a); a = a.parentElement)
      hasFoundInside.add(a);
  const offenders = [];
  for (const [el, o] of found) {
    const outermostBox = o.kind === "box" && found.get(el.parentElement)?.kind !== "box";
    if (outermostBox || !hasFoundInside.has(el))
      offenders.push({...o, selector: selector(el), shape: shape(el), section: section(el),
                      folded: el.closest("details[data-test-folded]") !== null});
  }
  return {innerWidth: vw, scrollWidth: root.scrollWidth, offenders};
}
"""
)

STYLESHEETS_JS = """
() => [...document.querySelectorAll("link[rel~=stylesheet]")].map((link) => link.href)
"""

# Some computed styles of the first element of each tag and class: equal on the page with
# its CSS inline and the page that links it, when the linked sheet loaded and applied.
STYLE_JS = """
() => {
  const props = ["color", "background-color", "font-family", "font-size", "font-weight",
    "max-width", "padding-left", "margin-top", "border-top-style", "display", "white-space",
    "overflow-x"];
  const styles = {};
  for (const el of [document.body, ...document.body.querySelectorAll("*")]) {
    const key = el.localName + (typeof el.className === "string" && el.className.trim()
      ? "." + el.className.trim().split(/\\s+/).join(".") : "");
    if (key in styles) continue;
    const style = getComputedStyle(el);
    styles[key] = Object.fromEntries(props.map((prop) => [prop, style.getPropertyValue(prop)]));
  }
  return styles;
}
"""

# Scripts a browser would run: no src, and a JavaScript type (a JSON data block is not run).
INLINE_SCRIPTS_JS = """
() => [...document.querySelectorAll("script:not([src])")]
  .filter((s) => ["", "text/javascript", "module", "application/javascript"]
    .includes((s.getAttribute("type") || "").trim().toLowerCase()))
  .map((s) => s.outerHTML.slice(0, 160))
"""
