"""DSPyRouter: validating the model's route, scores, and fallbacks."""

from __future__ import annotations

import json

import dspy
import pytest
from pydantic import BaseModel
from ragloom.errors import ConfigurationError, RoutingError
from ragloom.query import RouteDecision, Router
from ragloom_dspy import DSPyRouter, NoLMConfiguredError
from ragloom_dspy.testing import chat_answer, engine_of, input_field, scripted_lm

ROUTES = [
    {"name": "docs", "description": "Product documentation and how-to guides"},
    {"name": "billing", "description": "Invoices, payments and refunds"},
    {"name": "web", "description": "Anything else, from the open web"},
]


def router(*answers: str | BaseException, default: str | None = "web") -> DSPyRouter:
    return DSPyRouter(ROUTES, default_route=default, lm=scripted_lm(list(answers)))


@pytest.mark.anyio
async def test_the_models_route_and_confidence_become_the_decision() -> None:
    r = router(chat_answer(route="billing", confidence=0.87))
    assert isinstance(r, Router)
    decision = await r.route("Why was I charged twice?")
    assert decision == RouteDecision(route="billing", score=0.87)
    assert not decision.is_fallback


@pytest.mark.anyio
async def test_prompt_lists_the_routes_and_the_query() -> None:
    r = router(chat_answer(route="docs", confidence=1))
    await r.route("How do I install it?")
    (prompt,) = engine_of(r.lm).prompts
    assert input_field(prompt, "query") == "How do I install it?"
    assert input_field(prompt, "routes") == (
        "- docs: Product documentation and how-to guides\n"
        "- billing: Invoices, payments and refunds\n"
        "- web: Anything else, from the open web"
    )


@pytest.mark.anyio
@pytest.mark.parametrize("answer", ["Billing", "BILLING", '"billing"', "'billing'", " `billing` "])
async def test_answers_match_case_insensitively_without_quotes(answer: str) -> None:
    decision = await router(chat_answer(route=answer, confidence="0.5")).route("refund please")
    assert decision.route == "billing"
    assert decision.score == 0.5
    assert decision.fallback_reason is None


@pytest.mark.anyio
async def test_missing_or_unreadable_confidence_leaves_no_score() -> None:
    assert (await router(chat_answer(route="docs")).route("q")).score is None
    assert (await router(chat_answer(route="docs", confidence="very")).route("q")).score is None


@pytest.mark.anyio
async def test_invalid_route_falls_back_to_the_default_with_the_reason() -> None:
    decision = await router(chat_answer(route="'sales'", confidence=0.9)).route("a quote please")
    assert decision.route == "web"
    assert decision.fallback_reason == "invalid route 'sales'"
    assert decision.score is None


@pytest.mark.anyio
async def test_lm_error_falls_back_to_the_default_with_the_reason() -> None:
    decision = await router(ConnectionError("no route to host")).route("q")
    assert decision.route == "web"
    assert decision.fallback_reason is not None
    assert decision.fallback_reason.startswith("LM error:")
    assert "no route to host" in decision.fallback_reason


@pytest.mark.anyio
async def test_without_a_default_route_a_fallback_is_a_routing_error() -> None:
    with pytest.raises(RoutingError, match="invalid route 'sales'"):
        await router(chat_answer(route="sales"), default=None).route("q")
    with pytest.raises(RoutingError, match="invalid route 'sales'"):
        await router(chat_answer(route="sales"), default=None).decide("q")


@pytest.mark.anyio
async def test_the_cores_decide_keeps_our_decisions() -> None:
    assert await router(chat_answer(route="Docs", confidence=0.7)).decide("q") == RouteDecision(
        route="docs", score=0.7
    )
    fallback = await router(RuntimeError("boom")).decide("q")
    assert fallback.route == "web"
    assert fallback.fallback_reason is not None and fallback.fallback_reason.startswith("LM error")


@pytest.mark.anyio
async def test_no_lm_anywhere_is_reported() -> None:
    r = DSPyRouter(ROUTES, default_route="web")
    with pytest.raises(NoLMConfiguredError):
        await r.route("q")
    with dspy.context(lm=scripted_lm(chat_answer(route="docs"))):
        assert (await r.route("q")).route == "docs"


class Route(BaseModel):
    name: str
    description: str


@pytest.mark.anyio
async def test_routes_as_pydantic_models() -> None:
    r = DSPyRouter(
        [Route(name="docs", description="guides"), Route(name="web", description="rest")],
        default_route="WEB",
        lm=scripted_lm(chat_answer(route="docs")),
    )
    assert r.valid_routes == ("docs", "web")
    assert r.default_route == "web"  # the declared spelling
    assert (await r.route("q")).route == "docs"


def test_config_rebuilds_the_router() -> None:
    r = DSPyRouter(
        ROUTES, default_route="web", model="openai/gpt-4o-mini", lm_options={"temperature": 0.0}
    )
    config = r.config()
    assert config == {
        "routes": ROUTES,
        "default_route": "web",
        "model": "openai/gpt-4o-mini",
        "lm_options": {"temperature": 0.0},
    }
    json.dumps(config)
    rebuilt = DSPyRouter(**config)
    assert rebuilt.config_hash == r.config_hash
    assert DSPyRouter.identity() == "ragloom-dspy/router"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (([],), "routes must not be empty"),
        (([{"name": "a"}, {"name": "A"}],), "duplicate route name"),
        ((ROUTES, "sales"), "default_route 'sales' is not one of the routes"),
        ((ROUTES, 3), "default_route 3 is not one of the routes"),
    ],
)
def test_bad_routes_are_configuration_errors(args: tuple[object, ...], message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        DSPyRouter(*args)  # type: ignore[arg-type]
