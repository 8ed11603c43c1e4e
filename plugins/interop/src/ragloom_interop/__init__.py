"""ragloom-interop: ragloom chunkers inside LangChain, LlamaIndex and Haystack pipelines.

Each framework has its own submodule, imported only when used, with document conversions in
both directions (exact offsets, ids and lineage kept) and a drop-in splitter:

- :mod:`ragloom_interop.langchain`: ``to_langchain``, ``from_langchain`` and
  ``RagloomTextSplitter``, a ``langchain_text_splitters.TextSplitter``;
- :mod:`ragloom_interop.llama_index`: ``to_llama_index``, ``from_llama_index`` and
  ``RagloomNodeParser``, a LlamaIndex ``NodeParser`` for ``IngestionPipeline``;
- :mod:`ragloom_interop.haystack`: ``to_haystack``, ``from_haystack`` and
  ``RagloomDocumentSplitter``, a Haystack component.

Importing this package imports none of the frameworks. Install one with its extra, e.g.
``pip install "./plugins/interop[langchain]"`` from a ragloom checkout.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
