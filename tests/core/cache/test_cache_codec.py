"""Entries round-trip exactly: chunks of the input as offsets, anything else as full JSON."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel
from ragloom import CacheCorruptError, Chunker, ChunkSpan, ChunkText, Document
from ragloom.cache import CacheEntry
from ragloom.cache.codec import decode_many


def _roundtrip(item: Any, outputs: list[Any], model: type[BaseModel] = Document) -> list[Any]:
    entry = CacheEntry.build("k", "step", "item", outputs, item)
    one = entry.load(model, item)
    # The engine decodes a window of entries at once: same outputs as one by one.
    [window] = decode_many([entry.payload], [item], [model], [entry.outputs], str)
    assert [o.model_dump() for o in window] == [o.model_dump() for o in one]
    assert [type(o) for o in window] == [type(o) for o in one]
    return one


class Pieces(Chunker):
    """Emits whatever pieces it is given (spans, texts, metadata) for one document."""

    def __init__(self, pieces: list[Any], content_format: str | None = None) -> None:
        super().__init__(content_format=content_format)
        self.pieces = pieces

    def split(self, document: Document) -> list[Any]:
        return self.pieces


PARENT = Document(
    id="p", content="Alpha beta.\n\nGamma delta é 漢字.\n\nEnd.", content_format="markdown",
    metadata={"source": "x.md", "tags": ["a", "b"], "nested": {"k": 1}},
)


def test_chunks_are_stored_as_offsets_and_read_back_equal() -> None:
    spans = [ChunkSpan(0, 11), ChunkSpan(13, 30), ChunkSpan(32, 36)]
    chunks = Pieces(spans).build_chunks(PARENT, spans)
    assert [c.content for c in chunks] == ["Alpha beta.", "Gamma delta é 漢字.", "End."]
    entry = CacheEntry.build("k", "s", "p", chunks, PARENT)
    assert json.loads(entry.payload) == {"derived": [[0, 11], [13, 30], [32, 36]]}
    assert "Alpha" not in entry.payload  # no second copy of the text
    back = entry.load(Document, PARENT)
    assert [c.model_dump() for c in back] == [c.model_dump() for c in chunks]
    assert back == chunks
    back[0].metadata["source"] = "changed"  # each replayed chunk owns its metadata
    assert back[1].metadata["source"] == "x.md" and PARENT.metadata["source"] == "x.md"


def test_overrides_and_full_outputs_in_one_entry() -> None:
    chunker = Pieces(
        [
            ("Alpha beta.", {"heading": "first"}),
            ChunkText("a rendered summary", {"kind": "summary"}),
            ChunkSpan(13, 30),
        ],
        content_format="text",
    )
    chunks = chunker.build_chunks(PARENT, chunker.pieces)
    renamed = chunks[2].model_copy(update={"id": "custom-id", "index": 7})
    outputs = [chunks[0], chunks[1], renamed]
    data = json.loads(CacheEntry.build("k", "s", "p", outputs, PARENT).payload)["derived"]
    # The piece's own metadata is stored as a change to the parent's: on replay the chunk takes
    # the parent's current metadata (the source path of the file now) plus that change.
    assert data[0][2] == {"content_format": "text", "meta+": {"heading": "first"}}
    assert isinstance(data[1], dict) and data[1]["content"] == "a rendered summary"
    assert data[2][2]["id"] == "custom-id" and data[2][2]["index"] == 7
    back = _roundtrip(PARENT, outputs)
    assert [c.model_dump(mode="json") for c in back] == [
        c.model_dump(mode="json") for c in outputs
    ]


def test_outputs_of_other_items_are_full_json() -> None:
    class Note(BaseModel):
        text: str
        score: float

    notes = [Note(text="a", score=0.5), Note(text="b", score=1.0)]
    entry = CacheEntry.build("k", "s", "q", notes, "a query string")
    assert json.loads(entry.payload) == [n.model_dump() for n in notes]
    assert entry.load(Note) == notes
    # Without the item, a plain entry still loads (used by tools that inspect a cache).
    plain = CacheEntry.build("k", "s", "i", [PARENT])
    assert plain.load(Document) == [PARENT]


def test_document_not_cut_from_the_input_is_stored_whole() -> None:
    other = Document(id="o", content="unrelated")
    stranger = Document(
        id="x#0", content="Alpha", parent_id="someone-else", index=0, start=0, end=5
    )
    lying = Document(id="p#0", content="Zzzzz", parent_id="p", index=0, start=0, end=5)
    outputs = [other, stranger, lying]
    back = _roundtrip(PARENT, outputs)
    assert back == outputs
    assert "derived" not in CacheEntry.build("k", "s", "p", outputs, PARENT).payload


@pytest.mark.parametrize(
    "payload",
    [
        '{"derived":[[0,999]]}',
        '{"derived":[[5,2]]}',
        '{"derived":[[-1,2]]}',
        '{"derived":[[0,"3"]]}',
        '{"derived":[[0]]}',
        '{"derived":[[0,3,{"index":-1}]]}',
        '{"derived":[[0,3,{"id":""}]]}',
        '{"derived":[[0,3,{"metadata":[1]}]]}',
        '{"derived":[[0,3,{"content_format":" "}]]}',
        '{"derived":[7]}',
        '{"derived":[{"id":"", "content":"x"}]}',
        '{"other":[]}',
        '[{"id":"x"}]',
        "not json",
    ],
)
def test_unreadable_payloads_raise(payload: str) -> None:
    entry = CacheEntry("k", "s", "p", payload, 1)
    with pytest.raises(CacheCorruptError, match="cache entry k"):
        entry.load(Document, PARENT)


@pytest.mark.parametrize(
    "payload",
    ['{"derived":[[0,999]]}', '{"derived":[[0,3]]} trailing', '{"derived":[[0,3,{"id":""}]]}'],
)
def test_a_bad_entry_in_a_window_is_named(payload: str) -> None:
    good = CacheEntry.build(
        "k1", "s", "p", Pieces([]).build_chunks(PARENT, [ChunkSpan(0, 5)]), PARENT
    )
    entries = [good, CacheEntry("k2", "s", "p", payload, 1), good]
    with pytest.raises(CacheCorruptError, match="entry k2"):
        decode_many(
            [e.payload for e in entries],
            [PARENT] * 3,
            [Document] * 3,
            [e.outputs for e in entries],
            lambda i: f"entry {entries[i].key}",
        )
    # The same payloads one by one: only the bad one fails.
    assert good.load(Document, PARENT)[0].content == "Alpha"
    with pytest.raises(CacheCorruptError):
        entries[1].load(Document, PARENT)


def test_a_window_with_a_wrong_count_is_corrupt() -> None:
    chunks = Pieces([]).build_chunks(PARENT, [ChunkSpan(0, 5), ChunkSpan(5, 11)])
    entry = CacheEntry.build("k", "s", "p", chunks, PARENT)
    with pytest.raises(CacheCorruptError, match="holds 2 outputs, its header says 3"):
        decode_many([entry.payload], [PARENT], [Document], [3], lambda i: "entry k")


def test_derived_entry_needs_a_document_input() -> None:
    entry = CacheEntry("k", "s", "p", '{"derived":[[0,3]]}', 1)
    with pytest.raises(CacheCorruptError, match="input is str"):
        entry.load(Document, "a string")


@st.composite
def _parent_and_pieces(draw: Any) -> tuple[Document, list[Any]]:
    content = draw(st.text(min_size=0, max_size=200))
    metadata = draw(
        st.dictionaries(
            st.text(min_size=1, max_size=5),
            st.one_of(st.integers(), st.text(max_size=5), st.booleans(), st.none()),
            max_size=3,
        )
    )
    parent = Document(id=draw(st.text(min_size=1, max_size=8)), content=content, metadata=metadata)
    cuts = sorted(draw(st.lists(st.integers(0, len(content)), max_size=8)))
    pieces: list[Any] = []
    for start, end in zip([0, *cuts], [*cuts, len(content)], strict=True):
        kind = draw(st.sampled_from(["span", "span-meta", "text"]))
        if kind == "span":
            pieces.append(ChunkSpan(start, end))
        elif kind == "span-meta":
            pieces.append(ChunkSpan(start, end, {"piece": draw(st.integers())}))
        else:
            pieces.append(ChunkText(draw(st.text(max_size=10)), {"rendered": True}))
    return parent, pieces


@settings(max_examples=150, deadline=None)
@given(_parent_and_pieces(), st.sampled_from([None, "markdown", "custom-fmt"]))
def test_any_chunking_round_trips_exactly(case: tuple[Document, list[Any]], fmt: Any) -> None:
    parent, pieces = case
    chunker = Pieces(pieces, content_format=fmt)
    chunks = chunker.build_chunks(parent, pieces)
    back = _roundtrip(parent, chunks)
    assert [c.model_dump(mode="json") for c in back] == [
        c.model_dump(mode="json") for c in chunks
    ]
    for chunk in back:  # every replayed chunk is a valid Document
        Document.model_validate(chunk.model_dump())
    for chunk in chunks:  # built without validation, equal to a validated one
        assert Document.model_validate(chunk.model_dump()) == chunk
        assert chunk.model_fields_set == set(Document.model_fields)
