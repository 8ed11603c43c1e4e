"""``DocxLoader``: a Word document's body as Markdown."""

from __future__ import annotations

import io
import re
import zipfile
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from ragloom.loaders_builtin import sniff_format
from ragloom.loading import Loader, LoadError, SourceFile

from ._common import make_document, require_bytes

if TYPE_CHECKING:
    from ragloom.models import Document

__all__ = ["DocxLoader"]

_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_HEADING_STYLE = re.compile(r"^heading\s*([1-9])$", re.I)
_LIST_STYLE = re.compile(r"^list\s+(bullet|number|continue|paragraph)(?:\s+([2-9]))?$", re.I)
_WS = re.compile(r"[ \t\u00a0]+")
#: Largest total size the parts of one DOCX may expand to (a ZIP bomb is refused unread).
MAX_EXPANDED_BYTES = 512 * 1024 * 1024
_ORDERED_FORMATS = frozenset(
    {
        "decimal", "decimalZero", "upperRoman", "lowerRoman", "upperLetter", "lowerLetter",
        "ordinal", "cardinalText", "ordinalText", "decimalEnclosedCircle",
        "decimalEnclosedParen", "decimalEnclosedFullstop",
    }
)


def _val(element: Any, name: str) -> str | None:
    child = element.find(f"{_W}{name}") if element is not None else None
    return child.get(f"{_W}val") if child is not None else None


class _Numbering:
    """The list formats of a document's numbering definitions: ordered or bulleted."""

    def __init__(self, document: Any) -> None:
        self.formats: dict[tuple[str, int], str] = {}
        try:
            root = document.part.numbering_part.element
        except (KeyError, NotImplementedError, AttributeError):
            return  # no numbering part: lists fall back to their style names
        abstract: dict[str, dict[int, str]] = {}
        for node in root.iter(f"{_W}abstractNum"):
            levels = abstract.setdefault(node.get(f"{_W}abstractNumId") or "", {})
            for lvl in node.iter(f"{_W}lvl"):
                fmt = _val(lvl, "numFmt")
                if fmt is not None:
                    levels[int(lvl.get(f"{_W}ilvl") or 0)] = fmt
        for num in root.iter(f"{_W}num"):
            levels = abstract.get(_val(num, "abstractNumId") or "", {})
            for level, fmt in levels.items():
                self.formats[(num.get(f"{_W}numId") or "", level)] = fmt

    def ordered(self, num_id: str, level: int) -> bool | None:
        fmt = self.formats.get((num_id, level))
        return None if fmt is None else fmt in _ORDERED_FORMATS


def _style_chain(paragraph: Any) -> Iterator[Any]:
    style = paragraph.style
    seen = 0
    while style is not None and seen < 10:
        yield style
        style = style.base_style
        seen += 1


def _heading_level(paragraph: Any) -> int | None:
    for style in _style_chain(paragraph):
        name = (style.name or "").strip()
        if name.lower() == "title":
            return 1
        match = _HEADING_STYLE.match(name)
        if match:
            return int(match.group(1))
    outline = _val(paragraph._p.pPr, "outlineLvl")
    if outline is not None and outline.isdigit() and int(outline) < 9:
        return int(outline) + 1
    return None


def _list_info(paragraph: Any, numbering: _Numbering) -> tuple[str, int, bool] | None:
    """``(list id, level, ordered)`` of a list paragraph, else ``None``."""
    num_pr = None
    pPr = paragraph._p.pPr
    if pPr is not None and pPr.numPr is not None:
        num_pr = pPr.numPr
    style_name = ""
    for style in _style_chain(paragraph):
        style_name = style_name or (style.name or "")
        spPr = style.element.pPr
        if num_pr is None and spPr is not None and spPr.numPr is not None:
            num_pr = spPr.numPr
    by_name = _LIST_STYLE.match(style_name.strip())
    if num_pr is None and by_name is None:
        return None
    num_id = _val(num_pr, "numId") if num_pr is not None else None
    if num_id == "0":
        return None  # numbering explicitly removed
    ilvl = _val(num_pr, "ilvl") if num_pr is not None else None
    level = int(ilvl) if ilvl and ilvl.isdigit() else 0
    if ilvl is None and by_name is not None and by_name.group(2):
        level = int(by_name.group(2)) - 1
    ordered = numbering.ordered(num_id or "", level)
    if ordered is None:
        ordered = by_name is not None and by_name.group(1).lower() == "number"
    return num_id or style_name, level, ordered


def _cell_text(cell: Any) -> str:
    parts: list[str] = []
    for item in cell.iter_inner_content():
        if hasattr(item, "rows"):
            for row in item.rows:
                parts.append(" ".join(_cell_text(c) for c in _unique_cells(row)))
        else:
            parts.append(item.text)
    return _WS.sub(" ", " ".join(p.replace("\n", " ") for p in parts)).strip()


def _unique_cells(row: Any) -> list[Any]:
    cells: list[Any] = []
    for cell in row.cells:  # a merged cell is repeated once per grid column it spans
        if not cells or cell._tc is not cells[-1]._tc:
            cells.append(cell)
    return cells


def _table(table: Any) -> str:
    rows = [[_cell_text(c) for c in _unique_cells(row)] for row in table.rows]
    rows = [row for row in rows if any(row)]
    if not rows:
        return ""
    width = max(len(row) for row in rows)
    if width == 1:
        return "\n\n".join(row[0] for row in rows)
    cells = [[c.replace("|", "\\|") for c in row] + [""] * (width - len(row)) for row in rows]
    lines = ["| " + " | ".join(cells[0]) + " |", "|" + "---|" * width]
    lines.extend("| " + " | ".join(row) + " |" for row in cells[1:])
    return "\n".join(lines)


def _markdown(document: Any) -> tuple[str, str | None]:
    numbering = _Numbering(document)
    blocks: list[str] = []
    first_heading: str | None = None
    counters: dict[tuple[str, int], int] = {}
    in_list = False
    for item in document.iter_inner_content():
        if hasattr(item, "rows"):
            text = _table(item)
            if text:
                blocks.append(text)
            in_list = False
            continue
        text = item.text.strip()
        if not text:
            continue
        level = _heading_level(item)
        if level is not None:
            line = _WS.sub(" ", text.replace("\n", " "))
            first_heading = first_heading or line
            blocks.append(f"{'#' * level} {line}")
            in_list = False
            continue
        info = _list_info(item, numbering)
        if info is None:
            blocks.append(text)
            in_list = False
            continue
        list_id, depth, ordered = info
        for key in [k for k in counters if k[0] == list_id and k[1] > depth]:
            del counters[key]  # a shallower item restarts the deeper levels
        number = counters.get((list_id, depth), 0) + 1
        counters[(list_id, depth)] = number
        marker = f"{number}. " if ordered else "- "
        indent = "   " * depth if ordered else "  " * depth
        body = text.replace("\n", "\n" + indent + " " * len(marker))
        line = f"{indent}{marker}{body}"
        if in_list:
            blocks[-1] += "\n" + line
        else:
            blocks.append(line)
        in_list = True
    return "\n\n".join(blocks), first_heading


def _check_expansion(source: SourceFile, data: bytes) -> None:
    """Refuse an archive whose parts declare more than :data:`MAX_EXPANDED_BYTES` in all.

    ``zipfile`` never inflates a member past its declared size, so the declaration bounds
    what reading the document can cost.
    """
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            expanded = sum(info.file_size for info in archive.infolist())
    except (zipfile.BadZipFile, ValueError, OSError) as exc:
        raise LoadError(
            f"{source.path}: not a readable DOCX: {type(exc).__name__}: {exc}"
        ) from None
    if expanded > MAX_EXPANDED_BYTES:
        raise LoadError(
            f"{source.path}: refused: its parts expand to {expanded} bytes, over the "
            f"{MAX_EXPANDED_BYTES} a Word document may take (a ZIP bomb?)"
        )


class DocxLoader(Loader):
    """Word documents (``.docx``) to Markdown documents.

    Reads the body in order with python-docx: paragraphs; ``Title`` and ``Heading N`` styles
    (or an outline level) as ``#`` headings; bulleted and numbered list paragraphs as ``-`` and
    ``1.`` items, indented by level; tables as Markdown tables (a merged cell once, a nested
    table's text inside its cell). Headers, footers, comments and footnotes are not part of
    the text. ``metadata["title"]`` is the document's title property, else its first heading.

    Raises :class:`~ragloom.loading.LoadError` for an empty file, bytes that are not a ZIP
    archive, a ZIP that is not a Word document (or is damaged), an archive whose parts expand
    past :data:`MAX_EXPANDED_BYTES`, and a document with no text.
    """

    step_id = "ragloom-loaders/docx"
    suffixes = frozenset({".docx"})
    produces = frozenset({"markdown"})

    def sniff(self, head: bytes) -> bool:
        return sniff_format(head) == "DOCX"

    def load(self, source: SourceFile) -> list[Document]:
        data = require_bytes(source)
        if not data.startswith(b"PK"):
            raise LoadError(f"{source.path}: not a DOCX: not a ZIP archive")
        _check_expansion(source, data)
        import docx

        try:
            document = docx.Document(io.BytesIO(data))
        except Exception as exc:  # noqa: BLE001 - zipfile, lxml and python-docx all raise
            raise LoadError(
                f"{source.path}: not a readable DOCX: {type(exc).__name__}: {exc}"
            ) from None
        try:
            content, first_heading = _markdown(document)
            title = (document.core_properties.title or "").strip()
        except Exception as exc:  # noqa: BLE001 - a damaged part surfaces while reading
            raise LoadError(
                f"{source.path}: damaged DOCX: {type(exc).__name__}: {exc}"
            ) from None
        if not content.strip():
            raise LoadError(f"{source.path}: no text in the document")
        title = title or (first_heading or "")
        extra: dict[str, Any] = {"title": title} if title else {}
        return [make_document(source, content, "markdown", extra)]
