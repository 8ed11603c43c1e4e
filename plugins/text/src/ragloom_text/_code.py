"""Source-code splitting: prefer cuts between top-level definitions.

Boundaries, most preferred first: the start of a top-level definition (a line at column 0 that
opens a definition, a decorator or a doc comment, right after a blank line), the start of a
nested definition after a blank line, the end of any blank line, line ends, spaces, characters.
The keyword list covers the common languages (Python, JavaScript/TypeScript, Go, Rust, Java,
C#, Kotlin, Swift, Ruby, PHP, C/C++ declarations).

Nothing here imports ragloom.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from ragloom_text._levels import Level, chars, literal, points, regex_points
from ragloom_text._spans import Span, pack

__all__ = ["DEFINITION_KEYWORDS", "code_levels", "code_spans"]

DEFINITION_KEYWORDS: tuple[str, ...] = (
    "abstract", "async", "class", "const", "data", "def", "defmodule", "defn", "enum",
    "export", "extern", "final", "fn", "fun", "func", "function", "impl", "interface",
    "internal", "let", "macro", "module", "namespace", "object", "open", "package",
    "private", "proc", "protected", "pub", "public", "record", "sealed", "static", "struct",
    "sub", "template", "trait", "type", "typedef", "union", "unsafe", "val", "var",
)  # fmt: skip

_OPENER = r"(?:(?:" + "|".join(DEFINITION_KEYWORDS) + r")\b|@[A-Za-z_]|#\[|/\*\*|///|//!)"
# A boundary at the start of the line after a blank line: the empty group marks it. Each
# pattern starts with a literal newline so the regex engine scans in C.
_TOP_LEVEL = re.compile(r"\n(?=[ \t\r]*\n()" + _OPENER + ")")
_NESTED = re.compile(r"\n(?=[ \t\r]*\n()[ \t]+" + _OPENER + ")")
_BLANK_LINE = re.compile(r"\n(?=[ \t\r]*\n())")


def code_levels(text: str) -> list[Level]:
    """The boundary levels of source code, most preferred first."""
    return [
        points(text, regex_points(text, _TOP_LEVEL, group=1, increasing=True)),
        points(text, regex_points(text, _NESTED, group=1, increasing=True)),
        points(text, regex_points(text, _BLANK_LINE, group=1, increasing=True)),
        literal(text, "\n"),
        literal(text, " "),
        chars(text),
    ]


def code_spans(
    text: str,
    chunk_size: int,
    chunk_overlap: int = 0,
    length: Callable[[str], int] | None = None,
) -> list[Span]:
    """Split source code into exact ``(start, end, oversized)`` spans."""
    if not text:
        return []
    levels = code_levels(text)
    # definitions and blank lines start lines: line ends and spaces hold every separator cut
    return pack(text, levels, chunk_size, chunk_overlap, length, overlap_levels=levels[3:5])
