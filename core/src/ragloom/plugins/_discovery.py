"""Reading installed plugins from entry-point metadata, without importing them."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from importlib.metadata import Distribution, EntryPoint, entry_points
from typing import Any

from .._install import install_hint
from ..kinds import KINDS

__all__ = [
    "FIRST_PARTY",
    "GROUPS",
    "HOOK_GROUP",
    "PluginInfo",
    "Provider",
    "disabled_from_env",
    "install_hint",
    "missing_first_party",
    "normalize_dist",
]

#: Component kind -> entry-point group (read from the table of kinds, :mod:`ragloom.kinds`).
GROUPS: dict[str, str] = {row.name: row.group for row in KINDS.values()}
#: Group of modules holding pluggy hook implementations.
HOOK_GROUP = "ragloom.plugins"

CORE_DIST = "ragloom"

#: The components of ragloom's own plugins, by kind, and the distribution of each: a pipeline
#: naming one of them without its plugin installed is told which plugin to install.
FIRST_PARTY: dict[str, dict[str, str]] = {
    "chunker": {
        "auto": "ragloom-text",
        "code": "ragloom-text",
        "markdown": "ragloom-text",
        "recursive": "ragloom-text",
        "sentence": "ragloom-text",
        "docling": "ragloom-docling",
        "semantic": "ragloom-semantic",
    },
    "length": {
        "chars": "ragloom-text",
        "tiktoken": "ragloom-text",
        "tokens": "ragloom-text",
        "whitespace": "ragloom-text",
        "words": "ragloom-text",
    },
    "decomposer": {"heuristic": "ragloom-rules", "dspy": "ragloom-dspy"},
    "answerer": {"dspy": "ragloom-dspy"},
    "reranker": {"mmr": "ragloom-semantic"},
    "router": {
        "keyword": "ragloom-rules",
        "sample": "ragloom-rules",
        "semantic": "ragloom-semantic",
        "dspy": "ragloom-dspy",
    },
    "embedder": {"model2vec": "ragloom-semantic"},
    "loader": {"docx": "ragloom-loaders", "html": "ragloom-loaders", "pdf": "ragloom-loaders"},
    "store": {"lancedb": "ragloom-lancedb"},
    "engine": {"ray": "ragloom-ray"},
}


def missing_first_party(kind: str, name: str) -> str | None:
    """The distribution of ragloom's own plugins that provides ``name`` of ``kind`` (a bare or
    a ``dist:name`` name), when it is not installed; else ``None``."""
    dist_part, _, short = name.rpartition(":")
    dist = FIRST_PARTY.get(kind, {}).get(short)
    if dist is None or (dist_part and normalize_dist(dist_part) != dist):
        return None
    from importlib.metadata import PackageNotFoundError, distribution

    try:
        distribution(dist)
    except PackageNotFoundError:
        return dist
    return None


def normalize_dist(name: str) -> str:
    """The normalized distribution name (``Ragloom_Text`` -> ``ragloom-text``), by
    ``packaging.utils.canonicalize_name`` (imported on first use)."""
    from packaging.utils import canonicalize_name

    return str(canonicalize_name(name))


def _split_env(value: str | None) -> frozenset[str]:
    if not value:
        return frozenset()
    return frozenset(normalize_dist(v.strip()) for v in value.split(",") if v.strip())


def disabled_from_env() -> frozenset[str]:
    """Distributions blocked by ``RAGLOOM_DISABLE_PLUGINS=a,b``."""
    return _split_env(os.environ.get("RAGLOOM_DISABLE_PLUGINS"))


def allowed_from_env() -> frozenset[str] | None:
    """With ``RAGLOOM_PLUGINS_AUTOLOAD=0``, only ``RAGLOOM_ALLOW_PLUGINS=a,b`` are loaded."""
    if os.environ.get("RAGLOOM_PLUGINS_AUTOLOAD", "1").strip().lower() in ("0", "false", "no"):
        return _split_env(os.environ.get("RAGLOOM_ALLOW_PLUGINS"))
    return None


@dataclass(slots=True)
class Provider:
    """One named component a distribution provides (not imported yet)."""

    kind: str
    name: str
    value: str
    dist: str
    version: str
    entry_point: EntryPoint | None = None
    factory: object | None = None
    requires_core: str | None = None

    @property
    def qualified(self) -> str:
        return f"{self.dist}:{self.name}"


@dataclass(slots=True)
class PluginInfo:
    """What one installed distribution contributes, and its status."""

    dist: str
    version: str
    provides: dict[str, list[str]] = field(default_factory=dict)
    hooks: list[str] = field(default_factory=list)
    requires_core: str | None = None
    status: str = "available"
    reason: str = ""
    #: Modules under ``ragloom.policy``: the organisation policy this plugin contributes.
    policy: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, object]:
        return {
            "distribution": self.dist,
            "version": self.version,
            "provides": self.provides,
            "hooks": self.hooks,
            "policy": self.policy,
            "requires_ragloom": self.requires_core,
            "status": self.status,
            "reason": self.reason,
        }


_DIST_CACHE: dict[int, tuple[str, str, Distribution | None]] = {}


def _dist_of(ep: EntryPoint) -> tuple[str, str, Distribution | None]:
    dist = getattr(ep, "dist", None)
    if dist is None:
        return "unknown", "0", None
    key = id(dist)
    cached = _DIST_CACHE.get(key)
    if cached is None or cached[2] is not dist:
        meta = dist.metadata  # parsed once per distribution object
        cached = (normalize_dist(meta["Name"] or "unknown"), meta["Version"] or "0", dist)
        _DIST_CACHE[key] = cached
    return cached


_CORE_REQ = re.compile(r"^\s*ragloom\s*(?:\[[^\]]*\])?\s*(?P<spec>[^;]*)(?P<marker>;.*)?$", re.I)


_REQ_CACHE: dict[int, str | None] = {}


def core_requirement(dist: Distribution | None) -> str | None:
    """The version specifier a distribution puts on ``ragloom`` (``""`` for any version)."""
    if dist is None:
        return None
    key = id(dist)
    if key in _REQ_CACHE:
        return _REQ_CACHE[key]
    _REQ_CACHE[key] = found = _core_requirement(dist)
    return found


def _core_requirement(dist: Distribution) -> str | None:
    for req in dist.requires or ():
        match = _CORE_REQ.match(req)
        if match and not (match.group("marker") or "").strip().startswith("; extra"):
            return match.group("spec").strip().strip("()")
    return None


_INSTALLED: tuple[tuple[str, ...], Any] | None = None


def installed_entry_points() -> Any:
    """The installed entry points, read once per process and ``sys.path`` (every pipeline run
    looks up plugin hooks: they must not cost a metadata scan each time)."""
    global _INSTALLED
    key = tuple(sys.path)
    if _INSTALLED is None or _INSTALLED[0] != key:
        _INSTALLED = (key, entry_points())
    return _INSTALLED[1]


def refresh_installed() -> None:
    """Forget the entry points read so far (after installing a plugin in this process)."""
    global _INSTALLED
    _INSTALLED = None
    _PROVIDERS.clear()


#: Providers and hook modules of the installed entry points, read once per entry-point set.
_PROVIDERS: dict[str, tuple[Any, tuple[Any, ...]]] = {}


def _cached(what: str, eps: Any, read: Any) -> tuple[Any, ...]:
    """``read(eps)`` as a tuple, kept while ``eps`` is the cached installed set."""
    if eps is not (_INSTALLED[1] if _INSTALLED else None):
        return tuple(read(eps))
    found = _PROVIDERS.get(what)
    if found is None or found[0] is not eps:
        found = _PROVIDERS[what] = (eps, tuple(read(eps)))
    return found[1]


def iter_providers(eps: Any = None) -> Iterable[Provider]:
    """Every component entry point of every installed distribution, deduplicated (read once
    per installed set: building a registry for every pipeline must stay cheap)."""
    eps = eps if eps is not None else installed_entry_points()
    for provider in _cached("providers", eps, _read_providers):
        yield Provider(
            provider.kind, provider.name, provider.value, provider.dist, provider.version,
            entry_point=provider.entry_point, requires_core=provider.requires_core,
        )


def _read_providers(eps: Any) -> Iterable[Provider]:
    """Every component entry point of every installed distribution, deduplicated.

    An identical duplicate (same distribution, name and target, as editable installs can
    produce) is listed once.
    """
    seen: set[tuple[str, str, str, str]] = set()
    eps = eps if eps is not None else installed_entry_points()
    for kind, group in GROUPS.items():
        for ep in eps.select(group=group):
            dist, version, dist_obj = _dist_of(ep)
            key = (kind, ep.name, ep.value, dist)
            if key in seen:
                continue
            seen.add(key)
            yield Provider(
                kind,
                ep.name,
                ep.value,
                dist,
                version,
                entry_point=ep,
                requires_core=core_requirement(dist_obj) if dist != CORE_DIST else None,
            )


def iter_hook_modules(eps: Any = None) -> Iterable[tuple[str, str, EntryPoint]]:
    eps = eps if eps is not None else installed_entry_points()
    return iter(_cached("hooks", eps, _read_hook_modules))


def _read_hook_modules(eps: Any) -> Iterable[tuple[str, str, EntryPoint]]:
    seen: set[tuple[str, str]] = set()
    eps = eps if eps is not None else installed_entry_points()
    for ep in eps.select(group=HOOK_GROUP):
        dist, version, _d = _dist_of(ep)
        if (dist, ep.value) in seen:
            continue
        seen.add((dist, ep.value))
        yield dist, version, ep


def core_version() -> str:
    from .. import __version__

    return __version__


def incompatibility(spec: str | None) -> str:
    """Why a requirement ``spec`` on ragloom excludes the installed core ("" if it does not)."""
    if not spec:
        return ""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    try:
        ok = SpecifierSet(spec).contains(core_version(), prereleases=True)
    except InvalidSpecifier:
        return f"unreadable requirement on ragloom: {spec!r}"
    if ok:
        return ""
    return f"requires ragloom{spec}, but ragloom {core_version()} is installed"
