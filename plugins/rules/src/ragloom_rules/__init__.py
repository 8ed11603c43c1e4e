"""ragloom-rules: query-side components that need no model.

``HeuristicDecomposer`` (entry point ``ragloom.decomposers: heuristic``), ``KeywordRouter``
(``ragloom.routers: keyword``) with its ``KeywordRoute`` model, ``sample_router``
(``ragloom.routers: sample``), the ``complexity`` score, and ``decomposition_violations``,
which checks any decomposer's sub-queries against the question (nothing invented, nothing
lost, no dangling reference).

Imports are lazy: ``from ragloom_rules import complexity`` (or ``decomposition_violations``)
loads neither the ragloom core nor pydantic.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_EXPORTS: dict[str, str] = {
    "HeuristicDecomposer": "decomposer",
    "KeywordRouter": "router",
    "KeywordRoute": "router",
    "sample_router": "router",
    "complexity": "_signals",
    "decomposition_violations": "invariants",
}

__all__ = [
    "HeuristicDecomposer",
    "KeywordRoute",
    "KeywordRouter",
    "complexity",
    "decomposition_violations",
    "sample_router",
    "__version__",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'ragloom_rules' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


if TYPE_CHECKING:
    from ._signals import complexity
    from .decomposer import HeuristicDecomposer
    from .invariants import decomposition_violations
    from .router import KeywordRoute, KeywordRouter, sample_router
