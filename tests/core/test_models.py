"""Document and ContentFormat: validation, lineage, JSON round trip, content hash."""

from __future__ import annotations

import hashlib

import pytest
from pydantic import ValidationError
from ragloom import ContentFormat, Document


def test_well_known_formats_become_enum_members() -> None:
    doc = Document(id="d", content="x", content_format="Markdown")
    assert doc.content_format == ContentFormat.MARKDOWN == "markdown"


def test_custom_format_strings_are_accepted() -> None:
    doc = Document(id="d", content="x", content_format="docling-json")
    assert doc.content_format == "docling-json"
    assert Document(id="d", content="x", content_format="Docling").content_format == "docling"


def test_empty_format_is_rejected() -> None:
    with pytest.raises(ValidationError, match="content_format"):
        Document(id="d", content="x", content_format="  ")


def test_default_format_is_text_and_id_is_required() -> None:
    assert Document(id="d", content="x").content_format == ContentFormat.TEXT
    with pytest.raises(ValidationError):
        Document(id="", content="x")


def test_chunk_lineage_fields() -> None:
    parent = Document(id="p", content="hello world", metadata={"lang": "en"})
    chunk = Document(id="p#1", content="world", parent_id="p", index=1, start=6, end=11)
    assert chunk.is_chunk and not parent.is_chunk
    assert chunk.start is not None and chunk.end is not None
    assert parent.content[chunk.start : chunk.end] == chunk.content


def test_span_length_must_match_content() -> None:
    with pytest.raises(ValidationError, match="length"):
        Document(id="c", content="abc", parent_id="p", index=0, start=0, end=5)


def test_span_needs_both_ends_and_order() -> None:
    with pytest.raises(ValidationError, match="together"):
        Document(id="c", content="abc", parent_id="p", start=0)
    with pytest.raises(ValidationError, match="before start"):
        Document(id="c", content="", parent_id="p", start=5, end=2)


def test_lineage_fields_need_parent_id() -> None:
    with pytest.raises(ValidationError, match="parent_id"):
        Document(id="c", content="abc", index=0, start=0, end=3)


def test_negative_offsets_are_rejected() -> None:
    with pytest.raises(ValidationError):
        Document(id="c", content="", parent_id="p", start=-1, end=-1)


def test_documents_are_frozen_and_reject_unknown_fields() -> None:
    doc = Document(id="d", content="x")
    with pytest.raises(ValidationError):
        doc.content = "y"  # type: ignore[misc]
    with pytest.raises(ValidationError):
        Document(id="d", content="x", colour="red")  # type: ignore[call-arg]


@pytest.mark.parametrize("fmt", ["text", "markdown", "my-custom-format"])
def test_json_round_trip(fmt: str) -> None:
    doc = Document(
        id="p#0",
        content="héllo \U0001f600 wörld",
        content_format=fmt,
        metadata={"source": {"path": "a.md", "page": 3}, "tags": ["x", "y"], "score": 0.5},
        parent_id="p",
        index=0,
        start=4,
        end=4 + len("héllo \U0001f600 wörld"),
    )
    back = Document.model_validate_json(doc.model_dump_json())
    assert back == doc
    assert back.content_format == fmt
    assert back.metadata == doc.metadata
    assert (back.parent_id, back.index, back.start, back.end) == ("p", 0, 4, doc.end)


def test_content_hash_is_sha256_of_content_and_does_not_affect_equality() -> None:
    a = Document(id="d", content="same text")
    b = Document(id="d", content="same text")
    assert a.content_hash == hashlib.sha256(b"same text").hexdigest()
    # a computed (cached) hash must not make otherwise equal documents unequal
    assert a == b
    assert Document(id="e", content="same text").content_hash == a.content_hash
    assert Document(id="d", content="other").content_hash != a.content_hash
    assert "content_hash" not in a.model_dump()


def test_from_text_derives_a_stable_id() -> None:
    a = Document.from_text("some content", metadata={"k": 1})
    b = Document.from_text("some content")
    assert a.id == b.id and a.id.startswith("doc-")
    assert Document.from_text("other content").id != a.id
    assert Document.from_text("x", id="given").id == "given"
    assert a.metadata == {"k": 1}
