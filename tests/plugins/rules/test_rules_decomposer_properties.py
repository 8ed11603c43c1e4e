"""HeuristicDecomposer: properties over generated compound questions.

Questions are generated from frames and item pools (an enumeration in a shared frame, a
relation between two things, a question that refers to an earlier one, scene-setting
statements, greetings) and combined into messages of several questions. Whatever the
combination, the decomposition keeps the invariants of ``decomposition_violations``; the
specific shapes also have their exact expected sub-queries.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from ragloom_rules import HeuristicDecomposer, decomposition_violations

# (frame, items that fill its slot): each frame delimits its items with a preposition or a
# verb, so any of the items, in any number, is one sub-query each.
FRAMES: list[tuple[str, list[str]]] = [
    (
        "What are the effects of caffeine on {}?",
        ["sleep", "memory", "mood", "blood pressure", "focus", "heart rate", "digestion"],
    ),
    (
        "Do you ship to {}?",
        ["Canada", "Mexico", "Brazil", "New Zealand", "South Korea", "Japan", "Norway"],
    ),
    (
        "Can I pay by {}?",
        ["credit card", "PayPal", "bank transfer", "Apple Pay", "cash", "Klarna", "gift card"],
    ),
    (
        "Which laptop is better for {}?",
        ["video editing", "gaming", "photo editing", "programming", "music production", "travel"],
    ),
    (
        "How do I install Python on {}?",
        ["Windows", "macOS", "Linux", "ChromeOS", "a Raspberry Pi", "an old Mac"],
    ),
    (
        "What is the population of {}?",
        ["Tokyo", "Delhi", "Shanghai", "Lagos", "New York City", "Mexico City"],
    ),
    (
        "How does inflation affect {}?",
        ["savings", "mortgages", "wages", "stock prices", "small businesses", "pensions"],
    ),
    (
        "Is the mobile app available in {}?",
        ["Spanish", "French", "German", "Brazilian Portuguese", "Japanese", "Korean"],
    ),
]
PEOPLE = ["Einstein", "Bohr", "Newton", "Leibniz", "Darwin", "Marie Curie", "Freud", "Jung"]
RELATIONS = [
    "What did {} and {} disagree about?",
    "How did {} and {} work together?",
    "Did {} and {} ever meet?",
    "What do {} and {} have in common?",
    "Why did {} and {} argue?",
]
TOPICS = [
    "What is the relationship between {} and {}?",
    "Is there a link between {} and {}?",
    "What is the distance between {} and {}?",
]
THINGS = ["sleep", "depression", "diet", "exercise", "Paris", "Rome", "inflation", "wages"]
DEFINED = ["Docker", "Kubernetes", "a VPN", "machine learning", "quantum computing", "an API"]
PLURALS = ["microservices", "vaccines", "black holes", "tariffs", "neural networks"]
SCENES = ["I live in Canada.", "I have a Pixel 8.", "I'm new to Python.", "We run a small bakery."]


def _joined(items: list[str], conjunction: str, oxford: bool) -> str:
    if len(items) == 2:
        return f"{items[0]} {conjunction} {items[1]}"
    comma = "," if oxford else ""
    return f"{', '.join(items[:-1])}{comma} {conjunction} {items[-1]}"


@st.composite
def enumerations(draw: st.DrawFn) -> tuple[str, list[str], list[str]]:
    """A question listing items in a frame, its expected sub-queries, and the items."""
    frame, pool = draw(st.sampled_from(FRAMES))
    items = draw(st.lists(st.sampled_from(pool), min_size=2, max_size=6, unique=True))
    oxford = draw(st.booleans())
    question = frame.format(_joined(items, "and", oxford))
    return question, [frame.format(i) for i in items], items


def _ambiguous(items: list[str]) -> bool:
    """Two items where a lone singular word faces several plain words: "solar and wind power"
    may share its head ("solar power"), so the decomposer keeps such a pair whole (names,
    determiners and plurals make the items plain: "Canada and New Zealand", "savings and
    stock prices")."""
    if len(items) != 2:
        return False
    first, last = items[0].split(), items[1].split()
    plural = first[0].endswith("s") and not first[0].endswith(("ss", "us", "is"))
    plain = all(w.islower() and w not in ("a", "an", "the") for w in first + last)
    return len(first) == 1 and len(last) > 1 and plain and not plural


@settings(max_examples=300, deadline=None)
@given(enumerations())
def test_an_enumeration_of_any_length_gives_one_sub_query_per_item(
    case: tuple[str, list[str], list[str]],
) -> None:
    question, expected, items = case
    subs = HeuristicDecomposer(max_sub_queries=10).decompose(question)
    assert subs == ([question] if _ambiguous(items) else expected)
    assert decomposition_violations(question, subs) == []


@settings(max_examples=200, deadline=None)
@given(enumerations(), st.integers(1, 4))
def test_a_cap_never_drops_an_item(case: tuple[str, list[str], list[str]], cap: int) -> None:
    question, expected, items = case
    subs = HeuristicDecomposer(max_sub_queries=cap).decompose(question)
    assert 1 <= len(subs) <= cap
    assert decomposition_violations(question, subs) == []
    if len(expected) > cap and not _ambiguous(items):
        assert subs == [question]  # a missed split costs less than a lost item


@settings(max_examples=100, deadline=None)
@given(
    st.sampled_from(RELATIONS),
    st.lists(st.sampled_from(PEOPLE), min_size=2, max_size=2, unique=True),
)
def test_a_relation_between_two_people_stays_one_question(template: str, people: list[str]) -> None:
    question = template.format(*people)
    assert HeuristicDecomposer().decompose(question) == [question]


@settings(max_examples=100, deadline=None)
@given(
    st.sampled_from(TOPICS), st.lists(st.sampled_from(THINGS), min_size=2, max_size=2, unique=True)
)
def test_between_binds_its_pair(template: str, things: list[str]) -> None:
    question = template.format(*things)
    assert HeuristicDecomposer().decompose(question) == [question]


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(DEFINED), st.sampled_from(["work", "help", "fail"]))
def test_it_is_replaced_by_what_the_first_question_defines(thing: str, verb: str) -> None:
    question = f"What is {thing} and how does it {verb}?"
    assert HeuristicDecomposer().decompose(question) == [
        f"What is {thing}?",
        f"How does {thing} {verb}?",
    ]


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(PLURALS), st.sampled_from(["work", "spread", "form"]))
def test_they_is_replaced_by_a_plural_antecedent(things: str, verb: str) -> None:
    question = f"What are {things}? How do they {verb}?"
    assert HeuristicDecomposer().decompose(question) == [
        f"What are {things}?",
        f"How do {things} {verb}?",
    ]


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(SCENES), enumerations())
def test_a_scene_setting_statement_stays_in_front_of_each_sub_query(
    scene: str, case: tuple[str, list[str], list[str]]
) -> None:
    question, expected, items = case
    subs = HeuristicDecomposer(max_sub_queries=10).decompose(f"{scene} {question}")
    alone = HeuristicDecomposer(max_sub_queries=10).decompose(question)
    if _ambiguous(items):
        assert alone == [question]
        assert subs == [f"{scene} {question}"]
    else:
        assert subs == [f"{scene} {e}" for e in expected]


# -- messages of several questions --------------------------------------------------------------


@st.composite
def questions(draw: st.DrawFn) -> str:
    kind = draw(st.sampled_from(["list", "relation", "between", "define", "plural", "simple"]))
    if kind == "list":
        return draw(enumerations())[0]
    if kind == "relation":
        people = draw(st.lists(st.sampled_from(PEOPLE), min_size=2, max_size=2, unique=True))
        return draw(st.sampled_from(RELATIONS)).format(*people)
    if kind == "between":
        things = draw(st.lists(st.sampled_from(THINGS), min_size=2, max_size=2, unique=True))
        return draw(st.sampled_from(TOPICS)).format(*things)
    if kind == "define":
        thing = draw(st.sampled_from(DEFINED))
        follow = draw(st.sampled_from(["how does it work", "why is it useful", "who uses it"]))
        return f"What is {thing} and {follow}?"
    if kind == "plural":
        things = draw(st.sampled_from(PLURALS))
        return f"What are {things} and how do they work?"
    return draw(
        st.sampled_from(
            ["Where is my refund?", "How do I reset my password?", "Why was I charged twice?"]
        )
    )


@st.composite
def messages(draw: st.DrawFn) -> str:
    parts = draw(st.lists(questions(), min_size=1, max_size=3))
    glue = draw(st.sampled_from([" ", " Also, ", " And "]))
    body = parts[0]
    for part in parts[1:]:
        body += glue + (part[0].lower() + part[1:] if glue.strip() else part)
    if draw(st.booleans()):
        body = draw(st.sampled_from(SCENES)) + " " + body
    if draw(st.booleans()):
        body = "Hi, " + body[0].lower() + body[1:]
    if draw(st.booleans()):
        body += " Thanks!"
    return body


@settings(max_examples=200, deadline=None)
@given(messages(), st.integers(1, 8), st.booleans())
def test_any_message_keeps_the_invariants(message: str, cap: int, comparison: bool) -> None:
    decomposer = HeuristicDecomposer(max_sub_queries=cap, include_comparison=comparison)
    subs = decomposer.decompose(message)
    assert 1 <= len(subs) <= cap
    assert len(set(subs)) == len(subs)
    assert decomposition_violations(message, subs) == []
    assert subs == decomposer.decompose(message)  # deterministic


_SOUP = st.sampled_from(
    "what is how does the a and & or vs versus compare difference between of in on for "
    "Python Java Germany 2020 since , ; : ? . also which better standard Android brand "
    "it they cats dogs New York iPhone 15 with to differ I my one either both Hi Thanks ! "
    "reset password update install configure ship Canada disagree together same".split()
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_SOUP, max_size=25).map(" ".join), st.integers(1, 6), st.booleans())
def test_word_soup_never_gains_or_loses_a_word(query: str, cap: int, comparison: bool) -> None:
    subs = HeuristicDecomposer(max_sub_queries=cap, include_comparison=comparison).decompose(query)
    # references in random words may stand for anything; words must still all be kept
    problems = [p for p in decomposition_violations(query, subs) if "unresolved" not in p]
    assert problems == []
