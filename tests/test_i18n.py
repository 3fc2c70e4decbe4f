"""The report in Chinese: every sentence the analyzer writes is in the catalogue, log text and
names are never translated, and English stays exactly what the rules and the reasoner wrote."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from logforensics import i18n
from logforensics.api import analyze_upload
from logforensics.cli import plain_summary, summary_lines
from logforensics.headline import with_headlines
from logforensics.i18n import catalogue, t, translate, translate_headline, translated_report
from logforensics.report.markdown import render_markdown
from logforensics.report.model import build_upload_report
from logforensics.report.render import render_json
from parsers.nccl import SUBSYSTEMS
from tests.conftest import ROOT, SAMPLE_LOGS
from tests.test_terminal_summary import HEADLINES

FIELD_SAMPLES = ROOT / "tests" / "data" / "field_samples"
CASES = sorted(path.parent for path in SAMPLE_LOGS.glob("*/expected.json")) + sorted(
    path.parent for path in FIELD_SAMPLES.glob("*/truth.json")
)
SKIP_SAMPLE = SAMPLE_LOGS / "skip_backward_hang" / "logs"


def logs_of(case: Path) -> Path:
    return case / "logs" if (case / "logs").is_dir() else case


def report_of(path: Path) -> tuple[dict, object]:
    upload = analyze_upload(path)
    return with_headlines(build_upload_report(upload, str(path)), upload.jobs), upload


# --- what counts as English left over ------------------------------------------------------

# Single words that Chinese technical text keeps in English; a run of two or more other
# English words is a sentence (or a phrase) nobody translated.
TERMS = {"rank", "torchrun", "srun", "mpirun", "gloo", "watchdog", "barrier", "reducer", "pid"}
FENCED = re.compile(r"^(`{3,}).*?^\1[ \t]*$", re.MULTILINE | re.DOTALL)
CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1")
QUOTED = re.compile(r"“[^”]*”|\"[^\"\n]*\"")
LOCATOR = re.compile(r"\S+:\d+\b")
WORD = re.compile(r"[A-Za-z][a-z]*(?:'[a-z]+)?")
CHUNK = re.compile(r"[!-~]+")  # printable ASCII without spaces: a word, a number, a name


def english_runs(text: str) -> list[str]:
    """Runs of two or more English words outside quoted log text (fenced blocks, code spans,
    quotes) and `file:line` locators. A word is lower case after its first letter, so kinds,
    options, paths, ALLCAPS names, CamelCase types and numbers are not words; a few technical
    terms stay English in Chinese text alone. Words are in one run when only spaces part them."""
    for quoted in (FENCED, CODE_SPAN, QUOTED, LOCATOR):
        text = quoted.sub(" | ", text)
    text = text.replace("\\", "")
    runs: list[str] = []
    run: list[str] = []
    end = 0
    for chunk in CHUNK.finditer(text):
        if text[end : chunk.start()].strip(" \t"):  # not only spaces between: a new run
            runs, run = _ended(runs, run), []
        end = chunk.end()
        word = chunk.group().lstrip("(")
        core = word.rstrip(",.;:!?)")
        if WORD.fullmatch(core) and core.lower() not in TERMS:
            run.append(core)
            if core != word:  # punctuation after it ends the run
                runs, run = _ended(runs, run), []
        else:
            runs, run = _ended(runs, run), []
    return _ended(runs, run)


def _ended(runs: list[str], run: list[str]) -> list[str]:
    """A run of two words or more, unless all are capitalised: a name (Flight Recorder)."""
    if len(run) < 2 or all(word[0].isupper() for word in run):
        return runs
    return [*runs, " ".join(run)]


@pytest.mark.parametrize(
    ("text", "runs"),
    [
        ("rank 2 跳过了第 5 步", []),
        ("the logs do not say why", ["the logs do not say why"]),
        ("结论：the logs say", ["the logs say"]),
        ("结论：the rank skipped", []),  # a lone word is no sentence
        ("在此期间它记录了：`WARNING rank=2 non-finite loss=nan -> skipping batch`。", []),
        ("```text\nTimed out waiting for recv\n```", []),
        ("`stage_divergence`（rank 0-3）：用 --max-bytes 和 TORCH_DISTRIBUTED_DEBUG=DETAIL", []),
        ("`launcher.log:96` 与 “label out of range” 和 rank0.log:5", []),
        ("NCCL 在 rank 10、11 上 went on to it", ["went on to it"]),
        ("rank 3 skipped, then stopped", ["then stopped"]),
        ("跳过了集合通信 #5（Flight Recorder）", []),  # a name, not a sentence
        ("Open the report", ["Open the report"]),
    ],
)
def test_the_check_for_english_left_over(text, runs):
    assert english_runs(text) == runs


def test_the_catalogue_itself_writes_no_english_sentence():
    book = catalogue("zh")
    templates = [pattern.template for pattern in book.sentences + book.phrases + book.headlines]
    for said in [*templates, *book.ui.values()]:
        bare = i18n.SLOT.sub(" | ", i18n.CONDITIONAL.sub(lambda m: m.group(2), said))
        assert english_runs(bare) == [], said


# --- every sample, in Chinese ---------------------------------------------------------------


@pytest.mark.parametrize("case", CASES, ids=lambda path: path.name)
def test_no_english_sentence_is_left_in_the_chinese_markdown_and_summary(case):
    report, upload = report_of(logs_of(case))
    markdown = render_markdown(report, "zh")
    summary = plain_summary(summary_lines(report, upload, "zh", Path("report.md")))
    assert english_runs(markdown) == [], markdown
    assert english_runs(summary) == [], summary
    assert re.search(r"[\u4e00-\u9fff]", summary.splitlines()[0])


@pytest.mark.parametrize("case", CASES, ids=lambda path: path.name)
def test_english_is_exactly_what_the_rules_wrote(case):
    report, upload = report_of(logs_of(case))
    assert translated_report(report, "en") is report
    assert render_markdown(report, "en") == render_markdown(report)
    assert render_json(translated_report(report, "en")) == render_json(report)


def test_lang_en_output_is_byte_identical_to_the_default(tmp_path):
    def run(*args: str) -> str:
        command = [sys.executable, "-m", "logforensics", "analyze", str(SKIP_SAMPLE), "-o", "-"]
        return subprocess.run(
            [*command, *args], cwd=tmp_path, capture_output=True, text=True, timeout=120
        ).stdout

    for output_format in ("json", "md"):
        said = run("-f", output_format)
        assert said and said == run("-f", output_format, "--lang", "en")


def test_log_text_names_kinds_and_options_stay_as_they_are():
    report, _ = report_of(SKIP_SAMPLE)
    said = translated_report(report, "zh")
    for english, chinese in zip(report["findings"], said["findings"], strict=True):
        assert chinese["evidence"] == english["evidence"]
        assert (chinese["kind"], chinese["id"], chinese["ranks"]) == (
            english["kind"],
            english["id"],
            english["ranks"],
        )
    assert said["ranks"] == report["ranks"] and said["inputs"]["path"] == report["inputs"]["path"]
    verdict = said["verdict"]
    assert (
        "`2026-11-30 15:04:31,251 WARNING rank=2 step=5 non-finite loss=nan -> skipping batch`"
        in (verdict["summary"])
    )
    assert "`dist.all_reduce(skip, op=dist.ReduceOp.MAX)`" in verdict["fix"]
    assert verdict["headline"].startswith("rank 2 在出现 NaN 损失后跳过了第 5 步的一部分")


# --- the parts ------------------------------------------------------------------------------


def test_fixed_strings_are_looked_up_and_filled_in():
    assert t("Verdict", "zh") == "结论"
    assert t("Findings ({count})", "zh", count=3) == "发现（3）"
    assert t("Findings ({count})", "en", count=3) == "Findings (3)"
    assert t("A label nobody translated", "zh") == "A label nobody translated"
    assert i18n.translator("zh")("ranks seen: {count}", count=4) == "看到 4 个 rank"


def test_the_fixed_strings_of_the_report_page_are_in_the_catalogue():
    ui = catalogue("zh").ui
    page = [
        "Why the job hung",
        "Verdict",
        "Where",
        "Confidence",
        "Why this one",
        "What to change:",
        "How it happened",
        "Evidence for the verdict ↓",
        "Ranks at a glance",
        "Progress per rank",
        "Findings ({count})",
        "No findings.",
        "To blame",
        "Sequence number",
        "To reproduce",
        "World size",
        "Hosts",
        "Debug settings",
        "Next time, to make this diagnosis surer:",
        "Inputs",
        "Files read",
        "Ranks inferred",
        "Files skipped or read in part",
        "Told apart by",
    ]
    assert [words for words in page if words not in ui] == []


def test_a_sentence_with_its_facts():
    said = translate(
        "Rank 3 went quiet before step 8 stage before_forward: ranks 0-2 went on to it and "
        "further.",
        "zh",
    )
    assert said == (
        "rank 3 在第 8 步的 `before_forward` 阶段之前没了动静：rank 0-2 继续运行到了那里并走得更远。"
    )


def test_the_ranks_several_unranked_oom_messages_were_given_are_said_in_chinese():
    # the oom rule's note where each process's message names its own GPU (a held-out case:
    # hiyouga/LlamaFactory#1158, GPUs 1 and 6 of one node)
    said = translate(
        "No line names their ranks: on a single node with one process per GPU, numbered in "
        "order (the launcher's convention), the processes on GPUs 1, 6 are ranks 1, 6.",
        "zh",
    )
    assert english_runs(said) == [] and "GPU 1, 6" in said and "rank 1, 6" in said


def test_sentences_nobody_translated_stay_english_and_the_rest_is_translated():
    said = translate(
        "Verdict. Something new happened here. Also explained by the verdict (oom).", "zh"
    )
    assert said == "结论。Something new happened here. 同样由结论（oom）解释。"


def test_a_sentence_that_opens_with_its_subject_does_not_take_in_the_sentence_before_it():
    # the collective_timeout finding of OpenRLHF#265: two sentences, the second opening with
    # `{who}`; that placeholder once swallowed the first sentence and left it as code
    said = translate(
        "Rank 3 timed out in ALLREDUCE #3856 after 30 min. Rank 0 reported no timeout, and the "
        "collective the others waited in is a barrier or a flag (one element): most often they "
        "wait there for work only rank 0 does (checkpoint, evaluation, logging) that outlasted "
        "the timeout. A guess from the shape of the hang: read rank 0's last lines.",
        "zh",
    )
    assert said.startswith("rank 3 在 ALLREDUCE #3856 中等待 30 分钟后超时。rank 0 没有报告超时")
    assert english_runs(said) == [], said


def test_a_quoted_message_is_never_translated_even_when_it_reads_like_our_sentences():
    said = translate(
        "Rank 1 raised ValueError (Rank 2 went quiet before step 3: ranks 0-1 went on to it and "
        "further.), caught it and kept going.",
        "zh",
    )
    assert "`Rank 2 went quiet before step 3: ranks 0-1 went on to it and further.`" in said


@pytest.mark.parametrize(("verdict", "said"), HEADLINES, ids=lambda value: str(value)[:40])
def test_every_headline_has_its_chinese(verdict, said):
    chinese = translate_headline(said, "zh")
    assert english_runs(chinese) == [], chinese
    assert chinese != said


def fixes_of_the_rules() -> list[str]:
    """Every fix text the rules hold as a constant, placeholders filled as they fill them."""
    import importlib
    import pkgutil

    import logforensics.rules as package

    values = {
        "who": "rank 3",
        "who_lower": "rank 3",
        "its": "its",
        "it": "it",
        "them": "it",
        "timeout": "20 s",
        "subsystem": "bootstrap",
        "collective": "collective #5",
    }
    texts = []
    for info in pkgutil.iter_modules(package.__path__):
        module = importlib.import_module(f"logforensics.rules.{info.name}")
        for name, value in vars(module).items():
            if "FIX" not in name:
                continue
            found = value.values() if isinstance(value, dict) else [value]
            texts += [text.format_map(Filled(values)) for text in found if isinstance(text, str)]
    return texts


class Filled(dict):
    """Placeholder values; a number for any placeholder not named (`#{seq}`)."""

    def __missing__(self, key: str) -> str:
        return "5"


@pytest.mark.parametrize("fix", fixes_of_the_rules(), ids=lambda text: text[:40])
def test_every_fix_a_rule_writes_is_in_the_catalogue(fix):
    assert english_runs(translate(fix, "zh")) == []


def test_a_catalogue_entry_must_name_groups_its_pattern_has():
    with pytest.raises(ValueError, match="names no group"):
        i18n._pattern({"en": "{who} timed out.", "zh": "{whom:t} 超时。"}, "zh")


def test_an_unknown_language_is_refused():
    with pytest.raises(ValueError, match="no catalogue"):
        translated_report({}, "fr")


def test_every_rank_s_sentence_is_not_read_as_one_rank_s_exception():
    # rules/rank_exception.py's words after a shared exception: the sentence of a rank that
    # raised must not take it for a rank named "Every rank" and quote the rest as its exception
    said = "Every rank raised an exception like it, so it is not one rank's divergence."
    translated = translate(said, "zh")
    assert "Every" not in translated and "`" not in translated


@pytest.mark.parametrize(
    "headline",
    [
        # an exception type with `::` and a message of capitalised words (a CUDA error)
        "2 processes died of the same c10::CUDAError: CUDA error: unknown error",
        # a store address c10d prints as a tuple (pytorch/pytorch#79388)
        "A process could not reach the rendezvous store at (GPU03, 29500): the job never started",
        # a busy rank's bar that has no name of its own: the analyzer's words, not the log's
        "Rank 0 was still busy with a progress bar when the others gave up; rank 1 waited for "
        "it in ALLREDUCE until the timeout (10 min)",
    ],
)
def test_headlines_with_unusual_parts_are_translated_whole(headline):
    assert english_runs(translate_headline(headline, "zh")) == []


@pytest.mark.parametrize("subsystem", [name for name, _ in SUBSYSTEMS])
def test_the_nccl_subsystem_a_failing_call_was_in_is_said_in_chinese(subsystem):
    said = translate(f"The failing call was in NCCL's {subsystem}.", "zh")
    assert said.startswith("失败的调用位于 NCCL 的 ") and english_runs(said) == []


def test_a_cpp_exception_s_headline_keeps_its_message_as_written():
    # pytorch/tensorpipe#460's parameter server (verbatim `what()`): the headline names the C++
    # type and quotes its message, which stays as the log wrote it
    said = translate_headline(
        'A process died of a std::runtime_error: In connectFromLoop at tensorpipe/transport/uv/uv.h:297 "rv < 0: too many open files"',
        "zh",
    )
    assert said.startswith("某个进程 因 `std::runtime_error` 退出：In connectFromLoop")
    assert english_runs(said.split("：", 1)[0]) == []
