"""The store's own trust: the writer lock, the consistency check and the repair, through the
Python API (the command line's cases are in tests/cli/test_cli_index_trust.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from ragloom.stores import IndexedDocument, StoreBusyError

pytest.importorskip("lancedb")

from ragloom_lancedb import LanceDBStore  # noqa: E402
from test_lancedb_store import chunk, corpus  # noqa: E402


def test_a_second_writer_waits_then_is_busy(tmp_path: Path) -> None:
    with LanceDBStore(tmp_path / "ix") as first:
        first.write(corpus())  # takes the writer lock, held until close
        waited: list[bool] = []
        other = LanceDBStore(tmp_path / "ix", lock_timeout=0)
        with pytest.raises(StoreBusyError, match="is busy: another process is writing it"):
            other.write(corpus("2"))
        other.close()
        # Readers take no lock, and a check run while another writer holds it says so.
        reader = LanceDBStore(tmp_path / "ix")
        assert reader.fingerprints() == {"a": "a1", "b": "b1"}
        assert reader.check().busy and reader.check().ok
        reader.close()
        # The wait is bounded by lock_timeout; on_wait hears that it waits.
        later = LanceDBStore(tmp_path / "ix", lock_timeout=0.01)
        with pytest.raises(StoreBusyError, match=r"waited 0\.01 s"):
            later.take_writer_lock(on_wait=lambda: waited.append(True))
        later.close()
        assert waited == [True]
    with LanceDBStore(tmp_path / "ix", lock_timeout=0) as after:  # released by close
        after.write(corpus("2"))
        assert after.fingerprints() == {"a": "a2", "b": "b2"}


def test_check_and_repair_name_and_remove_orphans_and_missing_chunks(tmp_path: Path) -> None:
    import lancedb

    with LanceDBStore(tmp_path / "ix") as store:
        store.write(corpus())
        store.write([IndexedDocument("c", "c1", [chunk("c", 0, "gamma", [0.0, 0.0, 1.0])])])
        assert store.check().ok and store.check(full=True).ok
    db = lancedb.connect(str(tmp_path / "ix"))
    db.open_table("chunks_documents").delete("document_id = 'a'")  # a's chunks orphaned
    db.open_table("chunks").delete("document_id = 'c'")  # c without its chunk
    with LanceDBStore(tmp_path / "ix") as store:
        found = store.check()
        assert not found.ok and not found.unreadable
        assert found.damaged == ("a", "c")
        assert any("of no recorded document" in p for p in found.problems)
        assert any("without the chunks recorded" in p for p in found.problems)
        _, removed = store.repair()
        assert sorted(removed) == ["a", "c"]
        assert store.check(full=True).ok
        assert store.fingerprints() == {"b": "b1"}
        assert sorted(store.chunks()) == ["b"]
