"""The HTML report as a ticket reader gets it: self-contained, escaped, verdict first."""

from __future__ import annotations

import itertools
import json
import re
from html.parser import HTMLParser
from pathlib import Path

from logforensics.api import analyze
from logforensics.report.model import build_report
from logforensics.report.picture import LABEL_CHAR, build_picture
from logforensics.report.render import render_html
from tests.builders import marks, write_logs
from tests.conftest import SAMPLE_LOGS


def html_for(path: Path) -> str:
    analysis = analyze(path)
    return render_html(build_report(analysis, str(path)), analysis)


class Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []
        self.scripts_with_src = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name in ("src", "href", "action", "data", "xlink:href") and value:
                self.urls.append(value)
        if tag in ("script", "link", "img", "iframe") and dict(attrs).get("src"):
            self.scripts_with_src += 1


def test_no_external_resources(tmp_path):
    page = html_for(SAMPLE_LOGS / "skip_backward_hang" / "logs")
    links = Links()
    links.feed(page)
    assert links.urls, "the report links its findings internally"
    assert all(url.startswith("#") for url in links.urls), links.urls
    assert links.scripts_with_src == 0
    assert "<link " not in page and "@import" not in page and "url(" not in page


def test_verdict_comes_first_and_cites_evidence():
    page = html_for(SAMPLE_LOGS / "skip_backward_hang" / "logs")
    verdict_at = page.index('<section class="verdict"')
    findings_at = page.index('id="findings-title"')
    assert verdict_at < findings_at
    assert "Rank 2 skipped after_backward" in page[verdict_at:findings_at]
    assert re.search(r"attempt_0/2/stdout\.log:2\d", page), "evidence is shown as file:line"
    assert "all_reduce(skip, op=dist.ReduceOp.MAX)" in page


def test_hostile_log_text_is_escaped(tmp_path):
    payload = "<script>alert(1)</script><img src=x onerror=alert(2)>"
    files = {f"rank{r}.log": marks(r, range(4), timestamp=False) for r in (0, 1)}
    files["rank2.log"] = [
        line + " " + payload
        for line in marks(2, range(4), skip={1: ("after_step",)}, timestamp=False)
    ]
    page = html_for(write_logs(tmp_path, files))
    assert payload not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    # the embedded JSON cannot close its <script> element
    embedded = page.split('<script type="application/json" id="lf-report">')[1].split("</script>")[
        0
    ]
    assert "<" not in embedded
    assert payload in json.loads(embedded)["findings"][0]["evidence"][0]["text"]


def test_healthy_run_says_no_root_cause():
    page = html_for(SAMPLE_LOGS / "skip_flag_fixed" / "logs")
    assert "<title>No failure found · logforensics</title>" in page
    assert '<h2 id="verdict-title" class="verdict-title">Verdict: no failure found</h2>' in page


def test_progress_picture_marks_the_departure():
    page = html_for(SAMPLE_LOGS / "skip_backward_hang" / "logs")
    assert page.count(' departed"') == 1
    assert "rank 2, step 5: 2/4 stages" in page
    # the ranks that did the same share a row, after the rank that departed
    assert "ranks 0, 1, 3, step 5: 4/4 stages" in page


def test_inputs_list_every_file_read_and_skipped(tmp_path):
    write_logs(
        tmp_path,
        {"rank0.log": marks(0, range(2)), "rank1.log": marks(1, range(2)), "notes.md": ["x"]},
    )
    page = html_for(tmp_path)
    assert "<code>rank0.log</code>" in page and "<code>rank1.log</code>" in page
    assert "<code>notes.md</code>" in page and "not a log (.md file)" in page


def test_rank_table_shows_what_each_rank_wrote_last():
    page = html_for(SAMPLE_LOGS / "skip_backward_hang" / "logs")
    ranks_section = page[page.index('id="ranks-title"') : page.index('id="inputs-title"')]
    # each rank's stderr.log ends with the gloo timeout it died of
    assert ranks_section.count("Timed out waiting 20000ms") == 4


def test_code_in_fix_text_is_shown_as_code_and_stays_escaped():
    from logforensics.report.render import inline_code

    assert inline_code("use `drop_last=True` <b>") == "use <code>drop_last=True</code> &lt;b&gt;"


def test_code_our_summaries_name_is_shown_as_code_not_as_raw_backticks():
    page = html_for(SAMPLE_LOGS / "uneven_loader_hang" / "logs")
    verdict = page[page.index('<section class="verdict"') : page.index('id="progress-title"')]
    assert "(<code>loader sizes</code> print)" in verdict
    main = page[page.index("<main") : page.index('<script type="application/json"')]
    assert "`" not in main


def test_skip_is_the_verdict_and_the_later_timeout_its_symptom_with_evidence_of_both():
    page = html_for(SAMPLE_LOGS / "skip_backward_hang" / "logs")
    verdict = page[page.index('<section class="verdict"') : page.index('id="progress-title"')]
    assert "stage_divergence" in verdict and "Rank 2 skipped" in verdict
    timeout = page[page.index('id="collective_timeout-') :]
    timeout = timeout[: timeout.index("</article>")]
    assert "SYMPTOM".lower() in timeout.lower() and "A symptom" in timeout
    assert "Timed out waiting 20000ms for recv operation to complete" in timeout
    assert "after the divergence" in timeout  # how long after the skip the timeout fired


def test_torchrun_error_files_are_listed_with_their_exception():
    page = html_for(SAMPLE_LOGS / "skip_backward_hang" / "logs")
    section = page[page.index("torchrun error files") :]
    section = section[: section.index("</table>")]
    assert section.count("error.json</code>") == 4
    assert "Timed out waiting 20000ms" in section


def test_verdict_says_where_it_stands_in_words():
    page = html_for(SAMPLE_LOGS / "duplicate_device" / "logs")
    assert "<dt>Where</dt><dd>at start-up, before the first training step</dd>" in page
    page = html_for(SAMPLE_LOGS / "skip_backward_hang" / "logs")
    assert "<dt>Where</dt><dd>step 5, stage after_backward</dd>" in page


def test_reproduce_section_shows_launch_command_and_debug_settings():
    page = html_for(SAMPLE_LOGS / "two_node_slurm" / "logs")
    section = page[page.index('id="reproduce-title"') : page.index('id="ranks-title"')]
    assert "slurm-4242.out:1" in section and "torchrun --nnodes=2 --nproc_per_node=2" in section
    assert "TORCH_DISTRIBUTED_DEBUG=DETAIL" in section  # advice: it was not set
    page = html_for(SAMPLE_LOGS / "detail_mismatch" / "logs")
    section = page[page.index('id="reproduce-title"') : page.index('id="ranks-title"')]
    assert "<code>TORCH_DISTRIBUTED_DEBUG=DETAIL</code>" in section
    assert "Set TORCH_DISTRIBUTED_DEBUG=DETAIL" not in section


def test_large_jobs_keep_the_page_small_but_the_ranks_that_matter(tmp_path, monkeypatch):
    from logforensics.report import render

    monkeypatch.setattr(render, "MAX_RANK_ROWS", 8)
    monkeypatch.setattr(render, "MAX_FILE_ROWS", 5)
    files = {f"rank{r}.log": marks(r, range(3), timestamp=False) for r in range(20)}
    files["rank17.log"] = marks(17, range(3), skip={1: ("after_step",)}, timestamp=False)
    page = html_for(write_logs(tmp_path, files))
    ranks_section = page[page.index('id="ranks-title"') : page.index('id="inputs-title"')]
    # past MAX_RANK_ROWS ranks the table groups them by where they stopped, odd groups first
    rows = re.findall(r"<tr><td>([^<]*)</td><td>(\d+)</td>", ranks_section)
    assert rows[0] == ("17", "1")  # named by the verdict, alone
    assert rows[-1] == ("0-16, 18, 19", "19")
    assert "Files read (20; the first 5 listed)" in page


def test_very_long_lines_are_cut_on_the_page_but_not_in_json(tmp_path):
    from logforensics.report.render import render_json

    huge = "x" * 50_000
    files = {f"rank{r}.log": marks(r, range(3), timestamp=False) for r in (0, 1)}
    files["rank2.log"] = [
        line + " " + huge for line in marks(2, range(3), skip={1: ("after_step",)}, timestamp=False)
    ]
    path = write_logs(tmp_path, files)
    analysis = analyze(path)
    report = build_report(analysis, str(path))
    page = render_html(report, analysis)
    assert huge not in page and "more characters)" in page
    assert huge in render_json(report)


def test_rank_map_shows_every_rank_by_role():
    page = html_for(SAMPLE_LOGS / "skip_backward_hang" / "logs")
    section = page[page.index('id="rankmap-title"') :].split("</section>")[0]
    assert "<title>rank 2: named by the verdict</title>" in section
    # every other rank timed out in the gloo barrier: a symptom
    assert "a symptom: timed out, lost a peer, failed after the others (3)" in section


def test_rank_map_does_not_call_the_ranks_a_cause_lists_beside_its_culprit_causes(tmp_path):
    # Lightning-AI/pytorch-lightning#19106's last `Running collective` lines (tests/rules/
    # test_collective_mismatch.py): the verdict blames rank 1 and lists the ranks it left
    from tests.rules.test_collective_mismatch import LAST_RUNS_APART

    page = html_for(write_logs(tmp_path, {"train.log": LAST_RUNS_APART}))
    section = page[page.index('id="rankmap-title"') :].split("</section>")[0]
    assert "<title>rank 1: named by the verdict</title>" in section
    assert "named by another cause-like finding" not in section
    assert "logged, nothing wrong seen (3)" in section


def test_rank_map_marks_ranks_without_logs(tmp_path):
    mapping = "{{'rank': {r}, 'local_rank': {r}, 'device': {r}, 'world_size': 8}}"
    files = {f"rank{r}.log": [mapping.format(r=r)] + marks(r, range(3)) for r in range(6)}
    page = html_for(write_logs(tmp_path, files))
    assert "no log line (2)" in page and "<title>ranks 6-7: no log line</title>" in page


def test_rank_and_cell_colours_hold_3_to_1_against_the_panel_in_light_and_dark():
    from logforensics.report.render import stylesheet

    css = stylesheet()
    light, dark = css.split("@media (prefers-color-scheme: dark)")[:2]

    def colours(block: str) -> dict[str, str]:
        return dict(re.findall(r"--([a-z-]+):\s*(#[0-9a-f]{6})", block))

    def luminance(colour: str) -> float:
        channels = [int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
        linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
        return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]

    def contrast(a: str, b: str) -> float:
        high, low = sorted((luminance(a), luminance(b)), reverse=True)
        return (high + 0.05) / (low + 0.05)

    for block in (light, dark):
        palette = colours(block)
        states = [name for name in palette if name.startswith("rank-") or name == "cell-full"]
        assert len(states) >= 6
        for name in states + ["cell-partial", "departed"]:
            assert contrast(palette[name], palette["panel"]) >= 3, name


def test_a_run_a_restart_recovered_says_so_in_place_of_a_verdict():
    page = html_for(SAMPLE_LOGS / "restart_recovered" / "logs")
    assert "Verdict: no failure found" in page
    assert "The launcher restarted the workers after a failure" in page
    assert "ValueError: label out of range in batch" in page  # the earlier attempt's failure


def test_no_step_label_of_the_progress_picture_overprints_another(tmp_path):
    # the columns drawn around a departure at step 1500 start at step 1494: its label and
    # 1495's stood one cell apart, printed over each other
    files = {
        f"rank{rank}.log": marks(
            rank, range(1400, 1600), skip={1500: ("after_backward",)} if rank == 1 else None
        )
        for rank in range(2)
    }
    progress = analyze(write_logs(tmp_path, files)).job.progress
    labels = build_picture(progress).column_labels
    assert len(labels) > 2
    for (left, left_text), (right, right_text) in itertools.pairwise(labels):
        assert right - left >= (len(left_text) + len(right_text)) * LABEL_CHAR / 2


def test_evidence_whose_numbers_are_the_claim_is_not_folded():
    # sample_logs/uneven_tutorial_lines: rank 2's `Steps: 7` against the others' 6 must show,
    # not fold into "the same line from ranks 1, 2"
    page = html_for(SAMPLE_LOGS / "uneven_tutorial_lines" / "logs")
    assert "and the same line from ranks" not in page
    findings_at = page.index('id="findings-title"')
    assert "[GPU2] Epoch 1 | Batchsize: 4 | Steps: 7" in page[findings_at:]
    # alike lines of other findings still fold (the timeouts of skip_backward_hang)
    assert "and the same line from ranks" in html_for(SAMPLE_LOGS / "skip_backward_hang" / "logs")


def test_rank_map_draws_a_verdict_that_blames_none_of_its_ranks_as_the_verdict_s(tmp_path):
    # huggingface/text-generation-inference#1838's four shards waited on until the log ends
    # (tests/test_shard_wait.py): the verdict is theirs, no shard blamed
    from tests.test_shard_wait import FOUR_WAITING

    page = html_for(write_logs(tmp_path, {"tgi.log": FOUR_WAITING}))
    section = page[page.index('id="rankmap-title"') :].split("</section>")[0]
    assert "in the verdict, none of them blamed (4)" in section
    assert "named by another cause-like finding" not in section
