"""HeuristicDecomposer: exact sub-queries on questions written for these tests."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ragloom import ConfigurationError, QueryTransformer
from ragloom_rules import HeuristicDecomposer

pytestmark = pytest.mark.anyio

# (query, exact sub-queries)
# Things set side by side ("X vs Y", "X or Y: which ...", "which ..., X or Y?"): one search
# phrase per item, then the comparison itself.
COMPARISONS = [
    (
        "Compare renewable energy adoption in Germany vs France since 2020",
        [
            "Renewable energy adoption in Germany since 2020",
            "Renewable energy adoption in France since 2020",
            "Compare renewable energy adoption in Germany vs France since 2020",
        ],
    ),
    (
        "Python vs Java for web development",
        [
            "Python for web development",
            "Java for web development",
            "Python vs Java for web development",
        ],
    ),
    (
        "AT&T vs. Verizon coverage in rural areas",
        [
            "AT&T coverage in rural areas",
            "Verizon coverage in rural areas",
            "AT&T vs. Verizon coverage in rural areas",
        ],
    ),
    (
        "iPhone 15 vs Samsung Galaxy S24 camera quality",
        [
            "iPhone 15 camera quality",
            "Samsung Galaxy S24 camera quality",
            "iPhone 15 vs Samsung Galaxy S24 camera quality",
        ],
    ),
    (
        "React vs Vue vs Angular for large apps",
        [
            "React for large apps",
            "Vue for large apps",
            "Angular for large apps",
            "React vs Vue vs Angular for large apps",
        ],
    ),
    (
        "Postgres or MySQL: which is better for analytics?",
        [
            "Postgres better for analytics",
            "MySQL better for analytics",
            "Postgres or MySQL: which is better for analytics?",
        ],
    ),
    (
        "Laptop or desktop: which should I buy for gaming?",
        [
            "Laptop for gaming",
            "Desktop for gaming",
            "Laptop or desktop: which should I buy for gaming?",
        ],
    ),
    (
        "Windows 11 versus macOS Sonoma: which is more secure?",
        [
            "Windows 11 more secure",
            "macOS Sonoma more secure",
            "Windows 11 versus macOS Sonoma: which is more secure?",
        ],
    ),
    (
        "Which is better for beginners, Python or JavaScript?",
        [
            "Python better for beginners",
            "JavaScript better for beginners",
            "Which is better for beginners, Python or JavaScript?",
        ],
    ),
    (
        "Which is cheaper: AWS, Azure, or GCP?",
        [
            "AWS cheaper",
            "Azure cheaper",
            "GCP cheaper",
            "Which is cheaper: AWS, Azure, or GCP?",
        ],
    ),
]

# A comparison named by a word ("the difference between", "compare", "differ", "compare to")
# asks for one relation between its items: one ask, kept whole (as the issue's "Compare the
# pricing of the Pro and Team plans" and the evaluation sets' one-ask questions have it).
NAMED_COMPARISONS = [
    "What is the difference between TCP and UDP?",
    "What are the main differences between SQL and NoSQL databases?",
    "What is the price difference between gold and silver in 2023?",
    "What is the difference between the standard and premium plans?",
    "What's the difference between a Roth IRA and a traditional IRA?",
    "The Beatles and The Rolling Stones: what's the difference?",
    "Compare the battery life of the iPhone 15 and the Samsung Galaxy S24",
    "Compare the cost of living in New York and Paris",
    "Compare React, Vue, and Angular for large apps",
    "Compare Postgres with MySQL for analytics workloads",
    "How does Rust compare to Go for systems programming?",
    "How do cats and dogs differ?",
]

COORDINATED = [
    ("What is Docker and how does it work?", ["What is Docker?", "How does Docker work?"]),
    (
        "What is Kubernetes and how does Docker work?",
        ["What is Kubernetes?", "How does Docker work?"],
    ),
    (
        "What are microservices and how do they communicate?",
        ["What are microservices?", "How do microservices communicate?"],
    ),
    (
        "Who is Ada Lovelace and what is she known for?",
        ["Who is Ada Lovelace?", "What is Ada Lovelace known for?"],
    ),
    ("What is VAT? How do I register for it?", ["What is VAT?", "How do I register for VAT?"]),
    ("What is an API; how do I call one?", ["What is an API?", "How do I call an API?"]),
    (
        "What is the return window, and can I return opened items?",
        ["What is the return window?", "Can I return opened items?"],
    ),
    (
        "What is a decorator in Python and how do I write one?",
        ["What is a decorator in Python?", "How do I write a decorator in Python?"],
    ),
    (
        # a phrase of one question is not carried into another: it may not apply there
        "What is the VAT rate in Germany and how do I register?",
        ["What is the VAT rate in Germany?", "How do I register?"],
    ),
    (
        "What was GDP growth in Germany in 2020 and how did unemployment change?",
        ["What was GDP growth in Germany in 2020?", "How did unemployment change?"],
    ),
    (
        "Since 2020, how has remote work changed and what are its effects on productivity?",
        # a sentence-initial time phrase scopes over the whole sentence
        [
            "Since 2020, how has remote work changed?",
            "Since 2020, what are remote work's effects on productivity?",
        ],
    ),
    (
        "How has the housing market in the United States changed since 2008 and what caused "
        "the crash?",
        [
            "How has the housing market in the United States changed since 2008?",
            "What caused the crash?",
        ],
    ),
    (
        # "it" is resolved; the comparison it asks for is one ask
        "What was the unemployment rate in Spain over the last 5 years and how does it compare "
        "to Italy?",
        [
            "What was the unemployment rate in Spain over the last 5 years?",
            "How does the unemployment rate compare to Italy?",
        ],
    ),
    (
        "What is machine learning? And how does deep learning differ from it?",
        ["What is machine learning?", "How does deep learning differ from machine learning?"],
    ),
    (
        "How do I reset my password and update my email?",
        ["How do I reset my password?", "How do I update my email?"],
    ),
    (
        "How do I set up two-factor authentication and recover my account if I lose my phone?",
        [
            "How do I set up two-factor authentication if I lose my phone?",
            "How do I recover my account if I lose my phone?",
        ],
    ),
    (
        # a statement before the only question is its context: the message stays whole
        "In 2020, Germany, France and Italy grew slowly; what happened in 2021?",
        ["In 2020, Germany, France and Italy grew slowly; what happened in 2021?"],
    ),
]

ENUMERATIONS = [
    (
        "What are the effects of caffeine on sleep, memory, and mood?",
        [
            "What are the effects of caffeine on sleep?",
            "What are the effects of caffeine on memory?",
            "What are the effects of caffeine on mood?",
        ],
    ),
    (
        "What are the symptoms, causes, and treatments of diabetes in children?",
        [
            "What are the symptoms of diabetes in children?",
            "What are the causes of diabetes in children?",
            "What are the treatments of diabetes in children?",
        ],
    ),
    (
        "What are the causes and effects of inflation?",
        ["What are the causes of inflation?", "What are the effects of inflation?"],
    ),
    (
        "What are the causes and effects of inflation and unemployment?",
        [
            "What are the causes of inflation?",
            "What are the causes of unemployment?",
            "What are the effects of inflation?",
            "What are the effects of unemployment?",
        ],
    ),
    (
        "Symptoms and treatments for seasonal allergies",
        ["Symptoms for seasonal allergies", "Treatments for seasonal allergies"],
    ),
    ("Symptoms & treatments of flu", ["Symptoms of flu", "Treatments of flu"]),
    (
        "How can small businesses reduce energy costs and improve employee retention?",
        [
            "How can small businesses reduce energy costs?",
            "How can small businesses improve employee retention?",
        ],
    ),
    (
        "How do solar panels and wind turbines generate electricity?",
        ["How do solar panels generate electricity?", "How do wind turbines generate electricity?"],
    ),
    (
        "What is the capital of France and Germany?",
        ["What is the capital of France?", "What is the capital of Germany?"],
    ),
    (
        "How did unemployment change between 2010 and 2015 in Spain and Italy?",
        [
            "How did unemployment change between 2010 and 2015 in Spain?",
            "How did unemployment change between 2010 and 2015 in Italy?",
        ],
    ),
    (
        "Is the Android app available in Germany, Austria, and Switzerland?",
        [
            "Is the Android app available in Germany?",
            "Is the Android app available in Austria?",
            "Is the Android app available in Switzerland?",
        ],
    ),
    (
        "Should I visit Paris, Rome, or the Swiss Alps in summer?",
        [
            "Should I visit Paris in summer?",
            "Should I visit Rome in summer?",
            "Should I visit the Swiss Alps in summer?",
        ],
    ),
    (
        "Does the plan cover both dental and vision?",
        ["Does the plan cover dental?", "Does the plan cover vision?"],
    ),
    (
        "I want to know about the pricing plans, the free trial, and the cancellation process.",
        [
            "I want to know about the pricing plans",
            "I want to know about the free trial",
            "I want to know about the cancellation process",
        ],
    ),
    (
        "How do I install and configure nginx?",
        ["How do I install nginx?", "How do I configure nginx?"],
    ),
    ("How do I cook rice and beans?", ["How do I cook rice?", "How do I cook beans?"]),
    (
        "What were Apple's revenue and profit in 2023?",
        ["What were Apple's revenue in 2023?", "What were Apple's profit in 2023?"],
    ),
    ("Send my location to Paul and Ryan", ["Send my location to Paul", "Send my location to Ryan"]),
    (
        "Tell me about the refund policy and also the shipping times",
        ["Tell me about the refund policy", "Tell me about the shipping times"],
    ),
    (
        "What are fast and cheap options for hosting?",
        ["What are fast options for hosting?", "What are cheap options for hosting?"],
    ),
]

# Asks put in order: an item's marker ("First:", "Second:", "2.") or "After that," orders the
# asks, it names nothing the ask needs; a "which" that opens a relative clause is no question.
ORDERED: list[tuple[str, list[str] | None]] = [
    (
        "Which knob raises the ceiling on simultaneous requests? After that, how do I measure "
        "how many RSA operations per second OpenSSL can do?",
        [
            "Which knob raises the ceiling on simultaneous requests?",
            "How do I measure how many RSA operations per second OpenSSL can do?",
        ],
    ),
    (
        "Two unrelated questions. First: visitors get the plain default Not Found message; how "
        "do I show our own page instead? Second: how do I turn an error code into readable "
        "text from the shell?",
        [
            "Two unrelated questions. First: visitors get the plain default Not Found message; "
            "how do I show our own page instead?",
            "How do I turn an error code into readable text from the shell?",
        ],
    ),
    (
        "1. How do I rotate the logs? 2. How do I enable SSL for a virtual host?",
        ["How do I rotate the logs?", "How do I enable SSL for a virtual host?"],
    ),
    (
        "How do I list the loaded modules? Lastly, how do I check the configuration for "
        "syntax errors?",
        [
            "How do I list the loaded modules?",
            "How do I check the configuration for syntax errors?",
        ],
    ),
    # a wish after a question is an ask too; one about what was asked is not
    (
        "How do I get the key out as PEM files? After that I want to confirm the certificate "
        "chains up to our root.",
        [
            "How do I get the key out as PEM files?",
            "After that I want to confirm the certificate chains up to our root",
        ],
    ),
    ("How do I reset my password? I need to do it today.", None),
    ("How do I reset my password? I need to do that.", None),
    (
        "How do I get the key out? I want to check that the certificate chains up to our root.",
        ["How do I get the key out?", "I want to check that the certificate chains up to our root"],
    ),
    # numbered items inside a sentence: one stretch each, the words before them the scene
    (
        "Our app keeps its database in WAL mode: (1) which extra files sit next to it, (2) "
        "what command encrypts a copy with a password, and (3) how do I check the copy?",
        [
            "Our app keeps its database in WAL mode: which extra files sit next to it?",
            "Our app keeps its database in WAL mode: what command encrypts a copy with a "
            "password?",
            "Our app keeps its database in WAL mode: how do I check the copy?",
        ],
    ),
    ("Which one is better, a) or b)?", None),
    # after a question mark a new sentence starts, whatever its case
    (
        "how big can a single value be? openssl: which command lists the suites of a cipher "
        "string?",
        [
            "how big can a single value be?",
            "openssl: which command lists the suites of a cipher string?",
        ],
    ),
    # wishes are the asks when nothing else is asked, or only what points back at them
    (
        "I want a way to tell whether two copies of a database hold the same records. I also "
        "want to stamp every exported file with a keyed hash from the command line.",
        [
            "I want a way to tell whether two copies of a database hold the same records",
            "I also want to stamp every exported file with a keyed hash from the command line",
        ],
    ),
    (
        "We store tokens in SQLite. I need to produce the token bytes from a proper random "
        "source. I'd also like the comparison of tokens to take constant time. What should I "
        "use for each of those?",
        [
            "We store tokens in SQLite. I need to produce the token bytes from a proper random "
            "source",
            "We store tokens in SQLite. I'd also like the comparison of tokens to take constant "
            "time",
        ],
    ),
    (
        "I want to back up the database, then encrypt the copy. How do I do both?",
        ["I want to back up the database", "I want to encrypt the copy"],
    ),
    # a wish with a question of its own is the question's situation
    ("I want to speed up my queries. How do I create an index?", None),
    # a relative clause after its comma: no second question
    ("Which provider holds MD4, which now fails to load?", None),
    ("How do I contact the maintainer, who rarely answers email?", None),
]

# Single-intent questions, several with words that contain a signal word but are not it.
WHOLE = [
    "What is the refund policy?",
    "What is the standard warranty for Android phones?",
    "How do I understand brand guidelines at Anderson Consulting?",
    "Is this versatile canvas bag waterproof?",
    "Which brand of standard Android phone has the best battery?",
    "How long does shipping take to Anderson, Indiana?",
    "What is the distance between Paris and Rome?",
    "What are the pros and cons of remote work?",
    "What are the terms and conditions of the refund policy?",
    "Can I pay by card or cash?",
    "Is Python faster than Java?",
    "What are the health effects of air pollution?",
    "Does the brandname standard plan include Android support and?",
    # commands and statements whose "and" joins actions or clauses, not items
    "Take bread off my shopping list and add milk",
    "Text my doctor and tell him it happened again",
    "Go ahead and cancel the reservation",
    "I was at the store buying shoes and my card got declined",
    "I'm travelling to Spain soon and want to inform my bank",
    "What should I do if I'm at the airport and my luggage is not here?",
    "What is the calorie count of a peanut butter and jelly sandwich?",
    "Send 50 dollars between my checking and savings accounts",
    "What is your favorite, cats or dogs?",
    "My card was declined; why?",
    "Add twelve and twelve",
    "I upgraded to version 2. How do I enable SSL?",
    # a comparison in parentheses is an aside naming kinds, not what the question compares
    "How do I find out which constraint failed (unique vs. foreign key) and get its message?",
]

TABLE = (
    COMPARISONS
    + [(q, [q]) for q in NAMED_COMPARISONS]
    + COORDINATED
    + ENUMERATIONS
    + [(q, subs or [q]) for q, subs in ORDERED]
    + [(q, [q]) for q in WHOLE]
)


def test_the_table_is_large_and_varied() -> None:
    assert len(TABLE) >= 40
    assert len({q for q, _ in TABLE}) == len(TABLE)


@pytest.mark.parametrize(("query", "expected"), TABLE, ids=[q[:60] for q, _ in TABLE])
async def test_sub_queries(query: str, expected: list[str]) -> None:
    assert await HeuristicDecomposer().transform(query) == expected


async def test_is_a_query_transformer_that_never_awaits() -> None:
    decomposer = HeuristicDecomposer()
    assert isinstance(decomposer, QueryTransformer)
    assert decomposer.awaits is False


async def test_simple_question_is_returned_stripped() -> None:
    assert await HeuristicDecomposer().transform("  What is the refund policy?\n") == [
        "What is the refund policy?"
    ]


@pytest.mark.parametrize("blank", ["", "   ", "\n\t"])
async def test_blank_query_gives_no_sub_query(blank: str) -> None:
    assert await HeuristicDecomposer().transform(blank) == []


@pytest.mark.parametrize("noise", ["and", "vs", "compare", "???", "Apples, oranges", "a, b: c"])
async def test_fragments_without_structure_stay_whole(noise: str) -> None:
    assert await HeuristicDecomposer().transform(noise) == [noise]


async def test_whitespace_inside_a_decomposed_query_is_normalised() -> None:
    subs = await HeuristicDecomposer().transform("Python   vs\tJava  for web development")
    assert subs == [
        "Python for web development",
        "Java for web development",
        "Python vs Java for web development",
    ]


async def test_lower_case_query_keeps_lower_case() -> None:
    subs = await HeuristicDecomposer().transform("pandas vs polars for dataframes")
    assert subs == [
        "pandas for dataframes",
        "polars for dataframes",
        "pandas vs polars for dataframes",
    ]


async def test_include_comparison_false_drops_the_comparison_query() -> None:
    decomposer = HeuristicDecomposer(include_comparison=False)
    assert await decomposer.transform("Python vs Java for web development") == [
        "Python for web development",
        "Java for web development",
    ]


async def test_without_the_comparison_query_no_word_is_lost() -> None:
    decomposer = HeuristicDecomposer(include_comparison=False)
    # "TV" is in no item phrase: the comparison query is kept so that it is not lost
    question = "Which TV has better picture quality, the LG C3 or the Samsung S90C?"
    assert await decomposer.transform(question) == [
        "The LG C3 has better picture quality",
        "The Samsung S90C has better picture quality",
        question,
    ]


async def test_a_capped_comparison_keeps_its_comparison_query() -> None:
    decomposer = HeuristicDecomposer(max_sub_queries=2)
    assert await decomposer.transform("React vs Vue vs Angular for large apps") == [
        "React for large apps",
        "React vs Vue vs Angular for large apps",
    ]


async def test_max_sub_queries_caps_enumerations_in_order() -> None:
    decomposer = HeuristicDecomposer(max_sub_queries=3)
    assert await decomposer.transform(
        "What are the causes and effects of inflation and unemployment?"
    ) == [
        "What are the causes of inflation?",
        "What are the causes of unemployment?",
        "What are the effects of inflation?",
    ]


async def test_max_sub_queries_one_keeps_only_the_comparison() -> None:
    decomposer = HeuristicDecomposer(max_sub_queries=1)
    assert await decomposer.transform("Python vs Java for web development") == [
        "Python vs Java for web development"
    ]


async def test_duplicates_are_dropped() -> None:
    subs = await HeuristicDecomposer().transform("What is Docker? What is Docker?")
    assert subs == ["What is Docker?"]


def test_sync_decompose_matches_transform() -> None:
    decomposer = HeuristicDecomposer()
    assert decomposer.decompose("What is Docker and how does it work?") == [
        "What is Docker?",
        "How does Docker work?",
    ]


async def test_non_string_query_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="query must be a string"):
        await HeuristicDecomposer().transform(42)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"max_sub_queries": 0}, "max_sub_queries must be >= 1"),
        ({"max_sub_queries": -3}, "max_sub_queries must be >= 1"),
        ({"max_sub_queries": 2.5}, "max_sub_queries must be an integer"),
        ({"max_sub_queries": True}, "max_sub_queries must be an integer"),
        ({"include_comparison": "yes"}, "include_comparison must be a bool"),
    ],
)
def test_bad_parameters_are_configuration_errors(kwargs: dict, message: str) -> None:
    with pytest.raises(ConfigurationError, match=message) as info:
        HeuristicDecomposer(**kwargs)
    assert isinstance(info.value, ValueError)


def test_config_round_trip_and_identity() -> None:
    decomposer = HeuristicDecomposer(max_sub_queries=3, include_comparison=False)
    assert decomposer.step_id == "ragloom-rules/heuristic"
    assert dict(decomposer.config()) == {"max_sub_queries": 3, "include_comparison": False}
    rebuilt = HeuristicDecomposer(**decomposer.config())
    assert rebuilt.config() == decomposer.config()
    assert rebuilt.config_hash == decomposer.config_hash
    assert HeuristicDecomposer().config_hash != decomposer.config_hash


_words = st.sampled_from(
    "what is how does the a and & or vs versus compare difference between of in on for "
    "Python Java Germany 2020 since , ; : ? . also which better standard Android brand "
    "it they cats dogs New York iPhone 15 with to differ".split()
)


@settings(max_examples=150, deadline=None)
@given(st.lists(_words, max_size=25).map(" ".join), st.integers(1, 6), st.booleans())
def test_any_query_gives_clean_capped_unique_sub_queries(
    query: str, cap: int, include_comparison: bool
) -> None:
    decomposer = HeuristicDecomposer(max_sub_queries=cap, include_comparison=include_comparison)
    subs = decomposer.decompose(query)
    if not query.strip():
        assert subs == []
        return
    assert 1 <= len(subs) <= cap
    assert len(set(subs)) == len(subs)
    for sub in subs:
        assert sub == sub.strip() and sub
    assert subs == decomposer.decompose(query)  # deterministic


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=120))
def test_arbitrary_text_never_raises(query: str) -> None:
    subs = HeuristicDecomposer().decompose(query)
    assert all(isinstance(s, str) and s.strip() for s in subs)
    assert (subs == []) == (not query.strip())
