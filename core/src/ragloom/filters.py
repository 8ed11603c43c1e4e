"""Composable predicates used to route items.

A :class:`Filter` says whether it reads item content (``requires_content``) or only identity,
format and metadata, so a router made only of the latter can decide without loading content.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Generic, TypeVar

from ._hints import did_you_mean
from .errors import ConfigurationError
from .models import ContentFormat

__all__ = [
    "AllOf",
    "AnyOf",
    "ContentFormatFilter",
    "Filter",
    "MetadataFilter",
    "Not",
    "PredicateFilter",
]

T = TypeVar("T")


class Filter(ABC, Generic[T]):
    """A predicate over items, composable with ``&``, ``|`` and ``~``."""

    #: Whether :meth:`matches` reads the item's content (not just id, format and metadata).
    requires_content: bool = True

    @abstractmethod
    def matches(self, item: T) -> bool:
        """Whether ``item`` satisfies this filter."""

    def __call__(self, item: T) -> bool:
        return self.matches(item)

    def __and__(self, other: Filter[T]) -> Filter[T]:
        return AllOf(self, other)

    def __or__(self, other: Filter[T]) -> Filter[T]:
        return AnyOf(self, other)

    def __invert__(self) -> Filter[T]:
        return Not(self)

    def config(self) -> Mapping[str, Any]:
        """Plain data describing this filter (used in config hashes and spec dumps)."""
        return {}

    def describe(self) -> dict[str, Any]:
        return {"filter": type(self).__name__, **self.config()}

    def __repr__(self) -> str:
        """``ClassName(key=value, ...)`` from :meth:`config`; ``&``, ``|`` and ``~`` as
        written."""
        shown = ", ".join(f"{key}={value!r}" for key, value in self.config().items())
        return f"{type(self).__name__}({shown})"


class AllOf(Filter[T]):
    """Matches when every part matches."""

    def __init__(self, *parts: Filter[T]) -> None:
        if not parts:
            raise ConfigurationError("AllOf needs at least one filter")
        flat: list[Filter[T]] = []
        for part in parts:
            flat.extend(part.parts if isinstance(part, AllOf) else (part,))  # type: ignore[has-type]
        self.parts: tuple[Filter[T], ...] = tuple(flat)
        self.requires_content = any(p.requires_content for p in self.parts)

    def matches(self, item: T) -> bool:
        return all(p.matches(item) for p in self.parts)

    def config(self) -> Mapping[str, Any]:
        return {"all": [p.describe() for p in self.parts]}

    def __repr__(self) -> str:
        return "(" + " & ".join(map(repr, self.parts)) + ")"


class AnyOf(Filter[T]):
    """Matches when any part matches."""

    def __init__(self, *parts: Filter[T]) -> None:
        if not parts:
            raise ConfigurationError("AnyOf needs at least one filter")
        flat: list[Filter[T]] = []
        for part in parts:
            flat.extend(part.parts if isinstance(part, AnyOf) else (part,))  # type: ignore[has-type]
        self.parts: tuple[Filter[T], ...] = tuple(flat)
        self.requires_content = any(p.requires_content for p in self.parts)

    def matches(self, item: T) -> bool:
        return any(p.matches(item) for p in self.parts)

    def config(self) -> Mapping[str, Any]:
        return {"any": [p.describe() for p in self.parts]}

    def __repr__(self) -> str:
        return "(" + " | ".join(map(repr, self.parts)) + ")"


class Not(Filter[T]):
    """Matches when its part does not."""

    def __init__(self, part: Filter[T]) -> None:
        self.part = part
        self.requires_content = part.requires_content

    def matches(self, item: T) -> bool:
        return not self.part.matches(item)

    def config(self) -> Mapping[str, Any]:
        return {"not": self.part.describe()}

    def __repr__(self) -> str:
        return f"~{self.part!r}"


#: The prefix of custom format names a filter accepts without any loader producing them.
CUSTOM_PREFIX = "x-"

_PRODUCED: tuple[object, frozenset[str]] | None = None


def produced_formats() -> frozenset[str]:
    """The content formats the installed loaders declare they produce (their ``produces``),
    read once per installed set of plugins; a loader that cannot be loaded is left out."""
    global _PRODUCED
    from .plugins import Registry
    from .plugins._discovery import installed_entry_points

    installed = installed_entry_points()
    if _PRODUCED is not None and _PRODUCED[0] is installed:
        return _PRODUCED[1]
    import logging

    logger = logging.getLogger("ragloom")
    level = logger.level
    logger.setLevel(logging.ERROR)  # broken plugins are reported where they are used
    try:
        registry = Registry()
    finally:
        logger.setLevel(level)
    found: set[str] = set()
    for name in registry.names("loader"):
        try:
            produces = getattr(registry.resolve("loader", name), "produces", ()) or ()
        except Exception:  # noqa: BLE001 - a broken loader produces nothing here
            continue
        found.update(str(ContentFormat.coerce(f)) for f in produces if isinstance(f, str))
    _PRODUCED = (installed, frozenset(found))
    return _PRODUCED[1]


def _unknown_format(value: str, fmt: str, name: str) -> ConfigurationError:
    from .loaders_builtin import CODE_LANGUAGES
    from .models import FORMAT_ALIASES

    known = sorted(str(f) for f in ContentFormat)
    produced = sorted(produced_formats() - set(known))
    languages = {suffix.lstrip("."): lang for suffix, lang in CODE_LANGUAGES.items()}
    languages.update({lang: lang for lang in CODE_LANGUAGES.values()})
    if fmt in languages:
        language = languages[fmt]
        hint = (
            f" (source files are 'code', their language is in metadata['language']: match "
            f"them with MetadataFilter(language={language!r}), in a pipeline file "
            f'{{ metadata = {{ language = "{language}" }} }})'
        )
    else:
        names = {**{k: k for k in [*known, *produced]}, **FORMAT_ALIASES}
        hint = did_you_mean(fmt, names, n=3)
    more = f"; from installed loaders: {', '.join(produced)}" if produced else ""
    short = ", ".join(a for a in FORMAT_ALIASES if "/" not in a)
    return ConfigurationError(
        f"ContentFormatFilter.{name}: unknown content format {value!r}{hint}. Known formats: "
        f"{', '.join(known)} (also written {short}, or as MIME types){more}. A format of your "
        f"own is accepted when an installed loader produces it, or when its name starts with "
        f"{CUSTOM_PREFIX!r} (e.g. {CUSTOM_PREFIX + fmt!r})"
    )


def _formats(values: Iterable[str] | str | None, name: str) -> frozenset[str] | None:
    if values is None:
        return None
    if isinstance(values, str):
        values = [values]
    out = set()
    for value in values:
        if not isinstance(value, str) or not value.strip():
            raise ConfigurationError(f"ContentFormatFilter.{name} must hold non-empty strings")
        fmt = str(ContentFormat.coerce(value))
        known = fmt in ContentFormat._value2member_map_ or fmt.startswith(CUSTOM_PREFIX)
        if not known and fmt not in produced_formats():
            raise _unknown_format(value, fmt, name)
        out.add(fmt)
    return frozenset(out)


class ContentFormatFilter(Filter[Any]):
    """Matches items by ``content_format``.

    A format is named by its well-known name (``markdown``), one of its other names
    (:data:`ragloom.models.FORMAT_ALIASES`: ``md``, ``htm``, ``txt``, ``text/html``...), a
    format an installed loader produces (its ``produces``), or a custom name starting with
    ``x-``. Any other name is refused with a ``ConfigurationError`` that suggests the closest
    ones: a misspelt format would otherwise match nothing and send every item to the default
    route.
    """

    requires_content = False

    def __init__(
        self,
        include_formats: Iterable[str] | str | None = None,
        exclude_formats: Iterable[str] | str | None = None,
    ) -> None:
        self.include_formats = _formats(include_formats, "include_formats")
        self.exclude_formats = _formats(exclude_formats, "exclude_formats")
        if self.include_formats is None and self.exclude_formats is None:
            raise ConfigurationError("ContentFormatFilter needs include_formats or exclude_formats")

    def matches(self, item: Any) -> bool:
        fmt = str(getattr(item, "content_format", ""))
        if self.include_formats is not None and fmt not in self.include_formats:
            return False
        return not (self.exclude_formats is not None and fmt in self.exclude_formats)

    def config(self) -> Mapping[str, Any]:
        out: dict[str, Any] = {}
        if self.include_formats is not None:
            out["include_formats"] = sorted(self.include_formats)
        if self.exclude_formats is not None:
            out["exclude_formats"] = sorted(self.exclude_formats)
        return out


_MISSING = object()


class MetadataFilter(Filter[Any]):
    """Matches items whose metadata has the given values.

    ``MetadataFilter(lang="en")`` needs ``metadata["lang"] == "en"``; a list or tuple value
    means "one of"; ``...`` (Ellipsis) means "the key is present". Dotted keys reach into nested
    mappings (``"source.kind"``).
    """

    requires_content = False

    def __init__(self, conditions: Mapping[str, Any] | None = None, **kwargs: Any) -> None:
        merged = {**(conditions or {}), **kwargs}
        if not merged:
            raise ConfigurationError("MetadataFilter needs at least one condition")
        self.conditions = merged

    @staticmethod
    def _lookup(metadata: Mapping[str, Any], key: str) -> Any:
        if key in metadata:
            return metadata[key]
        value: Any = metadata
        for part in key.split("."):
            if not isinstance(value, Mapping) or part not in value:
                return _MISSING
            value = value[part]
        return value

    def matches(self, item: Any) -> bool:
        metadata = getattr(item, "metadata", None) or {}
        for key, expected in self.conditions.items():
            actual = self._lookup(metadata, key)
            if actual is _MISSING:
                return False
            if expected is Ellipsis:
                continue
            if isinstance(expected, list | tuple | set | frozenset):
                if actual not in expected:
                    return False
            elif actual != expected:
                return False
        return True

    def config(self) -> Mapping[str, Any]:
        return {
            "conditions": {
                k: ("<present>" if v is Ellipsis else v) for k, v in self.conditions.items()
            }
        }


class PredicateFilter(Filter[T]):
    """Wraps a plain callable. Assumed to read content unless told otherwise."""

    def __init__(self, predicate: Callable[[T], bool], *, requires_content: bool = True) -> None:
        self.predicate = predicate
        self.requires_content = requires_content

    def matches(self, item: T) -> bool:
        return bool(self.predicate(item))

    def config(self) -> Mapping[str, Any]:
        fn = self.predicate
        return {"predicate": f"{getattr(fn, '__module__', '?')}:{getattr(fn, '__qualname__', '?')}"}
