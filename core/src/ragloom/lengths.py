"""The length family: how a chunk's size is measured.

A length function is any callable ``str -> int`` (characters, words, tokens of a tokenizer).
Chunkers count ``chunk_size`` and ``chunk_overlap`` in its units. Plugins register length
functions by name (entry-point group ``ragloom.lengths``) as factories that return one, so a
pipeline file can say ``length_function = "tokens"`` and a built pipeline dumps back to that name.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

__all__ = ["LengthFunction"]


@runtime_checkable
class LengthFunction(Protocol):
    """Measures a text: the number of units (characters, words, tokens) in it.

    Chunking stays exact when the count never decreases as a text grows, which holds for
    characters, words and the token counts of common tokenizers.
    """

    def __call__(self, text: str, /) -> int: ...
