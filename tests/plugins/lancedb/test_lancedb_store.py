"""LanceDBStore beyond the contract: bad input, read-only and damaged directories, crashes."""

from __future__ import annotations

import json
import math
import os
import stat
import subprocess
import sys
import textwrap
from importlib.metadata import entry_points
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ragloom.errors import InvalidInputError
from ragloom.models import Document
from ragloom.stores import IndexedDocument, StoreError, matches_where
from ragloom_lancedb import LanceDBStore
from ragloom_lancedb._where import condition_tokens, metadata_tokens


def chunk(doc: str, i: int, text: str, vector: list[float], **metadata) -> Document:
    return Document(
        id=f"{doc}#{i}", content=text, parent_id=doc, index=i, start=0, end=len(text),
        metadata=metadata, embedding=vector,
    )


def corpus(fingerprint: str = "1") -> list[IndexedDocument]:
    return [
        IndexedDocument("a", f"a{fingerprint}", [chunk("a", 0, "alpha apples", [1.0, 0.0, 0.0])]),
        IndexedDocument("b", f"b{fingerprint}", [
            chunk("b", 0, "beta bananas", [0.0, 1.0, 0.0], lang="en"),
            chunk("b", 1, "beta berries", [0.0, 0.9, 0.1], lang="fr"),
        ]),
    ]


def snapshot(store: LanceDBStore) -> tuple[dict[str, str], list[str]]:
    found = store.search(vector=[1.0, 1.0, 1.0], top_k=100)
    return store.fingerprints(), sorted(r.chunk.id for r in found)


# -- packaging ----------------------------------------------------------------------------------


def test_registered_and_lazy() -> None:
    (ep,) = [e for e in entry_points(group="ragloom.stores") if e.name == "lancedb"]
    assert ep.load() is LanceDBStore
    code = (
        "import sys, ragloom_lancedb, ragloom_lancedb.store as s; "
        "s.LanceDBStore('unused'); "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('lancedb', 'pyarrow')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"  # neither at import nor when a store is built


def test_config_rebuilds_and_bad_parameters(tmp_path) -> None:
    store = LanceDBStore(tmp_path / "x", table="t1", hybrid_k=5, hybrid_candidates=7)
    rebuilt = LanceDBStore(**store.config())
    assert rebuilt.config() == store.config()
    assert LanceDBStore(**rebuilt.config()).config_hash == rebuilt.config_hash
    with pytest.raises(ValueError, match="table"):
        LanceDBStore(tmp_path, table="../evil")
    with pytest.raises(ValueError, match="hybrid_k"):
        LanceDBStore(tmp_path, hybrid_k=0)
    with LanceDBStore(tmp_path) as s, pytest.raises(ValueError, match="top_k"):
        s.search(text="x", top_k=0)


# -- where tokens mean matches_where -----------------------------------------------------------

_scalars = st.one_of(
    st.sampled_from([0, 1, -0.0, 1.0, 2.5, 2**53, 2**53 + 1, float(2**53), True, False, None,
                     "", "1", "true", "x", "a=b", "3:abc", float("inf"), float("nan")]),
    st.integers(-3, 3), st.floats(-2, 2, width=16), st.text(max_size=3),
)
_nested = st.recursive(
    _scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.text(max_size=2), inner, max_size=2
    ), max_leaves=5,
)
_meta = st.dictionaries(st.sampled_from(["k", "l", "k=1", ""]), _nested, max_size=3)
_options = _nested | st.lists(_nested, max_size=3).map(tuple) | st.sets(
    st.sampled_from([0, 1, 1.0, True, False, None, "x", 2.5]), max_size=3
)
_where = st.dictionaries(st.sampled_from(["k", "l", "k=1", "", "m"]), _options, max_size=2)


@settings(max_examples=400, deadline=None)
@given(metadata=_meta, where=_where)
def test_tokens_agree_with_matches_where(metadata, where) -> None:
    stored = json.loads(json.dumps(metadata))  # what the store keeps and gives back
    tokens = set(metadata_tokens(stored))
    assert set(metadata_tokens(metadata)) == tokens  # tokens need no JSON round trip
    ours = all(tokens & set(condition_tokens(key, wanted)) for key, wanted in where.items())
    assert ours == matches_where(stored, where)


def test_tokens_of_numbers_and_booleans() -> None:
    assert metadata_tokens({"n": 1}) == metadata_tokens({"n": 1.0})
    assert metadata_tokens({"n": True}) != metadata_tokens({"n": 1})
    assert metadata_tokens({"n": [[True]]}) == metadata_tokens({"n": [[1]]})  # nested: ==
    assert metadata_tokens({"n": math.nan}) == []
    assert condition_tokens("n", [(1, 2)]) == []  # a tuple never equals JSON's lists


# -- bad input changes nothing ------------------------------------------------------------------


def test_bad_input_is_refused_before_anything_is_written(tmp_path) -> None:
    with LanceDBStore(tmp_path) as store:
        store.write(corpus())
        before = snapshot(store)
        no_vector = Document(id="c#0", content="x", parent_id="c", index=0, start=0, end=1)
        bad = [
            ([IndexedDocument("c", "c1", [no_vector])], "no embedding"),
            ([IndexedDocument("c", "c1", [chunk("c", 0, "x", [1.0, 0, 0], when={1, 2})])],
             "not JSON"),
            ([IndexedDocument("c", "", [])], "empty fingerprint"),
            ([IndexedDocument("c", "1"), IndexedDocument("c", "2")], "twice"),
            ([("c", "1", [])], "IndexedDocument"),
            ([IndexedDocument("c", "c1", ["text"])], "not a Document"),
        ]
        for documents, message in bad:
            with pytest.raises(InvalidInputError, match=message):
                store.write([corpus("2")[0], *documents])
            assert snapshot(store) == before
        with pytest.raises(StoreError, match="dimension 3.*dimension 2"):
            store.write([IndexedDocument("c", "c1", [chunk("c", 0, "x", [1.0, 0.0])])])
        with pytest.raises(StoreError, match="NaN"):
            store.search(vector=[math.nan, 0, 0])
        with pytest.raises(StoreError, match="mode"):
            store.search(text="x", mode="semantic")  # type: ignore[arg-type]
        with pytest.raises(InvalidInputError):
            store.delete("a")
        assert snapshot(store) == before


def test_first_write_with_two_dimensions_is_refused(tmp_path) -> None:
    with LanceDBStore(tmp_path) as store:
        mixed = [chunk("a", 0, "x", [1.0, 0.0]), chunk("a", 1, "y", [1.0, 0.0, 0.0])]
        with pytest.raises(StoreError, match=f"{tmp_path}.*dimension 2.*dimension 3"):
            store.write([IndexedDocument("a", "a1", mixed)])
        assert store.fingerprints() == {} and store.info().dimension is None


def test_dimension_is_forgotten_by_clear_only(tmp_path) -> None:
    with LanceDBStore(tmp_path) as store:
        store.write(corpus())
        store.delete(["a", "b"])
        assert store.info().dimension == 3  # an empty table keeps its schema
        with pytest.raises(StoreError, match="dimension 3"):
            store.write([IndexedDocument("c", "c1", [chunk("c", 0, "x", [1.0, 0.0])])])
        store.clear()
        store.write([IndexedDocument("c", "c1", [chunk("c", 0, "x", [1.0, 0.0])])])
        assert store.info().dimension == 2


def test_odd_document_ids_and_many_at_once(tmp_path) -> None:
    odd = ["it's", 'quo"te', "back\\slash", "ünï 🙂", "a' OR '1'='1", "semi;colon"]
    many = [f"doc-{i}" for i in range(2500)]  # more than one IN (...) list
    with LanceDBStore(tmp_path) as store:
        store.write([
            IndexedDocument(d, "f", [chunk(d, 0, f"text {d}", [1.0, 0.5], key=d, all="x")])
            for d in odd
        ])
        for d in odd:  # metadata values with quotes, backslashes and SQL in them
            found = store.search(vector=[1.0, 0.5], text="text", where={"key": d, "all": "x"})
            assert [r.chunk.parent_id for r in found] == [d]
        store.write([IndexedDocument(d, "f") for d in many])
        assert set(store.fingerprints()) == set(odd) | set(many)
        assert store.delete([odd[0], odd[4]]) == 2
        found = {r.chunk.parent_id for r in store.search(vector=[1.0, 0.5], top_k=100)}
        assert found == set(odd) - {odd[0], odd[4]}
        assert store.delete(many) == 2500
        assert set(store.fingerprints()) == set(odd) - {odd[0], odd[4]}


def test_zero_vectors_are_found_by_text_only(tmp_path) -> None:
    with LanceDBStore(tmp_path) as store:
        store.write([IndexedDocument("z", "z1", [chunk("z", 0, "zero vector here", [0.0, 0.0])]),
                     IndexedDocument("o", "o1", [chunk("o", 0, "other vector", [1.0, 0.0])])])
        assert [r.chunk.id for r in store.search(vector=[1.0, 0.0], top_k=5)] == ["o#0"]
        assert [r.chunk.id for r in store.search(text="zero", top_k=5)] == ["z#0"]
        hybrid = store.search(vector=[1.0, 0.0], text="zero", top_k=5)
        assert {r.chunk.id for r in hybrid} == {"o#0", "z#0"}


def test_a_closed_store_says_so(tmp_path) -> None:
    store = LanceDBStore(tmp_path)
    store.write(corpus())
    store.close()
    with pytest.raises(StoreError, match="closed"):
        store.search(text="alpha")
    with pytest.raises(StoreError, match="closed"):
        store.write(corpus())


def test_a_second_handle_sees_every_commit(tmp_path) -> None:
    with LanceDBStore(tmp_path) as writer, LanceDBStore(tmp_path) as reader:
        assert reader.search(text="alpha") == []
        writer.write(corpus())
        assert [r.chunk.id for r in reader.search(text="alpha")] == ["a#0"]
        writer.delete(["a"])
        assert reader.search(text="alpha") == [] and set(reader.fingerprints()) == {"b"}


# -- read-only and damaged directories ----------------------------------------------------------


def _chmod_tree(root: Path, writable: bool) -> None:
    for path in [root, *root.rglob("*")]:
        mode = stat.S_IMODE(path.stat().st_mode)
        mode = mode | stat.S_IWUSR if writable else mode & ~0o222
        path.chmod(mode)


def test_read_only_directory_reads_and_refuses_writes(tmp_path) -> None:
    root = tmp_path / "index"
    with LanceDBStore(root) as store:
        store.write(corpus())
        expected = snapshot(store)
    files = sorted(p.relative_to(root) for p in root.rglob("*"))
    _chmod_tree(root, writable=False)
    try:
        with LanceDBStore(root) as store:
            assert snapshot(store) == expected
            assert [r.chunk.id for r in store.search(text="beta", where={"lang": "fr"})] == ["b#1"]
            assert store.info().documents == 2
            for attempt in (
                lambda: store.write(corpus("2")),
                lambda: store.delete(["a"]),
                store.clear,
            ):
                with pytest.raises(StoreError, match=f"{root} is read-only.*nothing was changed"):
                    attempt()
            assert snapshot(store) == expected
        assert sorted(p.relative_to(root) for p in root.rglob("*")) == files
    finally:
        _chmod_tree(root, writable=True)
    with LanceDBStore(root) as store:
        assert snapshot(store) == expected


def test_read_only_parent_of_a_new_store(tmp_path) -> None:
    parent = tmp_path / "locked"
    parent.mkdir()
    parent.chmod(0o555)
    try:
        with LanceDBStore(parent / "index") as store:
            assert store.search(text="x") == [] and store.fingerprints() == {}
            with pytest.raises(StoreError, match="read-only"):
                store.write(corpus())
        assert not (parent / "index").exists()
    finally:
        parent.chmod(0o755)


def test_a_file_instead_of_a_directory(tmp_path) -> None:
    path = tmp_path / "index"
    path.write_text("not a store")
    with LanceDBStore(path) as store:
        for attempt in (lambda: store.search(text="x"), lambda: store.write(corpus())):
            with pytest.raises(StoreError, match=f"{path}: the path is not a directory"):
                attempt()
    assert path.read_text() == "not a store"


@pytest.mark.parametrize("damage", ["manifest", "data", "schema"])
def test_a_damaged_directory_names_the_path(tmp_path, damage) -> None:
    root = tmp_path / "index"
    with LanceDBStore(root) as store:
        store.write(corpus())
    table = root / "chunks.lance"
    if damage == "manifest":
        for manifest in (table / "_versions").glob("*.manifest"):
            manifest.write_bytes(b"garbage")
    elif damage == "data":
        for data in (table / "data").glob("*.lance"):
            data.write_bytes(b"garbage" * 10)
    else:
        import lancedb
        import pyarrow as pa

        lancedb.connect(str(root)).create_table(
            "chunks", data=pa.table({"id": ["x"], "text": ["another app's table"]}),
            mode="overwrite",
        )
    files = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    with LanceDBStore(root) as store:
        with pytest.raises(StoreError) as caught:
            store.search(vector=[1.0, 0.0, 0.0], text="alpha")
        message = str(caught.value)
        assert str(root) in message and "\n" not in message
        error = caught.value  # no LanceDB or Arrow traceback chained to it
        assert error.__cause__ is None and (error.__context__ is None or error.__suppress_context__)
        if damage == "schema":
            assert "not written by ragloom-lancedb" in message
        again = IndexedDocument("a", "a2", [chunk("a", 0, "gamma", [0.0, 0.0, 1.0])])
        with pytest.raises(StoreError, match=str(root)):
            store.write([again])  # replacing a document reads the damaged table
        if damage == "data":
            # A write that fails half-way is rolled back: the documents are as they were.
            assert store.fingerprints() == {"a": "a1", "b": "b1"}
    after = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    # Nothing removed or rewritten (LanceDB's hint of the latest version aside).
    kept = {p: b for p, b in files.items() if p.name != "latest_version_hint.json"}
    assert {p: after.get(p) for p in kept} == kept


# -- a crash in the middle of a write -----------------------------------------------------------

_CRASH = """
import os, sys
from lancedb.table import LanceTable
from ragloom.models import Document
from ragloom.stores import IndexedDocument
from ragloom_lancedb import LanceDBStore

def dies(self, *args, **kwargs):  # the process dies after the old chunks were deleted
    os._exit(3)

LanceTable.add = dies
new = [
    IndexedDocument(d, d + "2", [
        Document(id=d + "#0", content="new " + d, parent_id=d, index=0, start=0, end=4 + len(d),
                 embedding=[0.5, 0.5, 0.0])
    ])
    for d in ("a", "c")
]
LanceDBStore(sys.argv[1]).write(new)
"""


def test_a_crash_mid_write_is_repaired_by_the_next_write(tmp_path) -> None:
    root = tmp_path / "index"
    with LanceDBStore(root) as store:
        store.write(corpus())
    script = tmp_path / "crash.py"
    script.write_text(textwrap.dedent(_CRASH))
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    died = subprocess.run([sys.executable, str(script), str(root)], env=env, check=False)
    assert died.returncode == 3
    with LanceDBStore(root) as store:
        # The documents of the interrupted call are unfinished; the others are untouched.
        assert store.fingerprints() == {"a": "", "b": "b1", "c": ""}
        assert {r.chunk.parent_id for r in store.search(vector=[1.0, 1.0, 0.0], top_k=9)} == {
            "b"
        }
        # The next ingest sees fingerprints that differ and writes the documents again.
        again = [
            IndexedDocument(d, d + "2", [chunk(d, 0, f"new {d}", [0.5, 0.5, 0.0])])
            for d in ("a", "c")
        ]
        store.write(again)
        assert store.fingerprints() == {"a": "a2", "b": "b1", "c": "c2"}
        found = sorted(r.chunk.id for r in store.search(vector=[1.0, 1.0, 0.0], top_k=9))
        assert found == ["a#0", "b#0", "b#1", "c#0"]
        assert [r.chunk.content for r in store.search(text="new", where=None, top_k=9)] != []


def test_close_folds_only_a_large_tail(tmp_path, monkeypatch) -> None:
    from ragloom_lancedb import store as module

    def tail(store: LanceDBStore) -> int:
        return store.info().details["rows_not_in_text_index"]

    with LanceDBStore(tmp_path) as store:
        store.write(corpus())
        assert tail(store) == 0  # the index is built at the first write
        store.write(corpus("2"))
        assert tail(store) == 3
    with LanceDBStore(tmp_path) as store:
        assert tail(store) == 3  # a small tail stays: folding rewrites the table
        store.optimize()
        assert tail(store) == 0 and [r.chunk.id for r in store.search(text="apples")] == ["a#0"]
        store.write(corpus("3"))
        monkeypatch.setattr(module, "_FOLD_TAIL", 2)
    with LanceDBStore(tmp_path) as store:
        assert tail(store) == 0  # more than _FOLD_TAIL rows: close folded them
        assert store.fingerprints() == {"a": "a3", "b": "b3"}


# -- reading an index back ----------------------------------------------------------------------


def test_chunks_reads_documents_back_whole_in_order(tmp_path) -> None:
    import numpy as np

    store = LanceDBStore(tmp_path / "index")
    assert store.chunks() == {}
    docs = corpus()
    store.write(list(reversed(docs)) + [IndexedDocument("empty", "e1")])
    found = store.chunks()
    assert list(found) == ["a", "b"]  # sorted by document; one without chunks has no entry
    for doc in docs:
        # as written, the vectors as the float32 the store keeps
        assert found[doc.document_id] == [
            c.model_copy(update={"embedding": np.float32(c.embedding).tolist()})
            for c in doc.chunks
        ]
    assert found["b"][1].embedding == np.float32([0.0, 0.9, 0.1]).tolist() != [0.0, 0.9, 0.1]
    assert store.chunks(["b", "missing", "b"]) == {"b": found["b"]}
    assert store.chunks([]) == {}
    with pytest.raises(InvalidInputError, match="not one string"):
        store.chunks("a")
    store.delete(["a"])
    assert list(store.chunks()) == ["b"]
    store.close()


def test_writes_fold_every_so_many_rows_and_leave_the_vector_index(tmp_path, monkeypatch) -> None:
    """A fold touches only what was written since the last one (test_lancedb_bounded.py), so
    folds come every _OPTIMIZE_ROWS rows; neither they nor close build the vector index."""
    from ragloom_lancedb import store as module

    monkeypatch.setattr(module, "_OPTIMIZE_ROWS", 10)
    monkeypatch.setattr(module, "_COMMIT_ROWS", 0)
    monkeypatch.setattr(module, "_FOLD_TAIL", 1)
    folded_at: list[int] = []
    fold = module.LanceDBStore._optimize

    def spy(self, vectors=True):
        folded_at.append((self._chunks.count_rows(), vectors))
        fold(self, vectors)

    monkeypatch.setattr(module.LanceDBStore, "_optimize", spy)
    with LanceDBStore(tmp_path, vector_index_rows=None) as store:
        for n in range(15):
            doc = f"d{n}"
            store.write([IndexedDocument(doc, "1", [
                chunk(doc, i, f"text {n} {i}", [1.0, float(i), 0.0]) for i in range(5)
            ])])
        assert folded_at == [(rows, False) for rows in range(10, 80, 10)]
        assert len(store.chunks()) == 15
    assert folded_at[-1] == (75, False)  # close folded the tail, without the vector index


def test_values_of_a_metadata_key_are_counted_per_document_and_chunk(tmp_path) -> None:
    # counted with Arrow over two columns; the meaning is the chunks' metadata read one by one
    v = [1.0, 0.0, 0.0]
    store = LanceDBStore(tmp_path / "index")
    store.write([
        IndexedDocument("a", "1", [chunk("a", 0, "x", v, team=["ops", "web", "ops"]),
                                   chunk("a", 1, "y", v, team="web"), chunk("a", 2, "z", v)]),
        IndexedDocument("b", "1", [chunk("b", 0, "x", v, team="db"), chunk("b", 1, "y", v,
                                                                           team=7)]),
        IndexedDocument("c", "1", [chunk("c", 0, "x", v)]),
        IndexedDocument("d", "1", []),
    ])
    counts: dict = {}
    values: dict = {}
    for document, listed in store.chunks(vectors=False).items():
        values[document] = []
        for c in listed:
            team = c.metadata.get("team")
            names = [t for t in (team if isinstance(team, list) else [team])
                     if isinstance(t, str)]
            for name in list(dict.fromkeys(names)) or [None]:
                docs, chunks = counts.get(name, (set(), 0))
                counts[name] = (docs | {document}, chunks + 1)
            values[document] += [n for n in dict.fromkeys(names) if n not in values[document]]
    expected = {k: (len(d), n) for k, (d, n) in counts.items()}
    assert store.count_values("team") == expected == {
        "db": (1, 1), "ops": (1, 1), "web": (1, 2), None: (3, 3)
    }
    assert list(store.count_values("team")) == ["db", "ops", "web", None]
    assert store.document_values("team") == values == {
        "a": ["ops", "web"], "b": ["db"], "c": []
    }
    store.write([IndexedDocument("c", "2", [chunk("c", 0, "x", v, team="web")])])
    assert store.count_values("team")["web"] == (2, 3)  # a write is seen (a new version)
    assert store.document_values("team")["c"] == ["web"]
    store.close()
