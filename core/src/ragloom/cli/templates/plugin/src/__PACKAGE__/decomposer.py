"""A clause splitter: one sub-query per clause of a compound question."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ragloom import QueryTransformer

_QUESTION_WORDS = "how|what|why|when|where|who|which|can|could|do|does|is|are|should"
_CLAUSE = re.compile(
    rf"\s*;\s*|(?<=\?)\s+(?=\S)|\s+and\s+(?=(?:{_QUESTION_WORDS})\b)", re.IGNORECASE
)


class ClauseSplitter(QueryTransformer):
    """Splits a question at ``;``, after a ``?`` followed by more text, and at ``and`` followed
    by a question word (``"How do I install it and how do I test it?"``): at most
    ``max_parts`` sub-queries, in order."""

    step_id = "__DIST__/clauses"

    def __init__(self, max_parts: int = 5) -> None:
        if isinstance(max_parts, bool) or not isinstance(max_parts, int) or max_parts < 1:
            raise ValueError(f"max_parts must be an integer >= 1, got {max_parts!r}")
        self.max_parts = max_parts

    def config(self) -> Mapping[str, Any]:
        return {"max_parts": self.max_parts}

    def transform_sync(self, query: str) -> list[str]:
        parts = [part.strip() for part in _CLAUSE.split(query)]
        return [part for part in parts if part][: self.max_parts]
