"""``ragloom index info`` / ``clear``, and opening the index for ``ingest`` and ``search``."""

from __future__ import annotations

import json
import os
from typing import Any

import click

from ..searcher import DEFAULT_INDEX, DEFAULT_STORE, open_index
from ._app import EXIT_OK

__all__ = ["DEFAULT_INDEX", "DEFAULT_STORE", "index", "index_option", "open_index"]


def index_option(func: Any) -> Any:
    return click.option(
        "--index",
        "index_path",
        default=DEFAULT_INDEX,
        show_default=True,
        type=click.Path(file_okay=False),
        help="Index folder (LanceDB).",
    )(func)


@click.group("index")
def index() -> None:
    """Show or clear the index that `ragloom ingest --index` writes and `ragloom search` reads."""


@index.command("info")
@index_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def info(index_path: str, as_json: bool) -> int:
    """Documents, chunks, vector dimension and collections of the index."""
    from ..collection import list_collections

    if not os.path.exists(index_path):
        if as_json:
            click.echo(json.dumps({"location": index_path, "exists": False, "documents": 0,
                                   "chunks": 0, "dimension": None, "collections": []}))
        else:
            click.echo(f"no index at {index_path}")
        return EXIT_OK
    with open_index(index_path) as store:
        details = store.info()
        collections = list_collections(store)
    if as_json:
        click.echo(json.dumps({
            "location": details.location, "exists": True, "documents": details.documents,
            "chunks": details.chunks, "dimension": details.dimension,
            "collections": [c.to_dict() for c in collections],
        }, ensure_ascii=False))
    else:
        click.echo(f"index: {details.location}")
        click.echo(f"  documents: {details.documents}")
        click.echo(f"  chunks: {details.chunks}")
        click.echo(f"  dimension: {details.dimension if details.dimension else 'none (text only)'}")
        click.echo(f"  collections: {len(collections)}")
        if collections:
            from .._display import render_table

            rows = [
                (c.name if c.name is not None else "(none)", str(c.documents), str(c.chunks))
                for c in collections
            ]
            click.echo(render_table(("COLLECTION", "DOCUMENTS", "CHUNKS"), rows, indent=4))
    return EXIT_OK


@index.command("clear")
@index_option
def clear(index_path: str) -> int:
    """Remove every document from the index."""
    if not os.path.exists(index_path):
        click.echo(f"no index at {index_path}")
        return EXIT_OK
    with open_index(index_path) as store:
        removed = store.clear()
    click.echo(f"removed {removed} documents from {index_path}")
    return EXIT_OK
