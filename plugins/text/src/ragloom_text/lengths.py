"""Length functions: how a chunk's size is measured.

``chunk_size`` and ``chunk_overlap`` are counted in the units of a length function: characters
by default (measured by offset arithmetic, no slicing), words, or the tokens of a tokenizer
(:mod:`ragloom_text.tokens`). Each is registered by name in the entry-point group
``ragloom.lengths`` (``chars``, ``words``, ``whitespace``, ``tokens``, ``tiktoken``), so a
chunker says it by name and parameters in its ``config()``, and a pipeline file rebuilds it::

    length_function = "tokens"
    length_function = { name = "tokens", params = { tokenizer = "models/tokenizer.json" } }

Any other callable ``str -> int`` works from Python; its config is its ``module:qualname``,
which a pipeline file cannot rebuild (register it under ``ragloom.lengths`` instead). A custom
function is called on candidate slices; chunking stays exact when the function never decreases
as a slice grows (true of character and word counts; tokenizer counts are measured exactly on
every chunk).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

from ragloom._hints import did_you_mean

from ragloom_text._named import NamedLength

__all__ = [
    "LENGTH_FUNCTIONS",
    "CharCount",
    "LengthFunction",
    "NamedLength",
    "WordCount",
    "build_length",
    "count_words",
    "length_function_name",
    "resolve_length_function",
]

LengthFunction = Callable[[str], int]


def count_words(text: str) -> int:
    """The number of whitespace-separated words in ``text``."""
    return len(text.split())


class CharCount(NamedLength):
    """Characters (``len``): the default, counted by offset arithmetic without slicing."""

    name = "chars"

    def __call__(self, text: str, /) -> int:
        return len(text)


class WordCount(NamedLength):
    """Whitespace-separated words."""

    name = "words"

    def __call__(self, text: str, /) -> int:
        return len(text.split())


def _token_classes() -> dict[str, type[NamedLength]]:
    from ragloom_text.tokens import TiktokenCount, TokenCount

    return {"tokens": TokenCount, "tiktoken": TiktokenCount}


class _Lengths(Mapping[str, type[NamedLength]]):
    """The length functions of this package by registered name (token classes load lazily)."""

    _names = ("chars", "words", "whitespace", "tokens", "tiktoken")

    def __getitem__(self, name: str) -> type[NamedLength]:
        if name in ("chars",):
            return CharCount
        if name in ("words", "whitespace"):
            return WordCount
        if name in ("tokens", "tiktoken"):
            return _token_classes()[name]
        raise KeyError(name)

    def __iter__(self) -> Any:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)

    def __repr__(self) -> str:
        return f"LENGTH_FUNCTIONS({', '.join(self._names)})"


LENGTH_FUNCTIONS: Mapping[str, type[NamedLength]] = _Lengths()
"""The length functions of ragloom-text by registered name: each value is the class whose
instances count (``LENGTH_FUNCTIONS["tokens"](tokenizer=...)``). ``"chars"`` is the default."""

_ALIASES: Mapping[Any, str] = MappingProxyType({len: "chars", count_words: "words"})


def length_function_name(function: LengthFunction) -> str:
    """The registered name of ``function``, else ``"module:qualname"`` (for configs)."""
    if isinstance(function, NamedLength):
        ref = getattr(function, "_ragloom_ref", None)
        return ref[1] if ref else type(function).name
    try:
        alias = _ALIASES.get(function)
    except TypeError:  # unhashable callable
        alias = None
    if alias is not None:
        return alias
    ref = getattr(function, "_ragloom_ref", None)
    if ref is not None and ref[0] == "length":
        return str(ref[1])
    module = getattr(function, "__module__", None) or type(function).__module__
    qualname = getattr(function, "__qualname__", None) or type(function).__qualname__
    return f"{module}:{qualname}"


def build_length(name: str, params: Mapping[str, Any] | None = None) -> LengthFunction:
    """The length function registered as ``name``, built with ``params``.

    ragloom-text's own names are built directly; any other name is looked up in the plugin
    registry (entry-point group ``ragloom.lengths``), so other distributions can add lengths.

    Raises:
        ValueError: an unknown name (the message lists the known ones), bad parameters, or a
            length function that cannot be built (e.g. a missing tokenizer file).
    """
    params = dict(params or {})
    if name in LENGTH_FUNCTIONS:
        cls = LENGTH_FUNCTIONS[name]
        try:
            return cls(**params)
        except TypeError as exc:
            raise ValueError(f"length function {name!r}: {exc}") from exc
    from ragloom.errors import PluginNotFoundError
    from ragloom.plugins import Registry

    registry = Registry()
    try:
        built: LengthFunction = registry.create("length", name, params)
    except PluginNotFoundError:
        known = list(LENGTH_FUNCTIONS)
        known += [n for n in registry.names("length") if n not in known]
        hint = did_you_mean(name, known, form="; {}")
        if ":" in name:
            hint += " (a Python callable is passed as the object itself, not by import path)"
        raise ValueError(
            f"length_function {name!r} is not a registered length function{hint}; known "
            f"names: {', '.join(repr(n) for n in known)}"
        ) from None
    return built


def resolve_length_function(spec: Any) -> tuple[str | dict[str, Any], LengthFunction | None]:
    """``(config value, function)`` for what a chunker was given as ``length_function``.

    ``spec`` is a registered name, a table ``{"name": ..., "params": {...}}``, a length object
    (e.g. ``TokenCount(tokenizer=...)``), or any callable ``str -> int``. The config value is
    the name alone when there are no parameters, else the table; for an unregistered callable
    it is ``"module:qualname"``. The function is ``None`` for characters, which chunkers count
    by offset arithmetic.

    Raises ``ValueError`` for an unknown name or bad parameters (naming them) and
    ``TypeError`` for anything that is neither a name, a table nor callable.
    """
    name: str | None = None
    if isinstance(spec, str):
        name = spec
        function: LengthFunction = build_length(spec)
    elif isinstance(spec, Mapping):
        unknown = set(spec) - {"name", "params"}
        name = spec.get("name")
        params = spec.get("params") or {}
        if unknown or not isinstance(name, str) or not isinstance(params, Mapping):
            raise ValueError(
                'length_function as a table is {name = "...", params = {...}}, got '
                f"{dict(spec)!r}"
            )
        function = build_length(name, params)
    elif isinstance(spec, type) and issubclass(spec, NamedLength):
        function = spec()
    elif callable(spec):
        function = spec
    else:
        raise TypeError(
            "length_function must be a registered name, a {name, params} table or a callable "
            f"str -> int, got {type(spec).__name__}"
        )
    if isinstance(function, CharCount) or function is len:
        return "chars", None
    if name is None:
        name = length_function_name(function)
    config = getattr(function, "config", None)
    if callable(config):  # a length object says what rebuilds it
        params = dict(config())
    else:
        params = dict(spec.get("params") or {}) if isinstance(spec, Mapping) else {}
    if params:
        return {"name": name, "params": params}, function
    return name, function
