"""The pure Docling chunking engine (docling-core only, no ragloom core needed)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from docling_core.types.doc import DocItemLabel, DoclingDocument
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ragloom_docling._engine import DoclingEngine, DoclingPiece, parse_document
from ragloom_docling._options import DoclingInputError, DoclingOptions


def pairs(pieces: list[DoclingPiece]) -> list[tuple[str, dict[str, Any]]]:
    return [(piece.text, piece.metadata) for piece in pieces]


def split(document: DoclingDocument, **options: Any) -> list[DoclingPiece]:
    return DoclingEngine(DoclingOptions(**options)).split_json(document.model_dump_json())


# -- hierarchical chunking of a built document -----------------------------------------------


@pytest.mark.parametrize("contextualize", [True, False])
def test_report_keeps_the_chunk_contract(
    report: DoclingDocument, check: Callable[..., None], contextualize: bool
) -> None:
    pieces = split(report, contextualize=contextualize)
    check(report, pairs(pieces), contextualize=contextualize)


def test_report_chunks_in_document_order_with_heading_paths(report: DoclingDocument) -> None:
    pieces = split(report, contextualize=False)
    assert [(p.metadata["headings"], p.text) for p in pieces] == [
        (["Annual Report"], "This report covers the year."),
        (["Annual Report", "Methods"], "We measured everything twice."),
        (["Annual Report", "Methods"], "- collect the samples\n- weigh the samples"),
        (
            ["Annual Report", "Methods", "Results"],
            "Table 1: model scores.\n\n"
            "| Model | Score |\n| - | - |\n| alpha | 0.91 |\n| beta | 0.87 |",
        ),
        (["Annual Report", "Methods", "Results"], "Alpha wins by a small margin."),
        (["Annual Report", "Discussion"], "Nothing surprising happened."),
    ]


def test_contextualized_content_starts_with_markdown_headings(report: DoclingDocument) -> None:
    pieces = split(report)  # contextualize is the default
    assert pieces[2].text == (
        "# Annual Report\n## Methods\n\n- collect the samples\n- weigh the samples"
    )
    assert pieces[-1].text == "# Annual Report\n## Discussion\n\nNothing surprising happened."


def test_metadata_names_items_pages_and_captions(report: DoclingDocument) -> None:
    pieces = split(report)
    lists, table, undated = pieces[2], pieces[3], pieces[5]
    assert lists.metadata["doc_items"] == ["#/texts/5", "#/texts/6"]
    assert lists.metadata["pages"] == [1, 2]
    assert table.metadata["doc_items"] == ["#/texts/8", "#/tables/0"]
    assert table.metadata["pages"] == [2]
    assert table.metadata["captions"] == ["Table 1: model scores."]
    assert "captions" not in lists.metadata
    assert "pages" not in undated.metadata  # no provenance, no page numbers
    assert all(p.metadata["span_kind"] == "docling-items" for p in pieces)
    assert all("partial_items" not in p.metadata and "tokens" not in p.metadata for p in pieces)


def test_furniture_and_headings_are_not_chunked(report: DoclingDocument) -> None:
    text = "\n".join(p.text for p in split(report, contextualize=False))
    assert "ACME confidential" not in text
    assert "page 2 of 2" not in text
    assert "Methods" not in text  # only in metadata when not contextualized


def test_picture_caption_is_chunked_once(check: Callable[..., None]) -> None:
    doc = DoclingDocument(name="figure")
    doc.add_text(DocItemLabel.TEXT, "Before the figure.")
    caption = doc.add_text(DocItemLabel.CAPTION, "Figure 1: a cat on a mat.")
    doc.add_picture(caption=caption)
    pieces = split(doc)
    check(doc, pairs(pieces), contextualize=True)
    assert sum("a cat on a mat" in p.text for p in pieces) == 1


# -- real documents (docling-core's own test data) --------------------------------------------


@pytest.mark.parametrize("contextualize", [True, False])
def test_real_documents_keep_the_chunk_contract(
    real_document_json: str, check: Callable[..., None], contextualize: bool
) -> None:
    document = DoclingDocument.model_validate_json(real_document_json)
    pieces = DoclingEngine(DoclingOptions(contextualize=contextualize)).split_json(
        real_document_json
    )
    check(document, pairs(pieces), contextualize=contextualize)


def test_arxiv_paper_every_body_text_in_one_chunk_with_pages(
    docling_file: Callable[[str], Any],
) -> None:
    raw = docling_file("2106.09680v1.json").read_text(encoding="utf-8")
    document = DoclingDocument.model_validate_json(raw)
    assert len(document.texts) == 415
    pieces = DoclingEngine(DoclingOptions()).split_json(raw)
    refs = [ref for p in pieces for ref in p.metadata["doc_items"]]
    body = [t.self_ref for t, _ in document.iterate_items() if getattr(t, "text", "").strip()]
    assert sorted(refs) == sorted(body)  # nothing lost, nothing twice
    assert all(p.metadata["pages"] for p in pieces)  # a PDF conversion: all have provenance
    assert {page for p in pieces for page in p.metadata["pages"]} <= set(document.pages)
    # a formula keeps its LaTeX, as Markdown display math
    assert any(p.text == "$$\\varepsilon$$" for p in pieces)


def test_hierarchized_heading_paths(docling_file: Callable[[str], Any]) -> None:
    raw = docling_file("hierarchized.json").read_text(encoding="utf-8")
    pieces = DoclingEngine(DoclingOptions()).split_json(raw)
    by_first_ref = {p.metadata["doc_items"][0]: p for p in pieces}
    assert by_first_ref["#/texts/1"].metadata["headings"] == ["Title"]
    assert by_first_ref["#/texts/5"].metadata["headings"] == ["Title", "Foo", "Bar"]
    assert by_first_ref["#/texts/13"].metadata["headings"] == ["Title", "", "Subheading"]
    # an empty heading (its text is in inline children) is skipped in the Markdown context
    assert by_first_ref["#/texts/13"].text == "# Title\n### Subheading\n\nSubsection content."
    table = by_first_ref["#/tables/0"]
    assert table.metadata["headings"] == ["Title", "Heading", "Heading"]
    assert "| cell 0,0 | cell 0,1 |\n| - | - |" in table.text
    assert "| *text in italic * **text in bold** |" in table.text  # a rich cell (inline group)


def test_real_tables_are_markdown(docling_file: Callable[[str], Any]) -> None:
    raw = docling_file("ddoc_0.json").read_text(encoding="utf-8")
    document = DoclingDocument.model_validate_json(raw)
    pieces = DoclingEngine(DoclingOptions(contextualize=False)).split_json(raw)
    tables = [p for p in pieces if any(r.startswith("#/tables/") for r in p.metadata["doc_items"])]
    assert len(tables) == len(document.tables) == 7
    for piece in tables:
        lines = piece.text.splitlines()
        assert lines[0].startswith("| ") and lines[0].endswith(" |"), piece.text
        assert set(lines[1]) <= set("|- "), piece.text  # the header separator row
        assert all(line.startswith("|") for line in lines)


# -- bad input ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ("", "not valid JSON"),
        ("not json at all", "not valid JSON"),
        ('{"name": "x", "texts": [', "not valid JSON"),
        ("[1, 2, 3]", "not a serialized DoclingDocument"),
        (
            '{"title": "a web page"}',
            "not a serialized DoclingDocument: 1 validation error(s), "
            "first at name: Field required",
        ),
        ('{"name": "x", "texts": [{"text": "no refs"}]}', "first at texts.0"),
        ('{"name": "x", "version": "99.0.0"}', "first at version"),
    ],
)
def test_bad_content_is_rejected_with_the_reason(content: str, reason: str) -> None:
    engine = DoclingEngine(DoclingOptions())
    with pytest.raises(DoclingInputError, match="^content is") as caught:
        engine.split_json(content)
    assert reason in str(caught.value)


def test_document_without_text_is_rejected() -> None:
    doc = DoclingDocument(name="blank-scan")
    doc.add_heading("Only a heading")
    doc.add_text(DocItemLabel.TEXT, "   ")
    doc.add_picture()
    with pytest.raises(DoclingInputError, match="'blank-scan' has no body text to chunk"):
        split(doc)
    with pytest.raises(DoclingInputError, match="'x' has no body text"):
        DoclingEngine(DoclingOptions()).split_json('{"name": "x"}')


def test_dangling_reference_is_rejected(report: DoclingDocument) -> None:
    data = json.loads(report.model_dump_json())
    data["body"]["children"].append({"$ref": "#/texts/999"})
    with pytest.raises(DoclingInputError, match=r"reference '#/texts/999' points to no item"):
        DoclingEngine(DoclingOptions()).split_json(json.dumps(data))


def test_dangling_caption_reference_is_rejected(report: DoclingDocument) -> None:
    data = json.loads(report.model_dump_json())
    data["tables"][0]["captions"] = [{"$ref": "#/texts/404"}]  # not checked by docling-core
    with pytest.raises(
        DoclingInputError, match=r"could not chunk .*'report': reference '#/texts/404' points"
    ):
        DoclingEngine(DoclingOptions()).split_json(json.dumps(data))


def test_parse_document_round_trips(report: DoclingDocument) -> None:
    assert parse_document(report.model_dump_json()) == report


# -- hybrid (token-limited) chunking with a local tokenizer ----------------------------------


@pytest.mark.parametrize("contextualize", [True, False])
@pytest.mark.parametrize("max_tokens", [48, 256])
def test_hybrid_real_documents_fit_the_limit(
    real_document_json: str,
    tokenizer_path: str,
    check: Callable[..., None],
    contextualize: bool,
    max_tokens: int,
) -> None:
    from tokenizers import Tokenizer

    document = DoclingDocument.model_validate_json(real_document_json)
    engine = DoclingEngine(
        DoclingOptions(
            contextualize=contextualize, max_tokens=max_tokens, tokenizer_path=tokenizer_path
        )
    )
    pieces = engine.split_json(real_document_json)
    check(document, pairs(pieces), contextualize=contextualize, hybrid=True)
    counter = Tokenizer.from_file(tokenizer_path)
    counter.no_truncation()
    for piece in pieces:
        tokens = len(counter.encode(piece.text, add_special_tokens=False).ids)
        assert piece.metadata["tokens"] == tokens
        assert tokens <= max_tokens or piece.metadata.get("oversized") is True
    assert not any(p.metadata.get("oversized") for p in pieces)


def test_hybrid_merges_small_elements_and_splits_large_ones(
    tokenizer_path: str, check: Callable[..., None]
) -> None:
    doc = DoclingDocument(name="long")
    doc.add_heading("Intro")
    doc.add_text(DocItemLabel.TEXT, "Short one.")
    doc.add_text(DocItemLabel.TEXT, "Short two.")
    doc.add_heading("Body")
    long_text = " ".join(f"Sentence number {i} says something plain." for i in range(60))
    doc.add_text(DocItemLabel.TEXT, long_text)
    pieces = split(doc, max_tokens=64, tokenizer_path=tokenizer_path)
    check(doc, pairs(pieces), contextualize=True, hybrid=True)
    assert pieces[0].text == "# Intro\n\nShort one.\n\nShort two."  # merged peers
    assert pieces[0].metadata["doc_items"] == ["#/texts/1", "#/texts/2"]
    rest = pieces[1:]
    assert len(rest) > 3
    assert all(p.metadata["partial_items"] == ["#/texts/4"] for p in rest)
    assert all(p.metadata["tokens"] <= 64 and p.text.startswith("# Body\n\n") for p in rest)
    # the fragments, in order, are the long paragraph
    assert " ".join(p.text.removeprefix("# Body\n\n") for p in rest).split() == long_text.split()


def test_hybrid_splits_a_large_table_repeating_its_header(
    tokenizer_path: str, check: Callable[..., None], table_data: Callable[..., Any]
) -> None:
    doc = DoclingDocument(name="table")
    rows = [["City", "Population"]] + [[f"city{i}", str(1000 + i)] for i in range(40)]
    doc.add_table(data=table_data(rows))
    pieces = split(doc, max_tokens=60, tokenizer_path=tokenizer_path, contextualize=False)
    check(doc, pairs(pieces), contextualize=False, hybrid=True)
    assert len(pieces) > 2
    for piece in pieces:
        assert piece.text.startswith("| City | Population |\n| - | - |\n| city"), piece.text
        assert piece.metadata["partial_items"] == ["#/tables/0"]
    body_rows = [line for p in pieces for line in p.text.splitlines()[2:]]
    assert body_rows == [f"| city{i} | {1000 + i} |" for i in range(40)]


# -- property: documents built at random keep the contract -----------------------------------

_words = st.text(alphabet="abcdefghij klmnop", min_size=1, max_size=40).filter(str.strip)
_blocks = st.lists(
    st.one_of(
        st.tuples(st.just("heading"), _words, st.integers(min_value=1, max_value=3)),
        st.tuples(st.just("text"), _words, st.just(0)),
        st.tuples(st.just("list"), st.lists(_words, min_size=1, max_size=4), st.just(0)),
    ),
    min_size=1,
    max_size=12,
)


def _build(blocks: list[tuple[str, Any, int]]) -> DoclingDocument:
    doc = DoclingDocument(name="random")
    doc.add_text(DocItemLabel.TEXT, "anchor paragraph")
    for kind, value, level in blocks:
        if kind == "heading":
            doc.add_heading(value, level=level)
        elif kind == "text":
            doc.add_text(DocItemLabel.TEXT, value)
        else:
            group = doc.add_list_group()
            for entry in value:
                doc.add_list_item(entry, parent=group)
    return doc


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(blocks=_blocks, contextualize=st.booleans())
def test_random_documents_keep_the_contract(
    blocks: list[tuple[str, Any, int]], contextualize: bool, check: Callable[..., None]
) -> None:
    doc = _build(blocks)
    check(doc, pairs(split(doc, contextualize=contextualize)), contextualize=contextualize)


# -- the Markdown rendering of a chunk ---------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(
    headings=st.lists(st.text(max_size=12), max_size=8),
    text=st.text(max_size=40),
    contextualize=st.booleans(),
)
def test_render_content_puts_headings_before_the_body(
    headings: list[str], text: str, contextualize: bool
) -> None:
    from ragloom_docling._markdown import heading_prefix, render_content

    content = render_content(headings, text, contextualize=contextualize)
    body = text.strip("\r\n")
    assert content.endswith(body)
    prefix = heading_prefix(headings)
    if not contextualize or not prefix:
        assert content == body
        return
    assert content.startswith(prefix)
    lines = prefix.split("\n")
    kept = [(d, h) for d, h in enumerate(headings, 1) if h.split()]
    assert len(lines) == len(kept)  # one line per non-blank heading, in path order
    for line, (depth, heading) in zip(lines, kept, strict=True):
        assert line == "#" * min(depth, 6) + " " + " ".join(heading.split())
