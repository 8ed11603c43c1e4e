"""Ingesting into an index: unchanged files are recognised by their bytes (not loaded again),
and an index of another dimension is refused before any file is read."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from ragloom.embedding import Embedder
from ragloom.ingest import Ingestor
from ragloom.loaders_builtin import LoaderSet, TextLoader
from ragloom.stores import ScoredChunk, Store, StoreError, StoreInfo

pytest.importorskip("ragloom_text")


class CountingLoader(TextLoader):
    """Plain text, counting the files it loads."""

    step_id = "test/counting-text"
    loaded: list[str] = []

    def __init__(self, tag: str = "") -> None:
        self.tag = tag

    def config(self) -> dict[str, Any]:
        return {"tag": self.tag}

    def load(self, source):
        type(self).loaded.append(source.path.rsplit("/", 1)[-1])
        return super().load(source)


class Lengths(Embedder):
    step_id = "test/lengths"

    def __init__(self, size: int = 2) -> None:
        self.size = size

    def config(self) -> dict[str, Any]:
        return {"size": self.size}

    @property
    def dimension(self) -> int:
        return self.size

    def embed(self, texts):
        return [[float(len(t))] + [1.0] * (self.size - 1) for t in texts]


class MemoryStore(Store):
    """Documents in a dict: enough of a store for ingestion."""

    step_id = "test/memory-store"

    def __init__(self) -> None:
        self.docs: dict[str, tuple[str, list[Any]]] = {}
        self.writes = 0

    def config(self) -> dict[str, Any]:
        return {}

    def write(self, documents) -> None:
        self.writes += 1
        for doc in documents:
            self.docs[doc.document_id] = (doc.fingerprint, list(doc.chunks))

    def delete(self, document_ids) -> int:
        gone = [d for d in document_ids if d in self.docs]
        for d in gone:
            del self.docs[d]
        return len(gone)

    def fingerprints(self) -> dict[str, str]:
        return {d: p for d, (p, _) in self.docs.items()}

    def search(self, **_: Any) -> list[ScoredChunk]:
        return []

    def info(self) -> StoreInfo:
        chunks = [c for _, listed in self.docs.values() for c in listed]
        dimension = len(chunks[0].embedding) if chunks else None
        return StoreInfo("memory", len(self.docs), len(chunks), dimension)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    root.mkdir()
    for name in ("a", "b", "c"):
        (root / f"{name}.txt").write_text(f"The file {name}. " * 80, encoding="utf-8")
    return root


def run(folder: Path, store: Store, cache: Any, tag: str = "", **options: Any) -> Any:
    CountingLoader.loaded = []
    loaders = LoaderSet({"text": CountingLoader(tag)})
    with Ingestor(store=store, cache=cache, embedder=Lengths(), loaders=loaders,
                  chunk_size=200, **options) as ingestor:
        return ingestor.run([folder])


def test_unchanged_files_are_not_loaded_again(folder: Path, tmp_path: Path) -> None:
    store = MemoryStore()
    cache = tmp_path / "cache.sqlite"
    first = run(folder, store, cache)
    assert (first.indexed, first.unchanged) == (3, 0)
    assert sorted(CountingLoader.loaded) == ["a.txt", "b.txt", "c.txt"]
    indexed = dict(store.docs)

    again = run(folder, store, cache)
    assert (again.indexed, again.unchanged, again.documents, again.chunks) == (0, 3, 0, 0)
    assert CountingLoader.loaded == []  # recognised by their bytes
    assert again.bytes_read == first.bytes_read and again.ok

    (folder / "b.txt").write_text("The file b, edited. " * 60, encoding="utf-8")
    edited = run(folder, store, cache)
    assert (edited.indexed, edited.unchanged) == (1, 2)
    assert CountingLoader.loaded == ["b.txt"]
    assert store.docs["a.txt"] == indexed["a.txt"] and store.docs["b.txt"] != indexed["b.txt"]

    # The index no longer holds what the bytes gave: the files are loaded and indexed again.
    store.docs["c.txt"] = ("stale", [])
    repaired = run(folder, store, cache)
    assert CountingLoader.loaded == ["c.txt"] and repaired.indexed == 1
    assert store.docs["c.txt"] == indexed["c.txt"]

    # Another loader identity: every file is loaded (and found unchanged in the index).
    other = run(folder, store, cache, tag="v2")
    assert sorted(CountingLoader.loaded) == ["a.txt", "b.txt", "c.txt"]
    assert (other.indexed, other.unchanged) == (0, 3)


def test_without_a_cache_every_file_is_loaded(folder: Path) -> None:
    store = MemoryStore()
    run(folder, store, False)
    again = run(folder, store, False)
    assert sorted(CountingLoader.loaded) == ["a.txt", "b.txt", "c.txt"]
    assert (again.indexed, again.unchanged) == (0, 3)


def test_a_jsonl_output_loads_every_file(folder: Path, tmp_path: Path) -> None:
    store = MemoryStore()
    cache = tmp_path / "cache.sqlite"
    run(folder, store, cache)
    CountingLoader.loaded = []
    loaders = LoaderSet({"text": CountingLoader()})
    with Ingestor(store=store, cache=cache, embedder=Lengths(), loaders=loaders,
                  chunk_size=200) as ingestor:
        report = ingestor.run([folder], out=tmp_path / "chunks.jsonl")
    assert sorted(CountingLoader.loaded) == ["a.txt", "b.txt", "c.txt"]
    assert report.chunks > 0  # every chunk is written out


def test_another_dimension_is_refused_before_reading(folder: Path, tmp_path: Path) -> None:
    store = MemoryStore()
    run(folder, store, False)
    before = dict(store.docs)
    writes = store.writes
    (folder / "a.txt").write_text("Changed.", encoding="utf-8")
    CountingLoader.loaded = []
    with Ingestor(store=store, cache=False, embedder=Lengths(5), sync=True,
                  loaders=LoaderSet({"text": CountingLoader()})) as ingestor:
        with pytest.raises(StoreError) as caught:
            ingestor.run([folder])
    message = str(caught.value)
    assert "dimension 2" in message and "dimension 5" in message and "Lengths" in message
    assert "memory" in message and "nothing was changed" in message
    assert CountingLoader.loaded == [] and store.docs == before and store.writes == writes


class RecordingStore(MemoryStore):
    """Records every write's chunk count and how many writes ever ran at once."""

    step_id = "test/recording-store"

    def __init__(self, fail_on: int | None = None) -> None:
        super().__init__()
        import threading

        self.sizes: list[int] = []
        self.order: list[str] = []
        self.running = 0
        self.most_at_once = 0
        self.lock = threading.Lock()
        self.fail_on = fail_on

    def write(self, documents) -> None:
        with self.lock:
            self.running += 1
            self.most_at_once = max(self.most_at_once, self.running)
        try:
            if self.fail_on is not None and len(self.sizes) + 1 == self.fail_on:
                raise StoreError("the disk is full")
            self.sizes.append(sum(len(d.chunks) for d in documents))
            self.order += [d.document_id for d in documents]
            super().write(documents)
        finally:
            with self.lock:
                self.running -= 1


@pytest.fixture
def many(tmp_path: Path) -> Path:
    root = tmp_path / "many"
    root.mkdir()
    for i in range(40):
        (root / f"f{i:02d}.txt").write_text(f"Paragraph {i}. " * 30 + "\n\n" + "More. " * 30,
                                            encoding="utf-8")
    return root


def test_store_writes_come_in_bounded_batches_one_at_a_time(
    many: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import ragloom.ingest._run as ingestor_module

    monkeypatch.setattr(ingestor_module, "STORE_BATCH_CHUNKS", 7)
    store = RecordingStore()
    report = run(many, store, False)
    per_doc = {d: len(chunks) for d, (_, chunks) in store.docs.items()}
    assert len(per_doc) == 40 and report.indexed == 40 and not report.failures
    assert report.chunks == sum(per_doc.values()) == sum(store.sizes)
    # A batch is written once it reaches 7 chunks: never more than 7 + one document's chunks
    # are gathered, whatever the corpus size, and one batch is written at a time.
    assert len(store.sizes) >= report.chunks // (7 + max(per_doc.values()))
    assert max(store.sizes) < 7 + max(per_doc.values())
    assert store.most_at_once == 1
    assert store.order == sorted(store.order)  # documents are written in input order


def test_a_failed_store_write_fails_the_run(many: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import ragloom.ingest._run as ingestor_module

    monkeypatch.setattr(ingestor_module, "STORE_BATCH_CHUNKS", 7)
    store = RecordingStore(fail_on=2)
    with pytest.raises(StoreError, match="the disk is full"):
        run(many, store, False)
    assert len(store.sizes) == 1  # nothing was written after the failed batch


class GrowingStore(MemoryStore):
    """A store that wants ``optimize`` once it holds more than ``limit`` chunks."""

    def __init__(self, limit: int) -> None:
        super().__init__()
        self.limit = limit

    def optimize_due(self) -> str | None:
        chunks = self.info().chunks
        return f"{chunks} chunks past {self.limit}" if chunks > self.limit else None


def test_the_report_recommends_optimize_when_the_store_says_so(folder: Path) -> None:
    from ragloom.cli._ingest import _summary

    small = run(folder, GrowingStore(limit=1000), False)
    assert small.optimize is None and small.to_dict()["optimize"] is None
    assert "index optimize" not in _summary(small)
    grown = run(folder, GrowingStore(limit=3), False)
    assert grown.optimize is not None and grown.optimize.endswith("chunks past 3")
    assert grown.to_dict()["optimize"] == grown.optimize
    assert f"next: ragloom index optimize --index memory  ({grown.optimize})" in _summary(grown)


# -- files recognised by their size and times (the store keeps their states) ----------------


class StatesStore(MemoryStore):
    """A store that keeps the file states an ingest records."""

    step_id = "test/states-store"

    def __init__(self) -> None:
        super().__init__()
        self.states: dict[str, str] = {}

    def file_states(self) -> dict[str, str]:
        return dict(self.states)

    def set_file_states(self, states) -> None:
        self.states = dict(states)


@pytest.fixture
def later(monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs happen a minute after the files were written (no file is racily clean)."""
    import time

    from ragloom.ingest._states import FileStates

    monkeypatch.setattr(FileStates, "clock", staticmethod(lambda: time.time_ns() + 60 * 10**9))


def _rewrite(path: Path, text: str) -> None:
    """Write ``text`` (of the file's own length) and put its modification time back."""
    import os

    before = path.stat()
    assert len(text.encode()) == before.st_size
    path.write_text(text, encoding="utf-8")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


def test_files_of_the_recorded_size_and_times_are_not_read(folder: Path, later: None) -> None:
    import os

    store = StatesStore()
    first = run(folder, store, False)
    assert sorted(CountingLoader.loaded) == ["a.txt", "b.txt", "c.txt"]
    assert sorted(store.states) == ["a.txt", "b.txt", "c.txt"]
    indexed = dict(store.docs)

    again = run(folder, store, False)  # no cache: recognised without reading a byte
    assert CountingLoader.loaded == []
    assert (again.indexed, again.unchanged, again.documents) == (0, 3, 0)
    assert again.bytes_read == first.bytes_read and again.ok

    # An edit of the same size is seen by its modification time...
    b = folder / "b.txt"
    b.write_text(b.read_text(encoding="utf-8").replace("file b", "file B"), encoding="utf-8")
    edited = run(folder, store, False)
    assert CountingLoader.loaded == ["b.txt"] and (edited.indexed, edited.unchanged) == (1, 2)
    assert store.docs["b.txt"] != indexed["b.txt"] and store.docs["a.txt"] == indexed["a.txt"]
    # ... and by its change time when the modification time is put back as it was
    _rewrite(b, b.read_text(encoding="utf-8").replace("file B", "file b"))
    restored = run(folder, store, False)
    assert CountingLoader.loaded == ["b.txt"] and restored.indexed == 1
    assert store.docs["b.txt"] == indexed["b.txt"]

    # The index no longer holds what the file gave: it is read and written again.
    store.docs["c.txt"] = ("stale", [])
    repaired = run(folder, store, False)
    assert CountingLoader.loaded == ["c.txt"] and repaired.indexed == 1
    assert store.docs["c.txt"] == indexed["c.txt"]
    del store.docs["a.txt"]
    assert run(folder, store, False).indexed == 1 and CountingLoader.loaded == ["a.txt"]

    # Other loaders, or another size limit: every file is read (and found unchanged).
    other = run(folder, store, False, tag="v2")
    assert sorted(CountingLoader.loaded) == ["a.txt", "b.txt", "c.txt"]
    assert (other.indexed, other.unchanged) == (0, 3)
    run(folder, store, False, tag="v2")
    assert CountingLoader.loaded == []
    run(folder, store, False, tag="v2", max_file_size=10**6)
    assert sorted(CountingLoader.loaded) == ["a.txt", "b.txt", "c.txt"]

    # A removed file's state goes with its documents.
    os.remove(folder / "c.txt")
    synced = run(folder, store, False, tag="v2", max_file_size=10**6, sync=True)
    assert synced.deleted == 1 and sorted(store.states) == ["a.txt", "b.txt"]


def test_a_file_written_just_before_the_run_is_read_again(folder: Path) -> None:
    # Written within the last RACY_SECONDS (the real clock): an edit within the same tick of
    # the file system's clock could keep its size and times, so it is not recorded.
    store = StatesStore()
    run(folder, store, False)
    assert store.states == {}
    run(folder, store, False)
    assert sorted(CountingLoader.loaded) == ["a.txt", "b.txt", "c.txt"]


def test_a_store_without_states_reads_every_file(folder: Path, later: None) -> None:
    store = MemoryStore()
    run(folder, store, False)
    run(folder, store, False)
    assert sorted(CountingLoader.loaded) == ["a.txt", "b.txt", "c.txt"]


def test_each_of_size_and_times_tells_a_file_changed(tmp_path: Path) -> None:
    # On Linux every write moves the change time too, so the runs above cannot show that
    # the modification time alone tells (where the change time is the creation time, on
    # Windows, it is all there is): each field of a status, alone, makes the file read.
    import os

    from ragloom.ingest import InputFile
    from ragloom.ingest._states import FileStates

    path = tmp_path / "a.txt"
    path.write_text("text", encoding="utf-8")
    file = InputFile(str(path), "a.txt", str(path), "docs")
    states = FileStates({}, "key")
    status = os.stat(path)
    states.record(file, (status, status.st_mtime_ns + 10 * 10**9), [("a.txt", "print")])
    again = FileStates(states.fresh, "key")
    assert again.unchanged(file, status, [("a.txt", "print")])
    assert not again.unchanged(file, status, [("a.txt", "other")])
    assert not FileStates(states.fresh, "other key").unchanged(file, status, [("a.txt", "print")])
    fields = list(status)
    for name in ("st_size", "st_mtime", "st_ctime"):
        index = {"st_size": 6, "st_mtime": 8, "st_ctime": 9}[name]
        moved = list(fields)
        moved[index] += 1
        extra = {"st_mtime_ns": status.st_mtime_ns + (10**9 if name == "st_mtime" else 0),
                 "st_ctime_ns": status.st_ctime_ns + (10**9 if name == "st_ctime" else 0)}
        changed = os.stat_result(moved, extra)
        assert changed.st_mtime_ns == extra["st_mtime_ns"]
        assert not again.unchanged(file, changed, [("a.txt", "print")]), name
