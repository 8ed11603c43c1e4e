"""ragloom-dspy: DSPy sub-query generation, LLM routing and cited answers for ragloom.

``SubQueryGenerator`` (a ``dspy.Module``), the ragloom adapters ``DSPyDecomposer`` (entry point
``ragloom.decomposers: dspy``), ``DSPyRouter`` (``ragloom.routers: dspy``) and ``DSPyAnswerer``
(``ragloom.answerers: dspy``, over the ``CitedAnswerGenerator`` module), and the model-free
helpers ``determine_complexity`` and ``fallback_rewrite``.

Imports are lazy: ``import ragloom_dspy`` does not import DSPy (about 0.8 s); a name that needs
it loads it on first use, so listing plugins stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ragloom.lazy import lazy_exports

__version__ = "0.1.0"

_EXPORTS: dict[str, str] = {
    "SubQueryGenerator": ".generator",
    "BELOW_MINIMUM": ".generator",
    "SubQuerySignature": ".signatures",
    "SubQueryListSignature": ".signatures",
    "RouteSignature": ".signatures",
    "DSPyDecomposer": ".decomposer",
    "DSPyRouter": ".router",
    "DSPyAnswerer": ".answerer",
    "CitedAnswerGenerator": ".answerer",
    "CitedAnswerSignature": ".answerer",
    "RouteSelector": ".router",
    "RouteSpec": "._routes",
    "NoLMConfiguredError": ".errors",
    "determine_complexity": "._heuristics",
    "fallback_rewrite": "._heuristics",
    "parse_sub_queries": "._parsing",
    "llama_cpp_lm": ".local",
}

__all__ = [
    "BELOW_MINIMUM",
    "CitedAnswerGenerator",
    "CitedAnswerSignature",
    "DSPyAnswerer",
    "DSPyDecomposer",
    "DSPyRouter",
    "NoLMConfiguredError",
    "RouteSelector",
    "RouteSignature",
    "RouteSpec",
    "SubQueryGenerator",
    "SubQueryListSignature",
    "SubQuerySignature",
    "__version__",
    "determine_complexity",
    "fallback_rewrite",
    "llama_cpp_lm",
    "parse_sub_queries",
]

if TYPE_CHECKING:
    from ._heuristics import determine_complexity, fallback_rewrite
    from ._parsing import parse_sub_queries
    from ._routes import RouteSpec
    from .answerer import CitedAnswerGenerator, CitedAnswerSignature, DSPyAnswerer
    from .decomposer import DSPyDecomposer
    from .errors import NoLMConfiguredError
    from .generator import BELOW_MINIMUM, SubQueryGenerator
    from .local import llama_cpp_lm
    from .router import DSPyRouter, RouteSelector
    from .signatures import RouteSignature, SubQueryListSignature, SubQuerySignature


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals(), __all__)
