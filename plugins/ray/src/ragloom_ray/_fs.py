"""Inputs on any filesystem pyarrow reads (``s3://``, ``gs://``, ``abfs://``, ``hdfs://``,
``file://``...), walked and read with the same rules as local files.

Document ids are paths relative to the common root of the arguments, ``/``-separated, as for
local paths; hidden entries are left out; files are sorted by id. A file is read only up to the
size limit, and a problem (missing, too large, unreadable) becomes the same
:class:`~ragloom.loading.LoadError` a local file gets.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping, Sequence
from typing import Any

from ragloom.errors import ConfigurationError
from ragloom.ingest import InputFile, WalkProblem, WalkResult
from ragloom.loading import LoadError, SourceFile

__all__ = ["is_uri", "read_uri_file", "walk_uris"]


def is_uri(path: str) -> bool:
    """Whether ``path`` names a file through a filesystem URI (``scheme://...``)."""
    scheme, sep, _ = path.partition("://")
    return bool(sep) and scheme.isidentifier()


def _filesystem(uri: str) -> tuple[Any, str]:
    from pyarrow import fs

    try:
        return fs.FileSystem.from_uri(uri)  # type: ignore[no-any-return]
    except Exception as exc:  # noqa: BLE001 - pyarrow raises several kinds
        raise ConfigurationError(f"cannot open {uri}: {exc}") from None


def _hidden(relative: str) -> bool:
    return any(part.startswith(".") for part in relative.split("/"))


def walk_uris(uris: Sequence[str], *, collection: str | None = None) -> WalkResult:
    """Every file under ``uris`` (all on one filesystem), sorted by document id.

    Each file's collection is ``collection`` when given, else as for local paths (see
    :func:`ragloom.ingest.walk_inputs`): the top-level folder it is in under the URI it was
    found through, or that URI's own folder name for a file directly under it (or given).

    Raises:
        ConfigurationError: a URI does not exist, cannot be opened, or the URIs are on
            different filesystems.
    """
    from pyarrow import fs

    opened = [_filesystem(u) for u in uris]
    kinds = {type(f).__name__ for f, _ in opened}
    if len(kinds) > 1 or len({u.partition("://")[0] for u in uris}) > 1:
        raise ConfigurationError(
            f"inputs on different filesystems cannot be ingested together: {', '.join(uris)}"
        )
    filesystem = opened[0][0]
    infos = filesystem.get_file_info([p for _, p in opened])
    anchors = []
    for uri, info in zip(uris, infos, strict=True):
        if info.type == fs.FileType.NotFound:
            raise ConfigurationError(f"no such file or folder: {uri}")
        is_dir = info.type == fs.FileType.Directory
        anchors.append(info.path if is_dir else posixpath.dirname(info.path))
    root = posixpath.commonpath(anchors) if len(anchors) > 1 else anchors[0]
    scheme = uris[0].partition("://")[0]
    found: dict[str, InputFile] = {}
    problems: list[WalkProblem] = []
    for uri, info in zip(uris, infos, strict=True):
        if info.type == fs.FileType.Directory:
            try:
                listed = filesystem.get_file_info(fs.FileSelector(info.path, recursive=True))
            except OSError as exc:
                problems.append(WalkProblem(uri, uri, f"cannot list folder: {exc}", "unreadable"))
                continue
            entries = [
                e for e in listed
                if e.type == fs.FileType.File
                and not _hidden(posixpath.relpath(e.path, info.path))
            ]
        else:
            entries = [info]
        for entry in entries:
            doc_id = posixpath.relpath(entry.path, root)
            full = f"{scheme}://{entry.path}" if scheme != "file" else f"file://{entry.path}"
            found.setdefault(doc_id, InputFile(
                full, doc_id, full,
                collection if collection is not None else _collection_of(info, entry.path),
            ))
    files = sorted(found.values(), key=lambda f: f.doc_id)
    return WalkResult(files, problems, f"{scheme}://{root}")


def _collection_of(arg: Any, path: str) -> str:
    """The collection of the file at ``path`` found through the URI whose info is ``arg``."""
    from pyarrow import fs

    if arg.type != fs.FileType.Directory:
        return _folder_name(posixpath.dirname(arg.path))
    parts = posixpath.relpath(path, arg.path).split("/")
    return parts[0] if len(parts) > 1 else _folder_name(arg.path)


def _folder_name(path: str) -> str:
    return posixpath.basename(posixpath.normpath(path)) or "root"


def read_uri_file(
    path: str,
    *,
    doc_id: str,
    name: str | None = None,
    max_bytes: int,
    metadata: Mapping[str, Any] | None = None,
) -> SourceFile:
    """Read the file at URI ``path`` (the signature of
    :func:`~ragloom.loaders_builtin.read_source_file`).

    Raises:
        LoadError: missing, not a file, larger than ``max_bytes``, or unreadable.
    """
    from pyarrow import fs

    shown = name if name is not None else path
    try:
        filesystem, where = fs.FileSystem.from_uri(path)
        info = filesystem.get_file_info(where)
    except Exception as exc:  # noqa: BLE001 - pyarrow raises several kinds
        raise LoadError(f"{shown}: cannot read: {exc}") from None
    if info.type == fs.FileType.NotFound:
        raise LoadError(f"{shown}: cannot read: no such file (removed)")
    if info.type != fs.FileType.File:
        raise LoadError(f"{shown}: not a regular file (a folder)")
    if info.size is not None and info.size > max_bytes:
        raise LoadError(f"{shown}: file too large: {info.size} bytes, limit {max_bytes}")
    try:
        with filesystem.open_input_stream(where) as handle:
            data = handle.read(max_bytes + 1)
    except Exception as exc:  # noqa: BLE001
        raise LoadError(f"{shown}: cannot read: {exc}") from None
    if len(data) > max_bytes:
        raise LoadError(f"{shown}: file too large: more than {max_bytes} bytes")
    meta = dict(metadata or {})
    meta.setdefault("size", len(data))
    return SourceFile(shown, bytes(data), doc_id, meta)
