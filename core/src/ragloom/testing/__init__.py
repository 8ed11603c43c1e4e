"""The ragloom conformance kit: contract tests and fixtures for plugin authors.

Subclass a contract class (e.g. :class:`ChunkerContract`), provide one fixture that builds your
component, and pytest runs the whole contract against it. The pytest plugin that provides the
fixtures is registered through the ``pytest11`` entry point and only defines fixtures, so it
neither slows down nor changes unrelated test suites.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

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


if TYPE_CHECKING:
    # What type checkers see (the names stay lazy at run time): without it, a plugin's tests
    # checked with ``mypy --strict`` could not subclass a contract ("has type Any"). ``X as X``:
    # an explicit re-export (``__all__`` is computed, so mypy cannot read it).
    from .answerers import AnswererContract as AnswererContract
    from .answerers import make_retrieval as make_retrieval
    from .checks import ChunkInvariantError as ChunkInvariantError
    from .checks import check_chunks as check_chunks
    from .commands import CommandContract as CommandContract
    from .contracts import ChunkerContract as ChunkerContract
    from .contracts import QueryTransformerContract as QueryTransformerContract
    from .contracts import RouterContract as RouterContract
    from .embedders import EmbedderContract as EmbedderContract
    from .helpers import isolated_registry as isolated_registry
    from .helpers import make_documents as make_documents
    from .helpers import run_step as run_step
    from .loaders import LoaderContract as LoaderContract
    from .rerankers import RerankerContract as RerankerContract
    from .retrievers import RetrieverContract as RetrieverContract
    from .stores import StoreContract as StoreContract
    from .strategies import DEFAULT_ALPHABET as DEFAULT_ALPHABET
    from .strategies import alphabet_document as alphabet_document
    from .strategies import text_documents as text_documents
    from .strategies import texts as texts
