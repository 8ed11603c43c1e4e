"""Listing the installed plugins: what each provides and whether it may load.

Above both the metadata reading (:mod:`._discovery`) and the organisation's policy
(:mod:`._policy`), which reads that metadata too: a listing asks both.
"""

from __future__ import annotations

from collections.abc import Iterable
from importlib.metadata import entry_points
from typing import Any

from ._discovery import (
    CORE_DIST,
    PluginInfo,
    _dist_of,
    allowed_from_env,
    disabled_from_env,
    incompatibility,
    iter_hook_modules,
    iter_providers,
    normalize_dist,
)
from ._policy import POLICY_GROUP, policy_in_force

__all__ = ["discover_plugins"]


def discover_plugins(
    *,
    disabled: Iterable[str] | None = None,
    allow: Iterable[str] | None = None,
    policy: Any = None,
) -> list[PluginInfo]:
    """Installed plugins and what each provides, from metadata alone (no plugin is imported,
    but the ``ragloom.policy`` modules of platform plugins: see :mod:`ragloom.plugins._policy`).

    ``disabled`` defaults to ``RAGLOOM_DISABLE_PLUGINS``; ``allow`` (an allowlist that turns
    autoload off) defaults to ``RAGLOOM_ALLOW_PLUGINS`` when ``RAGLOOM_PLUGINS_AUTOLOAD=0``;
    ``policy`` (an :class:`~ragloom.plugins._policy.OrgPolicy`) to the organisation's policy
    in force.

    Raises:
        PolicyFileError: the policy in force is unreadable or invalid.
    """
    if policy is None:
        policy = policy_in_force()
    blocked = (
        frozenset(normalize_dist(d) for d in disabled)
        if disabled is not None
        else (disabled_from_env())
    )
    allowed = (
        frozenset(normalize_dist(d) for d in allow) if allow is not None else (allowed_from_env())
    )
    infos: dict[str, PluginInfo] = {}

    def info_for(dist: str, version: str) -> PluginInfo:
        info = infos.get(dist)
        if info is None:
            info = infos[dist] = PluginInfo(dist, version)
        return info

    eps = entry_points()
    for provider in iter_providers(eps):
        info = info_for(provider.dist, provider.version)
        info.provides.setdefault(provider.kind, []).append(provider.name)
        if provider.requires_core is not None:
            info.requires_core = provider.requires_core
    for dist, version, ep in iter_hook_modules(eps):
        info_for(dist, version).hooks.append(ep.value)
    for ep in eps.select(group=POLICY_GROUP):
        dist, version, _d = _dist_of(ep)
        if ep.value not in info_for(dist, version).policy:
            info_for(dist, version).policy.append(ep.value)
    for dist, info in infos.items():
        if dist == CORE_DIST:
            info.status, info.reason = "available", "built in"
        elif dist in blocked:
            info.status, info.reason = "blocked", "disabled by RAGLOOM_DISABLE_PLUGINS"
        elif allowed is not None and dist not in allowed:
            info.status, info.reason = "blocked", "autoload off and not in the allowlist"
        elif policy.blocked(dist):
            info.status, info.reason = "blocked", policy.blocked(dist)
        else:
            problem = incompatibility(info.requires_core)
            if problem:
                info.status, info.reason = "broken", problem
    return sorted(infos.values(), key=lambda i: (i.dist != CORE_DIST, i.dist))
