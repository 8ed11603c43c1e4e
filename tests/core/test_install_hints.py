"""Every hint to install one of ragloom's own distributions is worded by one helper
(``ragloom.plugins.install_hint``): from a checkout, or from the repository's URL with pip's
``#subdirectory=`` form, never from a package index ragloom is not on."""

from __future__ import annotations

import ast
import importlib.metadata
import json
import re
from collections.abc import Iterator
from email.message import Message
from pathlib import Path
from typing import Any

import pytest
from ragloom import _install
from ragloom.plugins import install_hint

REPO = Path(__file__).resolve().parents[2]


class _Dist:
    """Just what ``repository_url`` reads of an installed distribution."""

    def __init__(self, direct_url: dict[str, Any] | None, urls: list[str]) -> None:
        self._direct_url = direct_url
        self.metadata = Message()
        for url in urls:
            self.metadata["Project-URL"] = url

    def read_text(self, name: str) -> str | None:
        assert name == "direct_url.json"
        return None if self._direct_url is None else json.dumps(self._direct_url)


@pytest.fixture
def installed_as(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """``installed_as(direct_url, urls)``: ragloom's metadata as given, for one test."""

    def install(direct_url: dict[str, Any] | None = None, urls: tuple[str, ...] = ()) -> None:
        dist = _Dist(direct_url, list(urls))
        monkeypatch.setattr(importlib.metadata, "distribution", lambda name: dist)
        _install.repository_url.cache_clear()

    yield install
    _install.repository_url.cache_clear()


def test_a_hint_gives_the_checkout_and_the_repository_forms(installed_as: Any) -> None:
    installed_as(urls=("Repository, https://example.org/team/ragloom",))
    assert install_hint("ragloom-docling") == (
        "install ragloom-docling (ragloom is not on a package index: pip install "
        "./plugins/docling from the root of a ragloom checkout, or pip install "
        '"ragloom-docling @ git+https://example.org/team/ragloom#subdirectory=plugins/docling")'
    )
    # an extra is quoted in both forms; the core lives in core/
    assert 'pip install "./plugins/text[tokens]" from the root' in install_hint(
        "ragloom-text", "tokens"
    )
    assert install_hint("ragloom", "cli").endswith(
        'pip install "ragloom[cli] @ git+https://example.org/team/ragloom#subdirectory=core")'
    )


def test_a_vcs_install_pins_the_commit_it_came_from(installed_as: Any) -> None:
    installed_as(
        {"url": "https://example.org/team/ragloom.git", "subdirectory": "core",
         "vcs_info": {"vcs": "git", "commit_id": "0123abcd"}},
        ("Repository, https://elsewhere.example/ragloom",),
    )
    assert '"ragloom-lancedb @ git+https://example.org/team/ragloom.git@0123abcd#subdirectory=' \
        'plugins/lancedb"' in install_hint("ragloom-lancedb")


def test_without_a_known_repository_the_url_is_a_visible_placeholder(installed_as: Any) -> None:
    installed_as({"url": "file:///home/someone/ragloom/core", "dir_info": {"editable": True}})
    hint = install_hint("ragloom-rules")
    assert f'"ragloom-rules @ {_install.UNKNOWN_REPOSITORY}#subdirectory=plugins/rules"' in hint
    assert "/home/someone" not in hint  # a local path is no repository URL


_FIRST_PARTY_INSTALL = re.compile(r"pip install\s+['\"]?(ragloom\b|\./core\b|\./plugins/)")


def _messages(path: Path) -> Iterator[tuple[int, str]]:
    """The string constants of a module that are not docstrings, with their lines."""
    text = path.read_text(encoding="utf-8")
    if "pip install" not in text:
        return  # nothing to look at: parsing every module would cost seconds
    tree = ast.parse(text)
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if id(node) not in docstrings:
                yield node.lineno, node.value


def test_no_message_words_an_install_of_ragloom_by_hand() -> None:
    """A literal ``pip install ragloom-x`` (or ``./plugins/x``) in a message would drift from
    the helper's wording: every such message calls the helper instead."""
    sources = [REPO / "core" / "src", *sorted((REPO / "plugins").glob("*/src"))]
    # the helper itself; the kit's sample Markdown document (the new-plugin template's README,
    # which documents installing ragloom, is a data file: cli/templates/plugin/README.md.tmpl,
    # whose wording tests/cli/test_new_plugin.py checks)
    exempt = {
        REPO / "core/src/ragloom/_install.py",
        REPO / "core/src/ragloom/testing/helpers.py",
    }
    found = [
        f"{path.relative_to(REPO)}:{line}: {text.strip()[:80]}"
        for source in sources
        for path in sorted(source.rglob("*.py"))
        if path not in exempt
        for line, text in _messages(path)
        if _FIRST_PARTY_INSTALL.search(text)
    ]
    assert found == []
