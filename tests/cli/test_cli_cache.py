"""The step cache through the command line: a step that cannot be cached says so once, the cost
decisions in ``ragloom cache info``, and read-only and full caches."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

STEPS = Path(__file__).with_name("steps")
N_FILES = 40  # more than the engine's cost sample (32 items)


@pytest.fixture
def corpus(workdir: Path) -> Path:
    folder = workdir / "docs"
    folder.mkdir()
    for i in range(N_FILES):
        body = "\n\n".join(f"File {i}, paragraph {p}: " + "words " * (10 + i % 7) for p in range(3))
        (folder / f"note{i:02}.txt").write_text(body, encoding="utf-8")
    return folder


def _pipeline(workdir: Path, step: str, extra: str = "") -> Path:
    path = workdir / "pipeline.toml"
    path.write_text(
        'version = 1\n[[steps]]\nchunker = "recursive"\nparams = { chunk_size = 120 }\n'
        f'[[steps]]\nimport = "ragloom_cache_steps:{step}"\n{extra}',
        encoding="utf-8",
    )
    return path


def _env(**extra: str) -> dict[str, str]:
    tests = str(STEPS.parents[1])  # for support.sqlite_faults
    path = os.pathsep.join(p for p in (str(STEPS), tests, os.environ.get("PYTHONPATH", "")) if p)
    return {"PYTHONPATH": path, **extra}


def _summary(proc: Any) -> dict[str, Any]:
    assert proc.returncode == 0, proc.stderr
    found: dict[str, Any] = json.loads(proc.stdout)
    return found


def _warnings(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("ragloom: WARNING:")]


def test_a_step_that_cannot_be_cached_is_named_once_with_the_way_to_opt_in(
    cli, workdir: Path, corpus: Path, needs_text: None
) -> None:
    pipeline = _pipeline(workdir, "Guarded")
    args = ("run", pipeline, corpus, "--cache", "c.sqlite", "--allow-imports", "--json")
    first = cli(*args, env=_env())
    report = _summary(first)
    (line,) = _warnings(first.stderr)
    assert "Guarded" in line and "parameter 'client'" in line and "no stable identity" in line
    assert "cache_version = 1" in line and "Traceback" not in first.stderr
    (warning,) = [w for w in report["warnings"] if "parameter 'client'" in w]
    assert warning.startswith("Guarded: ")
    # The chunker is cached, the guarded step is not: as many misses as documents.
    assert (report["cache"]["hits"], report["cache"]["misses"]) == (0, N_FILES)

    # With a cache_version in its step of the pipeline file it is cached: no warning, and the
    # next run replays every document and every chunk.
    _pipeline(workdir, "Guarded", "cache_version = 1\n")
    ingest = ("ingest", corpus, "--config", pipeline, "--cache", "v.sqlite", "--allow-imports",
              "--json")
    cold = cli(*ingest, env=_env())
    assert _warnings(cold.stderr) == [] and _summary(cold)["warnings"] == []
    misses = _summary(cold)["cache"]["misses"]
    assert misses == N_FILES + _summary(cold)["chunks"]
    warm = _summary(cli(*ingest, env=_env()))
    assert (warm["cache"]["hits"], warm["cache"]["misses"]) == (misses, 0)


def test_cache_info_shows_the_cost_decisions_and_clear_forgets_them(
    cli, workdir: Path, corpus: Path, needs_text: None
) -> None:
    pipeline = _pipeline(workdir, "Tagged")
    cold = cli("ingest", corpus, "--config", pipeline, "--cache", "c.sqlite",
               "--allow-imports", "--json", env=_env(RAGLOOM_CACHE_MODE="auto"))
    chunks = _summary(cold)["chunks"]
    info = cli("cache", "info", "--cache", "c.sqlite", "--json")
    assert info.returncode == 0, info.stderr
    decisions = json.loads(info.stdout)["decisions"]
    # Both steps computed more items than the sample: each has a decision, keyed by its
    # identity (whether it is keep or skip depends on this machine's speed).
    by_step = {d["step"]: (identity, d) for identity, d in decisions.items()}
    identity, tagged = by_step["ragloom_cache_steps.Tagged"]
    assert len(identity) == 32 and tagged["items"] == chunks
    assert tagged["replay"] in ("keep", "skip")
    assert tagged["compute_us"] >= 0 and tagged["replay_us"] >= 0
    chunker = [d for s, (_i, d) in by_step.items() if s != "ragloom_cache_steps.Tagged"]
    assert [d["items"] for d in chunker] == [N_FILES]

    human = cli("cache", "info", "--cache", "c.sqlite")
    assert human.returncode == 0, human.stderr
    text = human.stdout
    assert "cost decisions" in text and "COMPUTE US/ITEM" in text and "REPLAY US/ITEM" in text
    row = next(line for line in text.splitlines() if identity in line)
    assert "ragloom_cache_steps.Tagged" in row and tagged["replay"] in row
    assert f"{tagged['compute_us']:.1f}" in row and str(chunks) in row

    cleared = cli("cache", "clear", "--cache", "c.sqlite")
    assert cleared.returncode == 0, cleared.stderr
    after = json.loads(cli("cache", "info", "--cache", "c.sqlite", "--json").stdout)
    assert (after["entries"], after["decisions"]) == (0, {})
    assert "cost decisions" not in cli("cache", "info", "--cache", "c.sqlite").stdout


def test_a_read_only_cache_replays_and_warns_once(
    cli, workdir: Path, corpus: Path, needs_text: None
) -> None:
    first = _summary(cli("ingest", corpus, "--cache", "c.sqlite", "--json"))
    cache = workdir / "c.sqlite"
    cache.chmod(0o444)
    before = cache.read_bytes()
    (corpus / "new.txt").write_text("A file the cache has never seen.\n", encoding="utf-8")
    again = cli("ingest", corpus, "--cache", "c.sqlite", "--json")
    report = _summary(again)
    (line,) = _warnings(again.stderr)
    assert "read-only" in line and "stores nothing new" in line
    assert "delete" not in again.stderr.lower() and "damaged" not in again.stderr.lower()
    assert report["cache"]["hits"] == first["cache"]["misses"]
    assert report["chunks"] > first["chunks"]
    assert cache.read_bytes() == before


def test_a_full_disk_is_one_error_line_and_leaves_output_and_cache_as_they_were(
    cli, workdir: Path, corpus: Path, needs_text: None
) -> None:
    pipeline = _pipeline(workdir, "Tagged")
    args = ("run", pipeline, corpus, "--cache", "c.sqlite", "--out", "out.jsonl",
            "--allow-imports", "--json")
    first = _summary(cli(*args, env=_env()))
    out = workdir / "out.jsonl"
    before = out.read_bytes()
    (corpus / "new.txt").write_text("A file the cache has never seen.\n", encoding="utf-8")

    full = cli(*args, env=_env(RAGLOOM_TEST_DISK_FULL="1"))
    assert full.returncode == 2
    lines = full.stderr.strip().splitlines()
    assert len(lines) == 1, full.stderr
    assert lines[0].startswith("ragloom: error: the disk holding cache file")
    assert "is full" in lines[0] and "intact" in lines[0]
    assert "Traceback" not in full.stderr and "delete" not in full.stderr.lower()
    assert out.read_bytes() == before  # the previous output is untouched

    info = cli("cache", "info", "--cache", "c.sqlite", "--json")
    assert info.returncode == 0, info.stderr
    assert json.loads(info.stdout)["entries"] == first["cache"]["misses"]
    after = _summary(cli(*args, env=_env()))
    assert after["cache"]["hits"] == first["cache"]["misses"]
