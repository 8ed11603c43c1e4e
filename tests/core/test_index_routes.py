"""Collections in the walk, and the routing by collection: fitted gaps, the decisions of a
:class:`CollectionRouter` (restrict, boost, too close), and the searches each decision makes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from ragloom.index_routes import (
    ALL_COLLECTIONS,
    TOO_CLOSE,
    CollectionRouter,
    WholeIndex,
    fit_gaps,
    fit_routes,
)
from ragloom.ingest import walk_inputs
from ragloom.models import Document
from ragloom.multi_query import SubQueryRoute
from ragloom.multi_retrieval import RetrieveStep
from ragloom.query import RouteDecision, Router
from ragloom.retrieval import Retriever
from ragloom.stores import ScoredChunk


def test_collections_of_walked_files(tmp_path: Path) -> None:
    root = tmp_path / "docs"
    for name in ("guides/a.md", "guides/deep/b.md", "api/c.md", "top.md"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("x", encoding="utf-8")
    walked = walk_inputs([str(root)])
    assert {f.doc_id: f.collection for f in walked.files} == {
        "api/c.md": "api", "guides/a.md": "guides", "guides/deep/b.md": "guides",
        "top.md": "docs",
    }
    given = walk_inputs([str(root / "top.md"), str(root / "guides")])
    assert {f.doc_id: f.collection for f in given.files} == {
        "top.md": "docs", "guides/a.md": "guides", "guides/deep/b.md": "deep",
    }
    named = walk_inputs([str(root)], collection="all-docs")
    assert {f.collection for f in named.files} == {"all-docs"}
    # ids are those of a walk without collections
    assert [f.doc_id for f in named.files] == [f.doc_id for f in walked.files]


def test_fitted_gaps_keep_the_precision_asked() -> None:
    # three collections; a wide gap is always right, a narrow one right half the time
    ranked, labels = [], []
    for i in range(100):
        wide = i % 2 == 0
        gap = 0.3 if wide else 0.01
        ranked.append([("a", 0.8), ("b", 0.8 - gap), ("c", 0.1)])
        labels.append("a" if wide or i % 4 == 1 else "b")
    gaps = fit_gaps(ranked, labels, precision=0.95)
    assert gaps[0] == pytest.approx(0.3)  # only the wide ones are restricted to one
    # the narrow ones are in {a, b}, far above c: restricted to both
    assert gaps[1] == pytest.approx(0.69)
    assert fit_gaps(ranked, labels, precision=0.5)[0] == pytest.approx(0.01)
    assert fit_gaps(ranked[:5], labels[:5], precision=0.95) == [None, None]  # too few


class Scores:
    """A router that scores routes as told (what CollectionRouter needs)."""

    def __init__(self, scores: dict[str, float]) -> None:
        self.next = scores
        self.valid_routes = (*scores, ALL_COLLECTIONS)
        self.config_hash = "scores"

    def scores(self, query: str) -> dict[str, float]:
        return dict(self.next)


def test_a_collection_router_restricts_boosts_or_leaves_the_whole_index() -> None:
    scorer = Scores({"git": 0.8, "sqlite": 0.5, "debian": 0.45})
    router = CollectionRouter(scorer, restrict_gaps=[0.2, 0.3], boost_gap=0.05)
    sure = router.decide_sync("q")
    assert (sure.route, sure.retrieval, sure.collections) == ("git", "restrict", ["git"])
    assert (sure.runner_up, sure.runner_up_score) == ("sqlite", 0.5)
    scorer.next = {"git": 0.6, "sqlite": 0.5, "debian": 0.35}
    boosted = router.decide_sync("q")
    assert (boosted.route, boosted.retrieval, boosted.collections) == ("git", "boost", ["git"])
    scorer.next = {"git": 0.6, "sqlite": 0.58, "debian": 0.1}
    two = router.decide_sync("q")  # close to each other, far above the third
    assert (two.retrieval, two.collections) == ("restrict", ["git", "sqlite"])
    scorer.next = {"git": 0.6, "sqlite": 0.58, "debian": 0.57}
    close = router.decide_sync("q")
    assert (close.route, close.retrieval, close.note) == ("git", None, TOO_CLOSE)
    scorer.next = {"git": 0.0, "sqlite": 0.0, "debian": 0.0}
    empty = router.decide_sync("q")
    assert empty.route == ALL_COLLECTIONS and empty.is_fallback
    # routing among some collections only
    scorer.next = {"git": 0.8, "sqlite": 0.5, "debian": 0.45}
    among = CollectionRouter(scorer, restrict_gaps=[0.01], collections=["sqlite", "debian"])
    assert among.decide_sync("q").collections == ["sqlite"]
    assert WholeIndex().decide_sync("q").note == "one collection: no routing"


class ByText:
    """A router that scores routes by the words of the query (each route's own words)."""

    def __init__(self, words: dict[str, set[str]]) -> None:
        self.words = words
        self.valid_routes = (*words, ALL_COLLECTIONS)
        self.config_hash = "by-text"
        self.seen: list[str] = []

    def scores(self, query: str) -> dict[str, float]:
        self.seen.append(query)
        said = set(query.lower().replace("?", " ").replace(".", " ").split())
        return {name: len(said & own) / 4 for name, own in self.words.items()}


def test_a_confident_last_sentence_routes_an_ask_after_a_shared_situation() -> None:
    scorer = ByText({"debian": {"debian", "server", "timezone", "ntp", "clock"},
                     "sqlite": {"sqlite", "query", "timestamp", "column"}})
    router = CollectionRouter(scorer, restrict_gaps=[0.5], boost_gap=0.1)
    situation = "Our Debian server runs on UTC but users want local time."
    # the situation's words would send the ask to debian; its own sentence is sure of sqlite
    ask = router.decide_sync(f"{situation} In a SQLite query, how do I format a timestamp?")
    assert (ask.route, ask.retrieval) == ("sqlite", "restrict")
    assert scorer.seen[-1] == "In a SQLite query, how do I format a timestamp?"
    # a last sentence that is not sure enough to restrict leaves the decision to the whole ask
    vague = router.decide_sync(f"{situation} How would I show it to the users then?")
    assert (vague.route, vague.score) == ("debian", 0.5)  # the whole ask's decision
    # one sentence, or a last one too short to route alone: the whole ask only
    scorer.seen.clear()
    router.decide_sync("How do I set the timezone of a Debian server?")
    router.decide_sync(f"{situation} Any idea?")
    assert scorer.seen == [
        "How do I set the timezone of a Debian server?", f"{situation} Any idea?",
    ]


class Recording(Retriever):
    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []

    def retrieve(self, query: str, *, top_k: int | None = None,
                 where: Any = None) -> list[ScoredChunk]:
        self.calls.append((query, where))
        name = (where or {}).get("collection", ["any"])[0]
        chunk = Document(id=f"{name}#0", content="text " * 20, parent_id=name)
        return [ScoredChunk(chunk, 1.0)]


def test_restricted_and_boosted_sub_queries_search_as_they_say() -> None:
    retriever = Recording()
    step = RetrieveStep(retriever, top_k=5, boost_weight=0.5, whole_weight=0)
    restrict = SubQueryRoute(sub_query="a", route="git", retrieval="restrict",
                             collections=["git", "sqlite"])
    searches = step._searches(restrict)
    # restricted to two collections: one search over both, at the ask's weight
    assert [(s.where, s.weight, s.collections) for s in searches] == [
        ({"collection": ["git", "sqlite"]}, 1.0, ["git", "sqlite"]),
    ]
    boost = SubQueryRoute(sub_query="b", route="git", retrieval="boost", collections=["git"])
    # a boost keeps the ask's own search at its weight and adds the collection's list beside
    # it: taken from a deeper search of the whole index, not a search of its own
    whole, beside = step._searches(boost)
    assert [(s.where, s.weight, s.collections) for s in (whole, beside)] == [
        (None, 1.0, None), ({"collection": ["git"]}, 0.5, ["git"]),
    ]
    assert (whole.deep, whole.of, beside.of) == (2, None, whole)
    plain = SubQueryRoute(sub_query="c", route="(whole index)", note=TOO_CLOSE)
    assert [(s.where, s.weight) for s in step._searches(plain)] == [(None, 1.0)]


def test_without_two_collections_or_the_semantic_router_nothing_is_routed(tmp_path) -> None:
    from ragloom.errors import PluginNotFoundError

    class Store:
        def __init__(self, names: list[str]) -> None:
            self.names = names

        def count_values(self, key: str) -> dict[str | None, tuple[int, int]]:
            return {name: (1, 1) for name in self.names}

        def fingerprints(self) -> dict[str, str]:
            return {"a": "1"}

    class NoSemantic:
        def resolve(self, kind: str, name: str) -> Any:
            raise PluginNotFoundError(f"no {kind} {name}")

    assert fit_routes(Store(["git"])).note == "one collection: no routing"
    assert fit_routes(Store([])).note == "no collections: no routing"
    missing = fit_routes(Store(["git", "sqlite"]), registry=NoSemantic())
    assert missing.router is None and "ragloom-semantic" in (missing.note or "")

    # a search routes by its probe all the same: no semantic router is needed for that
    from ragloom.index_routes import index_router

    probe = Found({"all git": ["git"] * 10})
    routed = index_router(Store(["git", "sqlite"]), registry=NoSemantic(), probe=probe)
    assert isinstance(routed, CollectionRouter) and routed.router is None
    assert routed.valid_routes == ("git", "sqlite", ALL_COLLECTIONS)
    sure = routed.decide_sync("all git")
    assert (sure.route, sure.retrieval, sure.collections) == ("git", "restrict", ["git"])
    assert routed.config()["router"] is None
    one = index_router(Store(["git"]), registry=NoSemantic(), probe=probe)
    assert isinstance(one, WholeIndex) and one.note == "one collection: no routing"
    only = index_router(
        Store(["git", "sqlite"]), registry=NoSemantic(), probe=probe, collections=["git"]
    )
    assert isinstance(only, WholeIndex)


def test_a_collections_route_is_fitted_from_a_bounded_seeded_sample(monkeypatch) -> None:
    import ragloom.index_routes as routes

    class Store:
        """A collection of 50 documents, two chunks each (what sample_collection reads)."""

        def __init__(self) -> None:
            self.asked: list[str] = []

        def chunks(self, ids: list[str], *, vectors: bool = True) -> dict[str, list[Document]]:
            self.asked = list(ids)
            return {
                d: [
                    Document(id=f"{d}#{i}", parent_id=d, content=f"About {d}. " * 12,
                             metadata={"title": f"Page {d}", "headings": [f"Part {i}"]})
                    for i in range(2)
                ]
                for d in ids
            }

    monkeypatch.setattr(routes, "SAMPLE_DOCUMENTS", 20)
    ids = [f"doc{n:02d}" for n in range(50)]
    store = Store()
    sample = routes.sample_collection(store, ids, "fp")
    assert len(store.asked) == sample.documents == 20  # only the sample is read
    assert routes.sample_collection(Store(), list(reversed(ids)), "fp") == sample  # seeded
    # a new document changes the sample by at most one document in and one out (a title and
    # two passages each)
    grown = routes.sample_collection(Store(), [*ids, "doc50"], "fp2")
    assert len(set(grown.examples) ^ set(sample.examples)) <= 6
    # held-out documents give utterances and examples of their own, never the training ones
    assert sample.utterances and sample.held_examples and sample.examples
    assert not set(sample.held_examples) & set(sample.examples)


class Found(Retriever):
    """A search of the whole index that finds, for each query, passages of the collections
    it is told (best first)."""

    def __init__(self, found: dict[str, list[str]]) -> None:
        self.found = found
        self.calls: list[tuple[str, int | None]] = []

    def retrieve(self, query: str, *, top_k: int | None = None,
                 where: Any = None) -> list[ScoredChunk]:
        self.calls.append((query, top_k))
        return [
            ScoredChunk(Document(id=f"{name}/{i}#0", content="text", parent_id=f"{name}/{i}",
                                 metadata={"collection": name}), 1.0 - i / 100)
            for i, name in enumerate(self.found.get(query, []))
        ]


def test_a_search_of_the_whole_index_decides_how_an_ask_is_searched() -> None:
    from ragloom.errors import ConfigurationError

    scorer = Scores({"git": 0.9, "sqlite": 0.1, "debian": 0.0})  # never consulted with a probe
    probe = Found({
        "all git": ["git"] * 10,
        "mostly git": ["git"] * 7 + ["sqlite"] * 3,
        "split": ["git", "sqlite", "debian"] * 3 + ["git"],
        "elsewhere": ["other"] * 10,
        # passages outside the collections routed among (no collection) count in the whole
        "mostly unsorted": ["git"] + ["other"] * 9,
    })
    router = CollectionRouter(scorer, probe=probe, restrict_share=0.8, boost_share=0.5)
    sure = router.decide_sync("all git")
    assert (sure.route, sure.retrieval, sure.collections, sure.score) == (
        "git", "restrict", ["git"], 1.0,
    )
    assert probe.calls == [("all git", 10)]  # the ask's top 10
    # the passage at rank r weighs 1 / (5 + r): seven of the first ten are 0.79 of it
    boosted = router.decide_sync("mostly git")
    assert (boosted.route, boosted.retrieval, boosted.runner_up) == ("git", "boost", "sqlite")
    assert boosted.score == pytest.approx(0.7922, abs=1e-4)
    assert boosted.score + (boosted.runner_up_score or 0) == pytest.approx(1.0)
    close = router.decide_sync("split")
    assert (close.route, close.retrieval, close.note) == ("git", None, TOO_CLOSE)
    # nothing found in the collections routed among: the whole index, said so
    assert router.decide_sync("elsewhere").is_fallback
    assert router.decide_sync("nothing at all").is_fallback
    unsorted = router.decide_sync("mostly unsorted")
    assert (unsorted.route, unsorted.retrieval, unsorted.note) == ("git", None, TOO_CLOSE)
    for bad in ({"probe_k": 0}, {"boost_share": 0.9, "restrict_share": 0.8}, {"probe": 3}):
        with pytest.raises(ConfigurationError):
            CollectionRouter(scorer, **{"probe": probe, **bad})


def test_a_situation_alone_never_restricts_an_ask_its_own_sentence_places_elsewhere() -> None:
    situation = "We are adding a second site on the same Debian box."
    ask = "Generate a new key and a certificate request for both names"
    upkeep = "How do I keep the packages of that box up to date?"
    probe = Found({
        # the situation's words pull the whole ask to debian, enough to restrict
        f"{situation} {ask}": ["debian"] * 9 + ["openssl"],
        # the ask's own sentence points to openssl, not surely enough to restrict on its own
        ask: ["openssl"] * 6 + ["debian"] * 4,
        f"{situation} {upkeep}": ["debian"] * 10,
        upkeep: ["debian"] * 6 + ["openssl"] * 4,
    })
    router = CollectionRouter(
        Scores({"debian": 0, "openssl": 0}), probe=probe, collections=["debian", "openssl"]
    )
    # the situation alone would restrict the ask to debian, where it can find nothing: the
    # sentence decides, and only boosts (the whole index is searched)
    moved = router.decide_sync(f"{situation} {ask}")
    assert (moved.route, moved.retrieval, moved.collections) == ("openssl", "boost", ["openssl"])
    assert moved.focus is None and moved.runner_up == "debian"
    # a sentence that agrees with its situation leaves the whole ask's restriction
    kept = router.decide_sync(f"{situation} {upkeep}")
    assert (kept.route, kept.retrieval, kept.collections) == ("debian", "restrict", ["debian"])


def test_an_abbreviation_or_a_parenthesis_ends_no_sentence_of_an_ask() -> None:
    one = "How do I tell which constraint failed (unique vs. foreign key) and get its message?"
    aside = "Which tools, e.g. grep or awk, can search the exported dump for that value?"
    two = "We keep the data in SQLite. How do I tell which constraint failed and why?"
    probe = Found({one: ["sqlite"] * 10, aside: ["sqlite"] * 10, two: ["sqlite"] * 10})
    router = CollectionRouter(
        Scores({"sqlite": 0, "openssl": 0}), probe=probe, collections=["sqlite", "openssl"]
    )
    for ask in (one, aside, two):
        router.decide_sync(ask)
    # only the ask of two sentences is searched by its last sentence too (an ask's two
    # searches run at once, in either order)
    assert sorted(query for query, _ in probe.calls) == sorted([
        one, aside, two, "How do I tell which constraint failed and why?",
    ])


def test_a_last_sentence_that_decides_is_searched_beside_its_ask() -> None:
    situation = "Our Debian server runs on UTC."
    ask = "In a SQLite query, how do I format a timestamp?"
    vague = "Which one should I pick, and why?"
    probe = Found({
        f"{situation} {ask}": ["debian"] * 6 + ["sqlite"] * 4,
        ask: ["sqlite"] * 10,
        f"{situation} {vague}": ["debian"] * 10,
        vague: ["git"] * 10,
    })
    router = CollectionRouter(Scores({"git": 0, "sqlite": 0, "debian": 0}), probe=probe)
    # the situation pulls the whole ask to debian; its own sentence is sure of sqlite, and a
    # search of the whole ask finds sqlite too: restricted, the sentence searched as well
    routed = router.decide_sync(f"{situation} {ask}")
    assert (routed.route, routed.retrieval, routed.focus) == ("sqlite", "restrict", ask)
    # a sentence read out of its context that finds what the whole ask does not: a boost only
    soft = router.decide_sync(f"{situation} {vague}")
    assert (soft.route, soft.retrieval, soft.focus) == ("git", "boost", vague)

    step = RetrieveStep(Recording(), top_k=5, boost_weight=0.5, whole_weight=0)
    restricted = SubQueryRoute.from_decision(f"{situation} {ask}", routed)
    assert [(s.routed.sub_query, s.where, s.weight) for s in step._searches(restricted)] == [
        (f"{situation} {ask}", {"collection": ["sqlite"]}, 1.0),
        (ask, {"collection": ["sqlite"]}, 1.0),
    ]
    boosted = SubQueryRoute.from_decision(f"{situation} {vague}", soft)
    assert [(s.routed.sub_query, s.where, s.weight) for s in step._searches(boosted)] == [
        (f"{situation} {vague}", None, 1.0),
        (f"{situation} {vague}", {"collection": ["git"]}, 0.5),
        (vague, {"collection": ["git"]}, 0.5),
    ]


class Meeting(Found):
    """A probe whose searches wait for each other: each returns only once ``count`` of them
    are under way at the same time (it raises after a long wait, which the router reports
    as a fallback)."""

    def __init__(self, found: dict[str, list[str]], count: int) -> None:
        import threading

        super().__init__(found)
        self.barrier = threading.Barrier(count, timeout=30)

    def retrieve(self, query: str, *, top_k: int | None = None,
                 where: Any = None) -> list[ScoredChunk]:
        self.barrier.wait()
        return super().retrieve(query, top_k=top_k, where=where)


@pytest.mark.anyio
async def test_the_asks_of_a_question_are_routed_at_once() -> None:
    from ragloom.multi_query import MultiQueryRoutingPipeline
    from ragloom.query import QueryTransformer

    class Split(QueryTransformer):
        def config(self) -> dict[str, Any]:
            return {}

        def transform_sync(self, query: str) -> list[str]:
            return query.split(" | ")

    situation = "Our Debian server runs on UTC."
    ask = "In a SQLite query, how do I format a timestamp?"
    # three asks, one of two sentences: four searches of the index, all under way at once
    probe = Meeting({
        "all git": ["git"] * 10, "all debian": ["debian"] * 10,
        f"{situation} {ask}": ["debian"] * 6 + ["sqlite"] * 4, ask: ["sqlite"] * 10,
    }, count=4)
    router = CollectionRouter(None, collections=["git", "sqlite", "debian"], probe=probe)
    planned = await MultiQueryRoutingPipeline(Split(), router).plan(
        f"all git | {situation} {ask} | all debian"
    )
    assert [(r.route, r.retrieval) for r in planned.routing_plan] == [
        ("git", "restrict"), ("sqlite", "restrict"), ("debian", "restrict"),
    ]
    assert sorted(q for q, _ in probe.calls) == sorted([*probe.found])


class Ranked(Retriever):
    """The whole index in a fixed order (every other passage in git, the rest in sqlite);
    records every call. ``fail`` makes every search fail."""

    def __init__(self, fail: bool = False) -> None:
        self.calls: list[tuple[str, int | None, Any]] = []
        self.fail = fail

    def retrieve(self, query: str, *, top_k: int | None = None,
                 where: Any = None) -> list[ScoredChunk]:
        self.calls.append((query, top_k, where))
        if self.fail:
            raise ConnectionError("index unreachable")
        found = []
        for i in range(40):
            name = "git" if i % 2 else "sqlite"
            if where and name not in where["collection"]:
                continue
            chunk = Document(id=f"{name}-{i}", content=f"passage {i} " * 5, parent_id=name,
                             metadata={"collection": name})
            found.append(ScoredChunk(chunk, 1.0 - i / 100))
        return found[:top_k]


class Boosting(Router):
    """Boosts git for every ask (what a probe that finds git in 0.5-0.8 of it decides)."""

    step_id = "test/boosting"
    boost_weight = 0.5
    valid_routes = ("git", "sqlite", ALL_COLLECTIONS)

    def route_sync(self, query: str) -> RouteDecision:
        return RouteDecision(route="git", score=0.6, collections=["git"], retrieval="boost")


def test_a_boosted_ask_takes_its_collections_list_from_its_own_deeper_search() -> None:
    from ragloom.multi_retrieval import MultiQueryRetrievalPipeline
    from ragloom.query import WholeQuestion

    ranked = Ranked()
    block = MultiQueryRetrievalPipeline(WholeQuestion(), Boosting(), ranked, top_k=4)
    result = block.search_sync("how do I rebase")
    # one search, of the whole index, for twice the passages; none restricted to git
    assert ranked.calls == [("how do I rebase", 8, None)]
    (plan,) = result.routing_plan
    assert (plan.retrieval, plan.collections) == ("boost", ["git"])
    # the ask's own list keeps its first 4 passages; git's list, at half its weight, is git's
    # passages among the first 8 (git-1, git-3, git-5, git-7), as ranked there
    assert [
        (p.chunk_id, [(h.rank, h.collections) for h in p.found_by]) for p in result.passages
    ] == [
        ("sqlite-0", [(1, None)]),
        ("git-1", [(2, None), (1, ["git"])]),
        ("git-3", [(4, None), (2, ["git"])]),  # lifted above sqlite-2 by git's list
        ("sqlite-2", [(3, None)]),
    ]


def test_a_boosted_ask_whose_search_fails_reports_one_failure() -> None:
    from ragloom.multi_retrieval import MultiQueryRetrievalPipeline, RetrievalFailedError
    from ragloom.query import WholeQuestion

    block = MultiQueryRetrievalPipeline(
        WholeQuestion(), Boosting(), Ranked(fail=True), top_k=4
    )
    with pytest.raises(RetrievalFailedError, match="index unreachable") as failed:
        block.search_sync("how do I rebase")
    assert str(failed.value).count("index unreachable") == 1
