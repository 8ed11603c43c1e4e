"""Steps for the cache CLI tests, imported by a ``ragloom`` subprocess through a pipeline file
(``import = ...`` with ``--allow-imports``); the test puts this folder on ``PYTHONPATH``.

With ``RAGLOOM_TEST_DISK_FULL=1`` in the environment, importing this module makes every write
of an SQLite cache fail as SQLite fails on a full disk (the cache is read as usual).
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
from collections.abc import Iterator
from typing import Any

from ragloom import Document, ExecutionContext, PipelineStep
from ragloom.cache import SQLiteCacheStore

#: A client shared by every ``Guarded`` step: an object with no stable identity.
SHARED_CLIENT = threading.Lock()


class Tagged(PipelineStep[Document]):
    """Adds ``metadata["tag"]`` to every chunk (cacheable: its arguments are plain data)."""

    awaits = False

    def __init__(self, tag: str = "x") -> None:
        super().__init__()
        self.tag = tag

    def transform(self, item: Document, context: ExecutionContext) -> Document:
        return item.model_copy(update={"metadata": {**item.metadata, "tag": self.tag}})


class Guarded(Tagged):
    """The same, built with a client object by default (so its identity cannot be derived)."""

    def __init__(self, tag: str = "x", client: Any = SHARED_CLIENT) -> None:
        super().__init__(tag)
        self.client = client


if os.environ.get("RAGLOOM_TEST_DISK_FULL") == "1":

    class _FullDisk:
        def __init__(self, conn: sqlite3.Connection) -> None:
            self.conn = conn

        def executemany(self, *args: Any) -> Any:
            raise sqlite3.OperationalError("database or disk is full")

        def __getattr__(self, name: str) -> Any:
            return getattr(self.conn, name)

    _original = SQLiteCacheStore._connection

    @contextlib.contextmanager
    def _connection(self: SQLiteCacheStore) -> Iterator[Any]:
        with _original(self) as conn:
            yield _FullDisk(conn)

    SQLiteCacheStore._connection = _connection  # type: ignore[method-assign]
