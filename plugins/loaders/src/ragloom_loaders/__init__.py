"""ragloom-loaders: read HTML, PDF and DOCX files into documents.

``HtmlLoader`` (``ragloom.loaders: html``), ``PdfLoader`` (``pdf``) and ``DocxLoader``
(``docx``). Text, Markdown, reStructuredText, code and Docling JSON are read by the loaders
built into ragloom itself.

Imports are lazy: importing the package (or a loader's module) loads neither selectolax,
pypdfium2 nor python-docx; each is imported the first time a file of its format is loaded.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_EXPORTS: dict[str, str] = {
    "HtmlLoader": "html_loader",
    "PdfLoader": "pdf_loader",
    "DocxLoader": "docx_loader",
}

__all__ = ["DocxLoader", "HtmlLoader", "PdfLoader", "__version__"]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'ragloom_loaders' has no attribute {name!r}")
    return getattr(importlib.import_module(f"ragloom_loaders.{module}"), name)


if TYPE_CHECKING:  # pragma: no cover
    from .docx_loader import DocxLoader
    from .html_loader import HtmlLoader
    from .pdf_loader import PdfLoader
