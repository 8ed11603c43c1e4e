"""The answerer kind, the conformance kit's contract and the offline extractive answerer."""

from __future__ import annotations

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st
from ragloom import Answer, Answerer, ExtractiveAnswerer
from ragloom.answering import (
    NOT_FOUND,
    Citation,
    Claim,
    check_citations,
    cite,
    passages_for,
    sentence_spans,
    terms,
)
from ragloom.errors import ComponentTypeError, ConfigurationError
from ragloom.kinds import KINDS
from ragloom.plugins import Registry
from ragloom.testing import AnswererContract, make_retrieval
from ragloom.testing.retrievers import contract_corpus
from ragloom.testing.strategies import texts

REFUND, CARDS = "How long does a refund take?", "Which cards are accepted?"
QUESTION = "How long does a refund take and which cards are accepted?"


class TestExtractiveAnswererContract(AnswererContract):
    @pytest.fixture
    def answerer(self) -> ExtractiveAnswerer:
        return ExtractiveAnswerer()


class TestExtractiveOneSentenceContract(AnswererContract):
    @pytest.fixture
    def answerer(self) -> ExtractiveAnswerer:
        return ExtractiveAnswerer(sentences_per_ask=1, passages_per_ask=1, k1=2.0, b=0.5)


def refund_and_cards():
    return make_retrieval(
        QUESTION,
        {
            REFUND: [("invoices", 1), ("invoices", 0), ("payment-methods", 0)],
            CARDS: [("payment-methods", 0), ("payment-methods", 1)],
        },
        contract_corpus(),
    )


def test_the_kind_is_registered_with_its_contract() -> None:
    row = KINDS["answerer"]
    assert row.group == "ragloom.answerers"
    assert row.base_type() is Answerer
    assert row.contract_type() is AnswererContract
    built = Registry().create("answerer", "ragloom:extractive", {"sentences_per_ask": 1})
    assert isinstance(built, ExtractiveAnswerer) and built.sentences_per_ask == 1


def test_each_ask_is_answered_by_its_best_sentence_with_its_exact_span() -> None:
    retrieval = refund_and_cards()
    answer = ExtractiveAnswerer().answer_sync(QUESTION, retrieval)
    documents = {doc.id: doc.content for doc in contract_corpus()}
    assert [claim.ask for claim in answer.claims] == [REFUND, REFUND, CARDS]
    shorter, refund, cards = answer.claims
    # BM25 matches words: both sentences naming refunds, the shorter first
    assert shorter.text == "Refunds for annual plans are prorated."
    assert refund.text.startswith("A refund is paid back to the card")
    # "cards" matches twice in the first sentence, once in the card-on-file one (half as well)
    assert cards.text == "We accept credit cards and bank transfers."
    for claim in answer.claims:
        (citation,) = claim.citations
        assert documents[citation.document_id][citation.start : citation.end] == citation.quote
        assert retrieval.passages[citation.passage - 1].chunk_id == citation.chunk_id
    assert answer.text == (
        f"{REFUND}\n  {shorter.text} [1]\n  {refund.text} [1]\n{CARDS}\n  {cards.text} [2]"
    )
    assert answer.found and answer.not_found == [] and answer.retrieval == retrieval
    assert check_citations(answer, retrieval) == []


def test_a_sentence_is_quoted_once_across_asks() -> None:
    corpus = contract_corpus()
    same = "Which cards are accepted, and which cards are accepted?"
    retrieval = make_retrieval(
        same, {CARDS: [("payment-methods", 0)], CARDS + " ": [("payment-methods", 0)]}, corpus
    )
    answer = ExtractiveAnswerer().answer_sync(same, retrieval)
    quotes = [c.quote for c in answer.citations]
    assert len(quotes) == len(set(quotes)) and quotes
    assert answer.not_found == [CARDS + " "]
    assert answer.claims[-1].text == NOT_FOUND and answer.claims[-1].citations == []


def test_an_ask_no_sentence_matches_is_not_found() -> None:
    question = "Is there a dark mode?"
    retrieval = make_retrieval(question, {question: [("proxy", 0)]}, contract_corpus())
    answer = ExtractiveAnswerer().answer_sync(question, retrieval)
    assert answer.text == NOT_FOUND and not answer.found and answer.citations == []
    assert answer.not_found == [question]
    assert answer.model_dump(mode="json")["found"] is False


def test_lower_passages_must_match_better() -> None:
    # "refund" is in the first and second passages: the first passage's sentence wins
    retrieval = make_retrieval(
        REFUND, {REFUND: [("invoices", 1), ("invoices", 0)]}, contract_corpus()
    )
    answer = ExtractiveAnswerer(sentences_per_ask=5, relative=0.0).answer_sync(REFUND, retrieval)
    assert [c.passage for c in answer.citations][0] == 1


@pytest.mark.parametrize(
    "options",
    [{"sentences_per_ask": 0}, {"passages_per_ask": True}, {"k1": -1}, {"b": 2},
     {"relative": "half"}],
)
def test_bad_settings_are_configuration_errors(options) -> None:
    with pytest.raises(ConfigurationError):
        ExtractiveAnswerer(**options)


def test_cite_checks_the_passage_and_span() -> None:
    retrieval = refund_and_cards()
    passage = retrieval.passages[0]
    whole = cite(retrieval, 1)
    assert (whole.start, whole.end, whole.quote) == (passage.start, passage.end, passage.content)
    part = cite(retrieval, 1, 2, 8)
    assert part.start == passage.start + 2 and part.quote == passage.content[2:8]
    for bad in (0, len(retrieval.passages) + 1, True):
        with pytest.raises(ValueError, match="no passage"):
            cite(retrieval, bad)
    with pytest.raises(ValueError, match="outside"):
        cite(retrieval, 1, 5, len(passage.content) + 1)


def test_check_citations_finds_what_is_wrong() -> None:
    retrieval = refund_and_cards()
    good = cite(retrieval, 1, 0, 10)
    cases = {
        "passages": good.model_copy(update={"passage": 99}),
        "is not": good.model_copy(update={"chunk_id": "elsewhere"}),
        "the quote is not the text": good.model_copy(update={"quote": "tampered!!"}),
        "outside the passage": good.model_copy(update={"end": good.start + 10_000}),
        "document": good.model_copy(update={"document_id": "proxy"}),
    }
    for expected, citation in cases.items():
        answer = Answer(question="q", text="t", claims=[Claim(text="t", citations=[citation])])
        (problem,) = check_citations(answer, retrieval)
        assert expected in problem, (expected, problem)
    silent = Answer(question="q", text="Refunds take ten days.", claims=[Claim(text="x")])
    assert len(check_citations(silent, retrieval)) == 2


def test_passages_for_keeps_each_asks_order() -> None:
    retrieval = refund_and_cards()
    assert [n for n, _ in passages_for(retrieval, REFUND)] == [1, 3, 2]
    assert [n for n, _ in passages_for(retrieval, CARDS, limit=1)] == [2]
    assert passages_for(retrieval, "never asked") == []


def test_an_answerer_must_implement_one_path() -> None:
    class Nothing(Answerer):
        pass

    with pytest.raises(ComponentTypeError, match="answer_sync"):
        Nothing().answer_sync("q", refund_and_cards())

    class OnlyAsync(Answerer):
        async def answer(self, question, retrieval):
            return Answer(question=question, text=NOT_FOUND)

    assert OnlyAsync().answer_sync("q", refund_and_cards()).text == NOT_FOUND


def test_citations_of_an_answer_are_listed_once() -> None:
    retrieval = refund_and_cards()
    one = cite(retrieval, 2)
    answer = Answer(question="q", text="t", claims=[
        Claim(text="a", citations=[one]), Claim(text="b", citations=[one, cite(retrieval, 1)]),
    ])
    assert [c.passage for c in answer.citations] == [2, 1]
    assert isinstance(answer.citations[0], Citation)


@pytest.mark.anyio
async def test_async_answer_runs_in_the_loop() -> None:
    answer = await ExtractiveAnswerer().answer(QUESTION, refund_and_cards())
    assert answer.found
    await anyio.sleep(0)


MARKDOWN = """\
Title
=====

## Clearing

Run the command below. It removes every entry, e.g. old ones.

- first item of a list
- second item

```console
$ ragloom cache clear
```
| a | b |
"""


def test_sentence_spans_of_markdown() -> None:
    got = [MARKDOWN[a:b] for a, b in sentence_spans(MARKDOWN)]
    assert got == [
        "Run the command below.", "It removes every entry, e.g. old ones.",
        "- first item of a list", "- second item", "$ ragloom cache clear", "| a | b |",
    ]


@given(st.text(alphabet=st.sampled_from(list("ab .!?\n-#=`$|\t")), max_size=80))
def test_sentence_spans_are_ordered_trimmed_slices(text: str) -> None:
    last = 0
    for start, end in sentence_spans(text):
        assert last <= start < end <= len(text)
        piece = text[start:end]
        assert piece == piece.strip() and piece
        last = end


@given(
    text=texts(max_tokens=60),
    offset=st.integers(min_value=0, max_value=50),
    words=st.lists(st.sampled_from(["alpha", "beta", "cache", "plugins", "é"]), max_size=3),
)
def test_extractive_citations_are_exact_slices_of_any_text(
    text: str, offset: int, words: list[str]
) -> None:
    """Whatever the text (Unicode, punctuation, blank lines), every quote is exactly the
    document's text at its span, and an answer citing nothing says so."""
    from ragloom.multi_retrieval import FusedPassage, PassageHit, RetrievalResult

    ask = " ".join(words) or "anything"
    text = f"{text}\n\n{ask} is here. {text}"
    document = "x" * offset + text
    passage = FusedPassage(
        chunk_id="d#0", document_id="d", start=offset, end=len(document), content=text,
        score=1.0, found_by=[PassageHit(sub_query=ask, route="r", rank=1, score=1.0)],
    )
    retrieval = RetrievalResult(query=ask, sub_queries=[ask], passages=[passage])
    answer = ExtractiveAnswerer(sentences_per_ask=3, relative=0.0).answer_sync(ask, retrieval)
    assert check_citations(answer, retrieval) == []
    for citation in answer.citations:
        assert document[citation.start : citation.end] == citation.quote
    assert answer.found == bool(terms(ask)), answer.text  # "{ask} is here." matches it
