"""Declarative pipelines: a pipeline file (TOML, YAML or JSON) names registered components.

A file is validated into a :class:`PipelineSpec` (pydantic), then built into a
:class:`~ragloom.pipeline.Pipeline` with a fresh plugin :class:`~ragloom.plugins.Registry`.
Every error names the file and the step path, and says what would be valid. A spec never
imports an arbitrary ``module:attr`` unless the caller passes ``allow_imports=True``.
"""

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
