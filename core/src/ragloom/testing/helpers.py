"""Helpers to test a step in a small pipeline."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..models import ContentFormat, Document
from ..pipeline import Pipeline, RunResult
from ..plugins import Registry
from ..policy import Policy
from ..step import IterableSource, PipelineStep

__all__ = ["isolated_registry", "make_documents", "run_step"]

SAMPLES = {
    "prose": (
        "Retrieval systems split documents into chunks.  Each chunk keeps its offsets.\n\n"
        "Repeated passage. Repeated passage. Repeated passage.\n\n"
        "Unicode survives: naïve café, 数据, emoji 🙂, and tabs\tinside.\n   \n"
        + "A long paragraph with many words that goes on and on " * 12
        + "\n"
    ),
    "markdown": (
        "# Guide\n\nIntro text.\n\n## Install\n\n```bash\npip install ragloom\n```\n\n"
        "| a | b |\n|---|---|\n| 1 | 2 |\n\n## Use\n\n" + "Some words here. " * 40 + "\n"
    ),
    "code": (
        "import os\n\n\ndef first(x):\n    return x + 1\n\n\nclass Thing:\n"
        "    def method(self):\n        return 42\n\n\n"
        + "def f%d():\n    pass\n\n" * 0
        + "".join(f"def fn_{i}(a, b):\n    return a * {i} + b\n\n\n" for i in range(30))
    ),
    "whitespace": "   \n\n\t  lead and trail   \n\n   ",
    "unbreakable": "x" * 3000,
}


def make_documents(
    formats: Iterable[str] = ("text", "markdown", "code"),
    *,
    metadata: dict[str, Any] | None = None,
) -> list[Document]:
    """A small varied set of documents (prose, Markdown, code, whitespace, a long word)."""
    meta = metadata if metadata is not None else {"source": "ragloom.testing", "lang": "en"}
    docs = []
    for name, text in SAMPLES.items():
        fmt = {"markdown": ContentFormat.MARKDOWN, "code": ContentFormat.CODE}.get(
            name, ContentFormat.TEXT
        )
        if str(fmt) in set(formats) or not formats:
            docs.append(
                Document(id=f"sample-{name}", content=text, content_format=fmt, metadata=dict(meta))
            )
    return docs


async def run_step(
    step: PipelineStep[Any],
    items: Iterable[Any],
    *,
    policy: Policy | None = None,
    cache: Any = None,
) -> RunResult[Any]:
    """Run ``step`` over ``items`` in a one-step pipeline; return outputs, failures, stats."""
    source = IterableSource(list(items))
    step(source)
    try:
        return await Pipeline(step, policy=policy, cache=cache).run()
    finally:
        step.unbind()


def isolated_registry() -> Registry:
    """A registry that sees no installed plugin: register components by hand."""
    return Registry(entry_points=False)
