"""A real-text corpus built at test time from files already on the machine.

Nobody on this project wrote any of it: the long descriptions of the installed Python
distributions (Markdown, reStructuredText or plain text, as each declares), the ``.md``,
``.rst`` and ``.txt`` files under site-packages, then the standard library's ``.py`` sources
until the corpus holds ``min_bytes`` of UTF-8. Order is deterministic for a given machine;
results are cached per ``min_bytes`` for the life of the process.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import site
import sys
import sysconfig
from pathlib import Path

__all__ = ["FORMATS", "CorpusEntry", "build_corpus", "build_format_corpus", "corpus_bytes"]

CorpusEntry = tuple[str, str, str]
"""``(name, content_format, text)`` with ``content_format`` in markdown, text, code, rst."""

_CACHE: dict[int, list[CorpusEntry]] = {}

_DOC_SUFFIXES = {".md": "markdown", ".rst": "rst", ".txt": "text"}
_MAX_FILE_BYTES = 2_000_000  # skip generated monsters (word lists, dumps) that skew the mix


def _description_format(content_type: str | None) -> str:
    kind = (content_type or "").split(";")[0].strip().lower()
    if kind == "text/markdown":
        return "markdown"
    if kind == "text/x-rst":
        return "rst"
    return "text"


def _descriptions() -> list[CorpusEntry]:
    seen: set[str] = set()
    found: list[CorpusEntry] = []
    for dist in importlib.metadata.distributions():
        name = (dist.metadata.get("Name") or "").strip()
        key = name.lower().replace("_", "-")
        if not name or key in seen or key.startswith("ragloom"):
            continue
        seen.add(key)
        body = dist.metadata.get_payload()  # type: ignore[attr-defined]
        if not isinstance(body, str) or not body.strip():
            body = dist.metadata.get("Description") or ""
        if body.strip():
            fmt = _description_format(dist.metadata.get("Description-Content-Type"))
            found.append((f"description:{name}", fmt, body))
    found.sort(key=lambda entry: entry[0].lower())
    return found


def _site_dirs() -> list[Path]:
    paths = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    try:
        paths.update(site.getsitepackages())
    except AttributeError:  # some virtualenv flavours lack it
        pass
    return sorted(Path(p) for p in paths if Path(p).is_dir())


def _read(path: Path) -> str | None:
    try:
        if path.stat().st_size > _MAX_FILE_BYTES:
            return None
        text = path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    return text if text.strip() else None


def _doc_files() -> list[tuple[str, str, Path]]:
    found: dict[Path, tuple[str, str, Path]] = {}
    for root in _site_dirs():
        for path in root.rglob("*"):
            fmt = _DOC_SUFFIXES.get(path.suffix.lower())
            if fmt is None or not path.is_file():
                continue
            parts = path.relative_to(root).parts
            if any(p.endswith((".dist-info", ".egg-info")) for p in parts):
                continue  # packaging metadata (RECORD-like lists), not prose
            if parts and parts[0].lower().startswith("ragloom"):
                continue
            found.setdefault(path.resolve(), (f"file:{'/'.join(parts)}", fmt, path))
    return sorted(found.values(), key=lambda entry: entry[0])


def _stdlib_sources() -> list[tuple[str, Path]]:
    root = Path(sysconfig.get_paths()["stdlib"])
    found = []
    for path in root.rglob("*.py"):
        parts = path.relative_to(root).parts
        if "site-packages" in parts or "dist-packages" in parts:
            continue
        found.append(("stdlib:" + "/".join(parts), path))
    found.sort()
    return found


def build_corpus(min_bytes: int = 20_000_000) -> list[CorpusEntry]:
    """Collect at least ``min_bytes`` of real text when the machine has that much.

    Every description and documentation file is taken (the Markdown part stays whole); the
    standard library's sources fill up the rest. Returns fewer bytes only when the machine has
    no more: callers check :func:`corpus_bytes`.
    """
    cached = _CACHE.get(min_bytes)
    if cached is not None:
        return cached
    corpus: list[CorpusEntry] = list(_descriptions())
    for name, fmt, path in _doc_files():
        text = _read(path)
        if text is not None:
            corpus.append((name, fmt, text))
    total = corpus_bytes(corpus)
    if total < min_bytes:
        for name, path in _stdlib_sources():
            text = _read(path)
            if text is None:
                continue
            corpus.append((name, "code", text))
            total += len(text.encode("utf-8"))
            if total >= min_bytes:
                break
    _CACHE[min_bytes] = corpus
    return corpus


#: The formats of :func:`build_format_corpus`, as ``(name, content_format)``.
FORMATS = (("python", "code"), ("markdown", "markdown"), ("rst", "rst"), ("text", "text"))
_FORMAT_SUFFIXES = {".py": "python", ".md": "markdown", ".rst": "rst", ".txt": "text"}
_PLAIN_NAMES = ("readme", "copyright", "changelog", "news", "authors", "license", "changes")


def _installed_roots() -> list[Path]:
    """Site directories of this interpreter and of the one it was created from, the standard
    library, and the system's documentation folder: where installed packages keep files."""
    paths = {Path(p) for p in _site_dirs()}
    for base in {sys.base_prefix, sys.prefix}:
        for key in ("purelib", "platlib", "stdlib"):
            paths.add(Path(sysconfig.get_paths(vars={"base": base, "platbase": base})[key]))
    paths.add(Path("/usr/share/doc"))
    return sorted(p.resolve() for p in paths if p.is_dir())


def _format_of(path: Path) -> str | None:
    fmt = _FORMAT_SUFFIXES.get(path.suffix.lower())
    if fmt is None and not path.suffix and path.name.lower().startswith(_PLAIN_NAMES):
        fmt = "text"
    return fmt


def build_format_corpus(per_format_bytes: int = 4_000_000) -> dict[str, list[CorpusEntry]]:
    """Ordinary files found on this machine, by format: Python sources, Markdown,
    reStructuredText and plain text, up to ``per_format_bytes`` of UTF-8 each.

    Candidates are the files of the installed packages (this environment's and the base
    interpreter's site directories), the standard library and ``/usr/share/doc``, and the
    long descriptions of installed distributions; nothing from ragloom itself. They are taken
    in an order that is fixed (a hash of each name) but spread over all of them, so a format's
    sample is not one package's files; each is read whole (UTF-8, at most 2 MB) until the
    format has its bytes. A format holds less when the machine has less.
    """
    content_format = dict(FORMATS)
    candidates: dict[str, dict[str, Path | str]] = {fmt: {} for fmt in content_format}
    for name, fmt, text in _descriptions():
        candidates["python" if fmt == "code" else fmt][name] = text
    seen: set[Path] = set()
    for root in _installed_roots():
        for path in root.rglob("*"):
            fmt = _format_of(path)
            if fmt is None:
                continue
            parts = path.relative_to(root).parts
            if any(p.lower().startswith("ragloom") or p.endswith((".dist-info", ".egg-info"))
                   for p in parts):  # fmt: skip
                continue
            try:
                real = path.resolve()
                if real in seen or not path.is_file():
                    continue
            except OSError:
                continue
            seen.add(real)
            candidates[fmt][f"file:{root.name}/{'/'.join(parts)}"] = path
    found: dict[str, list[CorpusEntry]] = {}
    for fmt, named in candidates.items():
        entries: list[CorpusEntry] = []
        size = 0
        for name in sorted(named, key=lambda n: hashlib.sha256(n.encode()).digest()):
            source = named[name]
            text = source if isinstance(source, str) else _read(source)
            if text is None or not text.strip():
                continue
            entries.append((name, content_format[fmt], text))
            size += len(text.encode("utf-8"))
            if size >= per_format_bytes:
                break
        found[fmt] = entries
    return found


def corpus_bytes(corpus: list[CorpusEntry]) -> int:
    """Total UTF-8 size of the corpus' texts."""
    return sum(len(text.encode("utf-8")) for _, _, text in corpus)


if __name__ == "__main__":  # pragma: no cover - a quick look at what the machine offers
    entries = build_corpus(int(sys.argv[1]) if len(sys.argv) > 1 else 20_000_000)
    by_format: dict[str, int] = {}
    for _, fmt, text in entries:
        by_format[fmt] = by_format.get(fmt, 0) + len(text.encode("utf-8"))
    print(len(entries), "documents", by_format)
