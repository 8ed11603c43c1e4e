"""An example third-party ragloom plugin."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from ragloom import Chunker, ChunkSpan, Document, RouteDecision, Router

__all__ = ["BlockChunker", "PrefixRouter"]

_BLANK_RUN = re.compile(r"\n[ \t]*\n\s*")


class BlockChunker(Chunker):
    """Packs blank-line separated blocks into chunks of at most ``chunk_size`` characters.

    A block longer than ``chunk_size`` is cut at the limit. Spans tile the document.
    """

    step_id = "acme-ragloom/blocks"

    def __init__(self, chunk_size: int = 800, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if chunk_size < 1:
            raise ValueError(f"chunk_size must be >= 1, got {chunk_size}")
        self.chunk_size = chunk_size

    def config(self) -> Mapping[str, Any]:
        return {"chunk_size": self.chunk_size}

    def split(self, document: Document) -> Iterator[ChunkSpan]:
        text = document.content
        bounds = [m.end() for m in _BLANK_RUN.finditer(text)] + [len(text)]
        start = end = 0
        for bound in bounds:
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


class PrefixRouter(Router):
    """Routes a query by its first word (``"billing: ..."`` -> ``billing``)."""

    step_id = "acme-ragloom/prefix"
    awaits = False

    def __init__(self, routes: Sequence[str], default_route: str = "general") -> None:
        names = list(dict.fromkeys([*routes, default_route]))
        if not all(isinstance(r, str) and r for r in names):
            raise ValueError("routes must be non-empty strings")
        self.routes = [r for r in names if r != default_route]
        self._default = default_route

    def config(self) -> Mapping[str, Any]:
        return {"routes": list(self.routes), "default_route": self._default}

    @property
    def valid_routes(self) -> tuple[str, ...]:
        return (*self.routes, self._default)

    @property
    def default_route(self) -> str:
        return self._default

    async def route(self, query: str) -> RouteDecision:
        head = query.strip().split(":", 1)[0].strip().lower()
        if head in self.routes:
            return RouteDecision(route=head, score=1.0)
        return self.fallback("no route prefix")
