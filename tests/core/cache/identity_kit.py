"""Components for the derived-identity tests: each keeps a setting where ``config()`` does not
show it, so only an identity derived from the constructor's arguments can tell variants apart.
Importable by the worker subprocess (it runs with this folder on ``sys.path``)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from typing import Any

from ragloom import Chunker, ChunkSpan, Document


class PrivateWidth(Chunker):
    """Cuts fixed-width spans; the width is kept privately and ``config()`` is not overridden
    (the documented minimum for a plugin)."""

    step_id = "tests/private-width"

    def __init__(self, width: int = 10, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._width = width

    def split(self, document: Document) -> Iterable[ChunkSpan]:
        text = document.content
        for start in range(0, len(text), self._width):
            yield ChunkSpan(start, min(len(text), start + self._width))


class PartialConfig(Chunker):
    """Reports its width in ``config()`` but not its ``skip`` setting."""

    step_id = "tests/partial-config"

    def __init__(self, width: int = 10, skip: int = 0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.width = width
        self.skip = skip

    def config(self) -> dict[str, Any]:
        return {"width": self.width}

    def split(self, document: Document) -> Iterable[ChunkSpan]:
        text = document.content
        start = 0
        while start < len(text):
            end = min(len(text), start + self.width + self.skip)
            yield ChunkSpan(start, end)
            start = end


def count_tokens(text: str, tokenizer: int) -> int:
    """A length function with a setting: ``tokenizer`` characters make one token."""
    return -(-len(text) // tokenizer)


def length_factory(per: int) -> Callable[[str], int]:
    def length(text: str) -> int:
        return -(-len(text) // per)

    return length


class LengthObject:
    """A callable object holding its setting."""

    def __init__(self, per: int) -> None:
        self.per = per

    def __call__(self, text: str) -> int:
        return -(-len(text) // self.per)


def length(kind: str, setting: int) -> Callable[[str], int]:
    if kind == "partial":
        return functools.partial(count_tokens, tokenizer=setting)
    if kind == "closure":
        return length_factory(setting)
    return LengthObject(setting)
