"""JsonStore: ragloom's store contract, and its own behaviour."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from ragloom import Document
from ragloom.plugins import Registry
from ragloom.stores import IndexedDocument, StoreError
from ragloom.testing import StoreContract

from __PACKAGE__.store import JsonStore


class TestJsonStoreContract(StoreContract):
    @pytest.fixture
    def store_factory(self) -> Callable[[Path], JsonStore]:
        return lambda directory: JsonStore(str(directory / "index"))


def test_a_damaged_file_is_named(tmp_path: Path) -> None:
    (tmp_path / "store.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(StoreError, match=r"store\.json cannot be read"):
        JsonStore(str(tmp_path))


def test_written_chunks_are_found_by_words(tmp_path: Path) -> None:
    chunk = Document(id="d#0", content="refunds take ten days", parent_id="d", index=0,
                     start=0, end=21, embedding=[1.0, 0.0])
    with JsonStore(str(tmp_path)) as store:
        store.write([IndexedDocument("d", "fp", [chunk])])
        (hit,) = store.search(text="how long do refunds take")
        assert hit.chunk.id == "d#0" and hit.chunk.embedding is None


def test_registered_under_its_name() -> None:
    assert Registry().resolve("store", "__DIST__:__PREFIX__-json") is JsonStore
