"""The store contract (SQLite and memory), inspection, and damaged or foreign files."""

from __future__ import annotations

import json
import os
import sqlite3
import zlib
from pathlib import Path
from typing import Any

import pytest
from cache_kit import CountingChunker, docs, dumps, run
from ragloom import (
    CacheCorruptError,
    CacheError,
    Document,
    MemoryCacheStore,
    Pipeline,
    SQLiteCacheStore,
)
from ragloom.cache import CacheEntry, CacheStore, cache_info, open_cache


def _entry(key: str, step: str = "s", n: int = 1) -> CacheEntry:
    outputs = [Document(id=f"{key}-{i}", content=f"out {i} of {key}") for i in range(n)]
    return CacheEntry.build(key, step, f"item-{key}", outputs)


def test_store_contract(store: Any) -> None:
    assert isinstance(store, CacheStore)
    store.put_many([_entry("k1", "a", 2), _entry("k2", "a"), _entry("k3", "b", 0)])
    got = store.get_many(["k1", "missing", "k3"])
    assert set(got) == {"k1", "k3"}
    assert [d.id for d in got["k1"].load(Document)] == ["k1-0", "k1-1"]
    assert got["k3"].load(Document) == []
    k2 = store.get_many(["k2", "nope"])["k2"]
    assert (k2.step, k2.item_id, k2.outputs) == ("a", "item-k2", 1)
    info = store.info()
    assert info.entries == 3 and info.steps == {"a": 2, "b": 1} and info.bytes > 0
    store.put_many([_entry("k1", "a", 3)])  # replaces
    assert store.get_many(["k1"])["k1"].outputs == 3
    assert store.clear("a") == 2
    assert store.info().steps == {"b": 1}
    assert store.clear() == 1 and store.info().entries == 0
    store.close()
    store.close()  # idempotent


def test_put_many_is_all_or_nothing(tmp_path: Path) -> None:
    with SQLiteCacheStore(tmp_path / "c.db") as store:

        def entries() -> Any:
            yield _entry("good")
            raise RuntimeError("producer died")

        with pytest.raises(RuntimeError):
            store.put_many(entries())
        assert store.info().entries == 0


def test_sqlite_store_survives_reopening(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "dir" / "c.db"  # parents are created
    chunker = CountingChunker()
    with SQLiteCacheStore(path) as store:
        first = run(Pipeline(chunker, cache=store), docs(4))
    with SQLiteCacheStore(path) as store:
        second = run(Pipeline(chunker, cache=store), docs(4))
    assert len(chunker.calls) == 4 and second.cache_hits == 4
    assert dumps(second) == dumps(first)


def test_closed_store_says_so(tmp_path: Path) -> None:
    store = SQLiteCacheStore(tmp_path / "c.db")
    store.close()
    with pytest.raises(CacheError, match="closed"):
        store.get_many(["k"])


def test_open_cache_and_cache_info(tmp_path: Path) -> None:
    missing = tmp_path / "none.db"
    info = cache_info(missing)
    assert (info.entries, info.bytes, info.steps) == (0, 0, {})
    assert not missing.exists()
    with pytest.raises(CacheError, match="no cache file"):
        open_cache(missing, create=False)
    with open_cache(missing) as store:
        run(Pipeline(CountingChunker(), cache=store), docs(3))
    info = cache_info(missing)
    assert info.entries == 3 and info.steps == {"tests/cache-counting": 3}
    assert info.location == str(missing)
    with open_cache(missing, create=False) as store:
        assert store.clear("tests/cache-counting") == 3
    assert cache_info(missing).entries == 0


def test_payload_is_json_text_never_pickle(tmp_path: Path) -> None:
    path = tmp_path / "c.db"
    inputs = docs(3) + [Document(id="md", content="# Title\n\nbody", content_format="markdown")]
    with SQLiteCacheStore(path) as store:
        run(Pipeline(CountingChunker(), cache=store), inputs)
    with sqlite3.connect(path) as conn:
        rows = conn.execute("SELECT typeof(payload), payload FROM entries").fetchall()
    assert len(rows) == 4
    for kind, payload in rows:
        assert kind == "text"
        assert not payload.startswith("\x80")  # a pickle starts with its protocol opcode
        json.loads(payload)


def test_random_bytes_file_is_reported_with_its_path(tmp_path: Path) -> None:
    path = tmp_path / "junk.db"
    path.write_bytes(os.urandom(8192))
    with pytest.raises(CacheCorruptError) as info:
        SQLiteCacheStore(path)
    message = str(info.value)
    assert str(path) in message and "delete" in message
    with pytest.raises(CacheCorruptError):
        cache_info(path)


def test_foreign_sqlite_file_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "other-app.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE accounts (id INTEGER PRIMARY KEY, owner TEXT)")
        conn.execute("INSERT INTO accounts (owner) VALUES ('someone')")
    before = path.read_bytes()
    with pytest.raises(CacheCorruptError) as info:
        SQLiteCacheStore(path)
    message = str(info.value)
    assert str(path) in message and "did not write" in message
    assert "another path" in message or "delete" in message
    assert path.read_bytes() == before


def test_other_schema_version_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "c.db"
    SQLiteCacheStore(path).close()
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA user_version = 99")
    with pytest.raises(CacheCorruptError, match="schema version 99"):
        SQLiteCacheStore(path)


def _tamper(path: Path, edit: Any, *, fix_checksum: bool) -> None:
    conn = sqlite3.connect(path)
    try:
        key, payload = conn.execute("SELECT key, payload FROM entries LIMIT 1").fetchone()
        new = edit(payload)
        assert new != payload
        if fix_checksum:
            conn.execute(
                "UPDATE entries SET payload = ?, checksum = ? WHERE key = ?",
                (new, zlib.crc32(new.encode()), key),
            )
        else:
            conn.execute("UPDATE entries SET payload = ? WHERE key = ?", (new, key))
        conn.commit()
    finally:
        conn.close()


def _shift_offsets(payload: str) -> str:
    data = json.loads(payload)
    data["derived"][0][1] += 10_000
    return json.dumps(data)


@pytest.mark.parametrize(
    ("edit", "fix_checksum"),
    [
        (lambda p: p.replace("[0,40]", "[0,39]", 1), False),  # plausible bit rot: checksum
        (_shift_offsets, True),  # consistent checksum, span outside the input
        (lambda p: p[: len(p) // 2], True),  # truncated JSON
        (lambda p: '{"derived":[[0,5,{"evil":1}]]}', True),  # unknown field
    ],
)
def test_damaged_payload_raises_instead_of_replaying(
    tmp_path: Path, edit: Any, fix_checksum: bool
) -> None:
    path = tmp_path / "c.db"
    inputs = docs(2, length=120)
    with SQLiteCacheStore(path) as store:
        run(Pipeline(CountingChunker(), cache=store), inputs)
    _tamper(path, edit, fix_checksum=fix_checksum)
    chunker = CountingChunker()
    with SQLiteCacheStore(path) as store, pytest.raises(CacheCorruptError) as info:
        run(Pipeline(chunker, cache=store), inputs)
    assert "ragloom cache clear" in str(info.value) or "delete" in str(info.value)


def test_entry_with_a_wrong_output_count_is_corrupt() -> None:
    store = MemoryCacheStore()
    chunker = CountingChunker(cache=store)
    doc = docs(1)[0]
    run(Pipeline(chunker), [doc])
    key = chunker.cache_id(doc)
    entry = store.get_many([key])[key]
    store.put_many(
        [CacheEntry(entry.key, entry.step, entry.item_id, entry.payload, entry.outputs + 1)]
    )
    with pytest.raises(CacheCorruptError, match="holds"):
        run(Pipeline(chunker), [doc])
