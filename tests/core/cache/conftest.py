"""Fixtures of the cache tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from ragloom import MemoryCacheStore, SQLiteCacheStore


@pytest.fixture(params=["memory", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    """Each of the core's two stores, fresh (the SQLite one in a temporary file)."""
    if request.param == "memory":
        yield MemoryCacheStore()
    else:
        with SQLiteCacheStore(tmp_path / "cache.db") as sqlite_store:
            yield sqlite_store
