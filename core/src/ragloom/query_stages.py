"""Where query-side components plug into a search: the stages of the table of kinds.

A search runs Decompose -> Normalize -> Route -> Retrieve; inside Retrieve, every search of a
question (each ask's, the whole question's) finds its hits, and the hits of all its searches
are fused into the question's passages. A *query-side kind* (a row of
:data:`~ragloom.kinds.KINDS` with a ``query_stage``) plugs a component in at one of two
stages, each with one method the search calls:

- ``"search"`` (:class:`SearchStage`): :meth:`SearchStage.on_search` gets one search's hits
  (best first) and returns the hits to fuse (reordered, thinned out);
- ``"fused"`` (:class:`FusedStage`): :meth:`FusedStage.on_fused` gets the question's fused
  passages (best first; every passage the searches found, not yet cut to ``top_k``) and
  returns at most ``top_k`` of them, in the order of the answer. The reranker
  (:class:`~ragloom.reranking.Reranker`) is one.

Within a stage, components run in the order of the table. The search hands a component the
block's store and embedder when its factory takes them (``store=``, ``embedder=``), as it does
for retrievers. Components are chosen by the kind's ``setting`` key (``rerank``): in
a pipeline file's ``retrieval`` section, a routes file, :class:`~ragloom.searcher.SearchSettings`
and the command line. So adding a query-side kind is its module (a base type deriving from its
stage's type), its row and its contract: the rest of ragloom reads the row.
"""

from __future__ import annotations

import inspect
from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from . import kinds as _kinds
from .component import Component
from .errors import ComponentTypeError, ConfigurationError

if TYPE_CHECKING:
    from .passages import FusedPassage
    from .stores import ScoredChunk

__all__ = [
    "FusedStage",
    "SearchStage",
    "build_query_component",
    "check_query_components",
    "ordered",
    "stage_type",
]


class SearchStage(Component, ABC):
    """A component that sees each search of a question, before fusion."""

    @abstractmethod
    def on_search(
        self, question: str, sub_query: str, hits: list[ScoredChunk]
    ) -> list[ScoredChunk]:
        """The hits of the search of ``sub_query`` (an ask of ``question``, or the question
        itself) to fuse, best first: some of ``hits``, in any order."""


class FusedStage(Component, ABC):
    """A component that sees a question's fused passages, before the cut to ``top_k``."""

    @abstractmethod
    def on_fused(
        self, question: str, passages: list[FusedPassage], top_k: int
    ) -> list[FusedPassage]:
        """At most ``top_k`` of ``passages`` (the fused order, best first), in the order of
        the answer."""


_STAGE_TYPES: dict[str, type[Component]] = {"search": SearchStage, "fused": FusedStage}


def stage_type(stage: str) -> type[Component]:
    """The type every component of a kind at ``stage`` derives from."""
    return _STAGE_TYPES[stage]


def check_query_components(components: Mapping[str, Any] | None) -> dict[str, Any]:
    """``components`` (query-side kind name -> component) checked: each key a query-side kind,
    each value an instance of its kind's base type.

    Raises:
        ConfigurationError: a key is not a query-side kind.
        ComponentTypeError: a component is not of its kind's type.
    """
    out: dict[str, Any] = {}
    for name, component in (components or {}).items():
        row = _kinds.KINDS.get(name)
        if row is None or row.query_stage is None:
            valid = ", ".join(r.name for r in _kinds.KINDS.values() if r.query_stage) or "none"
            raise ConfigurationError(
                f"{name!r} is not a query-side kind (those a search takes: {valid})"
            )
        base = row.base_type()
        if not isinstance(component, base) or not isinstance(
            component, stage_type(row.query_stage)
        ):
            raise ComponentTypeError(
                f"{name} must be a {base.__name__}, got {type(component).__name__}"
            )
        out[name] = component
    return out


def ordered(components: Mapping[str, Any], stage: str) -> list[Any]:
    """The components at ``stage``, in the order of the table of kinds."""
    return [
        components[row.name]
        for row in _kinds.KINDS.values()
        if row.query_stage == stage and row.name in components
    ]


def build_query_component(
    registry: Any, kind: str, name: str, params: Mapping[str, Any], store: Any, embedder: Any
) -> Any:
    """The registered component ``name`` of ``kind``, handed the block's ``store`` and
    ``embedder`` when its factory takes them and ``params`` does not set them."""
    return registry.create(kind, name, with_index(registry.resolve(kind, name), params, store,
                                                  embedder))


def with_index(
    factory: Any, params: Mapping[str, Any], store: Any, embedder: Any
) -> dict[str, Any]:
    """``params`` plus the block's store and embedder for a factory that takes them."""
    wanted = dict(params)
    try:
        accepted = inspect.signature(factory).parameters
    except (TypeError, ValueError):
        return wanted
    if "store" in accepted and "store" not in wanted and store is not None:
        wanted["store"] = store
    if "embedder" in accepted and "embedder" not in wanted and embedder is not None:
        wanted["embedder"] = embedder
    return wanted
