"""The store imports LanceDB without running the namespace REST client's package until used."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytest.importorskip("lancedb")

_PROGRAM = """
import sys
from ragloom_lancedb._imports import import_lancedb

lancedb = import_lancedb()
client = "lance_namespace_urllib3_client"
print(client in sys.modules, client + ".api" in sys.modules)
import lance_namespace_urllib3_client as package
print(package.ApiClient.__name__, package.__version__ != "", client + ".api" in sys.modules)
try:
    package.no_such_name
except AttributeError as exc:
    print("AttributeError", exc)
"""


def test_the_client_package_runs_on_first_use_and_is_then_whole() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", _PROGRAM], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    deferred, used, missing = proc.stdout.splitlines()
    assert deferred == "True False"  # registered, its REST client not imported
    assert used == "ApiClient True True"  # the first name read runs the whole package
    assert missing.startswith("AttributeError") and "no_such_name" in missing

