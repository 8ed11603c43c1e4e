"""``ragloom run`` on the example ingestion pipeline file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_support import PIPELINES, SAMPLE_DOCS, check_chunks_against_sources, read_jsonl

pytestmark = pytest.mark.usefixtures("needs_text")


def test_run_ingestion_pipeline_file_routes_by_format(cli, workdir: Path) -> None:
    proc = cli("run", PIPELINES / "ingest.toml", SAMPLE_DOCS, "--cache", "c.sqlite",
               "--failures", "failed.jsonl")
    assert proc.returncode == 0, proc.stderr
    chunks = read_jsonl(workdir / "ragloom-chunks.jsonl")
    assert read_jsonl(workdir / "failed.jsonl") == []
    check_chunks_against_sources(chunks, SAMPLE_DOCS)
    by_format: dict[str, list[dict]] = {}
    for chunk in chunks:
        by_format.setdefault(chunk["metadata"]["format"], []).append(chunk)
    # The pipeline file's sizes: markdown 800, code 1200, everything else 600 with overlap.
    assert max(len(c["content"]) for c in by_format["markdown"]) <= 800
    assert any(len(c["content"]) > 600 for c in by_format["markdown"])
    assert max(len(c["content"]) for c in by_format["code"]) <= 1200
    assert any(len(c["content"]) > 800 for c in by_format["code"])
    assert max(len(c["content"]) for c in by_format["rst"]) <= 600
    assert all("headings" in c["metadata"] for c in by_format["markdown"])
    # The cache named on the command line was used, not the one beside the pipeline file.
    assert "(c.sqlite)" in proc.stdout and (workdir / "c.sqlite").exists()
    assert not (PIPELINES / ".ragloom").exists()
    again = cli("ingest", SAMPLE_DOCS, "--config", PIPELINES / "ingest.toml", "--cache",
                "c.sqlite", "-o", "again.jsonl")
    assert "cache: 7 hits, 0 misses" in again.stdout
    assert (workdir / "again.jsonl").read_bytes() == (workdir / "ragloom-chunks.jsonl").read_bytes()


def test_run_usage_errors(cli, workdir: Path) -> None:
    no_inputs = cli("run", PIPELINES / "ingest.toml")
    assert no_inputs.returncode == 2 and "give the files or folders" in no_inputs.stderr
    missing = cli("run", PIPELINES / "ingest.toml", "nope/")
    assert missing.returncode == 2 and "nope/" in missing.stderr
    wrong = cli("run", PIPELINES / "ingest.toml", SAMPLE_DOCS, "--file", "questions.txt")
    assert wrong.returncode == 2 and "--file applies to query pipelines" in wrong.stderr
    broken = workdir / "broken.yaml"
    broken.write_text("steps: [\n", encoding="utf-8")
    parsed = cli("run", broken, SAMPLE_DOCS)
    assert parsed.returncode == 2 and "not valid YAML" in parsed.stderr
    assert "Traceback" not in parsed.stderr


def test_run_speaks_of_itself_and_takes_json_as_ingest_does(cli, workdir: Path) -> None:
    """One vocabulary: ``run``'s summary names ``run``, and ``--json`` prints the summary as
    ``ingest --json`` does; the old ``--summary-json`` still works, hidden, with a warning."""
    source = SAMPLE_DOCS / "release-notes.txt"
    shown = cli("run", PIPELINES / "ingest.toml", source, "--no-cache")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith("ragloom run: 1 files, 1 documents")
    as_json = cli("run", PIPELINES / "ingest.toml", source, "--no-cache", "--json", "-o", "a.jsonl")
    assert as_json.returncode == 0, as_json.stderr
    summary = json.loads(as_json.stdout)
    assert (summary["files"], summary["documents"], summary["out"]) == (1, 1, "a.jsonl")
    ingest = cli("ingest", source, "--config", PIPELINES / "ingest.toml", "--no-cache", "--json",
                 "-o", "b.jsonl")
    assert sorted(json.loads(ingest.stdout)) == sorted(summary)
    old = cli("run", PIPELINES / "ingest.toml", source, "--no-cache", "--summary-json")
    assert old.returncode == 0 and json.loads(old.stdout)["documents"] == 1
    assert "--summary-json is deprecated: use --json" in old.stderr
    assert "--summary-json" not in cli("run", "--help").stdout


def test_import_paths_need_allow_imports(cli, workdir: Path) -> None:
    pipeline = workdir / "imports.toml"
    pipeline.write_text(
        'version = 1\n[[steps]]\nimport = "ragloom_text:SentenceChunker"\n'
        "params = { chunk_size = 300 }\n",
        encoding="utf-8",
    )
    refused = cli("run", pipeline, SAMPLE_DOCS / "release-notes.txt", "--no-cache")
    assert refused.returncode == 2 and "--allow-imports" in refused.stderr
    allowed = cli("run", pipeline, SAMPLE_DOCS / "release-notes.txt", "--no-cache",
                  "--allow-imports")
    assert allowed.returncode == 0, allowed.stderr
    chunks = read_jsonl(workdir / "ragloom-chunks.jsonl")
    assert chunks and max(len(c["content"]) for c in chunks) <= 300
    check_chunks_against_sources(chunks, SAMPLE_DOCS)
