"""Rebuild ``examples/sample-docs/architecture-overview.json``, the sample Docling document.

It is built with docling-core's document API (no PDF conversion, no models), so the sample is
small and reproducible. Needs docling-core: ``pip install docling-core``. Run it from anywhere:

    python examples/tools/make_docling_sample.py
"""

from __future__ import annotations

import json
from pathlib import Path

from docling_core.types.doc import DocItemLabel, DoclingDocument, TableCell, TableData

OUT = Path(__file__).resolve().parents[1] / "sample-docs" / "architecture-overview.json"

STEPS = [
    ("Source", "feeds documents from files, a list or an async iterator"),
    ("Chunker", "splits each document into chunks with exact spans"),
    ("Router", "sends each document to the chunker for its format"),
    ("Cache", "replays outputs of unchanged items from SQLite"),
]


def build() -> DoclingDocument:
    doc = DoclingDocument(name="architecture-overview")
    doc.add_title(text="ragloom architecture overview")
    doc.add_text(
        label=DocItemLabel.PARAGRAPH,
        text=(
            "ragloom runs pipelines of asynchronous steps. Each step maps one item to zero or "
            "more items, and the engine keeps the output in input order."
        ),
    )
    doc.add_heading(text="Steps", level=1)
    doc.add_text(
        label=DocItemLabel.PARAGRAPH,
        text="A typical ingestion pipeline chains four kinds of steps:",
    )
    steps = doc.add_list_group(name="steps")
    for name, role in STEPS:
        doc.add_list_item(text=f"{name}: {role}.", parent=steps)
    doc.add_heading(text="Failure handling", level=1)
    doc.add_text(
        label=DocItemLabel.PARAGRAPH,
        text=(
            "Every item ends either as output or as an ItemFailed event with the reason. A "
            "policy decides how often a failing item is retried and whether a final failure "
            "aborts the run."
        ),
    )
    doc.add_heading(text="Component kinds", level=1)
    rows = [
        ("Kind", "Entry-point group", "Example"),
        ("chunker", "ragloom.chunkers", "recursive"),
        ("router", "ragloom.routers", "keyword"),
        ("decomposer", "ragloom.decomposers", "heuristic"),
    ]
    cells = [
        TableCell(
            text=text,
            start_row_offset_idx=r,
            end_row_offset_idx=r + 1,
            start_col_offset_idx=c,
            end_col_offset_idx=c + 1,
            column_header=r == 0,
        )
        for r, row in enumerate(rows)
        for c, text in enumerate(row)
    ]
    caption = doc.add_text(label=DocItemLabel.CAPTION, text="Component kinds and their groups.")
    doc.add_table(
        data=TableData(num_rows=len(rows), num_cols=3, table_cells=cells), caption=caption
    )
    return doc


def main() -> None:
    data = build().export_to_dict()
    OUT.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {OUT} ({OUT.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
