"""ragloom-rules: query-side components that need no model.

``HeuristicDecomposer`` (entry point ``ragloom.decomposers: heuristic``), ``KeywordRouter``
(``ragloom.routers: keyword``) with its ``KeywordRoute`` model, ``sample_router``
(``ragloom.routers: sample``), the core's question ``complexity`` score, and
``decomposition_violations``, which checks any decomposer's sub-queries against the question
(nothing invented, nothing lost, no dangling reference).

Imports are lazy: ``from ragloom_rules import complexity`` (or ``decomposition_violations``)
loads neither the ragloom core nor pydantic.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ragloom.lazy import lazy_exports

__version__ = "0.1.0"

_EXPORTS: dict[str, str] = {
    "HeuristicDecomposer": ".decomposer",
    "KeywordRouter": ".router",
    "KeywordRoute": ".router",
    "sample_router": ".router",
    "complexity": "ragloom.signals",
    "decomposition_violations": ".invariants",
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


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals(), __all__)


if TYPE_CHECKING:
    from ragloom.signals import complexity

    from .decomposer import HeuristicDecomposer
    from .invariants import decomposition_violations
    from .router import KeywordRoute, KeywordRouter, sample_router
