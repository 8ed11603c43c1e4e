"""Booleans are not numbers: ``chunk_size = true`` is refused, for every parameter of every
first-party component that takes a number, and in policies."""

from __future__ import annotations

import inspect
import typing
from pathlib import Path

import pytest
from ragloom import ConfigurationError
from ragloom.plugins import Registry

from .conftest import check, pipeline_file

FIRST_PARTY = {"ragloom", "ragloom-text", "ragloom-rules", "ragloom-semantic", "ragloom-dspy",
               "ragloom-docling", "ragloom-loaders", "ragloom-lancedb"}


def _numeric_params() -> list[tuple[str, str, str]]:
    registry = Registry()
    found = []
    for kind in ("chunker", "router", "decomposer", "filter", "embedder", "cache_store"):
        for name, providers in registry.providers(kind).items():
            for provider in providers:
                if provider.dist not in FIRST_PARTY:
                    continue
                try:
                    factory = registry.resolve(kind, f"{provider.dist}:{name}")
                    target = factory.__init__ if isinstance(factory, type) else factory
                    hints = typing.get_type_hints(target)
                except Exception:  # noqa: BLE001 - an optional dependency missing
                    continue
                for param in inspect.signature(factory).parameters:
                    hint = hints.get(param)
                    args = typing.get_args(hint) or (hint,)
                    if any(a in (int, float) for a in args) and bool not in args:
                        found.append((kind, f"{provider.dist}:{name}", param))
    return found


def test_a_boolean_number_is_refused_by_every_first_party_component() -> None:
    numeric = _numeric_params()
    names = {(name, param) for _kind, name, param in numeric}
    assert ("ragloom-text:recursive", "chunk_size") in names
    assert ("ragloom-rules:keyword", "min_evidence") in names
    accepted = []
    for kind, name, param in numeric:
        registry = Registry()
        params: dict[str, object] = {param: True}
        if kind == "router" and name.endswith(":keyword"):
            params["routes"] = [{"name": "a", "keywords": ["x"]}]
        try:
            registry.create(kind, name, params)
        except ConfigurationError as exc:
            assert param in str(exc), exc
        else:
            accepted.append(f"{name}.{param}")
    assert accepted == []


@pytest.mark.parametrize(
    ("params", "head", "phrase"),
    [
        ("{ chunk_size = true }", "", "parameter 'chunk_size' got True"),
        ("{ chunk_overlap = false }", "", "parameter 'chunk_overlap' got False"),
        ("{ chunk_size = 1.5 }", "", "parameter 'chunk_size' got 1.5"),
        ("{ chunk_size = \"500\" }", "", "parameter 'chunk_size'"),
        ("{}", "[policy]\nmax_attempts = true", "max_attempts"),
        ("{}", "[policy]\ntimeout = true", "timeout"),
        ("{}", "[policy]\nconcurrency = false", "concurrency"),
    ],
    ids=["size-true", "overlap-false", "size-float", "size-string", "attempts-true",
         "timeout-true", "concurrency-false"],
)
def test_through_the_cli(rb, work: Path, params: str, head: str, phrase: str) -> None:
    spec = pipeline_file(work / "p.toml", f'chunker = "recursive"\nparams = {params}', head=head)
    check(rb("ingest", "docs", "-c", spec, "-o", "out.jsonl", "--no-cache"), 2, phrase)
