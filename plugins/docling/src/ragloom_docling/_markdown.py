"""The Markdown text of a Docling chunk: its heading path as Markdown headings, then its body."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["heading_prefix", "render_content"]

_MAX_MARKDOWN_LEVEL = 6


def heading_prefix(headings: Sequence[str]) -> str:
    """Render a heading path as ATX headings, one level per depth (capped at ``######``).

    A heading's depth is its position in the path, so an empty heading (docling-core gives ``""``
    for a heading whose text lives in inline children) is skipped without shifting the others.
    Newlines inside a heading are folded to spaces so each heading stays one Markdown line.
    """
    lines = []
    for depth, heading in enumerate(headings, start=1):
        text = " ".join(heading.split())
        if text:
            lines.append(f"{'#' * min(depth, _MAX_MARKDOWN_LEVEL)} {text}")
    return "\n".join(lines)


def render_content(headings: Sequence[str], text: str, *, contextualize: bool) -> str:
    """The chunk's content: ``text``, preceded by its heading path when ``contextualize``.

    The body is ``text`` without leading and trailing line breaks (docling-core leaves some
    around split tables); it is always the suffix of the content, separated from the headings
    by one blank line.
    """
    text = text.strip("\r\n")
    if not contextualize:
        return text
    prefix = heading_prefix(headings)
    if not prefix:
        return text
    if not text:
        return prefix
    return f"{prefix}\n\n{text}"
