"""Searches read the index through Lance (no LanceDB client) and never see a write half done."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest
from ragloom.models import Document
from ragloom.stores import IndexedDocument, StoreError
from ragloom_lancedb import LanceDBStore

pytest.importorskip("lance", reason='needs pylance, a dependency of ragloom-lancedb')


def chunk(doc: str, i: int, text: str, vector: list[float], **metadata) -> Document:
    return Document(
        id=f"{doc}#{i}", content=text, parent_id=doc, index=i, start=0, end=len(text),
        metadata=metadata, embedding=vector,
    )


def corpus(word: str = "apples") -> list[IndexedDocument]:
    return [
        IndexedDocument("a", f"a-{word}", [chunk("a", 0, f"alpha {word}", [1.0, 0.0, 0.0])]),
        IndexedDocument("b", "b1", [
            chunk("b", 0, "beta bananas", [0.0, 1.0, 0.0], lang="en"),
            chunk("b", 1, "beta berries and apples", [0.0, 0.9, 0.1], lang="fr"),
        ]),
    ]


SEARCHES = [
    {"vector": [1.0, 0.2, 0.0], "top_k": 3},
    {"text": "apples beta", "top_k": 3},
    {"vector": [1.0, 0.2, 0.0], "text": "apples", "top_k": 3},
    {"vector": [1.0, 0.2, 0.0], "text": "beta", "top_k": 3, "where": {"lang": "fr"}},
]


def found(store: LanceDBStore) -> list[list[tuple[str, float]]]:
    return [
        [(hit.chunk.id, round(hit.score, 6)) for hit in store.search(**search)]
        for search in SEARCHES
    ]


def test_a_fresh_process_searches_through_lance_with_lancedbs_results(tmp_path) -> None:
    path = tmp_path / "index"
    writer = LanceDBStore(path)
    writer.write(corpus())
    expected = found(writer)  # this handle wrote: it reads through its LanceDB connection
    chunks = {k: [c.id for c in v] for k, v in writer.chunks(["b"]).items()}
    writer.close()
    child = textwrap.dedent(
        """
        import json, sys
        from ragloom_lancedb import LanceDBStore
        sys.path.insert(0, sys.argv[2])
        from test_lancedb_read_path import found
        store = LanceDBStore(sys.argv[1])
        out = {"found": found(store), "dimension": store.dimension,
               "chunks": {k: [c.id for c in v] for k, v in store.chunks(["b"]).items()},
               "version": store.read_version(), "lancedb": "lancedb" in sys.modules}
        print(json.dumps(out))
        """
    )
    here = str(__import__("pathlib").Path(__file__).parent)
    done = subprocess.run([sys.executable, "-c", child, str(path), here],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["lancedb"] is False
    assert [[tuple(hit) for hit in hits] for hits in out["found"]] == expected
    assert out["dimension"] == 3 and out["chunks"] == chunks
    assert out["version"] is not None


def test_searches_keep_the_last_whole_version_while_a_write_is_half_done(
    tmp_path, monkeypatch
) -> None:
    path = tmp_path / "index"
    writer = LanceDBStore(path)
    writer.write(corpus())
    reader = LanceDBStore(path)
    before, version = found(reader), reader.read_version()
    assert version is not None and before[0][0][0] == "a#0"

    def crash(*args, **kwargs):
        raise OSError("disk on fire")

    chunks, _ = writer._tables()
    monkeypatch.setattr(chunks, "add", crash)  # a crash after the old chunks were deleted
    # ...of a process killed there: nothing rolls the write back
    monkeypatch.setattr(writer, "_roll_back", lambda *versions: False)
    with pytest.raises(StoreError, match="disk on fire"):
        writer.write(corpus("pears")[:1])
    assert writer.fingerprints()["a"] == ""  # left unfinished
    assert "a#0" not in [h.chunk.id for h in writer.search(vector=[1.0, 0, 0], top_k=3)]
    # the reader still searches the version before that write began
    assert found(reader) == before and reader.read_version() == version
    monkeypatch.undo()
    writer.write(corpus("pears")[:1])  # the next ingest writes the document again
    after = found(reader)
    assert reader.read_version() not in (None, version)
    assert after[0][0][0] == "a#0"
    hit = reader.search(text="pears", top_k=1)[0]
    assert hit.chunk.content == "alpha pears"
    writer.close()
    reader.close()


def test_a_reader_that_opened_lancedb_for_its_info_keeps_reading_through_lance(tmp_path) -> None:
    # fitting routes or `index info` opens a LanceDB connection: the handle only read, so its
    # searches keep the Lance path and its read version (what `ragloom serve` keeps answers by)
    path = tmp_path / "index"
    writer = LanceDBStore(path)
    writer.write(corpus())
    expected = found(writer)
    writer.close()
    reader = LanceDBStore(path)
    version = reader.read_version()
    assert reader.info().documents == 2  # through LanceDB
    assert reader.read_version() == version is not None
    assert found(reader) == expected
    reader.delete(["a"])  # a handle that writes reads through LanceDB: no version
    assert reader.read_version() is None
    reader.close()


def test_searches_through_lance_return_the_rows_they_rank(tmp_path) -> None:
    """Through Lance a search ranks row ids and reads only the rows it returns: over several
    files and after a delete, each chunk comes back whole (text, metadata, offsets), as the
    LanceDB handle that wrote it finds it."""
    path = tmp_path / "index"
    writer = LanceDBStore(path)

    def document(n: int) -> IndexedDocument:
        texts = [f"topic{i} words of file {n} " + "x" * i for i in range(8)]
        return IndexedDocument(f"d{n}", f"f{n}", [
            Document(
                id=f"d{n}#{i}", content=text, parent_id=f"d{n}", index=i, start=40 * i,
                end=40 * i + len(text), metadata={"file": n, "part": i},
                embedding=[1.0, n / 4, i / 8],
            )
            for i, text in enumerate(texts)
        ])

    writer.write([document(0), document(1)])
    writer.write([document(3)])  # a second file: row ids of two files
    writer.delete(["d1"])
    searches = [
        {"vector": [1.0, 0.5, 0.5], "text": "topic3 words", "top_k": 4},
        {"vector": [1.0, 0.0, 0.9], "top_k": 5},
        {"text": "topic2 file", "top_k": 3, "where": {"part": 2}},
    ]

    def whole(store: LanceDBStore) -> list[list[tuple[object, ...]]]:
        return [
            [
                (h.chunk.id, h.chunk.content, h.chunk.metadata, h.chunk.start, h.chunk.end,
                 h.chunk.parent_id, h.chunk.index, round(h.score, 6))
                for h in store.search(**search)
            ]
            for search in searches
        ]

    expected = whole(writer)
    writer.close()
    reader = LanceDBStore(path)
    try:
        assert reader._snapshot() is not None  # reads through Lance
        got = whole(reader)
    finally:
        reader.close()
    assert got == expected
    assert [len(hits) for hits in got] == [4, 5, 2]
    assert all(not hit[0].startswith("d1#") for hits in got for hit in hits)


def test_a_search_begun_before_an_optimize_finishes_on_the_newest_version(
    tmp_path, monkeypatch
) -> None:
    # optimize rewrites the chunks' files and removes the old version at once: a search that
    # took its version before (in flight meanwhile) finds its files gone, and searches the
    # newest version instead of failing
    path = tmp_path / "index"
    for n in range(4):
        writer = LanceDBStore(path)
        writer.write(corpus() if n == 0 else corpus(f"w{n}")[:1])
        writer.close()
    reader = LanceDBStore(path)
    found(reader)
    began = reader._snapshot()
    optimizer = LanceDBStore(path)
    optimizer.take_writer_lock()
    optimizer.optimize()
    optimizer.close()
    fresh = LanceDBStore(path)
    expected = found(fresh)  # what the newest version finds (its full-text statistics changed)
    fresh.close()
    newest = reader._snapshot
    versions = iter([began])
    monkeypatch.setattr(reader, "_snapshot", lambda: next(versions, None) or newest())
    assert found(reader) == expected
    # a search of a version nobody replaced fails as it did
    monkeypatch.setattr(reader, "_snapshot", newest)
    monkeypatch.setattr(reader, "_vector", lambda *a, **k: (_ for _ in ()).throw(
        StoreError("disk on fire")))
    with pytest.raises(StoreError, match="disk on fire"):
        reader.search(vector=[1.0, 0.0, 0.0], top_k=1)
    reader.close()
