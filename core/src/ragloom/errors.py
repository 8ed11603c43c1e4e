"""The one exception tree of ragloom.

Every error ragloom raises on purpose derives from :class:`RagloomError`. Errors that the specs
describe as ``ValueError`` or ``TypeError`` also derive from those builtins, so code written
against the specs keeps working.
"""

from __future__ import annotations

import os

__all__ = [
    "BrokenPluginError",
    "CacheCorruptError",
    "CacheError",
    "CacheFullError",
    "CacheReadOnlyError",
    "ComponentTypeError",
    "ConfigurationError",
    "IncompatiblePluginError",
    "InvalidInputError",
    "ItemProcessingError",
    "PluginBlockedError",
    "PluginConflictError",
    "PluginError",
    "PluginNotFoundError",
    "PolicyFileError",
    "PolicyViolationError",
    "RagloomError",
    "RoutingError",
    "StepTimeoutError",
    "UnroutedItemError",
]


class RagloomError(Exception):
    """Base class of every error raised by ragloom on purpose."""


class ConfigurationError(RagloomError, ValueError):
    """A step, pipeline or config file is set up wrongly (bad parameter, nothing bound, ...)."""


class ComponentTypeError(RagloomError, TypeError):
    """A component of the wrong kind was given (e.g. a router where a decomposer belongs)."""


class InvalidInputError(RagloomError, ValueError):
    """An item cannot be processed by a step (wrong content format, unparsable content, ...).

    Never retried: the same input fails the same way.
    """


class RoutingError(RagloomError):
    """A routing decision could not be made and no default route exists."""


class UnroutedItemError(RoutingError, InvalidInputError):
    """An item matched no route of a ``RoutedStep`` that has no default."""


class StepTimeoutError(RagloomError, TimeoutError):
    """An item's work exceeded the policy's per-item timeout and was cancelled."""


class ItemProcessingError(RagloomError):
    """A run was aborted because an item failed under a policy with ``on_failure="abort"``.

    The original error is chained as ``__cause__``.
    """


class CacheError(RagloomError):
    """A cache store cannot be used."""


class CacheCorruptError(CacheError):
    """A cache file is corrupt or was not written by ragloom."""


class CacheReadOnlyError(CacheError):
    """A cache cannot be written (a read-only file or folder): it can still be read."""


class CacheFullError(CacheError):
    """The disk holding a cache is full: nothing more can be written to it."""


class PluginError(RagloomError):
    """Base class for plugin discovery and loading errors."""


class PluginNotFoundError(PluginError, ConfigurationError):
    """A pipeline names a step that no installed plugin provides."""


class PluginConflictError(PluginError, ConfigurationError):
    """Two distributions provide the same name in the same group."""


class BrokenPluginError(PluginError):
    """A plugin failed to import or provided something of the wrong type."""


class IncompatiblePluginError(BrokenPluginError):
    """A plugin requires a version of the ragloom core other than the installed one."""


class PluginBlockedError(PluginError, ConfigurationError):
    """A pipeline names a step of a plugin that is disabled or not allow-listed."""


class PolicyFileError(ConfigurationError):
    """The organisation's policy (a policy file, or a platform plugin's ``ragloom_policy``) is
    unreadable or invalid. :attr:`source` names the file (or plugin), :attr:`key` the setting
    (``""`` when the whole file is unreadable)."""

    def __init__(self, message: str, *, source: str = "", key: str = "") -> None:
        super().__init__(message)
        self.source = source
        self.key = key


class PolicyViolationError(PluginError, ConfigurationError):
    """A run would break the organisation's policy (a required step wrapper is missing,
    blocked, broken or turned off with ``plugin_hooks=False``): it does not start."""


# Public as ragloom.ingest.OutputError; defined here so that the command line can catch it
# without importing the ingestion package.
class OutputError(RagloomError):
    """An output file could not be written (an I/O error: no space left, no permission...).

    The previous file at that path, if any, is left as it was, and no temporary file remains.
    """

    def __init__(self, path: str | os.PathLike[str], error: OSError, flag: str = "") -> None:
        self.path = os.fspath(path)
        self.error = error
        reason = error.strerror or str(error)
        what = f"{flag} {self.path}" if flag else self.path
        super().__init__(
            f"cannot write {what}: {reason} (a previous file there is unchanged; no partial "
            "file remains)"
        )
