"""Finished work is written at least every second of work, and on SIGTERM, so a run stopped at
any moment resumes with only what was not finished.

Time is the engine's write clock (``ragloom._engine.cached.flush_clock``), replaced by a fake
one that the steps advance by a quarter of a second per item: the writes happen at exact
points, whatever the machine's speed. Processes are stopped only once they say they are
blocked on a known item.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cache_kit import docs
from ragloom import MemoryCacheStore, Pipeline, Policy, SQLiteCacheStore
from ragloom._engine import cached
from resume_kit import AsyncTicking, BatchTicking, Ticking, install_clock

HERE = Path(__file__).parent


class TimedStore(MemoryCacheStore):
    """Records the (fake) time and size of every write."""

    def __init__(self) -> None:
        super().__init__()
        self.timed: list[tuple[float, int]] = []

    def put_many(self, entries: Any) -> None:
        batch = list(entries)
        self.timed.append((cached.flush_clock(), len(batch)))
        super().put_many(batch)


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setattr(cached, "flush_clock", cached.flush_clock)  # restored afterwards
    return install_clock()


@pytest.mark.parametrize("step", [Ticking, AsyncTicking, BatchTicking], ids=lambda s: s.__name__)
@pytest.mark.parametrize("concurrency", [1, 4])
def test_entries_are_written_after_each_second_of_work(
    clock: Any, step: type[Any], concurrency: int
) -> None:
    store = TimedStore()
    start = clock.now
    ticking = step(policy=Policy(concurrency=concurrency))
    result = Pipeline(ticking, cache=store).run_sync(docs(10))  # one window of ten
    assert len(result) == 10 and not result.failed
    # Every fourth item is a second after the last write: written then, not at the end (a
    # batch of two is finished as a whole: the first of its items past the second writes).
    if step is BatchTicking:
        assert store.timed == [(start + 1.0, 3), (start + 2.0, 4), (start + 2.5, 3)]
    else:
        assert store.timed == [(start + 1.0, 4), (start + 2.0, 4), (start + 2.5, 2)]


def _worker(db: Path, how: str, block_at: str = "d9", n: int = 20) -> subprocess.Popen[str]:
    env = {**os.environ,
           "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])}
    return subprocess.Popen(
        [sys.executable, str(HERE / "resume_kit.py"), str(db), str(n), block_at, how],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=HERE,
        # SIGTERM with its default disposition in the child, whatever this process has
        preexec_fn=lambda: signal.signal(signal.SIGTERM, signal.SIG_DFL),
    )


def _stop_when_blocked(proc: subprocess.Popen[str], sig: int) -> str:
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        assert line.strip() == "blocked d9", (line, proc.communicate()[1])
        proc.send_signal(sig)
        _out, err = proc.communicate()
        return err
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _cached_ids(db: Path) -> set[str]:
    with sqlite3.connect(db) as conn:
        return {row[0] for row in conn.execute("SELECT item_id FROM entries")}


def test_kill_9_loses_at_most_the_last_second_of_work(tmp_path: Path) -> None:
    db = tmp_path / "cache.sqlite"
    proc = _worker(db, "run_sync")
    _stop_when_blocked(proc, signal.SIGKILL)
    assert proc.returncode == -signal.SIGKILL
    # d0..d8 were finished; writes came after d3 and d7 (each a second of work): only d8,
    # finished less than a second after the last write, is lost.
    assert _cached_ids(db) == {f"d{i}" for i in range(8)}

    step = Ticking()
    with SQLiteCacheStore(db) as store:
        result = Pipeline(step, cache=store).run_sync(docs(20))
    assert len(result) == 20 and step.calls == [f"d{i}" for i in range(8, 20)]


# run_sync (asyncio in the main thread), ``await pipeline.run()`` under trio, and run_sync from
# inside a running loop (the run in a helper thread, the main thread waiting for it)
@pytest.mark.parametrize("how", ["run_sync", "trio", "in-loop"])
def test_sigterm_writes_every_finished_item_then_ends_the_process(
    tmp_path: Path, how: str
) -> None:
    db = tmp_path / "cache.sqlite"
    proc = _worker(db, how)
    err = _stop_when_blocked(proc, signal.SIGTERM)
    assert proc.returncode == -signal.SIGTERM, err  # ended by SIGTERM, as without ragloom
    assert _cached_ids(db) == {f"d{i}" for i in range(9)}  # d8 too: every finished item
