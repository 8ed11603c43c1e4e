"""A paragraph chunker: exact spans that tile the document."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from ragloom import Chunker, ChunkSpan, Document

_PARAGRAPH_END = re.compile(r"\n\s*\n")


class ParagraphChunker(Chunker):
    """Packs paragraphs into chunks of at most ``chunk_size`` characters; a longer paragraph
    is cut at the limit. The spans tile the document: no character is lost."""

    step_id = "__DIST__/paragraphs"

    def __init__(self, chunk_size: int = 1000, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size < 1:
            raise ValueError(f"chunk_size must be an integer >= 1, got {chunk_size!r}")
        self.chunk_size = chunk_size

    def config(self) -> Mapping[str, Any]:
        return {"chunk_size": self.chunk_size}

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
