"""Signals: SIGINT (Ctrl-C) and SIGTERM (``timeout``, systemd, Kubernetes) stop a run on the
first signal, remove temporary files, keep the earlier output and a consistent cache, print
one line, and exit 130 / 143.

Every signal is sent only after the run was seen blocked (a step announces it on stderr and
then never finishes), so no test races the run's own end, however fast or slow the machine.
The timer below only kills a hung process (then the assertions say what was seen).
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import threading
from pathlib import Path

import pytest

from .conftest import check, command, environment, pipeline_file, snapshot, temp_files

STATUS = {signal.SIGINT: 130, signal.SIGTERM: 143}
WORD = {signal.SIGINT: "interrupted", signal.SIGTERM: "terminated"}


def _corpus(root: Path, files: int) -> Path:
    root.mkdir()
    for i in range(files):
        (root / f"f{i:03}.txt").write_text(f"File {i}. " + "Some words here. " * 30,
                                           encoding="utf-8")
    return root


def _signal_when(
    work: Path, args: list[str], marker: str, sig: int, *, progress: bool = False
) -> subprocess.CompletedProcess[str]:
    """Run ``ragloom ARGS``, send ``sig`` once ``marker`` was printed on stderr (and, with
    ``progress``, a file was reported done: its chunks are in the cache); wait."""
    proc = subprocess.Popen(
        command(*args), cwd=work, env=environment(), stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True,
    )
    assert proc.stderr is not None
    guard = threading.Timer(120, proc.kill)  # a hang guard only: never decides the outcome
    guard.start()
    seen = ""
    try:
        while marker not in seen or (progress and not re.search(r"ragloom: [1-9]\d*/", seen)):
            line = proc.stderr.readline()
            if not line:
                break
            seen += line
        if marker in seen:
            proc.send_signal(sig)
        stdout, stderr = proc.communicate()
    finally:
        guard.cancel()
    assert marker in seen, seen + stderr
    return subprocess.CompletedProcess(proc.args, proc.returncode, stdout, seen + stderr)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_keeps_the_old_output_and_a_consistent_cache(rb, work: Path, sig) -> None:
    corpus = _corpus(work / "corpus", 40)
    blocking = pipeline_file(
        work / "blocking.toml", 'import = "ragloom_rb_steps:BlockAfter"\nparams = { after = 10 }',
        'chunker = "ragloom-text:auto"',
    )
    before = snapshot(corpus, work / "old.jsonl")
    proc = _signal_when(
        work, ["ingest", "corpus", "-o", "old.jsonl", "--cache", "c.sqlite", "-c", blocking,
               "--allow-imports"], "blocked after 10 items", sig, progress=True,
    )
    check(proc, STATUS[sig], f"ragloom: {WORD[sig]}", "old.jsonl was not written")
    assert snapshot(corpus, work / "old.jsonl") == before
    assert temp_files(work) == []
    info = rb("cache", "info", "--cache", "c.sqlite", "--json")
    check(info, 0)
    kept = json.loads(info.stdout)["entries"]
    assert 0 < kept <= 10
    # Resuming with the same chunkers replays every finished document from the cache.
    resumed = rb("ingest", "corpus", "-o", "old.jsonl", "--cache", "c.sqlite")
    check(resumed, 0)
    assert f"cache: {kept} hits, {40 - kept} misses" in resumed.stdout
    records = [json.loads(line) for line in (work / "old.jsonl").read_text().splitlines()]
    assert len({r["parent"] for r in records}) == 40


@pytest.mark.parametrize(
    ("sig", "policy"),
    [
        (signal.SIGINT, "[policy]\ntimeout = 600"),
        (signal.SIGTERM, "[policy]\ntimeout = 600"),
        (signal.SIGTERM, ""),
    ],
    ids=["SIGINT-timeout", "SIGTERM-timeout", "SIGTERM-no-timeout"],
)
def test_the_first_signal_stops_a_step_stuck_in_synchronous_code(work: Path, sig, policy) -> None:
    """With a timeout the stuck call runs in a thread and the loop takes the signal; without
    one, SIGTERM is raised into the stuck code after a short grace period (Ctrl-C follows
    Python's asyncio: its first press cancels the run at the loop's next turn, which a step
    that never returns never gives, so that case is SIGTERM's)."""
    (work / "docs" / "bad.txt").write_text("stuck here\n", encoding="utf-8")
    spin = pipeline_file(work / "spin.toml", 'import = "ragloom_rb_steps:Spin"', head=policy)
    before = snapshot(work / "docs", work / "old.jsonl")
    proc = _signal_when(
        work, ["ingest", "docs", "-o", "old.jsonl", "--no-cache", "-c", spin, "--allow-imports"],
        "ragloom-rb: spinning", sig,
    )
    check(proc, STATUS[sig], f"ragloom: {WORD[sig]}")
    assert snapshot(work / "docs", work / "old.jsonl") == before
    assert temp_files(work) == []


def test_sigint_during_a_plan_from_stdin(work: Path) -> None:
    """A plan blocked reading questions from a pipe stops on the first Ctrl-C."""
    proc = subprocess.Popen(
        command("plan", "--json", "-"), cwd=work, env=environment(), stdin=subprocess.PIPE,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    assert proc.stdin is not None and proc.stdout is not None
    guard = threading.Timer(120, proc.kill)
    guard.start()
    try:
        # Enough questions to fill a window, so the first answers come out while stdin is open.
        proc.stdin.write("how do I clear the cache\n" * 300)
        proc.stdin.flush()
        first = proc.stdout.readline()
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate()
    finally:
        guard.cancel()
    assert json.loads(first)["query"] == "how do I clear the cache"
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr and "ragloom: interrupted" in stderr


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_stops_a_run_of_two_pooled_steps(work: Path, sig) -> None:
    corpus = _corpus(work / "corpus", 300)
    two = pipeline_file(
        work / "two.toml", 'import = "ragloom_rb_steps:PassAsync"',
        'import = "ragloom_rb_steps:BlockAfter"\nparams = { after = 30 }',
        'chunker = "ragloom-text:auto"',
    )
    before = snapshot(corpus, work / "old.jsonl")
    proc = _signal_when(
        work, ["ingest", "corpus", "-o", "old.jsonl", "--no-cache", "-c", two,
               "--allow-imports"], "blocked after 30 items", sig,
    )
    assert snapshot(corpus, work / "old.jsonl") == before
    check(proc, STATUS[sig], f"ragloom: {WORD[sig]}")
