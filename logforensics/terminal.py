"""Text made safe to print on a terminal: log lines are untrusted, and a terminal obeys the
control sequences in what it prints (set the title, write the clipboard, recolour or hide
the lines that follow)."""

from __future__ import annotations

import re

# ECMA-48 sequences, 7-bit (ESC ...) and 8-bit (C1) forms, removed whole so that their
# parameters do not print as litter. A string (OSC, DCS, SOS, PM, APC) ends at BEL or ST; one
# that does not end on its line is left to the single-character rules below, which print its
# body as plain text rather than swallow the lines after it.
CONTROL_SEQUENCE = re.compile(
    r"(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c\n]*(?:\x07|\x1b\\|\x9c)"  # strings
    r"|(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]"  # CSI: colours, cursor moves, erase
    r"|\x1b[ -/]*[0-~]"  # other escapes: ESC c (reset), ESC ( 0 (line drawing), ESC 7
    r"|[\x00-\x08\x0b-\x1f\x7f-\x9f]"  # what is left: a lone ESC, C0 but tab and newline, DEL, C1
)


def printable(text: str) -> str:
    """`text` without terminal control sequences or control characters (tabs and newlines
    kept)."""
    return CONTROL_SEQUENCE.sub("", text)
