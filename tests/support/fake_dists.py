"""Installed distributions made on the fly: a ``.dist-info`` with entry points and the modules
they name, in a folder put on ``sys.path`` for one test (as ``pip install`` would leave them)."""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest


class Site:
    """A site folder on ``sys.path``; :meth:`dist` installs one distribution into it."""

    def __init__(self, root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.root = root
        self._monkeypatch = monkeypatch
        self.modules: set[str] = set()

    def dist(
        self,
        name: str,
        entry_points: Mapping[str, Mapping[str, str]],
        modules: Mapping[str, str] = {},  # noqa: B006 - read only
        version: str = "0.3",
    ) -> None:
        info = self.root / f"{name.replace('-', '_')}-{version}.dist-info"
        info.mkdir(parents=True)
        (info / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n", encoding="utf-8"
        )
        lines = []
        for group, names in entry_points.items():
            lines.append(f"[{group}]")
            lines += [f"{key} = {value}" for key, value in names.items()]
        (info / "entry_points.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
        for module, source in modules.items():
            path = self.root / (module.replace(".", "/") + ".py")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(textwrap.dedent(source), encoding="utf-8")
            self.modules.add(module)
        self.refresh()

    def refresh(self) -> None:
        import importlib

        from ragloom.plugins._discovery import refresh_installed

        importlib.invalidate_caches()
        refresh_installed()

    def imported(self, module: str) -> bool:
        return module in sys.modules


def make_site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Site]:
    """A fresh site folder on ``sys.path``; its modules are forgotten afterwards (the body of
    a ``site`` fixture: ``yield from make_site(tmp_path, monkeypatch)``)."""
    root = tmp_path / "site"
    root.mkdir()
    monkeypatch.syspath_prepend(str(root))
    made = Site(root, monkeypatch)
    made.refresh()
    yield made
    for name in list(sys.modules):
        if name.split(".")[0] in {m.split(".")[0] for m in made.modules}:
            del sys.modules[name]
    monkeypatch.undo()
    made.refresh()
