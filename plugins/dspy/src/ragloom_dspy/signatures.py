"""The DSPy signatures behind the sub-query generator and the router."""

from __future__ import annotations

import dspy

__all__ = ["SUB_QUERY_WORDS", "RouteSignature", "SubQueryListSignature", "SubQuerySignature"]

#: The length the signatures ask of each sub-query, in words (inclusive); the generator
#: reports the sub-queries outside it.
SUB_QUERY_WORDS: tuple[int, int] = (5, 12)
_LENGTH = f"{SUB_QUERY_WORDS[0]}-{SUB_QUERY_WORDS[1]} words long"


_INSTRUCTIONS = """\
Decompose a complex search query into focused sub-queries for independent retrieval.

Identify the distinct aspects, entities, comparisons and constraints in the original query
and write one self-contained search query for each, so that every sub-query can be sent to
a search engine on its own.
"""
_ORIGINAL_QUERY = (
    "The user's original complex search query. The LLM must identify distinct aspects, "
    "entities, and constraints that each warrant a separate search."
)
_NUM_SUBQUERIES = (
    "Target number of sub-queries to generate (typically 2-5). Scaled by complexity: "
    "2 for simple, 3 for medium, 4-5 for highly complex queries."
)


class SubQuerySignature(dspy.Signature):  # type: ignore[misc]
    __doc__ = _INSTRUCTIONS

    original_query: str = dspy.InputField(desc=_ORIGINAL_QUERY)
    num_subqueries: int = dspy.InputField(desc=_NUM_SUBQUERIES)
    # A string holding JSON: the generator parses it itself (code
    # fences, prose around the array, Python lists), so a sloppy answer degrades to a fallback
    # instead of an adapter parse error and a second LM call.
    sub_queries: str = dspy.OutputField(
        desc=(
            "A JSON array of optimized sub-query strings. Each must be self-contained, address a "
            "distinct aspect of the original query, preserve all critical constraints, and be "
            f"{_LENGTH}. Output must be valid JSON with no additional text."
        )
    )


class SubQueryListSignature(dspy.Signature):  # type: ignore[misc]
    __doc__ = _INSTRUCTIONS

    original_query: str = dspy.InputField(desc=_ORIGINAL_QUERY)
    num_subqueries: int = dspy.InputField(desc=_NUM_SUBQUERIES)
    # The same field typed as a list: with DSPy's JSONAdapter and an LM that honours a JSON
    # schema (a llama.cpp grammar, structured outputs) the answer is a JSON array by
    # construction, instead of a string that has to contain one.
    sub_queries: list[str] = dspy.OutputField(
        desc=(
            "The optimized sub-query strings. Each must be self-contained, address a distinct "
            f"aspect of the original query, preserve all critical constraints, and be {_LENGTH}."
        )
    )


class RouteSignature(dspy.Signature):  # type: ignore[misc]
    """Choose the one route that should handle the query.

    Answer with the name of exactly one of the listed routes, spelled as listed.
    """

    query: str = dspy.InputField(desc="The search query (or sub-query) to route.")
    routes: str = dspy.InputField(
        desc="The available routes, one per line as '- name: what the route handles'."
    )
    route: str = dspy.OutputField(desc="The name of the chosen route, exactly as listed.")
    # Optional and read leniently by the router ("0.8", "80%"); a missing or unreadable value
    # leaves the decision without a score rather than failing it.
    confidence: str | None = dspy.OutputField(
        desc="How confident you are in this route, a number between 0 and 1."
    )
