"""Item models: :class:`Document` and :class:`ContentFormat`.

Items are pydantic models so that they validate on the way in and round-trip through JSON (a
cache entry or a distributed runner needs nothing else).
"""

from __future__ import annotations

import hashlib
from enum import StrEnum
from types import MappingProxyType
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

__all__ = ["FORMAT_ALIASES", "ContentFormat", "Document"]


class ContentFormat(StrEnum):
    """Well-known content formats. Any other string is accepted as a custom format."""

    TEXT = "text"
    MARKDOWN = "markdown"
    RST = "rst"
    HTML = "html"
    CODE = "code"
    JSON = "json"
    DOCLING = "docling"

    @classmethod
    def coerce(cls, value: str) -> str:
        """The enum member for a well-known format or one of its aliases
        (:data:`FORMAT_ALIASES`: ``md`` is ``markdown``), else the stripped, lower-cased string
        (a custom format)."""
        if isinstance(value, ContentFormat):
            return value
        text = value.strip().lower()
        try:
            return cls(FORMAT_ALIASES.get(text, text))
        except ValueError:
            return text


#: Other names of the well-known formats (file suffixes, MIME types, spellings), each the
#: same format under another name. Source-code languages are no aliases of ``code``: a source
#: file's language is in its ``metadata["language"]``.
FORMAT_ALIASES: MappingProxyType[str, str] = MappingProxyType(
    {
        "txt": "text",
        "plain": "text",
        "plaintext": "text",
        "plain-text": "text",
        "text/plain": "text",
        "md": "markdown",
        "mdown": "markdown",
        "mkd": "markdown",
        "mkdn": "markdown",
        "text/markdown": "markdown",
        "text/x-markdown": "markdown",
        "rest": "rst",
        "restructuredtext": "rst",
        "text/x-rst": "rst",
        "htm": "html",
        "xhtml": "html",
        "text/html": "html",
        "application/xhtml+xml": "html",
        "application/json": "json",
    }
)


class Document(BaseModel):
    """A unit of content flowing through a pipeline.

    A chunk is a ``Document`` that also records its lineage: ``parent_id``, its ``index`` among
    the parent's chunks, and its exact ``[start, end)`` span in the parent, so that
    ``parent.content[start:end] == chunk.content``. A chunk whose text is not a slice of the
    parent (e.g. a chunk of a structured Docling document) has ``start`` and ``end`` ``None``
    and says in its metadata how it maps back.

    ``embedding`` is the chunk's vector once an embedding step has run (``None`` before).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(min_length=1)
    content: str
    content_format: str = ContentFormat.TEXT
    metadata: dict[str, Any] = Field(default_factory=dict)
    parent_id: str | None = None
    index: int | None = Field(default=None, ge=0)
    start: int | None = Field(default=None, ge=0)
    end: int | None = Field(default=None, ge=0)
    embedding: list[float] | None = None

    @field_validator("content_format", mode="before")
    @classmethod
    def _coerce_format(cls, value: object) -> object:
        if isinstance(value, str):
            if not value.strip():
                raise ValueError("content_format must not be empty")
            return ContentFormat.coerce(value)
        return value

    @model_validator(mode="after")
    def _check_lineage(self) -> Document:
        if (self.start is None) != (self.end is None):
            raise ValueError("start and end must be given together")
        if self.start is not None and self.end is not None:
            if self.end < self.start:
                raise ValueError(f"end ({self.end}) is before start ({self.start})")
            if self.end - self.start != len(self.content):
                raise ValueError(
                    f"span [{self.start}, {self.end}) has length {self.end - self.start} "
                    f"but content has length {len(self.content)}"
                )
        if self.parent_id is None and (self.index is not None or self.start is not None):
            raise ValueError("index/start/end describe a chunk and need parent_id")
        if self.embedding is not None and not all(
            v == v and v not in (float("inf"), float("-inf")) for v in self.embedding
        ):
            raise ValueError("embedding holds NaN or infinity")
        return self

    @property
    def is_chunk(self) -> bool:
        """Whether this document was cut from a parent document."""
        return self.parent_id is not None

    @property
    def content_hash(self) -> str:
        """SHA-256 of the content (hex), computed once per content."""
        # Kept in the instance dict with the very string it hashes: ``model_copy(update=...)``
        # copies the dict, and a hash cached by name alone would then describe the old
        # content (a cache would replay the old content's outputs). No lock either, unlike
        # ``functools.cached_property`` on Python 3.11: replay reads it once per document.
        content = self.content
        cached: tuple[str, str] | None = self.__dict__.get("_content_hash")
        if cached is not None and cached[0] is content:
            return cached[1]
        digest = hashlib.sha256(content.encode("utf-8", "surrogatepass")).hexdigest()
        self.__dict__["_content_hash"] = (content, digest)
        return digest

    @classmethod
    def from_text(
        cls,
        content: str,
        *,
        id: str | None = None,  # noqa: A002 - mirrors the field name
        content_format: str = ContentFormat.TEXT,
        metadata: dict[str, Any] | None = None,
    ) -> Document:
        """Build a document; without an ``id`` one is derived from the content's hash."""
        if id is None:
            digest = hashlib.sha256(content.encode("utf-8", "surrogatepass")).hexdigest()
            id = f"doc-{digest[:16]}"  # noqa: A001
        return cls(id=id, content=content, content_format=content_format, metadata=metadata or {})
