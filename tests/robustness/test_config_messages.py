"""Friendly configuration: format names in filters (aliases, did-you-mean), located in the
user's pipeline file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .conftest import check

pytestmark = pytest.mark.usefixtures("needs_text")


@pytest.fixture
def needs_text() -> None:
    pytest.importorskip("ragloom_text")


ROUTED = """[[steps.routes]]
filter = {{ content_format = {{ include_formats = [{formats}] }} }}
step = {{ chunker = "markdown", params = {{ chunk_size = 400 }} }}
[steps.default]
chunker = "recursive"
params = {{ chunk_size = 400 }}"""


def test_a_common_alias_routes_to_its_format(rb, work: Path) -> None:
    spec = work / "p.toml"
    spec.write_text("version = 1\n[[steps]]\n" + ROUTED.format(formats='"md"') + "\n", "utf-8")
    proc = rb("ingest", "docs", "-c", spec, "-o", "out.jsonl", "--no-cache", "-q")
    check(proc, 0)
    chunks = [json.loads(line) for line in (work / "out.jsonl").read_text().splitlines()]
    assert {c["parent"] for c in chunks} == {"a.md", "b.txt", "c.py"}
    # The Markdown file went to the Markdown chunker (it records the headings), the rest not.
    for chunk in chunks:
        assert ("headings" in chunk["metadata"]) == (chunk["parent"] == "a.md"), chunk


def test_a_misspelt_format_is_refused_where_it_is_written(rb, work: Path) -> None:
    spec = work / "p.toml"
    spec.write_text(
        "version = 1\n[[steps]]\n" + ROUTED.format(formats='"markdwon"') + "\n", "utf-8"
    )
    proc = rb("ingest", "docs", "-c", spec, "-o", "out.jsonl", "--no-cache")
    err = check(
        proc, 2,
        "steps[0].routes[0].filter.content_format",
        "unknown content format 'markdwon' (did you mean 'markdown'?)",
    )
    assert "p.toml" in err
    assert not (work / "out.jsonl").exists()
