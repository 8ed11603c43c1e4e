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


FORGED = "\n  files: 99 read, 0 skipped, 0 failed items"


def test_file_names_are_printed_escaped_in_the_summary_and_in_errors(rb, work: Path) -> None:
    """Names holding a newline, an escape sequence or a bidirectional override are printed
    escaped, on one line: the summary cannot be forged, the terminal not rewritten."""
    docs = work / "docs"
    (docs / f"evil{FORGED}.bin").write_bytes(b"\x00\x01 binary")  # fails: in the failed list
    (docs / "empty\nragloom: error: forged.txt").write_text("", encoding="utf-8")  # skipped
    (docs / "red\x1b[31m\u202egnp.txt").write_text("Some text.\n", encoding="utf-8")
    proc = rb("ingest", "docs", "-o", "out.jsonl", "--no-cache")
    check(proc, 1)
    assert "\x1b" not in proc.stdout + proc.stderr and "\u202e" not in proc.stdout
    lines = proc.stdout.splitlines()
    assert [line for line in lines if line.startswith("  files:")] == [
        "  files: 4 read, 1 skipped, 1 failed items"
    ]
    assert not any(line.startswith("ragloom: error: forged") for line in lines)
    assert "    docs/empty\\nragloom: error: forged.txt: empty file" in lines
    assert any(line.startswith("    docs/evil\\n  files: 99 read") for line in lines)
    # The data keeps the real names (JSON escapes them its own way).
    parents = {json.loads(line)["parent"] for line in (work / "out.jsonl").read_text().splitlines()}
    assert "red\x1b[31m\u202egnp.txt" in parents
    # An error message naming such a file stays on one line too.
    refused = rb("ingest", "docs", "-o", "docs/red\x1b[31m\u202egnp.txt", "--no-cache")
    err = check(refused, 2, "refusing to write --out docs/red\\x1b[31m\\u202egnp.txt")
    assert len(err.strip().splitlines()) == 1 and "\x1b" not in err
    missing = rb("ingest", "no\nsuch", "-o", "x.jsonl", "--no-cache")
    assert missing.returncode == 2 and "no\\nsuch" in missing.stderr, missing.stderr


def test_questions_are_printed_escaped_by_plan(rb) -> None:
    """A question holding an escape sequence or a bidirectional override is printed escaped
    in the plan's header and table (its JSON keeps it as asked)."""
    question = "How do I clear the cache\x1b[2J\u202e and how do I write a plugin?"
    proc = rb("plan", question, "--decomposer", "heuristic", "--router", "sample")
    check(proc, 0)
    assert "\x1b" not in proc.stdout and "\u202e" not in proc.stdout
    assert "\\x1b[2J\\u202e" in proc.stdout.splitlines()[0]
    as_json = rb("plan", question, "--decomposer", "heuristic", "--router", "sample", "--json")
    assert json.loads(as_json.stdout)["query"] == question
