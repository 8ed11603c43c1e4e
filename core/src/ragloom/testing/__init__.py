"""The ragloom conformance kit: contract tests and fixtures for plugin authors.

Subclass a contract class (e.g. :class:`ChunkerContract`), provide one fixture that builds your
component, and pytest runs the whole contract against it. The pytest plugin that provides the
fixtures is registered through the ``pytest11`` entry point and only defines fixtures, so it
neither slows down nor changes unrelated test suites.
"""

from __future__ import annotations

from ..lazy import lazy_exports

_EXPORTS = {
    "AnswererContract": "ragloom.testing.answerers",
    "make_retrieval": "ragloom.testing.answerers",
    "ChunkerContract": "ragloom.testing.contracts",
    "CommandContract": "ragloom.testing.commands",
    "QueryTransformerContract": "ragloom.testing.contracts",
    "RouterContract": "ragloom.testing.contracts",
    "EmbedderContract": "ragloom.testing.embedders",
    "LoaderContract": "ragloom.testing.loaders",
    "StoreContract": "ragloom.testing.stores",
    "RetrieverContract": "ragloom.testing.retrievers",
    "RerankerContract": "ragloom.testing.rerankers",
    "check_chunks": "ragloom.testing.checks",
    "ChunkInvariantError": "ragloom.testing.checks",
    "run_step": "ragloom.testing.helpers",
    "make_documents": "ragloom.testing.helpers",
    "isolated_registry": "ragloom.testing.helpers",
    "DEFAULT_ALPHABET": "ragloom.testing.strategies",
    "alphabet_document": "ragloom.testing.strategies",
    "text_documents": "ragloom.testing.strategies",
    "texts": "ragloom.testing.strategies",
}

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals(), __all__)
