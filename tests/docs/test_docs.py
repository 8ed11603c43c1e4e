"""The docs stay true to the code: hooks documented, schema reference generated."""

from __future__ import annotations

import inspect
from pathlib import Path

from ragloom.plugins.hookspecs import RagloomHookSpecs

DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_every_hook_specification_is_documented() -> None:
    guide = (DOCS / "plugins" / "writing-a-plugin.md").read_text()
    hooks = [n for n, _ in inspect.getmembers(RagloomHookSpecs) if n.startswith("ragloom_")]
    assert hooks, "no hook specifications found"
    for name in hooks:
        params = [
            p for p in inspect.signature(getattr(RagloomHookSpecs, name)).parameters if p != "self"
        ]
        assert f"`{name}({', '.join(params)})`" in guide, f"hook {name} is not documented"


def test_schema_reference_covers_every_spec_field() -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("schema_hook", DOCS / "_hooks" / "schema.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    rendered = module.render_schema()
    from ragloom.config import PipelineSpec, PolicySpec, StepSpec

    for model in (PipelineSpec, PolicySpec, StepSpec):
        for name, field in model.model_fields.items():
            assert f"| `{field.alias or name}` |" in rendered
    page = (DOCS / "pipeline-files.md").read_text()
    assert "<!-- pipeline-schema -->" in page


def test_docs_pages_in_nav_exist() -> None:
    import yaml

    nav = yaml.safe_load((DOCS.parent / "mkdocs.yml").read_text())["nav"]

    def pages(node: object) -> list[str]:
        if isinstance(node, str):
            return [node]
        if isinstance(node, list):
            return [p for n in node for p in pages(n)]
        if isinstance(node, dict):
            return [p for v in node.values() for p in pages(v)]
        return []

    for page in pages(nav):
        assert (DOCS / page).is_file(), page
