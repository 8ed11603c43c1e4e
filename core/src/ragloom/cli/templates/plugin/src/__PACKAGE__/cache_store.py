"""A cache store in one JSON Lines file."""

from __future__ import annotations

import json
import os
import threading
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ragloom import CacheEntry
from ragloom.cache import CacheInfo
from ragloom.errors import CacheCorruptError, CacheError


class JsonlCacheStore:
    """Per-item step outputs kept in one JSON Lines file.

    Each batch of entries is one line appended, flushed and synced: a batch is kept whole or
    not at all (a line cut short by a crash is left out when the file is read, and removed
    before the next write). The file is read once, when the store opens.
    """

    def __init__(self, path: str = ".ragloom/cache.jsonl") -> None:
        self.path = Path(path).expanduser()
        self._entries: dict[str, CacheEntry] = {}
        self._lock = threading.Lock()
        self._good_size = 0
        if self.path.exists():
            self._read()

    def _read(self) -> None:
        try:
            data = self.path.read_bytes()
        except OSError as exc:
            raise CacheError(f"cannot read the cache {self.path}: {exc.strerror}") from None
        good = 0
        for number, line in enumerate(data.splitlines(keepends=True), 1):
            if not line.endswith(b"\n"):
                break  # a batch cut short: never written
            try:
                batch = json.loads(line)
                entries = [CacheEntry(*fields) for fields in batch["entries"]]
            except (ValueError, KeyError, TypeError) as exc:
                raise CacheCorruptError(
                    f"the cache {self.path} is damaged at line {number} ({exc}); delete it to "
                    "start afresh"
                ) from None
            for entry in entries:
                self._entries[entry.key] = entry
            good += len(line)
        self._good_size = good

    def config(self) -> Mapping[str, Any]:
        return {"path": str(self.path)}

    def get_many(self, keys: Sequence[str]) -> dict[str, CacheEntry]:
        with self._lock:
            return {k: e for k in keys if (e := self._entries.get(k)) is not None}

    def put_many(self, entries: Iterable[CacheEntry]) -> None:
        batch = list(entries)
        if not batch:
            return
        fields = [
            [e.key, e.step, e.item_id, e.payload, e.outputs, e.created] for e in batch
        ]
        line = (json.dumps({"entries": fields}, ensure_ascii=False) + "\n").encode("utf-8")
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("ab") as handle:
                handle.truncate(self._good_size)  # drop a line cut short by a crash
                handle.write(line)
                handle.flush()
                os.fsync(handle.fileno())
            self._good_size += len(line)
            for entry in batch:
                self._entries[entry.key] = entry

    def info(self) -> CacheInfo:
        with self._lock:
            steps = Counter(e.step for e in self._entries.values())
            size = sum(len(e.payload) for e in self._entries.values())
            return CacheInfo(str(self.path), len(self._entries), size, dict(steps))

    def clear(self, step: str | None = None) -> int:
        with self._lock:
            doomed = [k for k, e in self._entries.items() if step is None or e.step == step]
            for key in doomed:
                del self._entries[key]
            self._rewrite()
            return len(doomed)

    def _rewrite(self) -> None:
        """Write the entries kept to a new file, then put it in place of the old one."""
        if not self.path.exists() and not self._entries:
            return
        temp = self.path.with_name(self.path.name + ".tmp")
        fields = [
            [e.key, e.step, e.item_id, e.payload, e.outputs, e.created]
            for e in self._entries.values()
        ]
        text = json.dumps({"entries": fields}, ensure_ascii=False) + "\n" if fields else ""
        temp.write_text(text, encoding="utf-8")
        os.replace(temp, self.path)
        self._good_size = len(text.encode("utf-8"))

    def close(self) -> None:
        """Nothing to release: every batch is written when it is put. Idempotent."""

    def __enter__(self) -> JsonlCacheStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
