"""RagloomTextSplitter inside LangChain, and the LangChain document conversions."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from conftest import framework
from hypothesis import given, settings
from interop_checks import check_spans, real_texts, sample_files
from interop_strategies import ragloom_documents

framework("langchain_text_splitters")

from langchain_core.documents import Document as LCDocument  # noqa: E402
from langchain_core.embeddings import DeterministicFakeEmbedding  # noqa: E402
from langchain_core.runnables import RunnableLambda  # noqa: E402
from langchain_core.vectorstores import InMemoryVectorStore  # noqa: E402
from langchain_text_splitters import TextSplitter  # noqa: E402
from ragloom import Chunker, ChunkSpan, ConfigurationError, Document  # noqa: E402
from ragloom_interop.langchain import (  # noqa: E402
    RagloomTextSplitter,
    from_langchain,
    to_langchain,
)
from ragloom_text import MarkdownChunker, RecursiveCharacterTextSplitter  # noqa: E402


def test_it_is_a_real_langchain_text_splitter() -> None:
    splitter = RagloomTextSplitter("recursive", chunk_size=512, chunk_overlap=64)
    assert isinstance(splitter, TextSplitter)
    assert isinstance(splitter.chunker, RecursiveCharacterTextSplitter)
    assert (splitter.chunker.chunk_size, splitter.chunker.chunk_overlap) == (512, 64)
    assert (splitter._chunk_size, splitter._chunk_overlap) == (512, 64)


@pytest.mark.parametrize("overlap", [0, 50])
@pytest.mark.parametrize(
    "name", ["recursive", "ragloom-text:recursive", "markdown", "sentence", "code", "auto"]
)
def test_split_text_gives_the_chunkers_chunks(name: str, overlap: int) -> None:
    splitter = RagloomTextSplitter(name, chunk_size=300, chunk_overlap=overlap)
    chunker = splitter.chunker  # its own synchronous API builds chunk documents first
    for _, _, text in real_texts():
        chunks = splitter.split_text(text)
        assert chunks == chunker.split_text(text)
        starts = [c.start for c in chunker.chunk(text)]
        check_spans(text, list(zip(chunks, starts, strict=True)), tiles=overlap == 0)


def test_create_documents_puts_exact_start_indexes() -> None:
    splitter = RagloomTextSplitter(chunk_size=256, chunk_overlap=64, add_start_index=True)
    texts = [text for _, _, text in real_texts()]
    metadatas = [{"source": name, "tags": ["a"]} for name, _, _ in real_texts()]
    docs = splitter.create_documents(texts, metadatas)
    by_source: dict[str, list[LCDocument]] = {}
    for doc in docs:
        by_source.setdefault(doc.metadata["source"], []).append(doc)
    for (name, _, text), metadata in zip(real_texts(), metadatas, strict=True):
        chunks = by_source.get(name, [])
        check_spans(
            text, [(d.page_content, d.metadata["start_index"]) for d in chunks], tiles=False
        )
        for doc in chunks:
            assert {k: v for k, v in doc.metadata.items() if k != "start_index"} == metadata
    # each chunk has its own deep copy of the metadata, as LangChain's splitters give
    docs[0].metadata["tags"].append("b")
    assert metadatas[0]["tags"] == ["a"] and docs[1].metadata["tags"] == ["a"]


def test_start_index_is_exact_where_searching_for_the_text_is_not() -> None:
    # Repeated text: LangChain's own create_documents finds chunks by searching the text,
    # which cannot tell the copies apart; the chunker knows where it cut.
    # (Searching from LangChain's estimate, every chunk of this text is "found" at 0.)
    text = "ab " * 40 + "ab\n " * 10
    splitter = RagloomTextSplitter(chunk_size=8, chunk_overlap=7, add_start_index=True)
    docs = splitter.create_documents([text])
    ours = [d.metadata["start_index"] for d in docs]
    assert ours == [c.start for c in splitter.chunker.chunk(text)]
    check_spans(text, [(d.page_content, d.metadata["start_index"]) for d in docs], tiles=False)


def test_without_add_start_index_no_offsets_are_added() -> None:
    docs = RagloomTextSplitter(chunk_size=50).create_documents(["one two three " * 20], [{"k": 1}])
    assert docs and all(d.metadata == {"k": 1} for d in docs)


def test_splitter_runs_inside_a_langchain_indexing_chain_and_retrieval() -> None:
    files = sample_files()
    splitter = RagloomTextSplitter(
        "recursive", chunk_size=200, chunk_overlap=40, add_start_index=True
    )
    store = InMemoryVectorStore(DeterministicFakeEmbedding(size=32))

    def load(paths: list[str]) -> list[LCDocument]:
        return [LCDocument(page_content=files[p], metadata={"source": p}) for p in paths]

    chain = (
        RunnableLambda(load)
        | RunnableLambda(splitter.split_documents)
        | RunnableLambda(store.add_documents)
    )
    ids = chain.invoke(sorted(files))
    assert len(ids) == len(store.store)
    stored = [store.get_by_ids([i])[0] for i in ids]
    for path, text in files.items():
        mine = [d for d in stored if d.metadata["source"] == path]
        check_spans(text, [(d.page_content, d.metadata["start_index"]) for d in mine], tiles=False)
    found = store.as_retriever(search_kwargs={"k": 5}).invoke("How does the cache work?")
    assert len(found) == 5
    for doc in found:
        start = doc.metadata["start_index"]
        assert (
            files[doc.metadata["source"]][start : start + len(doc.page_content)] == doc.page_content
        )


def test_transform_documents_and_its_async_twin() -> None:
    splitter = RagloomTextSplitter(chunk_size=120, add_start_index=True)
    docs = [
        LCDocument(page_content=t, metadata={"n": i}) for i, t in enumerate(sample_files().values())
    ]
    sync = splitter.transform_documents(docs)
    assert sync == splitter.split_documents(docs)
    assert asyncio.run(splitter.atransform_documents(docs)) == sync


def test_markdown_chunker_by_name_adds_its_heading_metadata() -> None:
    text = sample_files()["examples/sample-docs/guides/caching.md"]
    docs = RagloomTextSplitter("markdown", chunk_size=300).create_documents([text], [{"s": 1}])
    assert "".join(d.page_content for d in docs) == text
    assert all(d.metadata["s"] == 1 and isinstance(d.metadata["headings"], list) for d in docs)
    assert any(d.metadata["headings"] for d in docs)


def test_auto_routes_documents_by_their_content_format_metadata() -> None:
    text = sample_files()["examples/sample-docs/guides/caching.md"]
    splitter = RagloomTextSplitter("auto", chunk_size=300)
    as_markdown = splitter.split_documents(
        [LCDocument(page_content=text, metadata={"content_format": "markdown"})]
    )
    as_text = splitter.split_documents([LCDocument(page_content=text)])
    assert all("headings" in d.metadata for d in as_markdown)
    assert not any("headings" in d.metadata for d in as_text)


def test_a_chunker_object_is_used_as_given() -> None:
    chunker = MarkdownChunker(chunk_size=200, chunk_overlap=20)
    splitter = RagloomTextSplitter(chunker)
    assert splitter.chunker is chunker
    text = sample_files()["examples/sample-docs/guides/getting-started.md"]
    assert splitter.split_text(text) == chunker.split_text(text)


class _Paragraphs(Chunker):
    """A chunker that yields text pieces, not spans: ragloom locates them."""

    def split(self, document: Document) -> Iterator[str]:
        yield from (p for p in document.content.split("\n\n") if p)


class _Halves(Chunker):
    """An async chunker (its work awaits)."""

    async def asplit(self, document: Document):  # type: ignore[override]
        half = len(document.content) // 2
        yield ChunkSpan(0, half)
        yield ChunkSpan(half, len(document.content))


def test_chunkers_yielding_text_or_awaiting_get_exact_offsets_too() -> None:
    text = "alpha\n\nbeta\n\nalpha\n\nbeta"
    docs = RagloomTextSplitter(_Paragraphs(), add_start_index=True).create_documents([text])
    assert [(d.page_content, d.metadata["start_index"]) for d in docs] == [
        ("alpha", 0), ("beta", 7), ("alpha", 13), ("beta", 20)
    ]  # fmt: skip
    halves = RagloomTextSplitter(_Halves(), add_start_index=True).create_documents([text])
    assert [(d.page_content, d.metadata["start_index"]) for d in halves] == [
        (text[:12], 0), (text[12:], 12)
    ]  # fmt: skip


# -- conversions --------------------------------------------------------------------------------


@settings(deadline=None, max_examples=60)
@given(ragloom_documents())
def test_ragloom_to_langchain_and_back_is_exact(document: Document) -> None:
    converted = to_langchain(document)
    assert converted.id == document.id and converted.page_content == document.content
    if document.start is not None:
        assert converted.metadata["start_index"] == document.start
    assert from_langchain(converted) == document
    assert from_langchain(to_langchain([document, document])) == [document, document]


def test_chunks_carry_their_lineage_in_flat_metadata() -> None:
    parent = Document.from_text("First part. Second part.", metadata={"source": "a.txt"})
    chunks = RecursiveCharacterTextSplitter(chunk_size=12).chunk(parent)
    converted = to_langchain(chunks)
    assert [c.metadata for c in converted] == [
        {"source": "a.txt", "parent_id": parent.id, "chunk_index": i, "start_index": c.start}
        for i, c in enumerate(chunks)
    ]
    assert from_langchain(converted) == chunks


def test_langchain_documents_become_ragloom_documents() -> None:
    plain = from_langchain(LCDocument(page_content="some text"))
    assert plain == Document.from_text("some text")
    with_meta = from_langchain(LCDocument(page_content="t", metadata={"source": "x"}))
    assert with_meta.metadata == {"source": "x"} and with_meta.id.startswith("doc-")
    assert with_meta.id != plain.id  # metadata is part of a derived id
    # a LangChain chunk's start_index has no named parent: it stays metadata
    chunk = from_langchain(LCDocument(page_content="b", metadata={"start_index": 4}, id="c1"))
    assert (chunk.id, chunk.parent_id, chunk.start, chunk.metadata) == (
        "c1", None, None, {"start_index": 4}
    )  # fmt: skip
    md = from_langchain(LCDocument(page_content="# T", metadata={"content_format": "markdown"}))
    assert md.content_format == "markdown" and md.metadata == {}


# -- wrong input -------------------------------------------------------------------------------

LC_CLASS = "langchain_core.documents.base.Document"


def test_a_ragloom_chunker_names_the_langchain_class_and_the_adapter() -> None:
    chunker = RecursiveCharacterTextSplitter(chunk_size=50)
    with pytest.raises(TypeError) as info:
        chunker.chunk([LCDocument(page_content="text")])
    assert LC_CLASS in str(info.value)
    assert "ragloom_interop.langchain.from_langchain()" in str(info.value)


def test_a_single_langchain_document_given_to_a_ragloom_chunker() -> None:
    with pytest.raises(TypeError, match=LC_CLASS):
        RecursiveCharacterTextSplitter(chunk_size=50).chunk(LCDocument(page_content="text"))


def test_wrong_inputs_to_the_splitter_and_conversions() -> None:
    splitter = RagloomTextSplitter(chunk_size=50)
    with pytest.raises(
        TypeError,
        match=r"got ragloom\.models\.Document; convert it with "
        r"ragloom_interop\.langchain\.to_langchain\(\)",
    ):
        splitter.split_documents([Document.from_text("x")])
    with pytest.raises(TypeError, match="expected a str, got int"):
        splitter.split_text(42)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"texts\[1\]"):
        splitter.create_documents(["a", b"b"])  # type: ignore[list-item]
    with pytest.raises(TypeError, match=f"got {LC_CLASS}; it is already a LangChain document"):
        to_langchain(LCDocument(page_content="x"))
    with pytest.raises(TypeError, match=r"got ragloom\.models\.Document"):
        from_langchain([Document.from_text("x")])


def test_wrong_configuration_is_refused_with_the_reason() -> None:
    with pytest.raises(ConfigurationError, match="has no parameter 'chunk_sise'.*chunk_size"):
        RagloomTextSplitter("recursive", chunk_sise=10)
    with pytest.raises(ConfigurationError, match="unknown chunker 'recursiv'"):
        RagloomTextSplitter("recursiv")
    with pytest.raises(ValueError, match="strip_whitespace.*exact slices"):
        RagloomTextSplitter(chunk_size=10, strip_whitespace=True)
    with pytest.raises(TypeError, match="already built"):
        RagloomTextSplitter(RecursiveCharacterTextSplitter(), chunk_size=10)
    with pytest.raises(TypeError, match="got int"):
        RagloomTextSplitter(42)  # type: ignore[arg-type]
