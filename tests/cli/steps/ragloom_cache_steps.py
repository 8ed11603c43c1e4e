"""Steps for the cache CLI tests, imported by a ``ragloom`` subprocess through a pipeline file
(``import = ...`` with ``--allow-imports``); the test puts this folder and ``tests/`` on
``PYTHONPATH``.

With ``RAGLOOM_TEST_DISK_FULL=1`` in the environment, importing this module makes every write
of an SQLite cache fail as SQLite fails on a full disk (the cache is read as usual).
"""

from __future__ import annotations

import os
import threading
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
    from support.sqlite_faults import full_disk_connection

    SQLiteCacheStore._connection = full_disk_connection(  # type: ignore[method-assign]
        SQLiteCacheStore._connection
    )
