"""``ragloom plugins``, the command group, and what the CLI imports (cold start)."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest


def _plugins(proc: subprocess.CompletedProcess[str]) -> dict[str, dict]:
    return {p["distribution"]: p for p in json.loads(proc.stdout)["plugins"]}


@pytest.mark.usefixtures("needs_text", "needs_rules")
def test_plugins_json_lists_distributions_and_what_they_provide(cli) -> None:
    proc = cli("plugins", "--json", docling=True)
    assert proc.returncode == 0, proc.stderr
    plugins = _plugins(proc)
    core = plugins["ragloom"]
    assert core["status"] == "available"
    assert sorted(core["provides"]["cache_store"]) == ["memory", "sqlite"]
    text = plugins["ragloom-text"]
    assert {"auto", "recursive", "markdown", "code", "sentence"} <= set(
        text["provides"]["chunker"]
    )
    assert text["status"] == "available" and text["version"]
    rules = plugins["ragloom-rules"]
    assert {"keyword", "sample"} <= set(rules["provides"]["router"])
    assert rules["provides"]["decomposer"] == ["heuristic"]


@pytest.mark.usefixtures("needs_text")
def test_plugins_table_check_and_blocked(cli) -> None:
    table = cli("plugins", env={"RAGLOOM_DISABLE_PLUGINS": "ragloom-text"})
    assert table.returncode == 0
    row = next(line for line in table.stdout.splitlines() if line.startswith("ragloom-text "))
    assert row.split()[2] == "blocked" and "chunkers: auto" in row
    assert "disabled by RAGLOOM_DISABLE_PLUGINS" in table.stdout
    checked = cli("plugins", "--check", "--json")
    statuses = {d: p["status"] for d, p in _plugins(checked).items()}
    assert statuses["ragloom-text"] == "loaded"
    assert statuses["ragloom-docling"] == "blocked"  # the fixture disables it


def _fake_dist(site: Path, name: str, entry_points: str, requires: str = "") -> None:
    info = site / f"{name.replace('-', '_')}-0.3.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.3\n{requires}", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text(entry_points, encoding="utf-8")


def test_broken_and_incompatible_plugins_are_reported(cli, tmp_path: Path) -> None:
    site = tmp_path / "site"
    _fake_dist(site, "ragloom-broken", '[ragloom.chunkers]\nbroken = no_such_module:Thing\n')
    _fake_dist(
        site, "ragloom-future", '[ragloom.routers]\nfuture = json:loads\n',
        requires="Requires-Dist: ragloom>=9\n",
    )
    env = {"PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}
    listed = _plugins(cli("plugins", "--json", env=env))
    assert listed["ragloom-broken"]["status"] == "available"  # nothing imported yet
    assert listed["ragloom-future"]["status"] == "broken"
    assert "requires ragloom>=9" in listed["ragloom-future"]["reason"]
    checked = cli("plugins", "--check", env=env)
    assert checked.returncode == 1
    row = next(line for line in checked.stdout.splitlines() if line.startswith("ragloom-broken"))
    assert row.split()[2] == "broken"
    assert "No module named 'no_such_module'" in checked.stdout
    as_json = _plugins(cli("plugins", "--check", "--json", env=env))
    assert "chunker:broken" in as_json["ragloom-broken"]["errors"]


def test_plugins_imports_no_pydantic_anyio_or_plugin(cli) -> None:
    proc = cli("plugins", env={"PYTHONPROFILEIMPORTTIME": "1"}, docling=True)
    assert proc.returncode == 0
    imported = set(re.findall(r"\|\s+([\w.]+)\s*$", proc.stderr, flags=re.M))
    assert "ragloom.plugins._discovery" in imported  # the profile really is there
    for heavy in ("click", "pydantic", "anyio", "ragloom_text", "ragloom_rules", "ragloom_dspy",
                  "ragloom_docling", "dspy", "docling_core", "ragloom.models"):
        assert heavy not in imported, heavy


def test_plugins_help_goes_through_click(cli) -> None:
    helped = cli("plugins", "--help")
    assert helped.returncode == 0 and "--check" in helped.stdout and "blocked" in helped.stdout
    assert cli("plugins", "--bogus").returncode == 2


def test_importing_the_cli_package_does_not_import_click() -> None:
    code = "import sys, ragloom, ragloom.cli; print('click' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize("module", ["click", "rich"])
def test_a_missing_cli_dependency_gives_a_clear_message(module: str) -> None:
    code = (
        f"import sys; sys.modules[{module!r}] = None\n"
        "from ragloom.cli import main\n"
        "sys.exit(main(['plugins']))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 2
    assert f"needs {module}, which is not installed" in proc.stderr
    assert 'pip install "./core[cli]" from the root of a ragloom checkout' in proc.stderr
    assert "Traceback" not in proc.stderr


def test_help_version_and_new_plugin_slot(cli) -> None:
    helped = cli("--help")
    assert helped.returncode == 0
    for command in ("ingest", "plan", "run", "plugins", "cache", "new-plugin"):
        assert re.search(rf"^\s+{command}\s+\S", helped.stdout, flags=re.M), command
    from ragloom import __version__

    assert __version__ in cli("--version").stdout
    assert cli("no-such-command").returncode == 2
    slot = cli("new-plugin", "--help")
    if importlib.util.find_spec("ragloom.cli.new_plugin") is None:
        assert slot.returncode == 2 and "not available" in slot.stderr
    else:
        assert slot.returncode == 0


def test_console_script_matches_module_entry_point(cli) -> None:
    script = shutil.which("ragloom")
    if script is None:
        pytest.skip("the ragloom console script is not on PATH")
    by_script = subprocess.run([script, "plugins", "--json"], capture_output=True, text=True)
    assert by_script.returncode == 0
    by_module = cli("plugins", "--json", docling=True)
    assert json.loads(by_script.stdout) == json.loads(by_module.stdout)
