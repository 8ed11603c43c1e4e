"""Importing LanceDB without the REST client of Lance namespaces (an embedded index never uses it).

``import lancedb`` (0.40) imports ``lance_namespace``, whose package imports
``lance_namespace_urllib3_client``, whose ``__init__`` imports every module of its generated
REST client: about 370 methods wrapped in pydantic's ``validate_call``, each building its
validators at import. That is about half of what ``import lancedb`` costs (0.6 to 0.8 s of
1.3 to 1.9 s on this project's 2-CPU machine), paid by every ``ragloom search``, ``index
info`` and ingest into an index, although a directory or bucket connection never calls it.

:func:`import_lancedb` registers that package before LanceDB imports it, with its ``__init__``
not yet run: its submodules (the data models ``lance_namespace`` imports by name) import as
usual, and the first time anything reads a name of the package itself, its ``__init__``
runs in full and the name is there, so code that does use the client gets the package as
it is. Where the package is missing, already imported, or not a package, nothing is done.
"""

from __future__ import annotations

import importlib.util
import sys
import threading
from types import ModuleType
from typing import Any

_CLIENT = "lance_namespace_urllib3_client"
_lock = threading.RLock()


def import_lancedb() -> ModuleType:
    """``import lancedb``, with the namespace REST client's package initialised on first use."""
    if "lancedb" not in sys.modules:
        _defer_package(_CLIENT)
    import lancedb

    return lancedb


def _defer_package(name: str) -> None:
    with _lock:
        if name in sys.modules:
            return
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            return
        if spec is None or spec.loader is None or spec.submodule_search_locations is None:
            return
        module = importlib.util.module_from_spec(spec)
        loader = spec.loader
        state: dict[str, Any] = {"run": False, "error": None}

        def __getattr__(attribute: str) -> Any:
            with _lock:
                if not state["run"]:
                    state["run"] = True
                    try:
                        loader.exec_module(module)
                    except BaseException as exc:
                        state["error"] = exc
                        raise
                if state["error"] is not None:
                    raise ImportError(f"{name} failed to import") from state["error"]
                if attribute in module.__dict__:
                    return module.__dict__[attribute]
            raise AttributeError(f"module {name!r} has no attribute {attribute!r}")

        module.__getattr__ = __getattr__  # type: ignore[method-assign]
        sys.modules[name] = module
