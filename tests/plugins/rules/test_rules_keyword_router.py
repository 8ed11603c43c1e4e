"""KeywordRouter: scoring, default route, unknown-route protection, ties, config."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from ragloom import ConfigurationError, RouteDecision, Router, RoutingError
from ragloom_rules import KeywordRoute, KeywordRouter

pytestmark = pytest.mark.anyio

ROUTES = [
    {"name": "billing", "keywords": ["invoice", "refund", "credit card"], "patterns": [r"\$\d+"]},
    {"name": "tech", "keywords": ["error", "crash", "log in", "password"]},
    {"name": "policies", "keywords": ["policy", "return policy", "privacy"]},
    {"name": "general", "description": "catch-all"},
]


def router(**overrides: object) -> KeywordRouter:
    kwargs: dict = {"routes": ROUTES, "default_route": "general", **overrides}
    return KeywordRouter(**kwargs)


async def test_is_a_router_over_the_route_names() -> None:
    r = router()
    assert isinstance(r, Router)
    assert r.awaits is False
    assert r.valid_routes == ("billing", "tech", "policies", "general")
    assert r.default_route == "general"
    assert [route.name for route in r.routes] == list(r.valid_routes)
    assert all(isinstance(route, KeywordRoute) for route in r.routes)


async def test_best_route_with_saturating_score() -> None:
    decision = await router().decide("Where is my invoice?")
    assert decision == RouteDecision(route="billing", score=0.5)
    decision = await router().decide("Refund to my credit card for invoice 7")
    # evidence: refund (1) + credit card (2 words) + invoice (1) = 4 -> 4 / 5
    assert decision.route == "billing"
    assert decision.score == pytest.approx(0.8)
    assert decision.fallback_reason is None


async def test_runner_up_is_reported() -> None:
    decision = await router().decide("refund policy for an invoice error")
    assert decision.route == "billing"
    assert decision.score == pytest.approx(2 / 3)
    assert decision.runner_up in ("tech", "policies")
    assert decision.runner_up_score == pytest.approx(0.5)


async def test_no_match_falls_back_to_the_default_route_with_a_reason() -> None:
    decision = await router().decide("What is the weather like?")
    assert decision.route == "general"
    assert decision.fallback_reason == "no keyword matched"
    assert decision.score == 0.0
    assert decision.is_fallback


async def test_empty_query_falls_back() -> None:
    assert (await router().decide("")).fallback_reason == "no keyword matched"


async def test_no_match_without_default_route_raises_routing_error() -> None:
    r = KeywordRouter(ROUTES[:3])
    assert r.default_route is None
    with pytest.raises(RoutingError, match="no keyword matched"):
        await r.decide("What is the weather like?")


async def test_tie_goes_to_the_route_declared_first_and_shows_as_equal_runner_up() -> None:
    decision = await router().decide("password reset invoice")
    assert decision.route == "billing"  # declared before tech
    assert decision.fallback_reason is None
    assert decision.runner_up == "tech"
    assert decision.runner_up_score == decision.score == pytest.approx(0.5)
    reordered = KeywordRouter([ROUTES[1], ROUTES[0], ROUTES[3]], default_route="general")
    assert (await reordered.decide("password reset invoice")).route == "tech"


@pytest.mark.parametrize(
    "query",
    ["INVOICE?", "my Invoice!!", "invoices", "(invoice)", "the invoice's date", "Invoice-related"],
)
async def test_case_punctuation_and_plural_insensitive(query: str) -> None:
    assert (await router().decide(query)).route == "billing"


@pytest.mark.parametrize(
    "query",
    ["standard plans", "Android brand", "errors-free? no: terror", "policyholder", "erroneous"],
)
async def test_keywords_match_whole_words_only(query: str) -> None:
    r = KeywordRouter(
        [
            {"name": "a", "keywords": ["and", "error", "policy"]},
            {"name": "fallback"},
        ],
        default_route="fallback",
    )
    decision = await r.decide(query)
    if query.startswith("errors"):  # "errors" folds to "error": a whole-word plural match
        assert decision.route == "a"
    else:
        assert decision.route == "fallback", query


async def test_multi_word_keywords_match_as_phrases_only() -> None:
    r = router()
    assert (await r.decide("Can't log-in today")).route == "tech"
    assert (await r.decide("the log is in the folder")).route == "general"
    assert (await r.decide("card credit")).route == "general"
    # a phrase counts its words: "return policy" (2) + "policy" (1) beats one tech keyword
    decision = await r.decide("return policy error")
    assert decision.route == "policies"
    assert decision.score == pytest.approx(0.75)


@pytest.mark.parametrize(
    ("keyword", "query"),
    [
        ("policy", "policies"),
        ("policies", "policy"),
        ("tax", "taxes"),
        ("cache", "caches"),
        ("class", "classes"),
        ("watch", "watches"),
        ("news", "news"),
        ("status", "status"),
    ],
)
async def test_simple_plural_folding(keyword: str, query: str) -> None:
    r = KeywordRouter([{"name": "x", "keywords": [keyword]}, {"name": "d"}], default_route="d")
    assert (await r.decide(f"about {query} today")).route == "x"


async def test_news_does_not_match_new() -> None:
    r = KeywordRouter([{"name": "x", "keywords": ["news"]}, {"name": "d"}], default_route="d")
    assert (await r.decide("a new phone")).route == "d"


async def test_regex_patterns_vote_case_insensitively() -> None:
    r = KeywordRouter(
        [
            {"name": "orders", "patterns": [r"\border\s+#?\d{4,}\b"]},
            {"name": "other", "keywords": ["order"]},
            {"name": "d"},
        ],
        default_route="d",
        pattern_weight=1.0,
    )
    decision = await r.decide("Where is ORDER #12345?")
    # orders: 1 pattern; other: the keyword "order": a tie, won by the first declared
    assert decision.route == "orders"
    assert decision.runner_up == "other"
    assert (await r.decide("order 12")).route == "other"


WEAK = [
    {"name": "news", "keywords": ["outage", "announcement"], "patterns": [r"\b(?:19|20)\d{2}\b"]},
    {"name": "billing", "keywords": ["invoice", "charged"], "patterns": [r"[$€£]\s?\d"]},
    {"name": "general"},
]


@pytest.mark.parametrize(
    ("query", "weak_route"),
    [
        ("How has unemployment changed since 1990?", "news"),
        ("Which laptop under $1000 is best for gaming?", "billing"),
    ],
)
async def test_a_lone_pattern_is_weak_evidence_and_falls_back(query: str, weak_route: str) -> None:
    decision = await KeywordRouter(WEAK, default_route="general").decide(query)
    assert decision.route == "general"
    assert decision.fallback_reason == "low confidence"
    # the weak candidate is reported, with its score (a pattern counts half a keyword)
    assert decision.runner_up == weak_route
    assert decision.score == decision.runner_up_score == pytest.approx(1 / 3)


async def test_a_pattern_with_a_keyword_or_a_second_pattern_decides() -> None:
    router = KeywordRouter(WEAK, default_route="general")
    decision = await router.decide("Why was I charged $20 twice?")
    assert (decision.route, decision.fallback_reason) == ("billing", None)
    assert decision.score == pytest.approx(1.5 / 2.5)
    assert (await router.decide("The 2019 and 2020 outage")).route == "news"


async def test_min_evidence_and_pattern_weight_are_settings() -> None:
    eager = KeywordRouter(WEAK, default_route="general", min_evidence=0)
    assert (await eager.decide("since 1990")).route == "news"
    strict = KeywordRouter(WEAK, default_route="general", min_evidence=2)
    assert (await strict.decide("my invoice")).fallback_reason == "low confidence"
    assert (await strict.decide("my invoice was charged twice")).route == "billing"
    full = KeywordRouter(WEAK, default_route="general", pattern_weight=1.0)
    assert (await full.decide("since 1990")).route == "news"


async def test_weak_evidence_without_a_default_route_still_decides() -> None:
    router = KeywordRouter(WEAK[:2])
    decision = await router.decide("since 1990")
    assert (decision.route, decision.fallback_reason) == ("news", None)
    assert decision.score == pytest.approx(1 / 3)


async def test_weights_scale_raw_scores() -> None:
    routes = [
        {"name": "a", "keywords": ["alpha", "beta"]},
        {"name": "b", "keywords": ["gamma"], "weight": 3.0},
        {"name": "d"},
    ]
    r = KeywordRouter(routes, default_route="d")
    decision = await r.decide("alpha beta gamma")
    assert decision.route == "b"
    assert decision.score == pytest.approx(3 / 4)
    assert decision.runner_up == "a"
    assert decision.runner_up_score == pytest.approx(2 / 3)
    assert r.scores("alpha beta gamma") == pytest.approx({"a": 2 / 3, "b": 0.75, "d": 0.0})


async def test_repeated_keyword_counts_once() -> None:
    assert router().scores("invoice invoice invoice")["billing"] == pytest.approx(0.5)


async def test_routes_from_code_and_from_dicts_are_equal() -> None:
    from_code = KeywordRouter(
        [KeywordRoute(name="billing", keywords=["invoice"]), KeywordRoute(name="general")],
        default_route="general",
    )
    from_dicts = KeywordRouter(
        [{"name": "billing", "keywords": ["invoice"]}, {"name": "general"}],
        default_route="general",
    )
    assert from_code.config() == from_dicts.config()
    # Two spellings of the same routes are the same router; a pipeline file rebuilt from
    # either keeps one cache identity (the identity covers the arguments as given).
    rebuilt = [KeywordRouter(**r.config()) for r in (from_code, from_dicts)]
    assert rebuilt[0].config_hash == rebuilt[1].config_hash


def test_config_round_trip_through_json() -> None:
    r = router()
    assert r.step_id == "ragloom-rules/keyword"
    data = json.loads(json.dumps(r.config()))
    rebuilt = KeywordRouter(**data)
    assert rebuilt.config() == r.config()
    assert KeywordRouter(**json.loads(json.dumps(rebuilt.config()))).config_hash == (
        rebuilt.config_hash
    )
    assert rebuilt.valid_routes == r.valid_routes
    assert data["default_route"] == "general"
    assert (data["min_evidence"], data["pattern_weight"]) == (1.0, 0.5)
    assert data["routes"][0] == {
        "name": "billing",
        "description": "",
        "keywords": ["invoice", "refund", "credit card"],
        "patterns": [r"\$\d+"],
        "weight": 1.0,
    }


def test_config_hash_changes_with_routes() -> None:
    other = [dict(ROUTES[0], weight=2.0), *ROUTES[1:]]
    assert router().config_hash != router(routes=other).config_hash
    keyed = ROUTES[:3]
    assert (
        KeywordRouter(keyed, default_route="billing").config_hash
        != KeywordRouter(keyed, default_route="tech").config_hash
    )


@pytest.mark.parametrize("suffix", [".json", ".toml"])
async def test_from_file(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"routes{suffix}"
    if suffix == ".json":
        path.write_text(json.dumps({"routes": ROUTES, "default_route": "general"}))
    else:
        path.write_text(
            'default_route = "general"\n'
            '[[routes]]\nname = "billing"\nkeywords = ["invoice"]\n'
            '[[routes]]\nname = "general"\n'
        )
    r = KeywordRouter.from_file(path)
    assert (await r.decide("my invoice")).route == "billing"
    assert r.default_route == "general"


def test_from_file_errors_name_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ConfigurationError, match="bad.json"):
        KeywordRouter.from_file(bad)
    wrong = tmp_path / "wrong.json"
    wrong.write_text(json.dumps({"routes": ROUTES, "extra": 1}))
    with pytest.raises(ConfigurationError, match="unknown keys"):
        KeywordRouter.from_file(wrong)


@pytest.mark.parametrize(
    ("routes", "default", "message"),
    [
        (ROUTES, "sports", r"default_route 'sports' is not one of the routes"),
        ([], None, "routes must not be empty"),
        ([ROUTES[0], ROUTES[0]], None, "duplicate route name 'billing'"),
        (
            [{"name": "x", "patterns": ["(unclosed"]}],
            None,
            r"route 'x': invalid pattern '\(unclosed'",
        ),
        ([{"name": "x", "keywords": ["?!"]}], None, r"route 'x': keyword '\?!' has no letters"),
        (
            [{"name": "x", "keywords": ["a"], "weight": 0}],
            None,
            r"route 'x' \(routes\[0\]\) is invalid: weight",
        ),
        ([{"name": "x", "keywords": ["a"], "weight": -1}], None, "weight"),
        ([{"name": "x", "keywords": ["a"], "weight": float("nan")}], None, "weight"),
        ([{"name": "", "keywords": ["a"]}], None, "is invalid: name"),
        ([{"name": "  ", "keywords": ["a"]}], None, "is invalid: name"),
        ([{"name": "x", "keywords": ["a"], "colour": "red"}], None, "colour"),
        ([{"name": "x"}, {"name": "y", "keywords": ["a"]}], "y", "route 'x' has no keywords"),
        (["billing"], None, r"routes\[0\] must be a KeywordRoute or a mapping"),
        ("billing", None, "routes must be a list"),
    ],
)
def test_bad_configurations(routes: object, default: str | None, message: str) -> None:
    with pytest.raises(ConfigurationError, match=message) as info:
        KeywordRouter(routes, default_route=default)  # type: ignore[arg-type]
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"min_evidence": -1}, "min_evidence must be a finite number >= 0"),
        ({"min_evidence": float("nan")}, "min_evidence"),
        ({"min_evidence": True}, "min_evidence"),
        ({"pattern_weight": 0}, "pattern_weight must be a finite number > 0"),
        ({"pattern_weight": "1"}, "pattern_weight"),
    ],
)
def test_bad_evidence_settings(kwargs: dict, message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        KeywordRouter(ROUTES, default_route="general", **kwargs)


async def test_non_string_query_becomes_a_fallback_with_the_error() -> None:
    decision = await router().decide(None)  # type: ignore[arg-type]
    assert decision.route == "general"
    assert decision.fallback_reason is not None
    assert "query must be a string" in decision.fallback_reason
