"""Pipeline files with a ``retrieval`` section: built into a ``MultiQueryRetrievalPipeline`` that
owns its store, written back by ``dump_pipeline``, routes naming their retrievers, and errors
that name the file and the field. Components are registered by hand in an isolated registry."""

from __future__ import annotations

from pathlib import Path

import pytest
from ragloom.config import build_pipeline, dump_pipeline, parse_spec
from ragloom.errors import ConfigurationError
from ragloom.models import Document
from ragloom.multi_retrieval import MultiQueryRetrievalPipeline, RetrievalResult
from ragloom.query import QueryTransformer, Route, RouteDecision, Router
from ragloom.reranking import Reranker
from ragloom.retrieval import StoreRetriever
from ragloom.stores import IndexedDocument, ScoredChunk, Store, StoreInfo, matches_where
from ragloom.testing import isolated_registry

OPENED: list[MemoryStore] = []


class MemoryStore(Store):
    """Chunks in a dict; text search by shared words. Records that it was opened and closed."""

    step_id = "test/memory-store"

    def __init__(self, path: str = "index", label: str = "") -> None:
        self.path = path
        self.label = label
        self.closed = False
        self.chunks = [
            Document(id=f"{topic}#{n}", content=f"{topic} {word}", parent_id=topic, index=n,
                     start=0, end=len(f"{topic} {word}"), metadata={"topic": topic})
            for topic in ("billing", "security")
            for n, word in enumerate(("refund", "password"))
        ]
        OPENED.append(self)

    def config(self):
        return {"path": self.path, "label": self.label}

    def write(self, documents: list[IndexedDocument]) -> None:  # pragma: no cover - unused
        raise NotImplementedError

    def delete(self, document_ids) -> int:  # pragma: no cover - unused
        return 0

    def fingerprints(self) -> dict[str, str]:
        return {}

    def info(self) -> StoreInfo:
        return StoreInfo(self.path, 2, len(self.chunks), None)

    def search(self, *, vector=None, text=None, top_k=10, where=None, mode=None):
        words = set((text or "").lower().replace("?", "").split())
        found = [
            c for c in self.chunks
            if matches_where(c.metadata, where) and words & set(c.content.split())
        ]
        return [ScoredChunk(c, 1.0 / n) for n, c in enumerate(found[:top_k], 1)]

    def close(self) -> None:
        self.closed = True


class Split(QueryTransformer):
    step_id = "test/split"

    def transform_sync(self, query: str) -> list[str]:
        return [part.strip() for part in query.split(" and ")]


class FirstWord(Router):
    step_id = "test/first-word"

    def __init__(self, routes: list) -> None:
        from ragloom.query import coerce_route

        self._routes = tuple(coerce_route(i, r, Route) for i, r in enumerate(routes))

    @property
    def routes(self):
        return self._routes

    def config(self):
        return {"routes": [r.model_dump(exclude_none=True) for r in self._routes]}

    @property
    def valid_routes(self):
        return [r.name for r in self._routes]

    @property
    def default_route(self):
        return "general"

    def route_sync(self, query: str) -> RouteDecision:
        word = query.split()[0] if query.split() else ""
        if word in self.valid_routes:
            return RouteDecision(route=word, score=1.0)
        return self.fallback("no match")


@pytest.fixture
def registry():
    registry = isolated_registry()
    registry.register("decomposer", "split", Split)
    registry.register("router", "first-word", FirstWord)
    registry.register("store", "memory", MemoryStore)
    registry.register("retriever", "store", StoreRetriever)
    OPENED.clear()
    return registry


ROUTES = [
    {"name": "billing", "retrieve": {"where": {"topic": "billing"}, "top_k": 1, "weight": 2.0}},
    {"name": "security", "retrieve": {"retriever": "store", "params": {"top_k": 3},
                                      "where": {"topic": "security"}}},
    {"name": "general"},
]


def spec(**retrieval) -> dict:
    return {
        "name": "search",
        "query": {
            "decomposer": "split",
            "router": {"name": "first-word", "params": {"routes": ROUTES}},
            "max_sub_queries": 3,
        },
        "retrieval": {"store": {"name": "memory", "params": {"path": "idx"}}, **retrieval},
    }


def test_a_retrieval_section_builds_the_search_block_that_owns_its_store(registry) -> None:
    pipeline = build_pipeline(spec(top_k=4, fusion_k=10), registry=registry)
    block = pipeline.block
    assert isinstance(block, MultiQueryRetrievalPipeline)
    assert (block.top_k, block.fusion_k, block.routing.max_sub_queries) == (4, 10, 3)
    (store,) = OPENED
    assert isinstance(block.retriever, StoreRetriever) and block.retriever.store is store
    assert block.retriever.mode == "text"  # no embedder: text search
    # the security route names the registered retriever: built with the block's store
    assert isinstance(block.retrievers["store"], StoreRetriever)
    assert block.retrievers["store"].store is store and block.retrievers["store"].top_k == 3
    with pipeline:
        (result,) = pipeline.run_sync(["billing refund and security password and general x"])
    assert isinstance(result, RetrievalResult)
    assert [r.route for r in result.routing_plan] == ["billing", "security", "general"]
    by_route = {h.route: p.chunk_id for p in result.passages for h in p.found_by}
    # the question is also searched whole, by the default retriever (text, top_k 3)
    assert {k: v for k, v in by_route.items() if k != "(whole question)"} == {
        "billing": "billing#0", "security": "security#1",
    }
    assert store.closed  # closing the pipeline closed the store it opened


def test_dump_writes_the_retrieval_section_back(registry) -> None:
    pipeline = build_pipeline(
        spec(retriever={"name": "store", "params": {"top_k": 7}}, top_k=5), registry=registry
    )
    dumped = dump_pipeline(pipeline)
    assert dumped["retrieval"] == {
        "store": {"name": "memory", "params": {"path": "idx", "label": ""}},
        "retriever": {"name": "store", "params": {"mode": "text", "top_k": 7, "where": {}}},
        "top_k": 5,
        "fusion_k": 5,
        "consensus": 0.2,
        "whole_weight": 1.0,
        "per_document": 0,
        "search_depth": 1,
    }
    assert dumped["query"]["router"]["params"]["routes"][0]["retrieve"]["weight"] == 2.0
    again = build_pipeline(dumped, registry=registry)
    assert dump_pipeline(again) == dumped
    third = build_pipeline(dump_pipeline(again), registry=registry)
    assert third.block.config_hash == again.block.config_hash
    assert again.block.retriever.config() == pipeline.block.retriever.config()
    third.close()
    pipeline.close()
    again.close()
    assert all(store.closed for store in OPENED)


def test_a_file_sets_how_passages_spread_over_documents(registry) -> None:
    pipeline = build_pipeline(spec(per_document=0, search_depth=3), registry=registry)
    block = pipeline.block
    assert (block.per_document, block.search_depth) == (0, 3)
    dumped = dump_pipeline(pipeline)
    assert (dumped["retrieval"]["per_document"], dumped["retrieval"]["search_depth"]) == (0, 3)
    default = build_pipeline(spec(), registry=registry)
    assert default.block.config_hash != block.config_hash
    with pytest.raises(ConfigurationError, match="search_depth"):
        build_pipeline(spec(search_depth=0), registry=registry)
    pipeline.close()
    default.close()


def test_a_relative_store_path_is_read_from_the_files_folder(registry, tmp_path) -> None:
    import json

    folder = tmp_path / "conf"
    folder.mkdir()
    path = folder / "search.json"
    path.write_text(json.dumps(spec()), encoding="utf-8")
    with build_pipeline(path, registry=registry):
        assert OPENED[-1].path == str(folder / "idx")
    absolute = spec()
    absolute["retrieval"]["store"]["params"]["path"] = str(tmp_path / "elsewhere")
    path.write_text(json.dumps(absolute), encoding="utf-8")
    with build_pipeline(path, registry=registry):
        assert OPENED[-1].path == str(tmp_path / "elsewhere")


def test_errors_name_the_field_and_close_the_store(registry) -> None:
    with pytest.raises(ConfigurationError, match="'retrieval' needs a 'query' block"):
        parse_spec({"steps": [{"step": "x"}], "retrieval": {"store": "memory"}})
    with pytest.raises(ConfigurationError, match=r"retrieval\.top_k"):
        parse_spec(spec(top_k=0))
    with pytest.raises(ConfigurationError, match=r"retrieval.stor: unknown field 'stor'"):
        parse_spec({"query": spec()["query"], "retrieval": {"stor": "memory"}})
    with pytest.raises(ConfigurationError, match=r"retrieval\.store\.name"):
        build_pipeline(spec(store="nowhere"), registry=registry)
    with pytest.raises(ConfigurationError, match=r"retrieval\.retriever\.name"):
        build_pipeline(spec(retriever="nowhere"), registry=registry)
    assert OPENED and all(store.closed for store in OPENED)
    OPENED.clear()
    with pytest.raises(ConfigurationError, match=r"retrieval\.retriever\.params"):
        build_pipeline(spec(retriever={"name": "store", "params": {"bogus": 1}}),
                       registry=registry)
    with pytest.raises(ConfigurationError, match="'vector' needs an embedder"):
        build_pipeline(spec(retriever={"name": "store", "params": {"mode": "vector"}}),
                       registry=registry)
    bad_route = spec()
    bad_route["query"]["router"]["params"]["routes"] = [
        {"name": "general", "retrieve": {"retriever": "missing"}}
    ]
    with pytest.raises(ConfigurationError, match="'missing'"):
        build_pipeline(bad_route, registry=registry)
    with pytest.raises(ConfigurationError, match=r"retrieval\.retriever\.import"):
        build_pipeline(spec(retriever={"import": "ragloom.retrieval:StoreRetriever"}),
                       registry=registry)
    assert OPENED and all(store.closed for store in OPENED)


def test_an_imported_retriever_gets_the_store(registry) -> None:
    pipeline = build_pipeline(
        spec(retriever={"import": "ragloom.retrieval:StoreRetriever", "params": {"top_k": 2}}),
        registry=registry, allow_imports=True,
    )
    with pipeline:
        assert pipeline.block.retriever.store is OPENED[-1]
        assert pipeline.block.retriever.top_k == 2


def test_dump_refuses_retrievers_given_in_code(registry) -> None:
    store = MemoryStore()
    block = MultiQueryRetrievalPipeline(
        Split(), FirstWord([{"name": "general", "retrieve": {"retriever": "mine"}}]),
        StoreRetriever(store), retrievers={"mine": StoreRetriever(store, top_k=1)},
    )
    pipeline = block.build()
    pipeline.registry = registry
    with pytest.raises(ConfigurationError, match="'mine'.*given in code"):
        dump_pipeline(pipeline)


def test_the_block_keeps_its_store_for_a_file(tmp_path: Path, registry) -> None:
    store = MemoryStore(path=str(tmp_path))
    block = MultiQueryRetrievalPipeline(Split(), FirstWord([{"name": "general"}]),
                                        StoreRetriever(store))
    assert block.store is store and block.embedder is None
    pipeline = block.build()
    pipeline.registry = registry
    dumped = dump_pipeline(pipeline)
    assert dumped["retrieval"]["store"] == {
        "name": "memory", "params": {"path": str(tmp_path), "label": ""},
    }
    assert not store.closed  # a block built in code does not own what it was given


class Last(Reranker):
    """The fused passages, last first."""

    step_id = "test/last"

    def __init__(self, keep: int = 10) -> None:
        self.keep = keep

    def config(self):
        return {"keep": self.keep}

    def rerank(self, question, passages, top_k):
        return passages[::-1][: min(top_k, self.keep)]


def test_a_rerank_key_names_the_reranker_and_is_written_back(registry) -> None:
    registry.register("reranker", "last", Last)
    question = "billing refund and security password"
    with build_pipeline(spec(top_k=4), registry=registry) as plain:
        (fused,) = plain.run_sync([question])
    pipeline = build_pipeline(spec(top_k=4, rerank={"name": "last", "params": {"keep": 3}}),
                              registry=registry)
    assert isinstance(pipeline.block.components["reranker"], Last)
    with pipeline:
        (result,) = pipeline.run_sync([question])
    assert len(fused.passages) > 3
    assert [p.chunk_id for p in result.passages] == [
        p.chunk_id for p in fused.passages[::-1][:3]
    ]
    dumped = dump_pipeline(pipeline)
    assert dumped["retrieval"]["rerank"] == {"name": "last", "params": {"keep": 3}}
    with build_pipeline(dumped, registry=registry) as again, build_pipeline(
        dump_pipeline(again), registry=registry
    ) as third:
        assert dump_pipeline(again) == dumped
        assert third.block.config_hash == again.block.config_hash
    with build_pipeline(spec(rerank="last"), registry=registry) as short:
        assert short.block.components["reranker"].keep == 10
    with pytest.raises(ConfigurationError, match=r"retrieval\.rerank\.name: .*'lost'"):
        build_pipeline(spec(rerank="lost"), registry=registry)
    with pytest.raises(ConfigurationError, match=r"retrieval\.rerank\.params"):
        build_pipeline(spec(rerank={"name": "last", "params": {"depth": 1}}), registry=registry)
