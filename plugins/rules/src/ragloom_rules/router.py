"""``KeywordRouter``: a ragloom ``Router`` over named keyword and pattern routes."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any, ClassVar

from pydantic import Field, field_validator
from ragloom import ConfigurationError, RouteDecision, Router
from ragloom.config import read_data_file
from ragloom.query import Route, coerce_route

from ._keywords import KeywordIndex, RouteSpec, saturate

__all__ = ["LOW_CONFIDENCE", "NO_MATCH", "KeywordRoute", "KeywordRouter", "sample_router"]

#: ``fallback_reason`` of a decision taken because no keyword or pattern matched.
NO_MATCH = "no keyword matched"
#: ``fallback_reason`` of a decision taken because the best route's evidence was too weak.
LOW_CONFIDENCE = "low confidence"


class KeywordRoute(Route):
    """One named route: the keywords and patterns that vote for it, and their weight.

    ``keywords`` match as whole words or phrases, case- and punctuation-insensitively, with
    light plural folding; ``patterns`` are regular expressions searched case-insensitively in
    the raw query. A route with neither is a pure catch-all and must be the default route.
    """

    keywords: list[str] = Field(default_factory=list)
    patterns: list[str] = Field(default_factory=list)
    weight: float = 1.0

    @field_validator("weight")
    @classmethod
    def _weight_positive(cls, value: float) -> float:
        if not (value > 0 and math.isfinite(value)):
            raise ValueError(f"weight must be a positive finite number, got {value!r}")
        return value


def _as_route(i: int, entry: Any) -> KeywordRoute:
    return coerce_route(i, entry, KeywordRoute)


def _check_number(name: str, value: Any, *, allow_zero: bool) -> None:
    number = not isinstance(value, bool) and isinstance(value, int | float)
    if not number or not math.isfinite(value) or value < 0 or (value == 0 and not allow_zero):
        bound = ">= 0" if allow_zero else "> 0"
        raise ConfigurationError(f"{name} must be a finite number {bound}, got {value!r}")


class KeywordRouter(Router):
    """Routes a query to the named route whose keywords and patterns match it best.

    Scoring (see :mod:`ragloom_rules._keywords`): a route's evidence is the number of words of
    its distinct matched keywords plus ``pattern_weight`` (by default one half) per matched
    pattern; its raw score is ``weight * evidence``; the decision's ``score`` is ``raw / (raw
    + 1)`` in ``[0, 1)``. The route with the highest raw score wins and the next one is
    reported as ``runner_up`` / ``runner_up_score``.

    Weak evidence: when the best route's evidence is below ``min_evidence`` (by default one
    keyword's worth, so a lone pattern such as a year or an amount of money is not enough),
    the default route is taken with ``fallback_reason == "low confidence"``; the weak route is
    reported as ``runner_up`` with its score, which is also the decision's ``score``. Without
    a default route there is nothing to fall back to and the weak route is decided.

    Ties: when two routes have the same best raw score, the route declared first wins. That
    is a real decision (``fallback_reason`` is ``None``); the tie shows in the decision as
    ``runner_up_score == score`` with the other route as ``runner_up``.

    No match: the default route, with ``fallback_reason == "no keyword matched"`` and score
    0.0 (without a default route, :meth:`~ragloom.Router.decide` raises ``RoutingError``).

    Args:
        routes: :class:`KeywordRoute` objects or mappings with the same fields (as read from
            a config file), in priority order for ties.
        default_route: the name of one of ``routes`` (unknown-route protection: any other
            name is refused). A catch-all is declared as a route with no keywords or
            patterns, e.g. ``{"name": "general"}``. ``valid_routes`` is exactly the route
            names.
        min_evidence: the evidence (before route weights) a route needs to be decided;
            ``0`` decides on any match.
        pattern_weight: the evidence one matched pattern counts (a keyword word counts 1).

    Raises:
        ConfigurationError: no routes, an invalid route (naming it), duplicate route names,
            an invalid regular expression (naming the route and the pattern), a keyword with
            no letters or digits, a ``default_route`` that is not a route, a route that
            could never be chosen (no keywords, no patterns, not the default), a negative
            ``min_evidence`` or a ``pattern_weight`` that is not a positive number.
    """

    step_id: ClassVar[str] = "ragloom-rules/keyword"
    awaits: ClassVar[bool] = False

    def __init__(
        self,
        routes: Sequence[KeywordRoute | Mapping[str, Any]],
        default_route: str | None = None,
        *,
        min_evidence: float = 1.0,
        pattern_weight: float = 0.5,
    ) -> None:
        if isinstance(routes, str | bytes | Mapping) or not isinstance(routes, Sequence):
            raise ConfigurationError(
                f"routes must be a list of routes, got {type(routes).__name__}"
            )
        if not routes:
            raise ConfigurationError("routes must not be empty")
        parsed = tuple(_as_route(i, entry) for i, entry in enumerate(routes))
        names = [r.name for r in parsed]
        if default_route is not None and default_route not in names:
            raise ConfigurationError(
                f"default_route {default_route!r} is not one of the routes "
                f"({', '.join(map(repr, names))}); declare it as a route (a route with no "
                "keywords is a catch-all)"
            )
        _check_number("min_evidence", min_evidence, allow_zero=True)
        _check_number("pattern_weight", pattern_weight, allow_zero=False)
        try:
            index = KeywordIndex(
                [RouteSpec(r.name, r.keywords, r.patterns, r.weight) for r in parsed],
                pattern_weight=float(pattern_weight),
            )
        except ValueError as exc:
            raise ConfigurationError(str(exc)) from None
        for route in parsed:
            if not route.keywords and not route.patterns and route.name != default_route:
                raise ConfigurationError(
                    f"route {route.name!r} has no keywords or patterns and is not the default "
                    "route, so it could never be chosen"
                )
        self._routes = parsed
        self._default_route = default_route
        self._index = index
        self.min_evidence = float(min_evidence)
        self.pattern_weight = float(pattern_weight)

    # -- construction helpers ----------------------------------------------------------------

    @classmethod
    def from_file(cls, path: str | Path) -> KeywordRouter:
        """A router from a JSON, TOML or YAML file holding ``routes`` (a list) and optionally
        ``default_route`` (see :meth:`from_config`)."""
        data = read_data_file(path, what="routes", default_format="json")
        return cls.from_config(data, source=str(path))

    @classmethod
    def from_config(cls, data: Mapping[str, Any], *, source: str = "config") -> KeywordRouter:
        """A router from a mapping ``{"routes": [...], "default_route": ...}``, optionally with
        ``min_evidence`` and ``pattern_weight`` (an optional ``description`` of the route set is
        ignored)."""
        if not isinstance(data, Mapping) or "routes" not in data:
            raise ConfigurationError(f"{source}: expected a mapping with a 'routes' list")
        unknown = set(data) - {
            "routes", "default_route", "description", "min_evidence", "pattern_weight"
        }
        if unknown:
            raise ConfigurationError(f"{source}: unknown keys {sorted(unknown)}")
        options = {k: data[k] for k in ("min_evidence", "pattern_weight") if k in data}
        return cls(data["routes"], default_route=data.get("default_route"), **options)

    # -- the Router contract -----------------------------------------------------------------

    @property
    def routes(self) -> tuple[KeywordRoute, ...]:
        """The routes, in declaration order."""
        return self._routes

    @property
    def valid_routes(self) -> tuple[str, ...]:
        return self._index.names

    @property
    def default_route(self) -> str | None:
        return self._default_route

    def config(self) -> Mapping[str, Any]:
        return {
            "routes": [r.model_dump(exclude_none=True) for r in self._routes],
            "default_route": self._default_route,
            "min_evidence": self.min_evidence,
            "pattern_weight": self.pattern_weight,
        }

    def scores(self, query: str) -> dict[str, float]:
        """Every route's normalised score for ``query`` (0.0 where nothing matched)."""
        return {name: saturate(raw) for name, raw in self._index.raw_scores(query).items()}

    def route_sync(self, query: str) -> RouteDecision:
        """:meth:`route` without the event loop (it never awaits)."""
        if not isinstance(query, str):
            raise TypeError(f"query must be a string, got {type(query).__name__}")
        ranking = self._index.rank(query)
        if ranking.best is None:
            return self.fallback(NO_MATCH, score=0.0)
        if ranking.best_evidence < self.min_evidence and self._default_route is not None:
            score = saturate(ranking.best_raw)
            return self.fallback(
                LOW_CONFIDENCE, score=score, runner_up=ranking.best, runner_up_score=score
            )
        return RouteDecision(
            route=ranking.best,
            score=saturate(ranking.best_raw),
            runner_up=ranking.runner_up,
            runner_up_score=saturate(ranking.runner_up_raw) if ranking.runner_up else None,
        )

    async def route(self, query: str) -> RouteDecision:
        return self.route_sync(query)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(routes={list(self.valid_routes)!r}, "
            f"default_route={self._default_route!r})"
        )


def sample_router(
    routes: Sequence[KeywordRoute | Mapping[str, Any]] | None = None,
    default_route: str | None = None,
    **options: Any,
) -> KeywordRouter:
    """A :class:`KeywordRouter` over the six example routes in ``sample_routes.json``
    (products, billing, technical_support, policies, news; default ``general``).

    Given ``routes`` (and ``default_route``, ``min_evidence``, ``pattern_weight``), it builds
    that router instead, so the registered name ``sample`` also rebuilds from a router's
    ``config()``.
    """
    if routes is not None:
        return KeywordRouter(routes, default_route=default_route, **options)
    text = resources.files("ragloom_rules").joinpath("sample_routes.json").read_text("utf-8")
    data = json.loads(text)
    if default_route is not None:
        data["default_route"] = default_route
    data.update(options)
    return KeywordRouter.from_config(data, source="sample_routes.json")
