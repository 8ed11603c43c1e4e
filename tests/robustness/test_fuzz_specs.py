"""Fuzzing pipeline files and route files: whatever the data, building ends in a pipeline or
in a typed ragloom error (``ConfigurationError`` or ``PluginError``), never anything else; and
through the CLI never in a traceback."""

from __future__ import annotations

import contextlib
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ragloom import ConfigurationError
from ragloom.config import build_pipeline, parse_spec, read_data_file
from ragloom.errors import PluginError
from ragloom_rules.router import KeywordRouter

from .conftest import command, environment

KEYS = ["version", "name", "steps", "query", "policy", "cache", "chunker", "step", "params",
        "routes", "default", "filter", "import", "content_format", "include_formats",
        "chunk_size", "chunk_overlap", "separators", "is_separator_regex", "max_attempts",
        "timeout", "concurrency", "on_failure", "store", "path", "decomposer", "router",
        "keywords", "patterns", "weight", "default_route", "all", "any", "not", "metadata"]
NAMES = ["recursive", "markdown", "code", "sentence", "auto", "nope", "sqlite", "memory",
         "keyword", "heuristic", "sample", "abort", "emit", "ragloom-text:recursive", ""]

scalars = (
    st.none() | st.booleans() | st.integers(-3, 2000) | st.floats(allow_nan=True)
    | st.sampled_from(NAMES) | st.text(max_size=8)
)
data = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=5), inner, max_size=5),
    max_leaves=30,
)


def _spec_like() -> st.SearchStrategy[Any]:
    """Mostly well-shaped specs with fuzzed parts, so building gets past the schema often."""
    step = st.fixed_dictionaries(
        {"chunker": st.sampled_from(NAMES)},
        optional={"params": st.dictionaries(st.sampled_from(KEYS), scalars, max_size=3),
                  "policy": data, "cache": data, "name": scalars},
    )
    routed = st.fixed_dictionaries(
        {"routes": st.lists(st.fixed_dictionaries({"filter": data, "step": step}), max_size=2)},
        optional={"default": step},
    )
    return st.fixed_dictionaries(
        {"steps": st.lists(step | routed | data, min_size=1, max_size=3)},
        optional={"version": scalars, "policy": data, "cache": data, "name": scalars},
    ) | data


def _build(spec: Any) -> None:
    try:
        pipeline = build_pipeline(parse_spec(spec, source="fuzz.toml"), source="fuzz.toml")
    except (ConfigurationError, PluginError):
        return
    pipeline.close()


@pytest.fixture(scope="module")
def scratch(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("fuzz")


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spec=_spec_like())
def test_pipeline_specs_build_or_raise_a_configuration_error(spec, scratch: Path) -> None:
    with contextlib.chdir(scratch):  # cache files a spec names land here
        _build(spec)


@settings(max_examples=150, deadline=None)
@given(routes=data, default=scalars, extra=st.dictionaries(st.sampled_from(KEYS), scalars,
                                                           max_size=2))
def test_route_sets_build_or_raise_a_configuration_error(routes, default, extra) -> None:
    try:
        KeywordRouter(routes, default, **{k: v for k, v in extra.items()
                                          if k in ("min_evidence", "pattern_weight")})
    except ConfigurationError:
        pass


@settings(max_examples=100, deadline=None)
@given(text=st.text(max_size=200), suffix=st.sampled_from([".toml", ".yaml", ".json"]))
def test_pipeline_file_text_reads_or_raises_a_configuration_error(
    text: str, suffix: str, tmp_path_factory
) -> None:
    path = tmp_path_factory.mktemp("text") / f"p{suffix}"
    path.write_text(text, encoding="utf-8")
    try:
        _build(read_data_file(path, what="pipeline"))
    except ConfigurationError:
        pass


@settings(max_examples=6, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(spec=_spec_like(), routes=data)
def test_fuzzed_files_through_the_cli(work: Path, spec: Any, routes: Any) -> None:
    """A handful of generated pipeline and route files run by the real command."""
    (work / "p.json").write_text(json.dumps(spec, default=str), encoding="utf-8")
    (work / "r.json").write_text(json.dumps({"routes": routes}, default=str), encoding="utf-8")
    for args in (["ingest", "docs", "-c", "p.json", "-o", "out.jsonl", "--no-cache", "-q"],
                 ["plan", "--routes", "r.json", "a question about caches"]):
        proc = subprocess.run(command(*args), cwd=work, env=environment(), capture_output=True,
                              text=True, timeout=120)
        assert proc.returncode in (0, 1, 2), proc.stderr
        assert "Traceback" not in proc.stdout + proc.stderr
