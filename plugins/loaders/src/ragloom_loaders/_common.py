"""What the loaders share: building documents and refusing empty files."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ragloom.loading import LoadError, SourceFile

if TYPE_CHECKING:
    from ragloom.models import Document


def make_document(
    source: SourceFile,
    content: str,
    content_format: str,
    extra: Mapping[str, Any],
) -> Document:
    """One document read from ``source``: its id, ``metadata["source"]``, the caller's
    metadata, then the loader's own keys."""
    from ragloom.models import Document

    metadata: dict[str, Any] = {"source": source.path, **source.metadata, **extra}
    return Document(
        id=source.doc_id, content=content, content_format=content_format, metadata=metadata
    )


def require_bytes(source: SourceFile) -> bytes:
    """``source.data``, or a :class:`LoadError` for an empty file."""
    if not source.data:
        raise LoadError(f"{source.path}: empty file")
    return source.data
