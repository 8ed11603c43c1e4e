"""ragloom's conformance kit run on the DSPy decomposer and router (with a scripted LM)."""

from __future__ import annotations

import pytest
from ragloom.testing import QueryTransformerContract, RouterContract
from ragloom.testing.contracts import check_rebuilds
from ragloom_dspy import DSPyDecomposer, DSPyRouter
from ragloom_dspy.testing import chat_answer, input_field, scripted_lm

ROUTES = [
    {"name": "docs", "description": "Product documentation and how-to guides"},
    {"name": "billing", "description": "Invoices, payments, plans and refunds"},
    {"name": "web", "description": "Anything else"},
]


def _route_answer(prompt: str) -> str:
    query = (input_field(prompt, "query") or "").lower()
    if any(word in query for word in ("cost", "plan", "invoice", "charge")):
        return chat_answer(route="billing", confidence=0.9)
    if any(word in query for word in ("password", "install", "configure")):
        return chat_answer(route="docs", confidence=0.8)
    if "weather" in query:
        return chat_answer(route="nowhere")  # an invalid answer: decide() must fall back
    return chat_answer(route="web", confidence=0.3)


def _decompose_answer(prompt: str) -> str:
    query = input_field(prompt, "original_query") or ""
    parts = [p.strip(" ?") for p in query.replace(" and ", "|").split("|") if p.strip(" ?")]
    return chat_answer(reasoning="split on 'and'", sub_queries=parts or [query])


class TestDSPyRouterContract(RouterContract):
    queries = [q for q in RouterContract.queries if "weather" not in q]

    @pytest.fixture
    def router(self) -> DSPyRouter:
        return DSPyRouter(ROUTES, default_route="web", lm=scripted_lm(_route_answer))

    def test_config_rebuilds(self, router: DSPyRouter) -> None:
        # An LM object passed in code is described by its model name; rebuilding from config
        # then needs that model, so check the rebuild with a model string instead.
        configured = DSPyRouter(ROUTES, default_route="web", model="openai/gpt-4o-mini")
        check_rebuilds(configured)


class TestDSPyRouterFallbacks(RouterContract):
    """The same router, with queries whose answers are invalid: decide() repairs them."""

    queries = ["What's the weather tomorrow?", "weather in Paris"]

    @pytest.fixture
    def router(self) -> DSPyRouter:
        return DSPyRouter(ROUTES, default_route="web", lm=scripted_lm(_route_answer))

    @pytest.mark.skip(reason="these queries get invalid raw answers on purpose")
    def test_route_answers_are_valid(self, router: DSPyRouter) -> None:  # pragma: no cover
        pass

    test_config_rebuilds = TestDSPyRouterContract.test_config_rebuilds


class TestDSPyDecomposerContract(QueryTransformerContract):
    @pytest.fixture
    def decomposer(self) -> DSPyDecomposer:
        return DSPyDecomposer(lm=scripted_lm(_decompose_answer))

    def test_config_rebuilds(self, decomposer: DSPyDecomposer) -> None:
        configured = DSPyDecomposer(model="openai/gpt-4o-mini", max_subqueries=4)
        check_rebuilds(configured)
