"""What a chunk is searched by: its document's title and heading path, then its own text.

A chunk cut from the middle of a section often never names what it is about ("Use ``--keep``
to leave the files in place."); the page title and the headings above it do. Stores index
:func:`search_text` for full-text search and the embedding step embeds it, while the chunk
itself keeps its exact text and offsets. :func:`is_boilerplate` tells the chunks that hold
nothing to read (a lone heading, a navigation line, a separator) so searches can rank them
last.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

__all__ = ["SEARCH_TEXT_VERSION", "is_boilerplate", "search_text"]

#: Changes whenever :func:`search_text` changes what it returns (it is part of the identity of
#: the vectors embedded from it).
SEARCH_TEXT_VERSION = 1

#: Characters of the chunk's start within which a heading already present is not repeated.
_LEAD = 300
#: Below this many letters or digits, with headings and navigation removed, a chunk is
#: boilerplate.
_MIN_SUBSTANCE = 40

_HEADING_LINE = re.compile(r"^\s{0,3}#{1,6}\s.*$|^\s*[=\-~^*+#]{3,}\s*$", re.MULTILINE)
_NAVIGATION = re.compile(
    r"^\s*(?:(?:next|previous|prev|up|home|contents|index|top)\s*:.*"
    r"|\[?(?:next|previous|prev|up|home|contents|index|top)\]?(?:\s*[|:]\s*\S.*)?)\s*$",
    re.IGNORECASE | re.MULTILINE,
)
_WORD = re.compile(r"\w")


def _context(metadata: Mapping[str, Any], content: str) -> list[str]:
    title = metadata.get("title")
    headings = metadata.get("headings")
    lead = " ".join(content[:_LEAD].split()).casefold()
    parts: list[str] = []
    seen: set[str] = set()
    candidates = [title] if isinstance(title, str) else []
    if isinstance(headings, list | tuple):
        candidates += [h for h in headings if isinstance(h, str)]
    for text in candidates:
        clean = " ".join(text.split())
        key = clean.casefold()
        if not clean or key in seen or key in lead:
            continue
        seen.add(key)
        parts.append(clean)
    return parts


def search_text(document: Any) -> str:
    """The text ``document`` (a chunk) is indexed and embedded by: its title and heading path
    (those not already at its start), one line, then its content. Without either it is the
    content alone."""
    content: str = document.content
    context = _context(document.metadata or {}, content)
    if not context:
        return content
    return " > ".join(context) + "\n\n" + content


def is_boilerplate(content: str) -> bool:
    """Whether a chunk holds nothing to read once its heading lines, navigation lines ("Next:
    ..., Up: ...") and separators are taken away (fewer than 40 letters or digits)."""
    body = _NAVIGATION.sub("", _HEADING_LINE.sub("", content))
    return len(_WORD.findall(body)) < _MIN_SUBSTANCE
