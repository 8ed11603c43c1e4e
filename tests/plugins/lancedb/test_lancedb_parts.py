"""Parts of the index written where a pipeline runs (Lance fragments), committed by the store as
they come: the same rows as writes, nothing visible before a commit, and a run that fails
leaves the index as it was (its commits undone, its files removed). The engine here writes its
parts in this process, from a pickled writer, as ragloom-ray's workers do in theirs."""

from __future__ import annotations

import pickle
import shutil
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from ragloom.engines import (
    BatchEvent,
    BatchStats,
    Engine,
    Indexed,
    IndexPart,
    LocalEngine,
    Output,
    PipelineWork,
)
from ragloom.errors import InvalidInputError
from ragloom.ingest import Ingestor
from ragloom.models import Document
from ragloom.stores import IndexedDocument, StoreError, StorePart
from ragloom_lancedb import LanceDBStore

pytest.importorskip("ragloom_text")
pytest.importorskip("ragloom_semantic")

SAMPLE = Path(__file__).resolve().parents[3] / "examples" / "sample-docs"


def chunk(doc: str, i: int, text: str, vector: list[float]) -> Document:
    return Document(
        id=f"{doc}#{i}", content=text, parent_id=doc, index=i, start=0, end=len(text),
        embedding=vector,
    )


def rows(path: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Both tables, every column, rows sorted."""
    import lance

    chunks = lance.dataset(str(path / "chunks.lance")).to_table().to_pylist()
    documents = lance.dataset(str(path / "chunks_documents.lance")).to_table().to_pylist()
    return sorted(chunks, key=lambda r: r["id"]), sorted(documents, key=lambda r: r["document_id"])


def data_files(path: Path) -> set[str]:
    return {p.name for p in (path / "chunks.lance" / "data").glob("*")}


class WritesHere(Engine):
    """The local engine per batch; with an index writer (pickled, as it crosses to a worker)
    every document's outputs are written into a part, as ragloom-ray's workers write them.
    ``hand_back``: a worker that ignores the writer and hands the outputs back. ``fail_after``:
    the run stops after so many batches. ``killed_after``: the run stops once that batch's
    part is written, before it is handed back (a worker killed after writing)."""

    index_writes = True

    def __init__(
        self, hand_back: bool = False, fail_after: int | None = None,
        killed_after: int | None = None,
    ) -> None:
        self.hand_back = hand_back
        self.fail_after = fail_after
        self.killed_after = killed_after
        self.parts = 0

    async def map_batches(
        self, work: PipelineWork, batches: Iterator[Iterator[Document]]
    ) -> AsyncIterator[BatchEvent]:
        assert work.index_writer is not None
        writer = pickle.loads(pickle.dumps(work.index_writer))
        for number, batch in enumerate(batches):
            if number == self.fail_after:
                raise RuntimeError("the cluster went away")
            events = [e async for e in LocalEngine().map_batches(work, iter([batch]))]
            if self.hand_back:
                for event in events:
                    yield event
                continue
            outputs: dict[str, list[Any]] = {}
            for event in events:
                if isinstance(event, Output):
                    outputs.setdefault(event.item.parent_id, []).append(event.item)
            part = writer.write(list(outputs.items()))
            self.parts += 1
            if number == self.killed_after:
                raise RuntimeError("the worker was killed")
            for event in events:
                if isinstance(event, Output):
                    doc_id = event.item.parent_id
                    if event.item is outputs[doc_id][0]:
                        yield Indexed(doc_id, len(outputs[doc_id]))
                    continue
                if isinstance(event, BatchStats):
                    yield IndexPart(part)
                yield event


@pytest.fixture(scope="module")
def docs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("parts") / "docs"
    shutil.copytree(SAMPLE, root, ignore=shutil.ignore_patterns("*.json"))  # no docling here
    for n in range(3):  # several segments, so several parts
        (root / f"more{n}.md").write_text(f"# More {n}\n\n" + "Words to index. " * 40)
    return root


@pytest.fixture(scope="module")
def local(docs: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    index = tmp_path_factory.mktemp("local") / "index"
    with LanceDBStore(index) as store, Ingestor(cache=False, store=store) as ingestor:
        assert ingestor.run([docs]).ok
    return index


def _ingest(docs: Path, index: Path, engine: Engine, monkeypatch: pytest.MonkeyPatch) -> Any:
    import ragloom.ingest._run as run_module

    monkeypatch.setattr(run_module, "SEGMENT_CHARS", 4000)  # batches of a few documents
    monkeypatch.setattr(run_module, "PART_COMMIT_CHUNKS", 1)  # each part committed as it comes
    with LanceDBStore(index) as store, Ingestor(
        cache=False, store=store, engine=engine
    ) as ingestor:
        return ingestor.run([docs])


def test_parts_written_where_the_pipeline_runs_give_the_rows_of_a_local_run(
    docs: Path, local: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refused(*_args: Any) -> None:
        raise AssertionError("the run wrote the index itself")

    engine = WritesHere()
    with monkeypatch.context() as patched:
        patched.setattr(LanceDBStore, "write", refused)
        report = _ingest(docs, tmp_path / "index", engine, patched)
    assert report.ok and engine.parts > 3
    assert report.indexed == report.documents and report.chunks == len(rows(local)[0])
    assert rows(tmp_path / "index") == rows(local)

    # Again, with one document changed: only it is processed, its old chunks replaced.
    (docs / "more0.md").write_text("# More 0\n\nChanged words. " * 3)
    try:
        again = _ingest(docs, tmp_path / "index", WritesHere(), monkeypatch)
        assert (again.documents, again.indexed) == (1, 1) and again.unchanged > 5
        with LanceDBStore(local) as store, Ingestor(cache=False, store=store) as ingestor:
            ingestor.run([docs])
        assert rows(tmp_path / "index") == rows(local)
        with LanceDBStore(tmp_path / "index") as store:
            assert store.check(full=True).ok
    finally:
        (docs / "more0.md").write_text("# More 0\n\n" + "Words to index. " * 40)

    # An engine that hands its outputs back (a worker out of reach of the index): the run
    # writes them itself, same rows.
    back = _ingest(docs, tmp_path / "back", WritesHere(hand_back=True), monkeypatch)
    assert back.indexed == report.indexed
    with LanceDBStore(local) as store, Ingestor(cache=False, store=store) as ingestor:
        ingestor.run([docs])
    assert rows(tmp_path / "back") == rows(local)


def test_a_run_that_fails_leaves_the_index_as_it_was(
    docs: Path, local: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A new index: the parts committed before the failure are undone, the tables dropped.
    fresh = tmp_path / "fresh"
    with pytest.raises(RuntimeError, match="went away"):
        _ingest(docs, fresh, WritesHere(fail_after=3), monkeypatch)
    assert not (fresh / "chunks.lance").exists()
    assert not (fresh / "chunks_documents.lance").exists()

    # An index with documents: as it was (the first batch's commit undone), and once closed,
    # no file of the run left behind.
    index = tmp_path / "index"
    shutil.copytree(local, index)
    before, files = rows(index), data_files(index)
    # two batches: the part of the first is written, then the run fails
    (docs / "guides" / "caching.md").write_text("# Caching\n\nChanged too.\n")
    (docs / "more1.md").write_text("# More 1\n\n" + "Changed. " * 500)
    try:
        engine = WritesHere(fail_after=1)
        with pytest.raises(RuntimeError, match="went away"):
            _ingest(docs, index, engine, monkeypatch)
        assert engine.parts == 1
    finally:
        (docs / "more1.md").write_text("# More 1\n\n" + "Words to index. " * 40)
        shutil.copy(SAMPLE / "guides" / "caching.md", docs / "guides" / "caching.md")
    assert rows(index) == before and data_files(index) == files
    with LanceDBStore(index) as store:
        assert store.check(full=True).ok

    # A part written and never handed back (its worker killed before its result reached the
    # run): no commit to undo, and its files are removed all the same.
    (docs / "guides" / "caching.md").write_text("# Caching\n\nChanged once more.\n")
    try:
        engine = WritesHere(killed_after=0)
        with pytest.raises(RuntimeError, match="worker was killed"):
            _ingest(docs, index, engine, monkeypatch)
        assert engine.parts == 1
    finally:
        shutil.copy(SAMPLE / "guides" / "caching.md", docs / "guides" / "caching.md")
    assert rows(index) == before and data_files(index) == files


def test_commit_parts_checks_what_it_is_given_and_changes_nothing_when_refused(
    tmp_path: Path,
) -> None:
    with LanceDBStore(tmp_path / "a") as store, LanceDBStore(tmp_path / "b") as other:
        store.write([IndexedDocument("a", "a1", [chunk("a", 0, "alpha", [1.0, 0.0, 0.0])])])
        writer = store.part_writer()
        part = writer.write([("b", [chunk("b", 0, "beta", [0.0, 1.0, 0.0])])])
        assert isinstance(part, StorePart) and part.documents == (("b", 1),)
        assert store.fingerprints() == {"a": "a1"}  # written, not visible
        with pytest.raises(InvalidInputError, match="'b', which the commit does not record"):
            store.commit_parts({"c": "c1"}, [part])
        with pytest.raises(InvalidInputError, match="empty fingerprint"):
            store.commit_parts({"b": ""}, [part])
        with pytest.raises(InvalidInputError, match="in two parts"):
            store.commit_parts({"b": "b1"}, [part, part])
        with pytest.raises(InvalidInputError, match="did not write"):
            other.commit_parts({"b": "b1"}, [part])
        with pytest.raises(StoreError, match="dimension 3.*dimension 2"):
            writer.write([("c", [chunk("c", 0, "gamma", [1.0, 0.0])])])
        with pytest.raises(InvalidInputError, match="no embedding"):
            writer.write([("c", [Document(id="c#0", content="x", parent_id="c")])])
        assert store.fingerprints() == {"a": "a1"}
        # "a" replaced (it has no part: no chunks now), "b" added
        store.commit_parts({"a": "a2", "b": "b1"}, [part])
        assert store.fingerprints() == {"a": "a2", "b": "b1"}
        assert [r.chunk.id for r in store.search(vector=[0.0, 1.0, 0.0])] == ["b#0"]
        assert store.check(full=True).ok
