"""DSPyAnswerer: cited answers from a DSPy LM, checked with scripted LMs (no network): valid,
invalid and hallucinated citations, "not found", unreadable answers and LM failures."""

from __future__ import annotations

import re
from importlib.metadata import entry_points

import dspy
import pytest
from ragloom.answering import NOT_FOUND, Answerer, AnswerError, check_citations
from ragloom.errors import ConfigurationError
from ragloom.plugins import Registry
from ragloom.testing import AnswererContract, make_retrieval
from ragloom.testing.contracts import check_rebuilds
from ragloom.testing.retrievers import contract_corpus
from ragloom_dspy import DSPyAnswerer, NoLMConfiguredError
from ragloom_dspy.answerer import parse_citations
from ragloom_dspy.testing import chat_answer, engine_of, input_field, scripted_lm

REFUND, CARDS = "How long does a refund take?", "Which cards are accepted?"
QUESTION = "How long does a refund take and which cards are accepted?"


def given_numbers(prompt: str) -> list[int]:
    passages = input_field(prompt, "passages") or ""
    return [int(n) for n in re.findall(r"^\[(\d+)\]", passages, re.M)]


def first_sentence_of_first(prompt: str) -> str:
    """A faithful model: the first sentence of the first passage it was given, cited."""
    passages = input_field(prompt, "passages") or ""
    numbers = given_numbers(prompt)
    if not numbers:
        return chat_answer(answer=NOT_FOUND, cited=[])
    body = passages.split("\n", 1)[1]
    return chat_answer(answer=body.split(". ")[0] + ".", cited=[numbers[0]])


def refund_and_cards():
    return make_retrieval(
        QUESTION,
        {
            REFUND: [("invoices", 1), ("invoices", 0)],
            CARDS: [("payment-methods", 0), ("payment-methods", 1)],
        },
        contract_corpus(),
    )


class TestDSPyAnswererContract(AnswererContract):
    @pytest.fixture
    def answerer(self) -> DSPyAnswerer:
        return DSPyAnswerer(lm=scripted_lm(first_sentence_of_first))

    def test_config_rebuilds(self, answerer: DSPyAnswerer) -> None:
        # an LM object is described by its model name: rebuild from a model string instead
        check_rebuilds(DSPyAnswerer(model="openai/gpt-4o-mini", passages_per_ask=3))


def by_ask(answers: dict[str, str]):
    def respond(prompt: str) -> str:
        return answers[input_field(prompt, "ask") or ""]

    return respond


def test_valid_citations_each_ask_answered_then_composed() -> None:
    retrieval = refund_and_cards()
    lm = scripted_lm(by_ask({
        REFUND: chat_answer(answer="Within ten working days [1].", cited="[1]"),
        CARDS: chat_answer(answer="Credit cards and bank transfers.", cited=[2, 4]),
    }))
    answer = DSPyAnswerer(lm=lm).answer_sync(QUESTION, retrieval)
    assert [c.text for c in answer.claims] == [
        "Within ten working days.", "Credit cards and bank transfers.",
    ]
    assert [[c.passage for c in claim.citations] for claim in answer.claims] == [[1], [2, 4]]
    assert answer.text == (
        f"{REFUND}\n  Within ten working days. [1]\n{CARDS}\n"
        "  Credit cards and bank transfers. [2][4]"
    )
    assert answer.warnings == [] and answer.not_found == [] and answer.answerer == "dspy"
    assert check_citations(answer, retrieval) == []
    documents = {doc.id: doc.content for doc in contract_corpus()}
    for citation in answer.citations:  # a citation spans the passage the model was shown
        passage = retrieval.passages[citation.passage - 1]
        assert (citation.start, citation.end) == (passage.start, passage.end)
        assert documents[citation.document_id][citation.start : citation.end] == citation.quote
    # each ask was shown its own passages, numbered as in the result, and every ask
    prompts = engine_of(lm).prompts
    assert sorted(given_numbers(p) for p in prompts) == [[1, 3], [2, 4]]
    assert all(input_field(p, "asks") == f"{REFUND}\n{CARDS}" for p in prompts)
    assert all(input_field(p, "question") == QUESTION for p in prompts)


def test_invalid_citations_are_refused_and_reported() -> None:
    retrieval = refund_and_cards()
    lm = scripted_lm(by_ask({
        # 2 is a passage of the result, but not one this ask was given; 7 does not exist
        REFUND: chat_answer(answer="Ten working days.", cited="passages 1, 2 and 7"),
        CARDS: chat_answer(answer="Credit cards [2] and transfers [9].", cited="none"),
    }))
    answer = DSPyAnswerer(lm=lm).answer_sync(QUESTION, retrieval)
    assert [[c.passage for c in claim.citations] for claim in answer.claims] == [[1], [2]]
    assert answer.claims[1].text == "Credit cards and transfers."
    assert len(answer.warnings) == 2
    assert "[2, 7]" in answer.warnings[0] and "refused" in answer.warnings[0]
    assert "[9]" in answer.warnings[1]
    assert check_citations(answer, retrieval) == []


def test_a_hallucinated_answer_becomes_not_found() -> None:
    retrieval = refund_and_cards()
    lm = scripted_lm(by_ask({
        # a claim resting only on a passage it was never given
        REFUND: chat_answer(answer="Refunds take 90 days.", cited=[5]),
        # a claim citing nothing at all
        CARDS: chat_answer(answer="We accept Bitcoin.", cited=[]),
    }))
    answer = DSPyAnswerer(lm=lm).answer_sync(QUESTION, retrieval)
    assert answer.found is False and answer.citations == []
    assert [c.text for c in answer.claims] == [NOT_FOUND, NOT_FOUND]
    assert answer.not_found == [REFUND, CARDS]
    assert "90 days" not in answer.text and "Bitcoin" not in answer.text
    assert any("[5]" in w for w in answer.warnings)
    assert any("cites no passage" in w for w in answer.warnings)
    assert check_citations(answer, retrieval) == []


def test_the_model_saying_not_found_is_kept_without_its_citations() -> None:
    retrieval = refund_and_cards()
    lm = scripted_lm(by_ask({
        REFUND: chat_answer(answer="not found in the documents", cited=[1]),  # 1 was given
        CARDS: chat_answer(answer="Not found in the documents.", cited=[]),
    }))
    answer = DSPyAnswerer(lm=lm).answer_sync(QUESTION, retrieval)
    assert answer.not_found == [REFUND, CARDS] and answer.warnings == []
    assert answer.text == f"{REFUND}\n  {NOT_FOUND}\n{CARDS}\n  {NOT_FOUND}"


def test_an_unreadable_answer_is_not_found_with_a_warning() -> None:
    question = "How do I reset a forgotten password?"
    retrieval = make_retrieval(question, {question: [("passwords", 0)]}, contract_corpus())
    answer = DSPyAnswerer(lm=scripted_lm("I think it is probably fine.")).answer_sync(
        question, retrieval
    )
    assert answer.text == NOT_FOUND and answer.not_found == [question]
    assert answer.warnings == [f"{question!r}: the model's answer could not be read; not found"]


@pytest.mark.anyio
async def test_an_lm_failure_fails_the_answer() -> None:
    retrieval = refund_and_cards()
    answerer = DSPyAnswerer(lm=scripted_lm([RuntimeError("server down")] * 2))
    with pytest.raises(AnswerError, match="server down"):
        await answerer.answer(QUESTION, retrieval)


@pytest.mark.anyio
async def test_async_path_answers_every_ask_in_order() -> None:
    retrieval = refund_and_cards()
    lm = scripted_lm(first_sentence_of_first)
    answer = await DSPyAnswerer(lm=lm).answer(QUESTION, retrieval)
    assert [claim.ask for claim in answer.claims] == [REFUND, CARDS]
    assert [c.passage for c in answer.citations] == [1, 2]
    assert engine_of(lm).calls == 2


def test_no_lm_is_a_configuration_error_and_no_passages_need_none() -> None:
    with pytest.raises(NoLMConfiguredError):
        DSPyAnswerer().answer_sync(QUESTION, refund_and_cards())
    empty = make_retrieval("q", {"q": []}, contract_corpus())
    assert DSPyAnswerer().answer_sync("q", empty).text == NOT_FOUND
    with dspy.context(lm=scripted_lm(first_sentence_of_first)):
        assert DSPyAnswerer().answer_sync(QUESTION, refund_and_cards()).found


def test_passages_per_ask_bounds_what_the_model_is_shown() -> None:
    lm = scripted_lm(first_sentence_of_first)
    DSPyAnswerer(lm=lm, passages_per_ask=1).answer_sync(QUESTION, refund_and_cards())
    assert sorted(given_numbers(p) for p in engine_of(lm).prompts) == [[1], [2]]
    with pytest.raises(ConfigurationError, match="passages_per_ask"):
        DSPyAnswerer(passages_per_ask=0)
    with pytest.raises(ConfigurationError, match="DSPyAnswerer"):
        DSPyAnswerer(lm=lm, model="openai/gpt-4o-mini")


def test_parse_citations() -> None:
    assert parse_citations("[1, 3]", "A [2]. B [3; 4].") == ([1, 3, 2, 4], "A. B.")
    assert parse_citations([2, "5"], "x") == ([2, 5], "x")
    assert parse_citations(None, "no marks") == ([], "no marks")
    assert parse_citations(True, "x") == ([], "x")


def test_registered_as_the_dspy_answerer() -> None:
    (point,) = [ep for ep in entry_points(group="ragloom.answerers") if ep.name == "dspy"]
    assert point.dist is not None and point.dist.name == "ragloom-dspy"
    assert issubclass(point.load(), Answerer)
    built = Registry().create("answerer", "dspy", {"model": "openai/gpt-4o-mini"})
    assert isinstance(built, DSPyAnswerer) and built.config()["model"] == "openai/gpt-4o-mini"
