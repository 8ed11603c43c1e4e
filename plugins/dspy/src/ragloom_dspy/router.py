"""``DSPyRouter``: an LLM picks one of the declared routes, as a ragloom ``Router``.

Registered as ``dspy`` in the ``ragloom.routers`` entry-point group.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import dspy
from ragloom.errors import ConfigurationError
from ragloom.query import RouteDecision, Router

from ._lm import LMBinding, on_asyncio
from ._routes import (
    RouteSpec,
    describe_routes,
    match_route,
    normalize_routes,
    parse_confidence,
    strip_answer,
)
from .errors import NoLMConfiguredError
from .generator import _short
from .signatures import RouteSignature

__all__ = ["DSPyRouter", "RouteSelector"]


class RouteSelector(dspy.Module):  # type: ignore[misc]
    """The DSPy module behind :class:`DSPyRouter`: ``dspy.Predict(RouteSignature)``.

    A module of its own so that it can be optimized (few-shot demos, instructions) with
    DSPy's tools and put back into a router.
    """

    def __init__(self) -> None:
        super().__init__()
        self.choose = dspy.Predict(RouteSignature)

    def forward(self, query: str, routes: str) -> dspy.Prediction:
        return self.choose(query=query, routes=routes)

    async def aforward(self, query: str, routes: str) -> dspy.Prediction:
        return await self.choose.acall(query=query, routes=routes)


class DSPyRouter(Router):
    """Route a query to one of ``routes`` by asking a DSPy LM.

    ``routes`` are dicts or objects (e.g. pydantic models) with ``name`` and ``description``,
    or a ``{name: description}`` mapping. The model's answer is matched to a route name
    case-insensitively, ignoring quotes; its optional confidence becomes the decision's
    ``score``. An answer that names no route falls back to ``default_route`` with
    ``fallback_reason="invalid route 'x'"``, an LM failure with ``"LM error: ..."`` (without a
    default route, ragloom raises ``RoutingError`` instead). LM selection as for
    :class:`~ragloom_dspy.DSPyDecomposer`: ``lm``, or ``model`` + ``lm_options``, or the DSPy
    context's LM.

    Raises:
        ConfigurationError: empty or duplicate routes, a default route that is not one of
            them, or an invalid LM configuration.
    """

    step_id: ClassVar[str] = "ragloom-dspy/router"

    def __init__(
        self,
        routes: Sequence[Any] | Mapping[str, str],
        default_route: str | None = None,
        *,
        lm: Any = None,
        model: str | None = None,
        lm_options: Mapping[str, Any] | None = None,
        adapter: str | None = None,
    ) -> None:
        try:
            self._routes: tuple[RouteSpec, ...] = normalize_routes(routes)
            self.binding = LMBinding(lm=lm, model=model, lm_options=lm_options, adapter=adapter)
        except ConfigurationError:
            raise
        except ValueError as exc:
            raise ConfigurationError(f"DSPyRouter: {exc}") from None
        if default_route is not None:
            wanted = default_route.strip().casefold() if isinstance(default_route, str) else None
            matched = [r.name for r in self._routes if r.name.casefold() == wanted]
            if not matched:
                raise ConfigurationError(
                    f"DSPyRouter: default_route {default_route!r} is not one of the routes "
                    f"{[r.name for r in self._routes]}"
                )
            default_route = matched[0]
        self._default_route = default_route
        self._description = describe_routes(self._routes)
        self.selector = RouteSelector()

    @property
    def routes(self) -> tuple[RouteSpec, ...]:
        return self._routes

    @property
    def valid_routes(self) -> Sequence[str]:
        return tuple(r.name for r in self._routes)

    @property
    def default_route(self) -> str | None:
        return self._default_route

    @property
    def lm(self) -> Any:
        """The DSPy LM in use, or ``None`` for the LM of the current DSPy context."""
        return self.binding.lm

    def config(self) -> Mapping[str, Any]:
        return {
            "routes": [r.as_dict() for r in self._routes],
            "default_route": self._default_route,
            **self.binding.config(),
        }

    def _select_sync(self, query: str) -> dspy.Prediction:
        with self.binding.context():
            return self.selector(query=query, routes=self._description)

    async def route(self, query: str) -> RouteDecision:
        lm = self.binding.lm or self.selector.choose.lm or dspy.settings.lm
        if lm is None:
            raise NoLMConfiguredError(
                "DSPyRouter has no LM: give it lm= or model=, or use dspy.context(lm=...)"
            )
        try:
            if on_asyncio():
                with self.binding.context():
                    prediction = await self.selector.acall(query=query, routes=self._description)
            else:
                import anyio

                prediction = await anyio.to_thread.run_sync(self._select_sync, query)
        except Exception as exc:  # noqa: BLE001 - the model's trouble is a fallback
            return self.fallback(_short(f"LM error: {type(exc).__name__}: {exc}"))
        answer = prediction.get("route")
        score = parse_confidence(prediction.get("confidence"))
        name = match_route(answer, self._routes)
        if name is None:
            shown = strip_answer(answer) if isinstance(answer, str) else answer
            return self.fallback(_short(f"invalid route {shown!r}"))
        return RouteDecision(route=name, score=score)
