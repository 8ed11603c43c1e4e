"""SubQueryGenerator through the real DSPy path, with network-free LMs (DummyLM, scripted)."""

from __future__ import annotations

import json

import dspy
import pytest
from dspy.utils import DummyLM
from ragloom_dspy import BELOW_MINIMUM, NoLMConfiguredError, SubQueryGenerator, fallback_rewrite
from ragloom_dspy.testing import chat_answer, engine_of, input_field, scripted_lm


@pytest.fixture
def anyio_backend() -> str:
    """DSPy's own async API (``acall``, ``aforward``) runs on asyncio only; the ragloom
    components over it (decomposer, router) are tested on both backends."""
    return "asyncio"


QUERY = "Compare renewable energy adoption in Germany vs France since 2020"


def answering(sub_queries: object, reasoning: str = "Two countries: one query each.") -> dspy.LM:
    """A scripted LM whose every answer carries ``sub_queries`` (a string is sent verbatim)."""
    return scripted_lm(lambda _prompt: chat_answer(reasoning=reasoning, sub_queries=sub_queries))


def run(lm: dspy.LM, query: str = QUERY, **kwargs: object) -> dspy.Prediction:
    with dspy.context(lm=lm):
        return SubQueryGenerator(**kwargs)(query)  # type: ignore[arg-type]


# -- the normal path -------------------------------------------------------------------------


def test_normal_path_returns_the_models_sub_queries_and_reasoning() -> None:
    # Regression: spec 002's system read `result.rationale`, which DSPy no longer sets, so every
    # call fell back. The model's sub-queries and its `reasoning` must come through.
    subs = [
        "Germany renewable energy adoption 2020-2024",
        "France renewable energy adoption 2020-2024",
    ]
    lm = DummyLM([{"reasoning": "Two countries, one query each.", "sub_queries": json.dumps(subs)}])
    result = run(lm)
    assert result.sub_queries == subs
    assert result.rationale == "Two countries, one query each."
    assert result.fallback is False
    assert result.fallback_reason is None


def test_prompt_carries_the_query_and_target_count() -> None:
    lm = answering(["a b c", "d e f"])
    run(lm, "solar and wind power costs")
    (prompt,) = engine_of(lm).prompts
    assert input_field(prompt, "original_query") == "solar and wind power costs"
    assert input_field(prompt, "num_subqueries") == "2"
    assert "A JSON array of optimized sub-query strings" in prompt  # the spec's description


@pytest.mark.parametrize(
    "answer",
    [
        '```json\n["solar Germany", "wind France"]\n```',
        'Here are the sub-queries:\n["solar Germany", "wind France"]\nEach is self-contained.',
        "['solar Germany', 'wind France']",
        ["solar Germany", "wind France"],
    ],
)
def test_answers_in_fences_prose_or_python_are_read(answer: object) -> None:
    result = run(answering(answer))
    assert result.sub_queries == ["solar Germany", "wind France"]
    assert result.fallback is False


def test_empty_and_duplicate_sub_queries_are_dropped_in_order() -> None:
    answer = ["solar Germany", "", "  ", "wind France", "Solar  germany", "tidal UK"]
    result = run(answering(answer))
    assert result.sub_queries == ["solar Germany", "wind France", "tidal UK"]


def test_more_than_max_is_truncated() -> None:
    result = run(answering([f"sub query {i}" for i in range(8)]), max_subqueries=3)
    assert result.sub_queries == ["sub query 0", "sub query 1", "sub query 2"]
    assert result.fallback_reason is None


def test_sub_queries_outside_the_declared_length_are_kept_and_flagged(caplog) -> None:
    answer = [
        "Germany renewable energy adoption since 2020",  # 6 words: inside 5-12
        "France solar",  # 2 words: too short
        "a very long sub-query that goes on and on well past the twelve words asked",
    ]
    with caplog.at_level("INFO", logger="ragloom_dspy.generator"):
        result = run(answering(answer))
    assert result.sub_queries == answer  # nothing dropped: a short one may still be a facet
    assert result.off_length == [answer[1], answer[2]]
    assert result.fallback is False and result.fallback_reason is None
    assert "2 of 3 sub-queries" in caplog.text and "outside 5-12 words" in caplog.text


def test_the_word_range_is_a_setting() -> None:
    answer = ["solar Germany", "wind power in France since 2020"]
    assert run(answering(answer), word_range=(2, 3)).off_length == [answer[1]]
    assert run(answering(answer), word_range=None).off_length == []
    assert SubQueryGenerator().word_range == (5, 12)  # what the signature asks for


@pytest.mark.parametrize("word_range", [(0, 3), (4, 3), (1,), "5-12", (1.5, 3), (True, 3)])
def test_a_bad_word_range_is_refused(word_range: object) -> None:
    with pytest.raises(ValueError, match="word_range must be None or two integers"):
        SubQueryGenerator(word_range=word_range)  # type: ignore[arg-type]


def test_a_fallback_rewrite_is_not_flagged() -> None:
    result = run(scripted_lm([RuntimeError("down")]), "Why?")
    assert result.fallback is True and result.off_length == []


def test_below_minimum_keeps_the_valid_sub_queries() -> None:
    result = run(answering(["solar Germany", "", "solar Germany"]), min_subqueries=2)
    assert result.sub_queries == ["solar Germany"]
    assert result.fallback is False
    assert result.fallback_reason == BELOW_MINIMUM


# -- fallbacks ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        ("not json at all", "invalid output: invalid JSON"),
        ('["unterminated", ', "invalid output: invalid JSON"),
        ('{"queries": 3}', "invalid output: not a list (got int)"),
        ('"one string"', "invalid output: not a list (got str)"),
        ("[1, 2, 3]", "invalid output: non-string item at index 0 (int)"),
        ('["ok", {"q": 1}]', "invalid output: non-string item at index 1 (dict)"),
        ("[]", "no valid sub-queries"),
        ('["", "   "]', "no valid sub-queries"),
    ],
)
def test_unusable_answers_fall_back_with_a_reason(answer: str, reason: str) -> None:
    query = "How do I compare my solar and wind options?"
    result = run(answering(answer, reasoning="I thought about it."), query)
    assert result.fallback is True
    assert result.fallback_reason.startswith(reason)
    assert result.sub_queries == [fallback_rewrite(query)] == ["do compare solar and wind options?"]
    assert result.rationale == "I thought about it."  # the model's reasoning is kept


def test_lm_exception_falls_back_without_raising() -> None:
    lm = scripted_lm([ConnectionError("provider unreachable")])
    result = run(lm, "Why is my bill so high?")
    assert result.fallback is True
    assert result.fallback_reason.startswith("LM error:")
    assert "provider unreachable" in result.fallback_reason
    assert result.sub_queries == ["is bill so high?"]
    assert "provider unreachable" in result.rationale


def test_answer_without_fields_falls_back() -> None:
    lm = scripted_lm(lambda _prompt: "I would rather chat about the weather.")
    result = run(lm)
    assert result.fallback is True
    assert result.fallback_reason.startswith("unparseable LM output")
    assert result.sub_queries == [QUERY]


def test_fallback_is_never_empty() -> None:
    result = run(scripted_lm([RuntimeError("x")]), "How? Why? What?")
    assert result.sub_queries == ["How? Why? What?"]


def test_no_lm_is_a_configuration_error_not_a_fallback() -> None:
    with pytest.raises(NoLMConfiguredError, match="no LM"):
        SubQueryGenerator()("solar and wind")


# -- counts and parameters ---------------------------------------------------------------------


def sent_count(lm: dspy.LM) -> int:
    return int(input_field(engine_of(lm).prompts[-1], "num_subqueries") or 0)


@pytest.mark.parametrize(("requested", "sent"), [(4, 4), (9, 5), (0, 2), (-3, 2), (2, 2)])
def test_num_subqueries_is_honoured_and_clamped(requested: int, sent: int) -> None:
    lm = answering(["a b c", "d e f"])
    with dspy.context(lm=lm):
        result = SubQueryGenerator()(QUERY, num_subqueries=requested)
    assert sent_count(lm) == sent
    assert result.num_subqueries == sent


def test_heuristic_sets_the_default_count() -> None:
    lm = answering(["a b c", "d e f"])
    busy = "Compare solar and wind power costs: Germany, France, Spain, Italy in 2024 too"
    with dspy.context(lm=lm):
        SubQueryGenerator(max_subqueries=4)(busy)
    assert sent_count(lm) == 4


def test_determine_complexity_is_public_with_the_spec_alias() -> None:
    generator = SubQueryGenerator(min_subqueries=1, max_subqueries=5)
    assert generator.determine_complexity("standard Android candy") == 1
    assert generator.determine_complexity("solar and wind") == 2
    assert generator._determine_complexity("solar and wind") == 2


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"min_subqueries": 0}, "min_subqueries must be >= 1"),
        ({"min_subqueries": 4, "max_subqueries": 3}, "max_subqueries must be >= min_subqueries"),
        ({"max_subqueries": "5"}, "max_subqueries must be an integer"),
        ({"max_concurrency": 0}, "max_concurrency must be >= 1"),
    ],
)
def test_bad_parameters_raise_value_error(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        SubQueryGenerator(**kwargs)  # type: ignore[arg-type]


def test_bad_arguments_raise() -> None:
    generator = SubQueryGenerator()
    with dspy.context(lm=answering(["a"])):
        with pytest.raises(ValueError, match="query must not be empty"):
            generator("   ")
        with pytest.raises(TypeError, match="query must be a string"):
            generator(42)
        with pytest.raises(ValueError, match="num_subqueries must be an integer"):
            generator("solar", num_subqueries="3")


# -- async and batches -------------------------------------------------------------------------


def per_query(prompt: str) -> str:
    query = input_field(prompt, "original_query")
    subs = [f"{query} first", f"{query} second"]
    return chat_answer(reasoning=f"about {query}", sub_queries=subs)


@pytest.mark.anyio
async def test_async_forward() -> None:
    lm = scripted_lm(per_query)
    with dspy.context(lm=lm):
        result = await SubQueryGenerator().acall("solar and wind")
    assert result.sub_queries == ["solar and wind first", "solar and wind second"]
    assert result.rationale == "about solar and wind"


@pytest.mark.anyio
async def test_async_forward_falls_back_on_lm_error() -> None:
    with dspy.context(lm=scripted_lm([TimeoutError("slow")])):
        result = await SubQueryGenerator().acall("What is solar power")
    assert result.fallback is True
    assert result.sub_queries == ["is solar power"]


DELAY = 0.1
QUERIES = [f"query number {i}" for i in range(32)]


def check_batch(results: list[list[str]]) -> None:
    assert results == [[f"{q} first", f"{q} second"] for q in QUERIES]


def test_batch_generate_runs_concurrently_under_the_bound_in_order() -> None:
    lm = scripted_lm(per_query, delay=DELAY)
    generator = SubQueryGenerator(max_concurrency=8)
    with dspy.context(lm=lm):
        results = generator.batch_generate(QUERIES)
    check_batch(results)
    assert engine_of(lm).calls == 32
    # concurrent (calls overlapped while each one slept), never beyond the bound; counted,
    # not timed, so that a loaded machine cannot make it flaky
    assert 1 < engine_of(lm).max_in_flight <= 8


@pytest.mark.anyio
async def test_abatch_generate_runs_concurrently_under_the_bound_in_order() -> None:
    lm = scripted_lm(per_query, delay=DELAY)
    generator = SubQueryGenerator(max_concurrency=8)
    with dspy.context(lm=lm):
        results = await generator.abatch_generate(QUERIES)
    check_batch(results)
    assert 1 < engine_of(lm).max_in_flight <= 8


@pytest.mark.parametrize("batch", ["threads", "tasks"])
def test_bound_of_one_is_sequential(batch: str) -> None:
    import anyio

    lm = scripted_lm(per_query, delay=0.01)
    generator = SubQueryGenerator(max_concurrency=1)

    async def in_tasks() -> list[list[str]]:
        return await generator.abatch_generate(QUERIES[:6])

    with dspy.context(lm=lm):
        if batch == "threads":
            results = generator.batch_generate(QUERIES[:6])
        else:
            results = anyio.run(in_tasks)
    assert results == [[f"{q} first", f"{q} second"] for q in QUERIES[:6]]
    assert engine_of(lm).max_in_flight == 1


def test_batch_predict_keeps_each_rationale_and_fallback() -> None:
    def script(prompt: str) -> str:
        query = input_field(prompt, "original_query") or ""
        if "broken" in query:
            raise RuntimeError("model crashed")
        return per_query(prompt)

    generator = SubQueryGenerator()
    with dspy.context(lm=scripted_lm(script)):
        predictions = generator.batch_predict(["solar power", "broken query", "wind power"])
    assert [p.rationale for p in (predictions[0], predictions[2])] == [
        "about solar power",
        "about wind power",
    ]
    assert [p.fallback for p in predictions] == [False, True, False]
    assert predictions[1].sub_queries == ["broken query"]


def test_batch_uses_the_callers_dspy_context_in_every_worker() -> None:
    first, second = scripted_lm(per_query), scripted_lm(per_query)
    generator = SubQueryGenerator()
    with dspy.context(lm=first):
        generator.batch_generate(QUERIES[:5])
    with dspy.context(lm=second):
        generator.batch_generate(QUERIES[:3])
    assert (engine_of(first).calls, engine_of(second).calls) == (5, 3)


def test_batch_validates_all_queries_first() -> None:
    lm = scripted_lm(per_query)
    with dspy.context(lm=lm), pytest.raises(ValueError, match="query must not be empty"):
        SubQueryGenerator().batch_generate(["fine", ""])
    assert engine_of(lm).calls == 0
    with pytest.raises(TypeError):
        SubQueryGenerator().batch_generate("not a list")
    assert SubQueryGenerator().batch_generate([]) == []


# -- few-shot demos ----------------------------------------------------------------------------


def test_demos_are_sent_as_worked_examples() -> None:
    lm = answering(["a b c", "d e f"])
    generator = SubQueryGenerator()
    generator.set_demos(
        [
            {
                "query": "tea or coffee",
                "sub_queries": ["tea health", "coffee health"],
                "reasoning": "Two drinks.",
            }
        ]
    )
    with dspy.context(lm=lm):
        generator("solar and wind")
    (prompt,) = engine_of(lm).prompts
    assert "[[ ## original_query ## ]]\ntea or coffee" in prompt
    assert '["tea health", "coffee health"]' in prompt
    assert "Two drinks." in prompt
    assert input_field(prompt, "original_query") == "solar and wind"  # the real question is last


@pytest.mark.parametrize(
    ("demo", "message"),
    [
        ("tea", r"demos\[0\] must be a mapping"),
        ({"query": "", "sub_queries": ["a"]}, r"demos\[0\] needs a non-empty 'query'"),
        ({"query": "q", "sub_queries": []}, r"demos\[0\] needs 'sub_queries'"),
        ({"query": "q", "sub_queries": ["a", 1]}, r"demos\[0\] needs 'sub_queries'"),
        ({"query": "q", "sub_queries": ["a"], "num_subqueries": 0}, "positive integer"),
        ({"query": "q", "sub_queries": ["a"], "answer": "x"}, "unknown keys"),
    ],
)
def test_bad_demos_are_rejected(demo: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        SubQueryGenerator().set_demos([demo])  # type: ignore[list-item]
