"""ragloom-loaders as a plugin: entry points, discovery, picking, and light imports."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

from ragloom.loaders_builtin import LoaderSet
from ragloom.loading import Loader, SourceFile
from ragloom.plugins import Registry
from ragloom.testing import LoaderContract
from ragloom_loaders import DocxLoader, HtmlLoader, PdfLoader

TESTS = Path(__file__).resolve().parents[2]


def first_party_loaders() -> dict[str, type]:
    """Every loader class the ragloom and ragloom-loaders distributions register."""
    found = {}
    for ep in entry_points(group="ragloom.loaders"):
        if ep.dist is not None and ep.dist.name in ("ragloom", "ragloom-loaders"):
            found[f"{ep.dist.name}:{ep.name}"] = ep.load()
    return found


def contract_classes(path: Path) -> list[type]:
    spec = importlib.util.spec_from_file_location(f"_contracts_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return [
        v for v in vars(module).values()
        if isinstance(v, type) and issubclass(v, LoaderContract) and v is not LoaderContract
    ]


def test_entry_points() -> None:
    loaders = first_party_loaders()
    assert loaders == {
        "ragloom:text": loaders["ragloom:text"],
        "ragloom:markdown": loaders["ragloom:markdown"],
        "ragloom:rst": loaders["ragloom:rst"],
        "ragloom:code": loaders["ragloom:code"],
        "ragloom:json": loaders["ragloom:json"],
        "ragloom-loaders:html": HtmlLoader,
        "ragloom-loaders:pdf": PdfLoader,
        "ragloom-loaders:docx": DocxLoader,
    }
    assert all(issubclass(cls, Loader) for cls in loaders.values())


def test_every_first_party_loader_runs_the_contract() -> None:
    classes = contract_classes(TESTS / "core" / "test_loaders_builtin.py")
    classes += contract_classes(Path(__file__).with_name("test_loaders_contract.py"))
    covered = set()
    for cls in classes:
        fixture = cls.loader
        build = getattr(fixture, "__wrapped__", None) or getattr(fixture, "__pytest_wrapped__").obj
        covered.add(type(build(cls())))
    missing = set(first_party_loaders().values()) - covered
    assert not missing, f"loaders without a contract test: {sorted(c.__name__ for c in missing)}"


def test_registry_builds_and_the_set_picks_them() -> None:
    registry = Registry(load_hooks=False)
    assert {"html", "pdf", "docx"} <= set(registry.names("loader"))
    loaders = LoaderSet.from_registry(registry)
    picks = {
        "a.html": "html", "b.HTM": "html", "c.xhtml": "html", "d.pdf": "pdf", "e.docx": "docx",
        "f.md": "markdown", "g.txt": "text", "h.py": "code", "i.json": "json",
    }
    for path, name in picks.items():
        assert loaders.name_of(loaders.pick(SourceFile(path, b"", path))) == name


def test_importing_and_discovering_loads_no_parser() -> None:
    code = (
        "import sys\n"
        "import ragloom_loaders\n"
        "from ragloom_loaders import HtmlLoader, PdfLoader, DocxLoader\n"
        "from ragloom.loaders_builtin import LoaderSet\n"
        "s = LoaderSet.from_registry()\n"
        "from ragloom.loading import SourceFile\n"
        "s.pick(SourceFile('a.pdf', b'', 'a'))\n"
        "heavy = ('selectolax', 'pypdfium2', 'docx', 'lxml')\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
