"""The HTML report in Chinese: the page's own words are translated, log text, code and names
stay as they are, the English page is the one it always was, and hostile text stays escaped."""

from __future__ import annotations

import copy
import json
import re
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from logforensics.api import Upload, analyze_upload
from logforensics.headline import with_headlines
from logforensics.i18n import translated_report
from logforensics.report import render
from logforensics.report.model import build_upload_report
from logforensics.report.render import render_upload_html
from tests.builders import marks, write_logs
from tests.conftest import ROOT, SAMPLE_LOGS

FIELD_SAMPLES = ROOT / "tests" / "data" / "field_samples"
CASES = sorted(SAMPLE_LOGS.glob("*/logs")) + sorted(
    path.parent for path in FIELD_SAMPLES.glob("*/truth.json")
)
SKIP_SAMPLE = SAMPLE_LOGS / "skip_backward_hang" / "logs"
GENERATED_AT = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
HOSTILE = "<script>alert(1)</script><img src=x onerror=alert(2)>"


def case_name(path: Path) -> str:
    return path.parent.name if path.name == "logs" else path.name


def analysed(path: Path) -> tuple[dict, Upload]:
    """The report model as the CLI hands it to the page (with the verdicts' headlines)."""
    upload = analyze_upload(path)
    return with_headlines(build_upload_report(upload, str(path)), upload.jobs), upload


Model = Callable[[dict[str, Any], str], dict[str, Any]]


def page(path: Path, lang: str, model_of: Model = translated_report) -> str:
    report, upload = analysed(path)
    return render_upload_html(model_of(report, lang), upload, GENERATED_AT, lang=lang)


ELIDED = "（略）"


def log_text_left_out(report: dict[str, Any], lang: str) -> dict[str, Any]:
    """The translated model without the log text the page shows outside `<pre>` and
    `<code>` (a torchrun error file's exception message)."""
    said = translated_report(copy.deepcopy(report), lang)
    for job in [said, *said.get("jobs", [])]:
        for error in job.get("inputs", {}).get("error_files", []):
            error["exc_message"] = ELIDED
    return said


def page_words_only(report: dict[str, Any], lang: str) -> dict[str, Any]:
    """The translated model with the analyzer's sentences left out too, so that what English
    is left is the page's own. The sentences are `test_i18n`'s: the Markdown and the summary
    are made from the same translated model."""
    said = log_text_left_out(report, lang)
    said["why"] = ELIDED
    for job in [said, *said.get("jobs", [])]:
        verdict = job.get("verdict") or {}
        for key in ("summary", "reason", "where", "fix", "headline"):
            if key in verdict:
                verdict[key] = ELIDED
        for finding in job.get("findings", []):
            for key in ("summary", "note", "fix"):
                finding[key] = ELIDED if finding[key] else finding[key]
        if "reproduce" in job:
            job["reproduce"]["next_time"] = [ELIDED for _ in job["reproduce"]["next_time"]]
        inputs = job.get("inputs", {})
        for skipped in inputs.get("skipped", []):
            skipped["reason"] = ELIDED
        for remark in inputs.get("read_with_remarks", []):
            remark["remark"] = ELIDED
        if "job" in job:
            job["job"]["label"], job["job"]["distinct_by"] = ELIDED, [ELIDED]
    return said


# --- what a reader sees ---------------------------------------------------------------------

# Elements whose text is quoted log text or code, never translated.
QUOTING = {"pre", "code", "script", "style"}
VOID = {"meta", "link", "br", "hr", "img", "input", "wbr"}
# Elements that end a run of text (a cell, a heading, a list item, a picture's label).
BLOCKS = {
    "p",
    "li",
    "dt",
    "dd",
    "td",
    "th",
    "h1",
    "h2",
    "h3",
    "summary",
    "title",
    "text",
    "div",
    "section",
    "article",
    "tr",
}


class VisibleText(HTMLParser):
    """The page's text a reader sees or hears (aria-label included), one piece per block;
    text inside QUOTING elements and `file:line` locators (`span.loc`) left out."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.pieces: list[str] = []
        self.current: list[str] = []
        self.hidden: list[bool] = []  # per open element: is its text quoted

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        self._label(attributes)
        if tag in BLOCKS:
            self._end_piece()
        if tag in VOID:
            return
        quoted = tag in QUOTING or (tag == "span" and "loc" in (attributes.get("class") or ""))
        self.hidden.append(bool(self.hidden and self.hidden[-1]) or quoted)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._label(dict(attrs))

    def _label(self, attributes: dict[str, str | None]) -> None:
        if attributes.get("aria-label"):
            self._end_piece()
            self.pieces.append(attributes["aria-label"] or "")

    def handle_endtag(self, tag: str) -> None:
        if tag in VOID:
            return
        if self.hidden:
            self.hidden.pop()
        if tag in BLOCKS:
            self._end_piece()

    def handle_data(self, data: str) -> None:
        if self.hidden and self.hidden[-1]:
            self.current.append(" | ")  # quoted text parts the words around it
        else:
            self.current.append(data)

    def _end_piece(self) -> None:
        text = " ".join("".join(self.current).split())
        if text:
            self.pieces.append(text)
        self.current = []

    def close(self) -> None:
        super().close()
        self._end_piece()


def visible_text(html: str) -> list[str]:
    parser = VisibleText()
    parser.feed(html)
    parser.close()
    return parser.pieces


# --- what counts as English left over ------------------------------------------------------

MIN_WORDS = 3  # a run this long is a sentence or a phrase nobody translated
# A word is lower case after its first letter: identifiers (stage_divergence, dist.barrier),
# ALLCAPS names (NCCL, DDP), CamelCase types, file names and numbers are not words.
WORD = re.compile(r"[A-Za-z][a-z]*(?:'[a-z]+)?")
# Words Chinese technical text keeps in English.
TERMS = {"rank", "gloo", "torchrun", "watchdog", "barrier", "reducer", "backward", "attempt"}
# quotes, and code spans (the page shows a summary's `quoted log text` with its backticks)
QUOTED = re.compile(r"“[^”]*”|\"[^\"\n]*\"|(`+)(?:(?!\1).)+?\1")
CHUNK = re.compile(r"[!-~]+")  # printable ASCII without spaces: a word, a number, a name


def english_runs(text: str) -> list[str]:
    """Runs of MIN_WORDS or more English words outside quotes; words are in one run when only
    spaces part them (Chinese text, punctuation or a quote ends a run)."""
    text = QUOTED.sub(" | ", text)
    runs: list[str] = []
    run: list[str] = []
    end = 0
    for chunk in CHUNK.finditer(text):
        word = chunk.group()
        core = word.lstrip("([\"'").rstrip(",.;:!?)]\"'")
        if text[end : chunk.start()].strip() or core != word.rstrip(",.;:!?)]\"'"):
            runs, run = _ended(runs, run), []  # something other than spaces came between
        end = chunk.end()
        if WORD.fullmatch(core) and core.lower() not in TERMS:
            run.append(core)
            if core != word.lstrip("([\"'"):  # punctuation after it ends the run
                runs, run = _ended(runs, run), []
        else:
            runs, run = _ended(runs, run), []
    return _ended(runs, run)


def _ended(runs: list[str], run: list[str]) -> list[str]:
    return [*runs, " ".join(run)] if len(run) >= MIN_WORDS else runs


def english_left(html: str) -> list[tuple[str, str]]:
    """(run, the text it is in) for every run of English words a reader of `html` sees."""
    return [(run, text) for text in visible_text(html) for run in english_runs(text)]


@pytest.mark.parametrize(
    ("text", "runs"),
    [
        ("rank 2 跳过了第 5 步", []),
        ("结论：the logs say why", ["the logs say why"]),
        ("stage_divergence（rank 2）：Rank 2 skipped part of step 5", ["skipped part of step"]),
        ("the job hung", ["the job hung"]),
        ("two words", []),  # shorter than a sentence
        ("NCCL DDP gloo stage_divergence before_backward rank0.log:12 0-3", []),
        ('“label out of range” 和 "Timed out waiting for"', []),
        ("Evidence for the verdict ↓", ["Evidence for the verdict"]),
        ("(each step links to its finding):", ["each step links to its finding"]),
        ("发现（3）. Something new happened.", ["Something new happened"]),
    ],
)
def test_the_check_for_english_left_over(text, runs):
    assert english_runs(text) == runs


def test_the_visible_text_leaves_out_log_text_code_and_locators():
    html = (
        '<h2 id="x">结论 <span class="meta">置信度 高</span></h2><p>修改 <code>use the flag'
        ' here</code></p><span class="loc">logs/the long file.log:3</span><pre>Timed out'
        ' waiting for it</pre><svg aria-label="a label in English"><text>步</text></svg>'
    )
    assert visible_text(html) == ["结论 置信度 高", "修改 |", "| |", "a label in English", "步"]
    assert english_left(html) == [("a label in English", "a label in English")]


# --- the Chinese page -------------------------------------------------------------------------


# Samples whose every sentence the catalogue translates: their whole page is checked.
WHOLE_PAGES = [
    SAMPLE_LOGS / name / "logs"
    for name in (
        "skip_backward_hang",
        "skip_flag_fixed",
        "duplicate_device",
        "uneven_loader_hang",
        "monitored_barrier_laggard",
        "two_jobs_one_folder",
        "two_node_slurm",
        "detail_mismatch",
        "pyspy_hang",
        "flight_recorder_mismatch",
        "debug_server",
    )
]


@pytest.mark.parametrize("case", WHOLE_PAGES, ids=case_name)
def test_no_english_sentence_is_left_on_the_chinese_page(case):
    html = page(case, "zh", log_text_left_out)
    assert english_left(html) == []
    assert '<html lang="zh-Hans">' in html


@pytest.mark.parametrize("case", CASES, ids=case_name)
def test_the_page_s_own_words_are_chinese_for_every_sample(case):
    assert english_left(page(case, "zh", page_words_only)) == []


def dumps_and_large_job(root: Path) -> list[Path]:
    """Inputs for the parts of the page the samples do not reach: Flight Recorder and py-spy
    dumps; a job too large for a row per rank, with a long line and invalid UTF-8; restarts."""
    dumps = root / "dumps"
    files = {f"rank{r}.log": marks(r, range(6)) for r in (0, 1, 3)}
    files["rank2.log"] = marks(2, range(6), stop_after=(4, "before_backward"))
    write_logs(dumps, files)
    waits = {
        0: "all_reduce (torch/distributed/distributed_c10d.py:2501)",
        1: "_next_data (torch/utils/data/dataloader.py:630)",
        2: "wait (threading.py:320)",
        3: "_engine_run_backward (torch/autograd/graph.py:769)",
    }
    for rank, frame in waits.items():
        entries = [
            {
                "collective_seq_id": seq,
                "pg_id": 0,
                "process_group": ["0", "default_pg"],
                "profiling_name": "nccl:broadcast" if (rank, seq) == (2, 7) else "nccl:all_reduce",
                "input_sizes": [[4, 4]],
                "input_dtypes": ["Float"],
                "state": "completed" if seq < 7 else "scheduled",
                "retired": seq < 7,
                "is_p2p": False,
            }
            for seq in range(1, 8 if rank == 2 else 9)
        ]
        status = {"last_enqueued_collective": 8, "last_completed_collective": 6}
        trace = {"version": "2.4", "pg_status": {"0": status}, "entries": entries}
        (dumps / f"nccl_trace_rank_{rank}").write_text(json.dumps(trace))
        (dumps / f"pyspy_rank{rank}.txt").write_text(
            f"Process {1000 + rank}: python train.py\nPython v3.11.7 (/usr/bin/python3.11)\n\n"
            f'Thread {1000 + rank} (idle): "MainThread"\n    {frame}\n    train (train.py:40)\n'
        )
    large = root / "large"
    files = {f"rank{r}.log": marks(r, range(3)) for r in range(40)}
    files["rank17.log"] = marks(17, range(3), skip={1: ("after_step",)})
    files["rank17.log"][-1] += " " + "x" * 3000
    write_logs(large, files)
    (large / "rank5.log").write_bytes((large / "rank5.log").read_bytes() + b"bad \xff bytes\n")
    restarts = root / "restarts"
    for attempt in (0, 1):
        skip = {1: ("after_step",)}
        write_logs(
            restarts,
            {f"attempt_{attempt}/{r}/stdout.log": marks(r, range(3), skip=skip) for r in (0, 1)},
        )
        write_logs(restarts, {f"attempt_{attempt}/1/stdout.log": marks(1, range(3))})
    return [dumps, large, restarts]


def test_dumps_large_jobs_and_restarts_are_in_chinese_too(tmp_path, monkeypatch):
    monkeypatch.setattr(render, "MAX_FILE_ROWS", 10)
    dumps, large, restarts = dumps_and_large_job(tmp_path)
    html = page(dumps, "zh", page_words_only)
    assert "各 rank 的集合通信（Flight Recorder）" in html and "卡在何处（栈转储）" in html
    assert "（未完成）" in html and "已入队 #" in html
    assert english_left(html) == []
    html = page(large, "zh", page_words_only)
    assert "<th>数量</th>" in html and "无效的 UTF-8" in html
    assert re.search(r" …（还有 [\d,]+ 个字符）</pre>", html)
    assert "读取的文件（40；列出前 10 个）" in html
    assert english_left(html) == []
    html = page(restarts, "zh", page_words_only)
    assert "用 <code>--attempt N</code> 选择" in html
    assert english_left(html) == []


# --- English stays what it was --------------------------------------------------------------


@pytest.mark.parametrize("case", CASES, ids=case_name)
def test_the_english_page_is_the_default_page(case):
    report, upload = analysed(case)
    default = render_upload_html(report, upload, GENERATED_AT)
    assert default == render_upload_html(report, upload, GENERATED_AT, lang="en")
    assert '<html lang="en">' in default


def test_the_english_page_keeps_its_words():
    html = page(SKIP_SAMPLE, "en")
    assert '<h2 id="findings-title">Findings (' in html
    assert "<dt>Where</dt><dd>step 5, stage after_backward</dd>" in html
    assert "One column per training step (stage order learned from the logs: " in html
    assert "No finding of error severity: the ranks' logs agree" in page(
        SAMPLE_LOGS / "skip_flag_fixed" / "logs", "en"
    )


# --- log text stays log text ----------------------------------------------------------------


def test_the_chinese_page_escapes_hostile_log_text(tmp_path):
    files = {f"rank{r}.log": marks(r, range(4), timestamp=False) for r in (0, 1)}
    files["rank2.log"] = [
        f"{line} {HOSTILE}"
        for line in marks(2, range(4), skip={1: ("after_step",)}, timestamp=False)
    ]
    html = page(write_logs(tmp_path, files), "zh")
    assert HOSTILE not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<script>alert" not in html
    embedded = html.split('<script type="application/json" id="lf-report">')[1]
    assert "<" not in embedded.split("</script>")[0]
    assert "各 rank 的进度" in html


def test_log_text_and_names_are_not_translated():
    english, chinese = page(SKIP_SAMPLE, "en"), page(SKIP_SAMPLE, "zh")
    quoted = re.compile(r"<pre>.*?</pre>|<code>.*?</code>|<span class=\"loc\">[^ <（]*")
    in_english, in_chinese = Counter(quoted.findall(english)), Counter(quoted.findall(chinese))
    assert not in_english - in_chinese
    # the Chinese sentences mark more names as code (`after_backward`): the English words
    for extra in in_chinese - in_english:
        assert extra.removeprefix("<code>").removesuffix("</code>") in english
    assert "stage_divergence" in chinese and "attempt_0/2/stdout.log:2" in chinese


def test_the_chinese_page_of_an_upload_of_several_jobs():
    html = page(SAMPLE_LOGS / "two_jobs_one_folder" / "logs", "zh")
    assert re.search(r"<h2 id=\"jobs-title\">本次上传包含 \d+ 个作业</h2>", html)
    assert re.search(r"<title>一次上传中的 \d+ 个作业 · logforensics</title>", html)
    assert '<h2 id="j1-job-title">作业 1：' in html


# --- the command ----------------------------------------------------------------------------


def test_the_command_writes_the_chinese_page(tmp_path):
    command = [sys.executable, "-m", "logforensics", "analyze", str(SKIP_SAMPLE)]
    result = subprocess.run(
        [*command, "--lang", "zh", "--out", "report.html"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    html = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert '<html lang="zh' in html
    assert re.search(r'<h2 id="findings-title">发现（\d+）</h2>', html)
    assert '<h2 id="progress-title">各 rank 的进度</h2>' in html
