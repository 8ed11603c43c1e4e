"""Declarative pipelines: a pipeline file (TOML, YAML or JSON) names registered components.

A file is validated into a :class:`PipelineSpec` (pydantic), then built into a
:class:`~ragloom.pipeline.Pipeline` with a fresh plugin :class:`~ragloom.plugins.Registry`.
Every error names the file and the step path, and says what would be valid. A spec never
imports an arbitrary ``module:attr`` unless the caller passes ``allow_imports=True``.

Names load lazily: reading a data file (``read_data_file``, which a routes file needs) does
not import the schema and the builder.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy import lazy_exports

_EXPORTS = {
    "build_pipeline": "ragloom.config._build",
    "dump_pipeline": "ragloom.config._build",
    "load_pipeline": "ragloom.config._build",
    "read_data_file": "ragloom.config._files",
    **{
        name: "ragloom.config._spec"
        for name in (
            "CacheSpec", "ComponentSpec", "PipelineSpec", "PolicySpec", "QuerySpec",
            "RetrievalSpec", "RouteSpec", "StepSpec", "load_spec", "parse_spec",
        )
    },
}

__all__ = [
    "CacheSpec",
    "ComponentSpec",
    "PipelineSpec",
    "PolicySpec",
    "QuerySpec",
    "RetrievalSpec",
    "RouteSpec",
    "StepSpec",
    "build_pipeline",
    "dump_pipeline",
    "load_pipeline",
    "load_spec",
    "parse_spec",
    "read_data_file",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals(), __all__)

if TYPE_CHECKING:
    from ._build import build_pipeline, dump_pipeline, load_pipeline
    from ._files import read_data_file
    from ._spec import (
        CacheSpec,
        ComponentSpec,
        PipelineSpec,
        PolicySpec,
        QuerySpec,
        RetrievalSpec,
        RouteSpec,
        StepSpec,
        load_spec,
        parse_spec,
    )
