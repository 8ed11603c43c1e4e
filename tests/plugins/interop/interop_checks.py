"""Real text for the interop tests, and the checks every wrapper's output must pass."""

from __future__ import annotations

import functools
import sys
from collections.abc import Iterable
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
SAMPLE_DOCS = REPO / "examples" / "sample-docs"

sys.path.insert(0, str(REPO / "tests"))
from support.corpus import build_corpus  # noqa: E402

_FORMATS = {".md": "markdown", ".rst": "rst", ".py": "code", ".html": "html", ".json": "json"}


@functools.cache
def sample_files() -> dict[str, str]:
    """The repository's sample documents: path (relative to the repo) -> text."""
    return {
        str(path.relative_to(REPO)): path.read_text(encoding="utf-8")
        for path in sorted(SAMPLE_DOCS.rglob("*"))
        if path.is_file()
    }


def format_of(path: str) -> str:
    return _FORMATS.get(Path(path).suffix, "text")


@functools.cache
def real_texts(max_bytes: int = 400_000) -> tuple[tuple[str, str, str], ...]:
    """``(name, content_format, text)``: the sample documents, then every few entries of the
    real-text corpus (text nobody here wrote) up to about ``max_bytes``."""
    out = [(name, format_of(name), text) for name, text in sample_files().items()]
    corpus = build_corpus(0)
    step = max(1, len(corpus) // 40)
    total = 0
    for name, fmt, text in corpus[::step]:
        if total >= max_bytes:
            break
        text = text[:50_000]
        out.append((name, fmt, text))
        total += len(text.encode("utf-8"))
    return tuple(out)


def check_spans(text: str, chunks: Iterable[tuple[str, int]], *, tiles: bool) -> None:
    """Every ``(chunk, start)`` is ``text[start:start + len(chunk)]``, starts go forward and
    together they cover ``text`` (with ``tiles``: exactly, end to end)."""
    reach = 0
    previous = -1
    for chunk, start in chunks:
        assert text[start : start + len(chunk)] == chunk, (start, chunk[:40])
        assert start > previous, "starts must increase"
        assert start <= reach, f"gap [{reach}, {start})"
        if tiles:
            assert start == reach, f"overlap at {start}"
        previous = start
        reach = max(reach, start + len(chunk))
    assert reach == len(text), f"text after {reach} of {len(text)} is in no chunk"
