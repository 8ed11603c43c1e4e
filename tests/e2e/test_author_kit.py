"""The example third-party plugin and a generated plugin, as real wheels (issue 9)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from .conftest import REPO, Env, build_wheel, make_env

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory, wheelhouse: Path) -> Env:
    core = next(wheelhouse.glob("ragloom-*.whl"))
    env = make_env(tmp_path_factory.mktemp("kit-venv"), wheelhouse, f"{core}[cli]", "pytest>=8")
    return env


def _pytest(env: Env, tests: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(env.python), "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tests)],
        capture_output=True,
        text=True,
        cwd=tests.parent,
    )


def test_example_plugin_wheel_passes_the_kit_and_runs_from_a_config(
    env: Env, tmp_path: Path
) -> None:
    example = REPO / "examples" / "plugin-acme"
    env.pip(str(build_wheel(example, tmp_path)))
    listed = subprocess.run(
        [str(env.bin / "ragloom"), "plugins", "--json"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert '"acme-ragloom"' in listed and '"blocks"' in listed and '"prefix"' in listed
    proc = _pytest(env, example / "tests")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert " passed" in proc.stdout and "failed" not in proc.stdout
    out = env.json(
        "import json\n"
        "from ragloom import build_pipeline, Document\n"
        f"p = build_pipeline({str(example / 'pipeline.toml')!r})\n"
        "text = 'para one\\n\\n' * 100\n"
        "res = p.run_sync([Document(id='d', content=text)])\n"
        "assert ''.join(c.content for c in res) == text\n"
        "print(json.dumps({'n': len(res), 'max': max(len(c.content) for c in res),"
        " 'failed': len(res.failed)}))"
    )
    assert out == {"n": 3, "max": 400, "failed": 0}


def test_generated_plugin_installs_registers_and_passes(env: Env, tmp_path: Path) -> None:
    subprocess.run(
        [str(env.bin / "ragloom"), "new-plugin", "acme-widgets", "-d", str(tmp_path)],
        check=True,
        capture_output=True,
        text=True,
    )
    root = tmp_path / "acme-widgets"
    env.pip(str(build_wheel(root, tmp_path)))
    proc = _pytest(env, root / "tests")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    listed = subprocess.run(
        [str(env.bin / "ragloom"), "plugins", "--json"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "acme-widgets-paragraphs" in listed and "acme-widgets-words" in listed
