"""Fixtures for the ``ragloom`` command tests: every test runs the real entry point.

Commands run as ``python -m ragloom.cli ...`` in a subprocess, in a temporary working
directory, so nothing is written into the repository.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

RunCli = Callable[..., subprocess.CompletedProcess[str]]


def _needs(module: str) -> None:
    import importlib.util

    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not installed")


@pytest.fixture
def needs_text() -> None:
    _needs("ragloom_text")


@pytest.fixture
def needs_rules() -> None:
    _needs("ragloom_rules")


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    return work


@pytest.fixture
def cli(workdir: Path) -> RunCli:
    """Run ``python -m ragloom.cli ARGS`` in ``workdir``; returns the completed process.

    ``env`` entries are added to the environment; ragloom-docling is disabled unless
    ``docling=True`` (importing docling-core takes seconds; one test pays for it).
    """

    def run(
        *args: str | os.PathLike[str],
        input: str | None = None,  # noqa: A002 - mirrors subprocess.run
        env: dict[str, str] | None = None,
        docling: bool = False,
        cwd: Path | None = None,
        timeout: float = 120,
    ) -> subprocess.CompletedProcess[str]:
        full_env = dict(os.environ)
        full_env.pop("RAGLOOM_DISABLE_PLUGINS", None)
        if not docling:
            full_env["RAGLOOM_DISABLE_PLUGINS"] = "ragloom-docling"
        full_env.update(env or {})
        return subprocess.run(
            [sys.executable, "-m", "ragloom.cli", *map(str, args)],
            cwd=cwd or workdir, env=full_env, input=input, capture_output=True, text=True,
            timeout=timeout,
        )

    return run
