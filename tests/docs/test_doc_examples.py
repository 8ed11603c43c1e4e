"""Every Python example of README.md and docs/ runs as written, or is marked as a fragment.

Each page's ``python`` blocks run in order in one namespace, from a folder laid out like the
repository's root (``tests/support/doc_blocks.py`` has the conventions: ``<!-- fragment -->``
before a block that is an excerpt, a ``# name.toml`` first line on a configuration block the
examples read). Two kinds of page run elsewhere: getting-started.md in
``test_getting_started.py`` (which also checks what its examples produce) and the interop pages
in ``tests/plugins/interop/test_interop_docs.py`` (``tox -e interop``: they need LangChain,
LlamaIndex and Haystack).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support.doc_blocks import REPO, blocks, lay_out, python_blocks, run

PAGES = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
ELSEWHERE = {"docs/getting-started.md"} | {
    p.relative_to(REPO).as_posix() for p in (REPO / "docs" / "interop").glob("*.md")
}
RUN_HERE = [p for p in PAGES if p.relative_to(REPO).as_posix() not in ELSEWHERE]


def _id(page: Path) -> str:
    return page.relative_to(REPO).as_posix()


@pytest.mark.parametrize("page", PAGES, ids=_id)
def test_python_blocks_are_marked_plainly(page: Path) -> None:
    """``python`` or nothing: an info string the tests would not recognise (``py``,
    ``python3``, ``python notest``) would leave its block unchecked without anyone noticing."""
    for block in blocks(page):
        first = block.info.split(maxsplit=1)[0] if block.info else ""
        if first.lower() in ("py", "python", "python3", "pycon"):
            assert block.info == "python", f"{block.name}: fence info {block.info!r}"


@pytest.mark.parametrize("page", RUN_HERE, ids=_id)
def test_the_pages_examples_run(
    page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runnable = python_blocks(page)
    if not runnable:
        return  # a page without Python, or with fragments only
    lay_out(page, tmp_path)
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": "__main__"}
    for block in runnable:
        run(block, namespace)
