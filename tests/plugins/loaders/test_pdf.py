"""PdfLoader: page spans, real manuals, typeset pages of known text, and bad input."""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor

import pytest
from ragloom.loaders_builtin import LoaderSet
from ragloom.loading import LoadError, SourceFile
from ragloom_loaders import PdfLoader


def check_spans(content: str, spans: list[list[int]], separator: str) -> list[str]:
    """The spans tile the content, pages joined by ``separator``; returns the page texts."""
    pages = [content[start:end] for start, end in spans]
    assert separator.join(pages) == content
    position = 0
    for number, (start, end) in enumerate(spans):
        if number:
            position += len(separator)
        assert start == position and end >= start
        position = end
    return pages


def test_pages_of_known_text_have_exact_spans(
    typeset_pdf: SourceFile, real_text_pages: list[list[str]]
) -> None:
    [doc] = PdfLoader().load(typeset_pdf)
    assert doc.content_format == "text" and doc.id == typeset_pdf.doc_id
    assert doc.metadata["page_count"] == len(real_text_pages)
    assert doc.metadata["title"] == "Standard library modules"
    pages = check_spans(doc.content, doc.metadata["pages"], "\n\n")
    for text, lines in zip(pages, real_text_pages, strict=True):
        # PDF text has no spaces of its own: runs of spaces come back as one
        assert text.split() == " ".join(lines).split()
        got = [line.strip() for line in text.splitlines()]
        assert got == [" ".join(line.split()) for line in lines if line.strip()]


def test_page_separator_and_empty_pages(make_pdf, real_text_pages: list[list[str]]) -> None:
    data = make_pdf([real_text_pages[0], None, real_text_pages[1]])
    [doc] = PdfLoader(page_separator="\f").load(SourceFile("gap.pdf", data, "gap"))
    pages = check_spans(doc.content, doc.metadata["pages"], "\f")
    assert pages[1] == "" and pages[0] and pages[2]
    assert doc.metadata["page_count"] == 3


def test_debian_manuals(debian_pdfs: list[SourceFile]) -> None:
    loader = PdfLoader()
    for pdf in debian_pdfs:
        [doc] = loader.load(pdf)
        pages = check_spans(doc.content, doc.metadata["pages"], "\n\n")
        assert len(pages) == doc.metadata["page_count"] > 1
        assert sum(1 for p in pages if p.strip()) > len(pages) // 2
        assert not re.search(r"[\r\x00-\x08\x0b-\x1f\ufffe]", doc.content)
        assert len(doc.content.split()) > 1000


def test_an_owner_password_alone_does_not_stop_reading(make_pdf) -> None:
    from reportlab.lib.pdfencrypt import StandardEncryption

    locked_editing = StandardEncryption("", ownerPassword="owner", canModify=0, canCopy=0)
    data = make_pdf([["Readable, not editable."]], encrypt=locked_editing)
    [doc] = PdfLoader().load(SourceFile("owner.pdf", data, "owner"))
    assert doc.content == "Readable, not editable."


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("half", r"damaged PDF: .*Data format error"),
        ("random", r"not a PDF: no %PDF- header in its first 1024 bytes"),
        ("header-only", r"damaged PDF"),
        ("locked", r"encrypted PDF: it cannot be read without its password"),
        ("drawing", r"no extractable text in 2 page\(s\) \(a scanned or image-only PDF\? "),
        ("empty", r"empty file"),
    ],
)
def test_bad_pdfs_are_refused_clearly(
    make_pdf, typeset_pdf: SourceFile, name: str, problem: str
) -> None:
    data = typeset_pdf.data
    bad = {
        "half": data[: len(data) // 2],
        "random": bytes(range(256)) * 8,
        "header-only": b"%PDF-1.7\n" + b"\x80junk" * 50,
        "locked": make_pdf([["secret text"]], encrypt="pw"),
        "drawing": make_pdf([None, None]),
        "empty": b"",
    }[name]
    path = f"in/{name}.pdf"
    with pytest.raises(LoadError, match=rf"^in/{name}\.pdf: {problem}"):
        PdfLoader().load(SourceFile(path, bad, name))


def test_unsuffixed_pdf_is_sniffed(typeset_pdf: SourceFile) -> None:
    loaders = LoaderSet.from_registry()
    source = SourceFile("scans/modules", typeset_pdf.data, "modules")
    assert loaders.name_of(loaders.pick(source)) == "pdf"


def test_threads_share_pdfium_safely(pdf_samples: list[SourceFile]) -> None:
    loader = PdfLoader()
    jobs = pdf_samples * 4
    expected = [loader.load(s)[0].model_dump() for s in jobs]
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda s: loader.load(s)[0].model_dump(), jobs))
    assert results == expected


def test_separator_must_be_text() -> None:
    with pytest.raises(TypeError, match="page_separator must be a str"):
        PdfLoader(page_separator=None)  # type: ignore[arg-type]
