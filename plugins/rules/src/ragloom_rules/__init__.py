"""ragloom-rules: query-side components that need no model.

``HeuristicDecomposer`` (entry point ``ragloom.decomposers: heuristic``), ``KeywordRouter``
(``ragloom.routers: keyword``) with its ``KeywordRoute`` model, ``sample_router``
(``ragloom.routers: sample``) and the core's question ``complexity`` score.

Imports are lazy: ``from ragloom_rules import complexity`` loads neither the ragloom core nor
pydantic.
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
}

__all__ = [
    "HeuristicDecomposer",
    "KeywordRoute",
    "KeywordRouter",
    "complexity",
    "sample_router",
    "__version__",
]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals(), __all__)


if TYPE_CHECKING:
    from ragloom.signals import complexity

    from .decomposer import HeuristicDecomposer
    from .router import KeywordRoute, KeywordRouter, sample_router
