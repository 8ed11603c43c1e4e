"""The index side of an ingest: its recorded root and embedder, its dimension, the documents a
sync removes, and the routes fitted again after a run."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

from ._walk import InputFile, WalkResult, file_id

__all__ = [
    "check_dimension",
    "embedder_record",
    "gone_documents",
    "location",
    "recorded_root",
    "refresh_routes",
    "root_record",
    "store_dir",
    "sync_scope",
]


def refresh_routes(store: Any, registry: Any) -> dict[str, Any] | None:
    """Fit the index's routes again when what it holds changed; what they are now."""
    from ..index_routes import refresh_routes as fit_again

    fitted, fresh = fit_again(store, registry=registry)
    if fitted is None:
        return None
    return {
        "collections": [c.to_dict() for c in fitted.collections],
        "routing": "fitted" if fitted.note is None else fitted.note,
        "fitted": fresh,
        "fit": fitted.fit,
    }


def location(store: Any) -> str | None:
    if store is None:
        return None
    said = getattr(store, "location", None)  # without reading the store, when it says
    if isinstance(said, str):
        return said
    try:
        return str(store.info().location)
    except Exception:  # noqa: BLE001 - only a label
        return type(store).__name__


def gone_documents(
    known: Mapping[str, str],
    files: list[InputFile],
    scope: tuple[set[str], list[str], list[str]] | None = None,
) -> list[str]:
    """Stored document ids whose files are not among ``files`` (a file's documents are its id
    and ids derived from it with ``#``); with ``scope`` (the file ids named, the folder
    prefixes walked, the folder prefixes that could not be listed), only those under the
    paths walked and not under a folder that could not be listed."""
    present = {f.doc_id for f in files}

    def under(doc_id: str) -> bool:
        if scope is None:
            return True
        named, walked, unlisted = scope
        base = doc_id.split("#", 1)[0]
        if any(doc_id.startswith(p) or base.startswith(p) for p in unlisted):
            return False
        if doc_id in named or base in named:
            return True
        return any(p == "" or doc_id.startswith(p) for p in walked)

    return [
        doc_id for doc_id in known
        if doc_id not in present and doc_id.split("#", 1)[0] not in present and under(doc_id)
    ]


def sync_scope(
    texts: list[str], root: str | None, walked: WalkResult
) -> tuple[set[str], list[str], list[str]]:
    """What ``--sync`` may remove from: the files named, the folders walked (as id
    prefixes, ``""`` for the root itself), and the folders that could not be listed."""
    base = root or walked.root
    named: set[str] = set()
    folders: list[str] = []
    for text in texts:
        relative = os.path.relpath(os.path.abspath(text), base).replace(os.sep, "/")
        if os.path.isdir(text):
            folders.append("" if relative == "." else file_id(relative) + "/")
        else:
            named.add(file_id(relative))
    unlisted = [p.doc_id for p in walked.problems if p.kind == "unreadable"]
    return named, folders, unlisted


def recorded_root(properties: Mapping[str, Any], base: str | None) -> str | None:
    """The absolute root an index records in ``properties`` (relative to its folder
    ``base``), or ``None`` before its first ingest."""
    recorded = properties.get("root")
    if not isinstance(recorded, str) or not recorded:
        return None
    return os.path.normpath(os.path.join(base or os.getcwd(), recorded))


def root_record(root: str, base: str | None) -> str:
    """How an index in the folder ``base`` records ``root``: relative to its folder, so a
    project moved as a whole keeps its ids (absolute on another drive, or without a folder)."""
    if base is None:
        return root
    try:
        return os.path.relpath(root, base)
    except ValueError:  # another drive (Windows)
        return root


def store_dir(store: Any) -> str | None:
    """The absolute folder of a store kept in a local folder (``None`` otherwise)."""
    path = getattr(store, "path", None)
    if path is None:
        return None
    return str(os.path.abspath(os.fspath(path)))


def recorded_embedder(store: Any) -> dict[str, Any] | None:
    if store is None:
        return None
    properties = getattr(store, "properties", None)
    recorded = properties().get("embedder") if callable(properties) else None
    return recorded if isinstance(recorded, dict) else None


def describe_embedder(record: Mapping[str, Any]) -> str:
    params = record.get("params") or {}
    shown = ", ".join(f"{k}={v!r}" for k, v in sorted(params.items()) if v is not None)
    return f"{record.get('name') or record.get('class')!r}" + (f" ({shown})" if shown else "")


def embedder_record(registry: Any, embedder: Any) -> dict[str, Any]:
    """``{"name", "params", "class"}`` of ``embedder``: its registered name (qualified with
    its distribution; ``None`` when it is not registered) and :meth:`config` parameters, which
    rebuild it through the registry."""
    name: str | None = None
    found = registry.name_of(embedder)
    if found is not None and found[0] == "embedder":
        label = found[1]
        short = label.split(":")[-1]
        providers = [
            p for p in registry.providers("embedder").get(short, [])
            if ":" not in label or p.qualified == label
        ]
        name = providers[0].qualified if len(providers) == 1 else label
    try:
        params = json.loads(json.dumps(dict(embedder.config())))
    except (TypeError, ValueError):
        params = {}
    cls = type(embedder)
    return {"name": name, "params": params, "class": f"{cls.__module__}:{cls.__qualname__}"}


def check_dimension(store: Any, pipeline: Any) -> None:
    """Refuse, before anything is read or written, an index whose vectors have another
    dimension than the pipeline's embedder makes (they could never be stored together).

    Raises:
        StoreError: naming the index, both dimensions and the embedder.
    """
    from ..embedding import EmbeddingStep
    from ..stores import StoreError

    if store is None:
        return
    steps = [s for s in pipeline.walk() if isinstance(s, EmbeddingStep)]
    if not steps:
        return
    # A store that tells its dimension alone may read less than its whole info.
    held = getattr(store, "dimension", None)
    if not isinstance(held, int) or isinstance(held, bool):
        held = store.info().dimension
    if held is None:
        return
    embedder = steps[-1].embedder
    made = embedder.dimension
    if made != held:
        raise StoreError(
            f"the index at {location(store)} holds vectors of dimension {held}, but "
            f"the embedder {type(embedder).__name__} makes vectors of dimension {made}: "
            "ingest with the embedder the index was built with, or clear the index to "
            "rebuild it with this one; nothing was changed"
        )
