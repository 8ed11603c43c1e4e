"""The plugin system: entry-point discovery, pluggy hooks, and the per-build ``Registry``.

Listing what is installed (:func:`discover_plugins`) reads entry-point metadata only and imports
no plugin; a component's code is imported when a pipeline that names it is built.
"""

from __future__ import annotations

from ._discovery import (
    GROUPS,
    HOOK_GROUP,
    PluginInfo,
    Provider,
    disabled_from_env,
    discover_plugins,
)
from ._registry import Registry

__all__ = [
    "GROUPS",
    "HOOK_GROUP",
    "PluginInfo",
    "Provider",
    "Registry",
    "disabled_from_env",
    "discover_plugins",
]
