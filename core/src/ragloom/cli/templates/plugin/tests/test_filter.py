"""TagFilter: matching, composing, routing and registration."""

from __future__ import annotations

from typing import Any

import pytest
from ragloom import Document, FunctionStep, Pipeline, RoutedStep
from ragloom.plugins import Registry

from __PACKAGE__.filter import TagFilter


def doc(doc_id: str, **metadata: object) -> Document:
    return Document(id=doc_id, content="some text", metadata=metadata)


def test_matches_a_tag_or_a_list_of_tags() -> None:
    faq = TagFilter(["FAQ", "help"])
    assert faq.matches(doc("a", tags="faq"))
    assert faq.matches(doc("b", tags=["news", "Help "]))
    assert not faq.matches(doc("c", tags=["news"]))
    assert not faq.matches(doc("d"))
    assert not faq.matches(doc("e", tags=3))
    assert TagFilter("x", key="labels").matches(doc("f", labels=["x"]))
    assert faq.requires_content is False


def test_composes_with_and_or_not() -> None:
    published_faq = TagFilter("faq") & ~TagFilter("draft")
    assert published_faq.matches(doc("a", tags=["faq"]))
    assert not published_faq.matches(doc("b", tags=["faq", "draft"]))
    assert (TagFilter("a") | TagFilter("b")).matches(doc("c", tags="b"))


def test_routes_items_in_a_pipeline() -> None:
    step = (
        RoutedStep[Any]()
        .route(TagFilter("faq"), FunctionStep(lambda d: f"faq:{d.id}", name="faq"))
        .default(FunctionStep(lambda d: f"other:{d.id}", name="other"))
    )
    result = Pipeline(step).run_sync([doc("a", tags=["FAQ"]), doc("b", tags="news")])
    assert list(result) == ["faq:a", "other:b"]


def test_bad_settings_are_refused() -> None:
    with pytest.raises(ValueError, match="tags"):
        TagFilter([])
    with pytest.raises(ValueError, match="tags"):
        TagFilter(["ok", " "])


def test_registered_and_built_by_name() -> None:
    built = Registry().create("filter", "__DIST__:__PREFIX__-tags", {"tags": ["faq"]})
    assert isinstance(built, TagFilter) and built.matches(doc("a", tags="faq"))
