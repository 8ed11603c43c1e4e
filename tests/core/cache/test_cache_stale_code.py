"""A step file edited between two runs (each in its own process, sharing one cache file) is
never replayed stale: each edited step computes again and equals an uncached run of the new
code, an untouched step replays, and a run of unchanged code (only comments and line numbers
moved) replays everything."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

BASE = '''
from ragloom import Document, PipelineStep

def clean(text):
    return text[{clean}:]

class Base(PipelineStep[Document]):
    def shape(self, text):
        return text[:{base}]

    def transform(self, item):
        return item.model_copy(update={{"metadata": {{"out": self.shape(item.content)}}}})
'''

STEPS = '''
from ragloom import Document, PipelineStep
import stale_base
from stale_base import Base

def helper(text):
    return text[:{helper}]

def tagged(item, out):
    return item.model_copy(update={{"metadata": {{"out": out}}}})

class Same(PipelineStep[Document]):
    step_id = "tests/stale-same"
    def transform(self, item):
        return tagged(item, item.content[:7])

class Body(PipelineStep[Document]):
    step_id = "tests/stale-body"
    def transform(self, item):
        return tagged(item, item.content[:{body}])

class Attr(PipelineStep[Document]):
    step_id = "tests/stale-attr"
    WIDTH = {width}
    def transform(self, item):
        return tagged(item, item.content[: self.WIDTH])

class Method(PipelineStep[Document]):
    step_id = "tests/stale-method"
    def cut(self, text):
        return text[:{method}]
    def transform(self, item):
        return tagged(item, self.cut(item.content))

class Helper(PipelineStep[Document]):
    step_id = "tests/stale-helper"
    def transform(self, item):
        return tagged(item, helper(item.content))

class Inherits(Base):
    step_id = "tests/stale-inherits"

_MEMO = {{}}
STOP = {stop}
_LOADED = None

def load():
    global _LOADED
    if _LOADED is None:
        _LOADED = object()
    return _LOADED

class Memo(PipelineStep[Document]):
    """Caches filled as it runs (a module's dict, a class's dict, a global bound on first
    use) are state: they never change the identity; the set it reads is code."""
    step_id = "tests/stale-memo"
    _seen = {{}}
    def transform(self, item):
        load()
        _MEMO[item.id] = len(item.content)
        self._seen[item.id] = True
        return tagged(item, [w for w in item.content.split() if w not in STOP])

class Module(PipelineStep[Document]):
    step_id = "tests/stale-module"
    def transform(self, item):
        return tagged(item, stale_base.clean(item.content))
'''

WORKER = '''
import json, sys
import stale_steps
from ragloom import Document, Pipeline, SQLiteCacheStore

docs = [Document(id=f"d{i}", content=f"document number {i} " * 3) for i in range(6)]
report = {}
with SQLiteCacheStore(sys.argv[1]) as store:
    for name in ("Same", "Body", "Attr", "Method", "Helper", "Inherits", "Module", "Memo"):
        step = getattr(stale_steps, name)().configure(cache_mode="always")
        cached = Pipeline(step, cache=store).run_sync(docs)
        fresh = Pipeline(getattr(stale_steps, name)(), cache=False).run_sync(docs)
        again = Pipeline(getattr(stale_steps, name)(), cache=store).run_sync(docs)
        report[name] = {
            "hits": cached.cache_hits,
            "again": again.cache_hits,
            "out": [d.metadata["out"] for d in cached],
            "fresh": [d.metadata["out"] for d in fresh],
        }
print(json.dumps(report))
'''

OLD = {"base": 3, "helper": 4, "body": 5, "width": 6, "method": 8, "clean": 1,
       "stop": '{"number", "document"}'}
NEW = {"base": 9, "helper": 10, "body": 11, "width": 12, "method": 2, "clean": 3,
       "stop": '{"number"}'}
EDITED = ("Body", "Attr", "Method", "Helper", "Inherits", "Module", "Memo")


def _run(folder: Path, values: dict[str, int], prefix: str = "") -> dict[str, Any]:
    (folder / "stale_base.py").write_text(prefix + BASE.format(**values))
    (folder / "stale_steps.py").write_text(prefix + STEPS.format(**values))
    # No bytecode files: an edit within the same second keeping the file's size must not
    # be read back from a stale .pyc (that would test Python's import, not the cache).
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1",
           "PYTHONPATH": os.pathsep.join([str(folder), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run(
        [sys.executable, str(folder / "worker.py"), str(folder / "cache.sqlite")],
        capture_output=True, text=True, env=env, cwd=folder,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)  # type: ignore[no-any-return]


def test_an_edited_step_file_is_computed_again_and_an_unchanged_one_replays(
    tmp_path: Path,
) -> None:
    (tmp_path / "worker.py").write_text(textwrap.dedent(WORKER))
    first = _run(tmp_path, OLD)
    assert all(r["hits"] == 0 and r["out"] == r["fresh"] for r in first.values())
    # In the same process, after the steps ran (their caches filled): the same identity.
    assert {name: r["again"] for name, r in first.items()} == dict.fromkeys(first, 6)

    # Nothing changed but comments and line numbers: everything replays.
    moved = _run(tmp_path, OLD, prefix="# a comment\n\n\n")
    for name, report in moved.items():
        assert report["hits"] == 6, name
        assert report["out"] == first[name]["out"], name

    edited = _run(tmp_path, NEW)
    assert edited["Same"]["hits"] == 6  # untouched code still replays
    for name in EDITED:
        report = edited[name]
        assert report["hits"] == 0, f"{name} replayed outputs of the code before the edit"
        assert report["out"] == report["fresh"] != first[name]["out"], name
