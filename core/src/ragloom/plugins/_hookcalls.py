"""Calling the plugins' pluggy hooks for one registry, each plugin on its own."""

from __future__ import annotations

import inspect
import logging
from typing import Any

import pluggy

from .hookspecs import PROJECT, RagloomHookSpecs

__all__ = ["HookCalls"]


class HookCalls:
    """A pluggy plugin manager and the calls a run makes into it.

    Each hook is called one plugin at a time through a pluggy caller restricted to that plugin,
    so pluggy's tracing and monitoring see every call and a plugin that raises is reported once
    (a warning, and in :attr:`hook_errors`) without stopping another plugin or the run.
    :class:`~ragloom.plugins.Registry` is one; it registers the hook modules it loads on
    :attr:`pm`.
    """

    def __init__(self) -> None:
        self.pm = pluggy.PluginManager(PROJECT)
        self.pm.add_hookspecs(RagloomHookSpecs)
        self._callers: dict[tuple[str, int], tuple[frozenset[int], Any]] = {}
        self._implementers: dict[str, tuple[frozenset[int], list[tuple[str, Any]]]] = {}
        #: ``(plugin, hook) -> message`` for hooks that raised while being called.
        self.hook_errors: dict[tuple[str, str], str] = {}
        #: The organisation's policy defaults by kind (a policy file's ``default-policy``):
        #: their fields win over the plugins' ``ragloom_default_policy`` answers.
        self.policy_defaults: dict[str, Any] = {}

    def _caller(self, hook: str, plugin: Any) -> Any:
        """A pluggy caller of ``hook`` restricted to ``plugin`` (so pluggy's tracing and
        monitoring see each call, and one plugin's error never stops another's call); made
        once per plugin set."""
        key = (hook, id(plugin))
        found = self._callers.get(key)
        if found is None or found[0] != self._plugin_set():
            others = [p for p in self.pm.get_plugins() if p is not plugin]
            found = (self._plugin_set(), self.pm.subset_hook_caller(hook, remove_plugins=others))
            self._callers[key] = found
        return found[1]

    def _plugin_set(self) -> frozenset[int]:
        return frozenset(id(p) for p in self.pm.get_plugins())

    def _hook_plugins(self, hook: str) -> list[tuple[str, Any]]:
        """``(name, plugin)`` of every registered plugin implementing ``hook``."""
        current = self._plugin_set()
        found = self._implementers.get(hook)
        if found is None or found[0] != current:
            caller = getattr(self.pm.hook, hook)
            found = (current, [(i.plugin_name, i.plugin) for i in caller.get_hookimpls()])
            self._implementers[hook] = found
        return found[1]

    def call_isolated(self, hook: str, **kwargs: Any) -> list[Any]:
        """Call ``hook`` on every plugin, each on its own, and return their answers (``None``
        answers left out), first-registered plugin first. One that raises is reported once (a
        warning, and in :attr:`hook_errors`) and never stops the others or the caller."""
        answers: list[Any] = []
        for name, plugin in self._hook_plugins(hook):
            try:
                for answer in self._caller(hook, plugin)(**kwargs):
                    if answer is not None:
                        answers.append(answer)
            except Exception as exc:  # noqa: BLE001 - a plugin never breaks a run
                self._hook_failed(name, hook, exc)
        return answers

    async def acall_isolated(self, hook: str, **kwargs: Any) -> None:
        """Like :meth:`call_isolated` for ``async`` hooks: each answer is awaited in turn."""
        for name, plugin in self._hook_plugins(hook):
            try:
                for answer in self._caller(hook, plugin)(**kwargs):
                    if inspect.isawaitable(answer):
                        await answer
            except Exception as exc:  # noqa: BLE001 - a plugin never breaks a run
                self._hook_failed(name, hook, exc)

    def _hook_failed(self, name: str, hook: str, exc: BaseException) -> None:
        key = (name, hook)
        if key not in self.hook_errors:
            self.hook_errors[key] = line = (
                f"plugin {name}: {hook} raised {type(exc).__name__}: {exc}"
            )
            logging.getLogger("ragloom").warning("%s; it keeps being called", line)

    def implements(self, hook: str) -> bool:
        """Whether any loaded plugin implements ``hook``."""
        return bool(self._hook_plugins(hook))

    async def aemit(self, event: Any) -> None:
        """Deliver ``event`` to the ``ragloom_event_async`` hooks (each plugin isolated)."""
        await self.acall_isolated("ragloom_event_async", event=event)

    def has_default_policies(self) -> bool:
        """Whether a policy file or a plugin gives policy defaults."""
        return bool(self.policy_defaults) or self.implements("ragloom_default_policy")

    def default_policy(self, kind: str, step: Any) -> Any:
        """The policy defaults for a step of ``kind`` (``None`` when none): the organisation's
        policy file's over the plugins' answers, which are merged field by field, the
        earlier-registered plugin winning."""
        from ..policy import Policy

        merged: Policy | None = None
        if not self.implements("ragloom_default_policy"):
            return self.policy_defaults.get(kind)
        for answer in self.call_isolated("ragloom_default_policy", kind=kind, step=step):
            if not isinstance(answer, Policy):
                self._hook_failed(
                    "?", "ragloom_default_policy",
                    TypeError(f"returned {type(answer).__name__}, not a Policy"),
                )
                continue
            merged = answer if merged is None else merged.merged_over(answer)
        operator: Policy | None = self.policy_defaults.get(kind)
        return operator.merged_over(merged) if operator is not None else merged

    def wrap_step(self, step: Any, call: Any, is_async: bool) -> Any:
        """``call`` wrapped by every plugin's ``ragloom_wrap_step`` (first registered
        outermost)."""
        wrappers: list[Any] = []
        for name, plugin in self._hook_plugins("ragloom_wrap_step"):
            wrappers.append((name, plugin))
        for name, plugin in reversed(wrappers):
            try:
                answers = self._caller("ragloom_wrap_step", plugin)(
                    step=step, call=call, is_async=is_async
                )
            except Exception as exc:  # noqa: BLE001 - a plugin never breaks a run
                self._hook_failed(name, "ragloom_wrap_step", exc)
                continue
            for answer in answers:
                if answer is not None and callable(answer):
                    call = answer
        return call

    def query_steps(self, stage: str, block: Any) -> list[Any]:
        """The steps plugins add at ``stage`` (``"before"`` or ``"after"``) of a query block."""
        from ..step import PipelineStep

        steps: list[Any] = []
        for answer in self.call_isolated("ragloom_query_steps", stage=stage, block=block):
            for step in answer if isinstance(answer, list | tuple) else [answer]:
                if isinstance(step, PipelineStep):
                    steps.append(step)
                else:
                    self._hook_failed(
                        "?", "ragloom_query_steps",
                        TypeError(f"returned {type(step).__name__}, not a PipelineStep"),
                    )
        return steps

    def emit(self, event: Any) -> None:
        """Deliver ``event`` to the ``ragloom_event`` hooks (each plugin isolated)."""
        self.call_isolated("ragloom_event", event=event)
