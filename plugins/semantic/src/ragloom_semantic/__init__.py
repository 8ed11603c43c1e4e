"""ragloom-semantic: routing and chunking by meaning, offline.

``SemanticRouter`` (entry point ``ragloom.routers: semantic``) with its ``SemanticRoute``
model, and ``SemanticChunker`` (``ragloom.chunkers: semantic``), both over a model2vec static
embedding model: the bundled ``m2v-minilm-256`` (15 MB, shipped in this package) or any local
model2vec folder. No torch, no network.

Imports are lazy: importing the package loads neither numpy, model2vec nor the ragloom core.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ragloom.lazy import lazy_exports

__version__ = "0.1.0"

_EXPORTS: dict[str, str] = {
    "SemanticRouter": ".router",
    "SemanticRoute": ".router",
    "SemanticChunker": ".chunker",
    "StaticEncoder": "._model",
    "Encoder": "._model",
    "bundled_model_path": "._model",
    "load_static_model": "._model",
}

__all__ = [
    "Encoder",
    "SemanticChunker",
    "SemanticRoute",
    "SemanticRouter",
    "StaticEncoder",
    "bundled_model_path",
    "load_static_model",
    "__version__",
]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals(), __all__)


if TYPE_CHECKING:
    from ._model import Encoder, StaticEncoder, bundled_model_path, load_static_model
    from .chunker import SemanticChunker
    from .router import SemanticRoute, SemanticRouter
