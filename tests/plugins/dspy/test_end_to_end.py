"""A MultiQueryRoutingPipeline built from a declarative config naming the DSPy decomposer and
router (found through their real entry points), driven by a scripted, network-free LM."""

from __future__ import annotations

import json
from typing import Any

import dspy
import pytest
from ragloom import MultiQueryRoutingPipeline, MultiQueryRoutingState, SubQueryRoute
from ragloom.config import build_pipeline, dump_pipeline
from ragloom_dspy import DSPyDecomposer, DSPyRouter
from ragloom_dspy.testing import chat_answer, engine_of, input_field, scripted_lm

ROUTES = [
    {"name": "docs", "description": "Product documentation and energy guides"},
    {"name": "billing", "description": "Invoices, payments and refunds"},
    {"name": "web", "description": "Anything else"},
]

SPEC: dict[str, Any] = {
    "version": 1,
    "name": "dspy-query-planning",
    "query": {
        "decomposer": {"name": "dspy", "params": {"min_subqueries": 2, "max_subqueries": 5}},
        "router": {"name": "dspy", "params": {"routes": ROUTES, "default_route": "web"}},
        "max_sub_queries": 3,
    },
    "policy": {"concurrency": 4},
}


def respond(prompt: str) -> str:
    """Plays both roles: decomposition prompts and routing prompts."""
    query = input_field(prompt, "original_query")
    if query is not None:
        if "explode" in query:
            raise RuntimeError("model overloaded")
        return chat_answer(
            reasoning="Two energy topics and a billing question.",
            sub_queries=[
                "solar subsidies in Germany",
                "wind subsidies in Germany",
                "  ",
                "Solar subsidies in Germany",  # duplicate, dropped
                "how to get a refund for an invoice",
                "one sub-query too many for the cap",
            ],
        )
    sub_query = input_field(prompt, "query") or ""
    if "refund" in sub_query:
        return chat_answer(route="Billing", confidence=0.92)
    if "wind" in sub_query:
        return chat_answer(route="energy", confidence=0.8)  # not a route: falls back
    return chat_answer(route='"docs"', confidence="0.75")


@pytest.mark.anyio
async def test_pipeline_from_config_decomposes_normalizes_and_routes() -> None:
    pipeline = build_pipeline(SPEC)
    lm = scripted_lm(respond)
    with dspy.context(lm=lm):
        result = await pipeline.run(
            ["Compare solar and wind subsidies, and how do I get a refund?", "explode please"]
        )
    assert result.failed == []
    first, second = result
    assert isinstance(first, MultiQueryRoutingState)
    assert first.sub_queries == [
        "solar subsidies in Germany",
        "wind subsidies in Germany",
        "how to get a refund for an invoice",
    ]
    assert first.routing_plan == [
        SubQueryRoute(sub_query="solar subsidies in Germany", route="docs", score=0.75),
        SubQueryRoute(
            sub_query="wind subsidies in Germany",
            route="web",
            fallback_reason="invalid route 'energy'",
        ),
        SubQueryRoute(sub_query="how to get a refund for an invoice", route="billing", score=0.92),
    ]
    # The decomposition failed for the second query: its fallback rewrite is routed instead.
    assert second.query == "explode please"
    assert second.sub_queries == ["explode please"]
    assert [r.route for r in second.routing_plan] == ["docs"]
    assert engine_of(lm).calls == 2 + 3 + 1  # two decompositions, four routings


@pytest.mark.anyio
async def test_config_components_are_the_plugin_classes_and_dump_round_trips() -> None:
    pipeline = build_pipeline(SPEC)
    decompose, _normalize, route = pipeline.steps()
    assert isinstance(decompose.decomposer, DSPyDecomposer)  # type: ignore[attr-defined]
    assert isinstance(route.router, DSPyRouter)  # type: ignore[attr-defined]
    dumped = dump_pipeline(pipeline)
    json.dumps(dumped)
    assert dumped["query"]["decomposer"] == {
        "name": "dspy",
        "params": {"model": None, "lm_options": {}, "min_subqueries": 2, "max_subqueries": 5},
    }
    assert dumped["query"]["router"]["params"]["routes"] == ROUTES
    rebuilt = build_pipeline(dumped)
    assert dump_pipeline(rebuilt) == dumped
    again = build_pipeline(dump_pipeline(rebuilt))
    assert [s.config_hash for s in again.steps()] == [s.config_hash for s in rebuilt.steps()]


@pytest.mark.anyio
async def test_model_string_in_config_builds_a_dspy_lm() -> None:
    spec = json.loads(json.dumps(SPEC))
    spec["query"]["decomposer"]["params"].update(
        model="openai/gpt-4o-mini", lm_options={"temperature": 0.0}
    )
    decompose = build_pipeline(spec).steps()[0]
    lm = decompose.decomposer.lm  # type: ignore[attr-defined]
    assert isinstance(lm, dspy.LM)
    assert (lm.model, lm.kwargs["temperature"]) == ("openai/gpt-4o-mini", 0.0)


@pytest.mark.anyio
async def test_block_built_in_code_with_lm_objects() -> None:
    lm = scripted_lm(respond)
    block = MultiQueryRoutingPipeline(
        DSPyDecomposer(lm=lm), DSPyRouter(ROUTES, default_route="web", lm=lm), max_sub_queries=2
    )
    state = await block.plan("Compare solar and wind subsidies")
    assert state.sub_queries == ["solar subsidies in Germany", "wind subsidies in Germany"]
    assert [r.route for r in state.routing_plan] == ["docs", "web"]
    assert dspy.settings.lm is None


def test_the_documented_config_builds() -> None:
    import re
    import tomllib
    from pathlib import Path

    doc = Path(__file__).resolve().parents[3] / "docs" / "plugins" / "dspy.md"
    if not doc.is_file():
        pytest.skip(f"{doc} not found")
    first = re.findall(r"```toml\n(.*?)```", doc.read_text(encoding="utf-8"), re.S)[0]
    decompose, _normalize, route = build_pipeline(tomllib.loads(first)).steps()
    assert decompose.decomposer.lm.model == "openai/gpt-4o-mini"  # type: ignore[attr-defined]
    assert route.router.valid_routes == ("docs", "billing", "web")  # type: ignore[attr-defined]
