"""Options of the Docling chunker, validated without importing docling-core."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "SPAN_KIND",
    "DoclingInputError",
    "DoclingOptions",
    "DoclingOptionsError",
    "resolve_tokenizer_file",
]

#: ``metadata["span_kind"]`` of every Docling chunk: its text is not a slice of the parent (a
#: JSON document); it maps back through the item refs in ``metadata["doc_items"]``.
SPAN_KIND = "docling-items"


class DoclingOptionsError(ValueError):
    """A Docling chunker parameter is invalid; the message names the parameter."""


class DoclingInputError(ValueError):
    """The content cannot be chunked: not JSON, not a DoclingDocument, or no text in it."""


def resolve_tokenizer_file(tokenizer_path: str) -> Path:
    """Return the ``tokenizer.json`` that ``tokenizer_path`` names (a file or a model folder)."""
    path = Path(tokenizer_path).expanduser()
    if path.is_dir():
        path = path / "tokenizer.json"
    if not path.is_file():
        raise DoclingOptionsError(
            f"tokenizer_path: no tokenizer file at {str(path)!r} (give a HuggingFace "
            "tokenizer.json, or a folder holding one)"
        )
    return path


@dataclass(frozen=True, slots=True)
class DoclingOptions:
    """What shapes a Docling chunker's output.

    ``contextualize`` prepends the chunk's heading path as Markdown headings to its text.
    ``max_tokens`` with ``tokenizer_path`` (a local HuggingFace ``tokenizer.json``) switches from
    docling-core's ``HierarchicalChunker`` (one chunk per document element) to its
    ``HybridChunker`` (elements merged and split to fit the token limit, counted on the chunk's
    final content). ``merge_peers`` and ``repeat_table_header`` tune the hybrid mode only.
    """

    contextualize: bool = True
    max_tokens: int | None = None
    tokenizer_path: str | None = None
    merge_peers: bool = True
    repeat_table_header: bool = True

    def __post_init__(self) -> None:
        for name in ("contextualize", "merge_peers", "repeat_table_header"):
            if not isinstance(getattr(self, name), bool):
                raise DoclingOptionsError(f"{name} must be a bool, got {getattr(self, name)!r}")
        if self.max_tokens is not None and (
            isinstance(self.max_tokens, bool)
            or not isinstance(self.max_tokens, int)
            or self.max_tokens < 1
        ):
            raise DoclingOptionsError(
                f"max_tokens must be a positive int or None, got {self.max_tokens!r}"
            )
        if self.tokenizer_path is not None and not isinstance(self.tokenizer_path, str):
            raise DoclingOptionsError(
                f"tokenizer_path must be a str or None, got {self.tokenizer_path!r}"
            )
        if (self.max_tokens is None) != (self.tokenizer_path is None):
            missing = "tokenizer_path" if self.tokenizer_path is None else "max_tokens"
            raise DoclingOptionsError(
                f"{missing} is required: max_tokens and tokenizer_path go together (tokens are "
                "counted with a local tokenizer file; no tokenizer is downloaded)"
            )
        if self.tokenizer_path is not None:
            resolve_tokenizer_file(self.tokenizer_path)

    @property
    def hybrid(self) -> bool:
        """Whether chunks are fitted to a token limit (docling-core's ``HybridChunker``)."""
        return self.max_tokens is not None
