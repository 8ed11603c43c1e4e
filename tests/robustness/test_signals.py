"""Signals: SIGINT (Ctrl-C) and SIGTERM (``timeout``, systemd, Kubernetes) stop a run on the
first signal, remove temporary files, keep the earlier output and a consistent cache, print
one line, and exit 130 / 143.

Every signal is sent only after the run was seen blocked (a step announces it on stderr and
then never finishes), so no test races the run's own end, however fast or slow the machine.
The timer below only kills a hung process (then the assertions say what was seen).

Each child starts with the SIGINT disposition its test relies on (``preexec_fn``), whatever
this process inherited: on for the Ctrl-C cases, and ignored for the SIGTERM cases that show
SIGTERM still ends in 143 when a background job or a CI runner ignores SIGINT. Every child is
killed and reaped when its test ends (the ``spawn`` fixture).
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from .conftest import (
    check,
    command,
    environment,
    pipeline_file,
    sigint_default,
    sigint_ignored,
    snapshot,
    temp_files,
)

STATUS = {signal.SIGINT: 130, signal.SIGTERM: 143}
WORD = {signal.SIGINT: "interrupted", signal.SIGTERM: "terminated"}


def _corpus(root: Path, files: int) -> Path:
    root.mkdir()
    for i in range(files):
        (root / f"f{i:03}.txt").write_text(f"File {i}. " + "Some words here. " * 30,
                                           encoding="utf-8")
    return root


def _read_until(proc: subprocess.Popen[str], done: Callable[[str], bool]) -> str:
    """stderr of ``proc`` line by line until ``done(seen)`` or its end; what was seen."""
    assert proc.stderr is not None
    seen = ""
    while not done(seen):
        line = proc.stderr.readline()
        if not line:
            break
        seen += line
    return seen


def _signal_when(
    spawn, work: Path, args: list[str], marker: str, sig: int, *, progress: bool = False,
    preexec_fn: Callable[[], None] = sigint_default,
) -> subprocess.CompletedProcess[str]:
    """Run ``ragloom ARGS``, send ``sig`` once ``marker`` was printed on stderr (and, with
    ``progress``, a file was reported done: its chunks are in the cache); wait."""
    proc = spawn(command(*args), cwd=work, env=environment(), preexec_fn=preexec_fn)
    guard = threading.Timer(120, proc.kill)  # a hang guard only: never decides the outcome
    guard.start()
    try:
        seen = _read_until(
            proc,
            lambda seen: marker in seen
            and (not progress or bool(re.search(r"ragloom: [1-9]\d*/", seen))),
        )
        if marker in seen:
            proc.send_signal(sig)
        stdout, stderr = proc.communicate()
    finally:
        guard.cancel()
    assert marker in seen, seen + stderr
    return subprocess.CompletedProcess(proc.args, proc.returncode, stdout, seen + stderr)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_keeps_the_old_output_and_a_consistent_cache(rb, spawn, work: Path, sig) -> None:
    corpus = _corpus(work / "corpus", 40)
    blocking = pipeline_file(
        work / "blocking.toml", 'import = "ragloom_rb_steps:BlockAfter"\nparams = { after = 10 }',
        'chunker = "ragloom-text:auto"',
    )
    before = snapshot(corpus, work / "old.jsonl")
    proc = _signal_when(
        spawn, work, ["ingest", "corpus", "-o", "old.jsonl", "--cache", "c.sqlite", "-c", blocking,
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
    ("sig", "policy", "preexec_fn"),
    [
        (signal.SIGINT, "[policy]\ntimeout = 600", sigint_default),
        (signal.SIGTERM, "[policy]\ntimeout = 600", sigint_default),
        (signal.SIGTERM, "", sigint_default),
        (signal.SIGTERM, "[policy]\ntimeout = 600", sigint_ignored),
        (signal.SIGTERM, "", sigint_ignored),
    ],
    ids=[
        "SIGINT-timeout", "SIGTERM-timeout", "SIGTERM-no-timeout",
        "SIGTERM-timeout-SIGINT-ignored", "SIGTERM-no-timeout-SIGINT-ignored",
    ],
)
def test_the_first_signal_stops_a_step_stuck_in_synchronous_code(
    spawn, work: Path, sig, policy, preexec_fn
) -> None:
    """With a timeout the stuck call runs in a thread and the loop takes the signal; without
    one, SIGTERM is raised into the stuck code after a short grace period (Ctrl-C follows
    Python's asyncio: its first press cancels the run at the loop's next turn, which a step
    that never returns never gives, so that case is SIGTERM's)."""
    (work / "docs" / "bad.txt").write_text("stuck here\n", encoding="utf-8")
    spin = pipeline_file(work / "spin.toml", 'import = "ragloom_rb_steps:Spin"', head=policy)
    before = snapshot(work / "docs", work / "old.jsonl")
    proc = _signal_when(
        spawn, work,
        ["ingest", "docs", "-o", "old.jsonl", "--no-cache", "-c", spin, "--allow-imports"],
        "ragloom-rb: spinning", sig, preexec_fn=preexec_fn,
    )
    check(proc, STATUS[sig], f"ragloom: {WORD[sig]}")
    # Ctrl-C is answered at once; SIGTERM (nobody at a keyboard) gets no such hint.
    assert ("press Ctrl-C again" in proc.stderr) == (sig == signal.SIGINT)
    assert snapshot(work / "docs", work / "old.jsonl") == before
    assert temp_files(work) == []


def test_the_first_ctrl_c_on_a_stuck_step_says_the_run_waits_for_it(spawn, work: Path) -> None:
    """Without a timeout a step stuck in synchronous code never lets the first Ctrl-C in: it
    is not swallowed silently: the run says at once that it waits for the step and that a
    second Ctrl-C stops it now, which it does."""
    (work / "docs" / "bad.txt").write_text("stuck here\n", encoding="utf-8")
    spin = pipeline_file(work / "spin.toml", 'import = "ragloom_rb_steps:Spin"')
    before = snapshot(work / "docs", work / "old.jsonl")
    proc = spawn(
        command("ingest", "docs", "-o", "old.jsonl", "--no-cache", "-c", spin,
                "--allow-imports"),
        cwd=work, env=environment(),
    )
    guard = threading.Timer(120, proc.kill)  # a hang guard only
    guard.start()
    try:
        seen = _read_until(proc, lambda seen: "ragloom-rb: spinning" in seen)
        assert "ragloom-rb: spinning" in seen, seen
        proc.send_signal(signal.SIGINT)
        said = _read_until(proc, lambda seen: "press Ctrl-C again" in seen)
        assert "waiting for the running steps to return; press Ctrl-C again to stop now" in said
        assert proc.poll() is None  # still stuck: only the second Ctrl-C stops it
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate()
    finally:
        guard.cancel()
    done = subprocess.CompletedProcess(proc.args, proc.returncode, stdout, seen + said + stderr)
    check(done, 130, "ragloom: interrupted", "old.jsonl was not written")
    assert snapshot(work / "docs", work / "old.jsonl") == before
    assert temp_files(work) == []


def test_sigint_during_a_plan_from_stdin(spawn, work: Path) -> None:
    """A plan blocked reading questions from a pipe stops on the first Ctrl-C."""
    proc = spawn(
        command("plan", "--json", "-"), cwd=work, env=environment(), stdin=subprocess.PIPE,
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


@pytest.mark.parametrize(
    ("sig", "preexec_fn"),
    [
        (signal.SIGINT, sigint_default),
        (signal.SIGTERM, sigint_default),
        (signal.SIGTERM, sigint_ignored),
    ],
    ids=["SIGINT", "SIGTERM", "SIGTERM-SIGINT-ignored"],
)
def test_a_signal_stops_a_run_of_two_pooled_steps(spawn, work: Path, sig, preexec_fn) -> None:
    corpus = _corpus(work / "corpus", 300)
    two = pipeline_file(
        work / "two.toml", 'import = "ragloom_rb_steps:PassAsync"',
        'import = "ragloom_rb_steps:BlockAfter"\nparams = { after = 30 }',
        'chunker = "ragloom-text:auto"',
    )
    before = snapshot(corpus, work / "old.jsonl")
    proc = _signal_when(
        spawn, work, ["ingest", "corpus", "-o", "old.jsonl", "--no-cache", "-c", two,
                      "--allow-imports"], "blocked after 30 items", sig, preexec_fn=preexec_fn,
    )
    assert snapshot(corpus, work / "old.jsonl") == before
    check(proc, STATUS[sig], f"ragloom: {WORD[sig]}")
