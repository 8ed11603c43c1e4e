"""MkDocs hook: render the pipeline-file reference from the pydantic schema.

Replaces ``<!-- pipeline-schema -->`` in a page with one table per spec model, so the
reference can never drift from the code that validates the files.
"""

from __future__ import annotations

from typing import Any


def render_schema() -> str:
    from ragloom.config import (
        CacheSpec,
        ComponentSpec,
        PipelineSpec,
        PolicySpec,
        QuerySpec,
        RouteSpec,
        StepSpec,
    )

    out: list[str] = []
    for model in (PipelineSpec, StepSpec, RouteSpec, PolicySpec, CacheSpec, QuerySpec,
                  ComponentSpec):
        out.append(f"### `{model.__name__}`\n")
        out.append((model.__doc__ or "").strip() + "\n")
        out.append("| field | type | default | description |")
        out.append("| --- | --- | --- | --- |")
        for name, field in model.model_fields.items():
            key = field.alias or name
            annotation = getattr(field.annotation, "__name__", None) or str(field.annotation)
            annotation = annotation.replace("typing.", "").replace("ragloom.config._spec.", "")
            default = "required" if field.is_required() else repr(field.get_default(
                call_default_factory=True))
            desc = (field.description or "").replace("|", "\\|")
            out.append(f"| `{key}` | `{annotation}` | `{default}` | {desc} |")
        out.append("")
    return "\n".join(out)


def on_page_markdown(markdown: str, **kwargs: Any) -> str:
    if "<!-- pipeline-schema -->" in markdown:
        return markdown.replace("<!-- pipeline-schema -->", render_schema())
    return markdown
