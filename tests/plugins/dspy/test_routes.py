"""Route declarations, answer matching and confidence reading (model-free)."""

from __future__ import annotations

import math

import pytest
from pydantic import BaseModel
from ragloom_dspy._routes import (
    RouteSpec,
    describe_routes,
    match_route,
    normalize_routes,
    parse_confidence,
)


class RouteModel(BaseModel):
    name: str
    description: str


def test_routes_from_dicts_models_mappings_and_names() -> None:
    expected = (RouteSpec("docs", "product documentation"), RouteSpec("web", "the open web"))
    assert (
        normalize_routes(
            [
                {"name": "docs", "description": "product documentation"},
                {"name": "web", "description": "the open web"},
            ]
        )
        == expected
    )
    assert (
        normalize_routes(
            [
                RouteModel(name="docs", description="product documentation"),
                RouteModel(name="web", description="the open web"),
            ]
        )
        == expected
    )
    assert normalize_routes({"docs": "product documentation", "web": "the open web"}) == expected
    assert normalize_routes(["docs", {"name": " web "}]) == (RouteSpec("docs"), RouteSpec("web"))


@pytest.mark.parametrize(
    ("routes", "message"),
    [
        ([], "routes must not be empty"),
        ("docs", "not a string"),
        (42, "routes must be a list"),
        ([{"description": "x"}], r"routes\[0\] needs a non-empty string 'name'"),
        ([{"name": "  "}], r"routes\[0\] needs a non-empty string 'name'"),
        ([{"name": "a", "description": 3}], r"routes\[0\] 'description' must be a string"),
        ([{"name": "Docs"}, {"name": "docs"}], "duplicate route name 'docs'"),
        ([3.5], r"routes\[0\] must be a mapping"),
    ],
)
def test_bad_routes_are_rejected(routes: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        normalize_routes(routes)  # type: ignore[arg-type]


def test_describe_routes() -> None:
    text = describe_routes(normalize_routes({"docs": "product\n documentation", "web": ""}))
    assert text == "- docs: product documentation\n- web"


ROUTES = normalize_routes({"docs": "", "Web Search": "", "billing": ""})


@pytest.mark.parametrize(
    ("answer", "route"),
    [
        ("docs", "docs"),
        ("DOCS", "docs"),
        ("  docs\n", "docs"),
        ('"docs"', "docs"),
        ("'docs'", "docs"),
        ("`docs`", "docs"),
        ("**docs**", "docs"),
        ("docs.", "docs"),
        ("web search", "Web Search"),
        ("Billing", "billing"),
        ("doc", None),
        ("docs or web", None),
        ("", None),
        ("''", None),
        (None, None),
        (3, None),
    ],
)
def test_match_route(answer: object, route: str | None) -> None:
    assert match_route(answer, ROUTES) == route


@pytest.mark.parametrize(
    ("value", "score"),
    [
        (0.8, 0.8),
        (1, 1.0),
        ("0.25", 0.25),
        (" 0.9 ", 0.9),
        ("85%", 0.85),
        (1.7, 1.0),
        (-0.2, 0.0),
        (None, None),
        ("high", None),
        (True, None),
        (math.nan, None),
        ("inf", None),
        ([0.5], None),
    ],
)
def test_parse_confidence(value: object, score: float | None) -> None:
    assert parse_confidence(value) == score
