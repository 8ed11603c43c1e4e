"""The Ray engine against the local one: same outputs, same failures, faults survived.

Every test here shares one local Ray (``ray_session``: 2 CPUs, no network). A Ray run costs a
few seconds (worker processes start and import the plugins), so each test checks a lot.
"""

from __future__ import annotations

import json
import os
import random
import shutil
from pathlib import Path
from typing import Any

import pytest
from ragloom.config import build_pipeline
from ragloom.engines import IngestJob
from ragloom.errors import ConfigurationError
from ragloom.ingest import Ingestor
from ragloom_ray import RayEngine

REPO = Path(__file__).resolve().parents[3]
SAMPLE = REPO / "examples" / "sample-docs"

pytestmark = pytest.mark.usefixtures("ray_session")


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def _problems(path: Path) -> list[dict[str, str]]:
    return sorted((json.loads(line) for line in _lines(path)), key=lambda p: json.dumps(p))


def _store_rows(path: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Both tables of a LanceDB store, rows sorted by id."""
    import lancedb

    db = lancedb.connect(str(path))
    chunks = db.open_table("chunks").to_arrow().to_pylist()
    documents = db.open_table("chunks_documents").to_arrow().to_pylist()
    return (
        sorted(chunks, key=lambda r: r["id"]),
        sorted(documents, key=lambda r: r["document_id"]),
    )


def _same_report(local: Any, ray: Any) -> None:
    for name in ("files", "documents", "chunks", "bytes_read", "unchanged", "indexed", "deleted"):
        assert getattr(ray, name) == getattr(local, name), name
    assert sorted(map(_key, ray.skipped)) == sorted(map(_key, local.skipped))
    assert sorted(map(_key, ray.failures)) == sorted(map(_key, local.failures))


def _key(problem: Any) -> tuple[str, ...]:
    return (problem.item, problem.source, problem.stage, problem.kind, problem.reason)


def test_the_sample_folder_gives_the_local_outputs_jsonl_store_and_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ragloom_lancedb import LanceDBStore

    # Local: the default pipeline, a cache, an index (with model2vec vectors) and a JSONL file.
    with LanceDBStore(tmp_path / "local-index") as store, Ingestor(
        cache=str(tmp_path / "local-cache.sqlite"), store=store
    ) as ingestor:
        local = ingestor.run(
            [SAMPLE], out=tmp_path / "local.jsonl", failures=tmp_path / "local-failures.jsonl"
        )
    assert local.ok and local.chunks > 20 and local.indexed == local.documents

    engine = RayEngine(workers=2, batch_size=2)
    job = IngestJob(
        paths=(str(SAMPLE),), out=str(tmp_path / "ray.jsonl"),
        failures=str(tmp_path / "ray-failures.jsonl"), index=str(tmp_path / "ray-index"),
        cache=str(tmp_path / "ray-cache.sqlite"),
    )
    progress: list[Any] = []
    ray = engine.ingest(job, on_progress=progress.append)
    _same_report(local, ray)
    assert ray.cache_misses == local.cache_misses > 0 and ray.cache_hits == 0
    assert (tmp_path / "ray.jsonl").read_bytes() == (tmp_path / "local.jsonl").read_bytes()
    assert _lines(tmp_path / "ray-failures.jsonl") == []
    assert _store_rows(tmp_path / "ray-index") == _store_rows(tmp_path / "local-index")
    assert [p.done for p in progress] == list(range(1, local.files + 1))
    assert progress[-1].total == local.files and progress[-1].bytes_read == local.bytes_read
    assert ray.cache == str(tmp_path / "ray-cache.sqlite")

    # Without a JSONL file the workers write the index's parts and the driver only commits
    # them (it never writes chunks itself): the rows of the local run.
    def refused(*_args: Any) -> None:
        raise AssertionError("the driver wrote chunks to the index")

    with monkeypatch.context() as patched:
        patched.setattr(LanceDBStore, "write", refused)
        parts = engine.ingest(IngestJob(paths=(str(SAMPLE),), index=str(tmp_path / "parts")))
    assert (parts.indexed, parts.chunks, parts.failures) == (local.indexed, local.chunks, [])
    assert _store_rows(tmp_path / "parts") == _store_rows(tmp_path / "local-index")

    # Again into the index the workers wrote: every document is unchanged (as the local engine
    # decides), nothing is processed or written.
    again = engine.ingest(IngestJob(
        paths=(str(SAMPLE),), index=str(tmp_path / "parts"),
        cache=str(tmp_path / "ray-cache.sqlite"),
    ))
    assert (again.unchanged, again.documents, again.indexed) == (local.documents, 0, 0)
    assert _store_rows(tmp_path / "parts") == _store_rows(tmp_path / "local-index")


def _corpus(root: Path, files: int) -> None:
    """A generated corpus: Markdown, text and code files of varied sizes, plus files that fail
    (binary, not UTF-8) or are skipped (empty), and the markers the test steps react to."""
    rng = random.Random(20240601)
    words = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu".split()
    for i in range(files):
        folder = root / f"part{i % 7}"
        folder.mkdir(parents=True, exist_ok=True)
        paragraphs = []
        for _ in range(rng.randint(1, 12)):
            sentence = " ".join(rng.choice(words) for _ in range(rng.randint(5, 60)))
            paragraphs.append(sentence.capitalize() + ".")
        kind = i % 3
        if kind == 0:
            text = f"# Doc {i}\n\n" + "\n\n".join(paragraphs) + "\n"
            (folder / f"doc{i:04d}.md").write_text(text, encoding="utf-8")
        elif kind == 1:
            (folder / f"doc{i:04d}.txt").write_text("\n\n".join(paragraphs), encoding="utf-8")
        else:
            body = "\n".join(f"def f{j}():\n    return {j!r}\n" for j in range(rng.randint(1, 30)))
            (folder / f"doc{i:04d}.py").write_text(body, encoding="utf-8")
    (root / "part1" / "kill.txt").write_text("Before. KILL-THE-WORKER here. After.\n")
    (root / "part2" / "fail1.md").write_text("# One\n\nThis FAIL-THIS chunk raises.\n")
    (root / "part3" / "fail2.txt").write_text("Another FAIL-THIS line.\n\nAnd a fine one.\n")
    (root / "part4" / "empty.txt").write_text("")
    (root / "part5" / "blob.txt").write_bytes(b"abc\0def")
    (root / "part6" / "latin1.txt").write_bytes("caf\xe9".encode("latin-1"))


def _spec(guard: Path) -> dict[str, Any]:
    return {
        "steps": [
            {"chunker": "recursive", "params": {"chunk_size": 300}},
            {"import": "ragloom_ray_test_steps:ExitOnce",
             "params": {"marker": "KILL-THE-WORKER", "guard": str(guard)}},
            {"import": "ragloom_ray_test_steps:FailOn", "params": {"marker": "FAIL-THIS"}},
        ],
    }


def test_a_generated_corpus_a_killed_worker_and_failing_items(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(Path(__file__).parent / "steps"))
    corpus = tmp_path / "corpus"
    _corpus(corpus, 300)
    guard = tmp_path / "killed-once"
    spec = _spec(guard)

    guard.write_text("local")  # the local run must not exit
    with build_pipeline(spec, allow_imports=True) as pipeline, Ingestor(
        pipeline, cache=False
    ) as ingestor:
        local = ingestor.run(
            [corpus], out=tmp_path / "local.jsonl", failures=tmp_path / "local-failures.jsonl"
        )
    guard.unlink()

    ray = RayEngine(workers=2, batch_size=16).ingest(IngestJob(
        paths=(str(corpus),), spec=spec, allow_imports=True,
        out=str(tmp_path / "ray.jsonl"), failures=str(tmp_path / "ray-failures.jsonl"),
    ))
    # A worker died (the guard holds its pid, not ours) and its batch ran again.
    assert guard.exists() and guard.read_text() != str(os.getpid())
    _same_report(local, ray)
    assert (tmp_path / "ray.jsonl").read_bytes() == (tmp_path / "local.jsonl").read_bytes()
    ray_failures = _problems(tmp_path / "ray-failures.jsonl")
    assert ray_failures == _problems(tmp_path / "local-failures.jsonl")

    failures = {p.item: p for p in ray.failures}
    assert {"part5/blob.txt", "part6/latin1.txt"} <= set(failures)
    assert failures["part2/fail1.md#0"].stage == "FailOn"
    assert failures["part2/fail1.md#0"].reason.startswith("ValueError: refusing part2/fail1.md#0")
    assert failures["part3/fail2.txt#0"].kind == "ValueError"
    assert [p.item for p in ray.skipped] == ["part4/empty.txt"]
    assert len(ray.failures) == 4 and ray.files == 306
    ids = [json.loads(line)["id"] for line in _lines(tmp_path / "ray.jsonl")]
    assert "part1/kill.txt#0" in ids  # the killed batch is in the output, once
    assert len(ids) == len(set(ids)) == ray.chunks
    assert not any(i.startswith(("part2/fail1.md", "part3/fail2.txt")) for i in ids)


def test_a_plugin_missing_on_the_workers_is_named_by_the_cli(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from ragloom.cli import main

    env = json.dumps({"env_vars": {"RAGLOOM_DISABLE_PLUGINS": "ragloom-text"}})
    status = main([
        "ingest", str(SAMPLE), "--engine", "ray", "--engine-option", "workers=1",
        "--engine-option", f"runtime_env={env}", "--no-cache", "-q",
        "--out", str(tmp_path / "out.jsonl"),
    ])
    err = capsys.readouterr().err
    assert status == 2, err
    assert "ragloom: error: ragloom-ray: the Ray worker on " in err
    assert "cannot build the pipeline: ragloom-text " in err
    assert "is disabled there by RAGLOOM_DISABLE_PLUGINS" in err
    assert "Traceback" not in err
    assert not (tmp_path / "out.jsonl").exists()


def test_an_engine_run_is_the_local_run_around_the_index(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The run around the engine is the core's, as a local run: a subfolder of the index's
    root keeps its documents' ids under that root, and a damaged index is repaired."""
    import shutil

    from ragloom.cli import main

    docs = tmp_path / "docs"
    shutil.copytree(SAMPLE, docs)
    index = tmp_path / "ix"
    assert main(["ingest", str(docs), "--index", str(index), "--no-cache", "-q"]) == 0
    capsys.readouterr()
    (docs / "guides" / "caching.md").write_text("# Caching\n\nChanged on purpose.\n")
    status = main([
        "ingest", str(docs / "guides"), "--index", str(index), "--engine", "ray", "--no-cache",
        "--json",
    ])
    captured = capsys.readouterr()
    assert status == 0, captured.err
    report = json.loads(captured.out)
    assert (report["indexed"], report["unchanged"]) == (1, 1)
    chunks, documents = _store_rows(index)
    ids = [d["document_id"] for d in documents]
    assert "guides/caching.md" in ids and "caching.md" not in ids
    assert any(c["content"].startswith("# Caching\n\nChanged") for c in chunks)
    # A damaged index is repaired first, as a local run repairs it, and indexed again.
    shutil.rmtree(index / "chunks.lance")
    status = main([
        "ingest", str(docs), "--index", str(index), "--engine", "ray", "--no-cache", "--json",
    ])
    captured = capsys.readouterr()
    assert status == 0, captured.err
    report = json.loads(captured.out)
    assert any(w.startswith("the index was damaged") for w in report["warnings"])
    assert report["indexed"] == report["documents"] == len(_store_rows(index)[1])


def test_an_input_that_kills_its_worker_every_time_stops_the_run_cleanly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ragloom_ray import RayEngine as Engine
    from ragloom_ray._engine import RayRunError

    monkeypatch.syspath_prepend(str(Path(__file__).parent / "steps"))
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.txt").write_text("fine\n")
    (folder / "b.txt").write_text("POISON\n")
    (tmp_path / "out.jsonl").write_text("old\n")
    spec = {"steps": [
        {"chunker": "recursive"},
        {"import": "ragloom_ray_test_steps:ExitAlways", "params": {"marker": "POISON"}},
    ]}
    engine = Engine(workers=1, batch_size=1, task_retries=0)
    with pytest.raises(RayRunError, match="the run on Ray failed and nothing was written"):
        engine.ingest(IngestJob(
            paths=(str(folder),), spec=spec, allow_imports=True,
            out=str(tmp_path / "out.jsonl"), failures=str(tmp_path / "failures.jsonl"),
        ))
    assert (tmp_path / "out.jsonl").read_text() == "old\n"  # the old file is kept
    assert not (tmp_path / "failures.jsonl").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["docs", "out.jsonl"]

    # Into an index, the worker writes the part of a.txt's batch, then dies on b.txt: the
    # part is never committed, its files are removed, the index is as it was.
    from ragloom_lancedb import LanceDBStore

    index = tmp_path / "index"
    kept = tmp_path / "b.txt"
    (folder / "b.txt").rename(kept)
    with build_pipeline(spec, allow_imports=True) as pipeline, LanceDBStore(
        index
    ) as store, Ingestor(pipeline, cache=False, store=store) as ingestor:
        assert ingestor.run([folder]).indexed == 1
    kept.rename(folder / "b.txt")
    (folder / "a.txt").write_text("fine, and changed\n")
    before = _store_rows(index)
    files = sorted(p.name for p in (index / "chunks.lance" / "data").iterdir())
    with pytest.raises(RayRunError, match="the run on Ray failed and nothing was written"):
        engine.ingest(IngestJob(
            paths=(str(folder),), spec=spec, allow_imports=True, index=str(index),
        ))
    assert _store_rows(index) == before
    assert sorted(p.name for p in (index / "chunks.lance" / "data").iterdir()) == files


def test_inputs_through_a_filesystem_uri_give_the_same_chunks(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    shutil.copytree(SAMPLE, folder)
    with Ingestor(cache=False) as ingestor:
        local = ingestor.run([folder], out=tmp_path / "local.jsonl")
    ray = RayEngine(workers=2).ingest(IngestJob(
        paths=(f"file://{folder}",), out=str(tmp_path / "ray.jsonl"),
    ))
    assert (ray.files, ray.documents, ray.chunks) == (local.files, local.documents, local.chunks)
    got = [json.loads(line) for line in _lines(tmp_path / "ray.jsonl")]
    want = [json.loads(line) for line in _lines(tmp_path / "local.jsonl")]
    for record in got + want:
        source = record["metadata"].pop("source")
        assert source.endswith(record["parent"].split("#")[0])
    assert got == want


def test_engine_options_and_outputs_are_checked_before_ray_runs(tmp_path: Path) -> None:
    engine = RayEngine()
    with pytest.raises(ConfigurationError, match="unknown ray engine option 'wrokers'"):
        engine.ingest(IngestJob(paths=(str(SAMPLE),), options={"wrokers": "2"}))
    with pytest.raises(ConfigurationError, match="no such file or folder"):
        engine.ingest(IngestJob(paths=(str(tmp_path / "gone"),)))
    with pytest.raises(ConfigurationError, match="not a mix"):
        engine.ingest(IngestJob(paths=(str(SAMPLE), f"file://{SAMPLE}")))
    out = str(tmp_path / "o.jsonl")
    with pytest.raises(ConfigurationError, match="write failures .*: it is also the out file"):
        engine.ingest(IngestJob(paths=(str(SAMPLE),), out=out, failures=out))
    with pytest.raises(ConfigurationError, match="it is the cache file"):
        engine.ingest(IngestJob(paths=(str(SAMPLE),), out=out, cache=out))
    empty = tmp_path / "empty"
    empty.mkdir()
    report = engine.ingest(IngestJob(paths=(str(empty),), out=str(tmp_path / "o.jsonl")))
    assert report.nothing_found and not (tmp_path / "o.jsonl").exists()
