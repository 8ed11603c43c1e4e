"""``import ragloom`` stays light: no plugins, no heavy or optional dependencies."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

FORBIDDEN_PREFIXES = ("ragloom_", "dspy", "click", "typer", "rich", "pydantic", "docling")


def modules_after(code: str) -> list[str]:
    script = f"import sys, json\n{code}\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    ).stdout
    return list(json.loads(out.strip().splitlines()[-1]))


def offending(modules: list[str], prefixes: tuple[str, ...]) -> list[str]:
    return [m for m in modules if m.split(".")[0].startswith(prefixes)]


def test_import_ragloom_is_light() -> None:
    modules = modules_after("import ragloom")
    assert "ragloom" in modules
    assert offending(modules, FORBIDDEN_PREFIXES) == []
    assert offending(modules, ("anyio", "pluggy", "yaml")) == []


def test_touching_a_step_name_does_not_import_plugins_or_ui() -> None:
    modules = modules_after("import ragloom\nragloom.Pipeline\nragloom.ChunkerRouter")
    assert "pydantic" in modules  # needed now, and only now
    assert offending(modules, ("ragloom_", "dspy", "click", "typer", "rich", "docling")) == []


@pytest.mark.parametrize("name", ["__version__", "RagloomError", "ConfigurationError"])
def test_cheap_names_stay_cheap(name: str) -> None:
    modules = modules_after(f"import ragloom\nragloom.{name}")
    assert offending(modules, ("pydantic", "anyio")) == []
