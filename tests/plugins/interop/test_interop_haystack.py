"""RagloomDocumentSplitter inside Haystack pipelines, and the Haystack conversions."""

from __future__ import annotations

import dataclasses

import pytest
from conftest import framework
from hypothesis import given, settings
from interop_checks import SAMPLE_DOCS, check_spans, real_texts, sample_files
from interop_strategies import ragloom_documents

framework("haystack")

from haystack import Document as HaystackDocument  # noqa: E402
from haystack import Pipeline  # noqa: E402
from haystack.components.converters import TextFileToDocument  # noqa: E402
from haystack.components.retrievers import SentenceWindowRetriever  # noqa: E402
from haystack.components.retrievers.in_memory import InMemoryBM25Retriever  # noqa: E402
from haystack.components.writers import DocumentWriter  # noqa: E402
from haystack.core.errors import SerializationError  # noqa: E402
from haystack.dataclasses import ByteStream, SparseEmbedding  # noqa: E402
from haystack.document_stores.in_memory import InMemoryDocumentStore  # noqa: E402
from ragloom import Chunker, ChunkSpan, Document  # noqa: E402
from ragloom_interop.haystack import (  # noqa: E402
    RagloomDocumentSplitter,
    from_haystack,
    to_haystack,
)
from ragloom_text import RecursiveCharacterTextSplitter  # noqa: E402

ALLOWED = ["ragloom_interop.haystack"]


def indexing(splitter: RagloomDocumentSplitter, store: InMemoryDocumentStore) -> Pipeline:
    pipeline = Pipeline()
    pipeline.add_component("convert", TextFileToDocument())
    pipeline.add_component("split", splitter)
    pipeline.add_component("write", DocumentWriter(store))
    pipeline.connect("convert.documents", "split.documents")
    pipeline.connect("split.documents", "write.documents")
    return pipeline


def check_chunks(
    sources: dict[str, HaystackDocument], chunks: list[HaystackDocument], *, tiles: bool
) -> None:
    by_source: dict[str, list[HaystackDocument]] = {}
    for chunk in chunks:
        by_source.setdefault(chunk.meta["source_id"], []).append(chunk)
    assert set(by_source) <= set(sources)
    for source_id, source in sources.items():
        mine = sorted(by_source.get(source_id, []), key=lambda c: c.meta["split_id"])
        assert [c.meta["split_id"] for c in mine] == list(range(len(mine)))
        check_spans(
            source.content, [(c.content, c.meta["split_idx_start"]) for c in mine], tiles=tiles
        )
        for chunk in mine:
            start = chunk.meta["split_idx_start"]
            assert chunk.meta["page_number"] == 1 + source.content.count("\f", 0, start)
            assert {k: v for k, v in chunk.meta.items() if k in source.meta} == source.meta


def test_splitter_inside_haystack_indexing_and_query_pipelines() -> None:
    paths = sorted(p for p in SAMPLE_DOCS.rglob("*") if p.is_file())
    store = InMemoryDocumentStore()
    splitter = RagloomDocumentSplitter("recursive", chunk_size=200, chunk_overlap=40)
    result = indexing(splitter, store).run(
        {"convert": {"sources": paths}}, include_outputs_from={"convert"}
    )
    sources = {d.id: d for d in result["convert"]["documents"]}
    assert all(sources[i].content == p.read_text(encoding="utf-8") for i, p in zip(sources, paths))
    stored = store.filter_documents()
    assert result["write"]["documents_written"] == len(stored) > len(paths)
    check_chunks(sources, stored, tiles=False)

    query = Pipeline()
    query.add_component("bm25", InMemoryBM25Retriever(store, top_k=3))
    query.add_component("window", SentenceWindowRetriever(store, window_size=1))
    query.connect("bm25.documents", "window.retrieved_documents")
    result = query.run(
        {"bm25": {"query": "How does the cache store replay outputs?"}},
        include_outputs_from={"bm25"},
    )
    retrieved, windows = result["bm25"]["documents"], result["window"]["context_windows"]
    assert len(windows) == len(retrieved) == 3
    for hit, window in zip(retrieved, windows, strict=True):
        # Haystack stitches a hit's neighbours together by their split_idx_start: with exact
        # offsets the window is exactly the source text they span.
        source_id, split = hit.meta["source_id"], hit.meta["split_id"]
        around = [
            d for d in stored
            if d.meta["source_id"] == source_id and abs(d.meta["split_id"] - split) <= 1
        ]  # fmt: skip
        start = min(d.meta["split_idx_start"] for d in around)
        end = max(d.meta["split_idx_start"] + len(d.content) for d in around)
        assert window == sources[source_id].content[start:end]
        assert hit.content in window


def test_the_pipeline_serialises_to_yaml_and_loads_back() -> None:
    for splitter in (
        RagloomDocumentSplitter("auto", chunk_size=300),
        RagloomDocumentSplitter(RecursiveCharacterTextSplitter(chunk_size=250, chunk_overlap=25)),
        RagloomDocumentSplitter({"chunker": "sentence", "params": {"chunk_size": 200}}),
    ):
        original = indexing(splitter, InMemoryDocumentStore())
        text = original.dumps()
        assert "ragloom_interop.haystack.RagloomDocumentSplitter" in text
        loaded = Pipeline.loads(text, allowed_modules=ALLOWED)
        assert loaded.dumps() == text
        assert loaded.get_component("split").chunker.config() == splitter.chunker.config()
        documents = [
            HaystackDocument(content=t, meta={"file_path": n}) for n, _, t in real_texts()[:7]
        ]
        ours = splitter.run(documents)["documents"]
        assert loaded.get_component("split").run(documents)["documents"] == ours


def test_auto_routes_by_the_file_suffix_and_content_format() -> None:
    files = sample_files()
    splitter = RagloomDocumentSplitter("auto", chunk_size=300)
    text = files["examples/sample-docs/guides/caching.md"]
    by_path = splitter.run([HaystackDocument(content=text, meta={"file_path": "x/caching.md"})])
    declared = splitter.run([HaystackDocument(content=text, meta={"content_format": "markdown"})])
    plain = splitter.run([HaystackDocument(content=text)])
    assert all("headings" in d.meta for d in by_path["documents"] + declared["documents"])
    assert not any("headings" in d.meta for d in plain["documents"])


def test_real_text_overlap_metadata_follows_haystack() -> None:
    sources = {
        f"s{i}": HaystackDocument(id=f"s{i}", content=t, meta={"n": i})
        for i, (_, _, t) in enumerate(real_texts())
    }
    chunks = RagloomDocumentSplitter(chunk_size=300, chunk_overlap=60).run(list(sources.values()))[
        "documents"
    ]
    check_chunks(sources, chunks, tiles=False)
    by_id = {c.id: c for c in chunks}
    shared = 0
    for chunk in chunks:
        for overlap in chunk.meta["_split_overlap"]:
            other = by_id[overlap["doc_id"]]
            a, b = overlap["range"]
            # the range is where the shared text lies in the other document
            if other.meta["split_id"] < chunk.meta["split_id"]:
                assert other.content[a:b] == chunk.content[: b - a]
            else:
                assert other.content[a:b] == chunk.content[len(chunk.content) - (b - a) :]
            shared += 1
    assert shared > 0


def test_page_numbers_count_form_feeds() -> None:
    text = "Page one has words.\fPage two has words.\f\fPage four."
    by_page = RagloomDocumentSplitter(chunk_size=25, separators=["\f", " ", ""])
    pages_split = by_page.run([HaystackDocument(content=text)])["documents"]
    assert [(c.content, c.meta["page_number"]) for c in pages_split] == [
        ("Page one has words.\f", 1), ("Page two has words.\f\f", 2), ("Page four.", 4)
    ]  # fmt: skip
    chunks = RagloomDocumentSplitter(chunk_size=12).run([HaystackDocument(content=text)])
    for chunk in chunks["documents"]:
        # the page of the chunk's first character that is not a page break
        start = chunk.meta["split_idx_start"]
        first = start + len(chunk.content) - len(chunk.content.lstrip("\f"))
        assert chunk.meta["page_number"] == 1 + text.count("\f", 0, first)
    assert chunks["documents"][-1].meta["page_number"] == 4


def test_empty_documents_give_no_chunks_and_text_is_required() -> None:
    splitter = RagloomDocumentSplitter(chunk_size=10)
    assert splitter.run([HaystackDocument(content="")]) == {"documents": []}
    with pytest.raises(ValueError, match="has no content"):
        splitter.run([HaystackDocument(blob=ByteStream(b"x"))])


class _Unregistered(Chunker):
    def split(self, document: Document):
        yield ChunkSpan(0, len(document.content))


def test_an_importable_unregistered_chunker_is_saved_as_an_import() -> None:
    splitter = RagloomDocumentSplitter(_Unregistered())
    data = splitter.to_dict()
    assert data["init_parameters"]["chunker"]["import"].endswith(":_Unregistered")
    rebuilt = RagloomDocumentSplitter.from_dict(data)
    assert isinstance(rebuilt.chunker, _Unregistered)
    chunks = rebuilt.run([HaystackDocument(content="abc")])["documents"]
    assert [d.content for d in chunks] == ["abc"]


def test_a_chunker_that_cannot_be_imported_runs_but_cannot_be_saved() -> None:
    class Local(Chunker):  # defined in a function: nothing can import it again
        def split(self, document: Document):
            yield ChunkSpan(0, len(document.content))

    splitter = RagloomDocumentSplitter(Local())
    chunks = splitter.run([HaystackDocument(content="abc")])["documents"]
    assert [d.content for d in chunks] == ["abc"]
    with pytest.raises(SerializationError, match="cannot serialise its Local"):
        splitter.to_dict()


# -- conversions --------------------------------------------------------------------------------


@settings(deadline=None, max_examples=60)
@given(ragloom_documents())
def test_ragloom_to_haystack_and_back_is_exact(document: Document) -> None:
    converted = to_haystack(document)
    assert converted.id == document.id and converted.content == document.content
    if document.start is not None:
        assert converted.meta["split_idx_start"] == document.start
    assert from_haystack(converted) == document


def test_haystack_documents_round_trip_through_ragloom() -> None:
    chunks = RagloomDocumentSplitter(chunk_size=20, chunk_overlap=5).run(
        [HaystackDocument(content="Alpha beta gamma. Delta epsilon zeta.", meta={"k": "v"})]
    )["documents"]
    scored = dataclasses.replace(
        chunks[1],
        score=0.5,
        sparse_embedding=SparseEmbedding(indices=[1, 4], values=[0.1, 0.2]),
        embedding=[0.25, 0.5],
    )
    for original in [*chunks, scored]:
        converted = from_haystack(original)
        assert converted.parent_id == original.meta["source_id"]
        assert (converted.index, converted.start) == (
            original.meta["split_id"],
            original.meta["split_idx_start"],
        )
        assert to_haystack(converted) == original
    assert from_haystack(scored).embedding == [0.25, 0.5]


# -- wrong input -------------------------------------------------------------------------------


def test_a_ragloom_chunker_names_the_haystack_class_and_the_adapter() -> None:
    with pytest.raises(TypeError) as info:
        RecursiveCharacterTextSplitter(chunk_size=50).chunk(HaystackDocument(content="x"))
    assert "haystack.dataclasses.document.Document" in str(info.value)
    assert "ragloom_interop.haystack.from_haystack()" in str(info.value)


def test_wrong_inputs_to_the_splitter_and_conversions() -> None:
    splitter = RagloomDocumentSplitter(chunk_size=50)
    with pytest.raises(
        TypeError,
        match=r"got ragloom\.models\.Document; convert it with "
        r"ragloom_interop\.haystack\.to_haystack\(\)",
    ):
        splitter.run([Document.from_text("x")])
    with pytest.raises(TypeError, match="expected a list of"):
        splitter.run(HaystackDocument(content="x"))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="it is already a Haystack document"):
        to_haystack(HaystackDocument(content="x"))
    with pytest.raises(ValueError, match="carries binary data"):
        from_haystack(HaystackDocument(content="x", blob=ByteStream(b"x")))
    with pytest.raises(ValueError, match="no text content"):
        from_haystack(HaystackDocument(blob=ByteStream(b"x")))
    with pytest.raises(TypeError, match="spec"):
        RagloomDocumentSplitter({"chunker": "recursive"}, chunk_size=3)
