"""The pydantic schema of pipeline files."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model, model_validator

from ..errors import ConfigurationError
from ..kinds import QUERY_KINDS, STEP_KINDS
from ..multi_query import DEFAULT_MAX_SUB_QUERIES
from ..multi_retrieval import (
    DEFAULT_CONSENSUS,
    DEFAULT_FUSION_K,
    DEFAULT_PER_DOCUMENT,
    DEFAULT_SEARCH_DEPTH,
    DEFAULT_WHOLE_WEIGHT,
)
from ._policy_spec import PolicySpec

__all__ = [
    "CacheSpec",
    "ComponentSpec",
    "PipelineSpec",
    "PolicySpec",
    "QuerySpec",
    "RetrievalSpec",
    "RouteSpec",
    "StepSpec",
    "format_location",
    "load_spec",
    "parse_spec",
]

_STRICT = ConfigDict(extra="forbid", populate_by_name=True)


class CacheSpec(BaseModel):
    """A cache store: a registered ``ragloom.cache_stores`` name with its parameters."""

    model_config = _STRICT

    store: str = Field(default="sqlite", description="Registered cache store name.")
    path: str | None = Field(default=None, description="File of an SQLite store.")
    params: dict[str, Any] = Field(default_factory=dict)


class ComponentSpec(BaseModel):
    """A registered component by name (or, when allowed, an import path) with parameters."""

    model_config = _STRICT

    name: str | None = Field(default=None, description="Registered name, or dist:name.")
    import_: str | None = Field(
        default=None, alias="import", description="module:attr (needs allow_imports)."
    )
    params: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _from_string(cls, value: Any) -> Any:
        return {"name": value} if isinstance(value, str) else value

    @model_validator(mode="after")
    def _one_target(self) -> ComponentSpec:
        if (self.name is None) == (self.import_ is None):
            raise ValueError("give exactly one of 'name' or 'import'")
        return self


class RouteSpec(BaseModel):
    """One route of a routed step: items matching ``filter`` go to ``step``."""

    model_config = _STRICT

    filter: dict[str, Any] = Field(
        description="One key: a registered filter name (e.g. content_format, metadata) with "
        "its parameters, or all/any (lists) or not (one filter)."
    )
    step: StepSpec


class _StepFields(BaseModel):
    """One step: a registered component (one key per step kind: ``chunker``, ``step``,
    ``embedder``...), an ``import`` path, or a routed step (``routes``/``default``)."""

    model_config = _STRICT

    name: str | None = None
    import_: str | None = Field(default=None, alias="import")
    params: dict[str, Any] = Field(default_factory=dict)
    routes: list[RouteSpec] | None = None
    default: StepSpec | None = None
    policy: PolicySpec | None = None
    cache: CacheSpec | bool | None = Field(
        default=None, description="false disables caching for this step; omit to inherit."
    )
    cache_mode: Literal["auto", "always"] | None = Field(
        default=None,
        description="auto: skip the cache when recomputing is measured to be cheaper than "
        "replaying; always: keep it cached. Omit for the default ($RAGLOOM_CACHE_MODE, else auto).",
    )
    cache_version: str | int | None = Field(
        default=None,
        description="Caches a step with an argument that has no stable identity (a client "
        "object): that argument is left out of the cache identity and this value stands in for "
        "it; change it whenever such an argument changes the output.",
    )

    @property
    def component(self) -> tuple[str, str] | None:
        """``(kind, registered name)`` of the component this step names, if it names one."""
        for row in STEP_KINDS:
            value = getattr(self, row.step_key or "", None)
            if value is not None:
                return row.name, value
        return None

    @model_validator(mode="after")
    def _one_kind(self) -> _StepFields:
        keys = [row.step_key for row in STEP_KINDS if row.step_key]
        kinds = [k for k in keys if getattr(self, k, None) is not None]
        if self.import_ is not None:
            kinds.append("import")
        routed = self.routes is not None or self.default is not None
        if routed:
            kinds.append("routes/default")
        if len(kinds) != 1:
            choices = ", ".join(repr(k) for k in [*keys, "import"])
            raise ValueError(
                f"a step needs exactly one of {choices} or 'routes'/'default'"
                + (f" (got {', '.join(kinds)})" if kinds else "")
            )
        if routed and self.params:
            raise ValueError("a routed step takes no 'params'; give them to its children")
        if routed and (self.cache_mode is not None or self.cache_version is not None):
            raise ValueError(
                "a routed step takes no 'cache_mode' or 'cache_version'; give them to its children"
            )
        if self.cache is True:
            raise ValueError("cache: true is ambiguous; give a cache table or omit it")
        return self


#: One field per step kind of the table of kinds (``chunker = "recursive"``...).
if TYPE_CHECKING:
    StepSpec = _StepFields
else:
    StepSpec = create_model(
        "StepSpec",
        __base__=_StepFields,
        __module__=__name__,
        **{
            row.step_key: (
                str | None,
                Field(default=None, description=f"Registered {row.name} name: {row.description}."),
            )
            for row in STEP_KINDS
            if row.step_key
        },
    )
    StepSpec.__doc__ = _StepFields.__doc__


class QuerySpec(BaseModel):
    """A multi-query routing block: Decompose -> Normalize -> Route."""

    model_config = _STRICT

    decomposer: ComponentSpec
    router: ComponentSpec
    max_sub_queries: int = Field(default=DEFAULT_MAX_SUB_QUERIES, ge=1)
    on_empty_decomposition: Literal["passthrough", "error"] = "passthrough"


class _RetrievalFields(BaseModel):
    """Retrieval after a ``query`` block: each routed sub-query is searched, the results fused
    per question (Decompose -> Normalize -> Route -> Retrieve).

    ``store`` is the index (a registered store; a relative ``path`` parameter is read from the
    pipeline file's folder), ``embedder`` embeds the sub-queries (omit it to search by text
    only), ``retriever`` is the default retriever (routes may name others in their
    ``retrieve`` settings), built with this store and embedder when it takes them. Each
    query-side kind of the table of kinds adds its key (``rerank = "mmr"``, or a table with
    ``name`` and ``params``), built with this store and embedder likewise.
    """

    model_config = _STRICT

    store: ComponentSpec = Field(description="Registered store name and its parameters.")
    embedder: ComponentSpec | None = Field(
        default=None, description="Registered embedder for the sub-queries (none: text search)."
    )
    retriever: ComponentSpec = Field(
        default_factory=lambda: ComponentSpec(name="store"),
        description="The default retriever (default: the built-in 'store' retriever).",
    )
    top_k: int = Field(default=10, ge=1, description="Passages per sub-query and in the answer.")
    fusion_k: int = Field(
        default=DEFAULT_FUSION_K, ge=1,
        description="The rank constant of the fusion of a question's searches.",
    )
    consensus: float = Field(
        default=DEFAULT_CONSENSUS, ge=0, le=1,
        description="How much a passage's gains from its other searches add to its best one "
        "(1: plain reciprocal rank fusion, the sum).",
    )
    whole_weight: float = Field(
        default=DEFAULT_WHOLE_WEIGHT, ge=0,
        description="Weight of the whole question's search beside a split question's "
        "sub-queries (0: not searched).",
    )
    per_document: int = Field(
        default=DEFAULT_PER_DOCUMENT, ge=0,
        description="Passages of one document the fused list shows before every other "
        "document found has shown one (0: the fused order alone).",
    )
    search_depth: int = Field(
        default=DEFAULT_SEARCH_DEPTH, ge=1,
        description="Each search asks for this many times its top_k passages (the fused "
        "list's candidates).",
    )


#: One optional component per query-side kind of the table of kinds (``rerank = "mmr"``...).
if TYPE_CHECKING:
    RetrievalSpec = _RetrievalFields
else:
    RetrievalSpec = create_model(
        "RetrievalSpec",
        __base__=_RetrievalFields,
        __module__=__name__,
        **{
            row.setting: (
                ComponentSpec | None,
                Field(default=None, description=f"Registered {row.name}: {row.description}."),
            )
            for row in QUERY_KINDS
            if row.setting
        },
    )
    RetrievalSpec.__doc__ = _RetrievalFields.__doc__


class PipelineSpec(BaseModel):
    """A pipeline file: ingestion ``steps`` or a ``query`` block (with, optionally, its
    ``retrieval``), with policy and cache."""

    model_config = _STRICT

    version: Literal[1] = 1
    name: str | None = None
    description: str | None = None
    policy: PolicySpec | None = None
    cache: CacheSpec | bool | None = None
    steps: list[StepSpec] | None = None
    query: QuerySpec | None = None
    retrieval: RetrievalSpec | None = None

    @model_validator(mode="after")
    def _one_body(self) -> PipelineSpec:
        if (self.steps is None) == (self.query is None):
            raise ValueError("a pipeline needs exactly one of 'steps' or 'query'")
        if self.retrieval is not None and self.query is None:
            raise ValueError("'retrieval' needs a 'query' block (its decomposer and router)")
        if self.steps is not None and not self.steps:
            raise ValueError("'steps' must not be empty")
        if self.cache is True:
            raise ValueError("cache: true is ambiguous; give a cache table or omit it")
        return self


def format_location(loc: tuple[Any, ...]) -> str:
    """``("steps", 1, "params")`` -> ``steps[1].params``."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part in ("function-after", "function-before") or str(part).startswith(
            ("function-", "union[", "tagged-union[")
        ):
            continue
        else:
            out += f".{part}" if out else str(part)
    return out or "<top>"


def parse_spec(data: Any, *, source: str = "<spec>") -> PipelineSpec:
    """Validate plain data into a :class:`PipelineSpec`, with located errors."""
    if isinstance(data, PipelineSpec):
        return data
    if isinstance(data, dict) and "pipeline" in data and len(data) == 1:
        data = data["pipeline"]
    try:
        return PipelineSpec.model_validate(data)
    except ValidationError as exc:
        lines = []
        for err in exc.errors():
            where = format_location(tuple(err["loc"]))
            msg = err["msg"]
            if err["type"] == "extra_forbidden":
                field_name = str(err["loc"][-1]) if err["loc"] else "?"
                msg = f"unknown field {field_name!r}"
            lines.append(f"{source}: {where}: {msg}")
        raise ConfigurationError("invalid pipeline spec:\n  " + "\n  ".join(lines)) from None


def load_spec(path: str | os.PathLike[str]) -> PipelineSpec:
    """Read a pipeline file (``.toml``, ``.yaml``/``.yml`` or ``.json``)."""
    from ._files import read_data_file

    data = read_data_file(path, what="pipeline")
    return parse_spec(data, source=str(Path(path)))


_StepFields.model_rebuild(_types_namespace={"StepSpec": StepSpec, "RouteSpec": RouteSpec})
RouteSpec.model_rebuild(_types_namespace={"StepSpec": StepSpec})
StepSpec.model_rebuild()
PipelineSpec.model_rebuild()
