"""Subprocess side of the cross-process cache tests.

``hash CONFIGS_JSON``: print the ``config_hash`` of a ``ConfiguredChunker`` per config.
``run DB N DELAY LOG OUT``: chunk ``docs(N)`` against the SQLite cache ``DB`` (``-`` for none),
logging every split to ``LOG`` and writing the outputs as JSON to ``OUT``.
"""

from __future__ import annotations

import json
import sys

from cache_kit import ConfiguredChunker, LoggingChunker, docs, dumps, run
from ragloom import Pipeline, SQLiteCacheStore


def main(argv: list[str]) -> None:
    if argv[0] == "hash":
        configs = json.loads(argv[1])
        print(json.dumps([ConfiguredChunker(**config).config_hash for config in configs]))
        return
    db, n, delay, log, out = argv[1:6]
    chunker = LoggingChunker(log, delay=float(delay))
    store = SQLiteCacheStore(db) if db != "-" else False
    result = run(Pipeline(chunker, cache=store), docs(int(n), length=300))
    assert not result.failed, result.failed
    with open(out, "w", encoding="utf-8") as fh:
        json.dump(dumps(result), fh)


if __name__ == "__main__":
    main(sys.argv[1:])
