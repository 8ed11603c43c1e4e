"""JsonlCacheStore: outputs replayed after reopening, clearing, damage."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pytest
from ragloom import Chunker, Document, Pipeline
from ragloom.errors import CacheCorruptError
from ragloom.plugins import Registry

from __PACKAGE__.cache_store import JsonlCacheStore


class Lines(Chunker):
    step_id = "__DIST__-tests/lines"
    cache_mode = "always"  # cached even where replaying costs more than recomputing

    def split(self, document: Document) -> Iterable[str]:
        return document.content.splitlines(keepends=True)


class Words(Lines):
    step_id = "__DIST__-tests/words"

    def split(self, document: Document) -> Iterable[str]:
        text = document.content
        start = 0
        for i, char in enumerate(text):
            if char == " ":
                yield text[start : i + 1]
                start = i + 1
        if start < len(text):
            yield text[start:]


DOCS = [Document(id="a", content="one two\nthree\n"), Document(id="b", content="four five\n")]


def test_outputs_are_replayed_after_reopening(tmp_path: Path) -> None:
    path = tmp_path / "cache" / "c.jsonl"
    with JsonlCacheStore(str(path)) as store:
        cold = Pipeline(Lines(), cache=store).run_sync(DOCS)
        assert cold.cache_misses == 2 and cold.cache_hits == 0
    with JsonlCacheStore(str(path)) as store:
        warm = Pipeline(Lines(), cache=store).run_sync(DOCS)
        assert warm.cache_hits == 2
        assert [c.model_dump() for c in warm] == [c.model_dump() for c in cold]
        info = store.info()
        assert info.entries == 2 and info.bytes > 0 and list(info.steps.values()) == [2]


def test_clear_one_step_or_everything(tmp_path: Path) -> None:
    path = str(tmp_path / "c.jsonl")
    store = JsonlCacheStore(path)
    Pipeline(Lines(), cache=store).run_sync(DOCS)
    Pipeline(Words(), cache=store).run_sync(DOCS)
    (lines_step, words_step) = sorted(store.info().steps)
    assert store.clear(lines_step) == 2
    assert JsonlCacheStore(path).info().steps == {words_step: 2}
    assert store.clear() == 2 and JsonlCacheStore(path).info().entries == 0


def test_a_batch_cut_short_is_left_out_and_removed(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    Pipeline(Lines(), cache=JsonlCacheStore(str(path))).run_sync(DOCS[:1])
    with path.open("ab") as handle:
        handle.write(b'{"entries": [["half')  # a crash in the middle of a write
    store = JsonlCacheStore(str(path))
    assert store.info().entries == 1
    Pipeline(Lines(), cache=store).run_sync(DOCS)
    assert JsonlCacheStore(str(path)).info().entries == 2


def test_a_damaged_file_is_named(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    path.write_text("not json\n", encoding="utf-8")
    with pytest.raises(CacheCorruptError, match=r"c\.jsonl is damaged at line 1"):
        JsonlCacheStore(str(path))


def test_registered_and_built_by_name(tmp_path: Path) -> None:
    built = Registry().create(
        "cache_store", "__DIST__:__PREFIX__-jsonl", {"path": str(tmp_path / "c.jsonl")}
    )
    assert isinstance(built, JsonlCacheStore)
