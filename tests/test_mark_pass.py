"""The plain stage marks read apart (mark_pass) must give what reading every line gives.

Dense stage marks skip framing and the parser families (see logforensics/mark_pass.py); the
careful path reads every line through them. Both must agree on the marks, who wrote them,
the events of the other lines and the line counts, on every real sample and on the shapes
that sit at the edge of the fast path.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from logforensics import streams
from logforensics.events import ParsedBatch, parse_batch, parse_files
from logforensics.intake import LogFile, discover, read_lines, tail_lines
from logforensics.mark_pass import read_apart
from tests.builders import analyze_files

SAMPLES = Path(__file__).resolve().parent.parent / "sample_logs"


def both_ways(files: tuple[LogFile, ...]) -> tuple[ParsedBatch, ParsedBatch]:
    [fast], _ = parse_files(files)
    careful = parse_batch(read_lines(files).frame)
    return fast, careful


def rows(frame: pl.DataFrame, *columns: str) -> list[tuple]:
    picked = frame.select(
        pl.col(c).cast(pl.String) if c in ("file", "stage") else c for c in columns
    )
    return sorted(picked.rows(), key=repr)


def assert_same(fast: ParsedBatch, careful: ParsedBatch) -> None:
    mark_columns = ("file", "line", "rank", "step", "stage", "epoch")
    assert rows(fast.marks, *mark_columns) == rows(careful.marks, *mark_columns)
    writer_columns = ("file", "rank", "rank_from", "marks", "last_line", "last_text", "last_time")
    assert rows(fast.mark_writers, *writer_columns) == rows(careful.mark_writers, *writer_columns)
    stats = ("file", "lines", "blank_lines", "recognised_lines", "last_line", "last_text")
    assert rows(fast.file_stats, *stats) == rows(careful.file_stats, *stats)
    if careful.found.height:
        event_columns = ("file", "line", "event", "rank", "text")
        assert rows(fast.found, *event_columns) == rows(careful.found, *event_columns)


@pytest.mark.parametrize(
    "sample", sorted(p.name for p in SAMPLES.iterdir() if (p / "logs").is_dir())
)
def test_every_sample_reads_the_same_both_ways(sample):
    files = discover(SAMPLES / sample / "logs").files
    assert_same(*both_ways(files))


# The edges of the fast path: launcher prefixes (from the srun + torchrun run of
# sample_logs/two_node_slurm), trailing fields, text before the keys, a stage that is no name,
# keys out of order, CRLF endings, blank lines and a last line without its newline.
EDGES = {
    "prefixed.log": [
        "0: [default0]:2026-11-30 15:24:03,403 INFO rank=0 step=0 stage=before_forward",
        "[rank1]:rank=1 step=0 stage=before_forward",
        "2026-11-30 15:24:03,403 INFO rank=2 step=0 stage=before_forward",
    ],
    "fields.log": [
        "2026-11-29 10:00:01,234 INFO rank=1 step=37 stage=before_backward loss=0.1 epoch=0",
        "2026-11-29 10:00:01,300 INFO local_rank=1 rank=1 step=37 stage=after_backward",
        "✓ rank=1 step=38 stage=before_forward",
        "rank=1 step=38 stage=fwd,",
        "rank=1 step=39 stage=,",
        "step=40 rank=1 stage=before_forward",
        "",
        "Traceback (most recent call last):",
        '  File "train.py", line 3, in <module>',
        "RuntimeError: boom",
    ],
}


def test_edge_shapes_read_the_same_both_ways(tmp_path):
    for name, lines in EDGES.items():
        (tmp_path / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    (tmp_path / "crlf.log").write_bytes(
        b"rank=3 step=0 stage=before_forward\r\n\r\nrank=3 step=0 stage=after_step"
    )
    assert_same(*both_ways(discover(tmp_path).files))


def test_a_writer_s_last_mark_far_from_its_file_s_end_reads_the_same_both_ways(tmp_path):
    # the texts of small files' last lines are cut from the end of the blob they are joined
    # into; a last mark more lines from the end than that walk goes is read by its row
    marks = [f"rank=5 step={step} stage=before_forward" for step in range(3)]
    after = [f"epoch 0 batch {batch} loss 0.5" for batch in range(200)]
    (tmp_path / "far.log").write_text("\n".join(marks + after) + "\n", encoding="utf-8")
    (tmp_path / "near.log").write_bytes(b"rank=6 step=0 stage=before_forward\r\nlast words\r\n")
    fast, careful = both_ways(discover(tmp_path).files)
    assert_same(fast, careful)
    texts = dict(fast.mark_writers.select("file", "last_text").rows())
    assert texts == {
        "far.log": "rank=5 step=2 stage=before_forward",
        "near.log": "rank=6 step=0 stage=before_forward",
    }
    last = dict(fast.file_stats.select("file", "last_text").rows())
    assert last == {"far.log": "epoch 0 batch 199 loss 0.5", "near.log": "last words"}


def test_a_console_tagged_by_its_launcher_reads_the_same_both_ways(tmp_path):
    # torchrun --tee's console of sample_logs/skip_backward_hang: `[default1]:` before every
    # rank's line, the marks read behind the tag in the pass
    console = SAMPLES / "skip_backward_hang" / "logs" / "launcher.log"
    (tmp_path / "launcher.log").write_bytes(console.read_bytes())
    fast, careful = both_ways(discover(tmp_path).files)
    assert fast.marks.height == 184
    assert_same(fast, careful)
    # the tag's local rank stays with each writer (what maps a node's local ranks to global)
    writers = ("rank", "prefix_local_rank", "rank_from")
    assert rows(fast.mark_writers, *writers) == rows(careful.mark_writers, *writers)
    assert rows(fast.mark_writers, *writers)[0] == (0, 0, "content")


def test_a_console_of_pytorchs_rank_tags_reads_the_same_both_ways(tmp_path):
    # `[rankN]:` before each mark of the same rank (the bench's prefixed console, from the
    # lines of sample_logs/skip_backward_hang); a tag naming another rank is left to framing
    lines = [
        f"[rank{rank}]:2026-11-30 15:04:31,197 INFO rank={rank} step={step} stage=before_forward"
        for step in range(3)
        for rank in range(4)
    ]
    lines.append("[rank1]:2026-11-30 15:04:31,197 INFO rank=2 step=3 stage=before_forward")
    (tmp_path / "console.log").write_text("\n".join(lines) + "\n", encoding="utf-8")
    fast, careful = both_ways(discover(tmp_path).files)
    assert fast.marks.height == 13
    assert_same(fast, careful)
    assert set(fast.mark_writers.get_column("rank_from")) == {"prefix"}


def test_a_framed_mark_that_ends_its_file_counts_once(tmp_path):
    # plain marks, then a tagged one as the file's last line (EDGES' shapes): that line was both
    # framed and read again from the file's end, and its writer counted it twice (the start of
    # the twenty-seventh session: 4 of 3 lines recognised)
    lines = [
        "2026-11-30 15:24:03,403 INFO rank=2 step=0 stage=before_forward",
        "2026-11-30 15:24:03,403 INFO rank=2 step=0 stage=after_step",
        "[rank1]:rank=1 step=0 stage=before_forward",
    ]
    analysis = analyze_files(tmp_path, {"console.log": lines})
    assert (analysis.recognised_lines, analysis.unrecognised_lines) == (3, 0)
    assert sorted(analysis.job.mark_writers.select("rank", "marks").rows()) == [(1, 1), (2, 2)]


def test_a_stage_name_is_cut_where_its_characters_end(tmp_path):
    (tmp_path / "rank1.log").write_text("rank=1 step=38 stage=fwd,\nrank=1 step=39 stage=,\n")
    fast, _ = both_ways(discover(tmp_path).files)
    assert fast.marks.select(pl.col("stage").cast(pl.String), "step").rows() == [("fwd", 38)]
    # the mark with no stage name is no mark: its line is not recognised
    assert fast.file_stats.item(0, "recognised_lines") == 1


def test_an_overlong_line_beside_marks_keeps_its_ends_only(tmp_path):
    # hostile input: one line of 3 MiB in a small file read by the mark pass is kept as its
    # first MAX_LINE and last KEEP characters, as the block reader keeps it; short lines whole
    overlong = "x" * (3 * streams.MAX_LINE) + "TAIL"
    lines = ["rank=0 step=0 stage=fwd", "short line", overlong, "rank=0 step=1 stage=fwd"]
    (tmp_path / "rank0.log").write_text("\n".join(lines) + "\n")
    read = read_apart(discover(tmp_path).files)
    texts = dict(read.rest.select("line", "text").iter_rows())
    assert texts[2] == "short line"
    assert "characters of this line cut" in texts[3] and texts[3].endswith("TAIL")
    assert len(texts[3]) < streams.MAX_LINE + streams.KEEP + 100
    assert read.marks.height == 2


def test_a_file_that_is_not_utf8_falls_back_to_careful_reading(tmp_path):
    (tmp_path / "rank0.log").write_bytes(
        b"rank=0 step=0 stage=a\n\xff\xfe bad\nrank=0 step=1 stage=a\n"
    )
    [batch], lossy = parse_files(discover(tmp_path).files)
    assert lossy == ("rank0.log",)
    assert batch.marks.height == 2


def test_a_batch_whose_other_lines_are_many_is_parsed_in_parts(tmp_path, monkeypatch):
    """NCCL INFO logs print few marks: their lines are parsed some files at a time, and the
    parts add up to what one part gives."""
    from logforensics import events

    source = SAMPLES / "uneven_loader_hang" / "logs"
    files = discover(source).files
    [whole], _ = parse_files(files)
    monkeypatch.setattr(events, "REST_BYTES", 1)
    parts, _ = parse_files(files)
    assert len(parts) == len({f.name for f in files})  # every file a part of its own
    joined = ParsedBatch(
        found=pl.concat([p.found for p in parts if p.found.height], how="diagonal_relaxed"),
        kept_lines=pl.concat([p.kept_lines for p in parts], how="diagonal_relaxed"),
        file_stats=pl.concat([p.file_stats for p in parts]),
        marks=pl.concat([p.marks for p in parts]),
        mark_writers=pl.concat([p.mark_writers for p in parts]),
    )
    assert_same(joined, whole)


# --- reading a file's last lines back -----------------------------------------------------


def log_file(path: Path) -> LogFile:
    return LogFile(path=path, name=path.name, size=path.stat().st_size)


def test_tail_lines_number_lines_as_the_reader_does(tmp_path):
    path = tmp_path / "x.log"
    path.write_bytes(b"first\r\nsecond\n\nfourth")
    assert tail_lines(log_file(path), 4, [1, 2, 3, 4]) == {
        1: "first",
        2: "second",
        3: "",
        4: "fourth",
    }


def test_tail_lines_reads_further_back_when_the_end_holds_too_few(tmp_path):
    path = tmp_path / "x.log"
    lines = [f"line {n} " + "x" * 300 for n in range(1, 201)]
    path.write_text("\n".join(lines) + "\n")
    found = tail_lines(log_file(path), 200, [3, 200])
    assert found == {3: lines[2], 200: lines[199]}
