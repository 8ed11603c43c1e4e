"""Helpers for ragloom-loaders' tests: real text, and files written from it."""

from __future__ import annotations

import inspect
import io
import json
import zipfile
from pathlib import Path

from ragloom.loading import SourceFile

REPO = Path(__file__).resolve().parents[3]
SAMPLE_DOCS = REPO / "examples" / "sample-docs"

#: Standard-library modules whose docstrings are the real text typeset into test documents.
TEXT_MODULES = ("json", "textwrap", "difflib", "shlex", "argparse")


def module_doc(name: str, max_lines: int = 40) -> list[str]:
    """The first lines of a standard-library module's docstring (ASCII, tabs expanded)."""
    module = __import__(name)
    doc = inspect.getdoc(module) or ""
    lines = [line.expandtabs().rstrip() for line in doc.splitlines()][:max_lines]
    return [line.encode("ascii", "replace").decode() for line in lines]


def source(path: Path, name: str | None = None) -> SourceFile:
    shown = name or path.name
    return SourceFile(shown, path.read_bytes(), shown)


def docx_template_path() -> Path | None:
    """The empty document python-docx ships as its template (a real DOCX without text)."""
    import docx

    path = Path(docx.__file__).parent / "templates" / "default.docx"
    return path if path.is_file() else None


def pydoc_page(module_name: str) -> bytes:
    import pydoc

    module = __import__(module_name)
    html = pydoc.HTMLDoc()
    return html.page(pydoc.describe(module), html.document(module, module_name)).encode()


def build_docx(*, with_table: bool = True) -> bytes:
    """A Word document written with python-docx from real text (standard-library docstrings)."""
    import docx

    document = docx.Document()
    document.core_properties.title = "Standard library notes"
    document.add_heading("Standard library notes", 0)
    for name in TEXT_MODULES[:3]:
        lines = module_doc(name, 12)
        document.add_heading(f"The {name} module", 1)
        document.add_paragraph(" ".join(line.strip() for line in lines[:3]))
        document.add_heading("First lines", 2)
        for line in lines[3:6]:
            if line.strip():
                document.add_paragraph(line.strip(), style="List Bullet")
                document.add_paragraph(f"{name}: {line.strip()[:20]}", style="List Bullet 2")
        for line in lines[6:9]:
            if line.strip():
                document.add_paragraph(line.strip(), style="List Number")
    if with_table:
        table = document.add_table(rows=1, cols=3)
        header = table.rows[0].cells
        header[0].text, header[1].text, header[2].text = "module", "first line", "a|b"
        for name in TEXT_MODULES:
            row = table.add_row().cells
            row[0].text = name
            row[1].text = module_doc(name, 1)[0]
            row[2].text = str(len(module_doc(name)))
        merged = table.add_row().cells
        merged[0].merge(merged[2])
        merged[0].text = "merged across three columns"
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def zip_bytes(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def replace_member(docx_bytes: bytes, name: str, data: bytes) -> bytes:
    with zipfile.ZipFile(io.BytesIO(docx_bytes)) as archive:
        members = {n: archive.read(n) for n in archive.namelist()}
    members[name] = data
    return zip_bytes(members)


def json_dumps(value: object) -> bytes:
    return json.dumps(value).encode()
