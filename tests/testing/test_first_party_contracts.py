"""Every loader, embedder, store and reranker this repository registers runs the kit's contract
for its family somewhere in the suite.

The registered classes come from the entry points of this repository's distributions; the
contract tests are found by reading the test files (a class deriving from the family's contract,
directly or through another test class of its file, whose fixture builds the component).
"""

from __future__ import annotations

import ast
import functools
import tomllib
from importlib.metadata import entry_points
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TESTS = REPO / "tests"

#: entry-point group -> (kit contract class, the fixture that builds the component)
FAMILIES = {
    "ragloom.loaders": ("LoaderContract", "loader"),
    "ragloom.embedders": ("EmbedderContract", "embedder"),
    "ragloom.stores": ("StoreContract", "store_factory"),
    "ragloom.rerankers": ("RerankerContract", "reranker"),
}


def first_party_distributions() -> set[str]:
    names = {"ragloom"}
    for project in (REPO / "plugins").glob("*/pyproject.toml"):
        names.add(tomllib.loads(project.read_text(encoding="utf-8"))["project"]["name"])
    return names


def registered(group: str) -> dict[str, str]:
    """``dist:name`` -> class name of every first-party entry point of ``group``."""
    ours = first_party_distributions()
    return {
        f"{ep.dist.name}:{ep.name}": ep.value.rsplit(":", 1)[-1].rsplit(".", 1)[-1]
        for ep in entry_points(group=group)
        if ep.dist is not None and ep.dist.name in ours
    }


def _base_names(node: ast.ClassDef) -> list[str]:
    return [
        b.id if isinstance(b, ast.Name) else b.attr
        for b in node.bases if isinstance(b, ast.Name | ast.Attribute)
    ]


@functools.cache
def _test_modules() -> tuple[ast.Module, ...]:
    """Every test file of the suite, parsed once (each family's check reads them all)."""
    return tuple(
        ast.parse(path.read_text(encoding="utf-8")) for path in sorted(TESTS.rglob("test_*.py"))
    )


def covered(contract: str, fixture: str) -> set[str]:
    """Names called in the ``fixture`` of every test class deriving from ``contract``."""
    found: set[str] = set()
    for tree in _test_modules():
        classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}

        def derives(node: ast.ClassDef, seen: frozenset[str] = frozenset()) -> bool:
            for base in _base_names(node):
                if base == contract:
                    return True
                parent = classes.get(base)
                if parent is not None and base not in seen and derives(parent, seen | {base}):
                    return True
            return False

        def fixture_of(node: ast.ClassDef) -> ast.FunctionDef | None:
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == fixture:
                    return item
            for base in _base_names(node):
                parent = classes.get(base)
                if parent is not None:
                    return fixture_of(parent)
            return None

        for node in classes.values():
            if not derives(node):
                continue
            function = fixture_of(node)
            if function is None:
                continue
            for call in ast.walk(function):
                if isinstance(call, ast.Call):
                    func = call.func
                    if isinstance(func, ast.Name):
                        found.add(func.id)
                    elif isinstance(func, ast.Attribute):
                        found.add(func.attr)
    return found


def test_the_families_have_first_party_members() -> None:
    assert len(registered("ragloom.loaders")) >= 8
    assert set(registered("ragloom.embedders")) >= {"ragloom-semantic:model2vec"}
    assert set(registered("ragloom.stores")) >= {"ragloom-lancedb:lancedb"}
    assert set(registered("ragloom.rerankers")) >= {"ragloom-semantic:mmr"}


def test_every_first_party_loader_embedder_and_store_runs_its_contract() -> None:
    missing = []
    for group, (contract, fixture) in FAMILIES.items():
        tested = covered(contract, fixture)
        missing += [
            f"{name} ({cls}, {contract})"
            for name, cls in sorted(registered(group).items()) if cls not in tested
        ]
    assert not missing, f"registered without a contract test: {', '.join(missing)}"


def test_the_finder_sees_a_missing_contract() -> None:
    """The check can fail: a registered class no contract test builds is reported."""
    assert "LanceDBStore" in covered("StoreContract", "store_factory")
    assert "NotAStore" not in covered("StoreContract", "store_factory")
    assert "Model2VecEmbedder" in covered("EmbedderContract", "embedder")
    assert "MMRReranker" in covered("RerankerContract", "reranker")
    assert {"HtmlLoader", "PdfLoader", "DocxLoader", "TextLoader"} <= covered(
        "LoaderContract", "loader"
    )
