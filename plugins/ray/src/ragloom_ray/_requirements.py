"""Which distributions a pipeline needs, and the check a worker makes before building it.

The driver knows which installed distribution provides every component of the pipeline (and
every loader, since the worker reads files with its own installed loaders). A worker whose
environment lacks one of them, has it disabled, or has another version of it would build a
different pipeline or fail with a bare "unknown chunker": it refuses instead, naming the
distribution, the version the driver has and the node.
"""

from __future__ import annotations

import importlib.metadata
import socket
from collections.abc import Iterator, Mapping
from typing import Any

from ragloom.errors import ConfigurationError

__all__ = ["MissingOnWorker", "check_requirements", "requirements"]

#: Step-table keys of a pipeline spec and the kind they name.
_STEP_KEYS = {"chunker": "chunker", "step": "step", "embedder": "embedder"}
_FILTER_COMBINATORS = ("all", "any", "not")


class MissingOnWorker(ConfigurationError):
    """A distribution the pipeline needs is not usable on a Ray worker."""


def _named(spec: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    """Every ``(kind, registered name)`` a pipeline spec names."""

    def filters(value: Any) -> Iterator[tuple[str, str]]:
        if not isinstance(value, Mapping):
            return
        for key, inner in value.items():
            if key in _FILTER_COMBINATORS:
                for part in inner if isinstance(inner, list) else [inner]:
                    yield from filters(part)
            else:
                yield "filter", str(key)

    def cache(value: Any) -> Iterator[tuple[str, str]]:
        if isinstance(value, Mapping) and isinstance(value.get("store"), str):
            yield "cache_store", value["store"]

    def steps(items: Any) -> Iterator[tuple[str, str]]:
        for step in items or []:
            if not isinstance(step, Mapping):
                continue
            for key, kind in _STEP_KEYS.items():
                if isinstance(step.get(key), str):
                    yield kind, step[key]
            for route in step.get("routes") or []:
                yield from filters(route.get("filter"))
                yield from steps([route.get("step")])
            if step.get("default") is not None:
                yield from steps([step["default"]])
            yield from cache(step.get("cache"))

    yield from steps(spec.get("steps"))
    yield from cache(spec.get("cache"))


def _imported(spec: Mapping[str, Any]) -> Iterator[str]:
    """Every ``module:attr`` import path a spec names."""

    def walk(value: Any) -> Iterator[str]:
        if isinstance(value, Mapping):
            path = value.get("import")
            if isinstance(path, str):
                yield path
            for inner in value.values():
                yield from walk(inner)
        elif isinstance(value, list):
            for inner in value:
                yield from walk(inner)

    yield from walk(spec)


def requirements(
    spec: Mapping[str, Any], registry: Any, *, loaders: bool = True, uses: tuple[Any, ...] = ()
) -> dict[str, str]:
    """``{distribution: version}`` of everything ``spec`` needs, as installed here.

    Covers the registered components the spec names, the distributions of its import paths
    (those that come from an installed distribution), every installed loader (when
    ``loaders``: a worker reads files with its own), the distributions of the objects the
    workers are given besides (``uses``: the index's part writer), and ragloom itself.
    """
    needed: dict[str, str] = {"ragloom": importlib.metadata.version("ragloom")}
    named = list(_named(spec))
    if loaders:
        named += [("loader", name) for name in registry.names("loader")]
    for kind, name in named:
        dist_part, _, short = name.rpartition(":")
        candidates = registry.providers(kind).get(short, [])
        for provider in candidates:
            if not dist_part or provider.dist == _normalize(dist_part):
                needed[provider.dist] = provider.version
    paths = list(_imported(spec)) + [
        f"{type(used).__module__}:{type(used).__qualname__}" for used in uses if used is not None
    ]
    if paths:
        owners = importlib.metadata.packages_distributions()
        for path in paths:
            top = path.split(":", 1)[0].split(".", 1)[0]
            for dist in owners.get(top, []):
                try:
                    needed[_normalize(dist)] = importlib.metadata.version(dist)
                except importlib.metadata.PackageNotFoundError:
                    continue
    return dict(sorted(needed.items()))


def _normalize(name: str) -> str:
    from ragloom.plugins._discovery import normalize_dist

    return normalize_dist(name)


def _where() -> str:
    try:
        import ray

        node = ray.get_runtime_context().get_node_id()
        return f"the Ray worker on {socket.gethostname()} (node {node[:12]})"
    except Exception:  # noqa: BLE001 - only a label
        return f"the Ray worker on {socket.gethostname()}"


def check_requirements(
    needed: Mapping[str, str],
    *,
    disabled: frozenset[str] = frozenset(),
    allowed: frozenset[str] | None = None,
    where: str | None = None,
) -> None:
    """Refuse to build the pipeline when a distribution it needs is not usable here.

    Raises:
        MissingOnWorker: a distribution is not installed, is disabled (``RAGLOOM_DISABLE_PLUGINS``)
            or left out of the allowlist, or is installed in another version than on the
            driver; the message names it, both versions and the worker.
    """
    problems: list[str] = []
    for dist, version in needed.items():
        if dist != "ragloom" and dist in disabled:
            problems.append(
                f"{dist} {version} is disabled there by RAGLOOM_DISABLE_PLUGINS"
            )
            continue
        if dist != "ragloom" and allowed is not None and dist not in allowed:
            problems.append(f"{dist} {version} is not in the plugin allowlist there")
            continue
        try:
            here = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            problems.append(f"{dist} {version} is not installed there")
            continue
        if here != version:
            problems.append(f"{dist} is {here} there but {version} on the driver")
    if problems:
        place = where or _where()
        dists = ", ".join(f"{d}=={v}" for d, v in needed.items() if d != "ragloom")
        raise MissingOnWorker(
            f"ragloom-ray: {place} cannot build the pipeline: {'; '.join(problems)}. Every "
            f"node needs the same plugins as the driver ({dists}): install them in the "
            "cluster's image, or pass them with --engine-option pip=... (a runtime_env)"
        )
