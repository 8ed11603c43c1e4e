"""A healthy SQLite cache that cannot be written: read-only, on a full disk, locked by another
process. None of them is called damaged, and no message advises deleting it."""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import stat
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cache_kit import CountingChunker, docs, dumps
from ragloom import CacheSkipped, Pipeline, SQLiteCacheStore
from ragloom.cache import cache_info
from ragloom.errors import CacheCorruptError, CacheError, CacheFullError

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from support.sqlite_faults import full_disk_connection  # noqa: E402

DOCS = docs(24)
HALF = DOCS[:12]


def _run(step: Any, store: Any, inputs: list[Any]) -> tuple[Any, list[CacheSkipped]]:
    pipeline = Pipeline(step, cache=store)
    skipped: list[CacheSkipped] = []
    pipeline.subscribe(lambda e: skipped.append(e) if isinstance(e, CacheSkipped) else None)
    result = pipeline.run_sync(inputs)
    assert not result.failed, result.failed
    return result, skipped


@pytest.fixture
def warm_file(tmp_path: Path) -> Path:
    """A cache file holding the outputs of the first half of ``DOCS``."""
    path = tmp_path / "cache.sqlite"
    with SQLiteCacheStore(path) as store:
        _run(CountingChunker(), store, HALF)
    return path


def _no_deletion_advice(message: str) -> None:
    assert "delete" not in message.lower() and "damaged" not in message.lower(), message


def test_a_read_only_file_replays_what_it_holds_and_stores_nothing(
    warm_file: Path, caplog: pytest.LogCaptureFixture
) -> None:
    warm_file.chmod(0o444)  # as root too: the store checks the file's write bits
    before = warm_file.read_bytes()
    with SQLiteCacheStore(warm_file) as store:
        assert store.read_only
        step = CountingChunker()
        with caplog.at_level(logging.WARNING, logger="ragloom"):
            first, skipped = _run(step, store, DOCS)
            second, again = _run(step, store, DOCS)
        assert (first.cache_hits, first.cache_misses) == (len(HALF), len(DOCS) - len(HALF))
        assert (second.cache_hits, second.cache_misses) == (len(HALF), len(DOCS) - len(HALF))
        assert len(skipped) == 1 and len(again) == 1  # once per run
        reason = skipped[0].reason
        assert "read-only" in reason and "stores nothing new" in reason
        _no_deletion_advice(reason)
        assert store.info().entries == first.cache_hits  # nothing new was stored
    assert warm_file.read_bytes() == before
    assert dumps(first) == dumps(Pipeline(CountingChunker(), cache=False).run_sync(DOCS))
    logged = [r.getMessage() for r in caplog.records if str(warm_file) in r.getMessage()]
    assert len(logged) == 1  # once per process (the path is this test's own)


@contextlib.contextmanager
def _disk_full(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Writes of every SQLite cache fail as SQLite fails on a full disk."""
    with monkeypatch.context() as patch:
        patch.setattr(
            SQLiteCacheStore, "_connection", full_disk_connection(SQLiteCacheStore._connection)
        )
        yield


def test_a_full_disk_is_cache_full_and_the_cache_stays_readable(
    warm_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with SQLiteCacheStore(warm_file) as store:
        with _disk_full(monkeypatch), pytest.raises(CacheFullError) as caught:
            Pipeline(CountingChunker(), cache=store).run_sync(DOCS)
        message = str(caught.value)
        assert "is full" in message and "intact" in message and str(warm_file) in message
        assert not isinstance(caught.value, CacheCorruptError)
        _no_deletion_advice(message)
        # The failed transaction was rolled back: the file holds what it held, and reads.
        assert store.info().entries == len(HALF)
        warm, _ = _run(CountingChunker(), store, HALF)
        assert (warm.cache_hits, warm.cache_misses) == (len(HALF), 0)
    assert cache_info(warm_file).entries == len(HALF)


def test_a_locked_file_is_locked_not_damaged(warm_file: Path) -> None:
    with SQLiteCacheStore(warm_file, timeout=0.05) as store:
        other = sqlite3.connect(warm_file, isolation_level=None)
        try:
            other.execute("BEGIN IMMEDIATE")  # another process writing, for as long as it likes
            with pytest.raises(CacheError) as caught:
                Pipeline(CountingChunker(), cache=store).run_sync(DOCS)
        finally:
            other.execute("ROLLBACK")
            other.close()
        error = caught.value
        assert not isinstance(error, CacheCorruptError | CacheFullError)
        assert "locked by another process" in str(error) and "try again" in str(error)
        _no_deletion_advice(str(error))
        # Unlocked, the same store writes again.
        cold, _ = _run(CountingChunker(), store, DOCS)
        assert (cold.cache_hits, cold.cache_misses) == (len(HALF), len(DOCS) - len(HALF))


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only folder")
def test_a_file_in_a_read_only_folder_is_read_only(warm_file: Path) -> None:
    folder = warm_file.parent
    mode = stat.S_IMODE(folder.stat().st_mode)
    folder.chmod(0o555)  # SQLite keeps its journal beside the file: it cannot write there
    try:
        with SQLiteCacheStore(warm_file) as store:
            assert store.read_only
            result, skipped = _run(CountingChunker(), store, DOCS)
            assert result.cache_hits == len(HALF) and len(skipped) == 1
    finally:
        folder.chmod(mode)
