"""ragloom-docling: chunk Docling documents (serialized ``DoclingDocument`` JSON) in ragloom.

Importing this package is cheap: :class:`DoclingChunker` (and with it ragloom's core) is
imported on first access, and docling-core only when a chunker first chunks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__all__ = ["SPAN_KIND", "DoclingChunker"]

from ._options import SPAN_KIND

if TYPE_CHECKING:
    from .chunker import DoclingChunker


def __getattr__(name: str) -> Any:
    if name == "DoclingChunker":
        from .chunker import DoclingChunker

        return DoclingChunker
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
