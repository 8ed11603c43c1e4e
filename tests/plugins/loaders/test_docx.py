"""DocxLoader: headings, lists and tables of a document written from real text; bad input."""

from __future__ import annotations

import io

import pytest
from loader_files import TEXT_MODULES, build_docx, module_doc, replace_member, zip_bytes
from ragloom.loaders_builtin import LoaderSet
from ragloom.loading import LoadError, SourceFile
from ragloom_loaders import DocxLoader


def test_structure_of_a_written_document(written_docx: SourceFile) -> None:
    [doc] = DocxLoader().load(written_docx)
    text = doc.content
    assert doc.content_format == "markdown" and doc.id == written_docx.doc_id
    assert doc.metadata["title"] == "Standard library notes"
    assert text.startswith("# Standard library notes\n\n# The json module\n\nJSON (JavaScript")
    assert "\n## First lines\n\n- :mod:`json` exposes an API familiar" in text
    assert "\n  - json: :mod:`json` exposes\n" in text  # a second-level bullet, indented
    first_numbered = module_doc("json", 12)[6].strip()
    assert f"\n1. {first_numbered}\n2. " in text
    assert "| module | first line | a\\|b |\n|---|---|---|\n" in text
    for name in TEXT_MODULES:
        assert f"| {name} | {module_doc(name, 1)[0]} |" in text
    assert "| merged across three columns |  |  |" in text  # a merged cell, once


def test_title_falls_back_to_the_first_heading() -> None:
    import docx

    document = docx.Document()
    document.add_heading("Release checklist", 1)
    document.add_paragraph("Tag, build, upload.")
    buffer = io.BytesIO()
    document.save(buffer)
    [doc] = DocxLoader().load(SourceFile("c.docx", buffer.getvalue(), "c"))
    assert doc.metadata["title"] == "Release checklist"
    assert doc.content == "# Release checklist\n\nTag, build, upload."


def test_a_document_with_only_a_table() -> None:
    import docx

    document = docx.Document()
    table = document.add_table(rows=2, cols=2)
    for (r, c), text in {(0, 0): "k", (0, 1): "v", (1, 0): "a", (1, 1): "b"}.items():
        table.cell(r, c).text = text
    buffer = io.BytesIO()
    document.save(buffer)
    [doc] = DocxLoader().load(SourceFile("t.docx", buffer.getvalue(), "t"))
    assert doc.content == "| k | v |\n|---|---|\n| a | b |"


def test_the_empty_template_python_docx_ships(docx_template: SourceFile) -> None:
    with pytest.raises(LoadError, match=r"^docx/templates/default\.docx: no text in the document$"):
        DocxLoader().load(docx_template)


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("cut", r"not a readable DOCX: BadZipFile"),
        ("noise", r"not a DOCX: not a ZIP archive"),
        ("other-zip", r"not a readable DOCX: "),
        ("broken-xml", r"not a readable DOCX: XMLSyntaxError"),
        ("empty", r"empty file"),
    ],
)
def test_bad_docx_is_refused_clearly(name: str, problem: str) -> None:
    data = build_docx(with_table=False)
    bad = {
        "cut": data[: len(data) // 2],
        "noise": bytes(range(256)) * 8,
        "other-zip": zip_bytes({"mimetype": b"application/vnd.oasis.opendocument.text"}),
        "broken-xml": replace_member(data, "word/document.xml", b"<w:document><w:body>"),
        "empty": b"",
    }[name]
    with pytest.raises(LoadError, match=rf"^in/{name}\.docx: {problem}"):
        DocxLoader().load(SourceFile(f"in/{name}.docx", bad, name))


def test_unsuffixed_docx_is_sniffed(written_docx: SourceFile) -> None:
    loaders = LoaderSet.from_registry()
    source = SourceFile("mail/attachment", written_docx.data, "attachment")
    assert loaders.name_of(loaders.pick(source)) == "docx"


def test_a_zip_bomb_is_refused_unread(monkeypatch: pytest.MonkeyPatch) -> None:
    import zipfile

    from ragloom_loaders import docx_loader

    monkeypatch.setattr(docx_loader, "MAX_EXPANDED_BYTES", 4_000_000)  # 512 MiB by default
    data = build_docx(with_table=False)
    buffer = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as original, zipfile.ZipFile(
        buffer, "w", zipfile.ZIP_DEFLATED
    ) as bomb:
        for info in original.infolist():
            bomb.writestr(info, original.read(info.filename))
        bomb.writestr("word/media/padding.bin", bytes(5_000_000))
    payload = buffer.getvalue()
    assert len(payload) < 100_000
    with pytest.raises(LoadError, match=r"^bomb\.docx: refused: its parts expand to \d+ bytes"):
        DocxLoader().load(SourceFile("bomb.docx", payload, "bomb"))
    assert DocxLoader().load(SourceFile("fine.docx", data, "fine"))
