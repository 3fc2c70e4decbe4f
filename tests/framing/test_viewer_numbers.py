"""A paste copied from a viewer that numbers its lines: the numbers are no part of the log."""

from __future__ import annotations

from pathlib import Path

from tests.builders import analyze_files
from tests.framing import frame

THREADS = Path(__file__).parents[1] / "data" / "threads"
# NVIDIA/TransformerEngine#1275: rank 0's traceback, every line behind the viewer's number
NUMBERED = (THREADS / "te1275_viewer_numbered_traceback.log").read_text(encoding="utf-8")


def test_line_numbers_counting_on_with_the_file_are_peeled(tmp_path):
    lines = NUMBERED.splitlines()
    rows = frame(lines)
    assert rows[0]["prefix_rank"] == 0
    assert rows[-1]["message"].startswith("TypeError: fused_amax_and_scale_update_after_reduction")
    analysis = analyze_files(tmp_path, {"console.log": lines})
    died = analysis.verdict.finding
    assert (died.kind, died.ranks) == ("rank_exception", [0])
    assert died.evidence[0].text == lines[-1]  # quoted as the file has it
    assert analysis.unrecognised_lines == 0


def test_a_script_s_own_step_counter_in_front_of_its_prints_stays():
    # one print per step (`print(step, loss)`): numbers that count on with the lines, in front
    # of nothing a launcher or a logger writes
    lines = [f"{step} loss {1 / step:.4f}" for step in range(100, 106)]
    assert [row["message"] for row in frame(lines)] == lines


def test_numbers_that_skip_lines_are_the_log_s_own():
    lines = NUMBERED.splitlines()
    skipping = [lines[0], lines[2], lines[4], lines[1]]  # 110881, 110883, 110885, 110882
    assert "prefix_rank" not in frame(skipping)[0]
