"""Errors, not tracebacks: every bad input ends in one clear line and a documented status."""

from __future__ import annotations

import json
import os
from pathlib import Path
from urllib.parse import unquote_to_bytes

import pytest

from .conftest import check, pipeline_file, snapshot


def test_a_file_name_that_is_not_utf8_is_ingested_with_a_reversible_id(rb, work: Path) -> None:
    raw = os.fsencode(work / "docs") + b"/caf\xe9 100%.txt"
    try:
        with open(raw, "wb") as handle:
            handle.write(b"A file whose name is Latin-1.\n")
    except OSError:
        pytest.skip("this file system refuses names that are not UTF-8")
    proc = rb("ingest", "docs", "-o", "out.jsonl", "--no-cache", "--json")
    check(proc, 0)
    parents = {json.loads(line)["parent"] for line in (work / "out.jsonl").read_text().splitlines()}
    assert parents == {"a.md", "b.txt", "c.py", "caf%E9 100%25.txt"}
    # The id decodes back to the file name's bytes.
    assert unquote_to_bytes("caf%E9 100%25.txt") == b"caf\xe9 100%.txt"


@pytest.mark.parametrize(
    ("setup", "args", "phrase"),
    [
        (None, ["plan", "--file", "missing.txt"], "no such file: missing.txt"),
        (None, ["plan", "--file", "docs"], "docs is a folder"),
        ("latin1", ["plan", "--file", "latin1.txt"], "latin1.txt is not UTF-8 text"),
        (None, ["plan", ""], "no questions given"),
        (None, ["plan", "   ", "\t"], "no questions given"),
        (None, ["plan"], "give a QUESTION"),
        ("blank", ["plan", "--file", "blank.txt"], "no questions given"),
    ],
    ids=["missing", "folder", "not-utf8", "empty", "whitespace", "none", "blank-lines"],
)
def test_plan_usage_errors(rb, work: Path, setup, args, phrase) -> None:
    if setup == "latin1":
        (work / "latin1.txt").write_bytes(b"caf\xe9 au lait?\n")
    if setup == "blank":
        (work / "blank.txt").write_text("\n  \n\n", encoding="utf-8")
    check(rb(*args), 2, phrase)


@pytest.mark.parametrize(
    "cache", ["old.jsonl/cache.sqlite", "docs/a.md"], ids=["under-a-file", "not-sqlite"]
)
def test_a_pipeline_cache_path_that_cannot_be_used(rb, work: Path, cache: str) -> None:
    spec = pipeline_file(
        work / "p.toml", 'chunker = "recursive"', head=f'[cache]\npath = "{cache}"'
    )
    before = snapshot(work / "docs", work / "old.jsonl")
    check(rb("ingest", "docs", "-c", spec, "-o", "out.jsonl"), 2, "cache")
    assert snapshot(work / "docs", work / "old.jsonl") == before
    assert not (work / "out.jsonl").exists()


@pytest.mark.parametrize(
    ("size", "phrase"),
    [("30GB", "is more than"), ("1e30", "is not a size"), ("0", "at least 1 byte"),
     ("-5", "is not a size"), ("lots", "is not a size"), ("9" * 400, "is more than")],
)
def test_max_file_size_out_of_range(rb, size: str, phrase: str) -> None:
    check(rb("ingest", "docs", "--max-file-size", size, "--no-cache"), 2, phrase)


def test_too_many_chained_steps(rb, work: Path) -> None:
    spec = work / "deep.toml"
    spec.write_text("version = 1\n" + '[[steps]]\nchunker = "recursive"\n' * 500,
                    encoding="utf-8")
    check(rb("ingest", "docs", "-c", spec, "-o", "out.jsonl", "--no-cache"), 2,
          "500 steps in one chain", "at most 256")


def test_a_long_chain_within_the_limit_runs(rb, work: Path) -> None:
    spec = work / "long.toml"
    spec.write_text("version = 1\n" + '[[steps]]\nchunker = "recursive"\n' * 256,
                    encoding="utf-8")
    check(rb("ingest", "docs", "-c", spec, "-o", "out.jsonl", "--no-cache", "-q"), 0)


def test_deeply_nested_routes(rb, work: Path) -> None:
    node: dict[str, object] = {"chunker": "recursive"}
    for _ in range(300):
        node = {"default": node}
    spec = work / "nested.json"
    spec.write_text(json.dumps({"steps": [node]}), encoding="utf-8")
    check(rb("ingest", "docs", "-c", spec, "-o", "out.jsonl", "--no-cache"), 2, "nested.json")


def test_on_failure_abort_names_the_item_and_the_step(rb, work: Path) -> None:
    (work / "docs" / "bad.txt").write_text("a bad file\n", encoding="utf-8")
    spec = pipeline_file(work / "abort.toml", 'import = "ragloom_rb_steps:Fail"\nname = "Judge"',
                         head='[policy]\non_failure = "abort"')
    before = snapshot(work / "docs", work / "old.jsonl")
    check(rb("ingest", "docs", "-c", spec, "--allow-imports", "-o", "old.jsonl", "--no-cache"),
          1, "run aborted: Judge: item 'bad.txt'", "ValueError: this item is bad")
    assert snapshot(work / "docs", work / "old.jsonl") == before


@pytest.mark.parametrize(
    ("text", "phrase"),
    [
        ("[[steps]\nchunker = 1", "not valid TOML"),
        ('[[steps]]\nchunker = "recursive"\nparms = {}', "unknown field 'parms'"),
        ('[[steps]]\nchunker = "recursiv"', "did you mean 'recursive'"),
        ('[[steps]]\nimport = "os:system"', "refused"),
        ("!!python/object:os.system {}", "cannot parse pipeline"),
    ],
    ids=["toml-syntax", "unknown-field", "misspelled-name", "import-refused", "yaml-object"],
)
def test_malformed_pipeline_files(rb, work: Path, text: str, phrase: str) -> None:
    suffix = ".yaml" if text.startswith("!!") else ".toml"
    spec = work / f"bad{suffix}"
    spec.write_text(text, encoding="utf-8")
    check(rb("ingest", "docs", "-c", spec, "-o", "out.jsonl", "--no-cache"), 2, phrase)
