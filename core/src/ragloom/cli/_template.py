"""Files of a new plugin package (``ragloom new-plugin NAME``).

Placeholders: ``{dist}`` (distribution name), ``{package}`` (import package), ``{prefix}``
(the prefix of registered names), ``{core}`` (the ragloom requirement).
"""

from __future__ import annotations

PYPROJECT = """[build-system]
requires = ["hatchling>=1.24"]
build-backend = "hatchling.build"

[project]
name = "{dist}"
version = "0.1.0"
description = "A ragloom plugin"
readme = "README.md"
requires-python = ">=3.11"
dependencies = ["{core}"]

[project.optional-dependencies]
test = ["pytest>=8"]

[project.entry-points."ragloom.chunkers"]
{prefix}-paragraphs = "{package}.chunker:ParagraphChunker"

[project.entry-points."ragloom.routers"]
{prefix}-words = "{package}.router:WordRouter"

[tool.hatch.build.targets.wheel]
packages = ["src/{package}"]
"""

README = """# {dist}

A ragloom plugin made with `ragloom new-plugin`.

- chunker `{prefix}-paragraphs`: packs paragraphs into chunks with exact spans
- router `{prefix}-words`: routes a query to the route whose words it contains

```bash
pip install -e ".[test]"
pytest                     # ragloom's conformance kit checks both components
ragloom plugins            # lists {dist}
```
"""

INIT = '''"""{dist}: a ragloom plugin."""

from __future__ import annotations

__all__ = ["ParagraphChunker", "WordRouter"]


def __getattr__(name: str) -> object:
    # Keep `import {package}` light: components load when a pipeline names them.
    if name == "ParagraphChunker":
        from .chunker import ParagraphChunker

        return ParagraphChunker
    if name == "WordRouter":
        from .router import WordRouter

        return WordRouter
    raise AttributeError(name)
'''

CHUNKER = '''"""A paragraph chunker: exact spans that tile the document."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from ragloom import Chunker, ChunkSpan, Document

_PARAGRAPH_END = re.compile(r"\\n\\s*\\n")


class ParagraphChunker(Chunker):
    """Packs paragraphs into chunks of at most ``chunk_size`` characters."""

    step_id = "{dist}/paragraphs"

    def __init__(self, chunk_size: int = 1000, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if chunk_size < 1:
            raise ValueError(f"chunk_size must be >= 1, got {{chunk_size}}")
        self.chunk_size = chunk_size

    def config(self) -> Mapping[str, Any]:
        return {{"chunk_size": self.chunk_size}}

    def split(self, document: Document) -> Iterator[ChunkSpan]:
        text = document.content
        ends = [m.end() for m in _PARAGRAPH_END.finditer(text)] + [len(text)]
        start = end = 0
        for bound in ends:
            if bound - start <= self.chunk_size:
                end = bound
                continue
            if end > start:
                yield ChunkSpan(start, end)
                start = end
            while bound - start > self.chunk_size:
                yield ChunkSpan(start, start + self.chunk_size)
                start += self.chunk_size
            end = bound
        if end > start:
            yield ChunkSpan(start, end)
'''

ROUTER = '''"""A word router: the route whose words a query contains most."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from ragloom import RouteDecision, Router

_WORD = re.compile(r"\\w+")


class WordRouter(Router):
    """Routes to the route with the most matching words; ties go to the first declared."""

    step_id = "{dist}/words"
    awaits = False

    def __init__(
        self,
        routes: Mapping[str, Sequence[str]] | None = None,
        default_route: str = "general",
    ) -> None:
        self.routes = {{
            name: [w.lower() for w in words]
            for name, words in (routes or {{"docs": ["install", "configure", "guide"]}}).items()
        }}
        if default_route in self.routes:
            raise ValueError(f"default_route {{default_route!r}} is also a route")
        self._default = default_route

    def config(self) -> Mapping[str, Any]:
        return {{"routes": self.routes, "default_route": self._default}}

    @property
    def valid_routes(self) -> tuple[str, ...]:
        return (*self.routes, self._default)

    @property
    def default_route(self) -> str:
        return self._default

    async def route(self, query: str) -> RouteDecision:
        words = set(_WORD.findall(query.lower()))
        scores = {{name: len(words.intersection(ws)) for name, ws in self.routes.items()}}
        best = max(scores, key=lambda name: scores[name], default=None)
        if best is None or scores[best] == 0:
            return self.fallback("no route word matched", score=0.0)
        return RouteDecision(route=best, score=float(scores[best]))
'''

TESTS = '''"""Contract tests from ragloom's conformance kit."""

from __future__ import annotations

import pytest
from ragloom.testing import ChunkerContract, RouterContract

from {package}.chunker import ParagraphChunker
from {package}.router import WordRouter


class TestParagraphChunker(ChunkerContract):
    @pytest.fixture
    def chunker(self) -> ParagraphChunker:
        return ParagraphChunker(chunk_size=200)


class TestWordRouter(RouterContract):
    @pytest.fixture
    def router(self) -> WordRouter:
        return WordRouter({{"docs": ["install", "guide"], "billing": ["invoice", "price"]}})
'''

FILES = {
    "pyproject.toml": PYPROJECT,
    "README.md": README,
    "src/{package}/__init__.py": INIT,
    "src/{package}/py.typed": "",
    "src/{package}/chunker.py": CHUNKER,
    "src/{package}/router.py": ROUTER,
    "tests/test_contracts.py": TESTS,
}
