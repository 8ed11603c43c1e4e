"""The cost-aware cache: a step cheaper to recompute than to replay runs uncached, and the
override. Costs are measured on a fake clock (see ``costs_kit``), so every decision is exact."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from costs_kit import CHEAP, COSTLY, READ_COST, Costed, FakeClock, MeteredStore, docs
from ragloom import CacheSkipped, MemoryCacheStore, Pipeline, SQLiteCacheStore
from ragloom._engine import costs
from ragloom.config import build_pipeline, dump_pipeline

N = costs.COST_SAMPLE + 8
WORKER = Path(__file__).with_name("costs_worker.py")


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> FakeClock:
    """The cost-aware mode (the suite pins "always") on a fake clock."""
    monkeypatch.setenv("RAGLOOM_CACHE_MODE", "auto")
    fake = FakeClock()
    monkeypatch.setattr(costs, "clock", fake)
    return fake


@pytest.fixture(params=["memory", "sqlite"])
def metered(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    inner = MemoryCacheStore() if request.param == "memory" else SQLiteCacheStore(
        tmp_path / "cache.db"
    )
    yield MeteredStore(inner)
    inner.close()


def _run(step: Costed, store: Any, n: int = N) -> tuple[Any, list[CacheSkipped]]:
    pipeline = Pipeline(step, cache=store)
    skipped: list[CacheSkipped] = []
    pipeline.subscribe(lambda e: skipped.append(e) if isinstance(e, CacheSkipped) else None)
    result = pipeline.run_sync(docs(n))
    assert not result.failed, result.failed
    return result, skipped


def _dump(result: Any) -> list[dict[str, Any]]:
    return [o.model_dump(mode="json") for o in result]


def test_a_cheap_step_is_decided_skip_then_runs_uncached(clock: FakeClock, metered: Any) -> None:
    step = Costed(CHEAP, name="cheap")
    cold, skipped = _run(step, metered)
    assert (cold.cache_hits, cold.cache_misses, skipped) == (0, N, [])
    assert metered.writes == N
    (identity, decision), = metered.decisions().items()
    assert identity == step.config_hash
    assert decision["replay"] == "skip"
    assert decision["compute_us"] == pytest.approx(CHEAP * 1e6)
    assert decision["replay_us"] == pytest.approx(READ_COST * 1e6)
    assert (decision["items"], decision["step"], decision["name"]) == (N, "tests/costed", "cheap")

    again, skipped = _run(step, metered)
    assert len(skipped) == 1 and skipped[0].step == "cheap"
    reason = skipped[0].reason
    assert "5.0 us per item" in reason and "50.0 us" in reason
    assert "cache_mode='always'" in reason and "ragloom cache clear" in reason
    # Run without the cache: neither hits nor misses, nothing written, every item computed.
    assert (again.cache_hits, again.cache_misses, metered.writes, step.calls) == (0, 0, N, 2 * N)
    assert _dump(again) == _dump(cold)


def test_fewer_items_than_the_sample_decide_nothing(clock: FakeClock, metered: Any) -> None:
    step = Costed(CHEAP)
    _run(step, metered, n=costs.COST_SAMPLE - 1)
    assert metered.decisions() == {}
    warm, skipped = _run(step, metered, n=costs.COST_SAMPLE - 1)
    assert (warm.cache_hits, skipped) == (costs.COST_SAMPLE - 1, [])


def test_a_costly_step_stays_cached_and_its_warm_run_hits(clock: FakeClock, metered: Any) -> None:
    step = Costed(COSTLY)
    cold, _ = _run(step, metered)
    (decision,) = metered.decisions().values()
    assert decision["replay"] == "keep"
    assert decision["compute_us"] == pytest.approx(COSTLY * 1e6)
    warm, skipped = _run(step, metered)
    assert (warm.cache_hits, warm.cache_misses, skipped, step.calls) == (N, 0, [], N)
    assert _dump(warm) == _dump(cold)
    # Replaying (50 us an item) stays cheaper than recomputing (5 ms): nothing new recorded.
    assert list(metered.decisions().values()) == [decision]


def test_a_replay_dearer_than_recomputing_turns_keep_into_skip(
    clock: FakeClock, metered: Any
) -> None:
    step = Costed(CHEAP)
    metered.read_cost = READ_COST / 100  # a cold run whose reads look nearly free: "keep"
    _run(step, metered)
    (decision,) = metered.decisions().values()
    assert decision["replay"] == "keep"
    metered.read_cost = READ_COST  # replaying really costs 50 us an item: dearer than 5 us
    warm, skipped = _run(step, metered)
    assert (warm.cache_hits, skipped) == (N, [])
    (decision,) = metered.decisions().values()
    assert (decision["replay"], decision["replay_us"]) == ("skip", pytest.approx(50.0))
    _, skipped = _run(step, metered)
    assert len(skipped) == 1


def _skip_recorded(store: Any, step: Costed) -> Any:
    cold, _ = _run(step, store)
    assert [d["replay"] for d in store.decisions().values()] == ["skip"]
    return cold


def test_cache_mode_always_overrides_a_recorded_skip(clock: FakeClock, metered: Any) -> None:
    step = Costed(CHEAP)
    cold = _skip_recorded(metered, step)
    warm, skipped = _run(step.configure(cache_mode="always"), metered)
    assert (warm.cache_hits, warm.cache_misses, skipped) == (N, 0, [])
    assert _dump(warm) == _dump(cold)
    assert step.calls == N  # replayed, not recomputed


def test_the_environment_default_always_overrides_a_recorded_skip(
    clock: FakeClock, metered: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    step = Costed(CHEAP)
    _skip_recorded(metered, step)
    monkeypatch.setenv("RAGLOOM_CACHE_MODE", "always")
    warm, skipped = _run(step, metered)
    assert (warm.cache_hits, skipped) == (N, [])


def test_cache_mode_always_in_a_pipeline_file_overrides_a_recorded_skip(
    clock: FakeClock, metered: Any, tmp_path: Path
) -> None:
    _skip_recorded(metered, Costed(CHEAP))
    spec = tmp_path / "pipeline.toml"
    body = f'version = 1\n[[steps]]\nimport = "costs_kit:Costed"\nparams = {{ cost = {CHEAP} }}\n'
    spec.write_text(body, encoding="utf-8")
    auto = build_pipeline(spec, allow_imports=True)
    auto.cache = metered
    skipped: list[Any] = []
    auto.subscribe(lambda e: skipped.append(e) if isinstance(e, CacheSkipped) else None)
    assert auto.run_sync(docs(N)).cache_hits == 0 and len(skipped) == 1

    spec.write_text(body + 'cache_mode = "always"\n', encoding="utf-8")
    always = build_pipeline(spec, allow_imports=True)
    always.cache = metered
    assert always.steps()[0].cache_mode == "always"
    result = always.run_sync(docs(N))
    assert (result.cache_hits, result.cache_misses) == (N, 0)
    always.cache = None  # the dump writes the spec back (a test store has no spec)
    dumped = dump_pipeline(always)
    assert dumped["steps"][0]["cache_mode"] == "always"
    assert build_pipeline(dumped, allow_imports=True).steps()[0].cache_mode == "always"


def test_clearing_the_cache_forgets_the_decisions(clock: FakeClock, metered: Any) -> None:
    step = Costed(CHEAP)
    _skip_recorded(metered, step)
    metered.clear()
    assert metered.decisions() == {}
    cold, skipped = _run(step, metered)  # cached again, and measured again
    assert (cold.cache_misses, skipped) == (N, [])
    assert [d["replay"] for d in metered.decisions().values()] == ["skip"]


def _worker(db: Path, cost: float) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, str(WORKER), str(db), repr(cost), str(N)],
        env={**os.environ, "RAGLOOM_CACHE_MODE": "auto"},
        capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    found: dict[str, Any] = json.loads(proc.stdout)
    return found


def test_a_decision_persists_across_processes_sharing_one_file(tmp_path: Path) -> None:
    db = tmp_path / "shared.sqlite"
    cold = _worker(db, CHEAP)
    assert (cold["hits"], cold["misses"], cold["skipped"], cold["calls"]) == (0, N, [], N)
    assert [d["replay"] for d in cold["decisions"].values()] == ["skip"]
    second = _worker(db, CHEAP)
    assert (second["hits"], second["misses"], second["calls"]) == (0, 0, N)
    assert len(second["skipped"]) == 1 and "runs without the cache" in second["skipped"][0]
    assert second["outputs"] == cold["outputs"]
    # A costly step in the same file is decided on its own, and kept.
    costly = _worker(db, COSTLY)
    assert costly["skipped"] == [] and costly["misses"] == N
    warm = _worker(db, COSTLY)
    assert (warm["hits"], warm["calls"], warm["skipped"]) == (N, 0, [])
    with SQLiteCacheStore(db) as store:
        assert sorted(d["replay"] for d in store.decisions().values()) == ["keep", "skip"]
