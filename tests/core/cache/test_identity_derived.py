"""A cached run never replays another configuration's outputs: each case runs variant A, then
variant B in a fresh process sharing the same cache file, and B's outputs must equal an
uncached run of B field by field (and B must not have been served from A's entries)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent
WORKER = HERE / "identity_worker.py"

CASES = [
    "private",  # a constructor argument kept privately, no config()
    "partial-config",  # config() lists some arguments, not all
    "length-partial",  # functools.partial(count_tokens, tokenizer=...)
    "length-closure",  # a closure from a factory
    "length-object",  # a callable object holding its setting
    "content-format",  # a first-party parameter config() used to miss
]


def _run(case: str, variant: int, cache: str, out: Path) -> dict:
    path = os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])
    env = {**os.environ, "PYTHONPATH": path}
    proc = subprocess.run(
        [sys.executable, str(WORKER), case, str(variant), cache, str(out)],
        capture_output=True, text=True, env=env, cwd=HERE,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(out.read_text(encoding="utf-8"))


@pytest.mark.parametrize("case", CASES)
def test_a_changed_setting_is_never_replayed(case: str, tmp_path: Path) -> None:
    cache = str(tmp_path / "cache.sqlite")
    first = _run(case, 1 if case in ("content-format", "partial-config") else 7, cache,
                 tmp_path / "a.json")
    variant = 0 if case in ("content-format", "partial-config") else 11
    cached = _run(case, variant, cache, tmp_path / "b.json")
    fresh = _run(case, variant, "-", tmp_path / "c.json")
    assert first["chunks"] != fresh["chunks"], "the variants must cut differently"
    assert cached["chunks"] == fresh["chunks"]
    assert cached["hits"] == 0
    again = _run(case, variant, cache, tmp_path / "d.json")  # the same variant does hit
    assert again["chunks"] == fresh["chunks"] and again["hits"] == 40
