"""ragloom-text: exact, lossless, fast chunkers for prose, Markdown, sentences and code.

Every chunk is an exact ``[start, end)`` slice of its parent; with no overlap the chunks tile
the document; no chunk exceeds ``chunk_size`` except a single unsplittable atom (flagged
``metadata["oversized"]``). The splitting algorithms live in private modules that do not
depend on ragloom; the classes here adapt them to ragloom's ``Chunker``.
"""

from __future__ import annotations

from ragloom_text.chunkers import (
    DEFAULT_SEPARATORS,
    CodeChunker,
    MarkdownChunker,
    PatternTimeoutError,
    RecursiveCharacterTextSplitter,
    SentenceChunker,
)
from ragloom_text.lengths import LENGTH_FUNCTIONS, count_words
from ragloom_text.routing import default_chunker_router

__version__ = "0.1.0"

__all__ = [
    "RecursiveCharacterTextSplitter",
    "MarkdownChunker",
    "SentenceChunker",
    "CodeChunker",
    "PatternTimeoutError",
    "default_chunker_router",
    "DEFAULT_SEPARATORS",
    "LENGTH_FUNCTIONS",
    "count_words",
]
