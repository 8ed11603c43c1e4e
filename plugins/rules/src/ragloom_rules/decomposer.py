"""``HeuristicDecomposer``: a ragloom ``QueryTransformer`` that splits queries by rules."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from ragloom import ConfigurationError, QueryTransformer

from ._decompose import decompose

__all__ = ["HeuristicDecomposer"]


class HeuristicDecomposer(QueryTransformer):
    """Splits a compound question into its asks, however it is phrased; no model.

    "For a release script: how do I create a signed tag, and how does the build server verify
    it?" gives ``["For a release script: how do I create a signed tag?", "For a release
    script: how does the build server verify a signed tag?"]``; "How do I rebase a branch,
    squash commits, and push the result?" one sub-query per action with "How do I" in front;
    "What is Docker and how does it work?" gives ``["What is Docker?", "How does Docker
    work?"]``; "Compare renewable energy adoption in Germany vs France since 2020" gives
    ``["Renewable energy adoption in Germany since 2020", "Renewable energy adoption in France
    since 2020", "Compare renewable energy adoption in Germany vs France since 2020"]``. One
    ask is returned whole (``[query.strip()]``): "What is the difference between TCP and
    UDP?", "How do I grant SELECT and INSERT on a table to a role?", "How do I dump and
    restore a database?"; a blank query gives ``[]``. Sub-queries are made of the question's
    own words: none is invented, none is lost, no reference is left dangling (see
    :func:`ragloom_rules.decomposition_violations`), and a question whose structure the rules
    cannot settle stays whole. The rules are described in :mod:`ragloom_rules._decompose`.
    Deterministic, pure Python, about a tenth of a millisecond a query.

    Args:
        max_sub_queries: at most this many sub-queries are returned (a comparison that must be
            cut keeps its comparison query).
        include_comparison: whether a comparison also yields the comparison itself after its
            per-item sub-queries.

    Raises:
        ConfigurationError: ``max_sub_queries`` is not an integer >= 1, or
            ``include_comparison`` is not a bool.
    """

    step_id: ClassVar[str] = "ragloom-rules/heuristic"
    awaits: ClassVar[bool] = False

    def __init__(self, max_sub_queries: int = 5, include_comparison: bool = True) -> None:
        if isinstance(max_sub_queries, bool) or not isinstance(max_sub_queries, int):
            raise ConfigurationError(
                f"max_sub_queries must be an integer >= 1, got {max_sub_queries!r}"
            )
        if max_sub_queries < 1:
            raise ConfigurationError(f"max_sub_queries must be >= 1, got {max_sub_queries}")
        if not isinstance(include_comparison, bool):
            raise ConfigurationError(
                f"include_comparison must be a bool, got {include_comparison!r}"
            )
        self.max_sub_queries = max_sub_queries
        self.include_comparison = include_comparison

    def config(self) -> Mapping[str, Any]:
        return {
            "max_sub_queries": self.max_sub_queries,
            "include_comparison": self.include_comparison,
        }

    def decompose(self, query: str) -> list[str]:
        """:meth:`transform` without the event loop (it never awaits)."""
        if not isinstance(query, str):
            raise TypeError(f"query must be a string, got {type(query).__name__}")
        return decompose(query, self.max_sub_queries, self.include_comparison)

    async def transform(self, query: str) -> list[str]:
        return self.decompose(query)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(max_sub_queries={self.max_sub_queries}, "
            f"include_comparison={self.include_comparison})"
        )
