"""ragloom-dspy tests: skipped without dspy; the opt-in ``local_llm`` marker."""

from __future__ import annotations

import os

import pytest

pytest.importorskip("dspy", reason="ragloom-dspy tests need dspy (pip install -e plugins/dspy)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if os.environ.get("RAGLOOM_LOCAL_LLM") == "1":
        return
    skip = pytest.mark.skip(reason="real local LLM test: opt in with RAGLOOM_LOCAL_LLM=1")
    for item in items:
        if "local_llm" in item.keywords:
            item.add_marker(skip)
