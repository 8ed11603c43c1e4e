"""``repr()`` of components: derived once in ``Component`` from the arguments a component was
built with, so every chunker (and every other step) shows its class and settings."""

from __future__ import annotations

from typing import Any

import pytest
from ragloom import (
    Chunker,
    ChunkerRouter,
    ChunkSpan,
    ComponentTypeError,
    ContentFormatFilter,
    Document,
    MetadataFilter,
    Policy,
)


class Array:
    """A value whose ``==`` is elementwise (an array): never compared to a default as a bool."""

    def __eq__(self, other: object) -> Any:
        raise ValueError("the truth value of an array is ambiguous")

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return "Array([...])"


GRID = Array()


class Fixed(Chunker):
    """A chunker with every kind of parameter."""

    def __init__(
        self,
        size: int = 10,
        *extra: str,
        mode: str = "plain",
        table: Any = None,
        grid: Any = GRID,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.size = size

    def split(self, document: Document) -> list[ChunkSpan]:
        text = document.content
        return [ChunkSpan(i, min(i + self.size, len(text))) for i in range(0, len(text), self.size)]


def test_main_parameters_always_and_keyword_only_ones_when_set() -> None:
    assert repr(Fixed()) == "Fixed(size=10)"
    assert repr(Fixed(4, "a", "b", mode="fancy")) == "Fixed(size=4, 'a', 'b', mode='fancy')"
    # what a base takes through **kwargs is shown by its name when given
    assert repr(Fixed(name="cutter")) == "Fixed(size=10, name='cutter')"
    assert repr(Fixed(table=Array())) == "Fixed(size=10, table=Array([...]))"
    # a default compared with an ``==`` that raises: shown, and the repr does not fail
    assert repr(Fixed(grid=GRID)) == "Fixed(size=10)"
    assert repr(Fixed(grid=Array())) == "Fixed(size=10, grid=Array([...]))"
    shown = repr(Fixed(policy=Policy(max_attempts=3)))
    assert shown.startswith("Fixed(size=10, policy=Policy(max_attempts=3")


def test_long_values_are_shortened_and_functions_named() -> None:
    shown = repr(Fixed(mode="x" * 500))
    assert len(shown) < 120 and shown.startswith("Fixed(size=10, mode='xxx")
    assert repr(Fixed(table=len)) == "Fixed(size=10, table=len)"
    assert repr(Fixed(table=test_long_values_are_shortened_and_functions_named)) == (
        f"Fixed(size=10, table={__name__}.test_long_values_are_shortened_and_functions_named)"
    )


def test_a_router_shows_itself_as_it_is_built() -> None:
    router = (
        ChunkerRouter()
        .route(ContentFormatFilter(include_formats=["markdown"]) & ~MetadataFilter(lang="en"),
               Fixed(5))
        .default(Fixed())
    )
    assert repr(router) == (
        "ChunkerRouter().route((ContentFormatFilter(include_formats=['markdown']) & "
        "~MetadataFilter(conditions={'lang': 'en'})), Fixed(size=5)).default(Fixed(size=10))"
    )


def test_every_built_in_chunker_shows_its_settings() -> None:
    text = pytest.importorskip("ragloom_text")
    for cls in (text.RecursiveCharacterTextSplitter, text.MarkdownChunker, text.SentenceChunker,
                text.CodeChunker):
        assert repr(cls()) == f"{cls.__name__}(chunk_size=500, chunk_overlap=0)"
        assert repr(cls(200, 20, length_function="words")) == (
            f"{cls.__name__}(chunk_size=200, chunk_overlap=20, length_function='words')"
        )
    assert repr(text.RecursiveCharacterTextSplitter(separators=["\n\n", " "])) == (
        "RecursiveCharacterTextSplitter(chunk_size=500, chunk_overlap=0, "
        "separators=['\\n\\n', ' '])"
    )
    assert repr(text.default_chunker_router(chunk_size=300)).startswith(
        "ChunkerRouter().route(ContentFormatFilter(include_formats=['markdown']), "
        "MarkdownChunker(chunk_size=300, chunk_overlap=0))"
    )


def test_plugin_chunkers_derive_theirs_too() -> None:
    docling = pytest.importorskip("ragloom_docling")
    assert repr(docling.DoclingChunker()) == "DoclingChunker()"
    assert repr(docling.DoclingChunker(merge_peers=False)) == "DoclingChunker(merge_peers=False)"
    semantic = pytest.importorskip("ragloom_semantic")
    chunker = semantic.SemanticChunker(800, window=3)
    assert repr(chunker) == "SemanticChunker(chunk_size=800, window=3)"


@pytest.mark.parametrize("value", ["some text", Document(id="d", content="x"), ["a", "b"]])
def test_calling_a_chunker_binds_and_says_how_to_chunk(value: Any) -> None:
    """``chunker(x)`` binds an upstream step (the one meaning of calling a step); given text
    or documents it says which method chunks them."""
    with pytest.raises(ComponentTypeError) as info:
        Fixed()(value)
    assert isinstance(info.value, TypeError)
    message = str(info.value)
    assert "call chunker.chunk(...) or chunker.split_text(text)" in message
    assert f"got {type(value).__name__}" in message
