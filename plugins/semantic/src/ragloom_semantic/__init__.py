"""ragloom-semantic: routing, chunking and embedding by meaning, offline.

``SemanticRouter`` (entry point ``ragloom.routers: semantic``) with its ``SemanticRoute``
model, ``SemanticChunker`` (``ragloom.chunkers: semantic``) and ``Model2VecEmbedder``
(``ragloom.embedders: model2vec``), all over a model2vec static
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
    "Model2VecEmbedder": ".embedder",
    "StaticEncoder": "._model",
    "Encoder": "._model",
    "bundled_model_path": "._model",
    "load_static_model": "._model",
}

__all__ = [
    "Encoder",
    "Model2VecEmbedder",
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
    from .embedder import Model2VecEmbedder
    from .router import SemanticRoute, SemanticRouter
