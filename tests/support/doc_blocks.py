"""The code blocks of the Markdown pages (README.md, docs/), as the doc-example tests run them.

Blocks are read with markdown-it-py (the CommonMark parser), so indented blocks inside list
items are found and dedented like any other. The conventions a page follows:

- A ```` ```python ```` block runs as written: the page's Python blocks run in order in one
  namespace, from a folder holding a copy of the repository's ``README.md`` and ``examples/``
  (the paths the pages use are relative to the repository's root).
- A block that is intentionally incomplete (an excerpt of a class, a call on a model service
  or a cluster that a test cannot reach) has the HTML comment ``<!-- fragment -->`` on the line
  just before its fence: it renders as nothing, and the tests do not run the block.
- A ```` ```toml ```` (or ```` ```yaml ````) block whose first line is a comment naming a
  file (``# query.toml``) is written to that file before the Python blocks run, as a reader
  would save it.
"""

from __future__ import annotations

import linecache
import re
import shutil
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from markdown_it import MarkdownIt

REPO = Path(__file__).resolve().parents[2]
FRAGMENT = "<!-- fragment -->"
_FILE_COMMENT = re.compile(r"^#\s*([\w.-]+\.(?:toml|ya?ml))\s*$")


@dataclass(frozen=True)
class Block:
    page: str  # relative to the repository's root
    line: int  # 1-based line of the opening fence
    info: str  # the fence's info string ("python", "toml", ...)
    code: str
    fragment: bool

    @property
    def name(self) -> str:
        return f"{self.page}:{self.line}"


def blocks(page: Path) -> list[Block]:
    """Every fenced code block of ``page``, in order."""
    text = page.read_text(encoding="utf-8")
    lines = text.splitlines()
    found = []
    for token in MarkdownIt("commonmark").parse(text):
        if token.type != "fence" or token.map is None:
            continue
        start = token.map[0]
        before = next((ln.strip() for ln in reversed(lines[:start]) if ln.strip()), "")
        found.append(
            Block(
                page=page.relative_to(REPO).as_posix(),
                line=start + 1,
                info=token.info.strip(),
                code=textwrap.dedent(token.content),
                fragment=before == FRAGMENT,
            )
        )
    return found


def python_blocks(page: Path) -> list[Block]:
    """The ``python`` blocks of ``page`` that run (fragments left out)."""
    return [b for b in blocks(page) if b.info == "python" and not b.fragment]


def lay_out(page: Path, folder: Path) -> None:
    """Prepare ``folder`` as a reader of ``page`` would have it: the repository's README.md and
    examples/, and the files the page's configuration blocks name."""
    shutil.copy(REPO / "README.md", folder / "README.md")
    shutil.copytree(REPO / "examples", folder / "examples")
    for block in blocks(page):
        if block.fragment or block.info not in ("toml", "yaml"):
            continue
        first = block.code.splitlines()[0] if block.code else ""
        if match := _FILE_COMMENT.match(first):
            (folder / match.group(1)).write_text(block.code, encoding="utf-8")


def run(block: Block, namespace: dict[str, Any]) -> None:
    """Execute ``block`` in ``namespace``; a failure's traceback shows the block's lines."""
    linecache.cache[block.name] = (
        len(block.code), None, block.code.splitlines(keepends=True), block.name
    )
    exec(compile(block.code, block.name, "exec"), namespace)
