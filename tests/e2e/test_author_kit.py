"""The example third-party plugin and a generated plugin, as real wheels (issue 9)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from .conftest import REPO, Env, Wheelhouse, build_wheel, make_env

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory, wheelhouse: Wheelhouse) -> Env:
    core = wheelhouse[REPO / "core"]
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
    env: Env, wheelhouse: Wheelhouse
) -> None:
    example = REPO / "examples" / "plugin-acme"
    env.pip(f"{wheelhouse[example]}[test]")
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
    """A plugin with a component of every kind, installed as its README says (the core from a
    wheel built from this checkout, then the plugin with its test extra): its tests pass."""
    from ragloom.cli._template import TEMPLATES

    kinds = [arg for kind in TEMPLATES for arg in ("--kind", kind.replace("_", "-"))]
    subprocess.run(
        [str(env.bin / "ragloom"), "new-plugin", "acme-widgets", *kinds, "-d", str(tmp_path)],
        check=True,
        capture_output=True,
        text=True,
    )
    root = tmp_path / "acme-widgets"
    env.pip(f"{build_wheel(root, tmp_path)}[test]")
    proc = _pytest(env, root / "tests")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert " passed" in proc.stdout and "failed" not in proc.stdout
    listed = subprocess.run(
        [str(env.bin / "ragloom"), "plugins", "--check", "--json"],
        capture_output=True,
        text=True,
    )
    assert listed.returncode == 0, listed.stdout + listed.stderr
    (plugin,) = [
        p for p in json.loads(listed.stdout)["plugins"] if p["distribution"] == "acme-widgets"
    ]
    assert plugin["status"] == "loaded"
    assert set(plugin["provides"]) == set(TEMPLATES)
    assert "acme-widgets-paragraphs" in plugin["provides"]["chunker"]
    assert "acme-widgets-words" in plugin["provides"]["router"]
