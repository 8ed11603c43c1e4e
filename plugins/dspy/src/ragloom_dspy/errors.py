"""Errors of ragloom-dspy, rooted in ragloom's exception tree."""

from __future__ import annotations

from ragloom.errors import ConfigurationError

__all__ = ["NoLMConfiguredError"]


class NoLMConfiguredError(ConfigurationError):
    """A DSPy module was called with no LM: none was given and the DSPy context has none.

    Raised rather than falling back, because it is a set-up mistake, not a model failure.
    """
