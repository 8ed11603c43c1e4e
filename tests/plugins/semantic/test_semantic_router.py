"""SemanticRouter: decisions with the bundled model, thresholds, fallbacks, fit, save/load,
batch routing, configs, and the router contract."""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from pathlib import Path

import anyio
import numpy as np
import pytest
from ragloom import (
    ConfigurationError,
    MultiQueryRoutingPipeline,
    QueryTransformer,
    Registry,
    RouteDecision,
    RoutingError,
)
from ragloom.testing import RouterContract
from ragloom_semantic import SemanticRoute, SemanticRouter
from semantic_support import IN_SCOPE, ROUTES, HashingEncoder

pytestmark = pytest.mark.anyio

OUT_OF_SCOPE = [
    "who won the football match last night",
    "tell me a joke about cats",
    "what is the capital of australia",
    "how many moons does jupiter have",
]
SCORINGS = ["linear", "knn", "centroid", "hybrid"]


@pytest.fixture(scope="module")
def routers() -> dict[str, SemanticRouter]:
    """One warmed router per scoring, over the bundled model (built once: encoding costs)."""
    out = {s: SemanticRouter(ROUTES, "general", scoring=s) for s in SCORINGS}
    for router in out.values():
        router.warm_up()
    return out


# -- decisions ---------------------------------------------------------------------------------


@pytest.mark.parametrize("scoring", SCORINGS)
def test_in_scope_queries_go_to_their_route_with_runner_up(routers, scoring) -> None:
    router = routers[scoring]
    for route, queries in IN_SCOPE.items():
        for decision in router.route_many(queries):
            assert decision.route == route, (scoring, decision)
            assert decision.fallback_reason is None
            assert decision.runner_up in {"weather", "billing", "cooking"} - {route}
            assert decision.score is not None and decision.runner_up_score is not None
            if scoring != "linear":  # the head may pick a route with a lower k-NN score
                assert decision.score >= decision.runner_up_score


async def test_route_and_route_many_agree(routers) -> None:
    router = routers["linear"]
    queries = [q for qs in IN_SCOPE.values() for q in qs] + OUT_OF_SCOPE
    one_by_one = [await router.route(q) for q in queries]
    assert one_by_one == router.route_many(queries)
    assert await router.aroute_many(queries) == one_by_one
    assert [router.route_sync(q) for q in queries] == one_by_one
    assert router.route_many([]) == []


def test_linear_scores_are_similarities_discounted_by_the_head_and_word_coverage(
    routers,
) -> None:
    discounted = routers["linear"]  # the default confidence
    covered = SemanticRouter(ROUTES, "general", confidence="covered")
    plain = SemanticRouter(ROUTES, "general", confidence="similarity")
    queries = [q for qs in IN_SCOPE.values() for q in qs] + OUT_OF_SCOPE
    for query, c, d, s in zip(
        queries, covered.route_many(queries), discounted.route_many(queries),
        plain.route_many(queries), strict=True,
    ):
        assert c.route == d.route == s.route  # the same route: only the score differs
        probability = discounted.scores(query)[d.route]
        assert d.score == pytest.approx(s.score * probability**0.5, rel=1e-5)
        assert c.score <= d.score <= s.score
    # a query made of words the route's examples use keeps the discounted score; one whose
    # subject no example of the route mentions loses the share of its words' weight
    known, unknown = covered.route_many(["will it rain tomorrow", "will it rain on jupiter"])
    known_d, unknown_d = discounted.route_many(["will it rain tomorrow", "will it rain on jupiter"])
    assert known.route == unknown.route == "weather"
    assert known.score == pytest.approx(known_d.score, rel=1e-5)
    assert unknown.score < 0.9 * unknown_d.score
    assert covered.config()["confidence"] == "covered"
    assert plain.config()["confidence"] == "similarity"
    assert discounted.config()["confidence"] == "discounted"
    with pytest.raises(ConfigurationError, match="confidence must be one of"):
        SemanticRouter(ROUTES, confidence="sure")  # type: ignore[arg-type]


def test_global_threshold_sends_unrelated_queries_to_the_default(routers) -> None:
    router = SemanticRouter(ROUTES, "general", threshold=0.45)
    in_scope = [q for qs in IN_SCOPE.values() for q in qs]
    assert all(d.fallback_reason is None for d in router.route_many(in_scope))
    for query, decision in zip(OUT_OF_SCOPE, router.route_many(OUT_OF_SCOPE), strict=True):
        assert decision.route == "general", query
        assert decision.fallback_reason == "below threshold"
        # the rejected best route is kept as the runner-up, with the score that failed
        assert decision.runner_up in {"weather", "billing", "cooking"}
        assert decision.score == decision.runner_up_score < 0.45


def test_per_route_threshold_overrides_the_global_one() -> None:
    strict = [dict(r, threshold=0.99) if r["name"] == "weather" else r for r in ROUTES]
    router = SemanticRouter(strict, "general", threshold=0.1)
    weather, billing = router.route_many(
        ["will it rain this weekend", "please refund the payment you took yesterday"]
    )
    assert weather.route == "general" and weather.fallback_reason == "below threshold"
    assert weather.runner_up == "weather"
    assert billing.route == "billing" and billing.fallback_reason is None


def test_empty_queries_fall_back_and_without_default_raise() -> None:
    router = SemanticRouter(ROUTES, "general", encoder=HashingEncoder())
    for query in ("", "   ", "?!"):
        decision = router.route_sync(query)
        assert decision.route == "general" and decision.fallback_reason == "empty query"
    strict = SemanticRouter(ROUTES, threshold=0.99, encoder=HashingEncoder())
    with pytest.raises(RoutingError, match="no default route"):
        strict.route_sync("")
    with pytest.raises(RoutingError):
        strict.route_sync("will it rain")  # below threshold, nowhere to go


def test_bad_queries_raise_type_errors() -> None:
    router = SemanticRouter(ROUTES, "general", encoder=HashingEncoder())
    with pytest.raises(TypeError):
        router.route_many("a single string")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        router.route_many([b"bytes"])  # type: ignore[list-item]


def test_valid_routes_include_a_new_default_name() -> None:
    router = SemanticRouter(ROUTES, "general", encoder=HashingEncoder())
    assert router.valid_routes == ("weather", "billing", "cooking", "general")
    inside = SemanticRouter([*ROUTES, {"name": "other"}], "other", encoder=HashingEncoder())
    assert inside.valid_routes == ("weather", "billing", "cooking", "other")
    assert inside.default_route == "other"


def test_description_only_routes_and_use_descriptions() -> None:
    routes = [
        {"name": "pets", "description": "dogs cats pets"},
        {"name": "cars", "description": "cars engines driving"},
    ]
    router = SemanticRouter(routes, scoring="knn", encoder=HashingEncoder())
    assert router.route_sync("my dogs and cats").route == "pets"
    with pytest.raises(ConfigurationError, match="could never be chosen"):
        SemanticRouter(routes, use_descriptions=False, encoder=HashingEncoder())


def test_single_route_router() -> None:
    router = SemanticRouter([ROUTES[0]], "general", threshold=0.3, encoder=HashingEncoder())
    decision = router.route_sync("will it rain this afternoon")
    assert decision.route == "weather" and decision.runner_up is None
    assert router.route_sync("zzz qqq").route == "general"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"routes": []}, "routes must not be empty"),
        ({"routes": {"name": "x"}}, "routes must be a list"),
        ({"routes": [{"name": "a", "examples": ["x"]}] * 2}, "duplicate route names"),
        ({"routes": [{"name": " ", "examples": ["x"]}]}, "name"),
        ({"routes": [{"name": "a", "examples": ["  "]}]}, "example 0 is blank"),
        ({"routes": [{"name": "a", "examples": ["x"], "extra": 1}]}, "extra"),
        ({"routes": [{"name": "a"}]}, "could never be chosen"),
        ({"routes": ROUTES, "scoring": "magic"}, "scoring"),
        ({"routes": ROUTES, "top_k": 0}, "top_k"),
        ({"routes": ROUTES, "examples_per_prototype": 0}, "examples_per_prototype"),
        ({"routes": ROUTES, "threshold": float("nan")}, "threshold"),
        ({"routes": ROUTES, "threshold": "high"}, "threshold"),
        ({"routes": ROUTES, "default_route": ""}, "default_route"),
        ({"routes": ROUTES, "model_path": "/nonexistent/model"}, "not a local folder"),
        ({"routes": [1]}, r"routes\[0\] must be"),
    ],
)
def test_bad_parameters_raise_configuration_errors(kwargs, message) -> None:
    with pytest.raises(ConfigurationError, match=message):
        SemanticRouter(**kwargs)


def test_model_path_that_is_not_a_model_folder(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(ConfigurationError, match="missing tokenizer.json, model.safetensors"):
        SemanticRouter(ROUTES, model_path=str(tmp_path))


def test_other_model_folder_by_path(tmp_path: Path) -> None:
    from ragloom_semantic import bundled_model_path

    copy = tmp_path / "my-model"
    copy.mkdir()
    for item in bundled_model_path().iterdir():
        (copy / item.name).write_bytes(item.read_bytes())
    router = SemanticRouter(ROUTES, "general", model_path=str(copy))
    assert router.config()["model_path"] == str(copy)
    assert router.encoder.name == str(copy.resolve())
    assert router.route_sync("will it rain this afternoon").route == "weather"


# -- routes from files -------------------------------------------------------------------------


def test_routes_from_json_toml_and_yaml_files(tmp_path: Path) -> None:
    data = {"routes": ROUTES, "default_route": "general", "threshold": 0.2}
    (tmp_path / "routes.json").write_text(json.dumps(data))
    toml_lines = ['default_route = "general"', "threshold = 0.2"]
    for route in ROUTES:
        toml_lines += [
            "[[routes]]",
            f'name = "{route["name"]}"',
            f'description = "{route["description"]}"',
            "examples = [" + ", ".join(json.dumps(e) for e in route["examples"]) + "]",
        ]
    (tmp_path / "routes.toml").write_text("\n".join(toml_lines))
    yaml = pytest.importorskip("yaml")
    (tmp_path / "routes.yaml").write_text(yaml.safe_dump(data))
    encoder = HashingEncoder()
    built = [
        SemanticRouter(tmp_path / name, encoder=encoder)  # the constructor reads route files
        for name in ("routes.json", "routes.toml", "routes.yaml")
    ]
    configs = [b.config() for b in built]
    assert configs[0] == configs[1] == configs[2]
    assert configs[0]["default_route"] == "general" and configs[0]["threshold"] == 0.2
    # a bare list of routes, and the path given as a string
    (tmp_path / "list.json").write_text(json.dumps(ROUTES))
    assert SemanticRouter(str(tmp_path / "list.json"), encoder=encoder).valid_routes == (
        "weather", "billing", "cooking",
    )


def test_bad_routes_files(tmp_path: Path) -> None:
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(ConfigurationError, match="cannot parse routes"):
        SemanticRouter(tmp_path / "bad.json")
    (tmp_path / "keys.json").write_text(json.dumps({"routes": ROUTES, "colour": "red"}))
    with pytest.raises(ConfigurationError, match="unknown keys 'colour'"):
        SemanticRouter(tmp_path / "keys.json")
    with pytest.raises(ConfigurationError, match="cannot read routes file"):
        SemanticRouter(tmp_path / "missing.json")


# -- fit -----------------------------------------------------------------------------------------


def test_fit_learns_a_threshold_that_separates_out_of_scope() -> None:
    router = SemanticRouter(ROUTES, "general", oos_label="oos")
    assert router.threshold is None
    utterances = [q for qs in IN_SCOPE.values() for q in qs] + OUT_OF_SCOPE
    labels: list[str | None] = [r for r, qs in IN_SCOPE.items() for _ in qs]
    labels += [None, "oos", "general", None]  # three spellings of out-of-scope
    before = router.config_hash
    assert router.fit(utterances, labels) is router
    assert router.threshold is not None and router.config_hash != before
    decisions = router.route_many(utterances)
    assert [d.route for d in decisions] == [label or "general" for label in labels[:6]] + [
        "general"
    ] * 4
    assert all(d.fallback_reason == "below threshold" for d in decisions[6:])
    # the default holds in-scope accuracy: the threshold keeps the lowest in-scope score, and
    # rejects every out-of-scope one; the class-balanced criterion cuts between the two
    def raw() -> list[float]:  # the scores without a threshold, on the score fit chose
        plain = SemanticRouter(ROUTES, "general", confidence=router.confidence)  # type: ignore[arg-type]
        return [d.score for d in plain.route_many(utterances)]

    assert router.calibration is not None and router.calibration.criterion == "min_accuracy=0.9"
    scores = raw()
    assert max(scores[6:]) < router.threshold == min(scores[:6])
    router.fit(utterances, labels, criterion="balanced")
    scores = raw()
    assert max(scores[6:]) < router.threshold < min(scores[:6])


def test_fit_with_min_recall_and_per_route() -> None:
    encoder = HashingEncoder()
    router = SemanticRouter(ROUTES, "general", scoring="knn", encoder=encoder)
    utterances = [q for qs in IN_SCOPE.values() for q in qs]
    labels = [r for r, qs in IN_SCOPE.items() for _ in qs]
    router.fit(utterances, labels, min_recall=1.0)
    scores = [d.score for d in SemanticRouter(ROUTES, "general", scoring="knn",
                                              encoder=encoder).route_many(utterances)]
    assert router.threshold == pytest.approx(min(scores))
    assert all(d.fallback_reason is None for d in router.route_many(utterances))

    per_route = SemanticRouter(ROUTES, "general", scoring="knn", encoder=encoder)
    oos = ["will the boil water notice end", "my refund of rain", "bread and weather",
           "credit the weather invoice"]
    per_route.fit(utterances + oos, labels + [None] * 4, per_route=True, min_route_examples=1)
    learned = {r.name: r.threshold for r in per_route.routes}
    assert any(t is not None for t in learned.values())
    assert per_route.config()["routes"][0]["threshold"] == learned["weather"]


# A labelled set for fit: many in-scope utterances, a few out-of-scope ones, some of which
# share words with the routes (so that no threshold separates them perfectly).
FIT_IN = [
    ("will it rain tomorrow", "weather"), ("how cold is it tonight", "weather"),
    ("is it sunny at the weekend", "weather"), ("will it snow this afternoon", "weather"),
    ("what's the weather like", "weather"), ("how hot will it be tomorrow", "weather"),
    ("I was charged twice", "billing"), ("how do I get a refund", "billing"),
    ("where is my invoice", "billing"), ("update my credit card", "billing"),
    ("refund my subscription", "billing"), ("why was my card charged", "billing"),
    ("recipe for pasta", "cooking"), ("how long to boil an egg", "cooking"),
    ("how do I bake bread", "cooking"), ("what can I cook with rice", "cooking"),
    ("tomato sauce recipe", "cooking"), ("cook chicken at home", "cooking"),
]
FIT_OOS = ["tell me a joke", "who won the match", "how do I get to the airport",
           "is it a good time to buy a house"]


def fitted(**kwargs: object) -> SemanticRouter:
    router = SemanticRouter(ROUTES, "general", scoring="knn", encoder=HashingEncoder())
    utterances = [u for u, _ in FIT_IN] + FIT_OOS
    labels: list[str | None] = [r for _, r in FIT_IN] + [None] * len(FIT_OOS)
    return router.fit(utterances, labels, **kwargs)


def test_fit_keeps_a_calibration_that_matches_the_decisions() -> None:
    router = fitted(criterion="balanced")
    calibration = router.calibration
    assert calibration is not None and calibration.criterion == "balanced"
    assert calibration.threshold == router.threshold
    assert (calibration.in_scope, calibration.out_of_scope) == (len(FIT_IN), len(FIT_OOS))
    decisions = router.route_many([u for u, _ in FIT_IN] + FIT_OOS)
    right = sum(d.route == r for d, (_, r) in zip(decisions, FIT_IN, strict=False))
    rejected = sum(d.is_fallback for d in decisions[len(FIT_IN) :])
    assert calibration.chosen.in_scope_accuracy == pytest.approx(right / len(FIT_IN))
    assert calibration.chosen.oos_rejection == pytest.approx(rejected / len(FIT_OOS))
    # the curve: one point per rejection level, thresholds rising, accuracy falling
    curve = calibration.curve
    assert [round(p.oos_rejection * 20) >= i for i, p in enumerate(curve)] == [True] * 21
    assert curve[0].threshold is None and curve[0].oos_rejection == 0
    cuts = [p.threshold for p in curve[1:]]
    assert cuts == sorted(cuts)
    accuracy = [p.in_scope_accuracy for p in curve]
    assert accuracy == sorted(accuracy, reverse=True)
    table = calibration.table()
    assert "<- chosen" in table and "criterion: balanced" in table


def test_balanced_rejects_at_least_as_much_as_most_right_outcomes() -> None:
    balanced = fitted(criterion="balanced").calibration
    accuracy = fitted(criterion="accuracy").calibration
    assert balanced is not None and accuracy is not None
    assert balanced.chosen.oos_rejection >= accuracy.chosen.oos_rejection
    assert accuracy.chosen.oos_rejection + accuracy.chosen.in_scope_accuracy <= (
        balanced.chosen.oos_rejection + balanced.chosen.in_scope_accuracy + 1e-9
    )


def test_fit_holds_in_scope_accuracy_by_default() -> None:
    router = fitted()
    calibration = router.calibration
    assert calibration is not None and calibration.criterion == "min_accuracy=0.9"
    # every in-scope utterance is routed right, so the highest threshold that keeps the
    # accuracy is the lowest in-scope score; out-of-scope ones under it are rejected
    decisions = router.route_many([u for u, _ in FIT_IN] + FIT_OOS)
    assert calibration.chosen.in_scope_accuracy == 1.0
    assert all(d.route == r for d, (_, r) in zip(decisions, FIT_IN, strict=False))
    assert router.threshold == min(d.score for d in decisions[: len(FIT_IN)])
    assert calibration.chosen.oos_rejection > 0
    # a lower accuracy to hold: a higher threshold, more rejected
    loose = fitted(min_accuracy=0.6)
    assert loose.threshold is not None and loose.threshold > router.threshold
    assert loose.calibration is not None
    assert loose.calibration.chosen.oos_rejection >= calibration.chosen.oos_rejection


class SynonymEncoder(HashingEncoder):
    """Bag of words where each synonym counts as its word: in-scope queries worded with
    synonyms are similar to their route's examples but share no word with them."""

    SYNONYMS = {
        "drizzle": "rain", "outlook": "forecast", "morrow": "tomorrow", "bright": "sunny",
        "saturday": "weekend", "climate": "weather", "reimburse": "refund", "bill": "invoice",
        "remittance": "payment", "billed": "charged", "plastic": "card", "double": "twice",
    }

    def __init__(self) -> None:
        super().__init__(dim=512)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        return super().encode(
            [" ".join(self.SYNONYMS.get(w, w) for w in t.lower().split()) for t in texts]
        )


SYNONYM_ROUTES = [
    {"name": "weather", "examples": ["rain forecast tomorrow", "sunny weekend weather"]},
    {"name": "billing", "examples": ["refund invoice payment", "charged card twice"]},
]
SYNONYM_SET: list[tuple[str, str | None]] = [
    *[(q, "weather") for q in (
        "drizzle outlook morrow", "bright saturday climate", "drizzle climate saturday",
        "outlook bright morrow", "climate outlook drizzle", "saturday morrow bright",
    )],
    *[(q, "billing") for q in (
        "reimburse bill remittance", "billed plastic double", "reimburse remittance plastic",
        "bill billed double", "double reimburse bill", "plastic remittance billed",
    )],
    *[(q, None) for q in (
        "football match score", "capital city australia", "jupiter moons count",
        "cat joke please", "piano lesson tonight", "movie night ideas",
        "garden hose repair", "chess opening names", "train station directions",
        "poem about autumn", "best pizza nearby", "learn spanish quickly",
    )],
]


@pytest.mark.parametrize("kwargs", [{}, {"criterion": "balanced"}])
def test_fit_chooses_the_score(kwargs: dict) -> None:
    # labelled utterances that share words with their routes: the covered score does as well
    # (the default) or better (balanced: it keeps more in-scope ones), and is preferred
    utterances = [u for u, _ in FIT_IN] + FIT_OOS
    labels: list[str | None] = [r for _, r in FIT_IN] + [None] * len(FIT_OOS)
    router = SemanticRouter(ROUTES, "general", encoder=HashingEncoder())  # linear, none given
    assert router.confidence == "discounted" and not router.confidence_fixed
    router.fit(utterances, labels, **kwargs)
    calibration = router.calibration
    assert calibration is not None and set(calibration.tried) == {"discounted", "covered"}
    assert calibration.confidence == router.confidence == "covered"
    assert calibration.chosen == calibration.tried["covered"]
    assert "score: confidence='covered'" in calibration.table()
    # routes of two examples, in-scope queries in other words: no in-scope query shares a
    # word with its route, the discounted score separates them and is chosen
    texts, names = [u for u, _ in SYNONYM_SET], [r for _, r in SYNONYM_SET]
    synonyms = SemanticRouter(SYNONYM_ROUTES, "general", encoder=SynonymEncoder())
    synonyms.fit(texts, names, **kwargs)
    tried = synonyms.calibration.tried if synonyms.calibration else {}
    assert synonyms.confidence == "discounted"
    assert tried["discounted"].oos_rejection == tried["discounted"].in_scope_accuracy == 1.0
    assert tried["covered"].oos_rejection + tried["covered"].in_scope_accuracy < 1.5
    assert [d.route for d in synonyms.route_many(texts)] == [r or "general" for r in names]
    # a score given is kept, and fit measures it alone
    for name, point in tried.items():
        forced = SemanticRouter(
            SYNONYM_ROUTES, "general", confidence=name, encoder=SynonymEncoder()  # type: ignore[arg-type]
        )
        forced.fit(texts, names, **kwargs)
        assert forced.calibration is not None and forced.calibration.tried == {}
        assert forced.confidence == name and forced.calibration.chosen == point


@pytest.mark.parametrize("share", [0.25, 0.5, 0.75, 1.0])
def test_fit_with_a_target_out_of_scope_recall(share: float) -> None:
    router = fitted(oos_recall=share)
    calibration = router.calibration
    assert calibration is not None and calibration.criterion == f"oos_recall={share:g}"
    assert calibration.chosen.oos_rejection >= share
    # the lowest threshold that gets there: the curve's point for that level
    assert router.threshold == calibration.point(share).threshold
    decisions = router.route_many(FIT_OOS)
    assert sum(d.is_fallback for d in decisions) / len(FIT_OOS) >= share


@pytest.mark.parametrize(
    ("utterances", "labels", "kwargs", "message"),
    [
        (["a", "b"], ["weather"], {}, "differ in length"),
        ([], [], {}, "at least one"),
        (["a"], ["nope"], {}, "label 'nope'"),
        (["a"], ["weather"], {"criterion": "balanced"}, "out-of-scope utterances"),
        (["a"], ["weather"], {"min_recall": 0}, "min_recall"),
        ("ab", ["weather", None], {}, "sequences"),
        (["a", "b"], ["weather", None], {"criterion": "best"}, "criterion must be one of"),
        (["a", "b"], ["weather", None], {"oos_recall": 1.5}, "oos_recall must be in"),
        (["a", "b"], ["weather", None], {"oos_recall": 0.5, "min_recall": 0.5},
         "give one of oos_recall, min_recall and min_accuracy"),
        ([None], [None], {"min_recall": 0.5}, "min_recall and min_accuracy need in-scope"),
    ],
)
def test_fit_rejects_bad_input(utterances, labels, kwargs, message) -> None:
    router = SemanticRouter(ROUTES, "general", encoder=HashingEncoder())
    with pytest.raises(ConfigurationError, match=message):
        router.fit(utterances, labels, **kwargs)


# -- save / load -----------------------------------------------------------------------------


@pytest.mark.parametrize("scoring", ["linear", "knn"])
def test_save_load_round_trip_reuses_embeddings(tmp_path: Path, scoring: str) -> None:
    encoder = HashingEncoder()
    router = SemanticRouter(ROUTES, "general", scoring=scoring, threshold=0.2, encoder=encoder)
    queries = [q for qs in IN_SCOPE.values() for q in qs] + OUT_OF_SCOPE
    expected = router.route_many(queries)
    path = router.save(tmp_path / "router.json")
    files = sorted(p.name for p in tmp_path.iterdir())
    assert "router.embeddings.npy" in files
    assert ("router.head.npy" in files) == (scoring == "linear")
    saved = json.loads(path.read_text())
    assert saved["config"] == router.config()
    np.load(tmp_path / "router.embeddings.npy", allow_pickle=False)  # plain arrays, no pickle

    fresh = HashingEncoder()
    loaded = SemanticRouter.load(path, encoder=fresh)
    assert loaded.config() == router.config()
    same = [SemanticRouter(**r.config()).config_hash for r in (loaded, router)]
    assert same[0] == same[1]
    assert loaded.route_many(queries) == expected
    assert fresh.texts == len(queries)  # only the queries were encoded: examples came from disk


def test_load_recomputes_embeddings_of_another_model(tmp_path: Path, caplog) -> None:
    router = SemanticRouter(ROUTES, "general", encoder=HashingEncoder(64))
    path = router.save(tmp_path / "r.json")
    other = HashingEncoder(32)
    loaded = SemanticRouter.load(path, encoder=other)
    loaded.warm_up()
    assert other.texts > 0 and "recomputing" in caplog.text


def test_save_without_embeddings_and_bad_files(tmp_path: Path) -> None:
    router = SemanticRouter(ROUTES, "general", encoder=HashingEncoder())
    path = router.save(tmp_path / "plain.json", embeddings=False)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plain.json"]
    assert SemanticRouter.load(path, encoder=HashingEncoder()).config() == router.config()
    (tmp_path / "other.json").write_text(json.dumps({"format": "x"}))
    with pytest.raises(ConfigurationError, match="not a saved SemanticRouter"):
        SemanticRouter.load(tmp_path / "other.json")
    with pytest.raises(ConfigurationError, match="cannot read saved router"):
        SemanticRouter.load(tmp_path / "missing.json")


def test_a_router_saved_before_discounted_scores_keeps_its_score_scale(tmp_path: Path) -> None:
    router = SemanticRouter(ROUTES, "general", threshold=0.3, encoder=HashingEncoder())
    path = router.save(tmp_path / "old.json")
    document = json.loads(path.read_text())
    document["version"] = 1
    del document["config"]["confidence"]
    path.write_text(json.dumps(document))
    loaded = SemanticRouter.load(path, encoder=HashingEncoder())
    assert loaded.confidence == "similarity" and loaded.threshold == 0.3
    document["version"] = 7
    path.write_text(json.dumps(document))
    with pytest.raises(ConfigurationError, match="unsupported saved router version 7"):
        SemanticRouter.load(path, encoder=HashingEncoder())


def test_fitted_thresholds_survive_save_and_load(tmp_path: Path) -> None:
    encoder = HashingEncoder()
    router = SemanticRouter(ROUTES, "general", encoder=encoder)
    router.fit(["will it rain", "tell me a joke"], ["weather", None])
    loaded = SemanticRouter.load(router.save(tmp_path / "fit.json"), encoder=encoder)
    assert loaded.threshold == router.threshold is not None


def test_a_covered_router_keeps_its_score_through_save_and_load(tmp_path: Path) -> None:
    encoder = HashingEncoder()
    router = SemanticRouter(ROUTES, "general", confidence="covered", encoder=encoder)
    router.fit(["will it rain", "tell me a joke"], ["weather", None])
    loaded = SemanticRouter.load(router.save(tmp_path / "covered.json"), encoder=encoder)
    assert loaded.confidence == "covered" and loaded.threshold == router.threshold
    queries = [q for qs in IN_SCOPE.values() for q in qs] + OUT_OF_SCOPE
    assert loaded.route_many(queries) == router.route_many(queries)


# -- laziness and threads ------------------------------------------------------------------------


def test_examples_are_embedded_once_lazily_and_thread_safely() -> None:
    encoder = HashingEncoder()
    router = SemanticRouter(ROUTES, "general", encoder=encoder)
    assert encoder.calls == 0  # nothing happens at construction
    barrier = threading.Barrier(8)
    results: list[RouteDecision] = []

    def work() -> None:
        barrier.wait()
        results.append(router.route_sync("will it rain this afternoon"))

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    example_texts = sum(len(r["examples"]) + 1 for r in ROUTES)
    assert encoder.texts == example_texts + 8  # examples once, then one text per query
    assert {d.route for d in results} == {"weather"}


def test_model_is_loaded_once_per_path() -> None:
    from ragloom_semantic import load_static_model

    models = []
    barrier = threading.Barrier(4)

    def load() -> None:
        barrier.wait()
        models.append(load_static_model())

    threads = [threading.Thread(target=load) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(m is models[0] for m in models)
    a = SemanticRouter(ROUTES, encoder=None)
    b = SemanticRouter(ROUTES[:2], encoder=None)
    assert a.encoder is b.encoder


# -- configs, registry, pipelines ------------------------------------------------------------------


def test_config_is_json_and_rebuilds() -> None:
    router = SemanticRouter(
        [SemanticRoute(**ROUTES[0]), ROUTES[1]], "general", threshold=0.3, scoring="hybrid",
        top_k=5, oos_label="oos",
    )
    config = router.config()
    assert json.loads(json.dumps(config)) == config
    rebuilt = SemanticRouter(**config)
    assert rebuilt.config() == config
    assert SemanticRouter(**rebuilt.config()).config_hash == rebuilt.config_hash
    assert SemanticRouter(**{**config, "top_k": 4}).config_hash != router.config_hash


def test_registry_builds_it_by_entry_point_name() -> None:
    registry = Registry()
    router = registry.create(
        "router", "semantic", {"routes": ROUTES, "default_route": "general", "threshold": 0.4}
    )
    assert isinstance(router, SemanticRouter) and router.threshold == 0.4
    assert registry.name_of(router) == ("router", "semantic")
    with pytest.raises(ConfigurationError, match="scoring"):
        registry.create("router", "semantic", {"routes": ROUTES, "scoring": "nope"})


class _SplitOnAnd(QueryTransformer):
    step_id = "tests/split-on-and"
    awaits = False

    async def transform(self, query: str) -> list[str]:
        return [part.strip() for part in query.split(" and ")]


async def test_inside_multi_query_routing_pipeline(routers) -> None:
    block = MultiQueryRoutingPipeline(_SplitOnAnd(), routers["linear"], max_sub_queries=3)
    result = await block.build().run(
        ["will it rain tomorrow and how do I get a refund for my order"]
    )
    (state,) = list(result)
    assert [r.route for r in state.routing_plan] == ["weather", "billing"]
    assert all(r.score is not None for r in state.routing_plan)


def test_declarative_query_pipeline(tmp_path: Path) -> None:
    from ragloom.config import build_pipeline

    spec = {
        "name": "semantic-plan",
        "query": {
            "decomposer": {"import": "test_semantic_router:_SplitOnAnd"},
            "router": {
                "name": "semantic",
                "params": {"routes": ROUTES, "default_route": "general", "threshold": 0.45},
            },
        },
    }
    pipeline = build_pipeline(spec, allow_imports=True)
    result = anyio.run(pipeline.run, ["is it going to snow and who won the football match"])
    (state,) = list(result)
    assert [(r.route, r.fallback_reason) for r in state.routing_plan] == [
        ("weather", None),
        ("general", "below threshold"),
    ]


def test_ragloom_plan_builds_it_from_a_config(tmp_path: Path) -> None:
    import subprocess
    import sys

    pytest.importorskip("click")
    pytest.importorskip("ragloom_rules")
    lines = [
        'version = 1', 'name = "plan-semantic"', "[query]", "[query.decomposer]",
        'name = "heuristic"', "[query.router]", 'name = "semantic"', "[query.router.params]",
        'default_route = "general"', "threshold = 0.45",
    ]
    for route in ROUTES:
        lines += [
            "[[query.router.params.routes]]",
            f'name = "{route["name"]}"',
            "examples = [" + ", ".join(json.dumps(e) for e in route["examples"]) + "]",
        ]
    config = tmp_path / "plan.toml"
    config.write_text("\n".join(lines))
    proc = subprocess.run(
        [sys.executable, "-m", "ragloom.cli", "plan", "--config", str(config), "--json",
         "will it rain tomorrow", "who won the football match"],
        capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    rain, football = (json.loads(line) for line in proc.stdout.splitlines())
    assert rain["routing_plan"][0]["route"] == "weather"
    assert football["routing_plan"][0]["route"] == "general"
    assert football["routing_plan"][0]["fallback_reason"] == "below threshold"


class TestSemanticRouterContract(RouterContract):
    @pytest.fixture
    def router(self) -> SemanticRouter:
        return SemanticRouter(ROUTES, "general", threshold=0.3)
