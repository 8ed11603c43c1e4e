"""The loaders built into the core, the rules for reading a file safely, and picking a loader.

Built in (entry points under ``ragloom.loaders`` of the ``ragloom`` distribution):

- ``text``: ``.txt`` and ``.text``, and any file whose first bytes are UTF-8 text and whose
  suffix no loader claims (no suffix, ``.csv``, ``.toml``...); content format ``text``;
- ``markdown``: ``.md``, ``.markdown``, ``.mdown``, ``.mkd``; ``markdown``;
- ``rst``: ``.rst``, ``.rest``; ``rst``;
- ``code``: source files (``.py``, ``.rs``... see :data:`CODE_LANGUAGES`) and scripts with a
  ``#!`` line; ``code``, with ``metadata["language"]``;
- ``json``: ``.json``; ``docling`` for a Docling document (its top level says
  ``"schema_name": "DoclingDocument"``), else ``json``.

Every one reads UTF-8 (a leading byte-order mark is dropped) and refuses, with a
:class:`~ragloom.loading.LoadError` naming the file and the problem, a file that is empty or only
whitespace, binary (a NUL byte among its first :data:`BINARY_PROBE` bytes) or not valid UTF-8.
PDF, DOCX and HTML need the ``ragloom-loaders`` plugin: without it such a file is reported
(:class:`NoLoaderError` with the install command), never read as text or markup.

:func:`read_source_file` reads a path into a :class:`~ragloom.loading.SourceFile` (regular files
only, within a size limit); :class:`LoaderSet` holds the installed loaders and picks one per file,
by suffix first, then by sniffing the first bytes.

Pure standard library at import time (the documents' pydantic model is imported when a loader
loads), so listing and picking loaders is cheap.
"""

from __future__ import annotations

import codecs
import json
import os
import stat
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar

from .errors import ConfigurationError
from .loading import Loader, LoadError, SourceFile

if TYPE_CHECKING:
    from .models import Document
    from .plugins import Registry

__all__ = [
    "BINARY_PROBE",
    "CODE_LANGUAGES",
    "PLUGIN_FORMATS",
    "CodeLoader",
    "JsonLoader",
    "LoaderSet",
    "MarkdownLoader",
    "NoLoaderError",
    "RstLoader",
    "TextLoader",
    "builtin_loaders",
    "decode_text",
    "read_source_file",
    "sniff_format",
]

#: Bytes inspected for a NUL byte to tell binary files from text.
BINARY_PROBE = 8192

#: Source-code suffixes and the language recorded in ``metadata["language"]``.
CODE_LANGUAGES: Mapping[str, str] = MappingProxyType(
    {
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
)

# Interpreters named on a ``#!`` line, for scripts without a suffix.
_SHEBANG_LANGUAGES = {
    "python": "python",
    "python3": "python",
    "python2": "python",
    "sh": "bash",
    "bash": "bash",
    "zsh": "bash",
    "dash": "bash",
    "node": "javascript",
    "ruby": "ruby",
    "perl": "perl",
    "lua": "lua",
    "php": "php",
}

#: Formats read by a plugin, by suffix: ``(what, distribution)``. A file of these formats is
#: reported with the install command when no installed loader reads it.
PLUGIN_FORMATS: Mapping[str, tuple[str, str]] = MappingProxyType(
    {
        ".pdf": ("PDF", "ragloom-loaders"),
        ".docx": ("DOCX", "ragloom-loaders"),
        ".html": ("HTML", "ragloom-loaders"),
        ".htm": ("HTML", "ragloom-loaders"),
        ".xhtml": ("HTML", "ragloom-loaders"),
    }
)
_PLUGIN_BY_FORMAT = {what: dist for what, dist in PLUGIN_FORMATS.values()}


class NoLoaderError(LoadError):
    """No installed loader reads a file.

    ``hint`` says how to install the plugin that reads its format, when the format is known
    (``install ragloom-loaders (...)``, worded by :func:`ragloom.plugins.install_hint`), else
    ``None``.
    """

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.hint = hint


# -- sniffing ----------------------------------------------------------------------------------


def _skip_prolog(head: bytes) -> bytes:
    """``head`` without a BOM, leading whitespace, an XML declaration and comments."""
    text = head.removeprefix(codecs.BOM_UTF8).lstrip()
    for _ in range(8):
        if text.startswith(b"<?xml"):
            end = text.find(b"?>")
            text = text[end + 2 :].lstrip() if end >= 0 else b""
        elif text.startswith(b"<!--"):
            end = text.find(b"-->")
            text = text[end + 3 :].lstrip() if end >= 0 else b""
        else:
            break
    return text


def sniff_format(head: bytes) -> str | None:
    """The plugin format (``"PDF"``, ``"DOCX"``, ``"HTML"``) that ``head`` starts like, if any.

    ``head`` is a file's first bytes. PDF: a ``%PDF-`` header in the first 1024 bytes; DOCX: a
    ZIP archive naming ``word/`` entries; HTML: a document that opens with ``<!DOCTYPE html``,
    ``<html``, ``<head`` or ``<body`` (after an optional XML declaration or comments).
    """
    if b"%PDF-" in head[:1024]:
        return "PDF"
    if head.startswith(b"PK\x03\x04") and b"word/" in head:
        return "DOCX"
    lowered = _skip_prolog(head[:2048]).lower()
    if lowered.startswith((b"<!doctype html", b"<html", b"<head", b"<body")):
        return "HTML"
    return None


def _binary_offset(data: bytes) -> int:
    return data.find(b"\0", 0, BINARY_PROBE)


def _looks_like_text(head: bytes) -> bool:
    """UTF-8 without NUL bytes (a multi-byte character cut at the end is allowed)."""
    if b"\0" in head:
        return False
    try:
        codecs.getincrementaldecoder("utf-8")().decode(head, final=False)
    except UnicodeDecodeError:
        return False
    return True


# -- reading -----------------------------------------------------------------------------------


def read_source_file(
    path: str | os.PathLike[str],
    *,
    doc_id: str,
    name: str | None = None,
    max_bytes: int,
    metadata: Mapping[str, Any] | None = None,
) -> SourceFile:
    """Read the file at ``path`` into a :class:`~ragloom.loading.SourceFile`.

    ``name`` is the path recorded in ``metadata["source"]`` and messages (default: ``path``);
    ``metadata`` is copied into the source (``size`` is added). Only regular files are read (a
    FIFO would block forever, a device never ends), and only up to ``max_bytes``.

    Raises:
        LoadError: the file cannot be read (missing, not a regular file, permission denied) or
            is larger than ``max_bytes``; the message names the file and the problem.
    """
    where = os.fspath(path)
    shown = name if name is not None else where
    try:
        st = os.stat(where)
    except FileNotFoundError:
        raise LoadError(
            f"{shown}: cannot read: no such file (a dangling symlink, or removed)"
        ) from None
    except OSError as exc:
        raise LoadError(f"{shown}: cannot read: {exc.strerror or exc}") from None
    if not stat.S_ISREG(st.st_mode):
        kind = (
            "a FIFO"
            if stat.S_ISFIFO(st.st_mode)
            else "a socket"
            if stat.S_ISSOCK(st.st_mode)
            else "a device"
            if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode)
            else "a folder"
            if stat.S_ISDIR(st.st_mode)
            else "not a regular file"
        )
        raise LoadError(f"{shown}: not a regular file ({kind})")
    if st.st_size > max_bytes:
        raise LoadError(f"{shown}: file too large: {st.st_size} bytes, limit {max_bytes}")
    try:
        with open(where, "rb") as handle:
            # Never ask for more than the file holds (+1 to see it grow): a huge limit must
            # not allocate a huge buffer.
            data = handle.read(min(max_bytes, st.st_size) + 1)
    except PermissionError:
        raise LoadError(f"{shown}: cannot read: permission denied") from None
    except OSError as exc:
        raise LoadError(f"{shown}: cannot read: {exc.strerror or exc}") from None
    if len(data) > max_bytes:  # it grew since stat()
        raise LoadError(f"{shown}: file too large: more than {max_bytes} bytes")
    meta = dict(metadata or {})
    meta.setdefault("size", len(data))
    return SourceFile(shown, data, doc_id, meta)


def decode_text(source: SourceFile) -> str:
    """``source``'s bytes as text: UTF-8, a leading byte-order mark dropped.

    Raises:
        LoadError: the file is empty or only whitespace, binary (a NUL byte in its first
            :data:`BINARY_PROBE` bytes) or not valid UTF-8.
    """
    data = source.data
    if not data:
        raise LoadError(f"{source.path}: empty file")
    nul = _binary_offset(data)
    if nul >= 0:
        raise LoadError(f"{source.path}: binary file (NUL byte at offset {nul})")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise LoadError(
            f"{source.path}: not valid UTF-8: {exc.reason} at byte {exc.start}"
        ) from None
    text = text.removeprefix("\ufeff")
    if not text.strip():
        raise LoadError(f"{source.path}: file holds only whitespace")
    return text


# -- the built-in loaders ----------------------------------------------------------------------


class _BuiltinLoader(Loader):
    """A UTF-8 text format: decoded with :func:`decode_text`, one document per file."""

    content_format: ClassVar[str] = "text"

    def load(self, source: SourceFile) -> list[Document]:
        text = decode_text(source)
        content_format, extra = self.describe(source, text)
        return [_document(source, text, content_format, extra)]

    def describe(self, source: SourceFile, text: str) -> tuple[str, dict[str, Any]]:
        """The content format and the loader's own metadata for ``text``."""
        return self.content_format, {}


def _document(
    source: SourceFile, content: str, content_format: str, extra: Mapping[str, Any]
) -> Document:
    from .models import Document

    metadata: dict[str, Any] = {"source": source.path, **source.metadata, **extra}
    return Document(
        id=source.doc_id, content=content, content_format=content_format, metadata=metadata
    )


class TextLoader(_BuiltinLoader):
    """Plain text: ``.txt`` and ``.text`` files, and any file whose first bytes are text.

    The fallback for suffixes no loader claims (no suffix, ``.csv``, ``.toml``, ``.log``...):
    it sniffs UTF-8 without NUL bytes that does not start like a PDF, DOCX or HTML document
    (those are never read as raw bytes or markup).
    """

    step_id = "ragloom/text-loader"
    suffixes = frozenset({".txt", ".text"})
    produces = frozenset({"text"})
    content_format = "text"

    def sniff(self, head: bytes) -> bool:
        return sniff_format(head) is None and _looks_like_text(head)


class MarkdownLoader(_BuiltinLoader):
    """Markdown files."""

    step_id = "ragloom/markdown-loader"
    suffixes = frozenset({".md", ".markdown", ".mdown", ".mkd"})
    produces = frozenset({"markdown"})
    content_format = "markdown"


class RstLoader(_BuiltinLoader):
    """reStructuredText files."""

    step_id = "ragloom/rst-loader"
    suffixes = frozenset({".rst", ".rest"})
    produces = frozenset({"rst"})
    content_format = "rst"


def _shebang_language(head: bytes) -> str | None:
    if not head.startswith(b"#!"):
        return None
    line = head[2:].split(b"\n", 1)[0].decode("utf-8", "replace").split()
    if not line:
        return None
    program = line[0].rsplit("/", 1)[-1]
    if program == "env":
        args = [a for a in line[1:] if not a.startswith("-")]
        program = args[0] if args else ""
    program = program.rstrip("0123456789.") if program not in _SHEBANG_LANGUAGES else program
    return _SHEBANG_LANGUAGES.get(program)


class CodeLoader(_BuiltinLoader):
    """Source code: the suffixes of :data:`CODE_LANGUAGES`, and scripts with a ``#!`` line.

    Records the language in ``metadata["language"]`` (``"python"``, ``"rust"``...).
    """

    step_id = "ragloom/code-loader"
    suffixes = frozenset(CODE_LANGUAGES)
    produces = frozenset({"code"})
    content_format = "code"

    def sniff(self, head: bytes) -> bool:
        return _shebang_language(head) is not None and _looks_like_text(head)

    def describe(self, source: SourceFile, text: str) -> tuple[str, dict[str, Any]]:
        language = CODE_LANGUAGES.get(source.suffix) or _shebang_language(source.data[:256])
        return "code", ({"language": language} if language else {})


class JsonLoader(_BuiltinLoader):
    """JSON files: ``docling`` when the top level is a Docling document, else ``json``.

    A Docling document is recognised by its content (``"schema_name": "DoclingDocument"`` at
    the top level), whatever the file is called; its ``name`` becomes ``metadata["title"]``.
    A ``.json`` file that is not valid JSON is refused (the message gives line and column).
    """

    step_id = "ragloom/json-loader"
    suffixes = frozenset({".json"})
    produces = frozenset({"json", "docling"})

    def describe(self, source: SourceFile, text: str) -> tuple[str, dict[str, Any]]:
        try:
            data = json.loads(text)
        except ValueError as exc:
            where = (
                f" (line {exc.lineno}, column {exc.colno})"
                if isinstance(exc, json.JSONDecodeError)
                else ""
            )
            message = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
            raise LoadError(f"{source.path}: not valid JSON: {message}{where}") from None
        if isinstance(data, dict) and data.get("schema_name") == "DoclingDocument":
            name = data.get("name")
            return "docling", ({"title": name} if isinstance(name, str) and name else {})
        return "json", {}


def builtin_loaders() -> dict[str, Loader]:
    """A new instance of every built-in loader, by entry-point name."""
    return {
        "text": TextLoader(),
        "markdown": MarkdownLoader(),
        "rst": RstLoader(),
        "code": CodeLoader(),
        "json": JsonLoader(),
    }


# -- picking a loader --------------------------------------------------------------------------


def _is_builtin(loader: Loader) -> bool:
    return isinstance(loader, _BuiltinLoader)


def _install_hint(what: str) -> str:
    from ._install import install_hint

    return install_hint(_PLUGIN_BY_FORMAT[what])


class LoaderSet:
    """The installed loaders, and the choice of one loader per file.

    :meth:`pick` chooses by the file's suffix first: the loader whose ``suffixes`` hold it. A
    plugin's loader takes a suffix over a built-in one (it was installed to read that format);
    two plugins' loaders claiming one suffix are a :class:`~ragloom.errors.ConfigurationError`
    unless ``prefer`` names the one to use. A suffix no loader claims is sniffed: the first
    4096 bytes are offered to each loader's :meth:`~ragloom.loading.Loader.sniff`, plugins'
    loaders (by name) before the built-in ones, plain text last. A file no loader takes is a
    :class:`NoLoaderError` that says why, and for PDF, DOCX and HTML which plugin reads it.

    Args:
        loaders: loader instances, by name (or an iterable: names are then their class
            names).
        prefer: ``{suffix: name}``: the loader that reads files with that suffix, whoever
            else claims it (settles suffixes claimed by several plugins' loaders; also sends
            an unclaimed suffix, e.g. ``{".log": "text"}``, straight to a loader).
    """

    def __init__(
        self,
        loaders: Mapping[str, Loader] | Iterable[Loader],
        *,
        prefer: Mapping[str, str] | None = None,
    ) -> None:
        named = dict(loaders) if isinstance(loaders, Mapping) else _name_all(loaders)
        for name, loader in named.items():
            if not isinstance(loader, Loader):
                raise ConfigurationError(
                    f"loader {name!r} is a {type(loader).__name__}, not a Loader"
                )
        self.loaders: dict[str, Loader] = named
        prefer = {s.lower(): n for s, n in (prefer or {}).items()}
        for suffix, name in prefer.items():
            if name not in named:
                raise ConfigurationError(
                    f"prefer={{{suffix!r}: {name!r}}}: no loader {name!r} (loaders: "
                    f"{', '.join(sorted(named)) or 'none'})"
                )
        claims: dict[str, list[str]] = {}
        for name in sorted(named):
            for suffix in named[name].suffixes:
                claims.setdefault(suffix.lower(), []).append(name)
        self._by_suffix: dict[str, str] = {}
        for suffix, names in claims.items():
            self._by_suffix[suffix] = self._settle(suffix, names, prefer)
        self._by_suffix.update(prefer)  # an explicit choice also reads unclaimed suffixes
        plugins = sorted(n for n, loader in named.items() if not _is_builtin(loader))
        builtins = sorted(
            (n for n, loader in named.items() if _is_builtin(loader)),
            key=lambda n: (isinstance(named[n], TextLoader), n),
        )
        self._sniff_order = plugins + builtins

    def _settle(self, suffix: str, names: list[str], prefer: Mapping[str, str]) -> str:
        if suffix in prefer:
            return prefer[suffix]
        if len(names) == 1:
            return names[0]
        plugins = [n for n in names if not _is_builtin(self.loaders[n])]
        if len(plugins) == 1:
            return plugins[0]
        contenders = plugins or names
        raise ConfigurationError(
            f"the loaders {', '.join(repr(n) for n in contenders)} all read {suffix} files; "
            f"choose one with prefer={{{suffix!r}: {contenders[0]!r}}}, or disable a plugin "
            "with RAGLOOM_DISABLE_PLUGINS"
        )

    @classmethod
    def builtin(cls) -> LoaderSet:
        """Only the built-in loaders."""
        return cls(builtin_loaders())

    @classmethod
    def from_registry(
        cls, registry: Registry | None = None, *, prefer: Mapping[str, str] | None = None
    ) -> LoaderSet:
        """Every loader installed (entry points under ``ragloom.loaders``, and loaders that
        plugins register from hooks), each built with its default arguments.

        Raises:
            PluginError: a loader plugin is broken, blocked or incompatible.
        """
        if registry is None:
            from .plugins import Registry

            registry = Registry()
        return cls(
            {name: registry.create("loader", name) for name in registry.names("loader")},
            prefer=prefer,
        )

    def __repr__(self) -> str:
        return f"LoaderSet({sorted(self.loaders)})"

    @property
    def suffixes(self) -> dict[str, str]:
        """``{suffix: loader name}`` for every claimed suffix."""
        return dict(sorted(self._by_suffix.items()))

    def name_of(self, loader: Loader) -> str:
        """The name ``loader`` has in this set."""
        for name, candidate in self.loaders.items():
            if candidate is loader:
                return name
        raise KeyError(loader)

    def pick(self, source: SourceFile) -> Loader:
        """The loader for ``source``: by suffix, else by sniffing its first bytes.

        Raises:
            NoLoaderError: no installed loader reads it (the message says why; ``hint`` has
                the install command for PDF, DOCX and HTML).
        """
        suffix = source.suffix
        name = self._by_suffix.get(suffix) if suffix else None
        if name is not None:
            return self.loaders[name]
        known = PLUGIN_FORMATS.get(suffix)
        if known is not None:
            what, _ = known
            hint = _install_hint(what)
            raise NoLoaderError(
                f"{source.path}: no installed loader reads {what} files ({suffix}); "
                f"to read {what}, {hint}",
                hint=hint,
            )
        head = source.data[:4096]
        for candidate in self._sniff_order:
            loader = self.loaders[candidate]
            if loader.sniff(head):
                return loader
        sniffed = sniff_format(head)
        label = f"{suffix} files" if suffix else "files without a suffix"
        if sniffed is not None:
            hint = _install_hint(sniffed)
            raise NoLoaderError(
                f"{source.path}: looks like {sniffed} but no installed loader reads it; "
                f"to read {sniffed}, {hint}",
                hint=hint,
            )
        nul = _binary_offset(source.data)
        if nul >= 0:
            why = f"binary file (NUL byte at offset {nul})"
        elif not _looks_like_text(head):
            why = "not UTF-8 text"
        else:
            why = "no loader recognises its content"
        raise NoLoaderError(f"{source.path}: {why}; no installed loader reads {label}")

    def load(self, source: SourceFile) -> list[Document]:
        """The documents in ``source``, read by the loader :meth:`pick` chooses.

        A loader that fails with anything but a :class:`~ragloom.loading.LoadError` (a bug, a
        library surprised by a damaged file) is reported the same way: a ``LoadError`` naming
        the file and the loader, the original chained.

        Raises:
            LoadError: no loader reads the file (:class:`NoLoaderError`), or its loader refused
                it.
        """
        loader = self.pick(source)
        try:
            documents = loader.load(source)
        except LoadError:
            raise
        except Exception as exc:
            raise LoadError(
                f"{source.path}: the {self.name_of(loader)!r} loader failed: "
                f"{type(exc).__name__}: {exc}"
            ) from exc
        return list(documents)


def _name_all(loaders: Iterable[Loader]) -> dict[str, Loader]:
    named: dict[str, Loader] = {}
    for loader in loaders:
        name = type(loader).__name__
        if name in named:
            raise ConfigurationError(f"two loaders are both named {name!r}: pass a mapping")
        named[name] = loader
    return named

