"""Length functions: how a chunk's size is measured.

``chunk_size`` and ``chunk_overlap`` are counted in the units of a length function: characters
by default (measured by offset arithmetic, no slicing), or any token counter, given as a
callable ``str -> int`` or by a name registered here. A custom function is called on candidate
slices; chunking stays exact when the function never decreases as a slice grows (true of
character, word and most token counts).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType

__all__ = ["LENGTH_FUNCTIONS", "LengthFunction", "count_words", "length_function_name",
           "resolve_length_function"]  # fmt: skip

LengthFunction = Callable[[str], int]


def count_words(text: str) -> int:
    """The number of whitespace-separated words in ``text``."""
    return len(text.split())


LENGTH_FUNCTIONS: Mapping[str, LengthFunction] = MappingProxyType(
    {
        "chars": len,
        "words": count_words,
        "whitespace": count_words,
    }
)
"""Registered length functions by name. ``"chars"`` is the fast default."""


def length_function_name(function: LengthFunction) -> str:
    """The registered name of ``function``, else ``"module:qualname"`` (for configs)."""
    for name, registered in LENGTH_FUNCTIONS.items():
        if registered is function:
            return name
    module = getattr(function, "__module__", None) or type(function).__module__
    qualname = getattr(function, "__qualname__", None) or type(function).__qualname__
    return f"{module}:{qualname}"


def resolve_length_function(spec: str | LengthFunction) -> tuple[str, LengthFunction | None]:
    """``(config name, function)`` for a registered name or a callable.

    The function is ``None`` for character counting, which chunkers do by offset arithmetic.
    Raises ``ValueError`` for an unknown name (listing the known ones) and ``TypeError`` for
    anything that is neither a name nor callable. A ``"module:qualname"`` string is refused
    rather than imported: importing code named by a config is the caller's decision.
    """
    if isinstance(spec, str):
        function = LENGTH_FUNCTIONS.get(spec)
        if function is None:
            known = ", ".join(repr(n) for n in LENGTH_FUNCTIONS)
            hint = " (pass the callable itself)" if ":" in spec else ""
            raise ValueError(
                f"length_function {spec!r} is not a registered name{hint}; known names: {known}"
            )
        return spec, (None if function is len else function)
    if not callable(spec):
        raise TypeError(
            f"length_function must be a registered name or a callable str -> int, "
            f"got {type(spec).__name__}"
        )
    name = length_function_name(spec)
    return name, (None if spec is len else spec)
