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


def _reference_directives() -> dict[str, set[str] | None]:
    """``::: module`` directives of the API reference: module -> its ``members`` filter
    (``None``: every public member)."""
    import yaml

    directives: dict[str, set[str] | None] = {}
    lines = (DOCS / "reference" / "api.md").read_text(encoding="utf-8").splitlines()
    for i, line in enumerate(lines):
        if not line.startswith("::: "):
            continue
        options: list[str] = []
        for following in lines[i + 1 :]:
            if not following.startswith("    "):
                break
            options.append(following[4:])
        members = (yaml.safe_load("\n".join(options)) or {}).get("options", {}).get("members")
        directives[line[4:].strip()] = None if members is None else set(members)
    return directives


def test_the_api_reference_documents_every_export() -> None:
    """Each name ``ragloom`` exports has an entry in docs/reference/api.md, generated from its
    docstring: a directive for its module (or the module it is defined in) that does not
    filter it out."""
    import ragloom

    directives = _reference_directives()

    def shown(name: str, module: str) -> bool:
        if module not in directives:
            return False
        members = directives[module]
        return members is None or name in members

    missing = []
    for name in sorted(ragloom._EXPORTS):  # the public names (__all__ also has __version__)
        obj = getattr(ragloom, name)
        modules = {f"ragloom{ragloom._EXPORTS[name]}", getattr(obj, "__module__", None) or ""}
        if not any(shown(name, module) for module in modules):
            missing.append(f"{name} ({', '.join(sorted(m for m in modules if m))})")
    assert missing == []
