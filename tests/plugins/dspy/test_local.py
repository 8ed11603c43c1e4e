"""The llama.cpp engine (DSPy 3.4 custom-engine interface) with an injected fake ``Llama``."""

from __future__ import annotations

import importlib.util
import json
from typing import Any

import dspy
import pytest
from ragloom_dspy import SubQueryGenerator
from ragloom_dspy.local import (
    AsyncLlamaCppEngine,
    LlamaCppEngine,
    cap_schema,
    llama_cpp_lm,
    lm_from_model_string,
)


@pytest.fixture
def anyio_backend() -> str:
    """DSPy's own async API (``acall``, ``aforward``) runs on asyncio only; the ragloom
    components over it (decomposer, router) are tested on both backends."""
    return "asyncio"


HAVE_LLAMA = importlib.util.find_spec("llama_cpp") is not None


class FakeLlama:
    """Stands in for ``llama_cpp.Llama``: records ``create_completion`` calls, answers a text."""

    def __init__(self, text: str, finish_reason: str = "stop") -> None:
        self.text = text
        self.finish_reason = finish_reason
        self.calls: list[dict[str, Any]] = []

    def create_completion(self, **kwargs: Any) -> dict[str, Any]:
        self.calls.append(kwargs)
        return {
            "choices": [{"text": self.text, "finish_reason": self.finish_reason}],
            "usage": {"prompt_tokens": 120, "completion_tokens": 30, "total_tokens": 150},
        }


def grammar_from(schema: dict[str, Any]) -> tuple[str, str]:
    return ("grammar", json.dumps(schema, sort_keys=True))


def local_lm(fake: FakeLlama, **kwargs: Any) -> dspy.LM:
    lm = llama_cpp_lm(llama=fake, **kwargs)
    lm.engine._grammar_factory = grammar_from
    return lm


def test_chat_adapter_path_renders_one_completion_prompt() -> None:
    fake = FakeLlama(
        '[[ ## reasoning ## ]]\nTwo topics.\n\n[[ ## sub_queries ## ]]\n["solar", "wind"]'
    )
    lm = local_lm(fake)
    assert lm.model == "llama-cpp/gemma3-270m"
    with dspy.context(lm=lm):
        result = SubQueryGenerator()("solar and wind")
    assert result.sub_queries == ["solar", "wind"]
    assert result.rationale == "Two topics."
    (call,) = fake.calls
    prompt = call["prompt"]
    assert prompt.startswith("Your input fields are:")
    assert "[[ ## original_query ## ]]\nsolar and wind" in prompt
    assert prompt.endswith("`[[ ## completed ## ]]`.\n\n")
    assert call["temperature"] == 0.0
    assert call["max_tokens"] == 256
    assert "[[ ## completed ## ]]" in call["stop"]
    assert "grammar" not in call


def test_json_adapter_gets_a_grammar_from_the_output_schema() -> None:
    answer = json.dumps({"reasoning": "Two topics.", "sub_queries": '["solar", "wind"]'})
    fake = FakeLlama(answer)
    with dspy.context(lm=local_lm(fake), adapter=dspy.JSONAdapter()):
        result = SubQueryGenerator()("solar and wind")
    assert result.sub_queries == ["solar", "wind"]
    kind, schema_text = fake.calls[0]["grammar"]
    schema = json.loads(schema_text)
    assert kind == "grammar"
    assert schema["required"] == ["reasoning", "sub_queries"]
    assert schema["properties"]["sub_queries"]["type"] == "string"


@pytest.mark.anyio
async def test_async_calls_run_the_engine_in_a_thread() -> None:
    fake = FakeLlama('[[ ## reasoning ## ]]\nr\n\n[[ ## sub_queries ## ]]\n["a b", "c d"]')
    with dspy.context(lm=local_lm(fake)):
        result = await SubQueryGenerator().acall("a and c")
    assert result.sub_queries == ["a b", "c d"]
    assert isinstance(local_lm(fake)._async_engine_spec, AsyncLlamaCppEngine)


def test_generation_options_reach_llama() -> None:
    fake = FakeLlama('[[ ## reasoning ## ]]\nr\n\n[[ ## sub_queries ## ]]\n["a"]')
    lm = local_lm(fake, temperature=0.3, max_tokens=64, seed=7)
    with dspy.context(lm=lm):
        SubQueryGenerator(min_subqueries=1)("a")
    call = fake.calls[0]
    assert (call["temperature"], call["max_tokens"], call["seed"]) == (0.3, 64, 7)


def test_engine_survives_dspy_save_and_load() -> None:
    lm = llama_cpp_lm(llama=FakeLlama("x"), n_threads=1, n_ctx=1024, seed=3)
    state = lm.dump_state()
    assert state["engine"]["class"] == "ragloom_dspy.local:LlamaCppEngine"
    assert state["engine"]["state"]["n_ctx"] == 1024
    if HAVE_LLAMA:
        loaded = dspy.LM.load_state(state, allow_custom_lm_class=True)
        assert loaded.engine.n_ctx == 1024 and loaded.engine.seed == 3


def test_engine_parameters_are_checked() -> None:
    with pytest.raises(ValueError, match="n_threads must be an integer >= 1"):
        LlamaCppEngine(llama=FakeLlama("x"), n_threads=0)
    with pytest.raises(ValueError, match="n_ctx must be an integer >= 256"):
        LlamaCppEngine(llama=FakeLlama("x"), n_ctx=16)


def test_model_strings() -> None:
    with pytest.raises(ValueError, match="names no model"):
        lm_from_model_string("llama-cpp/")
    with pytest.raises(ValueError, match="not a local model string"):
        lm_from_model_string("openai/gpt-4o-mini")


@pytest.mark.skipif(HAVE_LLAMA, reason="checks the message shown when the local extra is missing")
def test_missing_local_extra_fails_at_construction_with_a_hint() -> None:
    from ragloom.errors import ConfigurationError
    from ragloom_dspy import DSPyDecomposer

    with pytest.raises(ImportError, match=r"ragloom-dspy\[local\]"):
        lm_from_model_string("llama-cpp/gemma3-270m")
    with pytest.raises(ImportError, match=r"ragloom-dspy\[local\]"):
        DSPyDecomposer(model="llama-cpp/gemma3-270m")
    with pytest.raises((ImportError, ConfigurationError)):
        DSPyDecomposer(model="llama-cpp//no/such/model.gguf")


@pytest.mark.skipif(not HAVE_LLAMA, reason="needs llama-cpp-python (the local extra)")
def test_local_model_string_builds_lazily() -> None:
    from ragloom_dspy import DSPyDecomposer

    decomposer = DSPyDecomposer(model="llama-cpp/gemma3-270m", lm_options={"n_threads": 2})
    assert decomposer.lm.model == "llama-cpp/gemma3-270m"
    assert decomposer.lm.engine.n_threads == 2
    assert decomposer.lm.engine._llama is None  # nothing loaded until the first call
    assert decomposer.config()["lm_options"] == {"n_threads": 2}
    with pytest.raises(ValueError, match="is not a file"):
        lm_from_model_string("llama-cpp//no/such/model.gguf")


def test_list_output_with_a_grammar_gets_an_array_schema_with_capped_strings() -> None:
    answer = json.dumps({"reasoning": "Two topics.", "sub_queries": ["solar", "wind"]})
    fake = FakeLlama(answer)
    lm = local_lm(fake, max_string_length=80, max_array_items=5)
    generator = SubQueryGenerator(list_output=True)
    generator.set_demos([{"query": "tea or coffee", "sub_queries": ["tea", "coffee"]}])
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        result = generator("solar and wind")
    assert result.sub_queries == ["solar", "wind"]
    assert result.fallback is False
    _kind, schema_text = fake.calls[0]["grammar"]
    schema = json.loads(schema_text)
    assert schema["properties"]["sub_queries"]["type"] == "array"
    assert schema["properties"]["sub_queries"]["maxItems"] == 5
    assert schema["properties"]["sub_queries"]["items"] == {"type": "string", "maxLength": 80}
    assert schema["properties"]["reasoning"]["maxLength"] == 80
    assert '"sub_queries": [\n    "tea",' in fake.calls[0]["prompt"]  # the demo, as a list


def test_cap_schema() -> None:
    schema = {
        "type": "object",
        "properties": {
            "a": {"type": "string"},
            "b": {"type": "string", "maxLength": 5},
            "c": {"type": ["string", "null"]},
            "d": {"type": "string", "enum": ["x", "y"]},
            "e": {"type": "array", "items": {"type": "string"}},
            "f": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
            "g": {"type": "array", "maxItems": 2},
        },
    }
    props = cap_schema(schema, max_string_length=9, max_array_items=3)["properties"]
    assert props["a"]["maxLength"] == 9
    assert props["b"]["maxLength"] == 5
    assert props["c"]["maxLength"] == 9
    assert "maxLength" not in props["d"]
    assert props["e"] == {
        "type": "array",
        "items": {"type": "string", "maxLength": 9},
        "maxItems": 3,
    }
    assert props["f"]["anyOf"][0]["maxLength"] == 9
    assert "maxLength" not in props["f"]["anyOf"][1]
    assert props["g"]["maxItems"] == 2
    assert "maxLength" not in schema["properties"]["a"]  # the input is not changed
    assert cap_schema(schema) == schema


def test_caps_are_validated() -> None:
    with pytest.raises(ValueError, match="max_array_items must be a positive integer"):
        LlamaCppEngine(llama=FakeLlama("x"), max_array_items=0)
    with pytest.raises(ValueError, match="max_string_length must be a positive integer"):
        LlamaCppEngine(llama=FakeLlama("x"), max_string_length=True)
