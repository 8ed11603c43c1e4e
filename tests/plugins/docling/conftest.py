"""Fixtures for ragloom-docling: documents built with docling-core, real documents carried in
``tests/data/docling``, and the contract every Docling chunk keeps (``check_pieces``)."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("docling_core", reason="ragloom-docling needs docling-core installed")

from docling_core.types.doc import (  # noqa: E402
    BoundingBox,
    ContentLayer,
    DocItemLabel,
    DoclingDocument,
    NodeItem,
    ProvenanceItem,
    RefItem,
    SectionHeaderItem,
    Size,
    TableCell,
    TableData,
    TableItem,
    TextItem,
    TitleItem,
)

REPO_ROOT = Path(__file__).resolve().parents[3]
#: Real serialized DoclingDocuments from docling-core's test data (MIT; see its README.md).
DOCLING_DATA = REPO_ROOT / "tests" / "data" / "docling"
REAL_DOCUMENTS = ("2106.09680v1.json", "ddoc_0.json", "hierarchized.json")


def _data_file(relpath: Path | str) -> Path:
    path = DOCLING_DATA / relpath
    assert path.is_file(), f"{path} is part of the repository's test data"
    return path


@pytest.fixture
def docling_file() -> Callable[[str], Path]:
    """Locate a real document of ``tests/data/docling`` by its file name."""
    return _data_file


@pytest.fixture(params=REAL_DOCUMENTS)
def real_document_json(request: pytest.FixtureRequest) -> str:
    """A real serialized DoclingDocument (docling-core's test data, MIT licence)."""
    return _data_file(request.param).read_text(encoding="utf-8")


@pytest.fixture
def tokenizer_path() -> str:
    """A local BERT WordPiece tokenizer.json (all-MiniLM-L6-v2's vocabulary): the one of the
    embedding model that ragloom-semantic ships."""
    semantic = pytest.importorskip(
        "ragloom_semantic", reason="the tokenizer is the one ragloom-semantic ships"
    )
    path = semantic.bundled_model_path() / "tokenizer.json"
    assert path.is_file(), f"ragloom-semantic ships {path}"
    return str(path)


# -- documents built with docling-core's API ------------------------------------------------


def prov(page: int, length: int = 10) -> ProvenanceItem:
    return ProvenanceItem(
        page_no=page, bbox=BoundingBox(l=10, t=700, r=500, b=650), charspan=(0, length)
    )


def make_table_data(rows: Sequence[Sequence[str]]) -> TableData:
    cells = [
        TableCell(
            text=value,
            start_row_offset_idx=r,
            end_row_offset_idx=r + 1,
            start_col_offset_idx=c,
            end_col_offset_idx=c + 1,
            column_header=r == 0,
        )
        for r, row in enumerate(rows)
        for c, value in enumerate(row)
    ]
    return TableData(num_rows=len(rows), num_cols=len(rows[0]), table_cells=cells)


def build_report() -> DoclingDocument:
    """Title, sections, paragraphs, a list, a captioned table, furniture; pages 1 and 2."""
    doc = DoclingDocument(name="report")
    for page in (1, 2):
        doc.add_page(page_no=page, size=Size(width=600, height=800))
    doc.add_text(
        DocItemLabel.PAGE_HEADER,
        "ACME confidential",
        prov=prov(1),
        content_layer=ContentLayer.FURNITURE,
    )
    doc.add_title("Annual Report", prov=prov(1))
    doc.add_text(DocItemLabel.TEXT, "This report covers the year.", prov=prov(1))
    doc.add_heading("Methods", level=1, prov=prov(1))
    doc.add_text(DocItemLabel.TEXT, "We measured everything twice.", prov=prov(1))
    items = doc.add_list_group()
    doc.add_list_item("collect the samples", parent=items, prov=prov(1))
    doc.add_list_item("weigh the samples", parent=items, prov=prov(2))
    doc.add_heading("Results", level=2, prov=prov(2))
    caption = doc.add_text(DocItemLabel.CAPTION, "Table 1: model scores.", prov=prov(2))
    doc.add_table(
        data=make_table_data([["Model", "Score"], ["alpha", "0.91"], ["beta", "0.87"]]),
        caption=caption,
        prov=prov(2),
    )
    doc.add_text(DocItemLabel.TEXT, "Alpha wins by a small margin.", prov=prov(2))
    doc.add_heading("Discussion", level=1)  # no provenance: a born-digital section
    doc.add_text(DocItemLabel.TEXT, "Nothing surprising happened.")
    doc.add_text(
        DocItemLabel.PAGE_FOOTER,
        "page 2 of 2",
        prov=prov(2),
        content_layer=ContentLayer.FURNITURE,
    )
    return doc


@pytest.fixture
def table_data() -> Callable[[Sequence[Sequence[str]]], TableData]:
    """Build ``TableData`` from rows of cell texts; the first row is the column header."""
    return make_table_data


@pytest.fixture
def report() -> DoclingDocument:
    return build_report()


# -- the contract of Docling chunks ------------------------------------------------------------

_WORD = re.compile(r"\w+")
_HEADING_ITEMS = (TitleItem, SectionHeaderItem)


def _normalized(text: str) -> str:
    return " ".join(text.split())


def _own_texts(item: NodeItem, document: DoclingDocument) -> list[str]:
    """The texts an item contributes: its text, a table's cells, its captions, a list marker."""
    texts: list[str] = []
    if isinstance(item, TextItem):
        texts.append(item.text)
        if (marker := getattr(item, "marker", None)) is not None:
            texts.append(str(marker))
    if isinstance(item, TableItem):
        for cell in item.data.table_cells:
            texts.append(cell.text)
            if (ref := getattr(cell, "ref", None)) is not None:
                for nested, _ in document.iterate_items(root=ref.resolve(document)):
                    texts.extend(_own_texts(nested, document))
    for ref in getattr(item, "captions", ()):
        texts.extend(_own_texts(ref.resolve(document), document))
    return texts


def expected_body_items(document: DoclingDocument) -> list[NodeItem]:
    """Body items with text that must land in a chunk (headings go to metadata instead)."""
    return [
        item
        for item, _ in document.iterate_items()
        if isinstance(item, TextItem | TableItem)
        and not isinstance(item, _HEADING_ITEMS)
        and (not isinstance(item, TextItem) or item.text.strip())
    ]


def _ancestors(item: NodeItem, document: DoclingDocument) -> list[str]:
    refs = []
    node: NodeItem | None = item
    while node is not None and node.parent is not None:
        refs.append(node.parent.cref)
        node = node.parent.resolve(document)
    return refs


def check_pieces(
    document: DoclingDocument,
    pieces: Sequence[tuple[str, Mapping[str, Any]]],
    *,
    contextualize: bool,
    hybrid: bool = False,
) -> None:
    """Assert the contract of Docling chunks; ``pieces`` are ``(content, metadata)`` pairs."""
    from ragloom_docling._markdown import heading_prefix

    assert pieces, "a document with text yields chunks"
    coverage: Counter[str] = Counter()
    partial_anywhere: set[str] = set()
    for content, metadata in pieces:
        assert metadata["span_kind"] == "docling-items"
        refs = metadata["doc_items"]
        assert refs, "every chunk names the items it came from"
        items = [RefItem(cref=ref).resolve(document) for ref in refs]  # raises if dangling
        assert [item.self_ref for item in items] == refs
        # Pages: the sorted page numbers of the items' provenance, absent when there is none.
        pages = sorted({p.page_no for item in items for p in item.prov})
        assert metadata.get("pages") == (pages or None)
        assert all(isinstance(page, int) for page in metadata.get("pages", ()))
        # The content: heading path (when contextualized), a blank line, then the body.
        headings = metadata["headings"]
        prefix = heading_prefix(headings) if contextualize else ""
        if prefix:
            assert content.startswith(prefix + "\n\n"), (content, prefix)
            body = content[len(prefix) + 2 :]
        else:
            body = content
        assert body.strip(), "no empty chunks"
        # The body is made of the items' texts: every word in it comes from one of them ...
        partial = set(metadata.get("partial_items", ()))
        partial_anywhere |= partial
        item_texts = {item.self_ref: _own_texts(item, document) for item in items}
        allowed = {w for texts in item_texts.values() for t in texts for w in _WORD.findall(t)}
        stray = [w for w in _WORD.findall(body) if w not in allowed]
        assert not stray, f"words not from the chunk's items: {stray[:10]} in {body!r}"
        # ... and every whole item's text is in it (a partial item holds only a fragment).
        flat_body = _normalized(body)
        for ref, texts in item_texts.items():
            if ref in partial:
                continue
            for text in texts:
                assert _normalized(text) in flat_body, (ref, text, body)
        coverage.update(refs)
    # Nothing lost: each body item is in exactly one chunk, itself or through an ancestor
    # (a table's rich cells); in hybrid mode an element split across chunks is partial in each.
    for item in expected_body_items(document):
        holders = [ref for ref in (item.self_ref, *_ancestors(item, document)) if coverage[ref]]
        assert holders, f"{item.self_ref} ({item.label}) is in no chunk"
        count = coverage[holders[0]]
        if hybrid and holders[0] in partial_anywhere:
            assert count >= 2
        else:
            assert count == 1, f"{item.self_ref} is in {count} chunks"
    # Headings and furniture are never chunk items.
    for item, _ in document.iterate_items(included_content_layers=set(ContentLayer)):
        if isinstance(item, _HEADING_ITEMS) or item.content_layer != ContentLayer.BODY:
            assert not coverage[item.self_ref], item.self_ref


@pytest.fixture
def check() -> Callable[..., None]:
    """The chunk contract checker (see :func:`check_pieces`)."""
    return check_pieces
