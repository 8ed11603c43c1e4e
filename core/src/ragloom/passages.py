"""The passages of a search's answer: each chunk found, its fused score and the searches
that found it (:class:`FusedPassage`, :class:`PassageHit`).

Apart from :mod:`ragloom.multi_retrieval`, which fuses them, so that what plugs into a search
(:mod:`ragloom.query_stages`, a reranker) can name them without importing the search.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["FusedPassage", "PassageHit"]


class PassageHit(BaseModel):
    """One sub-query that found a passage: its text, its route, the rank and score it gave.
    The search of the whole question has the route ``"(whole question)"``. ``collections``:
    the collections that search was restricted to, or whose passages a boost's list took from
    the sub-query's search of the whole index (``None``: the whole index)."""

    model_config = ConfigDict(frozen=True)

    #: The sub-query (or the whole question) whose search found the passage.
    sub_query: str
    #: Its route.
    route: str
    #: The passage's rank in that search, from 1.
    rank: int
    #: The score that search's retriever gave it.
    score: float
    collections: list[str] | None = None


class FusedPassage(BaseModel):
    """A passage of the fused answer: the chunk (id, document, exact offsets, text, metadata),
    its fused score, and every sub-query that found it."""

    model_config = ConfigDict(frozen=True)

    #: The chunk's id.
    chunk_id: str
    #: The id of its document (its path under the ingested folder, for files).
    document_id: str | None
    #: Where the chunk starts in its document's text: the text the loader made (for an HTML
    #: page, its Markdown rendering), not necessarily the file's bytes (``None``: a chunker's
    #: own text, not a span of the document).
    start: int | None
    #: Where it ends (exclusive): ``text[start:end] == content``.
    end: int | None
    #: The chunk's text.
    content: str
    #: The chunk's metadata (its document's, and what the chunker added).
    metadata: dict[str, Any] = Field(default_factory=dict)
    #: The fused score, in [0, 1]: 1.0 is a passage every search ranked first.
    score: float
    #: Every search that found it, with the rank it gave.
    found_by: list[PassageHit] = Field(default_factory=list)
