"""ragloom-ray: run ragloom ingestion pipelines on Ray Data.

``ragloom ingest DIR --engine ray`` runs the same pipeline (the default one or a pipeline file)
on a Ray cluster and writes the same outputs as a local run; from Python,
:func:`run_pipeline` applies a built pipeline (or a pipeline file, or a spec) to a
``ray.data.Dataset`` of documents and gives back a dataset of chunks and the failures.

Importing this package imports neither Ray nor the core's heavy parts: the names below are
loaded when first used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._api import PipelineRun, documents_dataset, run_pipeline
    from ._engine import RayEngine, RaySettings

__all__ = ["PipelineRun", "RayEngine", "RaySettings", "documents_dataset", "run_pipeline"]

_WHERE = {
    "RayEngine": "._engine",
    "RaySettings": "._engine",
    "PipelineRun": "._api",
    "documents_dataset": "._api",
    "run_pipeline": "._api",
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'ragloom_ray' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
