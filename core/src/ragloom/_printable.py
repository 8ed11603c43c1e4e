"""Text safe to print on one line: control characters escaped.

File names may hold any character but ``/`` and NUL: a newline in a name printed raw forges
a line of a summary, an escape sequence recolours or rewrites the terminal, a bidirectional
override reorders what is shown. :func:`printable` escapes them the way Python writes them in
a string literal (``\\n``, ``\\x1b``, ``\\u202e``); every other character, non-ASCII letters and
emoji included, is kept. Standard library only.
"""

from __future__ import annotations

import unicodedata

__all__ = ["printable"]

_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
#: Categories escaped: controls, line and paragraph separators, surrogates, unassigned.
_ESCAPED_CATEGORIES = frozenset({"Cc", "Zl", "Zp", "Cs", "Co", "Cn"})
#: Format characters that change how the text around them is displayed (bidi controls).
_BIDI = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def _escape(ch: str) -> str:
    named = _NAMED.get(ch)
    if named is not None:
        return named
    code = ord(ch)
    if code <= 0xFF:
        return f"\\x{code:02x}"
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def printable(text: str) -> str:
    """``text`` with control characters, line separators and bidirectional controls escaped
    (``a\\nb.txt`` is shown as ``a\\\\nb.txt``): it prints on one line, as it is."""
    if text.isprintable():
        return text
    return "".join(
        _escape(ch)
        if ch in _BIDI or unicodedata.category(ch) in _ESCAPED_CATEGORIES
        else ch
        for ch in text
    )
