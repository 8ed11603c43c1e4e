"""Subprocess side of the cross-process cost tests: ``DB COST N`` runs ``Costed(COST)`` over
``docs(N)`` through the SQLite cache ``DB`` on a fake clock, and prints as JSON the hits,
misses, computed items, ``CacheSkipped`` reasons, decisions on record and outputs."""

from __future__ import annotations

import json
import sys

from costs_kit import Costed, FakeClock, MeteredStore, docs
from ragloom import CacheSkipped, Pipeline, SQLiteCacheStore
from ragloom._engine import costs


def main(db: str, cost: str, n: str) -> None:
    costs.clock = FakeClock()
    step = Costed(float(cost))
    skipped: list[str] = []
    with SQLiteCacheStore(db) as inner:
        store = MeteredStore(inner)
        pipeline = Pipeline(step, cache=store)
        pipeline.subscribe(
            lambda e: skipped.append(e.reason) if isinstance(e, CacheSkipped) else None
        )
        result = pipeline.run_sync(docs(int(n)))
        assert not result.failed, result.failed
        decisions = inner.decisions()
    print(json.dumps({
        "hits": result.cache_hits, "misses": result.cache_misses, "calls": step.calls,
        "skipped": skipped, "decisions": decisions,
        "outputs": [o.model_dump(mode="json") for o in result],
    }))


if __name__ == "__main__":
    main(*sys.argv[1:4])
