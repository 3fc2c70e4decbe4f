"""What the report says of hang dumps: where each rank was stuck (JSON and page), which dump
files were read for which rank, and a refused pickle listed as skipped, never loaded."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from logforensics.api import analyze_upload
from logforensics.headline import with_headlines
from logforensics.report.model import build_upload_report
from logforensics.report.render import render_upload_html
from tests.conftest import SAMPLE_LOGS
from tests.dumps.test_flight_recorder import job_logs, malicious_pickle

HANG = SAMPLE_LOGS / "pyspy_hang" / "logs"
FR = SAMPLE_LOGS / "flight_recorder_mismatch" / "logs"


def reported(path: Path) -> tuple[dict, str]:
    """The JSON report as written (through json, as a machine reads it) and the page."""
    upload = analyze_upload(path)
    report = with_headlines(build_upload_report(upload, str(path)), upload.jobs)
    return json.loads(json.dumps(report)), render_upload_html(report, upload)


def test_every_dumped_rank_says_where_it_was_stuck():
    report, html = reported(HANG)
    stuck = {rank["rank"]: rank["stuck"] for rank in report["ranks"]}
    assert sorted(stuck) == [0, 1, 2, 3] and all(stuck.values())
    assert stuck[2]["waiting"] == "dist.barrier"
    assert stuck[2]["user_frame"] == "train (dumps_train.py:267)"
    assert stuck[2]["innermost"].startswith("barrier (torch/distributed/distributed_c10d.py:")
    for rank in (0, 1, 3):
        assert stuck[rank]["user_frame"] == "train (dumps_train.py:246)"
        assert stuck[rank]["innermost"] != stuck[rank]["user_frame"]
    # the row of rank 2 on the page: what it waits in, its own frame, the innermost one and
    # the dump line it came from
    row = html.split('id="rank-2"')[1].split("</tr>")[0]
    assert "dist.barrier" in row and "<code>train (dumps_train.py:267)</code>" in row
    assert f"<code>{stuck[2]['innermost']}</code>" in row
    assert f'<span class="loc">{stuck[2]["file"]}:{stuck[2]["line"]}</span>' in row


def test_the_dump_files_are_listed_with_the_ranks_they_gave():
    report, html = reported(HANG)
    dumps = {dump["file"]: dump for dump in report["inputs"]["dumps"]}
    used = {name: dump["ranks"] for name, dump in dumps.items() if dump["used"]}
    # one dump per rank is used: the plain text one, the other forms of it are listed unused
    assert used == {f"pyspy/rank{rank}.txt": [rank] for rank in range(4)}
    assert dumps["pyspy-json/rank1.json"]["kind"] == "py-spy (JSON)"
    assert not dumps["pyspy-json/rank1.json"]["used"]
    assert "Hang dumps (" in html and "<code>pyspy-json/rank1.json</code>" in html


def test_a_malicious_pickle_is_listed_as_refused_and_the_job_still_diagnosed(tmp_path):
    marker = tmp_path / "pwned"
    root = job_logs(tmp_path)
    (root / "fr").mkdir()
    for rank in range(3):
        shutil.copy(FR / "fr" / f"rank_{rank}", root / "fr" / f"rank_{rank}")
    (root / "fr" / "rank_3").write_bytes(malicious_pickle(marker))
    report, html = reported(root)
    assert not marker.exists()
    skipped = {skip["file"]: skip["reason"] for skip in report["inputs"]["skipped"]}
    assert "posix.system" in skipped["fr/rank_3"]
    assert "fr/rank_3" not in {dump["file"] for dump in report["inputs"]["dumps"]}
    assert "<code>fr/rank_3</code>" in html
    assert report["verdict"] is not None
    assert all(rank["flight"] is None for rank in report["ranks"] if rank["rank"] == 3)


def test_dumps_that_name_no_rank_are_listed_as_read(tmp_path):
    # deepspeedai/DeepSpeed#7461's two pasted dumps, no process header, no rank
    root = tmp_path / "logs"
    shutil.copytree(Path(__file__).parents[1] / "data" / "dumps" / "deepspeed_7461", root)
    (root / "README.md").unlink()
    report, html = reported(root)
    dumps = {dump["file"]: dump for dump in report["inputs"]["dumps"]}
    assert {name: (dump["used"], dump["ranks"]) for name, dump in dumps.items()} == {
        "step_all_reduce.txt": (True, []),
        "backward_reduce_scatter.txt": (True, []),
    }
    assert "read; it names no rank" in html


def test_a_dump_alone_is_counted_in_the_page_s_header(tmp_path):
    # deepspeedai/DeepSpeed#1969's gdb py-bt (tests/data/dumps/gdb_pybt): no log, one dump
    from tests.dumps.test_gdb_pybt import PASTE

    shutil.copy(PASTE, tmp_path / PASTE.name)
    report, html = reported(tmp_path)
    header = html[html.index('<p class="meta">') :].split("</p>")[0]
    assert "0 files, 0 lines · 1 stack dump" in header
    assert [dump["kind"] for dump in report["inputs"]["dumps"]] == ["gdb py-bt stacks"]
