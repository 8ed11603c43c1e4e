"""``docs/getting-started.md`` opens with the three-line string example, then the pipeline, and
every Python example in it runs as written."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"
REPO = DOCS.parent


def python_blocks(page: Path) -> list[str]:
    return re.findall(r"```python\n(.*?)```", page.read_text(encoding="utf-8"), re.S)


def test_the_page_opens_with_three_lines_on_a_string_then_the_pipeline() -> None:
    text = (DOCS / "getting-started.md").read_text(encoding="utf-8")
    first_block = text.index("```")
    assert text[:first_block].strip() == "# Getting started"  # nothing before the example
    first = python_blocks(DOCS / "getting-started.md")[0]
    lines = [line for line in first.splitlines() if line.strip()]
    assert len(lines) == 3 and "split_text(" in lines[-1], lines
    assert text.index("## A pipeline") < text.index("## Install")


def test_the_examples_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("ragloom_text")
    monkeypatch.chdir(tmp_path)
    shutil.copy(REPO / "README.md", tmp_path / "README.md")
    first, documents, pipeline = python_blocks(DOCS / "getting-started.md")[:3]
    scope: dict[str, object] = {}
    exec(compile(first, "getting-started[0]", "exec"), scope)
    readme = (tmp_path / "README.md").read_text(encoding="utf-8")
    chunks = scope["chunks"]
    assert isinstance(chunks, list) and len(chunks) > 3 and "".join(chunks) == readme
    scope["text"] = readme
    exec(compile(documents, "getting-started[1]", "exec"), scope)
    exec(compile(pipeline, "getting-started[2]", "exec"), scope)
    result = scope["result"]
    assert len(result) == 5000 and result.failed == []  # type: ignore[attr-defined]
    assert (tmp_path / ".ragloom" / "cache.sqlite").exists()
