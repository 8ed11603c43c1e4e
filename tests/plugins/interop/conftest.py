"""ragloom-interop tests: each framework's tests skip without it, except in the interop env.

The tox env ``interop`` installs LangChain, LlamaIndex and Haystack and sets
``RAGLOOM_INTEROP_REQUIRED=1``: there a missing framework fails the run instead of skipping it.
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType

import pytest

REQUIRED = os.environ.get("RAGLOOM_INTEROP_REQUIRED") == "1"

EXTRAS = {
    "langchain_text_splitters": "langchain",
    "llama_index.core": "llama-index",
    "haystack": "haystack",
}


def framework(module: str) -> ModuleType:
    """Import ``module``; skip the calling test module without it (fail when it is required)."""
    if REQUIRED:
        return importlib.import_module(module)
    return pytest.importorskip(
        module, reason=f'needs pip install -e "plugins/interop[{EXTRAS[module]}]" (tox -e interop)'
    )
