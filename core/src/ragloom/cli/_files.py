"""Input files for ``ragloom ingest``: finding them, detecting their format, reading them safely.

Pure standard library (no pydantic, no click), so it is cheap to import and easy to test. Every
file that cannot become a document is reported as a :class:`FileFailure` with a reason; nothing
is skipped silently except hidden entries (names starting with ``.``) found inside folders and
the command's own output files.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

__all__ = [
    "BINARY_PROBE",
    "CODE_LANGUAGES",
    "FileFailure",
    "LoadedText",
    "SourceFile",
    "WalkResult",
    "detect_format",
    "read_source",
    "walk_inputs",
]

#: Bytes inspected for a NUL byte to tell binary files from text.
BINARY_PROBE = 8192

_DOC_FORMATS: dict[str, str] = {
    ".md": "markdown",
    ".markdown": "markdown",
    ".mdown": "markdown",
    ".mkd": "markdown",
    ".rst": "rst",
    ".rest": "rst",
    ".txt": "text",
    ".text": "text",
    "": "text",
    ".html": "html",
    ".htm": "html",
    ".xhtml": "html",
}

#: Source-code extensions and the language recorded in ``metadata["language"]``.
CODE_LANGUAGES: dict[str, str] = {
    ".py": "python",
    ".pyi": "python",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascript",
    ".ts": "typescript",
    ".tsx": "typescript",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
    ".kt": "kotlin",
    ".kts": "kotlin",
    ".scala": "scala",
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".hh": "cpp",
    ".hpp": "cpp",
    ".hxx": "cpp",
    ".cs": "csharp",
    ".rb": "ruby",
    ".php": "php",
    ".swift": "swift",
    ".sh": "bash",
    ".bash": "bash",
    ".zsh": "bash",
    ".ps1": "powershell",
    ".sql": "sql",
    ".lua": "lua",
    ".pl": "perl",
    ".pm": "perl",
    ".r": "r",
    ".jl": "julia",
    ".dart": "dart",
    ".ex": "elixir",
    ".exs": "elixir",
    ".erl": "erlang",
    ".hs": "haskell",
    ".ml": "ocaml",
    ".clj": "clojure",
    ".groovy": "groovy",
}


@dataclass(frozen=True, slots=True)
class SourceFile:
    """A file to ingest: its path (as reached from the arguments) and its document id."""

    path: str
    doc_id: str


@dataclass(frozen=True, slots=True)
class FileFailure:
    """A file or folder that could not become a document, and why."""

    path: str
    doc_id: str
    reason: str
    kind: str  # unreadable, not-a-file, oversized, empty, binary, encoding

    def to_dict(self) -> dict[str, str]:
        return {
            "item": self.doc_id,
            "source": self.path,
            "stage": "read",
            "kind": self.kind,
            "reason": self.reason,
        }


@dataclass(frozen=True, slots=True)
class LoadedText:
    """A file read as text, with its detected content format."""

    text: str
    content_format: str
    size: int
    language: str | None = None


@dataclass(slots=True)
class WalkResult:
    """Files found under the arguments (sorted by id), folders that failed, the common root."""

    files: list[SourceFile]
    failures: list[FileFailure]
    root: str


def _split_ext(path: str) -> str:
    name = os.path.basename(path)
    stem, ext = os.path.splitext(name)
    if not stem:  # ".bashrc" has no extension, it is a name
        return ""
    return ext.lower()


def detect_format(path: str, text: str) -> tuple[str, str | None]:
    """``(content_format, language)`` of a file from its extension (and, for JSON, content).

    A ``.json`` file whose top level has ``"schema_name": "DoclingDocument"`` is ``docling``;
    other JSON is ``json``. Unknown extensions are plain ``text``.
    """
    ext = _split_ext(path)
    if ext == ".json":
        if '"DoclingDocument"' in text:
            try:
                data = json.loads(text)
            except ValueError:
                return "json", None
            if isinstance(data, dict) and data.get("schema_name") == "DoclingDocument":
                return "docling", None
        return "json", None
    language = CODE_LANGUAGES.get(ext)
    if language is not None:
        return "code", language
    return _DOC_FORMATS.get(ext, "text"), None


def read_source(path: str, max_bytes: int) -> LoadedText | tuple[str, str]:
    """Read ``path`` as UTF-8 text, or return ``(kind, reason)`` saying why it cannot be used.

    Checks, in order: the file exists and is a regular file (a FIFO would block forever), its
    size is within ``max_bytes``, it is not empty, it has no NUL byte in its first
    :data:`BINARY_PROBE` bytes, it decodes as UTF-8 (a leading BOM is dropped), and it holds
    more than whitespace.
    """
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return "unreadable", "cannot read: no such file (a dangling symlink, or removed)"
    except OSError as exc:
        return "unreadable", f"cannot read: {exc.strerror or exc}"
    if not stat.S_ISREG(st.st_mode):
        kind = (
            "a FIFO"
            if stat.S_ISFIFO(st.st_mode)
            else "a socket"
            if stat.S_ISSOCK(st.st_mode)
            else "a device"
            if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode)
            else "not a regular file"
        )
        return "not-a-file", f"not a regular file ({kind})"
    if st.st_size > max_bytes:
        return "oversized", (
            f"file too large: {st.st_size} bytes, limit {max_bytes} (--max-file-size)"
        )
    if st.st_size == 0:
        return "empty", "empty file"
    try:
        with open(path, "rb") as handle:
            data = handle.read(max_bytes + 1)
    except PermissionError:
        return "unreadable", "cannot read: permission denied"
    except OSError as exc:
        return "unreadable", f"cannot read: {exc.strerror or exc}"
    if len(data) > max_bytes:
        return "oversized", f"file too large: more than {max_bytes} bytes (--max-file-size)"
    if not data:
        return "empty", "empty file"
    nul = data.find(b"\0", 0, BINARY_PROBE)
    if nul >= 0:
        return "binary", f"binary file (NUL byte at offset {nul})"
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return "encoding", f"not valid UTF-8: {exc.reason} at byte {exc.start}"
    if text.startswith("\ufeff"):
        text = text[1:]
    if not text.strip():
        return "empty", "file holds only whitespace"
    content_format, language = detect_format(path, text)
    return LoadedText(text, content_format, len(data), language)


def _is_hidden(name: str) -> bool:
    return name.startswith(".")


def walk_inputs(paths: Iterable[str], *, exclude: Iterable[str] = ()) -> WalkResult:
    """Every file under ``paths`` (files as given, folders walked), sorted by document id.

    Document ids are paths relative to the common root of the arguments, with ``/``
    separators. Inside folders, hidden entries and symlinked folders are not followed; a
    folder that cannot be listed becomes a :class:`FileFailure`. Paths in ``exclude`` (the
    command's own output and cache files) are left out. A file reached twice is listed once.
    """
    args = list(paths)
    if not args:
        return WalkResult([], [], os.getcwd())
    excluded = {os.path.abspath(p) for p in exclude}
    anchors = []
    for arg in args:
        absolute = os.path.abspath(arg)
        anchors.append(absolute if os.path.isdir(arg) else os.path.dirname(absolute))
    root = os.path.commonpath(anchors)

    def ident(path: str) -> str:
        return os.path.relpath(os.path.abspath(path), root).replace(os.sep, "/")

    found: dict[str, SourceFile] = {}
    failures: list[FileFailure] = []

    def add(path: str) -> None:
        absolute = os.path.abspath(path)
        if absolute in excluded:
            return
        doc_id = ident(path)
        found.setdefault(doc_id, SourceFile(path, doc_id))

    for arg in args:
        if not os.path.isdir(arg):
            add(arg)
            continue
        for path in _walk_dir(arg, failures, ident):
            add(path)
    files = sorted(found.values(), key=lambda f: f.doc_id)
    failures.sort(key=lambda f: f.doc_id)
    return WalkResult(files, failures, root)


def _walk_dir(top: str, failures: list[FileFailure], ident: Callable[[str], str]) -> Iterator[str]:
    def onerror(exc: OSError) -> None:
        where = exc.filename if isinstance(exc.filename, str) else top
        failures.append(
            FileFailure(
                where,
                ident(where).rstrip("/") + "/",
                f"cannot list folder: {exc.strerror or exc}",
                "unreadable",
            )
        )

    for dirpath, dirnames, filenames in os.walk(top, onerror=onerror):
        dirnames[:] = sorted(d for d in dirnames if not _is_hidden(d))
        for name in sorted(filenames):
            if not _is_hidden(name):
                yield os.path.join(dirpath, name)
