"""``docs/getting-started.md`` opens with the three-line string example, then the pipeline, and
every Python example in it runs as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from support.doc_blocks import REPO, lay_out, python_blocks, run

DOCS = REPO / "docs"
PAGE = DOCS / "getting-started.md"


def test_the_page_opens_with_three_lines_on_a_string_then_the_pipeline() -> None:
    text = (DOCS / "getting-started.md").read_text(encoding="utf-8")
    first_block = text.index("```")
    assert text[:first_block].strip() == "# Getting started"  # nothing before the example
    first = python_blocks(PAGE)[0]
    lines = [line for line in first.code.splitlines() if line.strip()]
    assert len(lines) == 3 and "split_text(" in lines[-1], lines
    assert text.index("## A pipeline") < text.index("## Install")


def test_the_examples_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("ragloom_text")
    lay_out(PAGE, tmp_path)
    monkeypatch.chdir(tmp_path)
    first, documents, pipeline, ingest_search = python_blocks(PAGE)  # as written, in order
    scope: dict[str, object] = {"__name__": "__main__"}
    run(first, scope)
    readme = (tmp_path / "README.md").read_text(encoding="utf-8")
    chunks = scope["chunks"]
    assert isinstance(chunks, list) and len(chunks) > 3 and "".join(chunks) == readme
    run(documents, scope)
    assert scope["text"] == readme
    run(pipeline, scope)
    result = scope["result"]
    assert len(result) == 5000 and result.failed == []  # type: ignore[attr-defined]
    assert (tmp_path / ".ragloom" / "cache.sqlite").exists()


def test_ingest_then_search_in_python(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``ragloom.ingest()`` into an index, then ``ragloom.search()`` from it, as the page
    shows them: every sample document indexed, and passages whose offsets are exact."""
    for module in ("ragloom_text", "ragloom_rules", "ragloom_loaders", "ragloom_semantic",
                   "ragloom_lancedb"):
        pytest.importorskip(module)
    lay_out(PAGE, tmp_path)
    monkeypatch.chdir(tmp_path)
    block = python_blocks(PAGE)[3]
    assert "ragloom.ingest(" in block.code and "ragloom.search(" in block.code
    scope: dict[str, object] = {"__name__": "__main__"}
    run(block, scope)
    report = scope["report"]
    samples = [p for p in (tmp_path / "examples" / "sample-docs").rglob("*") if p.is_file()]
    assert report.files == len(samples) and report.failures == []  # type: ignore[attr-defined]
    assert report.chunks > report.documents > 0  # type: ignore[attr-defined]
    result = scope["result"]
    assert len(result.sub_queries) == 2  # type: ignore[attr-defined]
    passages = result.passages  # type: ignore[attr-defined]
    assert passages
    for passage in passages:
        if passage.start is None:  # a chunker's own text: no offsets in its document
            continue
        source = tmp_path / "examples" / "sample-docs" / passage.document_id
        text = document_text(source, passage.document_id)
        assert text[passage.start : passage.end] == passage.content


def document_text(source: Path, document_id: str) -> str:
    """The text a passage's offsets point into: the file's own, or, for an HTML page, the
    Markdown ragloom-loaders renders it to (the document that was chunked)."""
    if source.suffix.lower() not in (".html", ".htm"):
        return source.read_text(encoding="utf-8")
    from ragloom.loading import SourceFile
    from ragloom_loaders import HtmlLoader

    (page,) = HtmlLoader().load(SourceFile(document_id, source.read_bytes(), document_id))
    return str(page.content)


def test_the_install_command_installs_what_the_examples_read() -> None:
    """The sample folder has an HTML page: only ragloom-loaders reads HTML; and every plugin
    an example imports (``ragloom_lancedb``...) or uses (search embeds with ragloom-semantic)
    is installed."""
    lines = PAGE.read_text(encoding="utf-8").splitlines()
    install = next(line for line in lines if line.startswith('python -m pip install "./core'))
    assert list((REPO / "examples" / "sample-docs").rglob("*.html"))
    assert "./plugins/loaders" in install.split()
    code = "\n".join(block.code for block in python_blocks(PAGE))
    imported = set(re.findall(r"\bragloom_(\w+)", code))
    assert imported and "ragloom.search(" in code
    for plugin in imported | {"rules", "semantic"}:
        assert f"./plugins/{plugin}" in install.split(), plugin
