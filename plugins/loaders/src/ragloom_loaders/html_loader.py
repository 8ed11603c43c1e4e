"""``HtmlLoader``: an HTML page's main text, as Markdown."""

from __future__ import annotations

import codecs
import re
from typing import TYPE_CHECKING, Any

from ragloom.loaders_builtin import sniff_format
from ragloom.loading import Loader, LoadError, SourceFile

from ._common import make_document, require_bytes

if TYPE_CHECKING:
    from ragloom.models import Document

__all__ = ["HtmlLoader", "decode_html"]

# A charset declared in the first bytes: <meta charset="x"> or <meta http-equiv ... charset=x>.
_META_CHARSET = re.compile(rb"""<meta[^>]*?charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.I)
# Any tag: a page with none is not HTML (plain text named .html).
_TAG = re.compile(r"<(?:!doctype|[a-z][a-z0-9-]*)(?:\s|/?>)", re.I)
_PROBE = 8192
# What browsers decode when a page declares these (the WHATWG Encoding Standard's labels).
_ALIASES = {
    "iso-8859-1": "cp1252",
    "iso8859-1": "cp1252",
    "latin1": "cp1252",
    "latin-1": "cp1252",
    "l1": "cp1252",
    "ascii": "cp1252",
    "us-ascii": "cp1252",
    "x-user-defined": "cp1252",
    # a page that declares UTF-16 but has no byte-order mark is read as UTF-8
    "utf-16": "utf-8",
    "utf-16le": "utf-8",
    "utf-16be": "utf-8",
}


def decode_html(source: SourceFile) -> tuple[str, str]:
    """``(text, encoding)`` of an HTML file, decoded as a browser would.

    A byte-order mark wins, then a charset declared in a ``<meta>`` among the first 8 KB, then
    UTF-8 if the bytes are valid UTF-8, else windows-1252 (the web's legacy default). Bytes
    invalid in the declared encoding become U+FFFD, as in a browser.

    Raises:
        LoadError: the file is empty or binary (a NUL byte in its first 8 KB, without a UTF-16
            byte-order mark).
    """
    data = require_bytes(source)
    for bom, encoding in (
        (codecs.BOM_UTF8, "utf-8"),
        (codecs.BOM_UTF16_LE, "utf-16-le"),
        (codecs.BOM_UTF16_BE, "utf-16-be"),
    ):
        if data.startswith(bom):
            return data[len(bom) :].decode(encoding, "replace"), encoding
    nul = data.find(b"\0", 0, _PROBE)
    if nul >= 0:
        raise LoadError(f"{source.path}: not HTML: binary data (NUL byte at offset {nul})")
    declared = _META_CHARSET.search(data[:_PROBE])
    if declared is not None:
        label = declared.group(1).decode("ascii").lower()
        label = _ALIASES.get(label, label)
        try:
            encoding = codecs.lookup(label).name
        except LookupError:
            encoding = ""
        if encoding:
            return data.decode(encoding, "replace"), encoding
    try:
        return data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        return data.decode("cp1252", "replace"), "cp1252"


class HtmlLoader(Loader):
    """HTML pages (``.html``, ``.htm``, ``.xhtml``) to Markdown documents.

    Keeps the main text with its headings, lists, tables, quotes and code blocks as Markdown
    (``content_format="markdown"``); ``metadata["title"]`` is the page's ``<title>`` (else its
    first ``<h1>``), ``metadata["lang"]`` its ``lang`` attribute. With ``main_only`` (default)
    only the main content is kept: the page's ``<main>`` (or ``role="main"``, or its only
    ``<article>``), never navigation, asides, site headers and footers; with
    ``main_only=False`` the whole body is.

    Files without a suffix are sniffed: a document that opens with ``<!DOCTYPE html``,
    ``<html``, ``<head`` or ``<body``.

    Raises :class:`~ragloom.loading.LoadError` for an empty or binary file, a file with no
    markup at all (plain text named ``.html``), and a page with no text.
    """

    step_id = "ragloom-loaders/html"
    suffixes = frozenset({".html", ".htm", ".xhtml"})
    produces = frozenset({"markdown"})

    def __init__(self, main_only: bool = True) -> None:
        if not isinstance(main_only, bool):
            raise TypeError(f"main_only must be a bool, got {type(main_only).__name__}")
        self.main_only = main_only

    def config(self) -> dict[str, Any]:
        return {"main_only": self.main_only}

    def __repr__(self) -> str:
        return f"HtmlLoader(main_only={self.main_only})"

    def sniff(self, head: bytes) -> bool:
        return sniff_format(head) == "HTML"

    def load(self, source: SourceFile) -> list[Document]:
        from ._html import TooDeepError, html_to_markdown

        text, _encoding = decode_html(source)
        if not _TAG.search(text):
            raise LoadError(
                f"{source.path}: not HTML: no markup found (plain text named "
                f"{source.suffix or 'without a suffix'}?)"
            )
        try:
            page = html_to_markdown(text, main_only=self.main_only)
        except TooDeepError as exc:
            raise LoadError(f"{source.path}: cannot convert this HTML: {exc}") from None
        if not page.markdown.strip():
            raise LoadError(
                f"{source.path}: no text in the page (an empty body, or only scripts, "
                "images and navigation)"
            )
        extra: dict[str, Any] = {}
        if page.title:
            extra["title"] = page.title
        if page.lang:
            extra["lang"] = page.lang
        return [make_document(source, page.markdown, "markdown", extra)]
