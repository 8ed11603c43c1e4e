"""What each input file was when an ingest last read it, kept with the index, so that a
re-ingest does not read a file whose size and times did not change.

Re-ingesting a large folder into an index to add a few files would otherwise read, load
(HTML to Markdown, a PDF's pages) and fingerprint every file already indexed: the whole
corpus, for 1 % more of it. Each file the run read and indexed whole is recorded as its
size, ``st_mtime_ns`` and ``st_ctime_ns`` (read *before* its bytes) and a hash of the
documents it gave (their ids and fingerprints) under the run's pipeline, loaders and file
limits. The next ingest of the same index skips a file, without opening it, when:

- its size and both times are what was recorded (an edit that keeps the size changes the
  modification time; restoring that time, as ``touch -d`` or ``cp -p`` can, changes the
  change time, which no user call sets);
- the index still holds exactly the documents it gave, with the same fingerprints (a
  document written since by another pipeline, damaged, removed or left unfinished by a crash
  fails this, and the file is read again);
- the pipeline, the loaders, the formats skipped and the size limit are the same.

A file whose times are less than :data:`RACY_SECONDS` older than the moment it was read is
not recorded: it may still be written within the same tick of the file system's clock, and
such an edit of the same size would leave both times as they were (git's "racily clean"
entries). It is read and recorded at a later run.

Files that failed, had documents skipped, or gave no document are not recorded (they are read
again, as before). The states are only a shortcut: without them (another store, an index
written before them, a file not recorded) a file is read and fingerprinted as always.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ._walk import InputFile

__all__ = ["RACY_SECONDS", "FileStates"]

#: A file modified or changed less than this before it was read is not recorded (see above).
RACY_SECONDS = 2.0
_RACY_NS = int(RACY_SECONDS * 1e9)


class FileStates:
    """The recorded states of a store's input files, checked and updated over one run.

    ``recorded`` is what the store kept (``{file id: "size:mtime_ns:ctime_ns:hash"}``);
    ``key`` names the run's pipeline, loaders and limits (files recorded under another key
    are read again).
    """

    #: The clock files' times are compared with (nanoseconds since the epoch, as
    #: ``st_mtime_ns``); tests move it.
    clock: Callable[[], int] = staticmethod(time.time_ns)

    def __init__(self, recorded: Mapping[str, str], key: str) -> None:
        self.recorded = dict(recorded)
        self.key = key
        #: File ids read (or found gone) in this run: their old states are dropped.
        self.touched: set[str] = set()
        #: States recorded in this run.
        self.fresh: dict[str, str] = {}

    @classmethod
    def of(
        cls, store: Any, identity: str, loaders: Any, limits: tuple[int, Mapping[str, str]]
    ) -> FileStates | None:
        """The states ``store`` keeps (``None``: it keeps none, or the loaders have no stable
        identity)."""
        read = getattr(store, "file_states", None)
        if not callable(read) or not callable(getattr(store, "set_file_states", None)):
            return None
        loader_key = _loaders_key(loaders)
        if loader_key is None:
            return None
        max_file_size, skip_formats = limits
        key = hashlib.sha256(json.dumps(
            ["ragloom.ingest/files/1", identity, loader_key, max_file_size, sorted(skip_formats)]
        ).encode()).hexdigest()
        recorded = read()
        if not isinstance(recorded, Mapping):
            recorded = {}
        return cls({k: v for k, v in recorded.items() if isinstance(v, str)}, key)

    def stat(self, file: InputFile) -> tuple[os.stat_result, int] | None:
        """The file's status, and the clock when it was read (``None``: it cannot be read;
        the load reports why)."""
        now = self.clock()
        try:
            return os.stat(file.path), now
        except OSError:
            return None

    def _digest(self, file: InputFile, documents: Sequence[tuple[str, str]]) -> str:
        text = f"{self.key}\n{file.collection}\n" + "".join(
            f"{len(d)}:{d}{p}\n" for d, p in sorted(documents)
        )
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]

    @staticmethod
    def _state(status: os.stat_result, digest: str) -> str:
        return f"{status.st_size}:{status.st_mtime_ns}:{status.st_ctime_ns}:{digest}"

    def unchanged(
        self, file: InputFile, status: os.stat_result, held: Sequence[tuple[str, str]]
    ) -> bool:
        """Whether ``file`` is as it was recorded and the index still holds ``held`` (its
        documents with their fingerprints) as the file gave them."""
        recorded = self.recorded.get(file.doc_id)
        if recorded is None or not held:
            return False
        return recorded == self._state(status, self._digest(file, held))

    def record(
        self, file: InputFile, found: tuple[os.stat_result, int] | None,
        documents: Sequence[tuple[str, str]] | None,
    ) -> None:
        """``file`` was read in this run (its status ``found`` before its bytes were read);
        ``documents``: the documents it gave, with their fingerprints, when the whole file
        was loaded without failure or skip (``None``: it is not recorded)."""
        self.touched.add(file.doc_id)
        self.fresh.pop(file.doc_id, None)
        if found is None or not documents:
            return
        status, now = found
        if max(status.st_mtime_ns, status.st_ctime_ns) > now - _RACY_NS:
            return  # racily clean: it may still change within the same tick
        self.fresh[file.doc_id] = self._state(status, self._digest(file, documents))

    def forget(self, file_ids: Sequence[str]) -> None:
        """These files' documents left the index: their states go."""
        for file_id in file_ids:
            self.touched.add(file_id)
            self.fresh.pop(file_id, None)

    def changed(self) -> bool:
        return bool(self.fresh) or any(f in self.recorded for f in self.touched)

    def save(self, store: Any) -> None:
        """Write the states, when this run changed them."""
        if not self.changed():
            return
        states = {f: s for f, s in self.recorded.items() if f not in self.touched}
        states.update(self.fresh)
        store.set_file_states(dict(sorted(states.items())))


def _loaders_key(loaders: Any) -> str | None:
    """The identity of a loader set: each loader's name and configuration, and which suffix
    goes to which (``None``: a loader without a stable identity)."""
    from ..identity import Uncacheable

    named = getattr(loaders, "loaders", None)
    if not isinstance(named, Mapping):
        return None
    try:
        listed = sorted((str(n), str(loader.config_hash)) for n, loader in named.items())
    except (Uncacheable, AttributeError):
        return None
    return json.dumps([listed, dict(getattr(loaders, "suffixes", {}) or {})])
