"""``Component``: what every configurable part of a pipeline shares.

A component has a stable declared identity (``step_id``), a version (``step_version``), the code
of its class (:func:`ragloom.identity.class_code`: its methods and the class attributes they
read, through its bases down to ragloom's own), and a *cache identity* derived from what it was
built with: every constructor argument (captured when it is built) and its
:meth:`~Component.config`, canonicalised by :mod:`ragloom.identity`. ``config_hash`` hashes the
four; it is equal across processes and machines and part of every
cache id the component reads or writes. :meth:`~Component.config` is what pipeline files
serialise (``type(c)(**c.config())`` rebuilds it); the cache does not rely on it being complete.
"""

from __future__ import annotations

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
