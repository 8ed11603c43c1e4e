"""Across processes: stable config hashes, resuming a killed run, two writers at once."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from cache_kit import ConfiguredChunker, CountingChunker, docs, dumps, run
from ragloom import Pipeline
from ragloom.cache import cache_info

WORKER = Path(__file__).with_name("cache_worker.py")
BASE: dict[str, Any] = {
    "size": 40,
    "ratio": 0.5,
    "separators": ["\n\n", "\n"],
    "options": {"b": 1, "a": [1, 2]},
    "flags": ["x", "y", "z"],
    "mode": "greedy",
}
VARIANTS: list[dict[str, Any]] = [
    {"size": 41},
    {"ratio": 0.25},
    {"separators": ["\n", "\n\n"]},
    {"options": {"b": 1, "a": [1, 3]}},
    {"options": {"b": 1, "a": [1, 2], "c": None}},
    {"flags": ["x", "y"]},
    {"mode": "lazy"},
]


def _worker(*args: str, seed: str = "0") -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONHASHSEED": seed}
    return subprocess.Popen(
        [sys.executable, str(WORKER), *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _finish(proc: subprocess.Popen[str], timeout: float = 120) -> str:
    out, err = proc.communicate(timeout=timeout)
    assert proc.returncode == 0, err
    return out


def test_config_hash_is_stable_across_processes_and_sensitive_to_every_value() -> None:
    configs = [BASE, dict(BASE)] + [{**BASE, **variant} for variant in VARIANTS]
    payload = json.dumps(configs)
    first = json.loads(_finish(_worker("hash", payload, seed="1")))
    second = json.loads(_finish(_worker("hash", payload, seed="2")))
    assert first == second  # other process, other hash seed (set order differs)
    here = [ConfiguredChunker(**c).config_hash for c in configs]  # built as the worker does
    assert here == first
    assert first[0] == first[1]
    assert len(set(first[1:])) == len(configs) - 1  # every variant differs from the base


def _reference(n: int) -> list[dict[str, Any]]:
    return dumps(run(Pipeline(CountingChunker(cache=False)), docs(n, length=300)))


def _lines(path: Path) -> list[str]:
    return path.read_text().split() if path.exists() else []


@pytest.mark.slow
def test_killed_run_resumes_with_only_the_remaining_work(tmp_path: Path) -> None:
    n = 160
    db = tmp_path / "cache.db"
    log1, log2 = tmp_path / "calls1.log", tmp_path / "calls2.log"
    proc = _worker("run", str(db), str(n), "0.02", str(log1), str(tmp_path / "never.json"))
    deadline = time.monotonic() + 60
    # Kill it once some finished work is in the cache file (written at least once a second).
    while not (log1.exists() and cache_info(db).entries > 0):
        assert proc.poll() is None, proc.communicate()[1]
        assert time.monotonic() < deadline, "worker made no progress"
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL

    with sqlite3.connect(db) as conn:
        cached = {row[0] for row in conn.execute("SELECT item_id FROM entries")}
    assert 0 < len(cached) < n
    assert cache_info(db).entries == len(cached)

    out = tmp_path / "resumed.json"
    _finish(_worker("run", str(db), str(n), "0", str(log2), str(out)))
    redone = _lines(log2)
    all_ids = {d.id for d in docs(n)}
    assert sorted(redone) == sorted(all_ids - cached)  # exactly the remaining work
    assert json.loads(out.read_text()) == _reference(n)
    assert cache_info(db).entries == n


@pytest.mark.slow
def test_two_processes_share_one_cache_file(tmp_path: Path) -> None:
    n = 80
    db = tmp_path / "shared.db"
    outs = [tmp_path / "a.json", tmp_path / "b.json"]
    logs = [tmp_path / "a.log", tmp_path / "b.log"]
    procs = [
        _worker("run", str(db), str(n), "0.002", str(log), str(out))
        for log, out in zip(logs, outs, strict=True)
    ]
    for proc in procs:
        _finish(proc)
    reference = _reference(n)
    for out in outs:
        assert json.loads(out.read_text()) == reference
    assert cache_info(db).entries == n
    # Each document was split at least once, and a third run splits nothing.
    assert set(_lines(logs[0])) | set(_lines(logs[1])) == {d.id for d in docs(n)}
    log3 = tmp_path / "c.log"
    _finish(_worker("run", str(db), str(n), "0", str(log3), str(tmp_path / "c.json")))
    assert _lines(log3) == []
