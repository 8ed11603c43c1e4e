"""``ragloom ingest`` through the real entry point: output content, bad inputs, cache, exits."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from cli_support import PIPELINES, SAMPLE_DOCS, check_chunks_against_sources, read_jsonl

pytestmark = pytest.mark.usefixtures("needs_text")

EXPECTED_FORMATS = {
    "architecture-overview.json": "docling",
    "faq.html": "markdown",  # the HTML loader reads the page's main text as Markdown
    "guides/caching.md": "markdown",
    "guides/getting-started.md": "markdown",
    "plugins.rst": "rst",
    "release-notes.txt": "text",
    "wordcount.py": "code",
}


def test_ingest_sample_docs_writes_exact_chunks_with_lineage(cli, workdir: Path) -> None:
    proc = cli("ingest", SAMPLE_DOCS, "--out", "chunks.jsonl", "--chunk-size", "400",
               "--no-cache", docling=True)
    assert proc.returncode == 0, proc.stderr
    chunks = read_jsonl(workdir / "chunks.jsonl")
    assert {c["parent"] for c in chunks} == set(EXPECTED_FORMATS)
    for chunk in chunks:
        assert set(chunk) == {
            "id", "parent", "start", "end", "index", "content", "content_format", "metadata",
        }
        assert chunk["id"] == f"{chunk['parent']}#{chunk['index']}"
        meta = chunk["metadata"]
        assert meta["format"] == EXPECTED_FORMATS[chunk["parent"]]
        source = Path(meta["source"])
        assert source.resolve() == (SAMPLE_DOCS / chunk["parent"]).resolve()
        assert meta["size"] == source.stat().st_size
    texts = check_chunks_against_sources(chunks, SAMPLE_DOCS)
    # Text chunks obey the chunk size (a lone unsplittable atom is marked oversized).
    for chunk in chunks:
        if chunk["start"] is not None and not chunk["metadata"].get("oversized"):
            assert len(chunk["content"]) <= 400
    python = [c for c in chunks if c["parent"] == "wordcount.py"]
    assert python and all(c["metadata"]["language"] == "python" for c in python)
    # The Docling JSON went to the Docling chunker: Markdown chunks rendered from structure.
    docling = [c for c in chunks if c["parent"] == "architecture-overview.json"]
    assert docling and all(c["start"] is None and c["end"] is None for c in docling)
    assert all(c["content_format"] == "markdown" for c in docling)
    assert any("Failure handling" in c["content"] for c in docling)
    assert "ragloom architecture overview" in texts["architecture-overview.json"]
    # Ids and order are deterministic: sorted by document, then by index.
    keys = [(c["parent"], c["index"]) for c in chunks]
    assert keys == sorted(keys)
    summary = proc.stdout
    assert "7 documents" in summary and f"{len(chunks)} chunks" in summary
    assert "7 read, 0 skipped, 0 failed" in summary
    assert re.search(r"MB/s, [\d.]+ docs/s", summary)
    assert "cache: 0 hits, 0 misses (off)" in summary
    # Not a terminal: plain progress lines, ending at 7/7.
    assert "ragloom: 7/7 files (100%)" in proc.stderr
    assert not (workdir / ".ragloom").exists()


def test_ingest_is_deterministic_and_independent_of_argument_order(cli, workdir: Path) -> None:
    guides = SAMPLE_DOCS / "guides"
    first = cli("ingest", guides / "caching.md", SAMPLE_DOCS / "plugins.rst", "-o", "a.jsonl",
                "--no-cache", "-q")
    second = cli("ingest", SAMPLE_DOCS / "plugins.rst", guides / "caching.md", "-o", "b.jsonl",
                 "--no-cache", "-q")
    assert first.returncode == second.returncode == 0
    assert first.stdout == first.stderr == ""  # --quiet: no progress, no summary
    a = (workdir / "a.jsonl").read_text(encoding="utf-8")
    assert a == (workdir / "b.jsonl").read_text(encoding="utf-8")
    # Ids are relative to the common root of the arguments.
    assert {c["parent"] for c in read_jsonl(workdir / "a.jsonl")} == {
        "guides/caching.md", "plugins.rst",
    }


def _bad_corpus(root: Path) -> dict[str, str]:
    """Files that cannot be ingested, each with the words its reason must contain."""
    root.mkdir()
    (root / "good.md").write_text("# Fine\n\nThis one is fine.\n", encoding="utf-8")
    (root / "binary.bin").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(64))
    (root / "latin1.txt").write_bytes("caf\xe9 cr\xe8me\n".encode("latin-1"))
    (root / "empty.txt").write_bytes(b"")
    (root / "blank.md").write_text("  \n\n\t\n", encoding="utf-8")
    (root / "big.txt").write_text("word " * 400, encoding="utf-8")
    (root / "dangling.md").symlink_to(root / "missing-target.md")
    os.mkfifo(root / "pipe.txt")
    expected = {
        "binary.bin": "binary file",
        "latin1.txt": "not valid UTF-8",
        "big.txt": "too large",
        "dangling.md": "no such file",
        "pipe.txt": "FIFO",
    }
    if os.geteuid() != 0:  # root reads anything: a chmod 000 file is only unreadable to others
        locked = root / "locked.txt"
        locked.write_text("secret\n", encoding="utf-8")
        locked.chmod(0)
        expected["locked.txt"] = "permission denied"
    return expected


def test_bad_inputs_fail_one_by_one_with_reasons(cli, workdir: Path) -> None:
    corpus = workdir / "corpus"
    expected = _bad_corpus(corpus)
    proc = cli("ingest", corpus, "--max-file-size", "1KB", "--failures", "failed.jsonl",
               "--no-cache")
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    failures = {Path(f["item"]).name: f for f in read_jsonl(workdir / "failed.jsonl")}
    assert set(failures) == set(expected)
    for name, words in expected.items():
        assert words in failures[name]["reason"], failures[name]
        assert failures[name]["stage"] == "read"
        assert failures[name]["reason"] in proc.stdout  # the summary lists file and reason
    chunks = read_jsonl(workdir / "ragloom-chunks.jsonl")
    assert {c["parent"] for c in chunks} == {"good.md"}
    # Empty files are not failures: they are skipped, and said so.
    assert "skipped (2):" in proc.stdout
    assert "empty.txt: empty file" in proc.stdout
    assert "blank.md: file holds only whitespace" in proc.stdout
    total = len(expected) + 3
    assert f"{total} files" in proc.stdout
    assert f"1 read, 2 skipped, {len(expected)} failed" in proc.stdout
    assert f"ragloom: {total}/{total} files (100%)" in proc.stderr


def test_a_step_failure_is_reported_not_lost(cli, workdir: Path) -> None:
    # The markdown chunker refuses code: with no default route that item fails at the step.
    pipeline = workdir / "md-only.toml"
    pipeline.write_text(
        'version = 1\n[[steps]]\nchunker = "markdown"\n', encoding="utf-8"
    )
    proc = cli("ingest", SAMPLE_DOCS / "wordcount.py", SAMPLE_DOCS / "guides" / "caching.md",
               "--config", pipeline, "--failures", "failed.jsonl", "--no-cache")
    assert proc.returncode == 1
    (failure,) = read_jsonl(workdir / "failed.jsonl")
    assert failure["item"] == "wordcount.py"
    assert failure["kind"] == "InvalidInputError"
    assert "accepts content formats" in failure["reason"]
    assert failure["stage"] != "read"
    assert {c["parent"] for c in read_jsonl(workdir / "ragloom-chunks.jsonl")} == {
        "guides/caching.md",
    }


def test_cache_replays_second_run_and_cache_commands(cli, workdir: Path) -> None:
    first = cli("ingest", SAMPLE_DOCS, "-o", "one.jsonl")
    assert first.returncode == 0, first.stderr
    assert "cache: 0 hits, 6 misses (.ragloom/cache.sqlite)" in first.stdout
    second = cli("ingest", SAMPLE_DOCS, "-o", "two.jsonl")
    assert "cache: 6 hits, 0 misses" in second.stdout
    assert (workdir / "one.jsonl").read_bytes() == (workdir / "two.jsonl").read_bytes()

    info = cli("cache", "info", "--json")
    assert info.returncode == 0
    data = json.loads(info.stdout)
    # Without ragloom-docling the Docling JSON sample is skipped (with a note), not cut as text.
    assert "a Docling document: install ragloom-docling" in first.stdout
    assert data["entries"] == 6 and data["bytes"] > 0
    # Two Markdown guides, and the FAQ page (read from HTML as Markdown).
    assert data["steps"]["ragloom-text/markdown"] == 3
    assert sum(data["steps"].values()) == 6
    table = cli("cache", "info").stdout
    assert "entries: 6" in table and "ragloom-text/markdown" in table

    typo = cli("cache", "clear", "--step", "ragloom-text/markdwn")
    assert typo.returncode == 2 and "ragloom-text/markdown" in typo.stderr
    cleared = cli("cache", "clear", "--step", "ragloom-text/markdown")
    assert cleared.returncode == 0 and "removed 3 entries" in cleared.stdout
    assert json.loads(cli("cache", "info", "--json").stdout)["entries"] == 3
    third = cli("ingest", SAMPLE_DOCS, "-o", "three.jsonl")
    assert "cache: 3 hits, 3 misses" in third.stdout
    assert "removed 6 entries" in cli("cache", "clear").stdout
    assert json.loads(cli("cache", "info", "--json").stdout)["entries"] == 0
    missing = cli("cache", "info", "--cache", "nowhere.sqlite")
    assert missing.returncode == 0 and "no cache at nowhere.sqlite" in missing.stdout
    assert not (workdir / "nowhere.sqlite").exists()


def test_configuration_errors_exit_2_without_traceback(cli, workdir: Path) -> None:
    bad = workdir / "bad.toml"
    bad.write_text('version = 1\n[[steps]]\nchunker = "recursiv"\n', encoding="utf-8")
    proc = cli("ingest", SAMPLE_DOCS, "--config", bad, "--no-cache")
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert "steps[0]" in proc.stderr and "did you mean 'recursive'" in proc.stderr
    assert not (workdir / "ragloom-chunks.jsonl").exists()

    query = cli("ingest", SAMPLE_DOCS, "--config", PIPELINES / "plan-rules.toml")
    assert query.returncode == 2 and "query pipeline" in query.stderr

    both = cli("ingest", SAMPLE_DOCS, "--config", PIPELINES / "ingest.toml", "--chunk-size", "9")
    assert both.returncode == 2 and "--chunk-size" in both.stderr
    size = cli("ingest", SAMPLE_DOCS, "--max-file-size", "lots")
    assert size.returncode == 2 and "is not a size" in size.stderr
    assert cli("ingest", "no/such/path").returncode == 2
    assert cli("ingest", SAMPLE_DOCS, "--cache", "c.sqlite", "--no-cache").returncode == 2


def test_output_is_replaced_atomically(cli, workdir: Path) -> None:
    out = workdir / "chunks.jsonl"
    out.write_text("previous run\n", encoding="utf-8")
    bad = workdir / "bad.toml"
    bad.write_text('version = 1\n[[steps]]\nchunker = "nope"\n', encoding="utf-8")
    assert cli("ingest", SAMPLE_DOCS, "-o", out, "-c", bad).returncode == 2
    assert out.read_text(encoding="utf-8") == "previous run\n"
    assert cli("ingest", SAMPLE_DOCS / "plugins.rst", "-o", out, "--no-cache").returncode == 0
    assert read_jsonl(out)[0]["parent"] == "plugins.rst"
    assert sorted(p.name for p in workdir.iterdir()) == ["bad.toml", "chunks.jsonl"]


def _make_corpus(root: Path, files: int, size: int) -> None:
    words = (SAMPLE_DOCS / "release-notes.txt").read_text(encoding="utf-8")
    body = (words * (size // len(words) + 1))[:size]
    for i in range(files):
        sub = root / f"part{i % 10}"
        sub.mkdir(parents=True, exist_ok=True)
        (sub / f"doc{i:05d}.txt").write_text(f"Document {i}\n\n{body}", encoding="utf-8")


STEPS = Path(__file__).parent / "steps"


def test_ctrl_c_leaves_no_output_and_a_consistent_cache(cli, workdir: Path) -> None:
    corpus = workdir / "corpus"
    _make_corpus(corpus, files=300, size=2_000)
    out = workdir / "chunks.jsonl"
    # The run passes 30 documents, then blocks forever: it cannot finish before the signal.
    blocking = workdir / "blocking.toml"
    blocking.write_text(
        'version = 1\n[[steps]]\nimport = "ragloom_test_steps:BlockAfter"\n'
        'params = { after = 30 }\n[[steps]]\nchunker = "auto"\n',
        encoding="utf-8",
    )
    env = dict(os.environ, RAGLOOM_DISABLE_PLUGINS="ragloom-docling",
               RAGLOOM_PROGRESS_INTERVAL="0",
               PYTHONPATH=os.pathsep.join(filter(None, [str(STEPS), os.environ.get("PYTHONPATH")])))
    # The child starts with Ctrl-C on, whatever this process inherited (a background job or a
    # CI runner may ignore SIGINT), and is killed and reaped whatever happens below.
    proc = subprocess.Popen(
        [sys.executable, "-m", "ragloom.cli", "ingest", str(corpus), "-o", str(out),
         "--cache", "cache.sqlite", "--config", str(blocking), "--allow-imports"],
        cwd=workdir, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    assert proc.stderr is not None
    # A guard against a hang only (it never decides the outcome): a run that printed nothing
    # for two minutes is killed, and the assertion below then says what was seen.
    guard = threading.Timer(120, proc.kill)
    guard.start()
    try:
        # Signal only once the run is blocked and at least one document reached the output
        # (its chunks were cached): observed progress, not elapsed time.
        seen = ""
        blocked = done = False
        while not (blocked and done):
            line = proc.stderr.readline()
            if not line:
                break
            seen += line
            blocked = blocked or "blocked after 30 items" in line
            match = re.match(r"ragloom: (\d+)/300 files", line)
            done = done or bool(match and int(match.group(1)) >= 1)
        assert blocked and done, seen
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate()
    finally:
        guard.cancel()
        if proc.poll() is None:
            proc.kill()
        proc.wait()
    assert proc.returncode == 130, seen + stderr
    assert "interrupted" in stderr and "Traceback" not in stderr
    assert not out.exists()
    assert sorted(p.name for p in workdir.iterdir() if p.name.endswith(".tmp")) == []

    info = cli("cache", "info", "--cache", "cache.sqlite", "--json")
    assert info.returncode == 0
    kept = json.loads(info.stdout)["entries"]
    assert 0 < kept <= 30

    # The default pipeline runs the same chunkers: every finished document is a hit.
    resumed = cli("ingest", corpus, "-o", out, "--cache", "cache.sqlite")
    assert resumed.returncode == 0, resumed.stderr
    assert f"cache: {kept} hits, {300 - kept} misses" in resumed.stdout
    chunks = read_jsonl(out)
    assert len({c["parent"] for c in chunks}) == 300
    check_chunks_against_sources(chunks, corpus)


def test_ragloom_script_on_path(tmp_path: Path) -> None:
    script = shutil.which("ragloom")
    if script is None:
        pytest.skip("the ragloom console script is not on PATH")
    out = tmp_path / "c.jsonl"
    proc = subprocess.run(
        [script, "ingest", str(SAMPLE_DOCS / "release-notes.txt"), "-o", str(out), "--no-cache",
         "-q"],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
        env=dict(os.environ, RAGLOOM_DISABLE_PLUGINS="ragloom-docling"),
    )
    assert proc.returncode == 0, proc.stderr
    check_chunks_against_sources(read_jsonl(out), SAMPLE_DOCS)


def test_other_spellings_of_a_path_and_subfolders_hit_the_cache(cli, workdir: Path) -> None:
    """What shapes a chunk is its text and format, not the path as typed: another spelling of
    the folder, or one of its subfolders, replays every chunk, and the chunks carry the ids and
    sources of this run."""
    project = workdir / "proj"
    shutil.copytree(SAMPLE_DOCS, project / "docs")
    cache = str(workdir / "cache.sqlite")
    first = cli("ingest", "proj/docs", "-o", "a.jsonl", "--cache", cache)
    assert first.returncode == 0, first.stderr
    elsewhere = workdir / "elsewhere"
    elsewhere.mkdir()
    for spelling, out in (("./proj/docs", "b.jsonl"), (str(project / "docs") + "/", "c.jsonl")):
        again = cli("ingest", spelling, "-o", out, "--cache", cache)
        assert "cache: 6 hits, 0 misses" in again.stdout, again.stdout
        assert read_jsonl(workdir / out) == [
            {**c, "metadata": {**c["metadata"], "source": c["metadata"]["source"].replace(
                "proj/docs", spelling.rstrip("/"), 1)}}
            for c in read_jsonl(workdir / "a.jsonl")
        ]
    sub = cli("ingest", "proj/docs/guides", "-o", "d.jsonl", "--cache", cache)
    assert "cache: 2 hits, 0 misses" in sub.stdout
    chunks = read_jsonl(workdir / "d.jsonl")
    assert {c["parent"] for c in chunks} == {"caching.md", "getting-started.md"}
    assert all(c["id"].startswith(c["parent"] + "#") for c in chunks)
    assert all(c["metadata"]["source"].startswith("proj/docs/guides/") for c in chunks)
    check_chunks_against_sources(chunks, project / "docs" / "guides")
