"""An embedded LanceDB index of ``examples/sample-docs``, built by the ingest library (the
search, eval and searcher tests each build one per module)."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SAMPLE_DOCS = REPO / "examples" / "sample-docs"


def sample_docs_of(index: Path) -> Path:
    """The copy of the sample documents that :func:`build_sample_index` ingested into
    ``index`` (the index's root: a test may add files there and ingest them again)."""
    return index.with_name(f"{index.name}-docs")


def build_sample_index(path: Path) -> Path:
    """Ingest a copy of the sample documents (:func:`sample_docs_of`) into a LanceDB index at
    ``path``; returns ``path``."""
    import shutil

    from ragloom.ingest import ingest
    from ragloom_lancedb import LanceDBStore

    docs = sample_docs_of(path)
    if not docs.exists():
        shutil.copytree(SAMPLE_DOCS, docs)
    store = LanceDBStore(path)
    report = ingest([docs], store=store, cache=False)
    store.close()
    assert report.ok and report.indexed > 0, report.to_dict()
    return path
