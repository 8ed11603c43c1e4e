"""``Component``: what every configurable part of a pipeline shares.

A component declares a stable identity (``step_id``) and returns from :meth:`config` everything
that affects its output, as plain data that also rebuilds it (``type(c)(**c.config())``). Its
``config_hash`` is a stable hash of the two, equal across processes and machines, and part of
every cache id the component reads or writes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from ._hashing import stable_hash

__all__ = ["Component"]


class Component:
    """Base of steps, query transformers and routers."""

    #: Declared identity used by ``config_hash``. Set it (e.g. ``"ragloom-text/recursive"``) so
    #: that renaming or moving the class does not invalidate caches. Defaults to the class's
    #: module and qualified name.
    step_id: ClassVar[str | None] = None

    #: Bump when the component's output changes for the same config (a bug fix, a new model).
    step_version: ClassVar[int] = 1

    @classmethod
    def identity(cls) -> str:
        """The declared ``step_id``, or ``module.QualName``."""
        declared = cls.__dict__.get("step_id")
        if declared:
            return str(declared)
        return f"{cls.__module__}.{cls.__qualname__}"

    def config(self) -> Mapping[str, Any]:
        """What affects this component's output, as plain (JSON-able) data. Default: nothing."""
        return {}

    @property
    def config_hash(self) -> str:
        """A stable hash of :meth:`identity`, ``step_version`` and :meth:`config`."""
        return stable_hash(self.identity(), self.step_version, dict(self.config()))
