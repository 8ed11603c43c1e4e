"""Opt-in: the real offline path, DSPy driving Gemma 3 270M through llama.cpp.

Skipped unless RAGLOOM_LOCAL_LLM=1 (marker ``local_llm``); needs ``ragloom-dspy[local]``
(llama-cpp-python built as in docs/plugins/dspy.md). Run with ``-s`` to see the latencies.
"""

from __future__ import annotations

import time

import pytest
from ragloom_dspy import DSPyDecomposer

pytestmark = pytest.mark.local_llm

QUESTIONS = [
    "Compare solar and wind power costs in Germany",
    "What are the symptoms and treatments of seasonal allergies?",
    "Differences between Python lists and tuples, and when to use each",
    "How do electric cars and hybrid cars compare on maintenance costs?",
    "History and architecture of the Eiffel Tower",
]

#: Few-shot demos: a base model of 270M parameters follows the format far better with them.
DEMOS = [
    {
        "query": "Compare the iPhone 15 and the Samsung Galaxy S24 cameras",
        "reasoning": "Two phones: one sub-query per phone camera.",
        "sub_queries": [
            "iPhone 15 camera specifications",
            "Samsung Galaxy S24 camera specifications",
        ],
    },
    {
        "query": "Causes and prevention of type 2 diabetes",
        "reasoning": "Two aspects: causes and prevention.",
        "sub_queries": ["type 2 diabetes causes", "type 2 diabetes prevention"],
    },
]


@pytest.mark.anyio
async def test_five_questions_with_the_local_model() -> None:
    pytest.importorskip("llama_cpp", reason="needs the local extra: ragloom-dspy[local]")
    decomposer = DSPyDecomposer(
        model="llama-cpp/gemma3-270m",
        # One thread suits a shared machine; the caps stop a greedy small model from
        # repeating one array item until max_tokens cuts the answer.
        lm_options={"n_threads": 1, "max_tokens": 320, "max_array_items": 5},
        adapter="json",
        list_output=True,
        demos=DEMOS,
    )
    await decomposer.predict("warm-up: load the model")
    latencies: list[float] = []
    model_answers = 0
    for question in QUESTIONS:
        start = time.perf_counter()
        prediction = await decomposer.predict(question)
        latencies.append(time.perf_counter() - start)
        subs = prediction.sub_queries
        assert isinstance(subs, list) and subs
        assert all(isinstance(s, str) and s.strip() for s in subs)
        model_answers += not prediction.fallback
        print(f"\n{question!r}\n  -> {subs} (fallback: {prediction.fallback_reason})")
    print(
        f"\nlatency per question: mean {sum(latencies) / len(latencies):.2f} s, "
        f"max {max(latencies):.2f} s; {model_answers}/5 answered by the model"
    )
    # With the JSON grammar every answer parses; a fallback here would mean a broken path.
    assert model_answers == len(QUESTIONS)
