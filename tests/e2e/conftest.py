"""Fresh virtual environments with real wheels installed, for end-to-end tests."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
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
        """``pip install`` into this environment, with the test run's own pip (``--python``):
        the environment is made without pip, which would cost an ensurepip per environment."""
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "--python",
                str(self.python),
                "install",
                "--quiet",
                "--disable-pip-version-check",
                *args,
            ],
            check=True,
        )

    def run(
        self, code: str, *, env: dict[str, str] | None = None, check: bool = True,
        stderr: bool = False,
    ) -> str:
        """What ``code`` printed on standard output (with ``stderr``: on standard error)."""
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
        return proc.stderr if stderr else proc.stdout

    def json(self, code: str, **kw: object) -> object:
        return json.loads(self.run(code, **kw).strip().splitlines()[-1])  # type: ignore[arg-type]


def _pip_wheel(out: Path, *projects: Path, isolated: bool) -> None:
    """Build real wheels of ``projects`` with pip (PEP 517) into ``out``.

    ``isolated``: in a fresh build environment with the project's ``build-system.requires``
    (pip's default); else with the test run's own hatchling, the backend of every project of
    this repository (the same wheels, without a build environment per project).
    """
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--quiet",
            "--no-deps",
            "--disable-pip-version-check",
            *(() if isolated else ("--no-build-isolation",)),
            "-w",
            str(out),
            *map(str, projects),
        ],
        check=True,
    )


def build_wheel(project: Path, out: Path) -> Path:
    """Build a real wheel of ``project`` into ``out`` in an isolated build, as a plugin author
    would (for a project made during a test, whose build requirements are under test too)."""
    before = set(out.glob("*.whl"))
    _pip_wheel(out, project, isolated=True)
    (wheel,) = set(out.glob("*.whl")) - before
    return wheel


#: Every project of this repository whose wheel an end-to-end test installs: built once per
#: session, in one pip call, into the ``wheelhouse``.
WHEEL_PROJECTS = (
    REPO / "core",
    *(REPO / "plugins" / name for name in ("text", "rules", "otel")),
    *(PLUGINS / name for name in ("audit", "good", "broken", "clash_a", "clash_b", "old")),
    REPO / "examples" / "plugin-acme",
)


class Wheelhouse:
    """The wheels of ``WHEEL_PROJECTS``, found by project folder."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __getitem__(self, project: Path) -> Path:
        with open(project / "pyproject.toml", "rb") as handle:
            name = tomllib.load(handle)["project"]["name"]
        # a wheel's file name has the distribution name normalized, "-" as "_"
        stem = re.sub(r"[-_.]+", "_", name).lower()
        (wheel,) = self.path.glob(f"{stem}-*.whl")
        return wheel


@pytest.fixture(scope="session")
def wheelhouse(tmp_path_factory: pytest.TempPathFactory) -> Wheelhouse:
    out = tmp_path_factory.mktemp("wheels")
    _pip_wheel(out, *WHEEL_PROJECTS, isolated=False)
    return Wheelhouse(out)


# before pytest-xdist reads the groups (its own hook may be registered before this conftest)
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """One worker runs every end-to-end test (pytest-xdist's ``--dist loadgroup``), so that the
    wheelhouse is built once."""
    here = Path(__file__).resolve().parent
    for item in items:
        if here in item.path.resolve().parents:
            item.add_marker(pytest.mark.xdist_group("e2e"))


def make_env(tmp: Path, wheelhouse: Wheelhouse, *extra: str) -> Env:
    """A fresh virtual environment with the core's wheel and ``extra`` installed."""
    venv.EnvBuilder(with_pip=False, clear=True).create(tmp)
    env = Env(tmp)
    env.pip(str(wheelhouse[REPO / "core"]), *extra)
    return env
