"""The Markdown summary to paste into a ticket: it renders, it says the verdict first, and
nothing a log line holds can leave its code block or become Markdown or HTML."""

from __future__ import annotations

import copy

import pytest
from markdown_it import MarkdownIt

from logforensics.api import analyze_upload
from logforensics.headline import with_headlines
from logforensics.report.markdown import render_markdown
from logforensics.report.model import build_upload_report
from tests.builders import marks, write_logs
from tests.conftest import ROOT, SAMPLE_LOGS

SKIP_SAMPLE = SAMPLE_LOGS / "skip_backward_hang" / "logs"


def parser() -> MarkdownIt:
    """CommonMark with raw HTML allowed (as GitHub and GitLab render it), tables and
    strikethrough: the most any ticket viewer would make of the text."""
    return MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])


def markdown_of(path, lang: str = "en") -> str:
    upload = analyze_upload(path)
    return render_markdown(
        with_headlines(build_upload_report(upload, str(path)), upload.jobs), lang
    )


def fences(text: str) -> list[str]:
    return [token.content for token in parser().parse(text) if token.type == "fence"]


@pytest.mark.parametrize(
    "path",
    [
        SKIP_SAMPLE,
        SAMPLE_LOGS / "two_jobs_one_folder" / "logs",
        SAMPLE_LOGS / "two_node_slurm" / "logs",
        ROOT / "tests" / "data" / "field_samples" / "horovod-3929-duplicate-gpu-mpirun",
    ],
    ids=lambda path: path.parent.name if path.name == "logs" else path.name,
)
def test_it_renders_as_markdown_with_the_headline_first(path):
    text = markdown_of(path)
    tokens = parser().parse(text)
    assert (tokens[0].type, tokens[0].tag) == ("heading_open", "h3")
    assert not [token for token in tokens if token.type == "html_block"]
    html = parser().render(text)
    assert "<script" not in html and "<img" not in html


def test_a_job_says_verdict_chain_evidence_findings_and_how_to_reproduce():
    text = markdown_of(SKIP_SAMPLE)
    lines = text.splitlines()
    assert lines[0] == (
        "### Rank 2 skipped part of step 5 after a NaN loss; ranks 0, 1 and 3 waited for it "
        "until the timeout (20 s)"
    )
    assert lines[2].startswith("**Verdict:** `stage_divergence` · rank 2 · step 5, stage")
    for label in ("**Why this one:**", "**What to change:**", "**How it happened:**"):
        assert any(line.startswith(label) for line in lines), label
    assert "1. where it left the path: `stage_divergence` (rank 2): Rank 2 skipped" in text
    assert "2. what followed: `collective_timeout` (ranks 0-3): Ranks 0-3 timed out" in text
    evidence = "2026-11-30 15:04:31,251 WARNING rank=2 step=5 non-finite loss=nan -> skipping batch"
    assert f"{evidence}\n" in fences(text)
    where = "`torchrun/" in text and "/attempt_0/2/stdout.log:24` (rank 2) · `stage_divergence`"
    assert where in text
    assert "- **info** `last_common_stage` (ranks 0, 1, 3): Every rank reached" in text
    assert "- World size: 4" in text and "- Hosts (1): `localhost`" in text


def test_the_launch_command_is_quoted_to_reproduce():
    text = markdown_of(SAMPLE_LOGS / "two_node_slurm" / "logs")
    assert "Launch (`slurm-4242.out:1`):" in text
    assert any(
        block.startswith("+ srun --label --ntasks-per-node=1 torchrun") for block in fences(text)
    )


def test_several_jobs_are_each_told():
    text = markdown_of(SAMPLE_LOGS / "two_jobs_one_folder" / "logs")
    assert text.startswith("### 2 jobs in this upload\n")
    assert text.count("\n#### Job ") == 2
    assert "**No failure found**" in text


# --- hostile log text -----------------------------------------------------------------------

HOSTILE = [
    "```\n# Injected heading\n```",
    "~~~~ and ```` and ``````````",
    "</code></pre><script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "[click me](javascript:alert(1)) ![x](https://evil.example/x.png)",
    "**bold** _it_ ~~gone~~ | a | b |",
    "\r```\r# heading after a carriage return",
    "ends with a backtick `",
]


def hostile_report() -> dict:
    """A real report whose every piece of log-borne text is hostile: evidence lines, file
    names, quoted messages in summaries, hosts, launch commands, settings, job label."""
    upload = analyze_upload(SKIP_SAMPLE)
    report = copy.deepcopy(
        with_headlines(build_upload_report(upload, str(SKIP_SAMPLE)), upload.jobs)
    )
    for finding in report["findings"]:
        for number, evidence in enumerate(finding["evidence"]):
            evidence["text"] = HOSTILE[number % len(HOSTILE)]
            evidence["file"] = "ra`nk<b>2</b>.log"
        finding["summary"] = f"Rank 2 logged: {' '.join(HOSTILE)}. Then more."
    report["verdict"]["summary"] = f"Rank 2 raised ValueError ({HOSTILE[2]} {HOSTILE[4]})."
    report["verdict"]["headline"] = f"Rank 2 died of a {HOSTILE[3]}"
    reproduce = report["reproduce"]
    reproduce["hosts"] = ["`host`", "<b>x</b>"]
    reproduce["launch_commands"] = [{"file": "a`b.log", "line": 1, "text": HOSTILE[0]}]
    reproduce["debug_settings"] = {"NCCL_DEBUG": "`INFO`<script>"}
    report["inputs"]["path"] = "logs/``"
    return report


def test_nothing_in_a_log_line_leaves_its_code_block_or_becomes_markup():
    text = render_markdown(hostile_report())
    tokens = parser().parse(text)
    blocks = [token.content for token in tokens if token.type == "fence"]
    quoted = {evidence.replace("\r", "\n") + "\n" for evidence in HOSTILE}
    assert set(blocks) <= quoted and len(blocks) >= 4  # each block holds exactly its line
    assert [token.tag for token in tokens if token.type == "heading_open"] == ["h3"]
    assert not [token for token in tokens if token.type in ("html_block", "table_open")]
    inline = [child for token in tokens if token.children for child in token.children]
    assert not [child for child in inline if child.type in ("html_inline", "link_open", "image")]
    assert not [child for child in inline if child.type == "s_open"]
    assert len([child for child in inline if child.type == "em_open"]) == 1  # our footer
    bold = [
        inline[index + 1].content
        for index, child in enumerate(inline)
        if child.type == "strong_open" and inline[index + 1].type == "text"
    ]
    assert bold and not [words for words in bold if "bold" in words]  # only our labels
    html = parser().render(text)
    assert "<script" not in html and "<img" not in html and "<b>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_a_hostile_line_in_the_logs_stays_in_its_block(tmp_path):
    hostile = "2026-11-29 10:00:05,002 WARNING skipping ``` <script>x</script> ```` [a](b)"
    files = {f"rank{r}.log": marks(r, range(8)) for r in (0, 1, 3)}
    files["rank2.log"] = (
        marks(2, range(5), stop_after=(5, "before_backward"))
        + marks(2, [5], stop_after=(5, "before_backward"))
        + [hostile]
        + marks(2, range(6, 8))
    )
    text = markdown_of(write_logs(tmp_path / "logs", files))
    assert f"{hostile}\n" in fences(text)
    html = parser().render(text)
    assert "<script>" not in html and "<a href" not in html


def test_the_chinese_markdown_keeps_log_text_and_names():
    text = markdown_of(SKIP_SAMPLE, "zh")
    assert text.startswith("### rank 2 在出现 NaN 损失后跳过了第 5 步的一部分")
    assert "**结论：** `stage_divergence` · rank 2" in text
    evidence = "2026-11-30 15:04:31,251 WARNING rank=2 step=5 non-finite loss=nan -> skipping batch"
    assert f"{evidence}\n" in fences(text)


def test_no_agreement_is_claimed_of_fewer_than_two_ranks(tmp_path):
    logs = write_logs(tmp_path, {"rank0.log": ["rank=0 step=1 stage=before_forward"]})
    text = markdown_of(logs)
    assert "fewer than two ranks" in text and "agree with each other" not in text


def test_an_unknown_world_size_is_bounded_by_the_highest_rank_seen(tmp_path):
    # ranks 11 and 12 of a job whose logs never state its size
    logs = write_logs(tmp_path, {f"rank{r}.log": marks(r, range(3)) for r in (11, 12)})
    assert "World size: unknown (at least 13: rank 12 is in the logs)" in markdown_of(logs)
    assert "进程总数：未知（至少 13：日志中有 rank 12）" in markdown_of(logs, "zh")


def test_warnings_alone_claim_no_agreement_of_the_ranks(tmp_path):
    # k2-fsa/icefall#1463, verbatim: ranks 2 and 0 of 4 warn that the fp16 grad scale
    # collapsed; no error is found, only warnings (ranks 1 and 3 are missing), and the report
    # does not say the ranks' logs agree
    lines = [
        "2024-01-14 01:03:00,826 WARNING [train.py:1057] (2/4) Grad scale is small: 1.2924697071141057e-26",
        "2024-01-14 01:03:01,769 WARNING [train.py:1057] (0/4) Grad scale is small: 1.2924697071141057e-26",
    ]
    text = markdown_of(write_logs(tmp_path, {"console.log": lines}))
    assert "agree with each other" not in text
    assert "No finding of error severity" in text


def test_a_headline_that_ends_in_code_ends_there(tmp_path):
    # a zh headline closes with the place in a code span: nothing may follow it (an empty tail
    # once became a stray backslash)
    dumps = tmp_path / "dumps"
    dumps.mkdir()
    split = ROOT / "tests" / "data" / "dumps" / "bigscience_prequel_split" / "pyspy_node.log"
    (dumps / "pyspy_node.log").write_bytes(split.read_bytes())
    heading = markdown_of(dumps, "zh").splitlines()[0]
    assert heading.endswith("`train (megatron/training.py:915)`")


def test_a_run_a_restart_recovered_says_so_in_the_summary():
    text = markdown_of(SAMPLE_LOGS / "restart_recovered" / "logs")
    assert "The launcher restarted the workers after a failure, and the attempt after" in text
