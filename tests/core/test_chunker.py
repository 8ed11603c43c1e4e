"""Chunker and ChunkerRouter: a split-only chunker, exact spans, lineage, routing."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Iterable, Mapping
from typing import Any, ClassVar

import pytest
from ragloom import (
    Chunker,
    ChunkerRouter,
    ChunkSpan,
    ChunkText,
    ComponentTypeError,
    ContentFormat,
    ContentFormatFilter,
    Document,
    FunctionStep,
    InvalidInputError,
    MetadataFilter,
    Pipeline,
    RagloomError,
    UnroutedItemError,
)


class Words(Chunker):
    """Only ``split``: yields whitespace-separated words as strings."""

    def split(self, document: Document) -> Iterable[str]:
        return document.content.split()


class Paragraphs(Chunker):
    """Only ``split``: yields paragraph spans, with the paragraph number as metadata."""

    def split(self, document: Document) -> Iterable[ChunkSpan]:
        for n, match in enumerate(re.finditer(r"[^\n]+", document.content)):
            yield ChunkSpan(match.start(), match.end(), {"paragraph": n})


class Fixed(Chunker):
    """Fixed-width pieces as (str, metadata) pairs."""

    def __init__(self, width: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.width = width

    def config(self) -> Mapping[str, Any]:
        return {"width": self.width}

    def split(self, document: Document) -> Iterable[tuple[str, Mapping[str, Any]]]:
        text = document.content
        for i in range(0, len(text), self.width):
            yield text[i : i + self.width], {"offset": i}


class MarkdownOnly(Words):
    accepted_content_formats: ClassVar[frozenset[str] | None] = frozenset(
        {ContentFormat.MARKDOWN, "my-md"}
    )


class AsyncWords(Chunker):
    async def asplit(self, document: Document) -> AsyncIterator[str]:
        for word in document.content.split():
            yield word


def assert_exact(parent: Document, chunks: list[Document]) -> None:
    for index, chunk in enumerate(chunks):
        assert chunk.parent_id == parent.id
        assert chunk.index == index
        assert chunk.id == f"{parent.id}#{index}"
        assert chunk.start is not None and chunk.end is not None
        assert parent.content[chunk.start : chunk.end] == chunk.content


MD = Document(
    id="md",
    content="# Title\nSome *text* here\nlast line",
    content_format="markdown",
    metadata={"source": "a.md", "lang": "en"},
)
HTML = Document(id="html", content="<p>hi there</p>", content_format="html")
DOCLING = Document(id="dl", content="alpha beta\ngamma", content_format="docling")


@pytest.mark.anyio
async def test_split_only_chunker_inside_a_router_with_routes_and_default() -> None:
    router = (
        ChunkerRouter()
        .route(ContentFormatFilter(include_formats=["docling"]), Paragraphs())
        .route(ContentFormatFilter(include_formats=["markdown"]), Fixed(6))
        .default(Words())
    )
    result = await Pipeline(router).run([MD, HTML, DOCLING])
    assert not result.failed
    by_parent: dict[str, list[Document]] = {}
    for chunk in result:
        assert chunk.parent_id is not None
        by_parent.setdefault(chunk.parent_id, []).append(chunk)
    assert list(by_parent) == ["md", "html", "dl"]  # input order kept
    for parent in (MD, HTML, DOCLING):
        assert_exact(parent, by_parent[parent.id])
    assert [c.content for c in by_parent["dl"]] == ["alpha beta", "gamma"]
    assert [c.metadata["paragraph"] for c in by_parent["dl"]] == [0, 1]
    assert "".join(c.content for c in by_parent["md"]) == MD.content
    assert [c.content for c in by_parent["html"]] == ["<p>hi", "there</p>"]
    assert router.route_name(HTML) == "Words" and router.route_name(DOCLING) == "Paragraphs"


@pytest.mark.anyio
async def test_router_without_default_fails_unmatched_documents() -> None:
    router = ChunkerRouter().route(ContentFormatFilter(include_formats=["markdown"]), Words())
    result = await Pipeline(router).run([HTML, MD])
    assert {c.parent_id for c in result} == {"md"}
    (failure,) = result.failed
    assert failure.item_id == "html" and "html" in failure.message


@pytest.mark.anyio
async def test_str_pieces_land_on_the_right_repeat() -> None:
    text = "la la la\nla la la\nla"
    parent = Document(id="rep", content=text)
    chunks = await Words().run([parent])
    assert [c.content for c in chunks] == ["la"] * 7
    assert [c.start for c in chunks] == [0, 3, 6, 9, 12, 15, 18]
    assert_exact(parent, chunks)


@pytest.mark.anyio
async def test_overlapping_repeated_pieces() -> None:
    class Overlap(Chunker):
        def split(self, document: Document) -> Iterable[str]:
            return ["aaa", "aaa", "aaa"]

    parent = Document(id="o", content="aaaaa")
    chunks = await Overlap().run([parent])
    assert [(c.start, c.end) for c in chunks] == [(0, 3), (1, 4), (2, 5)]
    assert_exact(parent, chunks)


@pytest.mark.anyio
async def test_chunk_span_and_chunk_text_pieces() -> None:
    class Mixed(Chunker):
        def split(self, document: Document) -> Iterable[Any]:
            yield ChunkSpan(0, 5)
            yield ChunkText("a rendered table", {"kind": "table"})
            yield ChunkSpan(6, 11, {"kind": "span"})

    parent = Document(id="m", content="hello world", metadata={"lang": "en"})
    first, rendered, last = await Mixed().run([parent])
    assert (first.content, first.start, first.end) == ("hello", 0, 5)
    assert (rendered.content, rendered.start, rendered.end) == ("a rendered table", None, None)
    assert rendered.metadata == {"lang": "en", "kind": "table"}
    assert rendered.parent_id == "m" and rendered.index == 1
    assert (last.content, last.start, last.metadata["kind"]) == ("world", 6, "span")


@pytest.mark.anyio
async def test_pieces_outside_the_document_fail_the_item() -> None:
    class Liar(Chunker):
        def split(self, document: Document) -> Iterable[Any]:
            yield "not in there" if document.id == "a" else ChunkSpan(0, 99)

    result = await Pipeline(Liar()).run(
        [Document(id="a", content="text"), Document(id="b", content="text")]
    )
    assert list(result) == []
    assert [f.item_id for f in result.failed] == ["a", "b"]
    assert all(isinstance(f.exception, RagloomError) for f in result.failed)


@pytest.mark.anyio
async def test_bad_piece_types_fail_the_item() -> None:
    class Wrong(Chunker):
        def split(self, document: Document) -> Iterable[Any]:
            yield 42

    result = await Pipeline(Wrong()).run([Document(id="w", content="x")])
    assert result.failed[0].error_type == ComponentTypeError.__name__


@pytest.mark.anyio
async def test_accepted_content_formats_enforced_by_validate_input() -> None:
    chunker = MarkdownOnly()
    chunker.validate_input(MD)
    chunker.validate_input(Document(id="c", content="x", content_format="my-md"))
    with pytest.raises(InvalidInputError, match="html"):
        chunker.validate_input(HTML)
    result = await Pipeline(chunker).run([HTML, MD])
    assert {c.parent_id for c in result} == {"md"}
    (failure,) = result.failed
    assert failure.item_id == "html" and failure.error_type == "InvalidInputError"


@pytest.mark.anyio
async def test_accepted_formats_are_enforced_through_a_router() -> None:
    router = ChunkerRouter().route(MetadataFilter(lang="en"), MarkdownOnly()).default(Words())
    bad = Document(id="en-html", content="x y", content_format="html", metadata={"lang": "en"})
    result = await Pipeline(router).run([bad, MD, HTML])
    assert {c.parent_id for c in result} == {"md", "html"}
    assert [f.item_id for f in result.failed] == ["en-html"]
    with pytest.raises(InvalidInputError):
        router.validate_input(bad)


@pytest.mark.anyio
async def test_non_documents_are_rejected() -> None:
    # Fed to a pipeline: refused at once, naming the class and the way to convert it.
    with pytest.raises(TypeError, match=r"expected a ragloom\.Document.*got str.*from_text"):
        await Pipeline(Words()).run(["plain string"])
    with pytest.raises(TypeError, match="got dict.*Document"):
        await Pipeline(Words()).run([{"id": "a", "content": "x"}])
    # Reaching a chunker behind another step: that item fails, named, the rest go on.
    relay = FunctionStep(lambda item: item)
    result = await Pipeline(Words()(relay)).run(["plain string", Document(id="d", content="a b")])
    assert result.failed[0].error_type == "InvalidInputError"
    assert "got str" in result.failed[0].message
    assert [c.content for c in result] == ["a", "b"]


@pytest.mark.anyio
async def test_content_format_override_and_metadata_inheritance() -> None:
    keep, flatten = Paragraphs(), Paragraphs(content_format="Markdown")
    kept = await keep.run([DOCLING])
    assert {c.content_format for c in kept} == {"docling"}
    flat = await flatten.run([DOCLING])
    assert {c.content_format for c in flat} == {"markdown"}
    custom = await Paragraphs(content_format="my-flat").run([DOCLING])
    assert {c.content_format for c in custom} == {"my-flat"}

    chunks = await Fixed(10).run([MD])
    for chunk in chunks:
        assert chunk.metadata["source"] == "a.md" and chunk.metadata["lang"] == "en"
        assert chunk.metadata["offset"] == chunk.start

    # piece metadata wins over the parent's, and the parent is left untouched
    class Override(Chunker):
        def split(self, document: Document) -> Iterable[Any]:
            yield document.content, {"lang": "fr"}

    (chunk,) = await Override().run([MD])
    assert chunk.metadata == {"source": "a.md", "lang": "fr"}
    assert MD.metadata == {"source": "a.md", "lang": "en"}


@pytest.mark.anyio
async def test_chunks_are_valid_documents_that_round_trip() -> None:
    for chunk in await Fixed(7).run([MD]):
        again = Document.model_validate_json(chunk.model_dump_json())
        assert again == chunk
        Document.model_validate(chunk.model_dump())  # passes full validation too


@pytest.mark.anyio
async def test_deterministic_ids() -> None:
    first = await Words().run([MD, HTML])
    second = await Words().run([MD, HTML])
    assert [c.id for c in first] == [c.id for c in second]
    assert first == second
    assert first[0].id == "md#0"


@pytest.mark.anyio
async def test_empty_document_yields_no_chunks() -> None:
    assert await Words().run([Document(id="e", content="")]) == []


@pytest.mark.anyio
async def test_async_split_chunker() -> None:
    chunks = await AsyncWords().run([MD])
    assert [c.content for c in chunks] == MD.content.split()
    assert_exact(MD, chunks)


def test_chunker_must_implement_a_split_hook() -> None:
    class Nothing(Chunker):
        pass

    with pytest.raises(ComponentTypeError, match="split"):
        Nothing()


def test_chunker_router_is_a_virtual_chunker_without_split() -> None:
    router = ChunkerRouter().default(Words())
    assert isinstance(router, Chunker)
    assert not hasattr(router, "split")
    assert not hasattr(router, "asplit")
    assert router.event_name == "Chunking"


def test_chunker_router_only_routes_to_chunkers() -> None:
    with pytest.raises(ComponentTypeError):
        ChunkerRouter().default(FunctionStep(len))  # type: ignore[arg-type]
    with pytest.raises(ComponentTypeError):
        ChunkerRouter().route(ContentFormatFilter(include_formats="md"), FunctionStep(len))  # type: ignore[arg-type]


def test_nested_chunker_router_is_accepted_as_a_chunker() -> None:
    inner = ChunkerRouter().default(Words())
    outer = ChunkerRouter().route(MetadataFilter(lang="en"), inner).default(Paragraphs())
    assert outer.select(MD) is inner


def test_a_router_splits_text_with_the_chunker_it_routes_to() -> None:
    # the child's own split_text (a nested router's too): the strings chunk() would give
    class Marked(Words):
        def split_text(self, text: str) -> list[str]:
            return ["marked", *super().split_text(text)]

    text = "one two\nthree"
    nested = ChunkerRouter().default(ChunkerRouter().default(Marked()))
    assert nested.split_text(text) == ["marked", "one", "two", "three"]
    by_format = ChunkerRouter().route(ContentFormatFilter(include_formats="text"), Paragraphs())
    assert by_format.split_text(text) == [c.content for c in by_format.chunk(text)]
    unrouted = ChunkerRouter().route(ContentFormatFilter(include_formats="markdown"), Words())
    with pytest.raises(UnroutedItemError, match="matched no route and no default"):
        unrouted.split_text(text)


def test_chunker_config_hash() -> None:
    assert Fixed(5).config_hash == Fixed(5).config_hash
    assert Fixed(5).config_hash != Fixed(6).config_hash
    assert Words().config_hash != Paragraphs().config_hash


@pytest.mark.anyio
async def test_validate_output_override_is_applied() -> None:
    class AtMostTwo(Words):
        async def validate_output(
            self, item: Document, produced: list[Document], context: Any
        ) -> None:
            if len(produced) > 2:
                raise ValueError(f"{item.id} split into {len(produced)} chunks")

    short = Document(id="short", content="a b")
    long = Document(id="long", content="a b c d")
    result = await Pipeline(AtMostTwo()).run([short, long])
    assert [c.id for c in result] == ["short#0", "short#1"]
    assert [f.item_id for f in result.failed] == ["long"]


@pytest.mark.parametrize(
    ("metadata", "content_format", "override"),
    [({}, ContentFormat.TEXT, None), ({"tenant": "acme", "n": 1}, "my-fmt", "markdown")],
)
def test_chunks_from_spans_equal_chunks_from_pieces(
    metadata: dict[str, Any], content_format: str, override: str | None
) -> None:
    parent = Document(
        id="p", content="alpha\nbeta gamma\n\ndelta", metadata=metadata,
        content_format=content_format,
    )  # fmt: skip
    chunker = Paragraphs(content_format=override)
    spans = [(0, 6, None), (6, 17, {"n": 2, "x": [1]}), (17, 17, {}), (17, 23, None)]
    from_pieces = chunker.build_chunks(parent, [ChunkSpan(a, b, m) for a, b, m in spans])
    from_spans = chunker.build_chunks_from_spans(parent, spans)
    assert from_spans == from_pieces
    for fast, slow in zip(from_spans, from_pieces, strict=True):
        assert type(fast) is Document
        assert fast.model_dump() == slow.model_dump()
        assert fast.model_fields_set == slow.model_fields_set
        assert repr(fast) == repr(slow)
        assert fast.metadata is not parent.metadata
    assert from_spans[1].metadata == {**metadata, "n": 2, "x": [1]}
    assert Document.model_validate(from_spans[1].model_dump()) == from_spans[1]
    assert chunker.build_chunks_from_spans(parent, []) == []


@pytest.mark.parametrize("span", [(-1, 3, None), (4, 2, None), (0, 99, None)])
def test_chunks_from_spans_reject_spans_outside_the_parent(span: tuple[int, int, None]) -> None:
    parent = Document(id="p", content="0123456789")
    with pytest.raises(RagloomError, match=r"produced span .* outside document 'p'"):
        Paragraphs().build_chunks_from_spans(parent, [(0, 1, None), span])


def test_span_pieces_build_the_same_chunks_as_the_piece_by_piece_path() -> None:
    """Pieces that are all spans take the one-pass build; with any other piece among them the
    chunks are built piece by piece: the chunks they share are the same."""
    parent = Document(id="p", content="alpha\nbeta gamma\n\ndelta", metadata={"t": "acme"})
    chunker = Paragraphs(content_format="markdown")
    spans = [ChunkSpan(0, 6), ChunkSpan(6, 17, {"n": 2}), ChunkSpan(17, 17, {}), ChunkSpan(17, 23)]
    only_spans = chunker.build_chunks(parent, iter(spans))
    mixed = chunker.build_chunks(parent, [*spans, ChunkText("rendered", {"from": "table"})])
    assert only_spans == mixed[:4]
    for fast, slow in zip(only_spans, mixed, strict=False):
        assert fast.model_dump() == slow.model_dump()
        assert fast.model_fields_set == slow.model_fields_set
    assert chunker.build_chunks(parent, iter([])) == []
    with pytest.raises(RagloomError, match=r"produced span \[20, 99\) outside document 'p'"):
        chunker.build_chunks(parent, (s for s in [ChunkSpan(0, 3), ChunkSpan(20, 99)]))


def test_chunk_span_is_a_frozen_value() -> None:
    import copy
    import dataclasses
    import pickle

    span = ChunkSpan(1, 5, {"k": 1})
    assert (span.start, span.end, span.metadata) == (1, 5, {"k": 1})
    assert ChunkSpan(end=2, start=0) == ChunkSpan(0, 2, None)
    assert ChunkSpan(0, 2) != ChunkSpan(0, 3)
    assert hash(ChunkSpan(0, 2)) == hash(ChunkSpan(0, 2))
    assert repr(ChunkSpan(0, 2)) == "ChunkSpan(start=0, end=2, metadata=None)"
    with pytest.raises(dataclasses.FrozenInstanceError):
        span.start = 3  # type: ignore[misc]
    assert not hasattr(span, "__dict__")
    assert pickle.loads(pickle.dumps(span)) == span
    assert copy.copy(span) == span
    assert dataclasses.replace(span, end=9) == ChunkSpan(1, 9, {"k": 1})
    assert [f.name for f in dataclasses.fields(ChunkSpan)] == ["start", "end", "metadata"]
    with pytest.raises(TypeError):
        ChunkSpan(0)  # type: ignore[call-arg]
