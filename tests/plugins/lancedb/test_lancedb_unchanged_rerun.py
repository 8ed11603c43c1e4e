"""Re-ingesting files that did not change only reads the index: LanceDB's client (a second of
imports) and the embedding model are not loaded, in a fresh process; nor is LanceDB by a reader
of the index's counts and collections (``ragloom index info``, ``ragloom eval``)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("ragloom_semantic")
pytest.importorskip("ragloom_text")
pytest.importorskip("lance", reason='needs pylance, a dependency of ragloom-lancedb')

CHILD = """
import json, sys
from ragloom.ingest import Ingestor
from ragloom_lancedb import LanceDBStore

store = LanceDBStore(sys.argv[2])
with Ingestor(store=store, cache=sys.argv[3], chunk_size=200) as ingestor:
    report = ingestor.run([sys.argv[1]])
store.close()
from ragloom_semantic._model import _ENCODERS

print(json.dumps({
    "chunks": report.chunks, "unchanged": report.unchanged, "indexed": report.indexed,
    "lancedb": "lancedb" in sys.modules,
    "model_loaded": any(e._model is not None or e._dim is not None for e in _ENCODERS.values()),
}))
"""


READER = """
import json, sys
from ragloom_lancedb import LanceDBStore

store = LanceDBStore(sys.argv[1])
info = store.info()
print(json.dumps({
    "documents": info.documents, "chunks": info.chunks,
    "indexes": info.details["indexes"], "unindexed": info.details["rows_not_in_text_index"],
    "collections": store.document_values("collection"),
    "lancedb": "lancedb" in sys.modules,
}))
"""


def ingest(docs: Path, index: Path, cache: Path) -> dict:
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, str(docs), str(index), str(cache)],
        capture_output=True, text=True, check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_an_unchanged_rerun_loads_neither_lancedb_nor_the_model(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    for name in ("a", "b"):
        (docs / f"{name}.md").write_text(f"# {name}\n\n" + "Some words here. " * 40,
                                         encoding="utf-8")
    index, cache = tmp_path / "index", tmp_path / "cache.db"
    first = ingest(docs, index, cache)
    assert first["indexed"] == 2 and first["chunks"] > 2
    assert first["lancedb"] and first["model_loaded"]
    proc = subprocess.run([sys.executable, "-c", READER, str(index)], capture_output=True,
                          text=True, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert json.loads(proc.stdout) == {
        "documents": 2, "chunks": first["chunks"],
        "indexes": ["search_text_idx", "where_tokens_idx"], "unindexed": 0,
        "collections": {"a.md": ["docs"], "b.md": ["docs"]}, "lancedb": False,
    }
    again = ingest(docs, index, cache)
    assert again == {"chunks": 0, "unchanged": 2, "indexed": 0, "lancedb": False,
                     "model_loaded": False}
    (docs / "b.md").write_text("# b\n\nAnother text altogether.", encoding="utf-8")
    edited = ingest(docs, index, cache)
    assert edited["indexed"] == 1 and edited["unchanged"] == 1 and edited["lancedb"]
