"""``ragloom index info`` / ``clear``, and opening the index for ``ingest`` and ``search``."""

from __future__ import annotations

import json
import os
from typing import Any

import click

from ..plugins._discovery import install_hint
from ._app import EXIT_OK

__all__ = ["DEFAULT_INDEX", "DEFAULT_STORE", "index", "index_option", "open_index"]

DEFAULT_INDEX = os.path.join(".ragloom", "index")
#: The store the CLI opens, named with its distribution so no other plugin can take its place.
DEFAULT_STORE = "ragloom-lancedb:lancedb"


def open_index(path: str, *, registry: Any = None, must_exist: bool = False) -> Any:
    """The store at ``path`` (the embedded LanceDB store of ragloom-lancedb).

    Raises:
        ConfigurationError: ragloom-lancedb is not installed, or ``must_exist`` and there is no
            index at ``path``.
    """
    from ..errors import ConfigurationError, PluginNotFoundError
    from ..plugins import Registry

    if must_exist and not os.path.exists(path):
        raise ConfigurationError(
            f"no index at {path}: build one with `ragloom ingest PATH... --index {path}`"
        )
    registry = registry or Registry()
    try:
        return registry.create("store", DEFAULT_STORE, {"path": path})
    except PluginNotFoundError:
        raise ConfigurationError(
            f"an index needs the store {DEFAULT_STORE}: {install_hint('ragloom-lancedb')}"
        ) from None


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
    """Documents, chunks and vector dimension of the index."""
    if not os.path.exists(index_path):
        if as_json:
            click.echo(json.dumps({"location": index_path, "exists": False, "documents": 0,
                                   "chunks": 0, "dimension": None}))
        else:
            click.echo(f"no index at {index_path}")
        return EXIT_OK
    with open_index(index_path) as store:
        details = store.info()
    if as_json:
        click.echo(json.dumps({
            "location": details.location, "exists": True, "documents": details.documents,
            "chunks": details.chunks, "dimension": details.dimension,
        }))
    else:
        click.echo(f"index: {details.location}")
        click.echo(f"  documents: {details.documents}")
        click.echo(f"  chunks: {details.chunks}")
        click.echo(f"  dimension: {details.dimension if details.dimension else 'none (text only)'}")
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
