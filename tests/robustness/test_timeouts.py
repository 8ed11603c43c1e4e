"""``policy.timeout`` bounds synchronous work too: a step that never returns fails its item
with a timeout naming the step and the item (its call is left in a thread and reported), and
the run completes with every other file written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .conftest import check, pipeline_file


@pytest.mark.parametrize(
    ("step", "note"),
    [("SleepSync", "left running in a thread"), ("Spin", "left running in a thread"),
     ("SleepAsync", "")],
)
def test_a_stuck_step_fails_its_item_and_the_run_completes(rb, work: Path, step, note) -> None:
    (work / "docs" / "bad.txt").write_text("never finishes\n", encoding="utf-8")
    spec = pipeline_file(work / "p.toml", f'import = "ragloom_rb_steps:{step}"',
                         'chunker = "recursive"', head="[policy]\ntimeout = 0.5")
    proc = rb("ingest", "docs", "-c", spec, "--allow-imports", "-o", "out.jsonl", "--no-cache",
              "--json")
    check(proc, 1)
    (failure,) = json.loads(proc.stdout)["failures"]
    assert failure["kind"] == "StepTimeoutError"
    assert f"{step} took longer than 0.5s on item 'bad.txt'" in failure["reason"]
    assert note in failure["reason"]
    parents = {json.loads(line)["parent"] for line in (work / "out.jsonl").read_text().splitlines()}
    assert parents == {"a.md", "b.txt", "c.py"}
