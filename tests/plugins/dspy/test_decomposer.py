"""DSPyDecomposer: the ragloom QueryTransformer over SubQueryGenerator, and its LM config."""

from __future__ import annotations

import json

import anyio
import dspy
import pytest
from ragloom.errors import ConfigurationError
from ragloom.query import QueryTransformer
from ragloom_dspy import DSPyDecomposer, NoLMConfiguredError
from ragloom_dspy.testing import chat_answer, engine_of, input_field, scripted_lm


def per_query(tag: str = "") -> dspy.LM:
    def respond(prompt: str) -> str:
        query = input_field(prompt, "original_query")
        return chat_answer(reasoning="split", sub_queries=[f"{tag}{query} A", f"{tag}{query} B"])

    return scripted_lm(respond)


@pytest.mark.anyio
async def test_transform_returns_the_generators_sub_queries() -> None:
    decomposer = DSPyDecomposer(lm=per_query())
    assert isinstance(decomposer, QueryTransformer)
    assert await decomposer.transform("solar and wind") == ["solar and wind A", "solar and wind B"]


@pytest.mark.anyio
async def test_predict_keeps_rationale_and_fallback_data() -> None:
    decomposer = DSPyDecomposer(lm=scripted_lm([RuntimeError("down")]))
    prediction = await decomposer.predict("What is solar power")
    assert prediction.fallback is True
    assert prediction.fallback_reason.startswith("LM error:")
    # The model's failure never fails the query: transform gives the rewrite.
    decomposer = DSPyDecomposer(lm=scripted_lm([RuntimeError("down")]))
    assert await decomposer.transform("What is solar power") == ["is solar power"]


@pytest.mark.anyio
async def test_off_length_sub_queries_reach_retrieval_and_are_reported() -> None:
    # "solar and wind A" is 4 words, under the 5-12 words the signature asks for
    decomposer = DSPyDecomposer(lm=per_query())
    prediction = await decomposer.predict("solar and wind")
    assert prediction.off_length == ["solar and wind A", "solar and wind B"]
    assert await decomposer.transform("solar and wind") == prediction.sub_queries


@pytest.mark.anyio
async def test_blank_query_gives_no_sub_queries_without_calling_the_lm() -> None:
    lm = per_query()
    assert await DSPyDecomposer(lm=lm).transform("   ") == []
    assert engine_of(lm).calls == 0


@pytest.mark.anyio
async def test_lm_is_applied_per_call_never_globally() -> None:
    first, second = DSPyDecomposer(lm=per_query("1:")), DSPyDecomposer(lm=per_query("2:"))
    results: dict[str, list[str]] = {}

    async def one(name: str, decomposer: DSPyDecomposer) -> None:
        results[name] = await decomposer.transform("tides")

    async with anyio.create_task_group() as group:
        group.start_soon(one, "first", first)
        group.start_soon(one, "second", second)
    assert results == {"first": ["1:tides A", "1:tides B"], "second": ["2:tides A", "2:tides B"]}
    assert dspy.settings.lm is None


@pytest.mark.anyio
async def test_without_lm_the_dspy_context_lm_is_used() -> None:
    decomposer = DSPyDecomposer()
    with dspy.context(lm=per_query("ctx:")):
        assert await decomposer.transform("tides") == ["ctx:tides A", "ctx:tides B"]
    with pytest.raises(NoLMConfiguredError):
        await decomposer.transform("tides")


@pytest.mark.anyio
async def test_json_adapter_option() -> None:
    def respond(prompt: str) -> str:
        assert "Respond with a JSON object" in prompt
        return json.dumps({"reasoning": "r", "sub_queries": '["x one", "y two"]'})

    decomposer = DSPyDecomposer(lm=scripted_lm(respond), adapter="json")
    assert await decomposer.transform("x and y") == ["x one", "y two"]
    assert decomposer.config()["adapter"] == "json"


def test_config_from_a_model_string_rebuilds_the_decomposer() -> None:
    decomposer = DSPyDecomposer(
        model="openai/gpt-4o-mini",
        lm_options={"temperature": 0.2, "max_tokens": 300, "api_key": "sk-secret"},
        min_subqueries=1,
        max_subqueries=4,
    )
    assert isinstance(decomposer.lm, dspy.LM)
    assert decomposer.lm.model == "openai/gpt-4o-mini"
    assert decomposer.lm.kwargs["temperature"] == 0.2
    config = decomposer.config()
    assert config == {
        "model": "openai/gpt-4o-mini",
        "lm_options": {"max_tokens": 300, "temperature": 0.2},  # the key is never written out
        "min_subqueries": 1,
        "max_subqueries": 4,
    }
    json.dumps(config)
    rebuilt = DSPyDecomposer(**config)
    assert rebuilt.config() == config
    assert DSPyDecomposer(**rebuilt.config()).config_hash == rebuilt.config_hash
    assert DSPyDecomposer(**{**config, "max_subqueries": 5}).config_hash != decomposer.config_hash


def test_config_describes_an_lm_object_by_its_model_name() -> None:
    lm = scripted_lm("unused")
    config = DSPyDecomposer(lm=lm).config()
    assert config["model"] == "ragloom-test/scripted"
    assert config["lm_options"] == {}  # None-valued options are not written
    json.dumps(config)
    lm = dspy.LM("openai/gpt-4o-mini", temperature=0.5, api_key="sk-x")
    assert DSPyDecomposer(lm=lm).config()["lm_options"] == {"temperature": 0.5}


def test_config_without_lm() -> None:
    assert DSPyDecomposer().config() == {
        "model": None,
        "lm_options": {},
        "min_subqueries": 2,
        "max_subqueries": 5,
    }


def test_step_identity_is_declared() -> None:
    assert DSPyDecomposer.identity() == "ragloom-dspy/decomposer"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"lm": "x", "model": "openai/gpt-4o-mini"}, "either lm"),
        ({"lm_options": {"temperature": 0}}, "lm_options need a model"),
        ({"model": "  "}, "model must be a non-empty"),
        ({"model": "openai/x", "lm_options": ["temperature"]}, "lm_options must be a mapping"),
        ({"lm": "openai/gpt-4o-mini"}, "lm must be a DSPy LM"),
        ({"adapter": "xml"}, "adapter must be one of"),
        ({"min_subqueries": 3, "max_subqueries": 2}, "max_subqueries must be >= min_subqueries"),
        ({"min_subqueries": 0}, "min_subqueries must be >= 1"),
    ],
)
def test_bad_configuration_is_a_configuration_error(
    kwargs: dict[str, object], message: str
) -> None:
    with pytest.raises(ConfigurationError, match=message) as info:
        DSPyDecomposer(**kwargs)  # type: ignore[arg-type]
    assert isinstance(info.value, ValueError)


def test_demos_are_part_of_the_config() -> None:
    demos = [{"query": "tea or coffee", "sub_queries": ["tea health", "coffee health"]}]
    decomposer = DSPyDecomposer(demos=demos)
    assert decomposer.config()["demos"] == demos
    rebuilt = DSPyDecomposer(**decomposer.config())
    assert DSPyDecomposer(**rebuilt.config()).config_hash == rebuilt.config_hash
    assert decomposer.config_hash != DSPyDecomposer().config_hash
    with pytest.raises(ConfigurationError, match=r"demos\[0\]"):
        DSPyDecomposer(demos=[{"query": "q"}])


@pytest.mark.anyio
async def test_list_output_option() -> None:
    def respond(prompt: str) -> str:
        return json.dumps({"reasoning": "r", "sub_queries": ["x one", "y two"]})

    decomposer = DSPyDecomposer(lm=scripted_lm(respond), adapter="json", list_output=True)
    assert await decomposer.transform("x and y") == ["x one", "y two"]
    assert decomposer.config()["list_output"] is True
    assert DSPyDecomposer(**decomposer.config()).generator.list_output is True
