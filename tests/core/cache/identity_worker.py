"""Subprocess side of the derived-identity tests: ``CASE VARIANT CACHE|- OUT`` runs one case's
component, built with that variant, over fixed documents through the cache (``-``: none), and
writes the outputs and the cache hits as JSON."""

from __future__ import annotations

import json
import sys

import identity_kit as kit
from ragloom import Document, Pipeline, SQLiteCacheStore

TEXT = "The quick brown fox jumps over the lazy dog. " * 6
DOCS = [Document(id=f"d{i}", content=TEXT[i:] + str(i), metadata={"n": i}) for i in range(40)]


def component(case: str, variant: int):
    if case == "private":
        return kit.PrivateWidth(width=variant)
    if case == "partial-config":
        return kit.PartialConfig(width=10, skip=variant)
    if case.startswith("length-"):
        from ragloom_text import RecursiveCharacterTextSplitter

        return RecursiveCharacterTextSplitter(
            chunk_size=20, length_function=kit.length(case.removeprefix("length-"), variant)
        )
    if case == "content-format":
        from ragloom_text import RecursiveCharacterTextSplitter

        return RecursiveCharacterTextSplitter(
            chunk_size=50, content_format=["text", "markdown"][variant]
        )
    raise SystemExit(f"unknown case {case}")


def main(case: str, variant: str, cache: str, out: str) -> None:
    store = SQLiteCacheStore(cache) if cache != "-" else False
    result = Pipeline(component(case, int(variant)), cache=store).run_sync(DOCS)
    assert not result.failed, result.failed
    with open(out, "w", encoding="utf-8") as handle:
        json.dump({"chunks": [c.model_dump(mode="json") for c in result],
                   "hits": result.cache_hits}, handle)


if __name__ == "__main__":
    main(*sys.argv[1:5])
