"""A CSV loader: each CSV or TSV file becomes one Markdown table."""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping, Sequence
from typing import Any

from ragloom import Document, Loader
from ragloom.loaders_builtin import decode_text
from ragloom.loading import LoadError, SourceFile


def _cell(value: str) -> str:
    return value.replace("|", "\\|").replace("\r\n", "<br>").replace("\n", "<br>").strip()


class CsvLoader(Loader):
    """Reads ``.csv`` (comma) and ``.tsv`` (tab) files, UTF-8, into one Markdown table per file.

    The first row is the header. Blank rows are skipped, short rows padded. Metadata:
    ``columns`` (the header) and ``rows`` (rows under it). A file that is not valid UTF-8, has
    an unterminated quote, no row, or more than ``max_rows`` rows is refused with a
    ``LoadError`` naming it.
    """

    step_id = "__DIST__/csv"
    suffixes = frozenset({".csv", ".tsv"})
    produces = frozenset({"markdown"})

    def __init__(self, max_rows: int = 100_000) -> None:
        if isinstance(max_rows, bool) or not isinstance(max_rows, int) or max_rows < 1:
            raise ValueError(f"max_rows must be an integer >= 1, got {max_rows!r}")
        self.max_rows = max_rows

    def config(self) -> Mapping[str, Any]:
        return {"max_rows": self.max_rows}

    def load(self, source: SourceFile) -> Sequence[Document]:
        text = decode_text(source)
        delimiter = "\t" if source.suffix == ".tsv" else ","
        try:
            rows = list(csv.reader(io.StringIO(text, newline=""), delimiter=delimiter,
                                   strict=True))
        except csv.Error as exc:
            raise LoadError(f"{source.path}: not {source.suffix[1:] or 'CSV'}: {exc}") from None
        rows = [row for row in rows if any(cell.strip() for cell in row)]
        if not rows:
            raise LoadError(f"{source.path}: no rows")
        if len(rows) - 1 > self.max_rows:
            raise LoadError(f"{source.path}: {len(rows) - 1} rows, more than {self.max_rows}")
        width = max(len(row) for row in rows)
        table = [[_cell(c) for c in row] + [""] * (width - len(row)) for row in rows]
        lines = ["| " + " | ".join(table[0]) + " |", "|" + " --- |" * width]
        lines += ["| " + " | ".join(row) + " |" for row in table[1:]]
        metadata = {**source.metadata, "columns": table[0], "rows": len(table) - 1}
        return [
            Document(
                id=source.doc_id,
                content="\n".join(lines) + "\n",
                content_format="markdown",
                metadata=metadata,
            )
        ]
