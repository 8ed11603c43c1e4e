"""Writing JSON Lines atomically: a temp file beside the target, renamed into place on success.

A run that fails or is interrupted leaves the previous file (if any) untouched and no partial
file behind. Every line is strict RFC 8259 JSON: a record holding NaN or an infinity is refused
(:class:`ValueError`) rather than written as ``NaN``, which strict parsers reject. A file that
cannot be written (a folder that cannot be written, a full disk, a file size limit) raises
:class:`OutputError`, naming the file, and leaves the previous file as it was.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from types import TracebackType
from typing import Any

from ..errors import OutputError

__all__ = ["AtomicJsonlWriter", "OutputError", "chunk_record"]


def _host_tag() -> str:
    """A short tag of this machine, so that a process id is only ever judged on its host."""
    import hashlib
    import socket

    return hashlib.sha256(socket.gethostname().encode("utf-8", "replace")).hexdigest()[:6]


def _temp_prefix(name: str) -> str:
    """``.NAME.HOST.PID.``: the temporary file of ``NAME`` names its writer (host and process),
    so a later run can tell a temporary left by a killed run from one being written."""
    return f".{name}.{_host_tag()}.{os.getpid()}."


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # it exists, owned by someone else (EPERM)
        return True
    return True


def remove_stale_temporaries(path: str | os.PathLike[str]) -> list[Path]:
    """Remove the temporary files of ``path`` that a killed run (``kill -9``, a crash) left
    beside it; return those removed.

    Only ragloom's own are touched: a file named ``.NAME.HOST.PID.XXXXXXXX.tmp`` by this
    writer, on this host, owned by this user, whose process is no longer running. A temporary
    of a run still going on, of another user or of another host is left alone.
    """
    import re

    target = Path(path)
    pattern = re.compile(
        rf"\.{re.escape(target.name)}\.{_host_tag()}\.(\d+)\.[a-z0-9_]{{8}}\.tmp"
    )
    removed: list[Path] = []
    try:
        entries = list(os.scandir(target.parent if str(target.parent) else "."))
    except OSError:
        return removed
    me = os.getpid()
    for entry in entries:
        match = pattern.fullmatch(entry.name)
        if match is None:
            continue
        pid = int(match.group(1))
        try:
            owner = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if pid == me or owner.st_uid != os.getuid() or not entry.is_file(follow_symlinks=False):
            continue
        if _running(pid):
            continue
        try:
            os.unlink(entry.path)
        except OSError:
            continue
        removed.append(Path(entry.path))
    return removed


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


class AtomicJsonlWriter:
    """One JSON object per line, to ``path`` only when :meth:`commit` is called.

    Used as a context manager: leaving the block without ``commit()`` (an exception, Ctrl-C)
    deletes the temp file.
    """

    def __init__(self, path: str | os.PathLike[str], *, flag: str = "") -> None:
        self.path = Path(path)
        self.flag = flag
        self.count = 0
        self._done = True
        parent = self.path.parent
        try:
            parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=_temp_prefix(self.path.name), suffix=".tmp",
                                       dir=parent)
        except OSError as exc:
            raise OutputError(self.path, exc, flag) from None
        self.tmp_path = Path(tmp)
        try:
            os.chmod(fd, 0o666 & ~_umask())
            self._file = os.fdopen(fd, "w", encoding="utf-8", newline="\n", buffering=1 << 20)
        except BaseException:
            os.close(fd)
            self.tmp_path.unlink(missing_ok=True)
            raise
        self._done = False
        self._dumps = json.JSONEncoder(ensure_ascii=False, default=str, allow_nan=False).encode

    def write(self, record: Any) -> None:
        """Append one record.

        Raises:
            ValueError: the record holds NaN or an infinity (nothing is written for it).
            OutputError: the file cannot be written (the temporary file is removed).
        """
        self.write_line(self._dumps(record))

    def write_line(self, line: str) -> None:
        """Append one record already encoded as one line of strict JSON (without its newline),
        e.g. by a worker process with the same encoder.

        Raises:
            OutputError: the file cannot be written (the temporary file is removed).
        """
        try:
            self._file.write(line)
            self._file.write("\n")
        except OSError as exc:
            self._failed(exc)
        self.count += 1

    def commit(self) -> None:
        """Flush to disk and move the file into place.

        Raises:
            OutputError: the file cannot be written (the previous file is left as it was).
        """
        if self._done:
            return
        try:
            self._file.flush()
            os.fsync(self._file.fileno())
            self._file.close()
            os.replace(self.tmp_path, self.path)
        except OSError as exc:
            self._failed(exc)
        self._done = True
        remove_stale_temporaries(self.path)

    def _failed(self, exc: OSError) -> None:
        self.abort()
        raise OutputError(self.path, exc, self.flag) from None

    def abort(self) -> None:
        """Drop everything written; the target is left as it was."""
        if self._done:
            return
        self._done = True
        try:
            self._file.close()
        except OSError:
            pass  # closing flushes the buffer, which a full disk refuses: the file goes anyway
        finally:
            self.tmp_path.unlink(missing_ok=True)

    def __enter__(self) -> AtomicJsonlWriter:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.abort()


def chunk_record(item: Any) -> Any:
    """The JSON record of one pipeline output (a chunk: id, lineage, content, metadata)."""
    if hasattr(item, "parent_id") and hasattr(item, "content"):
        return {
            "id": item.id,
            "parent": item.parent_id,
            "start": item.start,
            "end": item.end,
            "index": item.index,
            "content": item.content,
            "content_format": str(item.content_format),
            "metadata": item.metadata,
        }
    if hasattr(item, "model_dump"):
        return item.model_dump(mode="json")
    return item
