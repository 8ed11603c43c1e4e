"""Reading a step's public hooks: what kind of function ``transform`` is, which checks it has.

A step's ``transform`` may be a plain function, a generator, an ``async def`` function or an
async generator, taking ``(item)`` or ``(item, context)``. What it is decides how the engine
calls it; it is worked out once per function object and remembered.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, TypeVar

from .protocols import C, RunStep

__all__ = ["Hook", "StepHooks", "default_hook", "hook_of", "hooks_of", "is_default"]


HookKind = Literal["sync", "gen", "async", "agen"]
F = TypeVar("F", bound=Callable[..., object])


def default_hook(fn: F) -> F:
    """Mark a base class's hook as "does nothing": the engine skips calling it."""
    fn.__ragloom_default__ = True  # type: ignore[attr-defined]
    return fn


def is_default(method: object) -> bool:
    """Whether ``method`` (bound or not) is a hook marked with :func:`default_hook`."""
    return bool(getattr(method, "__ragloom_default__", False))


@dataclass(frozen=True, slots=True)
class Hook:
    """How to call one hook function."""

    kind: HookKind
    #: Whether it takes the execution context as its second positional argument.
    takes_context: bool

    @property
    def awaits(self) -> bool:
        return self.kind in ("async", "agen")


_HOOKS: dict[object, Hook] = {}


def hook_of(fn: Callable[..., object]) -> Hook:
    """The :class:`Hook` of a (bound) function or callable object."""
    key = getattr(fn, "__func__", fn)
    try:
        found = _HOOKS.get(key)
    except TypeError:  # an unhashable callable object
        found, key = None, None
    if found is not None:
        return found
    target = fn if inspect.isroutine(fn) or hasattr(fn, "func") else type(fn).__call__
    if inspect.isasyncgenfunction(target):
        kind: HookKind = "agen"
    elif inspect.iscoroutinefunction(target):
        kind = "async"
    elif inspect.isgeneratorfunction(target):
        kind = "gen"
    else:
        kind = "sync"
    hook = Hook(kind, _positional_count(fn) >= 2)
    if key is not None:
        _HOOKS[key] = hook
    return hook


def _positional_count(fn: Callable[..., object]) -> int:
    """How many positional arguments ``fn`` accepts (a large number for ``*args``)."""
    try:
        parameters = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):  # a builtin without a signature: one argument
        return 1
    count = 0
    for p in parameters:
        if p.kind is p.VAR_POSITIONAL:
            return 1_000
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            count += 1
    return count


@dataclass(frozen=True, slots=True)
class StepHooks:
    """What the engine needs to know about one step's hooks."""

    transform: Hook
    #: Whether ``validate_input`` does something (it is called before each item and replay).
    checks_input: bool
    #: How ``validate_output`` is called: ``None`` (it does nothing), sync or async.
    checks_output: Literal["sync", "async"] | None
    #: The ``transform_batch`` hook, when the step works on batches of items.
    batch: Hook | None = None

    @property
    def awaits(self) -> bool:
        if self.batch is not None:
            return self.batch.awaits or self.checks_output == "async"
        return self.transform.awaits or self.checks_output == "async"


def hooks_of(step: RunStep[C]) -> StepHooks:
    """The hooks of ``step`` (its ``transform`` may be set per instance)."""
    output = step.validate_output
    checks_output: Literal["sync", "async"] | None = None
    if not is_default(output):
        checks_output = "async" if hook_of(output).awaits else "sync"
    batch = getattr(step, "transform_batch", None)
    return StepHooks(
        hook_of(step.transform),
        not is_default(step.validate_input),
        checks_output,
        None if batch is None or is_default(batch) else hook_of(batch),
    )
