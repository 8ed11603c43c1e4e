"""Helpers for the ``ragloom`` command tests (paths of the examples, chunk checks)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
SAMPLE_DOCS = EXAMPLES / "sample-docs"
PIPELINES = EXAMPLES / "pipelines"


#: Suffixes whose loader turns the file into other text (HTML, PDF, DOCX -> Markdown or text).
CONVERTED = frozenset({".html", ".htm", ".xhtml", ".pdf", ".docx"})


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


def check_chunks_against_sources(chunks: list[dict[str, Any]], root: Path) -> dict[str, str]:
    """Every chunk with a span is exactly its source's text[start:end]; spans cover the text.

    Returns the source texts by document id.
    """
    texts: dict[str, str] = {}
    covered: dict[str, list[tuple[int, int]]] = {}
    for chunk in chunks:
        parent = chunk["parent"]
        if Path(parent).suffix in CONVERTED:
            continue  # offsets are into the text its loader extracted, not the file's bytes
        if parent not in texts:
            texts[parent] = (root / parent).read_bytes().decode("utf-8")
        if chunk["start"] is None:
            continue
        text = texts[parent]
        assert chunk["content"] == text[chunk["start"] : chunk["end"]], chunk["id"]
        covered.setdefault(parent, []).append((chunk["start"], chunk["end"]))
    for parent, spans in covered.items():
        spans.sort()
        reach = 0
        for start, end in spans:
            assert start <= reach, f"{parent}: text [{reach}, {start}) is in no chunk"
            reach = max(reach, end)
        assert reach == len(texts[parent]), f"{parent}: the end of the text is in no chunk"
    return texts
