"""The input files' states an ingest records are kept beside the tables, and a re-ingest
through the command line sees a file edited to the same size (the skipping itself is tested
in tests/core/test_ingest_index.py)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from ragloom_lancedb import LanceDBStore

pytest.importorskip("ragloom_text")
pytest.importorskip("ragloom_semantic")


def test_states_are_kept_beside_the_tables(tmp_path: Path) -> None:
    index = tmp_path / "index"
    store = LanceDBStore(index)
    assert store.file_states() == {}
    store.set_file_states({"docs/a.md": "5:1:2:abc", "b": "7:3:4:def"})
    store.close()
    again = LanceDBStore(index)
    assert again.file_states() == {"docs/a.md": "5:1:2:abc", "b": "7:3:4:def"}
    # only a shortcut: a damaged file reads as no states (every file is read), never an error
    (index / "ragloom-files.json").write_text("{not json", encoding="utf-8")
    assert again.file_states() == {}
    again.close()


def test_a_reingest_sees_a_file_edited_to_the_same_size(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from ragloom.cli import main
    from ragloom.ingest._states import FileStates

    monkeypatch.setattr(FileStates, "clock", staticmethod(lambda: time.time_ns() + 60 * 10**9))
    docs = tmp_path / "docs"
    docs.mkdir()
    for name in ("a", "b"):
        (docs / f"{name}.md").write_text(f"# {name}\n\n" + f"Words of {name}. " * 40,
                                         encoding="utf-8")
    index = tmp_path / "index"

    def ingest() -> dict:
        capsys.readouterr()
        assert main(["ingest", str(docs), "--index", str(index), "--no-cache", "--json"]) == 0
        return json.loads(capsys.readouterr().out)

    first = ingest()
    assert first["indexed"] == 2
    assert sorted(LanceDBStore(index).file_states()) == ["a.md", "b.md"]
    b = docs / "b.md"
    b.write_text(b.read_text(encoding="utf-8").replace("Words of b", "Words of B"),
                 encoding="utf-8")
    edited = ingest()
    assert (edited["indexed"], edited["unchanged"]) == (1, 1)
    store = LanceDBStore(index)
    assert "Words of B" in store.chunks(["b.md"])["b.md"][0].content
    store.close()
