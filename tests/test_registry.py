"""A newcomer adds a parser or a rule by adding one file: the registry must find it, and the
README must document every finding kind."""

from __future__ import annotations

import importlib
import sys
import textwrap

from logforensics import registry
from tests.conftest import ROOT

VOCABULARY = {
    "last_common_stage",
    "stage_divergence",
    "loader_size_mismatch",
    "duplicate_device",
    "missing_rank",
    "collective_mismatch",
    "peer_lost",
    "collective_timeout",
    "monitored_barrier",
    "rank_exception",
    "reducer_unused_params",
    "nccl_error",
    "oom",
    "implausible_number",
    "worker_restart",
    "fr_mismatch",
    "stuck_location",
    "rpc_transport",
    "rendezvous_split",
}


def test_every_rule_kind_is_in_the_vocabulary_and_documented():
    readme = (ROOT / "README.md").read_text()
    for rule in registry.rules():
        assert rule.kind in VOCABULARY
        assert f"`{rule.kind}`" in readme
        module = sys.modules[rule.check.__module__]
        assert module.__doc__ and len(module.__doc__) > 40, f"{rule.kind} needs a docstring"


def test_every_parser_module_is_documented_in_the_readme():
    readme = (ROOT / "README.md").read_text()
    for parser in registry.parsers():
        module = sys.modules[parser.parse.__module__]
        assert module.__doc__, parser.name
        assert f"parsers/{module.__name__.split('.')[-1]}.py" in readme


def test_a_new_parser_file_is_picked_up(tmp_path, monkeypatch):
    package = tmp_path / "parsers"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "hello.py").write_text(
        textwrap.dedent('''
        """Says hello."""
        import polars as pl
        from logforensics.registry import LineParser

        def parse(lines):
            return lines.select("file", "line", pl.lit("hello").alias("event"))

        PARSER = LineParser(name="hello", literals=("hello",), parse=parse)
    ''')
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "parsers", raising=False)
    registry.parsers.cache_clear()
    try:
        importlib.invalidate_caches()
        assert [parser.name for parser in registry.parsers()] == ["hello"]
    finally:
        registry.parsers.cache_clear()
        sys.modules.pop("parsers.hello", None)
        sys.modules.pop("parsers", None)
        importlib.import_module("parsers")
