"""An in-memory ``CacheStore`` for tests and short-lived processes."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterable, Sequence

from .base import CacheEntry, CacheInfo

__all__ = ["MemoryCacheStore"]


class MemoryCacheStore:
    """A dict-backed store. Entries still go through JSON, exactly as on disk."""

    def __init__(self) -> None:
        self._entries: dict[str, CacheEntry] = {}
        self._decisions: dict[str, dict[str, object]] = {}
        self._lock = threading.Lock()
        self.reads = 0
        self.writes = 0

    def get_many(self, keys: Sequence[str]) -> dict[str, CacheEntry]:
        with self._lock:
            self.reads += 1
            return {k: e for k in keys if (e := self._entries.get(k)) is not None}

    def put_many(self, entries: Iterable[CacheEntry]) -> None:
        batch = list(entries)
        with self._lock:
            self.writes += 1
            for entry in batch:
                self._entries[entry.key] = entry

    def get_decisions(self, identities: Sequence[str]) -> dict[str, dict[str, object]]:
        with self._lock:
            return {i: dict(self._decisions[i]) for i in identities if i in self._decisions}

    def put_decision(self, identity: str, record: dict[str, object]) -> None:
        with self._lock:
            self._decisions[identity] = dict(record)

    def decisions(self) -> dict[str, dict[str, object]]:
        with self._lock:
            return {i: dict(r) for i, r in self._decisions.items()}

    def info(self) -> CacheInfo:
        with self._lock:
            steps = Counter(e.step for e in self._entries.values())
            size = sum(len(e.payload) for e in self._entries.values())
            return CacheInfo("memory", len(self._entries), size, dict(steps))

    def clear(self, step: str | None = None) -> int:
        with self._lock:
            if step is None:
                n = len(self._entries)
                self._entries.clear()
                self._decisions.clear()
                return n
            doomed = [k for k, e in self._entries.items() if e.step == step]
            for key in doomed:
                del self._entries[key]
            return len(doomed)

    def config(self) -> dict[str, object]:
        """Nothing: an in-memory store has no settings."""
        return {}

    def close(self) -> None:
        pass

    def __len__(self) -> int:
        return len(self._entries)
