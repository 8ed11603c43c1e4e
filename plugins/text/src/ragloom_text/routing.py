"""``default_chunker_router``: one chunker per content format, ready to use by name."""

from __future__ import annotations

from typing import Any

from ragloom import ChunkerRouter, ContentFormatFilter

from ragloom_text.chunkers import (
    CodeChunker,
    LengthSpec,
    MarkdownChunker,
    RecursiveCharacterTextSplitter,
)

__all__ = ["default_chunker_router"]


def default_chunker_router(
    chunk_size: int = 500,
    chunk_overlap: int = 0,
    *,
    length_function: LengthSpec = "chars",
    cache: Any = None,
    policy: Any = None,
) -> ChunkerRouter:
    """Markdown to :class:`MarkdownChunker`, code to :class:`CodeChunker`, the rest to
    :class:`RecursiveCharacterTextSplitter`, all with the same size, overlap and length
    (``length_function="tokens"`` counts ``chunk_size`` in tokens of the default tokenizer).

    Registered as the ``auto`` chunker (entry-point group ``ragloom.chunkers``).
    """
    sizes: dict[str, Any] = {
        "chunk_size": chunk_size,
        "chunk_overlap": chunk_overlap,
        "length_function": length_function,
    }
    return (
        ChunkerRouter(cache=cache, policy=policy)
        .route(ContentFormatFilter(include_formats=["markdown"]), MarkdownChunker(**sizes))
        .route(ContentFormatFilter(include_formats=["code"]), CodeChunker(**sizes))
        .default(RecursiveCharacterTextSplitter(**sizes))
    )
