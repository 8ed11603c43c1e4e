"""Exit statuses: 0 done, 1 items failed, 2 usage or configuration (or an output that cannot
be written), 70 an internal error (one line; the traceback saved to a file whose path is
printed), 130 Ctrl-C, 143 SIGTERM (see test_signals)."""

from __future__ import annotations

import contextlib
import json
import re
import subprocess
from pathlib import Path

from .conftest import check, command, environment, pipeline_file


def test_done_is_0(rb) -> None:
    check(rb("ingest", "docs", "-o", "out.jsonl", "--no-cache", "-q"), 0)


def test_a_failed_item_is_1(rb, work: Path) -> None:
    (work / "docs" / "bad.txt").write_text("bad\n", encoding="utf-8")
    spec = pipeline_file(work / "p.toml", 'import = "ragloom_rb_steps:Fail"')
    proc = rb("ingest", "docs", "-c", spec, "--allow-imports", "-o", "out.jsonl", "--no-cache")
    check(proc, 1)
    assert "docs/bad.txt: ValueError: this item is bad" in proc.stdout


def test_a_usage_error_is_2(rb) -> None:
    check(rb("ingest", "docs", "--no-such-option"), 2, "No such option")


def test_an_internal_error_is_70_with_the_traceback_in_a_file(rb, work: Path) -> None:
    spec = pipeline_file(work / "p.toml", 'import = "ragloom_rb_steps:Broken"')
    proc = rb("ingest", "docs", "-c", spec, "--allow-imports", "-o", "out.jsonl", "--no-cache")
    err = check(proc, 70, "internal error: RuntimeError: a bug in the step's constructor")
    assert len(err.strip().splitlines()) == 1, err
    match = re.search(r"the traceback is in (\S+?)\)", err)
    assert match, err
    saved = Path(match.group(1))
    try:
        text = saved.read_text(encoding="utf-8")
        assert "Traceback (most recent call last)" in text and "RuntimeError" in text
    finally:
        saved.unlink(missing_ok=True)
    assert not (work / "out.jsonl").exists()


def test_a_closed_stdout_pipe_is_a_quiet_normal_end(work: Path, tmp_path: Path) -> None:
    """``ragloom plan - | head -1``: once the reader is gone the command stops quietly (exit 0,
    nothing on stderr, no crash file), like other Unix tools."""
    crashes = tmp_path / "tmp"
    crashes.mkdir()
    proc = subprocess.Popen(
        command("plan", "--json", "-"), cwd=work, env=environment(TMPDIR=str(crashes)),
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    try:
        proc.stdin.write("how do I clear the cache\n" * 300)
        proc.stdin.flush()
        assert json.loads(proc.stdout.readline())["query"] == "how do I clear the cache"
        proc.stdout.close()  # the reader goes away: every later answer meets a closed pipe
        with contextlib.suppress(BrokenPipeError):
            proc.stdin.write("how do I write a plugin\n" * 300)
            proc.stdin.close()
        stderr = proc.stderr.read()
        status = proc.wait(timeout=120)
    finally:
        proc.kill()
        proc.wait()
    assert status == 0, stderr
    assert stderr == ""
    assert list(crashes.iterdir()) == []
