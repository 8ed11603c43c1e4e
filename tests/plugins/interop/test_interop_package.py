"""The package imports no framework; a submodule whose framework is missing says what to install.

These tests need none of the frameworks: the main test env runs them too.
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys

import pytest

SUBMODULES = {
    # submodule: (the framework's top-level packages, the extra that installs it)
    "langchain": (("langchain_core", "langchain_text_splitters"), "langchain"),
    "llama_index": (("llama_index",), "llama-index"),
    "haystack": (("haystack",), "haystack"),
}
FRAMEWORK_PREFIXES = ("langchain", "llama_index", "haystack")


def test_importing_the_package_imports_no_framework() -> None:
    code = (
        "import json, sys, ragloom_interop\n"
        f"print(json.dumps(sorted(m for m in sys.modules if m.startswith({FRAMEWORK_PREFIXES!r}))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert json.loads(out) == []


@pytest.mark.parametrize("submodule", sorted(SUBMODULES))
def test_a_missing_framework_names_the_install_command(
    submodule: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    packages, extra = SUBMODULES[submodule]
    # ``None`` in sys.modules makes importing that name raise ImportError, installed or not;
    # submodules already imported are blocked too (they would be found by their full name).
    for name in [m for m in sys.modules if m.split(".", 1)[0] in packages] + list(packages):
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.delitem(sys.modules, f"ragloom_interop.{submodule}", raising=False)
    with pytest.raises(ImportError) as info:
        importlib.import_module(f"ragloom_interop.{submodule}")
    message = str(info.value)
    assert f'pip install "./plugins/interop[{extra}]"' in message
    assert f"ragloom_interop.{submodule} needs" in message
    assert f"ragloom_interop.{submodule}" not in sys.modules
