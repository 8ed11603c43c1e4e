"""LlamaIndex: conversions to and from ``Document``/``TextNode``, and :class:`RagloomNodeParser`.

Lineage follows LlamaIndex's own node parsers. A chunk is a ``TextNode`` whose ``SOURCE``
relationship names the document it was cut from, with ``start_char_idx``/``end_char_idx`` its
exact span in that document's text, and ``PREVIOUS``/``NEXT`` linking the chunks of one
document. When a chunk is cut again, its pieces also get a ``PARENT`` relationship to it (as
``HierarchicalNodeParser`` gives) and their offsets are in the parent's text; ``SOURCE`` still
names the original document. The chunk's position among its siblings is
``metadata["chunk_index"]``, and the content format is
``metadata["content_format"]`` when ``metadata["file_type"]`` does not already tell it (plain
text when there is none); both are excluded from the text embedded and shown to LLMs.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, overload

from ragloom import Chunker
from ragloom import Document as RagloomDocument

from ragloom_interop._chunking import BoundChunker
from ragloom_interop._common import (
    CONTENT_FORMAT_KEY,
    content_format_of,
    format_key_needed,
    is_batch,
    missing_framework,
    take_format,
    wrong_type,
)

try:
    from llama_index.core.bridge.pydantic import BaseModel, Field, PrivateAttr
    from llama_index.core.callbacks import CallbackManager
    from llama_index.core.node_parser import NodeParser
    from llama_index.core.node_parser.node_utils import default_id_func
    from llama_index.core.schema import (
        DEFAULT_TEXT_NODE_TMPL,
        BaseNode,
        MetadataMode,
        NodeRelationship,
        ObjectType,
        RelatedNodeInfo,
        TextNode,
    )
    from llama_index.core.schema import Document as LIDocument
    from llama_index.core.utils import get_tqdm_iterable
except ImportError as exc:  # pragma: no cover - exercised by blocking the import
    raise missing_framework("llama_index", exc) from exc

__all__ = ["RagloomNodeParser", "from_llama_index", "ragloom_node_id", "to_llama_index"]

INDEX_KEY = "chunk_index"
_NODE_CLASS = "a llama_index.core.schema.BaseNode (Document or TextNode)"
_TO_LLAMA = {
    "llama_index": "it is already a LlamaIndex node",
    "ragloom": "convert it with ragloom_interop.llama_index.to_llama_index()",
    "langchain_core": "convert it with ragloom_interop.langchain.from_langchain(), then "
    "ragloom_interop.llama_index.to_llama_index()",
    "haystack": "convert it with ragloom_interop.haystack.from_haystack(), then "
    "ragloom_interop.llama_index.to_llama_index()",
}
_TO_RAGLOOM = {
    "llama_index": "it is already a LlamaIndex node",
    "langchain_core": "convert it with ragloom_interop.langchain.from_langchain()",
    "haystack": "convert it with ragloom_interop.haystack.from_haystack()",
}


# -- conversions --------------------------------------------------------------------------------


@overload
def to_llama_index(documents: RagloomDocument) -> BaseNode: ...
@overload
def to_llama_index(documents: Iterable[RagloomDocument]) -> list[BaseNode]: ...
def to_llama_index(
    documents: RagloomDocument | Iterable[RagloomDocument],
) -> BaseNode | list[BaseNode]:
    """Ragloom documents as LlamaIndex nodes: a ``Document`` for a whole document, a
    ``TextNode`` for a chunk.

    Converting a batch links the chunks of each parent with ``PREVIOUS``/``NEXT`` (by
    ``index``) and resolves chunks of chunks found in the batch to ``PARENT`` plus the
    original ``SOURCE``. Raises ``TypeError`` for anything but ragloom documents.
    """
    if isinstance(documents, RagloomDocument):
        return _to_node(documents, {})
    if not is_batch(documents):
        raise wrong_type(documents, "a ragloom.Document or an iterable of them", _TO_LLAMA)
    batch = list(documents)
    for document in batch:
        if not isinstance(document, RagloomDocument):
            raise wrong_type(document, "a ragloom.Document", _TO_LLAMA)
    by_id = {d.id: d for d in batch}
    nodes = [_to_node(d, by_id) for d in batch]
    siblings: dict[str, list[tuple[int, BaseNode]]] = {}
    for document, node in zip(batch, nodes, strict=True):
        if document.parent_id is not None and document.index is not None:
            siblings.setdefault(document.parent_id, []).append((document.index, node))
    for group in siblings.values():
        group.sort(key=lambda pair: pair[0])
        for (i, before), (j, after) in itertools.pairwise(group):
            if j == i + 1:
                before.relationships[NodeRelationship.NEXT] = after.as_related_node_info()
                after.relationships[NodeRelationship.PREVIOUS] = before.as_related_node_info()
    return nodes


def _to_node(document: RagloomDocument, by_id: Mapping[str, RagloomDocument]) -> BaseNode:
    metadata = dict(document.metadata)
    own: list[str] = []
    if format_key_needed(document.content_format, metadata.get("file_type")):
        metadata[CONTENT_FORMAT_KEY] = str(document.content_format)
        own.append(CONTENT_FORMAT_KEY)
    if document.parent_id is None:
        return LIDocument(
            id_=document.id,
            text=document.content,
            metadata=metadata,
            excluded_embed_metadata_keys=list(own),
            excluded_llm_metadata_keys=list(own),
            embedding=document.embedding,
        )
    if document.index is not None:
        metadata[INDEX_KEY] = document.index
        own.append(INDEX_KEY)
    relationships: dict[NodeRelationship, Any] = {}
    parent = by_id.get(document.parent_id)
    if parent is not None and parent.parent_id is not None:
        # A chunk of a chunk: PARENT is the chunk it was cut from, SOURCE the original.
        relationships[NodeRelationship.PARENT] = RelatedNodeInfo(
            node_id=parent.id, node_type=ObjectType.TEXT
        )
        root = parent
        while root.parent_id in by_id and by_id[root.parent_id].parent_id is not None:
            root = by_id[root.parent_id]
        assert root.parent_id is not None
        relationships[NodeRelationship.SOURCE] = RelatedNodeInfo(node_id=root.parent_id)
    else:
        relationships[NodeRelationship.SOURCE] = RelatedNodeInfo(
            node_id=document.parent_id,
            node_type=ObjectType.DOCUMENT if parent is not None else None,
        )
    return TextNode(
        id_=document.id,
        text=document.content,
        start_char_idx=document.start,
        end_char_idx=document.end,
        metadata=metadata,
        excluded_embed_metadata_keys=list(own),
        excluded_llm_metadata_keys=list(own),
        relationships=relationships,
        embedding=document.embedding,
    )


@overload
def from_llama_index(nodes: BaseNode) -> RagloomDocument: ...
@overload
def from_llama_index(nodes: Iterable[BaseNode]) -> list[RagloomDocument]: ...
def from_llama_index(
    nodes: BaseNode | Iterable[BaseNode],
) -> RagloomDocument | list[RagloomDocument]:
    """LlamaIndex nodes (``Document``, ``TextNode`` and subclasses) as ragloom documents.

    The parent is the ``PARENT`` relationship when there is one, else ``SOURCE``; the span is
    ``[start_char_idx, end_char_idx)`` when both are set and match the text's length (else
    the two numbers stay in the metadata). Raises ``TypeError`` for anything but nodes.
    """
    if isinstance(nodes, BaseNode):
        return _from_node(nodes)
    if not is_batch(nodes):
        raise wrong_type(nodes, f"{_NODE_CLASS} or an iterable of them", _TO_RAGLOOM)
    return [_from_node(n) for n in nodes]


def _from_node(node: object) -> RagloomDocument:
    if not isinstance(node, BaseNode):
        raise wrong_type(node, _NODE_CLASS, _TO_RAGLOOM)
    text = node.get_content(metadata_mode=MetadataMode.NONE)
    metadata = dict(node.metadata)
    content_format = take_format(metadata, _mimetype(node), metadata.get("file_type"))
    fields: dict[str, Any] = {}
    parent = node.parent_node or node.source_node
    if parent is not None:
        fields["parent_id"] = parent.node_id
        index = metadata.get(INDEX_KEY)
        if isinstance(index, int) and not isinstance(index, bool) and index >= 0:
            fields["index"] = metadata.pop(INDEX_KEY)
        start = getattr(node, "start_char_idx", None)
        end = getattr(node, "end_char_idx", None)
        if start is not None and end is not None:
            if start >= 0 and end - start == len(text):
                fields["start"], fields["end"] = start, end
            else:  # not an exact span of this text: keep the numbers, claim nothing
                metadata.setdefault("start_char_idx", start)
                metadata.setdefault("end_char_idx", end)
    if node.embedding is not None:
        fields["embedding"] = list(node.embedding)
    return RagloomDocument(
        id=node.node_id, content=text, content_format=content_format, metadata=metadata, **fields
    )


def _mimetype(node: BaseNode) -> str | None:
    mime = getattr(node, "mimetype", None)
    if isinstance(mime, str):
        return mime
    resource = getattr(node, "text_resource", None)
    return getattr(resource, "mimetype", None)


# -- the node parser ----------------------------------------------------------------------------


def ragloom_node_id(i: int, doc: BaseNode) -> str:
    """The id ragloom gives chunk ``i`` of ``doc``: ``"{doc id}#{i}"`` (stable across runs)."""
    return f"{doc.node_id}#{i}"


_ID_FUNCS = {"ragloom_node_id": ragloom_node_id, "default_id_func": default_id_func}


class RagloomNodeParser(NodeParser):
    """A LlamaIndex ``NodeParser`` that cuts with a ragloom chunker.

    ``chunker`` is a registered ragloom chunker name built with ``chunk_size``,
    ``chunk_overlap`` and any other ``params`` it takes, a step spec (the mapping a pipeline
    file's step holds), or a ready ``ragloom.Chunker``. Use it alone
    (``get_nodes_from_documents``) or as a transformation of an ``IngestionPipeline``; it
    serialises to and from a dict, pickles for ``num_workers > 1``, and its ``to_dict``
    carries the chunker's configuration hash, so LlamaIndex's ingestion cache never replays
    nodes of another configuration.

    Nodes get ids ``"{document id}#{i}"`` (pass ``id_func`` for LlamaIndex's random ids),
    exact ``start_char_idx``/``end_char_idx``, and the lineage described in the module
    docstring. The document's format (``metadata["content_format"]``, else its MIME type)
    chooses a route of the ``"auto"`` chunker.
    """

    chunker: dict[str, Any] | None = Field(
        default=None,
        description="The ragloom chunker as a pipeline-file step spec (None: an unregistered "
        "chunker object, which pickles but does not serialise).",
    )
    _bound: BoundChunker = PrivateAttr()

    def __init__(
        self,
        chunker: str | Mapping[str, Any] | Chunker | None = "recursive",
        *,
        chunk_size: int | None = None,
        chunk_overlap: int | None = None,
        include_metadata: bool = True,
        include_prev_next_rel: bool = True,
        callback_manager: CallbackManager | None = None,
        id_func: Any = None,
        **params: Any,
    ) -> None:
        if chunker is None:
            raise TypeError(
                "RagloomNodeParser wraps a chunker object that is registered under no entry "
                "point, so it cannot be rebuilt from data; register its class (ragloom.chunkers "
                "entry point) or build the parser again from the object"
            )
        bound = BoundChunker.resolve(
            chunker,
            {"chunk_size": chunk_size, "chunk_overlap": chunk_overlap, **params},
            owner="RagloomNodeParser",
        )
        super().__init__(
            chunker=bound.spec,
            include_metadata=include_metadata,
            include_prev_next_rel=include_prev_next_rel,
            callback_manager=callback_manager or CallbackManager([]),
            id_func=id_func or ragloom_node_id,
        )
        self._bound = bound

    @classmethod
    def class_name(cls) -> str:
        return "RagloomNodeParser"

    @property
    def ragloom_chunker(self) -> Chunker:
        """The ragloom chunker doing the cutting."""
        return self._bound.chunker

    def __setstate__(self, state: dict[str, Any]) -> None:
        # LlamaIndex rebuilds a component from its fields when unpickling; the chunker itself
        # was pickled along (it is what the worker processes of num_workers > 1 receive), so
        # it is restored as it was. Only a chunker that could not be pickled is rebuilt.
        if "_bound" in (state.get("__pydantic_private__") or {}):
            BaseModel.__setstate__(self, state)
        else:
            super().__setstate__(state)

    def to_dict(self, **kwargs: Any) -> dict[str, Any]:
        data = super().to_dict(**kwargs)
        data["chunker_hash"] = self._bound.identity
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any], **kwargs: Any) -> RagloomNodeParser:  # type: ignore[override]
        data = {**data, **kwargs}
        data.pop("class_name", None)
        data.pop("chunker_hash", None)
        id_func = data.get("id_func")
        if isinstance(id_func, Mapping):
            name = id_func.get("id_func_name")
            if name not in _ID_FUNCS:
                raise ValueError(
                    f"RagloomNodeParser.from_dict cannot restore id_func {name!r}; pass the "
                    "function itself: RagloomNodeParser.from_dict(data, id_func=...)"
                )
            data["id_func"] = _ID_FUNCS[name]
        return cls(**data)

    def get_nodes_from_documents(
        self, documents: Sequence[BaseNode], show_progress: bool = False, **kwargs: Any
    ) -> list[BaseNode]:
        return super().get_nodes_from_documents(_checked(documents), show_progress, **kwargs)

    async def aget_nodes_from_documents(
        self, documents: Sequence[BaseNode], show_progress: bool = False, **kwargs: Any
    ) -> list[BaseNode]:
        return await super().aget_nodes_from_documents(_checked(documents), show_progress, **kwargs)

    def _parse_nodes(
        self, nodes: Sequence[BaseNode], show_progress: bool = False, **kwargs: Any
    ) -> list[BaseNode]:
        out: list[BaseNode] = []
        for node in get_tqdm_iterable(nodes, show_progress, "Parsing nodes"):
            out.extend(self._split_node(node))
        return out

    def _split_node(self, node: BaseNode) -> list[TextNode]:
        text = node.get_content(metadata_mode=MetadataMode.NONE)
        source = RagloomDocument.model_construct(
            id=node.node_id,
            content=text,
            content_format=content_format_of(
                node.metadata, _mimetype(node), node.metadata.get("file_type")
            ),
            metadata=dict(node.metadata),
            parent_id=None,
        )
        cuts = self._bound.cuts(source)
        info = node.as_related_node_info()
        relationships: dict[NodeRelationship, Any] = {NodeRelationship.SOURCE: info}
        if not isinstance(node, LIDocument) and node.source_node is not None:
            relationships[NodeRelationship.PARENT] = info
        embed_keys = _with_index(node.excluded_embed_metadata_keys)
        llm_keys = _with_index(node.excluded_llm_metadata_keys)
        out: list[TextNode] = []
        for i, cut in enumerate(cuts):
            metadata = dict(cut.metadata) if cut.metadata else {}
            metadata[INDEX_KEY] = i
            out.append(
                TextNode(
                    id_=self.id_func(i, node),
                    text=cut.text,
                    start_char_idx=cut.start,
                    end_char_idx=cut.end,
                    metadata=metadata,
                    excluded_embed_metadata_keys=list(embed_keys),
                    excluded_llm_metadata_keys=list(llm_keys),
                    metadata_seperator=node.metadata_separator,
                    metadata_template=node.metadata_template,
                    text_template=getattr(node, "text_template", DEFAULT_TEXT_NODE_TMPL),
                    relationships=dict(relationships),
                )
            )
        return out

    def _postprocess_parsed_nodes(
        self, nodes: list[BaseNode], parent_doc_map: dict[str, LIDocument]
    ) -> list[BaseNode]:
        # LlamaIndex re-derives offsets by searching each node's text in its document; that
        # finds the wrong place when the text repeats. The chunker's spans are kept instead.
        spans = [
            (getattr(n, "start_char_idx", None), getattr(n, "end_char_idx", None)) for n in nodes
        ]
        nodes = super()._postprocess_parsed_nodes(nodes, parent_doc_map)
        for node, (start, end) in zip(nodes, spans, strict=True):
            if isinstance(node, TextNode) and (node.start_char_idx, node.end_char_idx) != (
                start,
                end,
            ):
                node.start_char_idx, node.end_char_idx = start, end
        return nodes


def _with_index(keys: Sequence[str]) -> list[str]:
    return list(keys) if INDEX_KEY in keys else [*keys, INDEX_KEY]


def _checked(documents: object) -> Sequence[BaseNode]:
    if not is_batch(documents) or not isinstance(documents, Sequence):
        raise wrong_type(documents, f"a list of {_NODE_CLASS}", _TO_LLAMA)
    for document in documents:
        if not isinstance(document, BaseNode):
            raise wrong_type(document, _NODE_CLASS, _TO_LLAMA)
    return documents
