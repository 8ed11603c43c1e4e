"""Fixtures of the robustness suite: every case runs the real ``ragloom`` command in a subprocess.

Each test gets a working folder with a small corpus. ``rb(...)`` runs ``python -m ragloom.cli``
there with the steps of ``steps/`` importable (``--allow-imports``) and ragloom-docling
disabled (importing docling-core takes seconds). ``check(...)`` asserts what every case must
show: the exit status, the message, one line per error and never a traceback.
"""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

STEPS = Path(__file__).resolve().parent / "steps"

RunCli = Callable[..., subprocess.CompletedProcess[str]]


def environment(*pythonpath: str | os.PathLike[str], **extra: str) -> dict[str, str]:
    """The environment of a ``ragloom`` subprocess: the test steps (and ``pythonpath``)
    importable, ragloom-docling disabled, progress lines on every file."""
    env = dict(os.environ)
    env["RAGLOOM_DISABLE_PLUGINS"] = "ragloom-docling"
    env["RAGLOOM_PROGRESS_INTERVAL"] = "0"
    paths = [*map(str, pythonpath), str(STEPS), env.get("PYTHONPATH", "")]
    env["PYTHONPATH"] = os.pathsep.join(p for p in paths if p)
    env.update(extra)
    return env


def command(*args: str | os.PathLike[str]) -> list[str]:
    return [sys.executable, "-m", "ragloom.cli", *map(str, args)]


def sigint_default() -> None:
    """``preexec_fn``: the child starts with Ctrl-C on (an interactive shell's foreground job),
    whatever this test process inherited (a background job or a CI runner may ignore it)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def sigint_ignored() -> None:
    """``preexec_fn``: the child starts with SIGINT ignored (a background job of a
    non-interactive shell, some CI runners)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


@pytest.fixture
def spawn() -> Iterator[Callable[..., subprocess.Popen[str]]]:
    """``subprocess.Popen`` with text pipes and SIGINT on by default in the child; every
    process started is killed (if still running) and reaped when the test ends, pass or
    fail, so no ``ragloom`` is left behind."""
    started: list[subprocess.Popen[str]] = []

    def start(args: list[str], **kwargs: Any) -> subprocess.Popen[str]:
        kwargs.setdefault("preexec_fn", sigint_default)
        kwargs.setdefault("stdout", subprocess.PIPE)
        kwargs.setdefault("stderr", subprocess.PIPE)
        proc = subprocess.Popen(args, text=True, **kwargs)
        started.append(proc)
        return proc

    yield start
    for proc in started:
        if proc.poll() is None:
            proc.kill()
        proc.wait()


@pytest.fixture
def work(tmp_path: Path) -> Path:
    """A working folder with ``docs/`` (three small good files) and ``old.jsonl`` (an earlier
    output that must survive every refused or failed run)."""
    root = tmp_path / "work"
    docs = root / "docs"
    docs.mkdir(parents=True)
    (docs / "a.md").write_text("# Title\n\nSome text about caches.\n", encoding="utf-8")
    (docs / "b.txt").write_text("Plain text. " * 40 + "\n", encoding="utf-8")
    (docs / "c.py").write_text("def f():\n    return 1\n", encoding="utf-8")
    (root / "old.jsonl").write_text('{"earlier": "output"}\n', encoding="utf-8")
    return root


@pytest.fixture
def rb(work: Path) -> RunCli:
    """Run ``ragloom ARGS`` in the working folder; returns the completed process."""

    def run(
        *args: str | os.PathLike[str],
        pythonpath: Iterable[str | os.PathLike[str]] = (),
        env: dict[str, str] | None = None,
        input: str | None = None,  # noqa: A002 - mirrors subprocess.run
        preexec_fn: Callable[[], None] | None = None,
        timeout: float = 120,
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            command(*args), cwd=work, env=environment(*pythonpath, **(env or {})),
            input=input, capture_output=True, text=True, timeout=timeout,
            preexec_fn=preexec_fn,
        )

    return run


def check(
    proc: subprocess.CompletedProcess[str], status: int, *phrases: str
) -> str:
    """Assert the exit ``status``, no traceback, and every phrase in stderr; return stderr."""
    out = proc.stdout + proc.stderr
    assert proc.returncode == status, f"exit {proc.returncode}, expected {status}\n{out}"
    assert "Traceback" not in out, out
    for phrase in phrases:
        assert phrase in proc.stderr, f"{phrase!r} not in stderr:\n{proc.stderr}"
    errors = [line for line in proc.stderr.splitlines() if line.startswith("ragloom: error:")]
    assert len(errors) <= 1, proc.stderr
    return proc.stderr


def snapshot(*roots: Path) -> dict[str, str]:
    """sha256 of every file under ``roots`` (a file root is itself), by path."""
    hashes: dict[str, str] = {}
    for root in roots:
        files = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
        for path in files:
            hashes[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
    return hashes


def temp_files(root: Path) -> list[str]:
    """Leftover temporary output files (``.NAME.xxxx.tmp``) under ``root``."""
    return sorted(str(p) for p in root.rglob("*.tmp"))


def pipeline_file(path: Path, *steps: str, head: str = "") -> Path:
    """Write a TOML pipeline file: ``head`` (e.g. a policy table), then one ``[[steps]]`` per
    step body (e.g. ``'import = "ragloom_rb_steps:Spin"'``)."""
    body = ["version = 1", head] + [f"[[steps]]\n{step}" for step in steps]
    path.write_text("\n".join(body) + "\n", encoding="utf-8")
    return path


def make_plugin(
    root: Path, dist: str, source: str, entry_points: dict[str, dict[str, str]]
) -> None:
    """An installed-looking plugin distribution under ``root`` (put ``root`` on PYTHONPATH):
    module ``<dist with _>.py`` holding ``source`` and a ``.dist-info`` with its entry points."""
    module = dist.replace("-", "_")
    (root / f"{module}.py").write_text(source, encoding="utf-8")
    info = root / f"{module}-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1\nRequires-Dist: ragloom\n",
        encoding="utf-8",
    )
    lines = []
    for group, names in entry_points.items():
        lines.append(f"[{group}]")
        lines += [f"{name} = {value}" for name, value in names.items()]
    (info / "entry_points.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
