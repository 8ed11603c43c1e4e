"""``ragloom new-plugin NAME --kind ...``: one working component per kind of the table of kinds,
registered under the kind's entry-point group, whose generated tests (the kit's contract and
their own) pass as generated.

Here the generated project is made importable with a ``.dist-info`` beside its sources (what
``pip install -e`` would give); ``tests/e2e/test_author_kit.py`` builds and installs real
wheels in a fresh environment.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path
from types import ModuleType

import pytest
from ragloom.cli._template import TEMPLATES
from ragloom.kinds import KINDS

ALL_KINDS = [kind.replace("_", "-") for kind in TEMPLATES]


def install_in_place(root: Path, site: Path) -> dict[str, str]:
    """Make the generated project at ``root`` importable and registered, as an editable install
    would: its ``src`` on the path and a ``.dist-info`` with its entry points. Returns the
    environment to run it with."""
    project = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    info = site / f"{project['name'].replace('-', '_')}-{project['version']}.dist-info"
    info.mkdir(parents=True)
    requires = "".join(f"Requires-Dist: {r}\n" for r in project["dependencies"])
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {project['version']}\n"
        f"{requires}",
        encoding="utf-8",
    )
    lines = []
    for group, names in project["entry-points"].items():
        lines.append(f"[{group}]")
        lines += [f"{name} = {target}" for name, target in names.items()]
    (info / "entry_points.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    env = dict(os.environ)
    # As on an author's machine: no suite-wide cache mode, and docling (slow to import) off.
    env.pop("RAGLOOM_CACHE_MODE", None)
    env["RAGLOOM_DISABLE_PLUGINS"] = "ragloom-docling"
    env["PYTHONPATH"] = os.pathsep.join([str(root / "src"), str(site)])
    return env


# one pytest-xdist worker runs the whole module (--dist loadgroup):
# the generated plugin is made once
pytestmark = pytest.mark.xdist_group("new-plugin")


@pytest.fixture(scope="module")
def every_kind(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str], str]:
    """A plugin with a component of every kind that has a template, made by the CLI."""
    where = tmp_path_factory.mktemp("new-plugin")
    args = [arg for kind in ALL_KINDS for arg in ("--kind", kind)]
    made = subprocess.run(
        [sys.executable, "-m", "ragloom.cli", "new-plugin", "acme-all", *args, "-d", str(where)],
        capture_output=True, text=True,
    )
    assert made.returncode == 0, made.stderr
    root = where / "acme-all"
    return root, install_in_place(root, where / "site"), made.stdout


def test_every_kind_is_written_with_the_group_of_the_table_of_kinds(
    every_kind: tuple[Path, dict[str, str], str],
) -> None:
    root, _env, stdout = every_kind
    project = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    groups = project["entry-points"]
    assert set(groups) == {KINDS[kind].group for kind in TEMPLATES}
    for kind, template in TEMPLATES.items():
        target = groups[KINDS[kind].group][f"acme-all-{template.entry}"]
        assert target == f"acme_all.{template.module}:{template.cls}"
        assert (root / "src" / "acme_all" / f"{template.module}.py").is_file()
        assert (root / "tests" / f"test_{template.module}.py").is_file()
        assert f"acme-all-{template.entry} ({template.cls})" in stdout
    assert project["optional-dependencies"]["test"] == ["pytest>=8", "hypothesis>=6.100"]
    # The kit's contract of every kind that has one is what the kind's tests run.
    for kind, row in KINDS.items():
        if kind in TEMPLATES and row.contract is not None:
            contract = row.contract.rsplit(":", 1)[1]
            tests = (root / "tests" / f"test_{TEMPLATES[kind].module}.py").read_text("utf-8")
            assert f"({contract}):" in tests, (kind, contract)


def test_the_generated_tests_pass_as_generated(
    every_kind: tuple[Path, dict[str, str], str],
) -> None:
    root, env, _stdout = every_kind
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
        cwd=root, env=env, capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-2000:]
    summary = proc.stdout.strip().splitlines()[-1]
    passed = int(re.search(r"(\d+) passed", summary).group(1))  # type: ignore[union-attr]
    assert passed >= 100 and "failed" not in summary and "error" not in summary, summary


def test_the_plugin_is_listed_and_loads(every_kind: tuple[Path, dict[str, str], str]) -> None:
    root, env, _stdout = every_kind
    proc = subprocess.run(
        [sys.executable, "-m", "ragloom.cli", "plugins", "--check", "--json"],
        cwd=root, env=env, capture_output=True, text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads(proc.stdout)
    (plugin,) = [p for p in report["plugins"] if p["distribution"] == "acme-all"]
    assert plugin["status"] == "loaded" and plugin["errors"] == {}
    assert set(plugin["provides"]) == set(TEMPLATES)
    assert report["clashes"] == []


def test_default_kinds_and_refused_ones(tmp_path: Path) -> None:
    made = subprocess.run(
        [sys.executable, "-m", "ragloom.cli", "new-plugin", "acme-pair", "-d", str(tmp_path)],
        capture_output=True, text=True,
    )
    assert made.returncode == 0, made.stderr
    project = tomllib.loads((tmp_path / "acme-pair" / "pyproject.toml").read_text("utf-8"))
    assert set(project["project"]["entry-points"]) == {"ragloom.chunkers", "ragloom.routers"}
    for kind in ("engine", "widget"):
        refused = subprocess.run(
            [sys.executable, "-m", "ragloom.cli", "new-plugin", "x-y", "--kind", kind, "-d",
             str(tmp_path)],
            capture_output=True, text=True,
        )
        assert refused.returncode == 2 and "--kind" in refused.stderr
        assert not (tmp_path / "x-y").exists()


def test_the_readme_tells_how_to_install_ragloom_without_naming_this_machine(
    every_kind: tuple[Path, dict[str, str], str],
) -> None:
    """The README ships in the wheel's metadata: it names no path of the machine the project
    was made on, and it installs ragloom from a checkout or the repository's URL, never from a
    package index (ragloom is on none)."""
    root, _env, _stdout = every_kind
    readme = (root / "README.md").read_text(encoding="utf-8")
    checkout = Path(__file__).resolve().parents[2]
    assert str(checkout) not in readme and str(root) not in readme
    assert "not published on a package index" in readme
    assert 'python -m pip install "./core[cli]"' in readme
    assert re.search(r'pip install "ragloom\[cli\] @ git\+[^"]+#subdirectory=core"', readme)
    # wheels built for another machine carry no dependencies of their own: --no-deps, as the
    # README of ragloom itself says
    assert "python -m pip wheel --no-deps ./core -w dist" in readme
    for line in readme.splitlines():  # never from an index
        if re.search(r"pip install \S*ragloom", line):
            assert "./core" in line or " @ git+" in line or ".whl" in line, line


def _module(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"generated_{path.stem}", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_template_router_and_ragloom_rules_agree_on_the_default_route(
    every_kind: tuple[Path, dict[str, str], str],
) -> None:
    rules = pytest.importorskip("ragloom_rules")
    root, _env, _stdout = every_kind
    WordRouter = _module(root / "src" / "acme_all" / "router.py").WordRouter

    def keyword(routes: dict[str, list[str]], default: str | None) -> object:
        entries = [{"name": name, "keywords": words} for name, words in routes.items()]
        return rules.KeywordRouter(entries, default_route=default)

    cases = [
        ({"docs": ["install"]}, "general", False),  # the default is not one of the routes
        ({"docs": ["install"], "general": []}, "general", True),  # a catch-all default
        ({"docs": [], "general": ["hello"]}, "general", False),  # a catch-all not the default
        ({"docs": ["install"], "general": ["hello"]}, "docs", True),
        ({"docs": ["install"]}, None, True),  # no default route at all
    ]
    for routes, default, accepted in cases:
        outcomes = []
        for build in (WordRouter, keyword):
            try:
                built = build(routes, default)
            except ValueError:
                outcomes.append(False)
            else:
                outcomes.append(True)
                assert built.default_route == default  # type: ignore[attr-defined]
                assert default is None or default in built.valid_routes  # type: ignore[attr-defined]
        assert outcomes == [accepted, accepted], (routes, default, outcomes)


def test_an_existing_folder_or_file_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "keep.txt").write_text("mine\n", encoding="utf-8")
    (tmp_path / "afile").write_text("a file\n", encoding="utf-8")
    for name, phrase in (("taken", "exists and is not empty"), ("afile", "is not a folder")):
        refused = subprocess.run(
            [sys.executable, "-m", "ragloom.cli", "new-plugin", name, "-d", str(tmp_path)],
            capture_output=True, text=True,
        )
        assert refused.returncode == 2, refused.stderr
        assert phrase in refused.stderr and "Traceback" not in refused.stderr
    assert sorted(p.name for p in (tmp_path / "taken").iterdir()) == ["keep.txt"]
    assert (tmp_path / "afile").read_text(encoding="utf-8") == "a file\n"


def test_the_templates_are_package_data_laid_out_as_the_plugin(
    every_kind: tuple[Path, dict[str, str], str],
) -> None:
    """Every file under ``ragloom/cli/templates/plugin`` (read with importlib.resources, so it
    ships in the wheel) is one file of the plugin written, at the same path, and nothing else is
    there: the ``.py`` files that ruff and mypy check are the code a new plugin runs."""
    from importlib.resources import files

    folder = Path(str(files("ragloom.cli") / "templates" / "plugin"))
    templates = {
        p.relative_to(folder).as_posix().replace("__PACKAGE__", "acme_all").removesuffix(".tmpl")
        for p in folder.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }
    root, _env, _stdout = every_kind
    written = {  # what the CLI wrote (not what running its tests left: bytecode, caches)
        p.relative_to(root).as_posix()
        for p in root.rglob("*")
        if p.is_file() and not {"__pycache__", ".pytest_cache", ".hypothesis"} & set(p.parts)
    }
    assert templates == written - {"src/acme_all/py.typed"}
