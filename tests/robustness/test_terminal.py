"""Log text reaches the terminal through the summary and the errors: a terminal obeys the
control sequences in it (set the title, write the clipboard), so they must never get there."""

from __future__ import annotations

import pytest

from logforensics.terminal import printable
from tests.builders import marks, write_logs
from tests.test_cli import forensics


@pytest.mark.parametrize(
    ("hostile", "shown"),
    [
        ("\x1b]0;pwned\x07title", "title"),  # OSC: set the window title
        ("\x1b]52;c;ZXZpbA==\x07clip", "clip"),  # OSC 52: write the clipboard
        ("\x1b]8;;http://evil\x1b\\link\x1b]8;;\x1b\\", "link"),  # hyperlink, ST-terminated
        ("\x1b[1;31mred\x1b[0m plain", "red plain"),  # colours
        ("\x1b[2J\x1b[Hclear", "clear"),  # erase the screen, move the cursor
        ("\x9b31mX\x9b0m", "X"),  # 8-bit CSI
        ("\x9d0;pwned\x07Y", "Y"),  # 8-bit OSC
        ("\x1bP1$r\x1b\\dcs", "dcs"),  # DCS
        ("\x1b_apc\x1b\\\x1b^pm\x1b\\\x1bXsos\x1b\\done", "done"),  # APC, PM, SOS
        ("\x1bc\x1b(0\x1b7reset", "reset"),  # two-byte escapes: reset, line drawing, save
        ("ends with a lone escape\x1b", "ends with a lone escape"),
        ("unfinished \x1b[31", "unfinished 31"),
        ("bell\x07 back\x08space\x7f cr\r nul\x00 c1\x85", "bell backspace cr nul c1"),
    ],
)
def test_control_sequences_are_removed(hostile, shown):
    assert printable(hostile) == shown


def test_tabs_newlines_and_other_text_are_kept():
    text = "rank\t3\nverdict: stage_divergence — “quoted” 日本語 ✓"
    assert printable(text) == text


def test_an_unterminated_title_does_not_swallow_the_lines_after_it():
    assert printable("\x1b]0;pwned\nverdict: hang\n") == "0;pwned\nverdict: hang\n"


def test_a_log_line_quoted_in_the_verdict_reaches_the_terminal_without_its_sequences(tmp_path):
    files = {f"rank{r}.log": marks(r, range(8)) for r in (0, 1, 3)}
    rank2 = marks(2, range(8), skip={4: ("after_backward", "after_step")})
    departed = rank2.index("2026-11-29 10:00:04,002 INFO rank=2 step=4 stage=before_backward")
    rank2.insert(
        departed + 1,
        "2026-11-29 10:00:04,500 WARNING rank=2 \x1b]0;pwned\x07\x1b]52;c;ZXZpbA==\x07"
        "skipping batch \x1b[31mloss=nan\x1b[0m",
    )
    files["rank2.log"] = rank2
    result = forensics("analyze", str(write_logs(tmp_path / "logs", files)), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert 'In between it logged: "2026-11-29 10:00:04,500 WARNING rank=2 skipping batch ' in (
        result.stderr
    )
    assert "loss=nan" in result.stderr
    assert "\x1b" not in result.stderr and "\x07" not in result.stderr
    assert "pwned" not in result.stderr and "ZXZpbA==" not in result.stderr


def test_a_hostile_path_in_an_error_is_printed_without_its_sequences(tmp_path):
    result = forensics("analyze", "\x1b]0;pwned\x07missing", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr == "forensics: error: missing: no such file or folder\n"
