"""WordRouter: ragloom's router contract, and its own behaviour."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest
from ragloom import MultiQueryRoutingPipeline, QueryTransformer
from ragloom.plugins import Registry
from ragloom.testing import RouterContract

from __PACKAGE__.router import WordRouter

ROUTES = {"docs": ["install", "guide"], "billing": ["invoice", "price"], "general": []}


class TestWordRouterContract(RouterContract):
    queries: ClassVar[list[str]] = [
        *RouterContract.queries, "How do I install it?", "Where is my invoice?",
    ]

    @pytest.fixture
    def router(self) -> WordRouter:
        return WordRouter(ROUTES)

    @pytest.fixture
    def identity_variants(self) -> list[dict[str, Any]]:
        return [{"routes": {**ROUTES, "docs": ["install", "guide", "setup"]}}]


def test_routes_by_words_and_falls_back_with_a_reason() -> None:
    router = WordRouter(ROUTES)
    assert router.decide_sync("install guide please").route == "docs"
    fallback = router.decide_sync("hello there")
    assert (fallback.route, fallback.fallback_reason) == ("general", "no route word matched")


def test_the_default_route_must_be_one_of_the_routes() -> None:
    with pytest.raises(ValueError, match="not one of the routes"):
        WordRouter({"docs": ["install"]}, default_route="general")
    with pytest.raises(ValueError, match="only the default route may be a catch-all"):
        WordRouter({"docs": [], "general": []})


def test_plans_questions() -> None:
    class Halves(QueryTransformer):
        def transform_sync(self, query: str) -> list[str]:
            return query.split(" and ")

    plan = MultiQueryRoutingPipeline(Halves(), WordRouter(ROUTES)).plan_sync(
        "install the guide and pay the invoice"
    )
    assert [r.route for r in plan.routing_plan] == ["docs", "billing"]


def test_registered_under_its_name() -> None:
    assert Registry().resolve("router", "__DIST__:__PREFIX__-words") is WordRouter
