"""A chunker that declares itself lossless has every result checked: a document it leaves
partly (or wholly) uncovered fails, naming the gap; the other documents are written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from ragloom.plugins import Registry

from .conftest import check, pipeline_file


@pytest.mark.parametrize(
    ("chunker", "gap"),
    [("DropThird", "characters [16, 24)"), ("NoChunks", "characters [0, 24)")],
)
def test_a_lossless_chunker_that_loses_text_fails_the_item(rb, work: Path, chunker, gap) -> None:
    (work / "docs" / "bad.txt").write_text("twenty-four characters!\n", encoding="utf-8")
    spec = pipeline_file(work / "p.toml", f'import = "ragloom_rb_steps:{chunker}"')
    proc = rb("ingest", "docs", "-c", spec, "--allow-imports", "-o", "out.jsonl", "--no-cache",
              "--json")
    check(proc, 1)
    (failure,) = json.loads(proc.stdout)["failures"]
    assert failure["source"] == "docs/bad.txt"
    assert f"{chunker} lost text of document 'bad.txt': {gap}" in failure["reason"]
    parents = {json.loads(line)["parent"] for line in (work / "out.jsonl").read_text().splitlines()}
    assert parents == {"a.md", "b.txt", "c.py"}


def test_whitespace_gaps_are_allowed_when_declared(rb, work: Path) -> None:
    spec = pipeline_file(work / "p.toml", 'import = "ragloom_rb_steps:WhitespaceGaps"')
    check(rb("ingest", "docs", "-c", spec, "--allow-imports", "-o", "out.jsonl", "--no-cache",
             "-q"), 0)


def test_every_first_party_chunker_declares_itself_lossless() -> None:
    registry = Registry()
    first_party = {"ragloom-text", "ragloom-semantic"}
    checked = []
    for name, providers in registry.providers("chunker").items():
        for provider in providers:
            if provider.dist not in first_party or name == "auto":
                continue
            factory = registry.resolve("chunker", f"{provider.dist}:{name}")
            assert getattr(factory, "lossless", False), f"{provider.dist}:{name}"
            checked.append(name)
    assert {"recursive", "markdown", "sentence", "code"} <= set(checked)
