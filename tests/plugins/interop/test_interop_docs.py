"""The interop guides' examples run as written: each page's Python blocks, in order, in one
namespace, from the repository's root (their paths are relative to it)."""

from __future__ import annotations

import linecache
import re

import pytest
from conftest import framework
from interop_checks import REPO

PAGES = {
    "langchain.md": "langchain_text_splitters",
    "llama-index.md": "llama_index.core",
    "haystack.md": "haystack",
}
_BLOCK = re.compile(r"^```python\n(.*?)^```", re.MULTILINE | re.DOTALL)


def python_blocks(page: str) -> list[str]:
    return _BLOCK.findall((REPO / "docs" / "interop" / page).read_text(encoding="utf-8"))


@pytest.mark.parametrize("page", sorted(PAGES))
def test_the_pages_examples_run(page: str, monkeypatch: pytest.MonkeyPatch) -> None:
    framework(PAGES[page])
    blocks = python_blocks(page)
    assert len(blocks) >= 4, f"{page} lost its examples"
    monkeypatch.chdir(REPO)
    namespace: dict[str, object] = {"__name__": f"docs_{page.split('.')[0].replace('-', '_')}"}
    for i, block in enumerate(blocks):
        name = f"docs/interop/{page}, example {i + 1}"
        # registered so that a failing example's traceback shows its lines
        linecache.cache[name] = (len(block), None, block.splitlines(keepends=True), name)
        exec(compile(block, name, "exec"), namespace)
