"""A chunker that declares itself lossless has every result checked: a document it leaves
partly (or wholly) uncovered fails, naming the gap; the other documents are written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from ragloom.plugins import Registry

from .conftest import STEPS, check, pipeline_file


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


def test_a_chunker_not_declared_lossless_that_returns_nothing_is_reported(rb, work: Path) -> None:
    """A document that vanishes (no chunk, no failure) is not silent: one warning per chunker
    with the count, and each document listed in the summary."""
    for name in ("bad1.txt", "bad2.txt"):
        (work / "docs" / name).write_text("Some real text here.\n", encoding="utf-8")
    (work / "docs" / "bad-blank.txt").write_text("   \n\n", encoding="utf-8")  # nothing to lose
    spec = pipeline_file(work / "p.toml", 'import = "ragloom_rb_steps:NoChunksQuietly"')
    proc = rb("ingest", "docs", "-c", spec, "--allow-imports", "-o", "out.jsonl", "--no-cache")
    err = check(proc, 0)
    warnings = [line for line in err.splitlines() if "returned no chunks" in line]
    assert len(warnings) == 1, err
    assert "NoChunksQuietly returned no chunks for 2 non-empty documents" in warnings[0]
    assert "docs/bad1.txt: NoChunksQuietly returned no chunks" in proc.stdout
    assert "docs/bad2.txt: NoChunksQuietly returned no chunks" in proc.stdout
    assert "bad-blank.txt: NoChunksQuietly" not in proc.stdout  # only whitespace: skipped
    report = json.loads(rb("ingest", "docs", "-c", spec, "--allow-imports", "-o", "out.jsonl",
                           "--no-cache", "--json").stdout)
    assert sorted(s["source"] for s in report["skipped"] if s["kind"] == "no-chunks") == [
        "docs/bad1.txt", "docs/bad2.txt"
    ]
    assert any("returned no chunks for 2" in w for w in report["warnings"])


def test_the_library_warns_once_per_chunker_with_a_count(caplog, monkeypatch) -> None:
    import logging

    from ragloom import Document, Pipeline

    monkeypatch.syspath_prepend(str(STEPS))
    from ragloom_rb_steps import NoChunksQuietly

    docs = [Document(id=f"bad{i}", content="text") for i in range(5)]
    docs += [Document(id="good", content="text"), Document(id="bad-empty", content="")]
    with caplog.at_level(logging.WARNING, logger="ragloom"):
        result = Pipeline(NoChunksQuietly()).run_sync(docs)
    assert [c.parent_id for c in result] == ["good"]
    lines = [r.getMessage() for r in caplog.records if "returned no chunks" in r.getMessage()]
    assert len(lines) == 1 and "for 5 non-empty documents ('bad0', 'bad1', 'bad2', ...)" in lines[0]
    assert result.steps["NoChunksQuietly"].no_chunks == [f"bad{i}" for i in range(5)]
