"""``ragloom index info|check|optimize|clear``, and opening the index for ``ingest`` and
``search``."""

from __future__ import annotations

import json
import os
from typing import Any

import click

from ..searcher import DEFAULT_INDEX, DEFAULT_STORE, index_exists, open_index
from ._app import EXIT_OK, EXIT_USAGE, error

__all__ = [
    "DEFAULT_INDEX", "DEFAULT_STORE", "index", "index_option", "open_index", "take_writer_lock",
    "wait_option",
]

#: Seconds a writer waits for another one by default.
DEFAULT_WAIT = 60.0


def index_option(func: Any) -> Any:
    return click.option(
        "--index",
        "index_path",
        default=DEFAULT_INDEX,
        show_default=True,
        type=click.Path(file_okay=False),
        help="Index folder (LanceDB).",
    )(func)


def wait_option(func: Any) -> Any:
    return click.option(
        "--wait",
        "wait",
        default=DEFAULT_WAIT,
        show_default=True,
        type=click.FloatRange(0),
        help="Seconds to wait for another process writing the index before giving up (busy).",
    )(func)


def take_writer_lock(store: Any, index_path: str) -> None:
    """Make this process the writer of ``store`` (at ``index_path``), saying once on stderr
    when it has to wait for another one."""

    def notice() -> None:
        click.echo(
            f"ragloom: the index at {index_path} is being written by another process; "
            "waiting for it to finish...",
            err=True,
        )

    store.take_writer_lock(on_wait=notice)


@click.group("index")
def index() -> None:
    """Show, check, optimize or clear the index that `ragloom ingest --index` writes and
    `ragloom search` reads.

    Exit status: 0 done (and the index is consistent), 2 the index is damaged (the message
    names what and the command that repairs it), busy (another process is writing it), or
    cannot be read or written.
    """


def _problems(found: Any) -> list[str]:
    return [f"    {line}" for line in found.problems]


@index.command("info")
@index_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def info(index_path: str, as_json: bool) -> int:
    """Documents, chunks, vector dimension and collections of the index, and a quick
    consistency check (documents against chunks, data files readable). Exit status 2 when it
    finds damage."""
    from ..collection import list_collections

    if not index_exists(index_path):
        if as_json:
            click.echo(json.dumps({"location": index_path, "exists": False, "documents": 0,
                                   "chunks": 0, "dimension": None, "collections": []}))
        else:
            click.echo(f"no index at {index_path}")
        return EXIT_OK
    with open_index(index_path) as store:
        found = store.check()
        details = None if found.unreadable else store.info()
        properties = {} if found.unreadable else _safe_properties(store)
        collections = [] if found.unreadable else list_collections(store)
    transient = found.busy and not found.unreadable
    if as_json:
        click.echo(json.dumps({
            "location": found.location, "exists": True,
            "documents": details.documents if details else None,
            "chunks": details.chunks if details else None,
            "dimension": details.dimension if details else None,
            "root": properties.get("root"),
            "embedder": (properties.get("embedder") or {}).get("name"),
            "check": {"ok": found.ok, "problems": list(found.problems), "busy": found.busy},
            "collections": [c.to_dict() for c in collections],
        }, ensure_ascii=False))
    else:
        click.echo(f"index: {found.location}")
        if details is not None:
            click.echo(f"  documents: {details.documents}")
            click.echo(f"  chunks: {details.chunks}")
            click.echo(
                f"  dimension: {details.dimension if details.dimension else 'none (text only)'}"
            )
        if properties.get("root"):
            root = str(properties["root"])
            where = "" if os.path.isabs(root) else " (relative to the index folder)"
            click.echo(f"  root: {root}{where}")
        embedder = properties.get("embedder") or {}
        if embedder.get("name"):
            click.echo(f"  embedder: {embedder['name']}")
        if details is not None:
            click.echo(f"  collections: {len(collections)}")
        if collections:
            from .._display import render_table

            rows = [
                (c.name if c.name is not None else "(none)", str(c.documents), str(c.chunks))
                for c in collections
            ]
            click.echo(render_table(("COLLECTION", "DOCUMENTS", "CHUNKS"), rows, indent=4))
        if found.ok:
            click.echo("  check: ok")
        elif transient:
            click.echo("  check: another process is writing the index now:")
            click.echo("\n".join(_problems(found)))
        else:
            click.echo("  check: DAMAGED")
            click.echo("\n".join(_problems(found)))
            click.echo(f"  fix: ragloom index check --repair --index {index_path}")
    if found.ok or transient:
        return EXIT_OK
    error(
        f"the index at {index_path} is damaged: {'; '.join(found.problems)}; repair it with "
        f"`ragloom index check --repair --index {index_path}`"
    )
    return EXIT_USAGE


def _safe_properties(store: Any) -> dict[str, Any]:
    from ..stores import StoreError

    try:
        return dict(store.properties())
    except StoreError:
        return {}


@index.command("check")
@index_option
@click.option("--repair", is_flag=True,
              help="Remove what is damaged, so that ingesting the files again rebuilds it.")
@wait_option
def check(index_path: str, repair: bool, wait: float) -> int:
    """Check the whole index: every row read, documents against chunks, the indexes queried.

    Exit status: 0 consistent (or repaired), 2 damaged (without --repair), busy, or not
    repairable. After --repair, `ragloom ingest` of the same files writes what was removed,
    and the index is then what a fresh build gives.
    """
    if not index_exists(index_path):
        click.echo(f"no index at {index_path}")
        return EXIT_OK
    with open_index(index_path, wait=wait) as store:
        if not repair:
            found = store.check(full=True)
        else:
            take_writer_lock(store, index_path)
            found, removed = store.repair()
            from ..ingest._index import recorded_root

            root = recorded_root(_safe_properties(store), index_path)
    if found.ok:
        click.echo(f"index {index_path}: ok")
        return EXIT_OK
    click.echo(f"index {index_path}: damaged")
    click.echo("\n".join(_problems(found)))
    if not repair:
        if found.busy:
            click.echo("  (another process is writing the index now: check again later)")
        click.echo(f"  fix: ragloom index check --repair --index {index_path}")
        return EXIT_USAGE
    what = (
        "every document whose chunks were in data that could not be read"
        if removed == ["*"] else f"{len(removed)} damaged document(s)"
    )
    folder = root or "PATH"
    click.echo(f"repaired: removed {what}")
    click.echo(f"  next: ragloom ingest {folder} --index {index_path}  (writes them again)")
    return EXIT_OK


@index.command("optimize")
@index_option
@wait_option
def optimize(index_path: str, wait: float) -> int:
    """Fold the index's small files together, merge its search indexes' segments, build or
    retrain the approximate vector index once the index is large enough (50,000 chunks:
    `ragloom ingest` says when), and remove old versions and files left by interrupted
    writes. Searches may run meanwhile. Ingest never does this whole-table work (its memory
    stays bounded); run it after a large ingest."""
    if not index_exists(index_path):
        click.echo(f"no index at {index_path}")
        return EXIT_OK
    with open_index(index_path, wait=wait) as store:
        take_writer_lock(store, index_path)
        store.optimize()
    click.echo(f"optimized {index_path}")
    return EXIT_OK


@index.command("clear")
@index_option
@wait_option
def clear(index_path: str, wait: float) -> int:
    """Remove every document from the index."""
    if not index_exists(index_path):
        click.echo(f"no index at {index_path}")
        return EXIT_OK
    with open_index(index_path, wait=wait) as store:
        take_writer_lock(store, index_path)
        removed = store.clear()
    click.echo(f"removed {removed} documents from {index_path}")
    return EXIT_OK
