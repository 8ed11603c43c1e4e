"""Fresh virtual environments with real wheels installed, for end-to-end tests."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PLUGINS = Path(__file__).resolve().parent / "plugins"


class Env:
    """A virtual environment and helpers to run code in it."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.python = root / "bin" / "python"
        self.bin = root / "bin"

    def pip(self, *args: str) -> None:
        subprocess.run(
            [
                str(self.python),
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
                *args,
            ],
            check=True,
        )

    def run(self, code: str, *, env: dict[str, str] | None = None, check: bool = True) -> str:
        proc = subprocess.run(
            [str(self.python), "-c", code],
            capture_output=True,
            text=True,
            env={**os.environ, **(env or {})},
            cwd=self.root,
        )
        if check and proc.returncode != 0:
            raise AssertionError(
                f"code failed:\n{code}\nstdout:{proc.stdout}\nstderr:{proc.stderr}"
            )
        return proc.stdout

    def json(self, code: str, **kw: object) -> object:
        return json.loads(self.run(code, **kw).strip().splitlines()[-1])  # type: ignore[arg-type]


def build_wheel(project: Path, out: Path) -> Path:
    """Build a real wheel of ``project`` with pip (PEP 517, isolated build)."""
    before = set(out.glob("*.whl"))
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--quiet",
            "--no-deps",
            "--disable-pip-version-check",
            "-w",
            str(out),
            str(project),
        ],
        check=True,
    )
    (wheel,) = set(out.glob("*.whl")) - before
    return wheel


@pytest.fixture(scope="session")
def wheelhouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheels")
    build_wheel(REPO / "core", out)
    return out


def make_env(tmp: Path, wheelhouse: Path, *extra: str) -> Env:
    venv.EnvBuilder(with_pip=True, clear=True).create(tmp)
    env = Env(tmp)
    core = next(wheelhouse.glob("ragloom-*.whl"))
    env.pip(str(core), *extra)
    return env
