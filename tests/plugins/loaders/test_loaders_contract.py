"""The loader contract over every loader of ragloom-loaders, on real files."""

from __future__ import annotations

import pytest
from loader_files import build_docx, docx_template_path, replace_member, source, zip_bytes
from ragloom.loading import Loader, SourceFile
from ragloom.testing import LoaderContract
from ragloom_loaders import DocxLoader, HtmlLoader, PdfLoader
from support.real_files import stdlib_file


class TestHtmlLoaderContract(LoaderContract):
    @pytest.fixture
    def loader(self) -> Loader:
        return HtmlLoader()

    @pytest.fixture
    def samples(self, html_samples: list[SourceFile]) -> list[SourceFile]:
        return html_samples

    @pytest.fixture
    def bad_samples(self) -> list[SourceFile]:
        icon = stdlib_file("idlelib/Icons/idle_48.png")
        junk = icon.read_bytes() if icon is not None else bytes(range(256)) * 4
        return [
            SourceFile("icon.html", junk, "icon"),
            SourceFile("notes.html", b"Just some notes, a < b and b > c.\n" * 5, "notes"),
            SourceFile("scripts.html", b"<html><script>var a = 1;</script></html>", "scripts"),
            SourceFile("blank.htm", b"<!DOCTYPE html><html><body>  </body></html>", "blank"),
        ]


class TestWholeBodyHtmlLoaderContract(TestHtmlLoaderContract):
    @pytest.fixture
    def loader(self) -> Loader:
        return HtmlLoader(main_only=False)


class TestPdfLoaderContract(LoaderContract):
    @pytest.fixture
    def loader(self) -> Loader:
        return PdfLoader()

    @pytest.fixture
    def samples(self, pdf_samples: list[SourceFile]) -> list[SourceFile]:
        return pdf_samples

    @pytest.fixture
    def bad_samples(self, make_pdf, typeset_pdf: SourceFile) -> list[SourceFile]:
        data = typeset_pdf.data
        return [
            SourceFile("half.pdf", data[: len(data) // 2], "half"),
            SourceFile("random.pdf", bytes(range(256)) * 8, "random"),
            SourceFile("header-only.pdf", b"%PDF-1.7\n" + b"\x80junk" * 50, "header"),
            SourceFile("locked.pdf", make_pdf([["secret text"]], encrypt="pw"), "locked"),
            SourceFile("drawing.pdf", make_pdf([None, None]), "drawing"),
        ]


class TestDocxLoaderContract(LoaderContract):
    @pytest.fixture
    def loader(self) -> Loader:
        return DocxLoader()

    @pytest.fixture
    def samples(self, written_docx: SourceFile) -> list[SourceFile]:
        return [written_docx, SourceFile("written/plain.docx", build_docx(with_table=False), "p")]

    @pytest.fixture
    def bad_samples(self, written_docx: SourceFile) -> list[SourceFile]:
        data = written_docx.data
        bad = [
            SourceFile("cut.docx", data[: len(data) // 2], "cut"),
            SourceFile("noise.docx", bytes(range(256)) * 8, "noise"),
            SourceFile("other.docx", zip_bytes({"readme.txt": b"not a word file"}), "other"),
            SourceFile(
                "broken-xml.docx",
                replace_member(data, "word/document.xml", b"<w:document><w:body>"),
                "broken",
            ),
        ]
        template = docx_template_path()
        if template is not None:
            bad.append(source(template, "docx/templates/default.docx"))
        return bad
