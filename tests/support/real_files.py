"""Real files already on the machine, for loader tests: nobody on this project wrote them.

They come from where a fresh machine with only Python and pip has them (the standard library,
the installed distributions) or, when present, from Debian packages (``/usr/share/doc``).
Callers skip, naming what is missing, when a machine has none. Third-party data that no
machine has (real Docling documents, CLINC150) is carried in ``tests/data`` (``TEST_DATA``).
"""

from __future__ import annotations

import functools
import os
import sysconfig
from pathlib import Path

__all__ = ["TEST_DATA", "debian_docs", "installed_files", "stdlib", "stdlib_file"]

_SKIP_PARTS = ("ragloom", "__pycache__")

#: Third-party data the repository carries for its tests (source and licence beside each folder).
TEST_DATA = Path(__file__).resolve().parents[1] / "data"


def stdlib() -> Path:
    return Path(sysconfig.get_paths()["stdlib"])


def stdlib_file(relative: str) -> Path | None:
    """A file of the standard library (``idlelib/help.html``), if this Python has it."""
    path = stdlib() / relative
    return path if path.is_file() else None


def _site_dirs() -> list[Path]:
    paths = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    return sorted(Path(p) for p in paths if Path(p).is_dir())


@functools.lru_cache(maxsize=1)
def _all_installed() -> tuple[Path, ...]:
    """Every file with a suffix under site-packages (ragloom's own packages left out)."""
    found: set[Path] = set()
    for root in _site_dirs():
        for folder, dirs, files in os.walk(root):
            dirs[:] = [d for d in dirs if not d.lower().startswith(_SKIP_PARTS)]
            for name in files:
                if "." in name.lstrip("."):
                    found.add(Path(folder, name))
    return tuple(sorted(found))


def installed_files(
    suffix: str, *, limit: int = 4, min_bytes: int = 200, max_bytes: int = 200_000
) -> list[Path]:
    """Up to ``limit`` files named ``*suffix`` shipped by installed distributions.

    Spread over the sorted list (not the first few of one package), sizes within bounds.
    """
    matches = []
    for path in _all_installed():
        if path.suffix.lower() != suffix:
            continue
        try:
            size = path.stat().st_size
        except OSError:  # listed but removed
            continue
        if min_bytes <= size <= max_bytes:
            matches.append(path)
    if len(matches) <= limit:
        return matches
    step = len(matches) / limit
    return [matches[int(i * step)] for i in range(limit)]


def debian_docs(pattern: str) -> list[Path]:
    """Files under ``/usr/share/doc`` matching ``pattern`` (absent on most fresh machines)."""
    root = Path("/usr/share/doc")
    return sorted(root.glob(pattern)) if root.is_dir() else []
