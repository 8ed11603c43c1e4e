"""An index you can trust, through the real command in a subprocess: damage is noticed and
repaired to what a fresh build gives, a failed write is rolled back, the index never reads
itself, ids hang on the index's root, ``--sync`` stays inside the paths given, writers take
turns, ``search`` uses the index's embedder and reads ``-``, ``--out`` leaves unchanged
documents alone, and file ids are reversible.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from test_cli_index import read_index, snapshot, tiny_plugin

pytest.importorskip("ragloom_text")
pytest.importorskip("ragloom_semantic")
pytest.importorskip("ragloom_rules")
lancedb_plugin = pytest.importorskip("ragloom_lancedb")

from ragloom_lancedb.store import LOCK_FILE  # noqa: E402

LanceDBStore = lancedb_plugin.LanceDBStore

TEXTS = {
    "top.md": "# Caching\n\nClear the cache with `ragloom cache clear`; it keeps nothing.\n",
    "notes.txt": "Plugins are found through entry points when a pipeline names them.\n",
    "guides/a.md": "# Search\n\nA search decomposes the question and fuses the passages.\n",
    "guides/b.md": "# Index\n\nThe index keeps chunks with their vectors, per document.\n",
}


def make_docs(folder: Path) -> Path:
    for name, text in TEXTS.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def ingest(cli, *args: Any, **options: Any) -> tuple[int, dict[str, Any], str]:
    proc = cli("ingest", *args, "--no-cache", "--json", **options)
    return proc.returncode, json.loads(proc.stdout) if proc.stdout.strip() else {}, proc.stderr


def error_lines(stderr: str) -> list[str]:
    assert "Traceback" not in stderr
    return [line for line in stderr.splitlines() if line.startswith("ragloom: error:")]


def test_damage_is_reported_and_repaired_to_a_fresh_build(cli, workdir: Path) -> None:
    docs = make_docs(workdir / "docs")
    status, _, err = ingest(cli, docs, "--index", workdir / "ix")
    assert status == 0, err
    fresh = read_index(workdir / "ix")
    assert sorted(fresh[1]) == sorted(TEXTS)

    # The chunks table deleted: info, search and ingest all notice.
    shutil.copytree(workdir / "ix", workdir / "a")
    shutil.rmtree(workdir / "a" / "chunks.lance")
    info = cli("index", "info", "--index", workdir / "a")
    assert info.returncode == 2, info.stderr
    assert "DAMAGED" in info.stdout and "chunks table is missing" in info.stdout
    assert "index check --repair" in error_lines(info.stderr)[0]
    found = cli("search", "how do I clear the cache", "--index", workdir / "a")
    assert found.returncode == 2, found.stdout
    assert "(no passages found)" not in found.stdout
    assert "is damaged" in error_lines(found.stderr)[0]
    # a search through a pipeline file is refused the same way
    config = workdir / "search.toml"
    config.write_text(
        'version = 1\n[query.decomposer]\nname = "heuristic"\n'
        '[query.router]\nname = "keyword"\n'
        '[query.router.params]\ndefault_route = "general"\n'
        '[[query.router.params.routes]]\nname = "general"\n'
        '[retrieval]\nstore = { name = "lancedb", params = { path = "a" } }\n'
        'retriever = { name = "store", params = { mode = "text" } }\n',
        encoding="utf-8",
    )
    by_file = cli("search", "how do I clear the cache", "--config", config)
    assert by_file.returncode == 2, by_file.stdout
    assert "is damaged" in error_lines(by_file.stderr)[0]
    # ingest does not trust the damaged documents' fingerprints: it writes them again.
    status, report, err = ingest(cli, docs, "--index", workdir / "a", "--sync")
    assert status == 0, err
    assert (report["indexed"], report["unchanged"]) == (len(TEXTS), 0)
    assert any("damaged" in w for w in report["warnings"])
    assert read_index(workdir / "a") == fresh

    # A data file truncated: ingest refuses with the fix; the repair then a new ingest
    # give the fresh build.
    shutil.copytree(workdir / "ix", workdir / "b")
    data = sorted((workdir / "b" / "chunks.lance" / "data").iterdir())[0]
    with open(data, "r+b") as handle:
        handle.truncate(500)
    status, _, err = ingest(cli, docs, "--index", workdir / "b")
    assert status == 2
    assert "index check --repair" in error_lines(err)[0]
    repaired = cli("index", "check", "--repair", "--index", workdir / "b")
    assert repaired.returncode == 0, repaired.stderr
    assert "damaged" in repaired.stdout and "repaired" in repaired.stdout
    assert "next: ragloom ingest" in repaired.stdout
    status, report, err = ingest(cli, docs, "--index", workdir / "b")
    assert status == 0, err
    assert read_index(workdir / "b") == fresh


#: The command with a 40 kB limit on the size of any file it writes (RLIMIT_FSIZE; Python
#: ignores SIGXFSZ, so a write past it fails with EFBIG).
LIMITED = (
    "import resource, sys\n"
    "resource.setrlimit(resource.RLIMIT_FSIZE, (40_000, 40_000))\n"
    "from ragloom.cli import main\n"
    "sys.exit(main(sys.argv[1:]))\n"
)


def _size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


@pytest.mark.skipif(sys.platform == "win32", reason="RLIMIT_FSIZE is POSIX")
def test_a_failed_write_is_rolled_back_and_leaves_nothing_behind(cli, workdir: Path) -> None:
    docs = make_docs(workdir / "docs")
    index = workdir / "ix"
    status, _, err = ingest(cli, docs, "--index", index)
    assert status == 0, err
    before = read_index(index)
    # A file whose chunks make a data file larger than the limit set below.
    paragraphs = [f"Paragraph {n} about caching, plugins and search." * 6 for n in range(120)]
    (docs / "guides" / "big.md").write_text("# Big\n\n" + "\n\n".join(paragraphs), "utf-8")
    proc = subprocess.run(
        [sys.executable, "-c", LIMITED, "ingest", str(docs), "--index", str(index),
         "--no-cache", "-q"],
        cwd=workdir, capture_output=True, text=True, timeout=120,
        env=dict(os.environ, RAGLOOM_DISABLE_PLUGINS="ragloom-docling"),
    )
    assert proc.returncode == 2, proc.stderr
    assert "rolled back" in error_lines(proc.stderr)[0]
    with LanceDBStore(index) as store:
        assert store.check(full=True).ok
    assert read_index(index) == before  # no document without its chunks
    # The next ingest (with --sync) gives a fresh build's contents, and about its size: old
    # versions and the failed write's files are gone.
    (docs / "notes.txt").unlink()
    status, report, err = ingest(cli, docs, "--index", index, "--sync")
    assert status == 0, err
    assert report["deleted"] == 1
    status, _, err = ingest(cli, docs, "--index", workdir / "fresh")
    assert status == 0, err
    assert read_index(index) == read_index(workdir / "fresh")
    optimized = cli("index", "optimize", "--index", index)
    assert optimized.returncode == 0, optimized.stderr
    assert _size(index) <= 1.25 * _size(workdir / "fresh"), (_size(index), _size(workdir / "fresh"))


def test_ids_hang_on_the_root_and_sync_stays_inside_the_paths(cli, workdir: Path) -> None:
    docs = make_docs(workdir / "docs")
    index = docs / "ix"  # inside the folder ingested: never read as input
    status, first, err = ingest(cli, docs, "--index", index)
    assert status == 0, err
    status, again, err = ingest(cli, docs, "--index", index)
    assert status == 0, err
    assert (again["files"], again["indexed"], again["unchanged"]) == (len(TEXTS), 0, len(TEXTS))
    # A subfolder named alone: the same ids, nothing indexed twice.
    status, sub, err = ingest(cli, docs / "guides", "--index", index)
    assert status == 0, err
    assert (sub["indexed"], sub["unchanged"]) == (0, 2)
    # --sync over the subfolder removes only what is gone under it; an emptied file loses its
    # chunks; a file gone outside the subfolder stays.
    (docs / "top.md").unlink()
    (docs / "guides" / "b.md").unlink()
    (docs / "guides" / "a.md").write_text("", encoding="utf-8")
    status, synced, err = ingest(cli, docs / "guides", "--index", index, "--sync")
    assert status == 0, err
    assert synced["deleted"] == 2
    prints, _ = read_index(index)
    assert sorted(prints) == ["notes.txt", "top.md"]
    # A path outside the root is refused; the index itself as input too.
    other = make_docs(workdir / "other")
    for args in ((other,), (index,)):
        status, _, err = ingest(cli, *args, "--index", index)
        assert status == 2
        assert ("outside the index's root" in err) or ("inside the index" in err), err
    assert read_index(index)[0] == prints


def test_writers_take_turns(cli, workdir: Path) -> None:
    from filelock import FileLock

    docs = make_docs(workdir / "docs")
    index = workdir / "ix"
    index.mkdir()
    held = FileLock(str(index / LOCK_FILE))
    held.acquire()
    try:
        status, _, err = ingest(cli, docs, "--index", index, "--wait", "0")
        assert status == 2
        (line,) = error_lines(err)
        assert "busy" in line and "another process is writing it" in line
        assert "WARN" not in err and "Retryable commit conflict" not in err
        # A writer that may wait says so, and goes on once the lock is released.
        env = dict(os.environ, RAGLOOM_DISABLE_PLUGINS="ragloom-docling")
        waiting = subprocess.Popen(
            [sys.executable, "-m", "ragloom.cli", "ingest", str(docs), "--index", str(index),
             "--no-cache", "-q", "--wait", "600"],
            cwd=workdir, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        try:
            assert waiting.stderr is not None
            notice = waiting.stderr.readline()
            assert "being written by another process" in notice, notice
        except BaseException:
            waiting.kill()
            raise
    finally:
        held.release()
    _, rest = waiting.communicate(timeout=120)
    assert waiting.returncode == 0, rest
    assert sorted(read_index(index)[0]) == sorted(TEXTS)
    # Two writers at once: both succeed, one after the other.
    (docs / "notes.txt").write_text("Entry points name plugins; edited.\n", encoding="utf-8")
    both = [
        subprocess.Popen(
            [sys.executable, "-m", "ragloom.cli", "ingest", str(docs), "--index", str(index),
             "--no-cache", "-q", "--wait", "600"],
            cwd=workdir, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        for _ in range(2)
    ]
    for proc in both:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        assert "WARN" not in err
    prints, chunks = read_index(index)
    assert sorted(prints) == sorted(TEXTS) and all(prints.values())
    assert chunks["notes.txt"][0]["content"].endswith("edited.\n")
    with LanceDBStore(index) as store:
        assert store.check(full=True).ok


def test_search_uses_the_embedder_the_index_records_and_reads_stdin(
    cli, workdir: Path
) -> None:
    docs = make_docs(workdir / "docs")
    index = workdir / "ix"
    plugins = tiny_plugin(workdir / "plugins")
    path = os.pathsep.join(p for p in (str(plugins), os.environ.get("PYTHONPATH", "")) if p)
    env = {"PYTHONPATH": path}
    status, _, err = ingest(cli, docs, "--index", index, "--embedder", "tiny", env=env)
    assert status == 0, err
    found = cli("search", "-", "--index", index, "--json", env=env,
                input="How do I clear the cache?\n\nWhat does the index keep?\n")
    assert found.returncode == 0, found.stderr
    answers = [json.loads(line) for line in found.stdout.splitlines()]
    assert [a["query"] for a in answers] == [
        "How do I clear the cache?", "What does the index keep?",
    ]
    assert all(a["passages"] for a in answers)
    # A later ingest without --embedder embeds with the index's own: nothing changed.
    status, report, err = ingest(cli, docs, "--index", index, env=env)
    assert status == 0, err
    assert (report["indexed"], report["unchanged"]) == (0, len(TEXTS))


def test_out_with_index_leaves_unchanged_documents_alone(cli, workdir: Path) -> None:
    docs = make_docs(workdir / "docs")
    index = workdir / "ix"
    status, first, err = ingest(cli, docs, "--index", index, "--out", workdir / "o.jsonl")
    assert status == 0, err
    before = snapshot(index)
    status, again, err = ingest(cli, docs, "--index", index, "--out", workdir / "o.jsonl")
    assert status == 0, err
    assert (again["indexed"], again["unchanged"]) == (0, len(TEXTS))
    assert again["chunks"] == first["chunks"]  # the JSONL still holds every chunk
    lines = (workdir / "o.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == first["chunks"]
    assert snapshot(index) == before  # not one file of the index rewritten


def test_file_ids_are_reversible_and_never_shared(cli, workdir: Path) -> None:
    from urllib.parse import unquote_to_bytes

    folder = workdir / "names"
    folder.mkdir()
    names = [b"bad-\xff\xfe.txt", b"bad-%FF%FE.txt", b"100%.txt"]
    for n, name in enumerate(names):
        (Path(os.fsdecode(bytes(folder) + b"/" + name))).write_text(f"text {n}\n", "utf-8")
    proc = cli("ingest", folder, "-o", workdir / "out.jsonl", "--no-cache", "--json")
    assert proc.returncode == 0, proc.stderr
    ids = {json.loads(line)["parent"] for line in open(workdir / "out.jsonl", encoding="utf-8")}
    assert ids == {"bad-%FF%FE.txt", "bad-%25FF%25FE.txt", "100%25.txt"}
    assert {unquote_to_bytes(i) for i in ids} == set(names)
