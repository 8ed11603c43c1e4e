"""Output paths checked before a run: nothing an ingest writes may destroy an input, the cache
or the other output, and each must be writable."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..errors import ConfigurationError
from ._walk import WalkResult

__all__ = ["check_outputs"]


def check_outputs(
    walked: WalkResult,
    out: Any,
    failures: Any,
    cache_files: list[str],
    *,
    arguments: Iterable[str] = (),
    names: tuple[str, str] = ("out", "failures"),
) -> None:
    """Refuse output paths that would destroy something or cannot be written.

    An output that is one of the files to ingest is refused, with one exception: a file found
    while walking a folder (not named in ``arguments``) that is recognisably an earlier output
    of ragloom (empty, or JSON Lines of chunks or failures) is left out of the inputs and
    replaced, so ``ragloom ingest . -o chunks.jsonl`` can be run again.

    ``names`` name the two outputs in the errors (the CLI gives its options' names).

    Raises:
        ConfigurationError: naming both paths when an output is an input file, the cache or
            the other output; naming the path when it is a device, a FIFO, a folder, under a
            file, or in a folder that cannot be written.
    """
    if out is None and failures is None:
        return  # nothing to check (resolving every input's path costs a walk of its own)
    inputs = {os.path.realpath(f.path): f for f in walked.files}
    named = {os.path.realpath(a) for a in arguments}
    caches = {os.path.realpath(p) for p in cache_files}
    seen: dict[str, str] = {}
    for flag, value in zip(names, (out, failures), strict=True):
        if value is None:
            continue
        path = os.fspath(value)
        real = os.path.realpath(path)
        if real in caches:
            raise ConfigurationError(
                f"refusing to write {flag} {path}: it is the cache file; choose another path"
            )
        if real in seen:
            raise ConfigurationError(
                f"refusing to write {flag} {path}: it is also the {seen[real]} file; give "
                "them different paths"
            )
        seen[real] = flag
        found = inputs.get(real)
        if found is not None:
            if real in named or not _earlier_output(found.path):
                raise ConfigurationError(
                    f"refusing to write {flag} {path}: it is the input file {found.shown}, "
                    "which would be overwritten; choose another path"
                )
            walked.files = [f for f in walked.files if f is not found]
        _check_writable(flag, Path(path))


def _earlier_output(path: str) -> bool:
    """Whether ``path`` looks like a file ragloom wrote: empty, or JSON Lines whose first
    record is a chunk or a failure record."""
    try:
        with open(path, "rb") as handle:
            first = handle.readline(1 << 20)
    except OSError:
        return False
    if not first.strip():
        return not first  # an empty file (a file of blank lines is someone's text)
    try:
        record = json.loads(first)
    except ValueError:
        return False
    return isinstance(record, dict) and (
        {"id", "parent", "start", "end", "content"} <= record.keys()
        or {"item", "source", "stage", "kind", "reason"} <= record.keys()
    )


def _check_writable(flag: str, path: Path) -> None:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        st = None
    except NotADirectoryError:
        raise ConfigurationError(
            f"cannot write {flag} {path}: a part of its folder is a file, not a folder"
        ) from None
    except OSError as exc:
        raise ConfigurationError(f"cannot write {flag} {path}: {exc.strerror or exc}") from None
    if st is not None and not stat.S_ISREG(st.st_mode):
        kind = "a folder" if stat.S_ISDIR(st.st_mode) else "not a regular file (a device, FIFO "
        kind += "" if stat.S_ISDIR(st.st_mode) else "or socket)"
        raise ConfigurationError(
            f"refusing to write {flag} {path}: it is {kind}; write to a regular file or a new path"
        )
    parent = path.parent if str(path.parent) else Path(".")
    probe = parent
    while not probe.exists():
        if probe.parent == probe:
            break
        probe = probe.parent
    if probe.exists() and not probe.is_dir():
        raise ConfigurationError(
            f"cannot write {flag} {path}: {probe} is a file, not a folder"
        )
    if probe.exists() and not os.access(probe, os.W_OK | os.X_OK):
        raise ConfigurationError(f"cannot write {flag} {path}: {probe} is not writable")
