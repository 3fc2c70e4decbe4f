"""Property-based: whatever bytes, lines or archive trees come in, the analysis ends with a
report or one input error, and every line read is parsed or counted as unrecognised.

Hypothesis runs each property on MAX_EXAMPLES generated inputs, derandomised: the same inputs
every run (a failure is reproduced by running the test again); raise the count locally with
`--hypothesis-seed` and a larger `max_examples` to search further.
"""

from __future__ import annotations

import gzip
import io
import tarfile
import zipfile
from pathlib import Path

import zstandard
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from logforensics.api import analyze
from logforensics.errors import LogForensicsError
from logforensics.intake import discover

MAX_EXAMPLES = 40
SETTINGS = settings(
    max_examples=MAX_EXAMPLES,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

# Shapes of the lines the parsers read, with holes for numbers and words (from the samples and
# tests/data: a stage mark, a mapping print, loader sizes, a watchdog timeout, an NCCL init, a
# monitored barrier, a traceback, a tqdm bar).
SHAPES = [
    "rank={a} step={b} stage={w}",
    "2026-11-30 15:04:31,251 INFO rank={a} step={b} stage={w} loss=nan epoch={c}",
    "{{'rank': {a}, 'local_rank': {b}, 'device': {c}, 'world_size': {d}, 'host': '{w}'}}",
    "loader sizes: [{a}, {b}, {c}]",
    "[rank{a}]:[E1130 15:04:51.000000 1 ProcessGroupNCCL.cpp:632] [Rank {a}] Watchdog caught "
    "collective operation timeout: WorkNCCL(SeqNum={b}, OpType=ALLREDUCE, NumelIn={c}, "
    "NumelOut={c}, Timeout(ms)={d}) ran for {d} milliseconds before timing out.",
    "{w}:{a}:{b} [{c}] NCCL INFO comm 0x{b} rank {a} nranks {d} cudaDev {c} busId {b}0 - "
    "Init COMPLETE",
    "RuntimeError: Rank {a} failed to pass monitoredBarrier in {d} ms",
    "Traceback (most recent call last):",
    '  File "{w}.py", line {a}, in {w}',
    "{a}%|#####     | {b}/{c} [00:0{a}<00:00, {d}.00it/s]",
    "[default{a}]:{w}",
    "{a}: {w} rank={b} step={c} stage={w}",
]
numbers = st.one_of(
    st.integers(0, 16), st.integers(-(2**70), 2**70), st.sampled_from(["", "x", "1e9", "-0"])
)
words = st.text(st.characters(blacklist_categories=("Cs",)), max_size=24)


@st.composite
def log_lines(draw) -> str:
    lines = []
    for _ in range(draw(st.integers(1, 40))):
        shape = draw(st.sampled_from(SHAPES))
        values = {key: draw(numbers) for key in "abcd"}
        lines.append(shape.format(**values, w=draw(words)))
    return "\n".join(lines) + draw(st.sampled_from(["", "\n", "\r\n"]))


def outcome(folder: Path) -> str:
    """'report' or 'input error'; any other end fails the property."""
    try:
        analysis = analyze(folder)
    except LogForensicsError:
        return "input error"
    assert analysis.lines == (
        analysis.recognised_lines + analysis.unrecognised_lines + analysis.blank_lines
    )
    return "report"


@SETTINGS
@given(st.lists(st.binary(max_size=4096), min_size=1, max_size=4))
def test_random_bytes_end_in_a_report_or_an_input_error(tmp_path_factory, blobs):
    folder = tmp_path_factory.mktemp("bytes")
    for index, blob in enumerate(blobs):
        (folder / f"rank{index}.log").write_bytes(blob)
    assert outcome(folder) in ("report", "input error")


@SETTINGS
@given(st.lists(log_lines(), min_size=1, max_size=4))
def test_lines_that_look_valid_end_in_a_report_or_an_input_error(tmp_path_factory, logs):
    folder = tmp_path_factory.mktemp("lines")
    for index, text in enumerate(logs):
        (folder / f"rank{index}.log").write_text(text, encoding="utf-8", errors="surrogatepass")
    assert outcome(folder) in ("report", "input error")


# An archive tree: members are text, random bytes, or archives of their own (nesting bounded).
member_bytes = st.one_of(log_lines().map(str.encode), st.binary(max_size=512))


def packed(members: dict[str, bytes], kind: str) -> bytes:
    buffer = io.BytesIO()
    if kind == "zip":
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
            for name, data in members.items():
                archive.writestr(name, data)
        return buffer.getvalue()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    tar = buffer.getvalue()
    if kind == "tar.gz":
        return gzip.compress(tar)
    if kind == "tar.zst":
        return zstandard.ZstdCompressor().compress(tar)
    return tar


archives = st.recursive(
    member_bytes,
    lambda inner: st.builds(
        packed,
        st.dictionaries(st.from_regex(r"[a-z0-9/._-]{1,12}", fullmatch=True), inner, max_size=4),
        st.sampled_from(["tar", "tar.gz", "tar.zst", "zip"]),
    ),
    max_leaves=8,
)


@SETTINGS
@given(archives, st.integers(0, 64))
# what hypothesis 6.170 drew under polars 2.2, whose `str.find` counts characters: a stage
# mark after characters of several bytes, which the mark layout once sliced by bytes
@example("0: \x80\U00010000\U00010000 rank=0 step=0 stage=\x80\U00010000\U00010000".encode(), 0)
def test_archive_trees_list_every_member_once_and_never_fail(tmp_path_factory, data, cut):
    folder = tmp_path_factory.mktemp("archives")
    upload = folder / "upload.tar.gz"
    upload.write_bytes(data[: len(data) - cut] if cut < len(data) else data)
    before = upload.read_bytes()
    inventory = discover(folder)
    names = [f.name for f in inventory.files]
    assert len(names) == len(set(names))
    assert outcome(folder) in ("report", "input error")
    assert upload.read_bytes() == before
