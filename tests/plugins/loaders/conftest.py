"""Real files for ragloom-loaders' tests.

- HTML: Python's own documentation page shipped in every CPython (``idlelib/help.html``),
  pages written by the standard library's ``pydoc`` for real modules, the repository's sample
  FAQ page.
- PDF: the manuals Debian ships under ``/usr/share/doc`` when present, and PDFs that
  reportlab (a test dependency) typesets from real text (the docstrings of standard-library
  modules), so that every page's expected text is known.
- DOCX: no installed package ships a Word document with text (python-docx ships an empty
  template, used as a refused sample), so the samples are written with python-docx from the
  same real text, with headings, lists and tables.
"""

from __future__ import annotations

import io
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

pytest.importorskip("ragloom_loaders", reason="ragloom-loaders is not installed")

from ragloom.loading import SourceFile  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from loader_files import (  # noqa: E402
    SAMPLE_DOCS,
    TEXT_MODULES,
    build_docx,
    docx_template_path,
    module_doc,
    pydoc_page,
    source,
)
from support.real_files import debian_docs, stdlib_file  # noqa: E402

# -- HTML ----------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def idle_help() -> SourceFile:
    path = stdlib_file("idlelib/help.html")
    if path is None:
        pytest.skip("this Python has no idlelib/help.html (a distribution that splits out IDLE)")
    return source(path, "idlelib/help.html")


@pytest.fixture(scope="session")
def html_samples() -> list[SourceFile]:
    samples = [source(SAMPLE_DOCS / "faq.html", "sample-docs/faq.html")]
    for name in TEXT_MODULES[:2]:
        samples.append(SourceFile(f"pydoc/{name}.html", pydoc_page(name), f"pydoc/{name}"))
    path = stdlib_file("idlelib/help.html")
    if path is not None:
        samples.append(source(path, "idlelib/help.html"))
    return samples


# -- PDF -----------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def debian_pdfs() -> list[SourceFile]:
    # manuals, not one-page notices (sqlite3 ships its copyright release as a 3 kB PDF)
    found = [p for p in debian_docs("*/*.pdf") if p.stat().st_size >= 20_000]
    if not found:
        pytest.skip("no PDF manual under /usr/share/doc on this machine (Debian documentation)")
    return [source(p, f"{p.parent.name}/{p.name}") for p in found[:3]]


PdfMaker = Callable[..., bytes]


@pytest.fixture(scope="session")
def make_pdf() -> PdfMaker:
    """``make_pdf(pages, title=None, encrypt=None)``: a PDF typeset by reportlab.

    ``pages`` is a list of pages, each a list of lines; ``None`` for a page with only a
    drawing (no text). ``encrypt`` is passed to reportlab (a user password, or a
    ``StandardEncryption``).
    """
    pytest.importorskip("reportlab", reason="the PDF tests typeset PDFs with reportlab")
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    def make(
        pages: list[list[str] | None], title: str | None = None, encrypt: object = None
    ) -> bytes:
        buffer = io.BytesIO()
        pdf = canvas.Canvas(buffer, pagesize=A4, invariant=1, encrypt=encrypt)
        if title:
            pdf.setTitle(title)
        for lines in pages:
            if lines is None:
                pdf.rect(100, 100, 300, 300, fill=1)
            else:
                y = 800
                for line in lines:
                    pdf.drawString(40, y, line)
                    y -= 15
            pdf.showPage()
        pdf.save()
        return buffer.getvalue()

    return make


@pytest.fixture(scope="session")
def real_text_pages() -> list[list[str]]:
    return [module_doc(name) for name in TEXT_MODULES]


@pytest.fixture(scope="session")
def typeset_pdf(make_pdf: PdfMaker, real_text_pages: list[list[str]]) -> SourceFile:
    data = make_pdf(real_text_pages, title="Standard library modules")
    return SourceFile("typeset/modules.pdf", data, "modules.pdf")


@pytest.fixture(scope="session")
def pdf_samples(make_pdf: PdfMaker, typeset_pdf: SourceFile) -> list[SourceFile]:
    found = debian_docs("*/*.pdf")[:2]
    one_page = make_pdf([module_doc("shlex")])
    return [
        typeset_pdf,
        SourceFile("typeset/shlex.pdf", one_page, "shlex.pdf"),
        *(source(p, f"{p.parent.name}/{p.name}") for p in found),
    ]


# -- DOCX ----------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def written_docx() -> SourceFile:
    pytest.importorskip("docx", reason="python-docx is a dependency of ragloom-loaders")
    return SourceFile("written/notes.docx", build_docx(), "notes.docx")


@pytest.fixture(scope="session")
def docx_template() -> SourceFile:
    path = docx_template_path()
    if path is None:
        pytest.skip("python-docx's default.docx template is not installed")
    return source(path, "docx/templates/default.docx")
