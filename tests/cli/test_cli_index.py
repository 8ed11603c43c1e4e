"""``ragloom ingest --index`` end to end: a folder kept in sync with a real LanceDB index, and
bad input (broken files, a read-only or damaged index, another embedder's dimension).

Every command runs through the real entry point in a subprocess; the index is read back with
``LanceDBStore.chunks`` and compared with what the current files give.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cli_support import CONVERTED, SAMPLE_DOCS

pytest.importorskip("ragloom_text")
pytest.importorskip("ragloom_semantic")
lancedb_plugin = pytest.importorskip("ragloom_lancedb")

LanceDBStore = lancedb_plugin.LanceDBStore

EDITED = "guides/caching.md"
DELETED = "wordcount.py"
APPENDED = (
    "\n\n## Sharing a cache\n\nTwo machines can share one cache file when they run the same "
    "pipeline: entries are keyed by the step's identity and the item's content.\n"
)


# one pytest-xdist worker runs the whole module (--dist loadgroup):
# the index the bad-input tests read is built once
pytestmark = pytest.mark.xdist_group("cli-index")


def docs_copy(workdir: Path) -> Path:
    folder = workdir / "docs"
    shutil.copytree(SAMPLE_DOCS, folder)
    return folder


def ingest_json(cli, *args: Any, **options: Any) -> tuple[int, dict[str, Any], str]:
    proc = cli("ingest", *args, "--json", **options)
    report = json.loads(proc.stdout) if proc.stdout.strip() else {}
    return proc.returncode, report, proc.stderr


def read_index(path: Path) -> tuple[dict[str, str], dict[str, list[dict[str, Any]]]]:
    """(fingerprints, chunks by document as plain records) of the index at ``path``."""
    with LanceDBStore(path) as store:
        prints = store.fingerprints()
        chunks = {
            doc: [c.model_dump() for c in listed] for doc, listed in store.chunks().items()
        }
    return prints, chunks


def check_against_files(chunks: dict[str, list[dict[str, Any]]], folder: Path) -> None:
    """Every chunk is its file's text at its offsets (files read as they are), ids follow the
    document, indexes count from 0, and its vector is the embedder's for its search text (its
    title and heading path, then its text: what the embedding step embeds)."""
    from types import SimpleNamespace

    import numpy as np
    from ragloom.search_text import search_text
    from ragloom_semantic import Model2VecEmbedder

    embedder = Model2VecEmbedder()
    for doc, listed in chunks.items():
        assert [c["index"] for c in listed] == list(range(len(listed)))
        assert all(c["id"] == f"{doc}#{c['index']}" and c["parent_id"] == doc for c in listed)
        if Path(doc).suffix not in CONVERTED:
            text = (folder / doc).read_text(encoding="utf-8")
            for c in listed:
                assert text[c["start"] : c["end"]] == c["content"], c["id"]
        texts = [search_text(SimpleNamespace(content=c["content"], metadata=c["metadata"]))
                 for c in listed]
        vectors = np.asarray(embedder.embed(texts), dtype=np.float32)
        stored = np.asarray([c["embedding"] for c in listed], dtype=np.float32)
        assert np.array_equal(stored, vectors), doc


def test_an_index_follows_its_folder_through_edits_and_deletions(cli, workdir: Path) -> None:
    folder = docs_copy(workdir)
    index = workdir / "index"
    cache = workdir / "cache.sqlite"

    status, first, err = ingest_json(cli, folder, "--index", index, "--cache", cache)
    assert status == 0, err
    prints, chunks = read_index(index)
    documents = sorted(chunks)
    # The Docling JSON is skipped (ragloom-docling is disabled here); every other file indexed.
    assert documents == sorted([
        "faq.html", "guides/caching.md", "guides/getting-started.md", "plugins.rst",
        "release-notes.txt", "wordcount.py",
    ])
    assert sorted(prints) == documents and all(prints.values())
    assert first["indexed"] == len(documents) and first["unchanged"] == first["deleted"] == 0
    assert first["chunks"] == sum(map(len, chunks.values()))
    check_against_files(chunks, folder)

    # Edit one file: only it is processed again; every other document is left as it was.
    with open(folder / EDITED, "a", encoding="utf-8") as handle:
        handle.write(APPENDED)
    status, second, err = ingest_json(cli, folder, "--index", index, "--sync", "--cache", cache)
    assert status == 0, err
    assert (second["indexed"], second["unchanged"], second["deleted"]) == (
        1, len(documents) - 1, 0,
    )
    assert second["documents"] == 1
    prints2, chunks2 = read_index(index)
    assert sorted(chunks2) == documents
    assert {d: c for d, c in chunks2.items() if d != EDITED} == {
        d: c for d, c in chunks.items() if d != EDITED
    }
    assert {d: p for d, p in prints2.items() if d != EDITED} == {
        d: p for d, p in prints.items() if d != EDITED
    }
    assert prints2[EDITED] != prints[EDITED]
    assert chunks2[EDITED] != chunks[EDITED]
    assert chunks2[EDITED][-1]["content"].rstrip().endswith("the item's content.")
    check_against_files({EDITED: chunks2[EDITED]}, folder)
    # The same as an index built from scratch from the current files.
    status, _, err = ingest_json(cli, folder, "--index", workdir / "fresh1", "--no-cache")
    assert status == 0, err
    assert read_index(workdir / "fresh1") == (prints2, chunks2)

    # Delete one file: its document goes, nothing else is touched.
    (folder / DELETED).unlink()
    status, third, err = ingest_json(cli, folder, "--index", index, "--sync", "--cache", cache)
    assert status == 0, err
    assert (third["indexed"], third["unchanged"], third["deleted"]) == (
        0, len(documents) - 1, 1,
    )
    prints3, chunks3 = read_index(index)
    assert DELETED not in chunks3 and DELETED not in prints3
    assert chunks3 == {d: c for d, c in chunks2.items() if d != DELETED}
    assert prints3 == {d: p for d, p in prints2.items() if d != DELETED}
    status, _, err = ingest_json(cli, folder, "--index", workdir / "fresh2", "--no-cache")
    assert status == 0, err
    assert read_index(workdir / "fresh2") == (prints3, chunks3)

    info = cli("index", "info", "--index", index, "--json")
    assert info.returncode == 0, info.stderr
    shown = json.loads(info.stdout)
    collections = shown.pop("collections")
    assert shown == {
        "location": str(index), "exists": True, "documents": len(documents) - 1,
        "chunks": sum(map(len, chunks3.values())), "dimension": 256,
        "root": "../docs", "embedder": "ragloom-semantic:model2vec",
        "check": {"ok": True, "problems": [], "busy": False},
    }
    # every document and chunk in one collection (each top-level folder is one)
    assert sum(c["documents"] for c in collections) == shown["documents"]
    assert sum(c["chunks"] for c in collections) == shown["chunks"]


# -- bad input ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    """An index of the sample folder (ragloom-docling disabled), built once by the command."""
    root = tmp_path_factory.mktemp("built")
    env = dict(os.environ, RAGLOOM_DISABLE_PLUGINS="ragloom-docling")
    # The index records its root relative to its folder (../docs): a test that copies it to
    # workdir/index ingests workdir/docs.
    shutil.copytree(SAMPLE_DOCS, root / "docs")
    proc = subprocess.run(
        [sys.executable, "-m", "ragloom.cli", "ingest", str(root / "docs"), "--index",
         str(root / "index"), "--no-cache", "-q"],
        cwd=root, env=env, capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    return root / "index"


def snapshot(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
        if p.is_file() and p.name not in ("latest_version_hint.json", "ragloom-writer.lock")
    }


def one_error_line(stderr: str) -> str:
    """The single ``ragloom: error:`` line (progress lines aside); no traceback."""
    assert "Traceback" not in stderr
    lines = [line for line in stderr.splitlines() if line.startswith("ragloom: error:")]
    assert len(lines) == 1, stderr
    return lines[0]


def test_broken_files_are_reported_one_by_one_and_the_rest_indexed(cli, workdir: Path) -> None:
    pytest.importorskip("ragloom_loaders")
    folder = docs_copy(workdir)
    (folder / "broken.pdf").write_bytes(b"%PDF-1.7\n1 0 obj << /Type /Catalog >>\n\x00\x01trailer")
    (folder / "notes.html").write_text("Plain notes, named .html by mistake.\n", encoding="utf-8")
    status, report, err = ingest_json(cli, folder, "--index", workdir / "index", "--no-cache")
    assert status == 1, err
    failures = {f["source"].rsplit("/", 1)[-1]: f for f in report["failures"]}
    assert set(failures) == {"broken.pdf", "notes.html"}
    assert all(f["kind"] == "LoadError" and f["stage"] == "read" for f in failures.values())
    assert "PDF" in failures["broken.pdf"]["reason"]
    assert "not HTML" in failures["notes.html"]["reason"]
    _, chunks = read_index(workdir / "index")
    assert sorted(chunks) == sorted([
        "faq.html", "guides/caching.md", "guides/getting-started.md", "plugins.rst",
        "release-notes.txt", "wordcount.py",
    ])
    assert report["indexed"] == len(chunks)


def test_a_read_only_index_is_refused_and_left_as_it_was(cli, workdir: Path, built) -> None:
    folder = docs_copy(workdir)
    with open(folder / EDITED, "a", encoding="utf-8") as handle:
        handle.write(APPENDED)  # something to write
    index = workdir / "index"
    shutil.copytree(built, index)
    before = snapshot(index)
    modes = {p: p.stat().st_mode for p in [index, *index.rglob("*")]}
    for path in modes:  # no write bit anywhere (root, whom permissions do not stop, too)
        path.chmod(stat.S_IMODE(modes[path]) & ~0o222)
    try:
        for extra in ((), ("--sync",)):
            proc = cli("ingest", folder, "--index", index, "--no-cache", *extra)
            assert proc.returncode == 2, proc.stderr
            line = one_error_line(proc.stderr)
            assert str(index) in line and "read-only" in line and "nothing was changed" in line
    finally:
        for path, mode in modes.items():
            path.chmod(stat.S_IMODE(mode))
    assert snapshot(index) == before


@pytest.mark.parametrize("part", ["chunks", "chunks_documents"])
def test_a_damaged_index_is_named_in_one_line(cli, workdir: Path, built, part: str) -> None:
    folder = docs_copy(workdir)
    index = workdir / "index"
    shutil.copytree(built, index)
    for manifest in (index / f"{part}.lance" / "_versions").glob("*.manifest"):
        manifest.write_bytes(b"garbage")
    before = snapshot(index)
    for args in (("ingest", folder, "--index", index, "--no-cache"),
                 ("index", "info", "--index", index)):
        proc = cli(*args)
        assert proc.returncode == 2, proc.stderr
        line = one_error_line(proc.stderr)
        assert f"LanceDB store at {index}" in line and part in line
        assert ".rs:" not in line  # no source location of LanceDB's
    assert snapshot(index) == before


TINY_EMBEDDER = '''
from ragloom.embedding import Embedder


class Tiny(Embedder):
    """Eight numbers per text: enough to be another embedder."""

    step_id = "ragloom-test-tiny/tiny"

    def config(self):
        return {}

    @property
    def dimension(self):
        return 8

    def embed(self, texts):
        return [[float(len(t) % 5 + 1)] + [0.0] * 7 for t in texts]
'''


def tiny_plugin(root: Path) -> Path:
    """A plugin distribution registering the ``tiny`` embedder (put ``root`` on PYTHONPATH)."""
    root.mkdir()
    (root / "ragloom_test_tiny.py").write_text(TINY_EMBEDDER, encoding="utf-8")
    info = root / "ragloom_test_tiny-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: ragloom-test-tiny\nVersion: 0.1\n", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text(
        "[ragloom.embedders]\ntiny = ragloom_test_tiny:Tiny\n", encoding="utf-8"
    )
    return root


def test_another_embedders_dimension_is_refused_before_any_work(
    cli, workdir: Path, built
) -> None:
    folder = docs_copy(workdir)
    with open(folder / EDITED, "a", encoding="utf-8") as handle:
        handle.write(APPENDED)
    index = workdir / "index"
    shutil.copytree(built, index)
    before = snapshot(index)
    plugins = tiny_plugin(workdir / "plugins")
    path = os.pathsep.join(p for p in (str(plugins), os.environ.get("PYTHONPATH", "")) if p)
    proc = cli("ingest", folder, "--index", index, "--embedder", "tiny", "--no-cache",
               "--sync", env={"PYTHONPATH": path})
    assert proc.returncode == 2, proc.stderr
    line = one_error_line(proc.stderr)
    assert str(index) in line and "dimension 256" in line and "dimension 8" in line
    assert "Tiny" in line and "nothing was changed" in line
    assert "files (" not in proc.stderr  # refused before a single file was read
    assert snapshot(index) == before
    # The same embedder builds an index of its own.
    status, report, err = ingest_json(
        cli, folder, "--index", workdir / "tiny-index", "--embedder", "tiny", "--no-cache",
        env={"PYTHONPATH": path},
    )
    assert status == 0, err
    with LanceDBStore(workdir / "tiny-index") as store:
        assert store.info().dimension == 8
