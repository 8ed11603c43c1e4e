"""The query-side contracts: ``QueryTransformer`` (decomposers) and ``Router``."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ._hints import did_you_mean
from .component import Component
from .errors import ComponentTypeError, ConfigurationError, RoutingError

__all__ = [
    "QueryTransformer",
    "Retrieval",
    "RetrieveSpec",
    "Route",
    "RouteDecision",
    "Router",
    "WholeQuestion",
    "coerce_route",
]

M = TypeVar("M", bound=BaseModel)


def coerce_route(index: int, entry: Any, model: type[M]) -> M:
    """Route ``index`` of a router's configuration as a ``model`` instance.

    Accepts an instance or a mapping (from code or a config file); anything else, or a mapping
    that does not validate, raises ``ConfigurationError`` naming the route, where it is
    (``routes[2]``) and each problem; an unknown key gets the closest valid ones suggested.
    """
    if isinstance(entry, model):
        return entry
    if not isinstance(entry, Mapping):
        raise ConfigurationError(
            f"routes[{index}] must be a {model.__name__} or a mapping, got {type(entry).__name__}"
        )
    try:
        return model.model_validate(dict(entry))
    except ValidationError as exc:
        label = entry.get("name", index)
        keys = [field.alias or name for name, field in model.model_fields.items()]
        problems = []
        for err in exc.errors():
            where = ".".join(str(p) for p in err["loc"]) or "route"
            if err["type"] == "extra_forbidden" and len(err["loc"]) == 1:
                problems.append(_unknown_key(where, keys))
            else:
                problems.append(f"{where}: {err['msg']}")
        raise ConfigurationError(
            f"route {label!r} (routes[{index}]) is invalid: {'; '.join(problems)}"
        ) from None


def _unknown_key(key: str, keys: Sequence[str]) -> str:
    hint = did_you_mean(key, keys, n=2, form="{} ")
    return f"unknown key {key!r} ({hint}a route's keys: {', '.join(keys)})"


class RetrieveSpec(BaseModel):
    """How the sub-queries routed to one route are retrieved.

    ``retriever`` names a registered retriever (default: the search's default retriever);
    ``params`` are its parameters; ``where`` restricts the search to chunks whose metadata
    matches (see :class:`~ragloom.stores.Store`); ``top_k`` overrides how many passages are
    fetched; ``weight`` scales the route's results when they are fused with the others'.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    retriever: str | None = None
    params: dict[str, Any] = Field(default_factory=dict)
    where: dict[str, Any] | None = None
    top_k: int | None = Field(default=None, ge=1)
    weight: float = Field(default=1.0, gt=0)


class Route(BaseModel):
    """What every router's routes have: a name, what the route is for, and optionally how its
    sub-queries are retrieved. Routers extend it with their own evidence (keywords, examples).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(min_length=1)
    description: str = ""
    retrieve: RetrieveSpec | None = None

    @field_validator("name")
    @classmethod
    def _name_not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("name must not be blank")
        return value


class QueryTransformer(Component, ABC):
    """Turns one query into zero or more queries (a decomposer, a rewriter, an expander).

    Implement :meth:`transform_sync` for work that never awaits (rules, a local model), or the
    ``async`` :meth:`transform` for work that does (an LLM server). Each calls the other by
    default, so both are always available; :attr:`awaits` follows the one implemented.
    """

    @property
    def awaits(self) -> bool:
        """Whether the work awaits: ``False`` when only :meth:`transform_sync` is implemented."""
        cls = type(self)
        return (
            cls.transform is not QueryTransformer.transform
            or cls.transform_sync is QueryTransformer.transform_sync
        )

    async def transform(self, query: str) -> list[str]:
        """The transformed queries for ``query``."""
        return self.transform_sync(query)

    def transform_sync(self, query: str) -> list[str]:
        """:meth:`transform` from synchronous code (scripts and notebooks alike)."""
        if type(self).transform is QueryTransformer.transform:
            raise ComponentTypeError(
                f"{type(self).__name__} must implement transform_sync() or transform()"
            )
        from ._sync import run_sync

        return run_sync(self.transform, query)


class WholeQuestion(QueryTransformer):
    """No decomposition: the question itself is the only sub-query (``decomposer="none"`` in
    a search's settings; the baseline a decomposer is compared with)."""

    step_id = "ragloom/whole-question"

    def transform_sync(self, query: str) -> list[str]:
        return [query]


#: How a routed query is searched in the collections of its decision: ``"restrict"`` searches
#: only them; ``"boost"`` searches the whole index and, fused beside it, only them.
Retrieval = Literal["restrict", "boost"]


class RouteDecision(BaseModel):
    """A router's answer for one query.

    ``fallback_reason`` is set exactly when the default route was taken for lack of a real
    decision (no match, below threshold, an invalid answer, an error), so an error is never
    mistaken for a decision. ``score`` and the runner-up say how close the call was.

    A router over the collections of an index also says which ``collections`` the query is
    about and how the search uses them (``retrieval``: ``"restrict"`` or ``"boost"``; ``None``:
    the whole index, as the route's own ``retrieve`` settings say); ``note`` says why there is
    no routing at all (``"one collection: no routing"``); ``focus`` names the part of the query
    the decision was taken on when it was not the whole (searched too, restricted the same).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    route: str
    score: float | None = None
    fallback_reason: str | None = None
    runner_up: str | None = None
    runner_up_score: float | None = None
    collections: list[str] | None = None
    retrieval: Retrieval | None = None
    note: str | None = None
    #: The part of the query the decision was taken on, when not the whole of it (the last
    #: sentence of an ask that opens with a situation): searched too, in the same collections.
    focus: str | None = None

    @property
    def is_fallback(self) -> bool:
        return self.fallback_reason is not None


class Router(Component, ABC):
    """Chooses one named route for a query.

    Routers whose routes are :class:`Route` models list them in ``routes``; a search uses each
    route's ``retrieve`` settings for the sub-queries routed to it.

    Implement :meth:`route_sync` for routing that never awaits (rules, a local model) or the
    ``async`` :meth:`route` for routing that does (an LLM). Each calls the other by default;
    :attr:`awaits` follows the one implemented. Callers use :meth:`decide` /
    :meth:`decide_sync`, which check the answer.
    """

    @property
    def awaits(self) -> bool:
        """Whether routing awaits: ``False`` when only :meth:`route_sync` is implemented."""
        cls = type(self)
        return cls.route is not Router.route or cls.route_sync is Router.route_sync

    @property
    @abstractmethod
    def valid_routes(self) -> Sequence[str]:
        """Every route name this router may answer (the default route included)."""

    @property
    def default_route(self) -> str | None:
        """The route taken when no real decision can be made (``None``: no fallback)."""
        return None

    async def route(self, query: str) -> RouteDecision:
        """Decide the route for ``query``."""
        return self.route_sync(query)

    def route_sync(self, query: str) -> RouteDecision:
        """:meth:`route` from synchronous code (scripts and notebooks alike)."""
        if type(self).route is Router.route:
            raise ComponentTypeError(
                f"{type(self).__name__} must implement route_sync() or route()"
            )
        from ._sync import run_sync

        return run_sync(self.route, query)

    def fallback(
        self, reason: str, *, score: float | None = None, **extra: object
    ) -> RouteDecision:
        """The default-route decision with ``reason``.

        Raises:
            RoutingError: the router has no default route.
        """
        default = self.default_route
        if default is None:
            raise RoutingError(f"{type(self).__name__}: {reason}, and no default route is set")
        return RouteDecision(route=default, score=score, fallback_reason=reason, **extra)  # type: ignore[arg-type]

    async def decide(self, query: str) -> RouteDecision:
        """:meth:`route`, checked: an error or an answer outside :attr:`valid_routes` falls back
        to the default route with the reason (or raises ``RoutingError`` without a default).
        A ``ConfigurationError`` (the router is set up wrongly) is raised, not hidden."""
        try:
            decision = await self.route(query) if self.awaits else self.route_sync(query)
        except (RoutingError, ConfigurationError):
            raise  # a set-up mistake is not a routing decision: it must surface
        except Exception as exc:  # noqa: BLE001 - reported as a fallback, never lost
            return self.fallback(f"router error: {type(exc).__name__}: {exc}")
        return self._checked(decision)

    def decide_sync(self, query: str) -> RouteDecision:
        """:meth:`decide` from synchronous code."""
        if self.awaits:
            from ._sync import run_sync

            return run_sync(self.decide, query)
        try:
            decision = self.route_sync(query)
        except (RoutingError, ConfigurationError):
            raise
        except Exception as exc:  # noqa: BLE001 - reported as a fallback, never lost
            return self.fallback(f"router error: {type(exc).__name__}: {exc}")
        return self._checked(decision)

    def _checked(self, decision: Any) -> RouteDecision:
        if not isinstance(decision, RouteDecision):
            return self.fallback(
                f"router error: route() returned {type(decision).__name__}, not RouteDecision"
            )
        if decision.route not in self.valid_routes:
            return self.fallback(f"invalid route {decision.route!r}", score=decision.score)
        return decision
