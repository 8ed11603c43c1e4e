"""Cached runs through the public API: replay, invalidation, tri-state inheritance, routing."""

from __future__ import annotations

from typing import Any

import pytest
from cache_kit import CountingChunker, Tagger, docs, dumps, run
from ragloom import (
    CacheHit,
    CacheMiss,
    ContentFormatFilter,
    Document,
    Event,
    InvalidInputError,
    ItemProcessingError,
    IterableSource,
    MemoryCacheStore,
    MetadataFilter,
    Pipeline,
    Policy,
    RoutedStep,
)


def test_second_run_replays_without_splitting_and_matches_the_first(store: Any) -> None:
    inputs = docs(12)
    chunker = CountingChunker(cache=store)
    first = run(Pipeline(chunker), inputs)
    assert sorted(chunker.calls) == sorted(d.id for d in inputs)
    assert first.cache_misses == 12 and first.cache_hits == 0

    chunker.calls.clear()
    second = run(Pipeline(chunker), docs(12))  # fresh but equal documents
    assert chunker.calls == []
    assert dumps(second) == dumps(first)
    assert second.cache_hits == 12 and second.cache_misses == 0
    stats = second.steps[chunker.name]
    assert (stats.items_in, stats.items_out, stats.cache_hits) == (12, len(first), 12)
    # Replayed chunks still satisfy the lineage contract.
    by_id = {d.id: d for d in inputs}
    for chunk in second:
        assert by_id[chunk.parent_id].content[chunk.start : chunk.end] == chunk.content


def test_changing_one_document_reruns_only_that_document(store: Any) -> None:
    chunker = CountingChunker(cache=store)
    run(Pipeline(chunker), docs(8))
    chunker.calls.clear()

    changed = docs(8)
    changed[5] = Document(id="d5", content="entirely new text for five", metadata={"n": 5})
    result = run(Pipeline(chunker), changed)
    assert chunker.calls == ["d5"]
    assert (result.cache_hits, result.cache_misses) == (7, 1)
    assert [c.content for c in result if c.parent_id == "d5"] == [
        "entirely new text for five"
    ]

    chunker.calls.clear()
    meta_changed = docs(8)
    meta_changed[2] = meta_changed[2].model_copy(update={"metadata": {"n": 2, "new": True}})
    result = run(Pipeline(chunker), meta_changed)
    assert chunker.calls == ["d2"]  # metadata is inherited by chunks: part of the key
    assert all(c.metadata == {"n": 2, "new": True} for c in result if c.parent_id == "d2")


def test_content_edited_with_model_copy_is_a_miss_even_after_hashing(store: Any) -> None:
    # model_copy(update=...) copies the instance dict: a content hash cached there by name
    # would describe the old content and replay the old content's chunks.
    chunker = CountingChunker(cache=store)
    original = docs(3)
    run(Pipeline(chunker), original)  # computes and caches each document's content hash
    chunker.calls.clear()

    edited = [original[0], original[1].model_copy(update={"content": "edited text"}), original[2]]
    result = run(Pipeline(chunker), edited)
    assert chunker.calls == ["d1"]
    assert (result.cache_hits, result.cache_misses) == (2, 1)
    assert [c.content for c in result if c.parent_id == "d1"] == ["edited text"]
    assert edited[1].content_hash != original[1].content_hash


def _three_steps(store: Any, size: int, first: str, second: str) -> tuple[Any, ...]:
    chunker = CountingChunker(size, cache=store)
    tag_a = Tagger("a", first, cache=store)
    tag_b = Tagger("b", second, cache=store)
    return chunker, tag_a, tag_b


def test_config_change_reruns_that_step_and_later_ones_only(store: Any) -> None:
    inputs = docs(5)
    chunker, tag_a, tag_b = _three_steps(store, 40, "x", "y")
    baseline = run(Pipeline(tag_b(tag_a(chunker(IterableSource(inputs))))))
    n_chunks = len(baseline)
    assert len(chunker.calls) == 5 and len(tag_a.calls) == n_chunks == len(tag_b.calls)

    # Nothing changed: nothing runs.
    chunker, tag_a, tag_b = _three_steps(store, 40, "x", "y")
    again = run(Pipeline(tag_b(tag_a(chunker(IterableSource(docs(5)))))))
    assert (chunker.calls, tag_a.calls, tag_b.calls) == ([], [], [])
    assert dumps(again) == dumps(baseline)

    # The middle step's config changes: it and the last one run, the chunker does not.
    chunker, tag_a, tag_b = _three_steps(store, 40, "x2", "y")
    middle = run(Pipeline(tag_b(tag_a(chunker(IterableSource(docs(5)))))))
    assert chunker.calls == []
    assert len(tag_a.calls) == n_chunks and len(tag_b.calls) == n_chunks
    assert {c.metadata["a"] for c in middle} == {"x2"}
    assert middle.steps[chunker.name].cache_hits == 5

    # The last step's config changes: only it runs.
    chunker, tag_a, tag_b = _three_steps(store, 40, "x2", "y2")
    last = run(Pipeline(tag_b(tag_a(chunker(IterableSource(docs(5)))))))
    assert (chunker.calls, tag_a.calls) == ([], [])
    assert len(tag_b.calls) == n_chunks
    assert {(c.metadata["a"], c.metadata["b"]) for c in last} == {("x2", "y2")}

    # The first step's config changes: everything runs.
    chunker, tag_a, tag_b = _three_steps(store, 25, "x2", "y2")
    first = run(Pipeline(tag_b(tag_a(chunker(IterableSource(docs(5)))))))
    assert len(chunker.calls) == 5
    assert len(tag_a.calls) == len(first) == len(tag_b.calls) != n_chunks


def test_a_later_step_hits_behind_an_uncached_step_that_reproduces_its_items(
    store: Any,
) -> None:
    # What docs/concepts/cache.md suggests for a chunker cheaper than its cache.
    def build() -> tuple[Any, Any]:
        return CountingChunker(40, cache=False), Tagger("a", "x", cache=store)

    chunker, tagger = build()
    first = run(Pipeline(tagger(chunker(IterableSource(docs(4))))))
    chunker, tagger = build()
    second = run(Pipeline(tagger(chunker(IterableSource(docs(4))))))
    assert len(chunker.calls) == 4  # not cached: cuts again
    assert tagger.calls == []  # its items are the same as last time: all replayed
    assert second.steps[tagger.name].cache_hits == len(first)
    assert dumps(second) == dumps(first)


def test_step_inherits_the_pipeline_cache_and_false_disables_it() -> None:
    pipeline_store = MemoryCacheStore()
    inheriting = CountingChunker()
    run(Pipeline(inheriting, cache=pipeline_store), docs(3))
    run(Pipeline(inheriting, cache=pipeline_store), docs(3))
    assert len(inheriting.calls) == 3 and len(pipeline_store) == 3

    disabled_store = MemoryCacheStore()
    disabled = CountingChunker(cache=False)
    for _ in range(2):
        result = run(Pipeline(disabled, cache=disabled_store), docs(3))
        assert (result.cache_hits, result.cache_misses) == (0, 0)
    assert len(disabled.calls) == 6 and len(disabled_store) == 0

    own_store, outer_store = MemoryCacheStore(), MemoryCacheStore()
    own = CountingChunker(cache=own_store)
    run(Pipeline(own, cache=outer_store), docs(3))
    run(Pipeline(own, cache=outer_store), docs(3))
    assert len(own.calls) == 3 and len(own_store) == 3 and len(outer_store) == 0


def _router(cache: Any, a: CountingChunker, b: CountingChunker) -> RoutedStep[Any]:
    return RoutedStep(cache=cache).route(MetadataFilter(route="a"), a).default(b)


def _routed_docs(route_of: dict[str, str]) -> list[Document]:
    return [
        Document(id=ident, content=f"text of {ident} " * 9, metadata={"route": route})
        for ident, route in route_of.items()
    ]


def test_router_children_inherit_the_router_cache() -> None:
    router_store, pipeline_store = MemoryCacheStore(), MemoryCacheStore()
    a, b = CountingChunker(10, name="a"), CountingChunker(20, name="b")
    inputs = _routed_docs({"x": "a", "y": "b", "z": "a"})
    first = run(Pipeline(_router(router_store, a, b), cache=pipeline_store), inputs)
    assert len(router_store) == 3 and len(pipeline_store) == 0
    second = run(Pipeline(_router(router_store, a, b), cache=pipeline_store), inputs)
    assert dumps(second) == dumps(first) and second.cache_hits == 3
    assert (a.calls, b.calls) == (["x", "z"], ["y"])

    # A router with cache=False turns caching off for children that inherit...
    off_a, off_b = CountingChunker(10), CountingChunker(20)
    for _ in range(2):
        run(Pipeline(_router(False, off_a, off_b), cache=pipeline_store), inputs)
    assert len(off_a.calls) == 4 and len(pipeline_store) == 0

    # ...but a child that sets its own store uses it.
    child_store = MemoryCacheStore()
    own_a, plain_b = CountingChunker(10, cache=child_store), CountingChunker(20)
    for _ in range(2):
        run(Pipeline(_router(False, own_a, plain_b), cache=pipeline_store), inputs)
    assert own_a.calls == ["x", "z"] and plain_b.calls == ["y", "y"]
    assert len(child_store) == 2 and len(pipeline_store) == 0

    # A child with cache=False under a cached router is never cached.
    no_a, cached_b = CountingChunker(10, cache=False), CountingChunker(20)
    fresh = MemoryCacheStore()
    for _ in range(2):
        run(Pipeline(_router(fresh, no_a, cached_b)), inputs)
    assert no_a.calls == ["x", "z", "x", "z"] and cached_b.calls == ["y"]
    assert len(fresh) == 1


def test_routed_item_is_keyed_by_the_child_that_handled_it() -> None:
    store = MemoryCacheStore()
    small, large = CountingChunker(10, name="small"), CountingChunker(30, name="large")
    doc = Document(id="m", content="a moving document " * 6, content_format="markdown")

    def router(markdown_to: CountingChunker, other: CountingChunker) -> RoutedStep[Any]:
        return (
            RoutedStep(cache=store)
            .route(ContentFormatFilter(include_formats=["markdown"]), markdown_to)
            .default(other)
        )

    assert small.cache_id(doc) != large.cache_id(doc)
    via_small = run(Pipeline(router(small, large)), [doc])
    assert small.calls == ["m"] and large.calls == []
    # Same document, routed to the other child now: it is processed again, not replayed.
    via_large = run(Pipeline(router(large, small)), [doc])
    assert large.calls == ["m"] and via_large.cache_misses == 1
    assert len(via_large) < len(via_small)
    assert len(store) == 2
    # Routed back: replayed from the first child's entry.
    back = run(Pipeline(router(small, large)), [doc])
    assert small.calls == ["m"] and back.cache_hits == 1
    assert dumps(back) == dumps(via_small)


def test_same_content_under_two_ids_keeps_each_documents_identity() -> None:
    store = MemoryCacheStore()
    chunker = CountingChunker(cache=store)
    text = "identical text in two documents. " * 5
    alone = Document(id="A", content=text)
    run(Pipeline(chunker), [alone])
    twin = Document(id="B", content=text)
    result = run(Pipeline(chunker), [alone, twin])
    assert chunker.calls == ["A", "B"]  # B is not A's replay
    again = run(Pipeline(chunker), [twin, alone])
    assert chunker.calls == ["A", "B"] and again.cache_hits == 2
    for out in (result, again):
        b_chunks = [c for c in out if c.parent_id == "B"]
        assert b_chunks and all(c.id.startswith("B#") for c in b_chunks)
        assert len(b_chunks) == len([c for c in out if c.parent_id == "A"])


def test_input_invalid_now_fails_instead_of_replaying() -> None:
    class Picky(CountingChunker):
        step_id = "tests/cache-picky"

    store = MemoryCacheStore()
    chunker = Picky(cache=store)
    inputs = [
        Document(id="t", content="plain text here " * 4, content_format="text"),
        Document(id="md", content="# markdown here " * 4, content_format="markdown"),
    ]
    run(Pipeline(chunker), inputs)
    chunker.calls.clear()
    Picky.accepted_content_formats = frozenset({"markdown"})  # not part of the config
    try:
        result = run(Pipeline(chunker), inputs)
    finally:
        Picky.accepted_content_formats = None
    assert chunker.calls == []
    assert {c.parent_id for c in result} == {"md"}
    assert [(f.item_id, f.error_type) for f in result.failed] == [
        ("t", InvalidInputError.__name__)
    ]
    assert result.cache_hits == 1


def test_failed_item_writes_nothing_and_is_retried_next_run(store: Any) -> None:
    chunker = CountingChunker(cache=store)
    chunker.explode = {"d1"}  # yields two chunks of d1, then raises
    first = run(Pipeline(chunker), docs(3))
    assert [f.item_id for f in first.failed] == ["d1"]
    assert "d1" not in {c.parent_id for c in first}
    assert store.info().entries == 2

    chunker.calls.clear()
    chunker.explode = set()
    second = run(Pipeline(chunker), docs(3))
    assert chunker.calls == ["d1"] and second.failed == []
    assert (second.cache_hits, second.cache_misses) == (2, 1)
    assert store.info().entries == 3
    assert dumps(second) == dumps(run(Pipeline(CountingChunker(cache=False)), docs(3)))


def test_cache_events_and_counts() -> None:
    store = MemoryCacheStore()
    chunker = CountingChunker(cache=store, name="chunks")
    inputs = docs(4)
    events: list[Event] = []
    first = run(Pipeline(chunker, observers=[events.append]), inputs)
    misses = [e for e in events if isinstance(e, CacheMiss)]
    assert [e.item_id for e in misses] == ["d0", "d1", "d2", "d3"]
    assert [e.cache_id for e in misses] == [chunker.cache_id(d) for d in inputs]
    assert all(e.step == "chunks" for e in misses)
    assert not any(isinstance(e, CacheHit) for e in events)

    events.clear()
    second = run(Pipeline(chunker, observers=[events.append]), inputs)
    hits = [e for e in events if isinstance(e, CacheHit)]
    assert [e.item_id for e in hits] == ["d0", "d1", "d2", "d3"]
    per_doc = {d.id: sum(1 for c in first if c.parent_id == d.id) for d in inputs}
    assert [e.outputs for e in hits] == [per_doc[f"d{i}"] for i in range(4)]
    assert not any(isinstance(e, CacheMiss) for e in events)
    finished = [e for e in events if e.kind == "step_finished" and e.step == "chunks"]
    assert len(finished) == 1 and finished[0].cache_hits == 4 and finished[0].cache_misses == 0
    assert second.steps["chunks"].cache_hits == 4 and second.cache_hits == 4


def test_step_whose_outputs_do_not_match_its_output_model_fails_items_clearly() -> None:
    class Liar(Tagger):
        step_id = "tests/cache-liar"

        async def transform(self, item: Any, context: Any) -> Any:
            yield {"not": "a document"}

    store = MemoryCacheStore()
    result = run(Pipeline(Liar("k", "v", cache=store)), docs(2))
    assert [f.error_type for f in result.failed] == ["ComponentTypeError"] * 2
    assert "output_model" in result.failed[0].message
    assert len(store) == 0


def test_work_finished_before_an_abort_is_kept(store: Any) -> None:
    chunker = CountingChunker(cache=store, policy=Policy(on_failure="abort"))
    chunker.explode = {"d3"}
    with pytest.raises(ItemProcessingError):
        run(Pipeline(chunker), docs(6))
    assert store.info().entries == 5  # every item that succeeded, none of d3
    chunker.calls.clear()
    chunker.explode = set()
    result = run(Pipeline(chunker), docs(6))
    assert chunker.calls == ["d3"] and result.cache_hits == 5
