"""``RoutedStep``: dispatch each item to the first matching child step, or a default."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Literal, TypeVar

from .context import ExecutionContext
from .errors import ComponentTypeError, ConfigurationError, UnroutedItemError
from .filters import Filter
from .policy import Policy
from .step import PipelineStep

if TYPE_CHECKING:
    from typing import Self

    from .cache.base import CacheStore

__all__ = ["RoutedStep"]

T = TypeVar("T")


class RoutedStep(PipelineStep[T]):
    """Route each item to the first matching ``.route`` child, else ``.default``.

    Holds no processing logic of its own. An item that matches no route when no default is
    registered fails with an ``ItemFailed`` naming it (never a silent drop). A child without an
    explicit policy or cache inherits this router's effective ones, field by field; a child's
    own policy (retries, timeout) applies to the items routed to it. A routed item's cache id is
    keyed by the child that handled it.
    """

    routes_items: ClassVar[bool] = True

    def __init__(
        self,
        *,
        cache: CacheStore | Literal[False] | None = None,
        policy: Policy | None = None,
        name: str | None = None,
    ) -> None:
        super().__init__(cache=cache, policy=policy, name=name)
        self.routes: list[tuple[Filter[T], PipelineStep[T]]] = []
        self.default_step: PipelineStep[T] | None = None

    def _check_child(self, step: object) -> PipelineStep[T]:
        if not isinstance(step, PipelineStep):
            raise ComponentTypeError(
                f"{type(self).__name__} routes to PipelineSteps, got {type(step).__name__}"
            )
        if step is self:
            raise ConfigurationError(f"{self.name} cannot route to itself")
        return step

    def route(self, filter_rule: Filter[T], step: PipelineStep[T]) -> Self:
        """Register a child step for items matching ``filter_rule``; returns self."""
        if not isinstance(filter_rule, Filter):
            raise ComponentTypeError(
                f"route() needs a Filter as its first argument, got {type(filter_rule).__name__}"
            )
        self.routes.append((filter_rule, self._check_child(step)))
        return self

    def default(self, step: PipelineStep[T]) -> Self:
        """Register the step for items that match no route; returns self."""
        if self.default_step is not None:
            raise ConfigurationError(f"{self.name} already has a default step")
        self.default_step = self._check_child(step)
        return self

    def __repr__(self) -> str:
        """The router as it is built: ``ChunkerRouter().route(filter, step).default(step)``."""
        routes = "".join(f".route({rule!r}, {step!r})" for rule, step in self.routes)
        default = "" if self.default_step is None else f".default({self.default_step!r})"
        return f"{super().__repr__()}{routes}{default}"

    @property
    def children(self) -> Sequence[PipelineStep[T]]:
        steps = [step for _f, step in self.routes]
        if self.default_step is not None:
            steps.append(self.default_step)
        return steps

    @property
    def awaits(self) -> bool:
        """Whether any child's work awaits."""
        return any(child.awaits for child in self.children)

    @property
    def routing_requires_content(self) -> bool:
        """Whether choosing a route reads item content (any filter needs it).

        When ``False`` routing, and so the cache id of a routed item, depends only on its
        identity, format and metadata.
        """
        return any(f.requires_content for f, _s in self.routes)

    def config(self) -> Mapping[str, Any]:
        """Routes and their children's config hashes.

        An item's cache id is keyed by the child that handled it; this config identifies the
        routing table itself (for pipeline dumps and equality).
        """
        return {
            "routes": [{"filter": f.describe(), "step": s.config_hash} for f, s in self.routes],
            "default": self.default_step.config_hash if self.default_step else None,
        }

    def select(self, item: T) -> PipelineStep[T] | None:
        """The child that handles ``item`` (first match wins), else the default, else None."""
        for filter_rule, step in self.routes:
            if filter_rule.matches(item):
                return step
        return self.default_step

    def _selected(self, item: T) -> PipelineStep[T]:
        child = self.select(item)
        if child is None:
            from ._engine.calls import item_id

            raise UnroutedItemError(
                f"{self.name}: item {item_id(item)!r} matched no route and no default is set"
            )
        return child

    async def transform(self, item: T, context: ExecutionContext) -> list[T]:
        """What the selected child produces for ``item`` (pipelines dispatch items to the
        children directly, under each child's own policy; this serves direct calls)."""
        from ._engine.calls import as_outputs, raw_call

        is_async, call = raw_call(self._selected(item), context)
        return as_outputs(await call(item) if is_async else call(item))

    def validate_input(self, item: T) -> None:
        """Forward input validation to the child selected for ``item``."""
        child = self.select(item)
        if child is not None:
            child.validate_input(item)

    async def validate_output(self, item: T, produced: list[T], context: ExecutionContext) -> None:
        """Forward output validation to the child selected for ``item``."""
        child = self.select(item)
        if child is not None:
            result = child.validate_output(item, produced, context)
            if result is not None and hasattr(result, "__await__"):
                await result
