"""The plugin system: entry-point discovery, pluggy hooks, and the per-build ``Registry``.

Listing what is installed (:func:`discover_plugins`) reads entry-point metadata only and imports
no plugin (but the ``ragloom.policy`` modules of platform plugins, which say what the
organisation's policy blocks: :func:`policy_in_force`); a component's code is imported when a
pipeline that names it is built. This package is lazy: listing plugins does not import pluggy
or the registry.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._discovery import (
    GROUPS,
    HOOK_GROUP,
    PluginInfo,
    Provider,
    disabled_from_env,
    install_hint,
)
from ._listing import discover_plugins
from ._policy import POLICY_ENV, OrgPolicy, policy_in_force

__all__ = [
    "GROUPS",
    "HOOK_GROUP",
    "POLICY_ENV",
    "OrgPolicy",
    "PluginInfo",
    "Provider",
    "Registry",
    "disabled_from_env",
    "discover_plugins",
    "install_hint",
    "policy_in_force",
]


def __getattr__(name: str) -> Any:
    if name == "Registry":
        from ._registry import Registry

        return Registry
    raise AttributeError(f"module 'ragloom.plugins' has no attribute {name!r}")


if TYPE_CHECKING:
    from ._registry import Registry
