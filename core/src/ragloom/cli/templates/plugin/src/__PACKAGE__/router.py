"""A word router: the route whose words a query contains most."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from ragloom import RouteDecision, Router

_WORD = re.compile(r"\w+")

#: Routes when none are given: a route with no words is a catch-all.
EXAMPLE_ROUTES = {"docs": ["install", "configure", "guide"], "general": []}


class WordRouter(Router):
    """Routes to the route with the most words in the query; ties go to the first declared.

    As with ragloom-rules' keyword router, ``default_route`` must be one of the routes (or
    ``None``: no fallback, and a query that matches nothing is a routing error), and only the
    default route may have no words (a catch-all).
    """

    step_id = "__DIST__/words"

    def __init__(
        self,
        routes: Mapping[str, Sequence[str]] | None = None,
        default_route: str | None = "general",
    ) -> None:
        given = EXAMPLE_ROUTES if routes is None else routes
        if not given:
            raise ValueError("routes must name at least one route")
        self.routes = {name: [w.lower() for w in words] for name, words in given.items()}
        if default_route is not None and default_route not in self.routes:
            raise ValueError(
                f"default_route {default_route!r} is not one of the routes "
                f"({', '.join(self.routes)})"
            )
        for name, words in self.routes.items():
            if not words and name != default_route:
                raise ValueError(
                    f"route {name!r} has no words: only the default route may be a catch-all"
                )
        self._default = default_route

    def config(self) -> Mapping[str, Any]:
        return {"routes": self.routes, "default_route": self._default}

    @property
    def valid_routes(self) -> tuple[str, ...]:
        return tuple(self.routes)

    @property
    def default_route(self) -> str | None:
        return self._default

    def route_sync(self, query: str) -> RouteDecision:
        words = set(_WORD.findall(query.lower()))
        scores = {name: len(words.intersection(ws)) for name, ws in self.routes.items()}
        best = max(scores, key=lambda name: scores[name])
        if scores[best] == 0:
            return self.fallback("no route word matched", score=0.0)
        total = sum(scores.values())
        return RouteDecision(route=best, score=scores[best] / total)
