"""The interop guides' examples run as written: each page's Python blocks, in order, in one
namespace, from the repository's root (their paths are relative to it). Blocks are read as
``tests/docs/test_doc_examples.py`` reads every other page (``tests/support/doc_blocks.py``)."""

from __future__ import annotations

import pytest
from conftest import framework
from interop_checks import REPO
from support.doc_blocks import python_blocks, run

PAGES = {
    "langchain.md": "langchain_text_splitters",
    "llama-index.md": "llama_index.core",
    "haystack.md": "haystack",
}

@pytest.mark.parametrize("page", sorted(PAGES))
def test_the_pages_examples_run(page: str, monkeypatch: pytest.MonkeyPatch) -> None:
    framework(PAGES[page])
    blocks = python_blocks(REPO / "docs" / "interop" / page)
    assert len(blocks) >= 4, f"{page} lost its examples"
    monkeypatch.chdir(REPO)
    namespace: dict[str, object] = {"__name__": f"docs_{page.split('.')[0].replace('-', '_')}"}
    for block in blocks:
        run(block, namespace)
