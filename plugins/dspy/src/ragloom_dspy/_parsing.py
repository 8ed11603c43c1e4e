"""Reading a model's sub-query answer: robust JSON-array parsing and clean-up.

Pure functions (no DSPy, no ragloom core). A model asked for "a JSON array of strings" answers
with code fences, a sentence before the array, a Python list, or something else entirely; this
module turns what can be read into a list of strings and says precisely why when it cannot.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["ParsedSubQueries", "clean_sub_queries", "parse_sub_queries"]

_FENCE = re.compile(r"```[ \t]*[\w+-]*[ \t]*\n?(.*?)```", re.DOTALL)
#: Keys under which a JSON object answer may carry the list ({"sub_queries": [...]}).
_LIST_KEYS = ("sub_queries", "subqueries", "queries")
#: Bound on decode attempts per candidate text (model answers are short; prose is not JSON).
_MAX_ATTEMPTS = 64


@dataclass(frozen=True, slots=True)
class ParsedSubQueries:
    """Outcome of :func:`parse_sub_queries`: ``items`` when readable, else ``error``."""

    items: list[str] | None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.items is not None


def _fail(error: str) -> ParsedSubQueries:
    return ParsedSubQueries(None, error)


def _check_items(value: Any, *, nested: bool = False) -> ParsedSubQueries:
    if isinstance(value, str) and not nested:
        # A JSON string holding the array (double-encoded): read it once more.
        inner = parse_sub_queries(value, _nested=True)
        return inner if inner.ok else _fail("not a list (got str)")
    if isinstance(value, dict):
        for key in _LIST_KEYS:
            if key in value:
                return _check_items(value[key], nested=True)
        return _fail("not a list (got a JSON object)")
    if not isinstance(value, list | tuple):
        return _fail(f"not a list (got {type(value).__name__})")
    for index, item in enumerate(value):
        if not isinstance(item, str):
            return _fail(f"non-string item at index {index} ({type(item).__name__})")
    return ParsedSubQueries(list(value))


def _candidates(text: str) -> Iterable[str]:
    """The whole text, then the bodies of code fences (the first fence first)."""
    yield text
    for match in _FENCE.finditer(text):
        yield match.group(1).strip()


def _json_values(text: str) -> Iterator[Any]:
    """JSON values found in ``text``: the whole text, then one starting at each ``[`` or ``{``."""
    try:
        yield json.loads(text)
        return
    except (ValueError, RecursionError):
        pass
    decoder = json.JSONDecoder()
    for attempt, match in enumerate(re.finditer(r"[\[{]", text)):
        if attempt >= _MAX_ATTEMPTS:
            return
        try:
            value, _ = decoder.raw_decode(text, match.start())
        except (ValueError, RecursionError):
            continue
        yield value


def _literal_values(text: str) -> Iterator[Any]:
    """Python list literals (``['a', 'b']``) in ``text``, longest first from each ``[``."""
    starts = [m.start() for m in re.finditer(r"\[", text)]
    ends = [m.start() for m in re.finditer(r"\]", text)][::-1]
    attempts = 0
    for start in starts:
        for end in ends:
            if end <= start:
                break
            attempts += 1
            if attempts > _MAX_ATTEMPTS:
                return
            try:
                value = ast.literal_eval(text[start : end + 1])
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                continue
            if isinstance(value, list):
                yield value
                break


def parse_sub_queries(raw: Any, *, _nested: bool = False) -> ParsedSubQueries:
    """Read a list of sub-query strings from a model's answer.

    Accepted: a list/tuple of strings as-is (an adapter may have parsed the field already); a
    JSON array, possibly inside code fences or surrounded by prose; a JSON object holding the
    array under ``sub_queries``/``queries``; a Python list literal as a last resort. Anything
    else yields ``items=None`` and an ``error`` naming the problem ("invalid JSON",
    "not a list (got str)", "non-string item at index 1 (int)", ...). Never raises.
    """
    if raw is None:
        return _fail("empty output")
    if not isinstance(raw, str):
        return _check_items(raw, nested=True)
    text = raw.strip()
    if not text:
        return _fail("empty output")
    first_error: ParsedSubQueries | None = None
    for decode in (_json_values, _literal_values):
        for candidate in _candidates(text):
            for value in decode(candidate):
                checked = _check_items(value, nested=_nested)
                if checked.ok:
                    return checked
                first_error = first_error or checked
    if first_error is not None:
        return first_error
    return _fail("invalid JSON (no JSON array found in the output)")


def clean_sub_queries(items: Sequence[str]) -> list[str]:
    """Strip each sub-query; drop empty ones and duplicates, keeping the first occurrence.

    Duplicates are compared case-insensitively with runs of whitespace collapsed, so
    ``"Paris  hotels"`` and ``"paris hotels"`` count as one.
    """
    seen: set[str] = set()
    cleaned: list[str] = []
    for item in items:
        text = item.strip()
        if not text:
            continue
        key = " ".join(text.split()).casefold()
        if key in seen:
            continue
        seen.add(key)
        cleaned.append(text)
    return cleaned
