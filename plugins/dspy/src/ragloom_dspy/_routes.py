"""Route declarations and reading a model's route answer.

Pure functions (no DSPy, no ragloom core): normalising the routes a user declares, rendering
them for the prompt, matching the model's answer to a declared route, and reading a confidence.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "RouteSpec",
    "describe_routes",
    "match_route",
    "normalize_routes",
    "parse_confidence",
    "strip_answer",
]

_QUOTES = "\"'`\u2018\u2019\u201c\u201d*"


@dataclass(frozen=True, slots=True)
class RouteSpec:
    """One route the model may choose: a ``name`` and what it is for."""

    name: str
    description: str = ""

    def as_dict(self) -> dict[str, str]:
        return {"name": self.name, "description": self.description}


def _route_from(value: Any, index: int) -> RouteSpec:
    if isinstance(value, RouteSpec):
        return value
    if isinstance(value, Mapping):
        name, description = value.get("name"), value.get("description", "")
    elif isinstance(value, str):
        name, description = value, ""
    elif hasattr(value, "name"):  # a pydantic model, dataclass or any object with the fields
        name, description = value.name, getattr(value, "description", "")
    else:
        raise ValueError(
            f"routes[{index}] must be a mapping or an object with 'name' and 'description', "
            f"got {type(value).__name__}"
        )
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"routes[{index}] needs a non-empty string 'name', got {name!r}")
    if description is None:
        description = ""
    if not isinstance(description, str):
        raise ValueError(f"routes[{index}] 'description' must be a string, got {description!r}")
    return RouteSpec(name.strip(), " ".join(description.split()))


def normalize_routes(routes: Iterable[Any] | Mapping[str, str]) -> tuple[RouteSpec, ...]:
    """Validate declared routes: dicts, objects with ``name``/``description``, bare names, or a
    ``{name: description}`` mapping. Names must be non-empty and unique case-insensitively
    (answers are matched case-insensitively). Raises ``ValueError`` naming the problem."""
    if isinstance(routes, str):
        raise ValueError("routes must be a list of routes, not a string")
    if isinstance(routes, Mapping):
        items: list[Any] = [{"name": k, "description": v} for k, v in routes.items()]
    else:
        try:
            items = list(routes)
        except TypeError:
            kind = type(routes).__name__
            raise ValueError(f"routes must be a list of routes, got {kind}") from None
    if not items:
        raise ValueError("routes must not be empty")
    specs = tuple(_route_from(item, i) for i, item in enumerate(items))
    seen: dict[str, str] = {}
    for spec in specs:
        key = spec.name.casefold()
        if key in seen:
            raise ValueError(f"duplicate route name {spec.name!r} (clashes with {seen[key]!r})")
        seen[key] = spec.name
    return specs


def describe_routes(routes: Iterable[RouteSpec]) -> str:
    """The routes as prompt text: one ``- name: description`` line each."""
    return "\n".join(
        f"- {r.name}: {r.description}" if r.description else f"- {r.name}" for r in routes
    )


def strip_answer(text: str) -> str:
    """``text`` without surrounding whitespace, quotes, backticks, emphasis or a final period."""
    previous = None
    while previous != text:
        previous = text
        text = text.strip().strip(_QUOTES).strip()
        if text.endswith(".") and not text[:-1].endswith("."):
            text = text[:-1]
    return text


def match_route(answer: Any, routes: Iterable[RouteSpec]) -> str | None:
    """The declared route name ``answer`` designates, or ``None``.

    Surrounding whitespace, quotes, backticks, markdown emphasis and a final period are
    ignored; the comparison is case-insensitive. The declared spelling is returned.
    """
    if not isinstance(answer, str):
        return None
    wanted = strip_answer(answer).casefold()
    if not wanted:
        return None
    for route in routes:
        if route.name.casefold() == wanted:
            return route.name
    return None


def parse_confidence(value: Any) -> float | None:
    """A model's confidence as a float in ``[0, 1]``, or ``None`` when absent or unreadable.

    Finite numbers (or numeric strings, with an optional ``%``) are clamped to ``[0, 1]``;
    a percentage is divided by 100.
    """
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, str):
        text = value.strip()
        percent = text.endswith("%")
        try:
            number = float(text.rstrip("%").strip())
        except ValueError:
            return None
        if percent:
            number /= 100.0
    elif isinstance(value, int | float):
        number = float(value)
    else:
        return None
    if not math.isfinite(number):
        return None
    return min(1.0, max(0.0, number))
