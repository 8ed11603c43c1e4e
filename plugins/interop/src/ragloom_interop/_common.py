"""What the three adapters share: install hints, type errors, ids and content formats."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import Any

from ragloom import ContentFormat

__all__ = [
    "CONTENT_FORMAT_KEY",
    "content_format_of",
    "derive_id",
    "format_key_needed",
    "full_class_name",
    "is_batch",
    "mime_of_path",
    "missing_framework",
    "take_format",
    "wrong_type",
]

#: Metadata key every adapter reads a document's ragloom content format from (and writes it
#: to, when it is not plain text).
CONTENT_FORMAT_KEY = "content_format"

_EXTRAS = {
    "langchain": ("LangChain (langchain-core and langchain-text-splitters)", "langchain"),
    "llama_index": ("LlamaIndex (llama-index-core)", "llama-index"),
    "haystack": ("Haystack (haystack-ai)", "haystack"),
}

# MIME types the frameworks' loaders record, as ragloom content formats ("text/plain", the
# frameworks' default, says nothing: a later hint may be more precise).
_MIME_FORMATS = {
    "text/markdown": ContentFormat.MARKDOWN,
    "text/x-markdown": ContentFormat.MARKDOWN,
    "text/html": ContentFormat.HTML,
    "application/xhtml+xml": ContentFormat.HTML,
    "text/x-rst": ContentFormat.RST,
    "text/prs.fallenstein.rst": ContentFormat.RST,
    "text/x-python": ContentFormat.CODE,
    "application/json": ContentFormat.JSON,
}


def missing_framework(module: str, exc: ImportError) -> ImportError:
    """The ``ImportError`` raised by ``ragloom_interop.<module>`` when its framework is absent."""
    from ragloom.plugins import install_hint

    what, extra = _EXTRAS[module]
    return ImportError(
        f"ragloom_interop.{module} needs {what}, which is not installed ({exc}); "
        f"{install_hint('ragloom-interop', extra)}"
    )


def full_class_name(value: Any) -> str:
    """``module.QualName`` of ``value``'s class (``builtins`` left out)."""
    cls = type(value)
    module = cls.__module__
    return cls.__qualname__ if module == "builtins" else f"{module}.{cls.__qualname__}"


def wrong_type(value: Any, expected: str, adapters: Mapping[str, str]) -> TypeError:
    """A ``TypeError`` naming ``value``'s full class and, when known, the adapter to use.

    ``adapters`` maps a top-level package (``"ragloom"``, ``"langchain_core"`` ...) to a hint
    such as ``"convert it with ragloom_interop.haystack.to_haystack()"``.
    """
    hint = adapters.get(type(value).__module__.split(".", 1)[0])
    return TypeError(
        f"expected {expected}, got {full_class_name(value)}" + (f"; {hint}" if hint else "")
    )


def derive_id(content: str, metadata: Mapping[str, Any]) -> str:
    """A stable id for a document that has none: its content's hash, with its metadata's.

    Without metadata this is the id ``ragloom.Document.from_text(content)`` gives.
    """
    data = content
    if metadata:
        data += "\x00" + json.dumps(metadata, sort_keys=True, default=str, ensure_ascii=False)
    digest = hashlib.sha256(data.encode("utf-8", "surrogatepass")).hexdigest()
    return f"doc-{digest[:16]}"


def content_format_of(metadata: Mapping[str, Any], *mime_types: object) -> str:
    """The ragloom content format of a foreign document.

    ``metadata["content_format"]`` when set, else the first known MIME type given (a loader's
    ``file_type``, a node's ``mimetype``), else plain text.
    """
    declared = metadata.get(CONTENT_FORMAT_KEY)
    if isinstance(declared, str) and declared.strip():
        return ContentFormat.coerce(declared)
    for mime in mime_types:
        if isinstance(mime, str):
            found = _MIME_FORMATS.get(mime.split(";", 1)[0].strip().lower())
            if found is not None:
                return found
    return ContentFormat.TEXT


def format_key_needed(content_format: str, *mime_types: object) -> bool:
    """Whether a converted document must carry ``content_format`` in its metadata: the MIME
    hints it keeps (``file_type``, ``file_path`` ...) do not already tell the format (plain
    text when there are none). The round trip stays exact without adding keys not needed."""
    return content_format_of({}, *mime_types) != content_format


def take_format(metadata: dict[str, Any], *mime_types: object) -> str:
    """:func:`content_format_of`, removing ``content_format`` from ``metadata`` when it was
    read from there (a value that is not a format name stays, as ordinary metadata)."""
    content_format = content_format_of(metadata, *mime_types)
    declared = metadata.get(CONTENT_FORMAT_KEY)
    if isinstance(declared, str) and declared.strip():
        del metadata[CONTENT_FORMAT_KEY]
    return content_format


def is_batch(value: object) -> bool:
    """Whether ``value`` is a collection of documents rather than one.

    A pydantic model (a LangChain or LlamaIndex document) iterates over its fields, a mapping
    over its keys and a string over its characters: none of them is a batch.
    """
    from pydantic import BaseModel

    return isinstance(value, Iterable) and not isinstance(value, str | bytes | Mapping | BaseModel)


def mime_of_path(path: object) -> str | None:
    """The MIME type a file path or URL suggests by its suffix (``None`` if none)."""
    if not isinstance(path, str) or not path:
        return None
    import mimetypes

    return mimetypes.guess_type(path, strict=False)[0]
