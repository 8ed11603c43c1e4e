"""What the summary says matches what happened, and file names are printed escaped (a name
holding a newline or a control character cannot forge a line of the summary)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from .conftest import check


def _unlistable_folder(root: Path) -> str:
    """A folder under ``root`` that cannot be listed, whoever runs the test (root included):
    nested so deep that its path is longer than the system allows (ENAMETOOLONG)."""
    fd = os.open(root, os.O_RDONLY)
    first = ""
    try:
        for i in range(20):
            name = chr(ord("a") + i) * 250
            first = first or name
            os.mkdir(name, dir_fd=fd)
            inner = os.open(name, os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = inner
        handle = os.open("deep.txt", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
        os.write(handle, b"Text nobody can reach.\n")
        os.close(handle)
    finally:
        os.close(fd)
    return first


def test_an_unlistable_subfolder_does_not_hide_the_files_read(rb, work: Path) -> None:
    first = _unlistable_folder(work / "docs")
    proc = rb("ingest", "docs", "-o", "out.jsonl", "--no-cache")
    check(proc, 1)
    assert "ragloom ingest: 3 files, 3 documents" in proc.stdout
    assert "  files: 3 read, 0 skipped, 1 failed items" in proc.stdout, proc.stdout
    assert "cannot list folder" in proc.stdout and f"docs/{first}" in proc.stdout
    parents = {json.loads(line)["parent"] for line in (work / "out.jsonl").read_text().splitlines()}
    assert parents == {"a.md", "b.txt", "c.py"}
