"""ragloom: retrieval-augmented-generation pipelines from pluggable async steps.

The public API is re-exported here from private modules. Imports are lazy: ``import ragloom``
costs almost nothing, and a name's module (and pydantic, anyio) loads on first use. Plugins are
never imported by importing ragloom.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .lazy import lazy_exports

__version__ = "0.1.0"

_EXPORTS: dict[str, str] = {
    # items
    "ContentFormat": ".models",
    "Document": ".models",
    # steps and graph
    "PipelineStep": ".step",
    "IterableSource": ".step",
    "FunctionStep": ".function_step",
    "RoutedStep": ".routed",
    "Pipeline": ".pipeline",
    "RunResult": ".pipeline",
    "ExecutionContext": ".context",
    "StepStats": ".context",
    "Component": ".component",
    # filters
    "Filter": ".filters",
    "ContentFormatFilter": ".filters",
    "MetadataFilter": ".filters",
    "PredicateFilter": ".filters",
    # policy
    "Policy": ".policy",
    "DEFAULT_POLICY": ".policy",
    # events
    "Event": ".events",
    "RunStarted": ".events",
    "RunFinished": ".events",
    "StepStarted": ".events",
    "StepFinished": ".events",
    "ItemRetried": ".events",
    "ItemFailed": ".events",
    "CacheHit": ".events",
    "CacheMiss": ".events",
    "CacheSkipped": ".events",
    # families
    "Chunker": ".chunking",
    "ChunkSpan": ".chunking",
    "ChunkText": ".chunking",
    "ChunkerRouter": ".chunking",
    "QueryTransformer": ".query",
    "Router": ".query",
    "RouteDecision": ".query",
    "MultiQueryRoutingPipeline": ".multi_query",
    "MultiQueryRoutingState": ".multi_query",
    "SubQueryRoute": ".multi_query",
    "OnEmptyDecompositionPolicy": ".multi_query",
    "EmptyDecompositionError": ".multi_query",
    "MultiQueryRetrievalPipeline": ".multi_retrieval",
    "RetrievalResult": ".multi_retrieval",
    "FusedPassage": ".multi_retrieval",
    "Retriever": ".retrieval",
    "StoreRetriever": ".retrieval",
    "Reranker": ".reranking",
    "Store": ".stores",
    "Embedder": ".embedding",
    "EmbeddingStep": ".embedding",
    "Loader": ".loading",
    "Route": ".query",
    "RetrieveSpec": ".query",
    "Ingestor": ".ingest",
    "search": ".searcher",
    "Searcher": ".searcher",
    "SearchSettings": ".searcher",
    "evaluate": ".evaluation",
    "ask": ".answering",
    "Answer": ".answering",
    "Answerer": ".answering",
    "Citation": ".answering",
    "Claim": ".answering",
    "ExtractiveAnswerer": ".answering",
    "QuestionSet": ".evaluation",
    "EvaluationReport": ".evaluation",
    "ingest": ".ingest",
    # cache
    "CacheStore": ".cache",
    "CacheEntry": ".cache",
    "SQLiteCacheStore": ".cache",
    "MemoryCacheStore": ".cache",
    # plugins and declarative pipelines
    "Registry": ".plugins",
    "discover_plugins": ".plugins",
    "PipelineSpec": ".config",
    "load_pipeline": ".config",
    "build_pipeline": ".config",
    "dump_pipeline": ".config",
    # errors
    "RagloomError": ".errors",
    "ConfigurationError": ".errors",
    "ComponentTypeError": ".errors",
    "InvalidInputError": ".errors",
    "RoutingError": ".errors",
    "UnroutedItemError": ".errors",
    "StepTimeoutError": ".errors",
    "ItemProcessingError": ".errors",
    "CacheError": ".errors",
    "CacheCorruptError": ".errors",
    "CacheFullError": ".errors",
    "CacheReadOnlyError": ".errors",
    "PluginError": ".errors",
    "PluginNotFoundError": ".errors",
    "PluginConflictError": ".errors",
    "BrokenPluginError": ".errors",
    "IncompatiblePluginError": ".errors",
    "PluginBlockedError": ".errors",
    "PolicyFileError": ".errors",
    "PolicyViolationError": ".errors",
}

__all__ = [
    "Embedder",
    "EmbeddingStep",
    "FusedPassage",
    "Ingestor",
    "Loader",
    "MultiQueryRetrievalPipeline",
    "RetrievalResult",
    "RetrieveSpec",
    "Reranker",
    "Retriever",
    "Route",
    "Store",
    "StoreRetriever",
    "ingest",
    "search",
    "Searcher",
    "SearchSettings",
    "evaluate",
    "ask",
    "Answer",
    "Answerer",
    "Citation",
    "Claim",
    "ExtractiveAnswerer",
    "QuestionSet",
    "EvaluationReport",
    "BrokenPluginError",
    "CacheCorruptError",
    "CacheFullError",
    "CacheReadOnlyError",
    "CacheEntry",
    "CacheError",
    "CacheHit",
    "CacheMiss",
    "CacheSkipped",
    "CacheStore",
    "ChunkSpan",
    "ChunkText",
    "Chunker",
    "ChunkerRouter",
    "Component",
    "ComponentTypeError",
    "ConfigurationError",
    "ContentFormat",
    "ContentFormatFilter",
    "DEFAULT_POLICY",
    "Document",
    "EmptyDecompositionError",
    "Event",
    "ExecutionContext",
    "Filter",
    "FunctionStep",
    "IncompatiblePluginError",
    "InvalidInputError",
    "ItemFailed",
    "ItemProcessingError",
    "ItemRetried",
    "IterableSource",
    "MemoryCacheStore",
    "MetadataFilter",
    "MultiQueryRoutingPipeline",
    "MultiQueryRoutingState",
    "OnEmptyDecompositionPolicy",
    "Pipeline",
    "PipelineSpec",
    "PipelineStep",
    "PluginBlockedError",
    "PluginConflictError",
    "PluginError",
    "PluginNotFoundError",
    "Policy",
    "PolicyFileError",
    "PolicyViolationError",
    "PredicateFilter",
    "QueryTransformer",
    "RagloomError",
    "Registry",
    "RouteDecision",
    "RoutedStep",
    "Router",
    "RoutingError",
    "RunFinished",
    "RunResult",
    "RunStarted",
    "SQLiteCacheStore",
    "StepFinished",
    "StepStarted",
    "StepStats",
    "StepTimeoutError",
    "SubQueryRoute",
    "UnroutedItemError",
    "build_pipeline",
    "discover_plugins",
    "dump_pipeline",
    "load_pipeline",
    "__version__",
]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals(), __all__)


if TYPE_CHECKING:
    from .answering import Answer, Answerer, Citation, Claim, ExtractiveAnswerer, ask
    from .cache import CacheEntry, CacheStore, MemoryCacheStore, SQLiteCacheStore
    from .chunking import Chunker, ChunkerRouter, ChunkSpan, ChunkText
    from .component import Component
    from .config import PipelineSpec, build_pipeline, dump_pipeline, load_pipeline
    from .context import ExecutionContext, StepStats
    from .embedding import Embedder, EmbeddingStep
    from .errors import (
        BrokenPluginError,
        CacheCorruptError,
        CacheError,
        CacheFullError,
        CacheReadOnlyError,
        ComponentTypeError,
        ConfigurationError,
        IncompatiblePluginError,
        InvalidInputError,
        ItemProcessingError,
        PluginBlockedError,
        PluginConflictError,
        PluginError,
        PluginNotFoundError,
        PolicyFileError,
        PolicyViolationError,
        RagloomError,
        RoutingError,
        StepTimeoutError,
        UnroutedItemError,
    )
    from .evaluation import EvaluationReport, QuestionSet, evaluate
    from .events import (
        CacheHit,
        CacheMiss,
        CacheSkipped,
        Event,
        ItemFailed,
        ItemRetried,
        RunFinished,
        RunStarted,
        StepFinished,
        StepStarted,
    )
    from .filters import ContentFormatFilter, Filter, MetadataFilter, PredicateFilter
    from .function_step import FunctionStep
    from .ingest import Ingestor, ingest
    from .loading import Loader
    from .models import ContentFormat, Document
    from .multi_query import (
        EmptyDecompositionError,
        MultiQueryRoutingPipeline,
        MultiQueryRoutingState,
        OnEmptyDecompositionPolicy,
        SubQueryRoute,
    )
    from .multi_retrieval import FusedPassage, MultiQueryRetrievalPipeline, RetrievalResult
    from .pipeline import Pipeline, RunResult
    from .plugins import Registry, discover_plugins
    from .policy import DEFAULT_POLICY, Policy
    from .query import QueryTransformer, RetrieveSpec, Route, RouteDecision, Router
    from .reranking import Reranker
    from .retrieval import Retriever, StoreRetriever
    from .routed import RoutedStep
    from .searcher import Searcher, SearchSettings, search
    from .step import IterableSource, PipelineStep
    from .stores import Store
