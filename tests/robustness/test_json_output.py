"""The JSONL output is always RFC 8259 JSON: a chunk whose metadata holds NaN or an infinity
is not written; it is reported as a failed item (stage ``write``)."""

from __future__ import annotations

import json
from pathlib import Path

from .conftest import check, pipeline_file


def _strict(line: str) -> object:
    def refuse(name: str) -> object:
        raise ValueError(f"non-standard JSON constant {name}")

    return json.loads(line, parse_constant=refuse)


def test_nan_metadata_is_reported_not_written(rb, work: Path) -> None:
    (work / "docs" / "bad.txt").write_text("scored badly\n", encoding="utf-8")
    spec = pipeline_file(work / "p.toml", 'chunker = "recursive"',
                         'import = "ragloom_rb_steps:NanMetadata"')
    proc = rb("ingest", "docs", "-c", spec, "--allow-imports", "-o", "out.jsonl",
              "--failures", "failures.jsonl", "--no-cache", "--json")
    check(proc, 1)
    (failure,) = json.loads(proc.stdout)["failures"]
    assert failure["stage"] == "write" and failure["source"] == "docs/bad.txt"
    assert "finite numbers" in failure["reason"]
    records = [_strict(line) for line in (work / "out.jsonl").read_text().splitlines()]
    assert {r["parent"] for r in records} == {"a.md", "b.txt", "c.py"}  # type: ignore[index]
    failures = [_strict(line) for line in (work / "failures.jsonl").read_text().splitlines()]
    assert failures == [failure]
