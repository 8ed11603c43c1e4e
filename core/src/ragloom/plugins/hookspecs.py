"""pluggy hook specifications of ragloom (project name ``"ragloom"``).

A plugin module listed under the ``ragloom.plugins`` entry-point group implements any of these
with :data:`hookimpl`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pluggy

__all__ = ["PROJECT", "hookimpl", "hookspec"]

PROJECT = "ragloom"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


class RagloomHookSpecs:
    """The hooks a ragloom plugin may implement."""

    @hookspec
    def ragloom_register(self, register: Callable[..., None]) -> None:
        """Contribute components dynamically.

        Call ``register(kind, name, factory)`` for each, where ``kind`` is one of ``chunker``,
        ``router``, ``decomposer``, ``filter``, ``step``, ``cache_store``. The callback is owned
        by the core: it validates the contribution, detects name clashes and records which
        distribution registered what, exactly as for entry points.
        """

    @hookspec
    def ragloom_event(self, event: Any) -> None:
        """Observe every event of every pipeline built with this registry (sync)."""

    @hookspec
    def ragloom_pipeline_built(self, pipeline: Any, spec: Any) -> None:
        """Observe a pipeline right after it was built from a declarative spec."""
