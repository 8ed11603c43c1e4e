"""``Component``: what every configurable part of a pipeline shares.

A component has a stable declared identity (``step_id``), a version (``step_version``), the code
of its class (:func:`ragloom.identity.class_code`: its methods and the class attributes they
read, through its bases down to ragloom's own), and a *cache identity* derived from what it was
built with: every constructor argument (captured when it is built) and its
:meth:`~Component.config`, canonicalised by :mod:`ragloom.identity`. ``config_hash`` hashes the
four; it is equal across processes and machines and part of every
cache id the component reads or writes. :meth:`~Component.config` is what pipeline files
serialise (``type(c)(**c.config())`` rebuilds it); the cache does not rely on it being complete.

``repr(component)`` is derived from the same captured arguments, so no class writes its own:
``RecursiveCharacterTextSplitter(chunk_size=500, chunk_overlap=0)``.
"""

from __future__ import annotations

import reprlib
from collections.abc import Mapping
from typing import Any, ClassVar

from ._hashing import stable_hash

__all__ = ["Component"]


class Component:
    """Base of steps, query transformers, routers, loaders, embedders and stores."""

    #: Declared identity used by ``config_hash``. Set it (e.g. ``"ragloom-text/recursive"``) so
    #: that renaming or moving the class does not invalidate caches. Defaults to the class's
    #: module and qualified name.
    step_id: ClassVar[str | None] = None

    #: Bump when the component's output changes for the same arguments and the same code of
    #: its class (a new model behind the same name, data it reads from elsewhere): cached
    #: outputs of the old version are then not replayed. Edits of the class's own code need
    #: no bump: they are part of the identity already.
    step_version: ClassVar[int] = 1

    #: Constructor parameters that never shape the output (how it runs, what it is called).
    identity_ignores: ClassVar[frozenset[str]] = frozenset()

    #: How :mod:`ragloom.identity` tells a component nested in an argument (identified by its
    #: ``config_hash``) without importing this module.
    _ragloom_component: ClassVar[bool] = True

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        self = super().__new__(cls)
        # The arguments it is built with: part of its cache identity (see cache_identity).
        self.__dict__["_ragloom_args"] = (args, kwargs)
        return self

    @classmethod
    def identity(cls) -> str:
        """The declared ``step_id``, or ``module.QualName``."""
        declared = cls.__dict__.get("step_id")
        if declared:
            return str(declared)
        return f"{cls.__module__}.{cls.__qualname__}"

    def config(self) -> Mapping[str, Any]:
        """What a pipeline file writes to rebuild this component, as plain (JSON-able) data.

        Default: nothing. The cache identity does not depend on this being complete: every
        constructor argument is part of it anyway.
        """
        return {}

    def cache_identity(self) -> Any:
        """Canonical data covering everything that shapes this component's output.

        Derived: the constructor arguments (except :attr:`identity_ignores`) and
        :meth:`config`. A component that knows a better identity may override this (a model
        by the digest of its files rather than their path); whatever it returns must cover
        everything that shapes the output.

        Raises:
            ragloom.identity.Uncacheable: an argument has no stable identity; the message names
                it. A ``cache_version`` set on the component stands in for such arguments.
        """
        from .identity import Uncacheable, canonical_identity, captured_arguments

        version = self.__dict__.get("cache_version")
        out: dict[str, Any] = {}
        name = type(self).__qualname__
        for key, value in captured_arguments(self).items():
            if key in self.identity_ignores:
                continue
            try:
                out[key] = canonical_identity(value, f"{name} parameter {key!r}")
            except Uncacheable:
                if version is None:
                    raise
                out[key] = {"opaque": type(value).__qualname__}
        try:
            config = canonical_identity(dict(self.config()), f"{name}.config()")
        except Uncacheable:
            if version is None:
                raise
            config = None
        identity: dict[str, Any] = {"arguments": out, "config": config}
        if version is not None:
            identity["cache_version"] = version
        return identity

    def __repr__(self) -> str:
        """``ClassName(param=value, ...)`` from the arguments it was built with: every
        positional-or-keyword parameter (the main settings, defaults included) and the
        keyword-only ones given another value than their default. Long values are shortened
        (nested components are shown whole)."""
        try:
            shown = ", ".join(
                _REPR.repr(value) if not key else f"{key}={_REPR.repr(value)}"
                for key, value in _shown_arguments(self)
            )
        except Exception:  # noqa: BLE001 - a repr must never raise
            return object.__repr__(self)
        return f"{type(self).__name__}({shown})"

    def code_identity(self) -> str | None:
        """A digest of this component's class's code (see :func:`ragloom.identity.class_code`):
        ``None`` for a class of ragloom's core.

        Raises:
            ragloom.identity.Uncacheable: a class attribute its methods read has no stable
                identity (a ``cache_version`` set on the component stands in for it).
        """
        from .identity import Uncacheable, class_code

        try:
            return class_code(type(self))
        except Uncacheable:
            if self.__dict__.get("cache_version") is None:
                raise
            return "opaque"

    @property
    def config_hash(self) -> str:
        """A stable hash of :meth:`identity`, ``step_version``, :meth:`code_identity` and
        :meth:`cache_identity`."""
        arguments = self.cache_identity()  # first: an argument's problem is named first
        return stable_hash(self.identity(), self.step_version, self.code_identity(), arguments)


def _same(value: Any, default: Any) -> bool:
    """Whether ``value`` is its parameter's default (an array or odd ``==`` is never equal)."""
    if value is default:
        return True
    try:
        return type(value) is type(default) and bool(value == default)
    except Exception:  # noqa: BLE001 - an ``==`` that raises or is ambiguous: not the default
        return False


def _shown_arguments(component: Component) -> list[tuple[str, Any]]:
    """What ``repr`` shows: ``(name, value)`` pairs, ``("", value)`` for ``*args`` items."""
    import inspect

    captured = component.__dict__.get("_ragloom_args")
    if captured is None:
        return []
    args, kwargs = captured
    try:
        signature = inspect.signature(type(component))
        bound = signature.bind(*args, **kwargs)
    except (TypeError, ValueError):
        return [*(("", value) for value in args), *kwargs.items()]
    bound.apply_defaults()
    shown: list[tuple[str, Any]] = []
    for name, value in bound.arguments.items():
        parameter = signature.parameters[name]
        if parameter.kind is inspect.Parameter.VAR_POSITIONAL:
            shown.extend(("", item) for item in value)
        elif parameter.kind is inspect.Parameter.VAR_KEYWORD:
            shown.extend(value.items())
        elif parameter.kind is inspect.Parameter.KEYWORD_ONLY and _same(value, parameter.default):
            continue
        else:
            shown.append((name, value))
    return shown


class _ShortRepr(reprlib.Repr):
    """``reprlib`` with room for settings; components nested in an argument shown whole."""

    def __init__(self) -> None:
        super().__init__()
        self.maxstring = 60
        self.maxother = 100
        self.maxlist = self.maxtuple = self.maxset = self.maxfrozenset = self.maxdict = 8
        self.maxlevel = 4

    def repr1(self, x: Any, level: int) -> str:
        if getattr(type(x), "_ragloom_component", False) or _is_filter(x):
            return repr(x)
        return super().repr1(x, level)

    def repr_function(self, x: Any, level: int) -> str:
        """A function by its name (``ragloom_text.count_words``), not its address."""
        module = getattr(x, "__module__", None)
        name = str(getattr(x, "__qualname__", None) or getattr(x, "__name__", "?"))
        return name if module in (None, "builtins") else f"{module}.{name}"

    repr_builtin_function_or_method = repr_function


def _is_filter(value: Any) -> bool:
    return any(
        klass.__name__ == "Filter" and klass.__module__ == "ragloom.filters"
        for klass in type(value).__mro__
    )


_REPR = _ShortRepr()
