"""A real-text corpus built at test time from files already on the machine.

Nobody on this project wrote any of it: the long descriptions of the installed Python
distributions (Markdown, reStructuredText or plain text, as each declares), the ``.md``,
``.rst`` and ``.txt`` files under site-packages, then the standard library's ``.py`` sources
until the corpus holds ``min_bytes`` of UTF-8. Order is deterministic for a given machine;
results are cached per ``min_bytes`` for the life of the process.
"""

from __future__ import annotations

import importlib.metadata
import site
import sys
import sysconfig
from pathlib import Path

__all__ = ["CorpusEntry", "build_corpus", "corpus_bytes"]

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


def corpus_bytes(corpus: list[CorpusEntry]) -> int:
    """Total UTF-8 size of the corpus' texts."""
    return sum(len(text.encode("utf-8")) for _, _, text in corpus)


if __name__ == "__main__":  # pragma: no cover - a quick look at what the machine offers
    entries = build_corpus(int(sys.argv[1]) if len(sys.argv) > 1 else 20_000_000)
    by_format: dict[str, int] = {}
    for _, fmt, text in entries:
        by_format[fmt] = by_format.get(fmt, 0) + len(text.encode("utf-8"))
    print(len(entries), "documents", by_format)
