"""RagloomNodeParser inside LlamaIndex's IngestionPipeline, and the LlamaIndex conversions."""

from __future__ import annotations

import asyncio
import json
import pickle

import pytest
from conftest import framework
from hypothesis import given, settings
from interop_checks import SAMPLE_DOCS, check_spans, real_texts
from interop_strategies import ragloom_documents

framework("llama_index.core")

from llama_index.core import Document as LIDocument  # noqa: E402
from llama_index.core import SimpleDirectoryReader  # noqa: E402
from llama_index.core.embeddings import MockEmbedding  # noqa: E402
from llama_index.core.ingestion import (  # noqa: E402
    DocstoreStrategy,
    IngestionCache,
    IngestionPipeline,
)
from llama_index.core.ingestion.pipeline import get_transformation_hash  # noqa: E402
from llama_index.core.node_parser import NodeParser  # noqa: E402
from llama_index.core.node_parser.node_utils import default_id_func  # noqa: E402
from llama_index.core.schema import NodeRelationship, TextNode  # noqa: E402
from llama_index.core.storage.docstore import SimpleDocumentStore  # noqa: E402
from ragloom import ConfigurationError, Document  # noqa: E402
from ragloom_interop.llama_index import (  # noqa: E402
    RagloomNodeParser,
    from_llama_index,
    to_llama_index,
)
from ragloom_text import RecursiveCharacterTextSplitter  # noqa: E402


def load_samples() -> list[LIDocument]:
    return SimpleDirectoryReader(str(SAMPLE_DOCS), recursive=True).load_data()


def check_nodes(documents: list[LIDocument], nodes: list[TextNode], *, tiles: bool) -> None:
    """Offsets exact in the source document, chunks covering it, ids, order and links."""
    by_source: dict[str, list[TextNode]] = {}
    for node in nodes:
        by_source.setdefault(node.ref_doc_id, []).append(node)
    assert set(by_source) <= {d.id_ for d in documents}
    for document in documents:
        mine = by_source.get(document.id_, [])
        check_spans(document.text, [(n.text, n.start_char_idx) for n in mine], tiles=tiles)
        for i, node in enumerate(mine):
            assert node.id_ == f"{document.id_}#{i}"
            assert node.metadata["chunk_index"] == i
            assert node.end_char_idx == node.start_char_idx + len(node.text)
            prev, nxt = node.prev_node, node.next_node
            assert (prev.node_id if prev else None) == (mine[i - 1].id_ if i else None)
            assert (nxt.node_id if nxt else None) == (
                mine[i + 1].id_ if i + 1 < len(mine) else None
            )


def test_it_is_a_real_node_parser() -> None:
    parser = RagloomNodeParser("recursive", chunk_size=256, chunk_overlap=32)
    assert isinstance(parser, NodeParser)
    assert isinstance(parser.ragloom_chunker, RecursiveCharacterTextSplitter)


def test_parser_inside_an_ingestion_pipeline_on_real_files() -> None:
    documents = load_samples()
    pipeline = IngestionPipeline(
        transformations=[RagloomNodeParser("auto", chunk_size=300), MockEmbedding(embed_dim=8)],
        docstore=SimpleDocumentStore(),
        docstore_strategy=DocstoreStrategy.DUPLICATES_ONLY,
    )
    nodes = pipeline.run(documents=documents)
    check_nodes(documents, nodes, tiles=True)
    assert all(n.embedding is not None and len(n.embedding) == 8 for n in nodes)
    # the file's MIME type routed Markdown to the Markdown chunker (it adds headings)
    markdown = [n for n in nodes if n.metadata["file_type"] == "text/markdown"]
    assert markdown and all("headings" in n.metadata for n in markdown)
    assert not any(
        "headings" in n.metadata for n in nodes if n.metadata["file_type"] == "text/plain"
    )
    assert set(pipeline.docstore.get_all_document_hashes().values()) == {d.id_ for d in documents}


def test_parser_on_real_text_with_overlap() -> None:
    documents = [
        LIDocument(text=text, id_=name, metadata={"format": fmt})
        for name, fmt, text in real_texts()
    ]
    parser = RagloomNodeParser("recursive", chunk_size=400, chunk_overlap=80)
    nodes = parser.get_nodes_from_documents(documents)
    check_nodes(documents, nodes, tiles=False)
    assert all(n.metadata["format"] for n in nodes)  # the document's metadata is merged in


def test_offsets_are_exact_where_llama_index_would_search_wrongly() -> None:
    # LlamaIndex's node parsers find each chunk by searching for its text from just after the
    # previous chunk's start; in repeated text that finds an earlier copy.
    document = LIDocument(text="ab " * 40 + "ab\n " * 10, id_="rep")
    nodes = RagloomNodeParser(chunk_size=8, chunk_overlap=2).get_nodes_from_documents([document])
    check_nodes([document], nodes, tiles=False)


def test_async_pipeline_gives_the_same_nodes() -> None:
    documents = load_samples()
    parser = RagloomNodeParser("recursive", chunk_size=300, chunk_overlap=50)
    sync = IngestionPipeline(transformations=[parser]).run(documents=documents)
    nodes = asyncio.run(IngestionPipeline(transformations=[parser]).arun(documents=documents))
    assert [(n.id_, n.text, n.start_char_idx) for n in nodes] == [
        (n.id_, n.text, n.start_char_idx) for n in sync
    ]


def test_ingestion_cache_replays_and_keys_on_the_chunker_configuration(monkeypatch) -> None:
    documents = load_samples()
    cache = IngestionCache()
    parser = RagloomNodeParser("recursive", chunk_size=300)
    first = IngestionPipeline(transformations=[parser], cache=cache).run(documents=documents)
    calls = []
    monkeypatch.setattr(
        RagloomNodeParser, "_parse_nodes", lambda self, *a, **k: calls.append(1) or []
    )
    again = IngestionPipeline(transformations=[parser], cache=cache).run(documents=documents)
    assert calls == [] and [n.id_ for n in again] == [n.id_ for n in first]
    # a different configuration is a different cache key, also for chunker objects (their
    # repr, which LlamaIndex strips from its keys, would not tell them apart)
    keys = {
        get_transformation_hash(documents, p)
        for p in (
            parser,
            RagloomNodeParser("recursive", chunk_size=301),
            RagloomNodeParser(RecursiveCharacterTextSplitter(chunk_size=300)),
            RagloomNodeParser(RecursiveCharacterTextSplitter(chunk_size=200)),
            RagloomNodeParser(RecursiveCharacterTextSplitter(chunk_size=300, length_function=len)),
        )
    }
    assert len(keys) == 5
    assert get_transformation_hash(documents, RagloomNodeParser(chunk_size=300)) in keys


def test_parser_serialises_and_pickles() -> None:
    documents = load_samples()
    for parser in (
        RagloomNodeParser(
            "recursive", chunk_size=200, chunk_overlap=20, separators=["\n", " ", ""]
        ),
        RagloomNodeParser(RecursiveCharacterTextSplitter(chunk_size=250)),
        RagloomNodeParser("auto", chunk_size=300, id_func=default_id_func),
    ):
        data = json.loads(json.dumps(parser.to_dict()))
        assert data["class_name"] == "RagloomNodeParser"
        rebuilt = RagloomNodeParser.from_dict(data)
        # The same spec; the hash may differ where a rebuilt chunker spells out defaults the
        # original left implicit (a cache miss, never a wrong hit), then stays put.
        assert rebuilt.to_dict()["chunker"] == parser.to_dict()["chunker"]
        assert RagloomNodeParser.from_dict(rebuilt.to_dict()).to_dict() == rebuilt.to_dict()
        unpickled = pickle.loads(pickle.dumps(parser))
        assert unpickled.to_dict() == parser.to_dict()
        if parser.id_func is default_id_func:  # random ids: compare the cuts
            assert [n.text for n in rebuilt(documents)] == [n.text for n in parser(documents)]
        else:
            expected = [(n.id_, n.text, n.start_char_idx) for n in parser(documents)]
            for other in (rebuilt, unpickled):
                assert [(n.id_, n.text, n.start_char_idx) for n in other(documents)] == expected


@pytest.mark.slow
def test_pipeline_with_worker_processes_gives_the_same_nodes() -> None:
    # num_workers > 1 pickles the transformations into fresh (spawned) worker processes
    documents = load_samples()
    parser = RagloomNodeParser("recursive", chunk_size=200, chunk_overlap=20)
    one = IngestionPipeline(transformations=[parser]).run(documents=documents)
    two = IngestionPipeline(transformations=[parser]).run(documents=documents, num_workers=2)
    assert [(n.id_, n.text, n.start_char_idx) for n in two] == [
        (n.id_, n.text, n.start_char_idx) for n in one
    ]


def test_parsing_chunks_again_records_the_parent() -> None:
    document = LIDocument(text=load_samples()[2].text, id_="guide")
    parser = RagloomNodeParser(chunk_size=300)
    chunks = parser.get_nodes_from_documents([document])
    pieces = RagloomNodeParser(chunk_size=80).get_nodes_from_documents(chunks)
    by_id = {c.id_: c for c in chunks}
    for piece in pieces:
        parent = by_id[piece.parent_node.node_id]
        assert piece.ref_doc_id == "guide"  # LlamaIndex points SOURCE at the original
        assert parent.text[piece.start_char_idx : piece.end_char_idx] == piece.text
        back = from_llama_index(piece)
        assert (back.parent_id, back.start, back.end) == (
            parent.id_, piece.start_char_idx, piece.end_char_idx
        )  # fmt: skip


# -- conversions --------------------------------------------------------------------------------


@settings(deadline=None, max_examples=60)
@given(ragloom_documents())
def test_ragloom_to_llama_index_and_back_is_exact(document: Document) -> None:
    node = to_llama_index(document)
    assert node.id_ == document.id
    assert isinstance(node, TextNode if document.is_chunk else LIDocument)
    assert from_llama_index(node) == document


def test_a_batch_of_chunks_gets_llama_index_lineage() -> None:
    parent = Document.from_text("One. Two. Three. Four. Five. Six.", content_format="markdown")
    chunks = RecursiveCharacterTextSplitter(chunk_size=10).chunk(parent)
    nested = RecursiveCharacterTextSplitter(chunk_size=5).chunk(chunks[1])
    batch = [parent, *chunks, *nested]
    nodes = to_llama_index(batch)
    assert isinstance(nodes[0], LIDocument) and nodes[0].metadata == {"content_format": "markdown"}
    assert "content_format" in nodes[0].excluded_embed_metadata_keys
    for node, chunk in zip(nodes[1 : 1 + len(chunks)], chunks, strict=True):
        assert node.ref_doc_id == parent.id and node.parent_node is None
        assert parent.content[node.start_char_idx : node.end_char_idx] == node.text
        assert "chunk_index" in node.excluded_llm_metadata_keys
    links = [
        (n.prev_node and n.prev_node.node_id, n.next_node and n.next_node.node_id)
        for n in nodes[1 : 1 + len(chunks)]
    ]
    ids = [c.id for c in chunks]
    assert links == [(([None, *ids][i]), ([*ids[1:], None][i])) for i in range(len(ids))]
    for node in nodes[1 + len(chunks) :]:
        assert node.parent_node.node_id == chunks[1].id and node.ref_doc_id == parent.id
    assert from_llama_index(nodes) == batch


def test_llama_index_nodes_become_ragloom_documents() -> None:
    document = from_llama_index(
        LIDocument(text="# Hi", id_="d", metadata={"file_type": "text/markdown"})
    )
    assert (document.id, document.content_format, document.metadata) == (
        "d", "markdown", {"file_type": "text/markdown"}
    )  # fmt: skip
    # the format its file type tells is not written again on the way back
    assert to_llama_index(document).metadata == {"file_type": "text/markdown"}
    # a span that is not the text's length is not claimed: the numbers stay in metadata
    node = TextNode(text="abc", id_="n", start_char_idx=5, end_char_idx=9)
    node.relationships[NodeRelationship.SOURCE] = LIDocument(
        text="x", id_="d"
    ).as_related_node_info()
    loose = from_llama_index(node)
    assert (loose.parent_id, loose.start, loose.metadata) == (
        "d", None, {"start_char_idx": 5, "end_char_idx": 9}
    )  # fmt: skip


# -- wrong input -------------------------------------------------------------------------------


def test_a_ragloom_chunker_names_the_llama_index_class_and_the_adapter() -> None:
    with pytest.raises(TypeError) as info:
        RecursiveCharacterTextSplitter(chunk_size=50).chunk([LIDocument(text="x")])
    assert "llama_index.core.schema.Document" in str(info.value)
    assert "ragloom_interop.llama_index.from_llama_index()" in str(info.value)


def test_wrong_inputs_to_the_parser_and_conversions() -> None:
    parser = RagloomNodeParser(chunk_size=50)
    with pytest.raises(
        TypeError,
        match=r"got ragloom\.models\.Document; convert it with "
        r"ragloom_interop\.llama_index\.to_llama_index\(\)",
    ):
        parser.get_nodes_from_documents([Document.from_text("x")])
    with pytest.raises(TypeError, match="it is already a LlamaIndex node"):
        to_llama_index(LIDocument(text="x"))
    with pytest.raises(TypeError, match="expected a llama_index.core.schema.BaseNode .*got object"):
        from_llama_index([object()])
    with pytest.raises(ConfigurationError, match="has no parameter 'size'"):
        RagloomNodeParser("recursive", size=3)
    with pytest.raises(TypeError, match="already built"):
        RagloomNodeParser(RecursiveCharacterTextSplitter(), chunk_overlap=3)
