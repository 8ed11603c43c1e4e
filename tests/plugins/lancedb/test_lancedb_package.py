"""ragloom-lancedb as a package: exports, lazy imports, the wheel."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import ragloom_lancedb

PLUGIN = Path(__file__).resolve().parents[3] / "plugins" / "lancedb"


def test_public_exports() -> None:
    assert set(ragloom_lancedb.__all__) == {"LanceDBStore", "__version__"}
    assert ragloom_lancedb.LanceDBStore.step_id == "ragloom-lancedb/store"
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        ragloom_lancedb.nope  # noqa: B018


def test_importing_the_package_loads_nothing_heavy() -> None:
    code = (
        "import sys, ragloom_lancedb; "
        "heavy = ('lancedb', 'pyarrow', 'numpy', 'ragloom', 'pydantic'); "
        "print(sorted(m for m in heavy if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.e2e
def test_wheel_declares_the_store(tmp_path: Path) -> None:
    subprocess.run(
        # with the run's own hatchling (the tests env has it): no build environment to make
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
         "--disable-pip-version-check", "-w", str(tmp_path), str(PLUGIN)],
        check=True,
    )
    (wheel,) = tmp_path.glob("ragloom_lancedb-*.whl")
    archive = zipfile.ZipFile(wheel)
    names = set(archive.namelist())
    assert {"ragloom_lancedb/py.typed", "ragloom_lancedb/store.py"} <= names
    (entry_points,) = [n for n in names if n.endswith("entry_points.txt")]
    text = archive.read(entry_points).decode()
    assert "[ragloom.stores]" in text and "lancedb = ragloom_lancedb.store:LanceDBStore" in text
