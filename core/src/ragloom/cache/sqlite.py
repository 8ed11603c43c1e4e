"""The embedded SQLite ``CacheStore``: one file, WAL, safe for several processes at once."""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import threading
import zlib
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..errors import CacheCorruptError, CacheError, CacheFullError, CacheReadOnlyError
from .base import CacheEntry, CacheInfo

__all__ = ["SQLiteCacheStore", "cache_info", "open_cache"]

#: ``PRAGMA application_id`` of ragloom cache files ("RGLM").
APPLICATION_ID = 0x52474C4D
SCHEMA_VERSION = 1
_CHUNK = 500  # keys per SELECT (SQLite's variable limit is 32766; stay modest)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS entries (
    key      TEXT PRIMARY KEY,
    step     TEXT NOT NULL,
    item_id  TEXT NOT NULL,
    outputs  INTEGER NOT NULL,
    created  REAL NOT NULL,
    checksum INTEGER NOT NULL,
    payload  TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS entries_step ON entries(step);
"""

#: What the engine learned about each cached step (is replaying it cheaper than recomputing?).
_DECISIONS = """
CREATE TABLE IF NOT EXISTS decisions (
    identity TEXT PRIMARY KEY,
    record   TEXT NOT NULL
) WITHOUT ROWID
"""


class SQLiteCacheStore:
    """A cache in one SQLite file.

    WAL mode lets readers and a writer proceed together; writers from several processes are
    serialized by SQLite's lock (``busy_timeout`` waits for it). Each ``put_many`` is one
    transaction, so a run killed at any moment leaves every entry either complete or absent.
    Each payload carries a CRC-32 checked on read: a damaged entry raises
    :class:`~ragloom.errors.CacheCorruptError`, never returns wrong outputs.
    """

    def __init__(self, path: str | os.PathLike[str], *, timeout: float = 60.0) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        _check_regular(self.path)
        if self.path.parent and not self.path.parent.exists():
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise CacheError(
                    f"cannot create the folder of cache file {self.path}: {exc.strerror or exc}"
                ) from None
        #: Whether the file can only be read (a replay-only cache: nothing new is written).
        self.read_only = self.path.exists() and not _writable(self.path)
        try:
            target: Any = self.path
            if self.read_only:
                target = f"{self.path.resolve().as_uri()}?mode=ro"
            conn = sqlite3.connect(
                target, timeout=timeout, isolation_level=None, check_same_thread=False,
                uri=self.read_only,
            )
        except sqlite3.Error as exc:
            raise CacheError(f"cannot open cache file {self.path}: {exc}") from exc
        try:
            self._init(conn, timeout)
        except sqlite3.DatabaseError as exc:
            conn.close()
            plain = _plain_error(exc, self.path)
            if plain is not None:
                raise plain from exc
            raise CacheCorruptError(
                f"{self.path} is not a usable ragloom cache ({exc}); delete the file or "
                "choose another cache path"
            ) from exc
        except CacheError:
            conn.close()
            raise
        self._conn = conn

    def _init(self, conn: sqlite3.Connection, timeout: float) -> None:
        conn.execute(f"PRAGMA busy_timeout = {int(timeout * 1000)}")
        app_id = conn.execute("PRAGMA application_id").fetchone()[0]
        if app_id == 0:
            # Maybe a new file. Decide under the write lock: another process may be creating it
            # right now, and what we read outside the lock can be stale.
            conn.execute("BEGIN IMMEDIATE")
            try:
                app_id = conn.execute("PRAGMA application_id").fetchone()[0]
                tables = conn.execute("SELECT name FROM sqlite_master WHERE type='table'")
                if app_id == 0 and tables.fetchone() is None:
                    conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
                    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
                    for statement in _SCHEMA.split(";"):
                        if statement.strip():
                            conn.execute(statement)
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
            app_id = conn.execute("PRAGMA application_id").fetchone()[0]
        if app_id != APPLICATION_ID:
            raise CacheCorruptError(
                f"{self.path} is an SQLite file that ragloom did not write (application_id "
                f"{app_id:#x}); point the cache at another path or delete the file"
            )
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version != SCHEMA_VERSION:
            raise CacheCorruptError(
                f"{self.path} has cache schema version {version}, this ragloom reads "
                f"{SCHEMA_VERSION}; clear it with `ragloom cache clear` or delete the file"
            )
        if self.read_only:
            return
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        with contextlib.suppress(sqlite3.OperationalError):  # a read-only file has none
            conn.execute(_DECISIONS)

    @contextmanager
    def _connection(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            if self._conn is None:
                raise CacheError(f"cache {self.path} is closed")
            try:
                yield self._conn
            except sqlite3.DatabaseError as exc:
                plain = _plain_error(exc, self.path)
                if plain is not None:
                    raise plain from exc
                raise CacheCorruptError(
                    f"cache file {self.path} is damaged ({exc}); delete it or run "
                    "`ragloom cache clear`"
                ) from exc

    def _select(self, columns: str, keys: Sequence[str]) -> list[tuple[object, ...]]:
        rows: list[tuple[object, ...]] = []
        with self._connection() as conn:
            for i in range(0, len(keys), _CHUNK):
                part = keys[i : i + _CHUNK]
                marks = ",".join("?" * len(part))
                rows.extend(
                    conn.execute(f"SELECT {columns} FROM entries WHERE key IN ({marks})", part)
                )
        return rows

    def get_many(self, keys: Sequence[str]) -> dict[str, CacheEntry]:
        out: dict[str, CacheEntry] = {}
        for key, step, item_id, outputs, created, checksum, payload in self._select(
            "key, step, item_id, outputs, created, checksum, payload", keys
        ):
            payload = str(payload)
            if zlib.crc32(payload.encode("utf-8", "surrogatepass")) != checksum:
                raise CacheCorruptError(
                    f"cache file {self.path}: entry {key} fails its checksum; delete the file "
                    "or run `ragloom cache clear`"
                )
            out[str(key)] = CacheEntry(
                str(key),
                str(step),
                str(item_id),
                payload,
                int(outputs),  # type: ignore[call-overload]
                float(created),  # type: ignore[arg-type]
            )
        return out

    def put_many(self, entries: Iterable[CacheEntry]) -> None:
        """Write ``entries`` in one transaction.

        Raises:
            CacheReadOnlyError: the cache file cannot be written (it can still be read).
            CacheFullError: the disk is full (the transaction is rolled back).
        """
        if self.read_only:
            raise CacheReadOnlyError(f"cache file {self.path} is read-only")
        rows = [
            (
                e.key,
                e.step,
                e.item_id,
                e.outputs,
                e.created,
                zlib.crc32(e.payload.encode("utf-8", "surrogatepass")),
                e.payload,
            )
            for e in entries
        ]
        if not rows:
            return
        with self._connection() as conn:
            conn.execute("BEGIN IMMEDIATE")
            try:
                conn.executemany("INSERT OR REPLACE INTO entries VALUES (?,?,?,?,?,?,?)", rows)
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    def get_decisions(self, identities: Sequence[str]) -> dict[str, dict[str, object]]:
        """The recorded cost decisions of these step identities (absent ones left out)."""
        if not identities:
            return {}
        marks = ",".join("?" * len(identities))
        try:
            with self._connection() as conn:
                rows = list(conn.execute(
                    f"SELECT identity, record FROM decisions WHERE identity IN ({marks})",
                    list(identities),
                ))
        except CacheError:
            return {}
        out: dict[str, dict[str, object]] = {}
        for identity, record in rows:
            with contextlib.suppress(ValueError):
                value = json.loads(str(record))
                if isinstance(value, dict):
                    out[str(identity)] = value
        return out

    def put_decision(self, identity: str, record: dict[str, object]) -> None:
        """Record what the engine decided for a step identity (its measured costs)."""
        text = json.dumps(record, sort_keys=True)
        with self._connection() as conn:
            conn.execute(_DECISIONS)
            conn.execute("INSERT OR REPLACE INTO decisions VALUES (?, ?)", (identity, text))

    def decisions(self) -> dict[str, dict[str, object]]:
        """Every recorded cost decision, by step identity."""
        try:
            with self._connection() as conn:
                rows = list(conn.execute("SELECT identity, record FROM decisions"))
        except CacheError:
            return {}
        return {str(i): json.loads(str(r)) for i, r in rows}

    def info(self) -> CacheInfo:
        with self._connection() as conn:
            steps = dict(conn.execute("SELECT step, COUNT(*) FROM entries GROUP BY step"))
            size = conn.execute("SELECT COALESCE(SUM(LENGTH(payload)), 0) FROM entries")
            total = size.fetchone()[0]
        return CacheInfo(str(self.path), sum(steps.values()), int(total), steps)

    def clear(self, step: str | None = None) -> int:
        with self._connection() as conn:
            if step is None:
                with contextlib.suppress(sqlite3.OperationalError):
                    conn.execute("DELETE FROM decisions")
                cur = conn.execute("DELETE FROM entries")
            else:
                cur = conn.execute("DELETE FROM entries WHERE step = ?", (step,))
            removed = cur.rowcount
        return removed

    def config(self) -> dict[str, object]:
        """What rebuilds this store (its file), for pipeline dumps."""
        return {"path": str(self.path)}

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __enter__(self) -> SQLiteCacheStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"SQLiteCacheStore({str(self.path)!r})"


#: SQLite's primary result codes for conditions that are not a damaged file.
_READONLY, _BUSY, _LOCKED, _FULL, _CANTOPEN, _PERM, _IOERR = 8, 5, 6, 13, 14, 3, 10


def _plain_error(exc: sqlite3.Error, path: Path) -> CacheError | None:
    """The honest error for a healthy cache that cannot be used now (``None``: damaged)."""
    code = getattr(exc, "sqlite_errorcode", None)
    primary = code & 0xFF if isinstance(code, int) else None
    text = str(exc).lower()
    if primary in (_READONLY, _PERM) or "readonly" in text or "read-only" in text:
        return CacheReadOnlyError(f"cache file {path} is read-only ({exc})")
    if primary == _FULL or "disk is full" in text:
        return CacheFullError(
            f"the disk holding cache file {path} is full: free some space or use --no-cache "
            "(the cache itself is intact)"
        )
    if primary in (_BUSY, _LOCKED) or "locked" in text:
        return CacheError(
            f"cache file {path} stayed locked by another process ({exc}); try again when it "
            "is done"
        )
    if primary in (_CANTOPEN, _IOERR):
        return CacheError(f"cannot use cache file {path}: {exc}")
    return None


def _writable(path: Path) -> bool:
    """Whether ``path`` (and its folder, where SQLite keeps its journal) can be written; as
    root, also whether any write bit is set (root ignores permissions)."""
    if not os.access(path, os.W_OK) or not os.access(path.parent, os.W_OK):
        return False
    if os.geteuid() == 0:
        mode = path.stat().st_mode
        return bool(mode & 0o222)
    return True


def open_cache(
    path: str | os.PathLike[str], *, create: bool = True, timeout: float = 60.0
) -> SQLiteCacheStore:
    """Open the SQLite cache at ``path`` (created when missing, unless ``create=False``).

    Raises:
        CacheError: ``create=False`` and there is no file at ``path``, or it cannot be opened.
        CacheCorruptError: the file is not a ragloom cache (random bytes, another app's
            database, another schema version).
    """
    where = Path(path)
    if not create and not where.exists():
        raise CacheError(f"no cache file at {where}")
    return SQLiteCacheStore(where, timeout=timeout)


def cache_info(path: str | os.PathLike[str]) -> CacheInfo:
    """What the cache at ``path`` holds; a missing file is an empty cache (and is not created).

    Raises:
        CacheCorruptError: the file exists but is not a ragloom cache.
    """
    where = Path(path)
    if not where.exists():
        return CacheInfo(str(where), 0, 0, {})
    with open_cache(where, create=False) as store:
        return store.info()


def _check_regular(path: Path) -> None:
    """Refuse a cache path that is a folder, a device, a FIFO or a socket before SQLite opens
    it (it would create ``PATH-journal`` next to it, e.g. ``/dev/null-journal``)."""
    import stat

    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return
    except OSError as exc:
        raise CacheError(f"cannot use cache file {path}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(mode):
        kind = "a folder" if stat.S_ISDIR(mode) else "not a regular file (a device, FIFO or socket)"
        raise CacheError(
            f"cannot use {path} as the cache file: it is {kind}; give a regular file or a new "
            "path, or --no-cache"
        )
