"""A pipeline naming a component of one of ragloom's own plugins that is not installed is told
which plugin to install, and how (ragloom is installed from its checkout)."""

from __future__ import annotations

import importlib.metadata
import tomllib
from pathlib import Path

import pytest
from ragloom import build_pipeline
from ragloom.errors import PluginNotFoundError
from ragloom.kinds import kind_of_group
from ragloom.plugins import Registry
from ragloom.plugins._discovery import FIRST_PARTY, install_hint

PLUGINS = Path(__file__).resolve().parents[2] / "plugins"


def test_the_table_lists_exactly_what_the_plugins_declare() -> None:
    declared: dict[str, dict[str, str]] = {}
    for pyproject in sorted(PLUGINS.glob("*/pyproject.toml")):
        project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
        for group, names in project.get("entry-points", {}).items():
            row = kind_of_group(group)
            if row is None:
                continue  # hooks (ragloom.plugins), pytest plugins...
            for name in names:
                declared.setdefault(row.name, {})[name] = project["name"]
    assert declared == FIRST_PARTY


@pytest.fixture
def without(monkeypatch: pytest.MonkeyPatch):
    """Make ``importlib.metadata`` report the given distributions as not installed."""
    hidden: set[str] = set()
    real = importlib.metadata.distribution

    def distribution(name: str):  # type: ignore[no-untyped-def]
        if name in hidden:
            raise importlib.metadata.PackageNotFoundError(name)
        return real(name)

    monkeypatch.setattr(importlib.metadata, "distribution", distribution)
    return hidden


def test_a_missing_first_party_plugin_is_named_with_how_to_install_it(without: set[str]) -> None:
    without.add("ragloom-docling")
    registry = Registry(entry_points=False)  # nothing installed
    for name in ("docling", "ragloom-docling:docling"):
        with pytest.raises(PluginNotFoundError) as info:
            registry.create("chunker", name)
        message = str(info.value)
        assert f"unknown chunker {name!r}: it comes with ragloom-docling, which is not " in message
        assert install_hint("ragloom-docling") in message
    located = r"steps\[0\]\.chunker.*pip install \./plugins/docling "
    with pytest.raises(PluginNotFoundError, match=located):
        build_pipeline({"steps": [{"chunker": "docling"}]}, registry=registry)
    # Another distribution's "docling" is not ragloom-docling's: no hint then.
    with pytest.raises(PluginNotFoundError) as info:
        registry.create("chunker", "acme:docling")
    assert "ragloom-docling" not in str(info.value)


@pytest.mark.parametrize(
    ("kind", "name", "dist", "folder"),
    [
        ("router", "keyword", "ragloom-rules", "rules"),
        ("embedder", "model2vec", "ragloom-semantic", "semantic"),
        ("loader", "pdf", "ragloom-loaders", "loaders"),
        ("store", "lancedb", "ragloom-lancedb", "lancedb"),
        ("engine", "ray", "ragloom-ray", "ray"),
        ("length", "tokens", "ragloom-text", "text"),
    ],
)
def test_every_first_party_kind_gets_the_hint(
    without: set[str], kind: str, name: str, dist: str, folder: str
) -> None:
    without.add(dist)
    with pytest.raises(PluginNotFoundError) as info:
        Registry(entry_points=False).create(kind, name)
    assert install_hint(dist) in str(info.value)
    assert f"pip install ./plugins/{folder} from the root of a ragloom checkout" in str(info.value)


def test_an_installed_plugin_gets_no_install_hint_for_a_misspelt_name() -> None:
    pytest.importorskip("ragloom_text")
    with pytest.raises(PluginNotFoundError) as info:
        Registry().create("chunker", "recursiv")
    assert "did you mean 'recursive'" in str(info.value)
    assert "pip install" not in str(info.value)
