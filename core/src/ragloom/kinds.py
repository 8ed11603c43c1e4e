"""The one table of plugin kinds.

A *kind* is a family of components that plugins contribute: chunkers, routers, stores... Each row
says everything the rest of ragloom needs to know about a kind: the name users and hooks write,
the entry-point group it is discovered in, the base type a contribution must be, the key that
names it in a pipeline file's step table (if it can be a step), and the conformance-kit contract
a plugin author tests it with. Discovery, type checks, pipeline files, dumping, ``ragloom plugins``
and ``ragloom new-plugin`` all read this table; adding a kind is one row here plus its contract.

A *query-side* kind also says where its component plugs into a search (``query_stage``, one of
:data:`QUERY_STAGES`) and the key that names it (``setting``): the ``retrieval`` section of a
pipeline file, a routes file, :class:`~ragloom.searcher.SearchSettings` and the ``--SETTING`` /
``--SETTING-option`` options of ``ragloom search``, ``ask``, ``serve`` and ``eval`` are all made
from these rows (the reranker is one: ``rerank = "mmr"``, ``--rerank mmr``).

Base types and contracts are named by import path and imported only when needed, so reading the
table (e.g. to list plugins) imports nothing.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Literal

__all__ = [
    "KINDS",
    "QUERY_KINDS",
    "QUERY_STAGES",
    "STEP_KINDS",
    "Kind",
    "QueryStage",
    "kind",
    "kind_of_group",
    "kinds_listed",
]

#: Where a query-side component plugs into a search (see :mod:`ragloom.query_stages`):
#: ``"search"``: each search of a question (an ask's, the whole question's), its hits before
#: they are fused; ``"fused"``: the question's fused passages, before the cut to ``top_k``.
QueryStage = Literal["search", "fused"]
#: The stages, in the order a search reaches them.
QUERY_STAGES: tuple[QueryStage, ...] = ("search", "fused")


@dataclass(frozen=True, slots=True)
class Kind:
    """One family of plugin components."""

    #: The name used in ``register(kind, ...)``, errors and listings (``"chunker"``).
    name: str
    #: The entry-point group plugins declare it under (``"ragloom.chunkers"``).
    group: str
    #: ``module:Name`` of the type every contribution must be an instance or subclass of.
    base: str
    #: A sentence for listings and generated plugins.
    description: str
    #: The key of a pipeline file's step table that names a component of this kind
    #: (``chunker = "recursive"``), or ``None`` when the kind is not a pipeline step.
    step_key: str | None = None
    #: ``module:Name`` of the conformance-kit contract in :mod:`ragloom.testing`, if any.
    contract: str | None = None
    #: ``module:Name`` of the step that runs a component of this kind when the component is
    #: not itself a step (an embedder runs in an ``EmbeddingStep``); the step exposes the
    #: component as ``step.component``.
    wrapper: str | None = None
    #: Whether a contribution is an object of the base type itself (a click command) rather
    #: than a class or a factory that builds one.
    instance: bool = False
    #: Where a component of this kind runs in a search (a *query-side* kind), or ``None``;
    #: its base type must then derive from the stage's type in :mod:`ragloom.query_stages`.
    query_stage: QueryStage | None = None
    #: The key that names a component of a query-side kind: in a pipeline file's
    #: ``retrieval`` section and a routes file (``rerank = "mmr"``), a field of
    #: :class:`~ragloom.searcher.SearchSettings` (with ``SETTING_options``), and the
    #: command line's ``--SETTING`` / ``--SETTING-option`` (``--rerank``).
    setting: str | None = None

    def __post_init__(self) -> None:
        if (self.query_stage is None) != (self.setting is None):
            raise ValueError(f"kind {self.name!r}: give both query_stage and setting, or neither")
        if self.query_stage is not None and self.query_stage not in QUERY_STAGES:
            raise ValueError(f"kind {self.name!r}: unknown query stage {self.query_stage!r}")

    def wrapper_type(self) -> type | None:
        """The wrapping step class, imported now (``None``: components are steps)."""
        if self.wrapper is None:
            return None
        module, _, name = self.wrapper.partition(":")
        value: Any = getattr(importlib.import_module(module), name)
        return value  # type: ignore[no-any-return]

    @property
    def label(self) -> str:
        """The group without its ``ragloom.`` prefix (``"chunkers"``), for listings."""
        return self.group.removeprefix("ragloom.")

    def base_type(self) -> type:
        """The base type, imported now."""
        module, _, name = self.base.partition(":")
        value = getattr(importlib.import_module(module), name)
        assert isinstance(value, type)
        return value

    def contract_type(self) -> type | None:
        """The kit's contract class, imported now (``None`` when the kind has none)."""
        if self.contract is None:
            return None
        module, _, name = self.contract.partition(":")
        value: Any = getattr(importlib.import_module(module), name)
        return value  # type: ignore[no-any-return]


_ROWS = (
    Kind(
        "chunker", "ragloom.chunkers", "ragloom.chunking:Chunker",
        "splits documents into chunks with exact offsets",
        step_key="chunker", contract="ragloom.testing.contracts:ChunkerContract",
    ),
    Kind(
        "step", "ragloom.steps", "ragloom.step:PipelineStep",
        "any pipeline step (item -> zero or more items)",
        step_key="step",
    ),
    Kind(
        "embedder", "ragloom.embedders", "ragloom.embedding:Embedder",
        "turns batches of texts into vectors",
        step_key="embedder", contract="ragloom.testing.embedders:EmbedderContract",
        wrapper="ragloom.embedding:EmbeddingStep",
    ),
    Kind(
        "loader", "ragloom.loaders", "ragloom.loading:Loader",
        "reads a file's bytes into documents",
        contract="ragloom.testing.loaders:LoaderContract",
    ),
    Kind(
        "store", "ragloom.stores", "ragloom.stores:Store",
        "an index of chunks and vectors: upsert, delete and search by document",
        contract="ragloom.testing.stores:StoreContract",
    ),
    Kind(
        "retriever", "ragloom.retrievers", "ragloom.retrieval:Retriever",
        "finds scored passages for a query",
        contract="ragloom.testing.retrievers:RetrieverContract",
    ),
    Kind(
        "decomposer", "ragloom.decomposers", "ragloom.query:QueryTransformer",
        "turns one question into sub-queries",
        contract="ragloom.testing.contracts:QueryTransformerContract",
    ),
    Kind(
        "router", "ragloom.routers", "ragloom.query:Router",
        "chooses a named route for a query",
        contract="ragloom.testing.contracts:RouterContract",
    ),
    Kind(
        "reranker", "ragloom.rerankers", "ragloom.reranking:Reranker",
        "reorders (and may thin out) a question's fused passages before the cut to top_k",
        contract="ragloom.testing.rerankers:RerankerContract",
        query_stage="fused", setting="rerank",
    ),
    Kind(
        "answerer", "ragloom.answerers", "ragloom.answering:Answerer",
        "answers a question from its retrieved passages, citing them by exact span",
        contract="ragloom.testing.answerers:AnswererContract",
    ),
    Kind(
        "filter", "ragloom.filters", "ragloom.filters:Filter",
        "a predicate over items, used by routed steps",
    ),
    Kind(
        "cache_store", "ragloom.cache_stores", "ragloom.cache.base:CacheStore",
        "where per-item step outputs are kept between runs",
    ),
    Kind(
        "engine", "ragloom.engines", "ragloom.engines:Engine",
        "runs an ingestion elsewhere (a cluster)",
    ),
    Kind(
        "length", "ragloom.lengths", "ragloom.lengths:LengthFunction",
        "measures a chunk's size (characters, words, tokens)",
    ),
    Kind(
        "command", "ragloom.commands", "click:Command",
        "a `ragloom` subcommand (a click command, imported when it runs)",
        contract="ragloom.testing.commands:CommandContract", instance=True,
    ),
)

#: Every kind by name, in listing order.
KINDS: MappingProxyType[str, Kind] = MappingProxyType({row.name: row for row in _ROWS})

#: The kinds a pipeline file's step table can name, in the order they are looked for.
STEP_KINDS: tuple[Kind, ...] = tuple(row for row in _ROWS if row.step_key is not None)

#: The query-side kinds (a ``query_stage`` and a ``setting``), in the order they run within
#: a stage.
QUERY_KINDS: tuple[Kind, ...] = tuple(row for row in _ROWS if row.query_stage is not None)

_BY_GROUP = {row.group: row for row in _ROWS}


def kinds_listed(rows: Any = None) -> str:
    """The names of ``rows`` (default: every kind) as ``` ``a``, ``b`` ``` for a docstring."""
    return ", ".join(f"``{row.name}``" for row in (KINDS.values() if rows is None else rows))


def kind(name: str) -> Kind:
    """The kind called ``name``.

    Raises:
        ConfigurationError: no such kind (the message lists the valid ones).
    """
    row = KINDS.get(name)
    if row is None:
        from .errors import ConfigurationError

        raise ConfigurationError(f"unknown component kind {name!r}; valid kinds: {sorted(KINDS)}")
    return row


def kind_of_group(group: str) -> Kind | None:
    """The kind discovered under entry-point group ``group``, if any."""
    return _BY_GROUP.get(group)
