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
    """The hooks a ragloom plugin may implement.

    Every pipeline, however it is built (in Python, from a pipeline file, by a query block,
    by the CLI), runs with the hooks of the installed plugins unless it is built with
    ``plugin_hooks=False``. Each hook is called through pluggy (so pluggy's tracing and
    hook-call monitoring see it), one plugin at a time: a plugin whose hook raises is reported
    once (a warning) and never stops a run or another plugin.
    """

    @hookspec
    def ragloom_register(self, register: Callable[..., None]) -> None:
        """Contribute components dynamically.

        Call ``register(kind, name, factory)`` for each, where ``kind`` is a kind of the
        table of kinds (``chunker``, ``step``, ``embedder``, ``loader``, ``store``,
        ``retriever``, ``decomposer``, ``router``, ``reranker``, ``answerer``, ``filter``,
        ``cache_store``, ``engine``, ``length``, ``command``; a test checks this list against
        :data:`ragloom.kinds.KINDS`). The callback is owned by the core: it validates the
        contribution, detects name clashes and records which distribution registered what,
        exactly as for entry points.
        """

    @hookspec
    def ragloom_event(self, event: Any) -> None:
        """Observe every event of every run (called synchronously, in order)."""

    @hookspec
    async def ragloom_event_async(self, event: Any) -> None:
        """Observe every event of every run with an ``async def`` (awaited in order, in the
        run's event loop: keep it quick, or hand the work to a task or queue of your own)."""

    @hookspec
    def ragloom_pipeline_built(self, pipeline: Any, spec: Any) -> None:
        """Observe a pipeline right after it was built from a declarative spec."""

    @hookspec
    def ragloom_default_policy(self, kind: str, step: Any) -> Any:
        """Organisation-wide policy defaults for steps of ``kind`` (``chunker``,
        ``embedder``, ``step``, ``decomposer``, ``router``, ``retriever``...): return a
        :class:`~ragloom.policy.Policy` (its set fields are used) or ``None``.

        They apply below everything set in code or pipeline files: a field the step, its
        router or its pipeline sets wins, then the organisation's policy file's and platform
        plugins' ``default-policy``; these hooks' defaults fill what is left, before ragloom's
        own defaults. When several plugins answer, the earlier-registered one wins
        field by field.
        """

    @hookspec
    def ragloom_wrap_step(self, step: Any, call: Callable[..., Any], is_async: bool) -> Any:
        """Wrap each item call of ``step`` (tracing, authorisation, redaction, rate limits).

        ``call(item)`` does the step's work on one item and returns what it produced; it is an
        ``async`` function when ``is_async``. Return a function of the same kind (sync or
        async) that calls it, or ``None`` to leave the step alone. Wrappers nest in plugin
        order, the first registered outermost. What the wrapper raises fails the item.
        """

    @hookspec
    def ragloom_query_steps(self, stage: str, block: Any) -> Any:
        """Steps to add to a query block's pipeline: ``stage`` is ``"before"`` (run on each
        question before it is decomposed: rewriting, redaction) or ``"after"`` (run on each
        result: filtering, auditing). Return a list of :class:`~ragloom.step.PipelineStep`
        (new objects on every call) or ``None``."""

    @hookspec
    def ragloom_policy(self) -> Any:
        """The organisation policy a platform plugin contributes: a mapping with the keys of a
        policy file (``allow-plugins``, ``block-plugins``, ``require-wrappers``,
        ``default-policy``), or ``None``.

        Called once, before any plugin is discovered, and only in a module named under the
        ``ragloom.policy`` entry-point group: that module (and the packages it sits in) is
        imported, nothing else of the plugin. The operator's policy file and environment win
        over it on a conflict; a plugin the operator blocks is not asked. Implemented in a
        ``ragloom.plugins`` hook module it is never called (discovery is over by then).
        """

