"""An embedded LanceDB index of ``examples/sample-docs``, built by the ingest library (the
search, eval and searcher tests each build one per module)."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SAMPLE_DOCS = REPO / "examples" / "sample-docs"


def build_sample_index(path: Path) -> Path:
    """Ingest the sample documents into a LanceDB index at ``path``; returns ``path``."""
    from ragloom.ingest import ingest
    from ragloom_lancedb import LanceDBStore

    store = LanceDBStore(path)
    report = ingest([SAMPLE_DOCS], store=store, cache=False)
    store.close()
    assert report.ok and report.indexed > 0, report.to_dict()
    return path
