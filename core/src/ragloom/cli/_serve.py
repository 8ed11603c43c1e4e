"""``ragloom serve``: answer searches over HTTP from one process that keeps the index open."""

from __future__ import annotations

import os
from typing import Any, Literal

import click

from ..searcher import DEFAULT_DECOMPOSER, DEFAULT_ROUTER, DEFAULT_TOP_K
from ._app import EXIT_OK, interrupted
from ._index import index_option
from ._search import query_fields, query_kind_options, refuse_search_options

__all__ = ["serve"]

#: Options that choose the components without a pipeline file.


def _is_loopback(host: str) -> bool:
    import ipaddress

    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a name: it may resolve to any address
def serve_missing() -> str:
    """The message when the serve extra is not installed."""
    from .._install import install_hint

    hint = install_hint("ragloom", "serve")
    return f"`ragloom serve` needs the serve extra (FastAPI and uvicorn): {hint}"


@click.command("serve")
@index_option
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on (another than loopback is reachable by others).")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535),
              help="Port to listen on (0: any free port, printed at start).")
@click.option(
    "--routes", default=None, type=click.Path(exists=True, dir_okay=False),
    help="Route set (JSON/YAML/TOML), as for `ragloom search`.",
)
@click.option("--decomposer", default=None, help=f"[default: {DEFAULT_DECOMPOSER}]")
@click.option("--router", default=None, help=f"[default: {DEFAULT_ROUTER}]")
@click.option("-k", "--top-k", "top_k", default=DEFAULT_TOP_K, show_default=True,
              type=click.IntRange(1), help="Default passages per sub-query and in the answer.")
@click.option("--mode", type=click.Choice(["hybrid", "vector", "text"]), default=None,
              help="How to search [default: hybrid when the index holds vectors, else text].")
@click.option("--embedder", default=None,
              help="Embed the questions with this registered embedder [default: the one the "
              "index records].")
@click.option(
    "-c", "--config", default=None, type=click.Path(exists=True, dir_okay=False),
    help="A pipeline file with 'query' and 'retrieval' sections (instead of the options "
    "above).",
)
@query_kind_options
@click.option("--allow-imports", is_flag=True, help="Let --config name module:attr imports.")
@click.option(
    "--token", default=None, envvar="RAGLOOM_SERVE_TOKEN", show_envvar=True,
    help="Require 'Authorization: Bearer TOKEN' on /search, /plan and /documents (prefer "
    "the environment variable: a command line is visible to other users).",
)
@click.option(
    "--answerer", default=None,
    help="The answerer of POST /ask [default: ragloom:extractive, offline].",
)
@click.option(
    "--answerer-option", "answerer_options", multiple=True, metavar="KEY=VALUE",
    help="A setting of the answerer (repeatable), as for `ragloom ask`.",
)
@click.option(
    "--answer-cache", "answer_cache", default=1024, show_default=True, type=click.IntRange(0),
    help="Answers kept for questions asked again while the index is unchanged (0: none).",
)
@click.pass_context
def serve(
    ctx: click.Context,
    /,
    index_path: str,
    host: str,
    port: int,
    routes: str | None,
    decomposer: str | None,
    router: str | None,
    top_k: int,
    mode: Literal["hybrid", "vector", "text"] | None,  # a click.Choice
    embedder: str | None,
    config: str | None,
    allow_imports: bool,
    token: str | None,
    answerer: str | None,
    answerer_options: tuple[str, ...],
    answer_cache: int,
    **chosen: Any,
) -> int:
    """Answer searches over HTTP: a page at /, POST /search (the JSON of `ragloom search
    --json`), POST /plan, GET /documents/ID, GET /health, OpenAPI at /docs.

    Listens on 127.0.0.1 unless --host says otherwise. An index that `ragloom ingest` updates
    meanwhile is searched at its new version after each finished write. SIGTERM or Ctrl-C
    stops it after the requests under way (at most 10 s).
    """
    if config is not None:
        refuse_search_options(ctx)
    if token is not None and not token.strip():
        raise click.BadParameter("the token is blank", param_hint="--token")
    try:
        import uvicorn

        from ..serve import ServeLimits, ServeState, create_app, listening_socket
    except ImportError:
        raise click.UsageError(serve_missing()) from None
    from ..searcher import SearchSettings

    settings = SearchSettings(
        index=index_path, routes=routes, decomposer=decomposer, router=router, mode=mode,
        embedder=embedder, top_k=top_k, config=config, allow_imports=allow_imports,
        **query_fields(chosen),
    ) if config is None else SearchSettings(config=config, allow_imports=allow_imports)
    try:
        sock = listening_socket(host, port)
    except OSError as exc:
        raise click.UsageError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    try:
        from ..answering import create_answerer
        from ._ask import _options

        built = create_answerer(answerer, _options(answerer_options))
        state = ServeState(
            settings, ServeLimits(cached_answers=answer_cache), answerer=built
        )
    except BaseException:  # no index, a bad routes file...: reported by the command line
        sock.close()
        raise
    try:
        # the model and the index's files are read now, not by the first request
        state.default.search("warm up")
        app = create_app(state, token=token.strip() if token else None)
        bound = sock.getsockname()[1]
        shown = f"[{host}]" if ":" in host else host
        if not _is_loopback(host):
            click.echo(
                f"ragloom serve: warning: listening on {host}, reachable from other machines"
                + ("" if token else "; anyone who can reach it can search (set --token)"),
                err=True,
            )
        where = config or index_path
        click.echo(f"ragloom serve: http://{shown}:{bound}/ (searching {where})", err=True)
        server = uvicorn.Server(uvicorn.Config(
            app, log_level=os.environ.get("RAGLOOM_SERVE_LOG", "warning"), access_log=False,
            timeout_graceful_shutdown=10, lifespan="on",
        ))
        try:
            # uvicorn stops on SIGTERM or SIGINT once the requests under way are answered
            # (or after timeout_graceful_shutdown), then raises the signal again
            server.run(sockets=[sock])
        except KeyboardInterrupt as exc:
            state.close()
            return interrupted(exc, "the server stopped after the requests under way")
    finally:
        state.close()
        sock.close()
    return EXIT_OK
