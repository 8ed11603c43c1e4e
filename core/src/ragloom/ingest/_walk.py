"""Finding the files to ingest under the paths given.

Pure standard library. Document ids are paths relative to a root (the index's, or the common
root of the arguments), with ``/`` separators, so ``docs``, ``./docs`` and ``/abs/path/docs``
give the same ids. Ids are lossless and reversible: every ``%`` is written ``%25`` and every byte
of a name that is not valid UTF-8 ``%XX`` (:func:`file_id`), so two different files never share
an id (and two that still would, on a case-insensitive filesystem, are reported, never merged).
Each file also gets a *collection*: the top-level folder it is in under the argument it was
found through, or, for a file directly under that argument (or given itself), the name of the
argument's own folder; one name given for the run overrides them all.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

__all__ = [
    "InputFile",
    "WalkProblem",
    "WalkResult",
    "collection_of",
    "display_path",
    "file_id",
    "folder_name",
    "walk_inputs",
]


@dataclass(frozen=True, slots=True)
class InputFile:
    """A file to ingest: its path (as reached from the arguments, usable with ``open``), its
    document id, its path for display (always valid UTF-8) and its collection (``None``: none
    recorded)."""

    path: str
    doc_id: str
    shown: str
    collection: str | None = None


@dataclass(frozen=True, slots=True)
class WalkProblem:
    """A file or folder that could not be listed or identified, and why."""

    path: str
    doc_id: str
    reason: str
    kind: str


@dataclass(slots=True)
class WalkResult:
    """Files found under the arguments (sorted by id), problems, the common root."""

    files: list[InputFile]
    problems: list[WalkProblem]
    root: str


def display_path(path: str) -> str:
    """``path`` as valid UTF-8 text: bytes that are not UTF-8 become ``%XX``."""
    raw = os.fsencode(path)
    try:
        raw.decode("utf-8")
        return path
    except UnicodeDecodeError:
        return _escape(raw)


def file_id(relative: str) -> str:
    """The document id of a file at ``relative`` (``/``-separated) path: ``%`` as ``%25``, each
    byte that is not valid UTF-8 as ``%XX``; ``urllib.parse.unquote_to_bytes`` gives the
    name's bytes back, so distinct names never share an id."""
    return _escape(os.fsencode(relative))


def _escape(raw: bytes) -> str:
    """Reversible text for bytes that are not all UTF-8: ``%`` and undecodable bytes as ``%XX``."""
    out: list[str] = []
    text = raw.decode("utf-8", errors="surrogateescape")
    for ch in text:
        code = ord(ch)
        if 0xDC80 <= code <= 0xDCFF:  # an undecodable byte, smuggled by surrogateescape
            out.append(f"%{code - 0xDC00:02X}")
        elif ch == "%":
            out.append("%25")
        else:
            out.append(ch)
    return "".join(out)


def _is_hidden(name: str) -> bool:
    return name.startswith(".")


def folder_name(path: str) -> str:
    """The name of the folder at ``path`` (``.`` and ``docs/`` are named as the folders they
    are), valid UTF-8; ``"root"`` for the file system's root."""
    name = os.path.basename(os.path.normpath(os.path.abspath(path)))
    return display_path(name) if name else "root"


def collection_of(arg: str, path: str) -> str:
    """The collection of the file at ``path`` found through the argument ``arg``: the
    top-level folder it is in under ``arg``, else (a file directly under ``arg``, or ``arg``
    itself a file) the name of ``arg``'s own folder."""
    if not os.path.isdir(arg):
        return folder_name(os.path.dirname(os.path.abspath(arg)))
    parts = os.path.relpath(os.path.abspath(path), os.path.abspath(arg)).split(os.sep)
    return display_path(parts[0]) if len(parts) > 1 else folder_name(arg)


def input_root(paths: Iterable[str]) -> str:
    """The common root of ``paths`` (a folder counts as itself, a file as its folder)."""
    anchors = []
    for arg in paths:
        absolute = os.path.abspath(arg)
        anchors.append(absolute if os.path.isdir(arg) else os.path.dirname(absolute))
    return os.path.commonpath(anchors) if anchors else os.getcwd()


def walk_inputs(
    paths: Iterable[str],
    *,
    exclude: Iterable[str] = (),
    exclude_dirs: Iterable[str] = (),
    root: str | None = None,
    collection: str | None = None,
) -> WalkResult:
    """Every file under ``paths`` (files as given, folders walked), sorted by document id.

    Inside folders, hidden entries and symlinked folders are not followed; a folder that cannot
    be listed is a :class:`WalkProblem`. Paths in ``exclude`` (the run's own output and cache
    files) and everything under ``exclude_dirs`` (the index written) are left out. A file
    reached twice is listed once. Ids are relative to ``root`` (default: the common root of
    ``paths``; every path must then be under it). Each file's collection is ``collection``
    when given, else its folder's (see :func:`collection_of`).
    """
    args = list(paths)
    if not args:
        return WalkResult([], [], os.getcwd())
    excluded = {os.path.abspath(p) for p in exclude}
    pruned = {os.path.abspath(p) for p in exclude_dirs}
    root = input_root(args) if root is None else os.path.abspath(root)

    def ident(path: str) -> str:
        return file_id(os.path.relpath(os.path.abspath(path), root).replace(os.sep, "/"))

    def inside_pruned(path: str) -> bool:
        absolute = os.path.abspath(path)
        return any(absolute == d or absolute.startswith(d + os.sep) for d in pruned)

    found: dict[str, InputFile] = {}
    problems: list[WalkProblem] = []

    def place(path: str, absolute: str, doc_id: str, kept: str | None) -> None:
        """Record the file, or report its id as taken by another file (the same file named
        twice is recorded once)."""
        previous = found.get(doc_id)
        if previous is None:
            found[doc_id] = InputFile(path, doc_id, display_path(path), kept)
        elif os.path.abspath(previous.path) != absolute:
            problems.append(
                WalkProblem(
                    display_path(path), doc_id,
                    f"its document id {doc_id!r} is already taken by {previous.shown}",
                    "duplicate-id",
                )
            )

    def add(arg: str, path: str) -> None:
        absolute = os.path.abspath(path)
        if absolute in excluded or inside_pruned(absolute):
            return
        place(
            path, absolute, ident(path),
            collection if collection is not None else collection_of(arg, path),
        )

    for arg in args:
        if not os.path.isdir(arg):
            add(arg, arg)
            continue
        if inside_pruned(arg):
            continue
        # What add() finds for each file, worked out once per folder (a large tree has
        # tens of thousands of files and few folders).
        top = os.path.abspath(arg)
        own = folder_name(arg) if collection is None else collection
        for folder, names in _walk_dir(arg, problems, ident, pruned):
            absolute_folder = os.path.normpath(os.path.join(top, os.path.relpath(folder, arg)))
            relative = os.path.relpath(absolute_folder, root).replace(os.sep, "/")
            prefix = "" if relative == "." else relative + "/"
            if collection is not None:
                kept = collection
            else:
                inner = os.path.relpath(absolute_folder, top)
                kept = own if inner == "." else display_path(inner.split(os.sep)[0])
            for name in names:
                path = os.path.join(folder, name)
                absolute = os.path.join(absolute_folder, name)
                if absolute in excluded:
                    continue
                place(path, absolute, file_id(prefix + name), kept)
    files = sorted(found.values(), key=lambda f: f.doc_id)
    problems.sort(key=lambda p: p.doc_id)
    return WalkResult(files, problems, root)


def _walk_dir(
    top: str, problems: list[WalkProblem], ident: Callable[[str], str], pruned: set[str]
) -> Iterator[tuple[str, list[str]]]:
    """Each folder under ``top`` (as ``os.walk`` reaches it) with its files' names, sorted;
    hidden entries and the ``pruned`` folders left out."""
    def onerror(exc: OSError) -> None:
        where = exc.filename if isinstance(exc.filename, str) else top
        problems.append(
            WalkProblem(
                display_path(where),
                ident(where).rstrip("/") + "/",
                f"cannot list folder: {exc.strerror or exc}",
                "unreadable",
            )
        )

    for dirpath, dirnames, filenames in os.walk(top, onerror=onerror):
        dirnames[:] = sorted(
            d for d in dirnames
            if not _is_hidden(d) and os.path.abspath(os.path.join(dirpath, d)) not in pruned
        )
        yield dirpath, [name for name in sorted(filenames) if not _is_hidden(name)]
