"""``PdfLoader``: a PDF's text, page by page, with the exact span of every page."""

from __future__ import annotations

import re
import threading
from typing import TYPE_CHECKING, Any

from ragloom.loading import Loader, LoadError, SourceFile

from ._common import make_document, require_bytes

if TYPE_CHECKING:
    from ragloom.models import Document

__all__ = ["PdfLoader"]

# PDFium is not thread-safe, even across documents: every call into it holds this lock.
_PDFIUM_LOCK = threading.Lock()
# PDFium's error codes (FPDF_ERR_*) that mean something to a user.
_PASSWORD, _SECURITY = 4, 5
# C0 controls but tab and newline (PDFium marks soft hyphens \x02 or U+FFFE), noncharacters.
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\ufffe\uffff]")


def _clean(text: str) -> str:
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return _CONTROLS.sub("", text).strip()


class PdfLoader(Loader):
    """PDF files to one text document each, with page spans.

    Text is extracted with PDFium (pypdfium2), page by page, and the pages joined with
    ``page_separator``. ``metadata["pages"]`` lists every page's exact ``[start, end)`` span in
    the document's content (``content[start:end]`` is that page's text; an empty page has an
    empty span), ``metadata["page_count"]`` the number of pages, ``metadata["title"]`` the
    PDF's title when it has one.

    Raises :class:`~ragloom.loading.LoadError` for an empty file, bytes without a ``%PDF-``
    header, a damaged PDF PDFium cannot open, an encrypted PDF (a password is needed), and a
    PDF without extractable text (scanned pages: there is no OCR here).
    """

    step_id = "ragloom-loaders/pdf"
    suffixes = frozenset({".pdf"})
    produces = frozenset({"text"})

    def __init__(self, page_separator: str = "\n\n") -> None:
        if not isinstance(page_separator, str):
            raise TypeError(
                f"page_separator must be a str, got {type(page_separator).__name__}"
            )
        self.page_separator = page_separator

    def config(self) -> dict[str, Any]:
        return {"page_separator": self.page_separator}

    def __repr__(self) -> str:
        return f"PdfLoader(page_separator={self.page_separator!r})"

    def sniff(self, head: bytes) -> bool:
        return b"%PDF-" in head[:1024]

    def load(self, source: SourceFile) -> list[Document]:
        data = require_bytes(source)
        if b"%PDF-" not in data[:1024]:
            raise LoadError(f"{source.path}: not a PDF: no %PDF- header in its first 1024 bytes")
        with _PDFIUM_LOCK:
            pages, title = self._extract(source, data)
        spans: list[list[int]] = []
        pieces: list[str] = []
        position = 0
        for number, text in enumerate(pages):
            if number:
                pieces.append(self.page_separator)
                position += len(self.page_separator)
            pieces.append(text)
            spans.append([position, position + len(text)])
            position += len(text)
        content = "".join(pieces)
        if not any(pages):
            raise LoadError(
                f"{source.path}: no extractable text in {len(pages)} page(s) (a scanned or "
                "image-only PDF? OCR is not supported)"
            )
        extra: dict[str, Any] = {"page_count": len(pages), "pages": spans}
        if title:
            extra["title"] = title
        return [make_document(source, content, "text", extra)]

    @staticmethod
    def _extract(source: SourceFile, data: bytes) -> tuple[list[str], str | None]:
        import pypdfium2 as pdfium

        try:
            document = pdfium.PdfDocument(data)
        except pdfium.PdfiumError as exc:
            code = getattr(exc, "err_code", None)  # pypdfium2 5; 4.x says it in words only
            if code == _PASSWORD or "password" in str(exc).lower():
                raise LoadError(
                    f"{source.path}: encrypted PDF: it cannot be read without its password"
                ) from None
            if code == _SECURITY or "security" in str(exc).lower():
                raise LoadError(
                    f"{source.path}: PDF protected by an unsupported security handler"
                ) from None
            raise LoadError(f"{source.path}: damaged PDF: {exc}") from None
        try:
            pages: list[str] = []
            for index in range(len(document)):
                try:
                    page = document[index]
                    textpage = page.get_textpage()
                    raw = textpage.get_text_bounded()  # the whole page, in 4.x and 5.x
                except pdfium.PdfiumError as exc:
                    raise LoadError(
                        f"{source.path}: damaged PDF: page {index + 1} cannot be read: {exc}"
                    ) from None
                textpage.close()
                page.close()
                pages.append(_clean(raw))
            title = (document.get_metadata_dict().get("Title") or "").strip()
        finally:
            document.close()
        return pages, _clean(title) or None
