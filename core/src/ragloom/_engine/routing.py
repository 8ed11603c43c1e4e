"""Routed steps: which leaf step does the work for an item, under which policy and cache.

A routed step (``routes_items = True``) chooses a child per item with ``select(item)``; a child
may itself route. Each leaf runs under its own effective policy, inherited field by field from
the routers above it, and its own effective cache. Leaves are worked out once per run, by
walking the tree, so each item costs one ``select`` per level and a dictionary lookup.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Generic, TypeGuard, cast

from ..errors import UnroutedItemError
from .calls import (
    Failure,
    as_outputs,
    attempt_call,
    is_interrupt,
    item_id,
    raw_call,
    stops_run,
)
from .hooks import hooks_of
from .protocols import C, Item, MaybeAsyncCall, RunPolicy, RunRouter, RunStats, RunStep, RunStore

if TYPE_CHECKING:
    from ..policy import Policy
    from .calls import Result

__all__ = ["Leaf", "Routing", "routes_items"]


def routes_items(step: RunStep[C]) -> TypeGuard[RunRouter[C]]:
    """Whether ``step`` routes its items to children (``routes_items = True``). It narrows on
    that flag alone: that a routing step has the rest of :class:`RunRouter` (``select``,
    ``children``, ``cache``) is its class's promise, not checked by mypy."""
    return bool(getattr(step, "routes_items", False))


class Leaf(Generic[C]):
    """One step that does work for a routed step, with what it runs under."""

    __slots__ = ("call", "checks_input", "context", "is_async", "mode", "policy", "stats", "step",
                 "store")  # fmt: skip

    def __init__(
        self, step: RunStep[C], context: C, policy: RunPolicy, router_stats: RunStats
    ) -> None:
        self.step = step
        self.context = context
        self.policy = policy
        self.store: RunStore | None = step.effective_cache(context)
        self.stats = context.stats_for(step)
        self.mode = policy.on_failure
        is_async, raw = raw_call(step, context)
        self.checks_input = hooks_of(step).checks_input
        simple = (policy.max_attempts or 1) == 1 and policy.timeout is None
        if simple and not is_async:
            self.is_async = False
            self.call: MaybeAsyncCall = raw
        else:
            self.is_async = True
            # Retries are counted (and reported) at the routed step the run lists.
            self.call = attempt_call(
                raw, is_async, policy=policy, context=context, stats=router_stats,
                step_name=self.stats.name,
            )


class Routing(Generic[C]):
    """The leaves under a routed step, and the result call that dispatches items to them.

    ``policy`` is the router's effective one: its children inherit it through the context
    (:meth:`~.protocols.RunContext.scoped`)."""

    def __init__(self, router: RunRouter[C], context: C, policy: Policy) -> None:
        self.router = router
        self.mode = policy.on_failure
        self.leaves: dict[int, Leaf[C]] = {}
        self._stats = context.stats_for(router)
        self._walk(router, context, policy)
        self.is_async = any(leaf.is_async for leaf in self.leaves.values())

    def _walk(self, node: RunRouter[C], context: C, policy: Policy) -> None:
        own_cache = node.cache if node.cache is not None else context.cache
        scoped = context.scoped(policy=policy, cache=own_cache)
        for child in node.children:
            child_policy = child.effective_policy(scoped)
            if routes_items(child):
                context.stats_for(child)
                self._walk(child, scoped, child_policy)
            elif id(child) not in self.leaves:
                self.leaves[id(child)] = Leaf(child, scoped, child_policy, self._stats)

    def leaf_for(self, item: Item) -> Leaf[C]:
        """The leaf that handles ``item``.

        Raises:
            UnroutedItemError: a router on the way matched no route and has no default.
        """
        node = self.router
        while True:
            child = node.select(item)
            if child is None:
                raise UnroutedItemError(
                    f"{node.name}: item {item_id(item)!r} matched no route and no default is set"
                )
            if not getattr(child, "routes_items", False):
                return self.leaves[id(child)]
            node = cast("RunRouter[C]", child)

    def result_call(self) -> tuple[bool, MaybeAsyncCall]:
        """``(is_async, call)``: ``item -> list | Failure`` (awaited when ``is_async``), the
        item run by its leaf."""
        leaf_for = self.leaf_for
        mode = self.mode

        def dispatch(item: Item) -> Leaf[C] | Failure:
            try:
                return leaf_for(item)
            except Exception as exc:  # noqa: BLE001 - an unroutable item fails alone
                return Failure(exc, 0, mode)

        if not self.is_async:

            def call(item: Item) -> Result:
                leaf = dispatch(item)
                if isinstance(leaf, Failure):
                    return leaf
                try:
                    produced = as_outputs(leaf.call(item))
                except BaseException as exc:
                    if stops_run(exc):
                        raise
                    return Failure(exc, 1, leaf.mode)
                stats = leaf.stats
                stats.items_in += 1
                stats.items_out += len(produced)
                return produced

            return False, call

        async def acall(item: Item) -> Result:
            leaf = dispatch(item)
            if isinstance(leaf, Failure):
                return leaf
            result: Result
            try:
                if leaf.is_async:
                    result = await leaf.call(item)
                else:
                    result = as_outputs(leaf.call(item))
            except BaseException as exc:
                if is_interrupt(exc):
                    raise
                return Failure(exc, 1, leaf.mode)
            if type(result) is list:
                stats = leaf.stats
                stats.items_in += 1
                stats.items_out += len(result)
            return result

        return True, acall

