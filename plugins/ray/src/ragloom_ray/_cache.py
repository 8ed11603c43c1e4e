"""The cache files a pipeline spec opens, and whether the Ray cluster's workers may share them.

On one node every worker opens the same SQLite file: its write-ahead log makes concurrent
writers from several processes of one machine safe. Several nodes cannot share it: a path on
the head node does not exist on the others (each would fill a cache of its own, never seen
again), and SQLite's write-ahead log needs shared memory, which a network filesystem does not
give across machines. So with more than one node a cache file is refused; the
:class:`~ragloom.cache.CacheStore` protocol is where a networked cache would plug in.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from ragloom.errors import ConfigurationError

__all__ = ["absolute_cache_paths", "cache_files", "check_cache_sharing"]


def _caches(spec: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    """Every cache table of a spec (the pipeline's and its steps'), mutable in place."""

    def walk(value: Any) -> Iterator[dict[str, Any]]:
        if isinstance(value, dict):
            cache = value.get("cache")
            if isinstance(cache, dict):
                yield cache
            for key, inner in value.items():
                if key != "cache":
                    yield from walk(inner)
        elif isinstance(value, list):
            for inner in value:
                yield from walk(inner)

    yield from walk(spec)


def absolute_cache_paths(spec: dict[str, Any], base: str | None = None) -> dict[str, Any]:
    """``spec`` (changed in place and returned) with relative cache paths made absolute from
    ``base`` (default: the current folder): workers may run in another folder."""
    for cache in _caches(spec):
        path = cache.get("path")
        if isinstance(path, str):
            path = os.path.expanduser(path)
            if not os.path.isabs(path):
                path = os.path.join(base or os.getcwd(), path)
            cache["path"] = os.path.normpath(path)
    return spec


def cache_files(spec: Mapping[str, Any] | None, extra: Iterable[str] = ()) -> list[str]:
    """The cache files a spec opens (and ``extra`` ones), absolute, each once."""
    paths = [os.path.abspath(p) for p in extra]
    for cache in _caches(dict(spec or {})):
        path = cache.get("path")
        if isinstance(path, str):
            paths.append(os.path.abspath(os.path.expanduser(path)))
    return list(dict.fromkeys(paths))


def check_cache_sharing(files: Iterable[str], nodes: Iterable[Mapping[str, Any]]) -> None:
    """Refuse cache files when the cluster has more than one live node.

    ``nodes`` is what ``ray.nodes()`` returns (dicts with ``Alive`` and ``NodeManagerAddress``).

    Raises:
        ConfigurationError: naming the cache file(s), the nodes, and what to do instead.
    """
    paths = list(files)
    alive = [n for n in nodes if n.get("Alive", True)]
    if not paths or len(alive) <= 1:
        return
    hosts = sorted({str(n.get("NodeManagerAddress") or n.get("NodeID", "?")) for n in alive})
    shown = ", ".join(paths)
    raise ConfigurationError(
        f"ragloom-ray: the cache file {shown} cannot be shared by the {len(alive)} nodes of "
        f"this Ray cluster ({', '.join(hosts)}): it lives on one machine, and SQLite's "
        "write-ahead log is safe only between processes of one machine, not over a network "
        "filesystem. Run with --no-cache (or cache = false in the pipeline file), or on a "
        "single-node cluster"
    )
