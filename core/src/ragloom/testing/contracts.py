"""Contract test classes: subclass one, provide its fixture, get the whole contract checked.

Example::

    from ragloom.testing import ChunkerContract

    class TestMyChunker(ChunkerContract):
        @pytest.fixture
        def chunker(self):
            return MyChunker(chunk_size=200)

The tests run synchronously (each starts its own event loop with ``anyio.run``), so the kit
needs no async plugin configuration in the author's suite.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

import anyio
import pytest

from .._hashing import canonical
from ..cache import MemoryCacheStore
from ..chunking import Chunker
from ..errors import InvalidInputError
from ..identity import captured_arguments
from ..models import Document
from ..multi_query import MultiQueryRoutingPipeline
from ..query import QueryTransformer, RouteDecision, Router
from .checks import check_chunks
from .helpers import make_documents, run_step

__all__ = ["ChunkerContract", "QueryTransformerContract", "RouterContract"]


def _run(fn: Callable[..., Any], *args: Any) -> Any:
    return anyio.run(fn, *args)


def check_rebuilds(component: Any) -> Any:
    """``type(c)(**c.config())`` rebuilds ``component`` with the same ``config()``, and a
    pipeline file rebuilt from it keeps its cache identity; returns the rebuilt component."""
    rebuilt = type(component)(**dict(component.config()))
    assert canonical(dict(rebuilt.config())) == canonical(dict(component.config())), (
        "config() must return the arguments that rebuild the component"
    )
    again = type(component)(**dict(rebuilt.config()))
    assert again.config_hash == rebuilt.config_hash, (
        "a component built twice from the same config() must keep its cache identity"
    )
    return rebuilt


def check_identity_variants(
    component: Any, variants: list[dict[str, Any]], outputs: Callable[[Any], Any]
) -> None:
    """Every variant of ``component``'s constructor arguments changes its cache identity; a
    variant whose outputs differ under the same identity fails, naming what differs."""
    base = captured_arguments(component)
    base_hash, base_out = component.config_hash, outputs(component)
    for override in variants:
        variant = type(component)(**{**base, **override})
        if variant.config_hash != base_hash:
            continue
        changed = sorted(
            k for k in set(vars(variant)) | set(vars(component))
            if vars(variant).get(k, _ABSENT) is not vars(component).get(k, _ABSENT)
            and repr(vars(variant).get(k, _ABSENT)) != repr(vars(component).get(k, _ABSENT))
        )
        same = "its outputs differ" if outputs(variant) != base_out else "its outputs look equal"
        raise AssertionError(
            f"{type(component).__name__} with {override!r} has the same cache identity as "
            f"without ({same}); attributes that differ: {', '.join(changed) or 'none'}. A "
            "cache would replay the old outputs: every argument must reach the identity"
        )


_ABSENT = object()


class ChunkerContract:
    """The chunker family's contract. Provide a ``chunker`` fixture returning a new instance.

    Class attributes tune the checks: ``lossless`` (spans tile the document; ``True``),
    ``documents`` (a factory of test documents; defaults to varied prose, Markdown and code
    in the chunker's accepted formats).
    """

    lossless: ClassVar[bool] = True
    #: ``False`` for chunkers whose chunks are rendered from structure rather than sliced
    #: (``ChunkText`` pieces): spans are then not checked, ``metadata["span_kind"]`` is.
    slices: ClassVar[bool] = True

    @pytest.fixture
    def chunker(self) -> Chunker:  # pragma: no cover - the author overrides it
        raise NotImplementedError("provide a `chunker` fixture returning your chunker")

    def make_documents(self, chunker: Chunker) -> list[Document]:
        accepted = chunker.accepted_content_formats
        docs = make_documents(formats=())
        if accepted is None:
            return docs
        out = [d for d in docs if d.content_format in accepted]
        if not out:  # a custom format: reuse the sample texts under it
            fmt = sorted(accepted)[0]
            out = [d.model_copy(update={"content_format": fmt}) for d in docs]
        return out

    @staticmethod
    def _limits(chunker: Chunker) -> tuple[int | None, Callable[[str], int], int]:
        size = getattr(chunker, "chunk_size", None)
        overlap = getattr(chunker, "chunk_overlap", 0) or 0
        length = getattr(chunker, "length", None)
        if not callable(length):
            length = getattr(chunker, "length_function", None)
        if not callable(length):
            length = len
        return size, length, overlap

    def _chunks(self, chunker: Chunker, docs: list[Document]) -> Any:
        return _run(run_step, chunker, docs)

    def test_is_a_chunker_with_identity(self, chunker: Chunker) -> None:
        assert isinstance(chunker, Chunker)
        assert chunker.event_name
        assert isinstance(chunker.config_hash, str) and len(chunker.config_hash) == 32
        assert dict(chunker.config()) == dict(chunker.config())

    def test_exact_spans_lineage_and_sizes(self, chunker: Chunker) -> None:
        docs = self.make_documents(chunker)
        result = self._chunks(chunker, docs)
        assert not result.failed, [f.reason for f in result.failed]
        size, length, overlap = self._limits(chunker)
        by_parent: dict[str, list[Document]] = {}
        for chunk in result:
            by_parent.setdefault(chunk.parent_id, []).append(chunk)
        for doc in docs:
            check_chunks(
                doc,
                by_parent.get(doc.id, []),
                chunk_size=size,
                length=length,
                overlap=overlap,
                lossless=self.lossless,
                slices=self.slices,
            )

    def test_metadata_inherited_and_format(self, chunker: Chunker) -> None:
        docs = [
            d.model_copy(update={"metadata": {**d.metadata, "tenant": "acme", "n": 7}})
            for d in self.make_documents(chunker)
        ]
        result = self._chunks(chunker, docs)
        assert len(result) > 0
        formats = {d.id: d.content_format for d in docs}
        for chunk in result:
            assert chunk.metadata["tenant"] == "acme" and chunk.metadata["n"] == 7
            expected = chunker.content_format or formats[chunk.parent_id]
            assert chunk.content_format == expected

    def test_empty_document_yields_no_chunks(self, chunker: Chunker) -> None:
        fmt = sorted(chunker.accepted_content_formats or {"text"})[0]
        result = self._chunks(chunker, [Document(id="empty", content="", content_format=fmt)])
        assert list(result) == [] and result.failed == []

    def test_unaccepted_format_fails_the_item_not_the_run(self, chunker: Chunker) -> None:
        accepted = chunker.accepted_content_formats
        if accepted is None:
            pytest.skip("the chunker accepts every content format")
        doc = Document(id="alien", content="some text", content_format="x-unknown-format")
        with pytest.raises(InvalidInputError):
            chunker.validate_input(doc)
        result = self._chunks(chunker, [doc])
        assert list(result) == []
        assert [f.item_id for f in result.failed] == ["alien"]

    def test_sync_and_async_paths_agree(self, chunker: Chunker) -> None:
        for doc in self.make_documents(chunker):

            async def via_async(d: Document = doc) -> list[Any]:
                return [p async for p in chunker.asplit(d)]

            pieces = _run(via_async)
            from_async = chunker.build_chunks(doc, pieces)
            from_engine = list(self._chunks(chunker, [doc]))
            assert [c.model_dump() for c in from_async] == [c.model_dump() for c in from_engine]

    def test_deterministic(self, chunker: Chunker) -> None:
        docs = self.make_documents(chunker)
        first = [c.model_dump() for c in self._chunks(chunker, docs)]
        second = [c.model_dump() for c in self._chunks(chunker, docs)]
        assert first == second

    @pytest.fixture
    def identity_variants(self) -> list[dict[str, Any]]:
        """Constructor arguments that change what the component produces, one dict per variant
        (applied over the arguments the fixture was built with). Override to have the kit check
        that each reaches the cache identity. Default: none."""
        return []

    def test_config_rebuilds(self, chunker: Chunker) -> None:
        rebuilt = check_rebuilds(chunker)
        docs = self.make_documents(chunker)
        assert [c.model_dump() for c in self._chunks(rebuilt, docs)] == [
            c.model_dump() for c in self._chunks(chunker, docs)
        ], "config() must rebuild a chunker that cuts the same chunks"

    def test_every_setting_reaches_the_cache_identity(
        self, chunker: Chunker, identity_variants: list[dict[str, Any]]
    ) -> None:
        docs = self.make_documents(chunker)
        check_identity_variants(
            chunker, identity_variants,
            lambda c: [d.model_dump() for d in self._chunks(c, docs)],
        )

    def test_cache_identity_and_replay(self, chunker: Chunker) -> None:
        docs = self.make_documents(chunker)
        store = MemoryCacheStore()
        cold = _run(lambda: run_step(chunker, docs, cache=store))
        warm = _run(lambda: run_step(chunker, docs, cache=store))
        assert [c.model_dump() for c in warm] == [c.model_dump() for c in cold]
        assert warm.cache_hits == len(docs) and warm.cache_misses == 0


class RouterContract:
    """The router contract. Provide a ``router`` fixture; optionally override ``queries``."""

    queries: ClassVar[list[str]] = [
        "How do I reset my password?",
        "What does the premium plan cost per month?",
        "Compare the battery life of the two latest phones",
        "",
        "   ",
        "?!",
        "zxqv wplk",
        "Tell me about the weather in Paris tomorrow",
    ]

    @pytest.fixture
    def router(self) -> Router:  # pragma: no cover - the author overrides it
        raise NotImplementedError("provide a `router` fixture returning your router")

    def test_valid_routes_and_default(self, router: Router) -> None:
        assert isinstance(router, Router)
        routes = list(router.valid_routes)
        assert routes and all(isinstance(r, str) and r for r in routes)
        assert len(set(routes)) == len(routes)
        assert router.default_route is None or router.default_route in routes

    def test_decisions_name_valid_routes_only(self, router: Router) -> None:
        async def decide_all() -> list[RouteDecision]:
            return [await router.decide(q) for q in self.queries]

        for query, decision in zip(self.queries, _run(decide_all), strict=True):
            assert isinstance(decision, RouteDecision)
            assert decision.route in router.valid_routes, (query, decision)

    def test_route_answers_are_valid(self, router: Router) -> None:
        """The router's own answers (not only after ``decide`` repaired them) are valid."""

        async def raw() -> list[RouteDecision]:
            return [await router.route(q) for q in self.queries]

        for query, decision in zip(self.queries, _run(raw), strict=True):
            assert decision.route in router.valid_routes, (
                f"route({query!r}) answered {decision.route!r}, not one of "
                f"{list(router.valid_routes)}"
            )

    def test_fallbacks_carry_a_reason_and_the_default(self, router: Router) -> None:
        async def decide_all() -> list[RouteDecision]:
            return [await router.decide(q) for q in self.queries]

        for decision in _run(decide_all):
            if decision.fallback_reason is not None:
                assert decision.fallback_reason.strip()
                assert decision.route == router.default_route

    def test_errors_become_fallbacks(self, router: Router) -> None:
        if router.default_route is None:
            pytest.skip("no default route")

        async def broken(query: str) -> RouteDecision:
            raise RuntimeError("backend down")

        def broken_sync(query: str) -> RouteDecision:
            raise RuntimeError("backend down")

        # Whichever hook the router implements, an error becomes a fallback with its reason.
        router.route = broken  # type: ignore[method-assign]
        router.route_sync = broken_sync  # type: ignore[method-assign]
        try:
            decisions = [_run(router.decide, "anything"), router.decide_sync("anything")]
        finally:
            del router.route, router.route_sync
        for decision in decisions:
            assert decision.route == router.default_route
            assert decision.fallback_reason and "backend down" in decision.fallback_reason

    def test_concurrency_safe(self, router: Router) -> None:
        queries = [q for q in self.queries for _ in range(6)]

        async def sequential() -> list[RouteDecision]:
            return [await router.decide(q) for q in queries]

        async def concurrent() -> list[RouteDecision | None]:
            out: list[RouteDecision | None] = [None] * len(queries)

            async def one(i: int, q: str) -> None:
                out[i] = await router.decide(q)

            async with anyio.create_task_group() as tg:
                for i, q in enumerate(queries):
                    tg.start_soon(one, i, q)
            return out

        assert [d.route for d in _run(sequential)] == [
            d.route for d in _run(concurrent) if d is not None
        ]

    @pytest.fixture
    def identity_variants(self) -> list[dict[str, Any]]:
        """Constructor arguments that change the router's decisions (see ChunkerContract)."""
        return []

    def test_config_rebuilds(self, router: Router) -> None:
        check_rebuilds(router)

    def test_every_setting_reaches_the_cache_identity(
        self, router: Router, identity_variants: list[dict[str, Any]]
    ) -> None:
        check_identity_variants(
            router, identity_variants,
            lambda r: [_run(r.decide, q).model_dump() for q in self.queries],
        )


class _FirstRoute(Router):
    step_id = "ragloom.testing/first-route"

    @property
    def valid_routes(self) -> tuple[str, ...]:
        return ("only",)

    def route_sync(self, query: str) -> RouteDecision:
        return RouteDecision(route="only", score=1.0)


class QueryTransformerContract:
    """The decomposer contract. Provide a ``decomposer`` fixture; override ``queries``."""

    queries: ClassVar[list[str]] = [
        "What is retrieval-augmented generation?",
        "Compare PostgreSQL and SQLite for analytics since 2020",
        "How do I install the CLI and how do I configure a cache?",
        "",
    ]

    @pytest.fixture
    def decomposer(self) -> QueryTransformer:  # pragma: no cover - the author overrides it
        raise NotImplementedError("provide a `decomposer` fixture returning your decomposer")

    def test_returns_lists_of_strings(self, decomposer: QueryTransformer) -> None:
        assert isinstance(decomposer, QueryTransformer)
        for query in self.queries:
            out = _run(decomposer.transform, query)
            assert isinstance(out, list) and all(isinstance(s, str) for s in out), (query, out)

    def test_inside_multi_query_routing(self, decomposer: QueryTransformer) -> None:
        block = MultiQueryRoutingPipeline(decomposer, _FirstRoute(), max_sub_queries=3)
        queries = [q for q in self.queries if q.strip()]
        result = _run(block.build().run, queries)
        assert [s.query for s in result] == queries
        for state in result:
            assert 1 <= len(state.sub_queries) <= 3
            assert [r.sub_query for r in state.routing_plan] == state.sub_queries

    @pytest.fixture
    def identity_variants(self) -> list[dict[str, Any]]:
        """Constructor arguments that change the sub-queries (see ChunkerContract)."""
        return []

    def test_config_rebuilds(self, decomposer: QueryTransformer) -> None:
        check_rebuilds(decomposer)

    def test_every_setting_reaches_the_cache_identity(
        self, decomposer: QueryTransformer, identity_variants: list[dict[str, Any]]
    ) -> None:
        check_identity_variants(
            decomposer, identity_variants,
            lambda d: [_run(d.transform, q) for q in self.queries],
        )
