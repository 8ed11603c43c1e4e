"""The store contract: subclass it, provide a ``store_factory`` fixture, get it checked.

Example::

    from ragloom.testing import StoreContract

    class TestMyStore(StoreContract):
        @pytest.fixture
        def store_factory(self):
            return lambda path: MyStore(path / "index")

The factory is called with a fresh directory per test (pytest's ``tmp_path``) and again with
the same directory to reopen the store, so it must build the store *at* that location.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from ..models import Document
from ..stores import IndexedDocument, ScoredChunk, Store, StoreError, StoreInfo, matches_where

__all__ = ["StoreContract"]

DIM = 8
_COMMON = "ragloomcommon"  # a word in every chunk of the hand-made corpus


def _vec(*weights: float, noise: int = 0) -> list[float]:
    """A DIM-dimensional vector: ``weights`` first, then a small per-``noise`` tail."""
    out = [float(w) for w in weights] + [0.0] * (DIM - len(weights))
    out[-1] += 0.01 * (noise % 7 + 1)
    return out


def _chunks(doc_id: str, pieces: Sequence[tuple[str, list[float], dict[str, Any]]]) -> list[Any]:
    out: list[Any] = []
    text = ""
    for index, (content, vector, metadata) in enumerate(pieces):
        start = len(text)
        text += content
        out.append(
            Document(
                id=f"{doc_id}#{index}",
                content=content,
                content_format="markdown" if index % 2 else "text",
                metadata=metadata,
                parent_id=doc_id,
                index=index,
                start=start,
                end=start + len(content),
                embedding=vector,
            )
        )
    return out


#: A small corpus with known answers: documents, their chunks' (content, vector, metadata).
_CORPUS: dict[str, list[tuple[str, list[float], dict[str, Any]]]] = {
    "fruit": [
        (f"Apples and pears grow in orchards. {_COMMON}", _vec(1, 0.1), {"topic": "food"}),
        (f"Bananas ripen in warm climates. {_COMMON}", _vec(0.9, 0.3), {"topic": "food"}),
    ],
    "space": [
        (f"Rockets launch satellites into orbit. {_COMMON}", _vec(0, 0, 1), {"topic": "space"}),
        (
            f"Solar panels power satellites; solar panels face the sun. {_COMMON}",
            _vec(0, 0.2, 0.8, 0.3),
            {"topic": "space", "tags": ["energy", "orbit"]},
        ),
    ],
    "code": [
        (f"Python functions return values. {_COMMON}", _vec(0, 0, 0, 1), {"topic": "code"}),
        (
            f"Judges sat on panels reviewing code. {_COMMON}",
            _vec(0.1, 0, 0.2, 0.9),
            {"topic": "code", "tags": ["review"]},
        ),
    ],
}


def _corpus(fingerprint: str = "v1") -> list[IndexedDocument]:
    return [
        IndexedDocument(doc_id, f"{doc_id}-{fingerprint}", _chunks(doc_id, pieces))
        for doc_id, pieces in _CORPUS.items()
    ]


def _ids(results: Sequence[ScoredChunk]) -> list[str]:
    return [r.chunk.id for r in results]


def _public(chunk: Any) -> dict[str, Any]:
    fields = ("id", "content", "content_format", "metadata", "parent_id", "index", "start", "end")
    return {name: getattr(chunk, name) for name in fields}


class StoreContract:
    """The store family's contract. Provide ``store_factory``: ``(directory) -> Store``.

    Every test builds its store in a fresh directory and closes it; a test that reopens calls
    the factory again with the same directory. Chunks are
    :class:`~ragloom.models.Document` chunks with 8-dimensional embeddings.
    """

    @pytest.fixture
    def store_factory(self) -> Callable[[Path], Store]:  # pragma: no cover - author overrides
        raise NotImplementedError("provide a `store_factory` fixture: (directory) -> Store")

    @pytest.fixture
    def store(self, store_factory: Callable[[Path], Store], tmp_path: Path) -> Any:
        store = store_factory(tmp_path)
        try:
            yield store
        finally:
            store.close()

    @pytest.fixture
    def filled(self, store: Store) -> Store:
        store.write(_corpus())
        return store

    # -- identity and bookkeeping -------------------------------------------------------------

    def test_is_a_store(self, store: Store) -> None:
        assert isinstance(store, Store)
        assert isinstance(store.config_hash, str) and len(store.config_hash) == 32
        info = store.info()
        assert isinstance(info, StoreInfo) and info.location
        assert (info.documents, info.chunks) == (0, 0)

    def test_empty_store(self, store: Store) -> None:
        assert store.fingerprints() == {}
        assert store.search(vector=_vec(1), top_k=3) == []
        assert store.search(text="apples", top_k=3) == []
        assert store.search(vector=_vec(1), text="apples", top_k=3) == []
        assert store.delete(["nothing"]) == 0
        assert store.clear() == 0

    def test_write_fingerprints_and_info(self, filled: Store) -> None:
        assert filled.fingerprints() == {d: f"{d}-v1" for d in _CORPUS}
        info = filled.info()
        assert info.documents == len(_CORPUS)
        assert info.chunks == sum(len(p) for p in _CORPUS.values())
        assert info.dimension == DIM

    def test_a_document_without_chunks_is_recorded(self, store: Store) -> None:
        store.write([IndexedDocument("empty", "e1", [])])
        assert store.fingerprints() == {"empty": "e1"}
        store.write(_corpus())
        assert store.fingerprints()["empty"] == "e1"
        assert store.delete(["empty"]) == 1 and "empty" not in store.fingerprints()

    def test_chunks_read_back_whole(self, filled: Store) -> None:
        expected = {c.id: c for d in _corpus() for c in d.chunks}
        found = filled.search(vector=_vec(1), top_k=len(expected))
        assert sorted(_ids(found)) == sorted(expected)
        for hit in found:
            assert isinstance(hit, ScoredChunk) and isinstance(hit.score, float)
            assert _public(hit.chunk) == _public(expected[hit.chunk.id])

    # -- replace, delete, persist ---------------------------------------------------------------

    def test_rewriting_a_document_replaces_its_chunks(self, filled: Store) -> None:
        new = _chunks("fruit", [(f"Cherries are red stone fruit. {_COMMON}", _vec(1), {})])
        filled.write([IndexedDocument("fruit", "fruit-v2", new)])
        assert filled.fingerprints()["fruit"] == "fruit-v2"
        assert filled.fingerprints()["space"] == "space-v1"  # others untouched
        everything = _ids(filled.search(vector=_vec(1), top_k=100))
        assert "fruit#1" not in everything and everything.count("fruit#0") == 1
        assert filled.search(text="orchards", top_k=5) == []
        assert _ids(filled.search(text="cherries", top_k=5)) == ["fruit#0"]
        assert filled.info().chunks == 5
        assert {"space#0", "space#1", "code#0", "code#1"} <= set(everything)

    def test_delete(self, filled: Store) -> None:
        assert filled.delete(["space", "missing"]) == 1
        assert set(filled.fingerprints()) == {"fruit", "code"}
        found = _ids(filled.search(vector=_vec(0, 0, 1), top_k=100))
        assert not any(i.startswith("space#") for i in found) and len(found) == 4
        assert filled.search(text="rockets", top_k=5) == []
        assert filled.delete(["space"]) == 0
        assert filled.clear() == 2
        assert filled.fingerprints() == {} and filled.info().chunks == 0
        filled.write(_corpus("v3"))  # usable again after clear
        assert filled.fingerprints()["code"] == "code-v3"

    def test_persists_across_close_and_reopen(
        self, store_factory: Callable[[Path], Store], tmp_path: Path
    ) -> None:
        first = store_factory(tmp_path)
        first.write(_corpus())
        before = _ids(first.search(vector=_vec(0, 0, 1), text="satellites", top_k=6))
        first.close()
        first.close()  # idempotent
        with store_factory(tmp_path) as again:
            assert again.fingerprints() == {d: f"{d}-v1" for d in _CORPUS}
            assert _ids(again.search(vector=_vec(0, 0, 1), text="satellites", top_k=6)) == before
            again.delete(["code"])
        with store_factory(tmp_path) as third:
            assert set(third.fingerprints()) == {"fruit", "space"}

    # -- search ---------------------------------------------------------------------------------

    def test_vector_search_ranks_by_similarity(self, filled: Store) -> None:
        found = filled.search(vector=_vec(0, 0, 1), top_k=6, mode="vector")
        assert _ids(found)[:2] == ["space#0", "space#1"]
        scores = [r.score for r in found]
        assert scores == sorted(scores, reverse=True) and len(found) == 6
        assert _ids(filled.search(vector=_vec(1, 0.1), top_k=1)) == ["fruit#0"]

    def test_text_search_ranks_by_relevance(self, filled: Store) -> None:
        found = filled.search(text="solar panels", top_k=6, mode="text")
        assert _ids(found)[0] == "space#1"  # both words, twice
        assert "code#1" in _ids(found)  # "panels" only
        assert not {"fruit#0", "fruit#1", "space#0", "code#0"} & set(_ids(found))
        scores = [r.score for r in found]
        assert scores == sorted(scores, reverse=True)
        assert _ids(filled.search(text="orchards", top_k=3)) == ["fruit#0"]
        assert filled.search(text="zzyzx", top_k=3) == []

    def test_hybrid_search_fuses_both(self, filled: Store) -> None:
        found = filled.search(vector=_vec(0, 0.2, 0.8, 0.3), text="solar panels", top_k=6)
        ids = _ids(found)
        assert ids[0] == "space#1"  # first by vector and by text
        # Found by text (2nd) and by vector (3rd or better) beats found by vector alone.
        assert ids.index("code#1") < ids.index("fruit#0")
        scores = [r.score for r in found]
        assert scores == sorted(scores, reverse=True)
        assert filled.search(vector=_vec(1), text="satellites", mode="vector", top_k=1)[
            0
        ].chunk.id.startswith("fruit#")

    def test_top_k(self, filled: Store) -> None:
        for k in (1, 2, 5):
            assert len(filled.search(vector=_vec(1), top_k=k)) == k
            assert len(filled.search(vector=_vec(1), text=_COMMON, top_k=k)) == k
        assert len(filled.search(text=_COMMON, top_k=3)) == 3
        assert len(filled.search(vector=_vec(1), top_k=100)) == 6

    def test_concurrent_searches_agree(self, filled: Store) -> None:
        """The query side searches for several sub-queries at once, from worker threads."""
        queries: list[dict[str, Any]] = [
            {"vector": _vec(0, 0, 1)},
            {"text": "solar panels"},
            {"vector": _vec(1), "text": "satellites"},
            {"vector": _vec(0, 0, 0, 1), "where": {"topic": "code"}},
        ] * 3
        expected = [_ids(filled.search(top_k=4, **q)) for q in queries]
        results: list[Any] = [None] * len(queries)
        errors: list[BaseException] = []

        def work(i: int) -> None:
            try:
                results[i] = _ids(filled.search(top_k=4, **queries[i]))
            except BaseException as exc:  # noqa: BLE001 - reported below
                errors.append(exc)

        threads = [threading.Thread(target=work, args=(i,)) for i in range(len(queries))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert not errors, errors
        assert results == expected

    def test_missing_query_parts(self, filled: Store) -> None:
        with pytest.raises(StoreError):
            filled.search(top_k=3)
        with pytest.raises(StoreError):
            filled.search(text="apples", mode="vector")
        with pytest.raises(StoreError):
            filled.search(vector=_vec(1), mode="text")
        with pytest.raises(StoreError):
            filled.search(vector=_vec(1), mode="hybrid")

    def test_where_on_a_known_corpus(self, filled: Store) -> None:
        def found(**kwargs: Any) -> set[str]:
            return set(_ids(filled.search(top_k=100, **kwargs)))

        assert found(vector=_vec(1), where={"topic": "space"}) == {"space#0", "space#1"}
        assert found(text=_COMMON, where={"topic": ["space", "code"]}) == {
            "space#0", "space#1", "code#0", "code#1",
        }
        assert found(vector=_vec(1), text="panels", where={"tags": "orbit"}) == {"space#1"}
        assert found(vector=_vec(1), where={"topic": "code", "tags": "review"}) == {"code#1"}
        assert found(vector=_vec(1), where={"missing": "x"}) == set()
        # The best match overall is filtered out; the best among the matching comes first.
        assert _ids(filled.search(vector=_vec(1, 0.1), top_k=1, where={"topic": "code"})) == [
            "code#1"
        ]

    def test_where_means_matches_where(
        self, store_factory: Callable[[Path], Store], tmp_path: Path
    ) -> None:
        """``where`` in every mode selects exactly the chunks that ``matches_where`` accepts,
        over random metadata (numbers, booleans, strings, None, lists, nested values)."""
        pytest.importorskip("hypothesis", reason="install hypothesis to check `where` semantics")
        from hypothesis import HealthCheck, given, settings
        from hypothesis import strategies as st

        scalars = st.sampled_from(
            [0, 1, 1.0, 2.5, -1, True, False, None, "x", "1", "", "é", "a=b", "it's"]
        )
        nested = st.sampled_from([[1, 2], [True], [1.0, 2], {"k": 1}, {"k": True}, ["x"]])
        values = scalars | nested | st.lists(scalars | nested, max_size=3)
        keys = st.sampled_from(["a", "b", "c", "d=e"])
        metadata = st.dictionaries(keys, values, max_size=3)
        options = (
            scalars
            | nested
            | st.lists(scalars | nested, max_size=3)
            | st.lists(scalars, max_size=3).map(tuple)
            | st.sets(st.sampled_from([0, 1, 1.0, True, "x", None]), max_size=3)
        )
        wheres = st.dictionaries(keys | st.just("zz"), options, max_size=2)
        counter = iter(range(10**6))

        @settings(
            max_examples=15,
            deadline=None,
            database=None,
            derandomize=True,  # the same examples on every run: no flaky kit
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
        )
        @given(data=st.data())
        def check(data: Any) -> None:
            metas = data.draw(st.lists(metadata, min_size=1, max_size=12), label="metadata")
            # Conditions on values that are there (list elements too), and random ones.
            present = [
                (key, item)
                for meta in metas
                for key, value in meta.items()
                for item in (value if isinstance(value, list) else [value])
            ]
            conditions: list[dict[str, Any]] = data.draw(
                st.lists(wheres, min_size=1, max_size=4), label="random conditions"
            )
            if present:
                picked = data.draw(
                    st.lists(st.sampled_from(present), min_size=1, max_size=4), label="present"
                )
                conditions += [{key: item} for key, item in picked]
                conditions.append({key: [item, "absent"] for key, item in picked})
            directory = tmp_path / f"example-{next(counter)}"
            directory.mkdir()
            pieces = [
                (f"chunk {i} {_COMMON}", _vec(1, i % 3, noise=i), meta)
                for i, meta in enumerate(metas)
            ]
            doc = IndexedDocument("doc", "f", _chunks("doc", pieces))
            stored = {c.id: json.loads(json.dumps(c.metadata)) for c in doc.chunks}
            with store_factory(directory) as store:
                store.write([doc])
                for where in conditions:
                    expected = {i for i, m in stored.items() if matches_where(m, where)}
                    for query in (
                        {"vector": _vec(1)},
                        {"text": _COMMON},
                        {"vector": _vec(1), "text": _COMMON},
                    ):
                        got = _ids(store.search(top_k=len(metas) + 5, where=where, **query))
                        assert len(got) == len(set(got))
                        assert set(got) == expected, (where, query)

        check()

    # -- errors ---------------------------------------------------------------------------------

    def test_another_dimension_is_refused_and_nothing_changes(self, filled: Store) -> None:
        before = filled.fingerprints()
        other = Document(
            id="odd#0", content="odd", parent_id="odd", index=0, start=0, end=3,
            embedding=[1.0] * (DIM + 1),
        )
        with pytest.raises(StoreError) as caught:
            filled.write([IndexedDocument("odd", "o1", [other]), _corpus("v2")[0]])
        assert str(DIM) in str(caught.value) and str(DIM + 1) in str(caught.value)
        assert filled.fingerprints() == before
        assert len(filled.search(vector=_vec(1), top_k=100)) == 6
        with pytest.raises(StoreError) as caught:
            filled.search(vector=[1.0] * (DIM - 1), top_k=3)
        assert str(DIM) in str(caught.value) and str(DIM - 1) in str(caught.value)

    def test_close_is_idempotent_and_context_manager_closes(self, store: Store) -> None:
        store.write(_corpus())
        with store as same:
            assert same is store
        store.close()
        store.close()

