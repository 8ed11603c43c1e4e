"""SQLite failures that cannot be made for real in a test (a full disk)."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["full_disk_connection"]


class _FullDisk:
    """A connection whose batched writes fail as SQLite fails on a full disk."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def executemany(self, *args: Any) -> Any:
        raise sqlite3.OperationalError("database or disk is full")

    def __getattr__(self, name: str) -> Any:
        return getattr(self.conn, name)


def full_disk_connection(original: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """A replacement for ``SQLiteCacheStore._connection`` (given as ``original``) whose writes
    fail as on a full disk; reads go on as usual."""

    @contextlib.contextmanager
    def connection(self: Any) -> Iterator[Any]:
        with original(self) as conn:
            yield _FullDisk(conn)

    return connection
