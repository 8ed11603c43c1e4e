"""decomposition_violations: the checks every decomposition must pass, on their own."""

from __future__ import annotations

import pytest
from ragloom_rules import decomposition_violations
from ragloom_rules.invariants import content_words


def test_content_words_leave_out_function_words_and_fold_possessives() -> None:
    assert content_words("What are Apple's revenue and the profit of Apple?") == {
        "apple",
        "revenue",
        "profit",
    }
    assert content_words("Thanks! Hi, please, could you tell me?") == {"tell"}
    # negations are content: dropping one changes the meaning
    assert content_words("Why doesn't it work? It's not working") == {
        "doesn't",
        "work",
        "not",
        "working",
    }


@pytest.mark.parametrize(
    ("question", "sub_queries"),
    [
        ("What is Docker and how does it work?", ["What is Docker?", "How does Docker work?"]),
        (
            "Can I pay by credit card, PayPal, and bank transfer?",
            ["Can I pay by credit card?", "Can I pay by PayPal?", "Can I pay by bank transfer?"],
        ),
        (
            "What did Einstein and Bohr disagree about?",
            ["What did Einstein and Bohr disagree about?"],
        ),
        (
            "What is the difference between TCP and UDP?",
            ["TCP", "UDP", "What is the difference between TCP and UDP?"],
        ),
        # the comparison wording is a connective: the per-item phrases alone lose nothing
        ("What is the difference between TCP and UDP?", ["TCP", "UDP"]),
        ("Since 2020, what are its effects?", ["Since 2020, what are its effects?"]),
        # an "it" that stands for nothing named before needs no antecedent
        (
            "What is the return window, and is it possible to return opened items?",
            ["What is the return window?", "Is it possible to return opened items?"],
        ),
        # a connective between two asks is expressed by the split
        (
            "How do I trust that key? And separately, how do we publish our own repository?",
            ["How do I trust that key?", "How do we publish our own repository?"],
        ),
        # a pronoun in a clause inside the question stands for a word of that question
        (
            "How do I shrink the file? Also, how do I back up a live database while other "
            "connections keep writing to it?",
            [
                "How do I shrink the file?",
                "How do I back up a live database while other connections keep writing to it?",
            ],
        ),
        ("", []),
    ],
)
def test_faithful_decompositions_pass(question: str, sub_queries: list[str]) -> None:
    assert decomposition_violations(question, sub_queries) == []


def test_an_invented_word_is_reported() -> None:
    problems = decomposition_violations(
        "Which laptop is better for video editing and gaming?",
        ["Which laptop is better for video editing?", "Which laptop is cheaper for gaming?"],
    )
    assert problems == ["'Which laptop is cheaper for gaming?' invents 'cheaper'"]


def test_a_lost_item_is_reported() -> None:
    problems = decomposition_violations(
        "Can I pay by credit card, PayPal, and bank transfer?",
        ["Can I pay by credit card?", "Can I pay by bank transfer?"],
    )
    assert problems == ["no sub-query keeps 'paypal'"]


@pytest.mark.parametrize(
    ("question", "sub_query", "word"),
    [
        ("What is Docker and how does it work?", "How does it work?", "it"),
        ("What are microservices and how do they communicate?", "How do they communicate?", "they"),
        (
            "Since 2020, how has remote work changed and what are its effects?",
            "What are its effects?",
            "its",
        ),
        ("What is a race condition and how can I prevent one?", "How can I prevent one?", "one"),
        # "while" opens a clause inside the second question, but nothing in it is kept
        (
            "What is a lock and how do I wait while it is held?",
            "How do I wait while it is held?",
            "it",
        ),
        (
            "Is the Dyson V15 quieter than the Shark Stratos, and which one has more suction?",
            "Which one has more suction?",
            "one",
        ),
    ],
)
def test_a_dangling_reference_is_reported(question: str, sub_query: str, word: str) -> None:
    first = question.split(" and ")[0].split(", and")[0]
    problems = decomposition_violations(question, [first, sub_query])
    assert f"{sub_query!r} keeps unresolved {word!r}" in problems


def test_a_reference_with_its_antecedent_in_the_same_sub_query_is_resolved() -> None:
    question = "I ordered a blue lamp last week. When will it arrive?"
    assert decomposition_violations(question, [question]) == []
    assert decomposition_violations(
        question, ["I ordered a blue lamp last week", "When will it arrive?"]
    ) == ["'When will it arrive?' keeps unresolved 'it'"]


def test_empty_and_duplicate_sub_queries_are_reported() -> None:
    problems = decomposition_violations("What is VAT?", ["What is VAT?", "  ", "What is VAT?"])
    assert problems == ["empty sub-query", "duplicate sub-query 'What is VAT?'"]
    assert decomposition_violations("What is VAT?", []) == ["no sub-query keeps 'vat'"]
