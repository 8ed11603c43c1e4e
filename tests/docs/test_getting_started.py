"""``docs/getting-started.md`` opens with the three-line string example, then the pipeline, and
every Python example in it runs as written."""

from __future__ import annotations

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
    first, documents, pipeline = python_blocks(PAGE)  # each runs as written, in order
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


def test_the_install_command_installs_what_the_examples_read() -> None:
    """The sample folder has an HTML page: only ragloom-loaders reads HTML."""
    lines = PAGE.read_text(encoding="utf-8").splitlines()
    install = next(line for line in lines if line.startswith('python -m pip install "./core'))
    assert list((REPO / "examples" / "sample-docs").rglob("*.html"))
    assert "./plugins/loaders" in install.split()
