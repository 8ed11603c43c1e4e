"""``ragloom serve``: one process holds the index and the model and answers searches over HTTP.

:func:`create_app` makes the ASGI application (FastAPI, from the ``ragloom[serve]`` extra);
``ragloom serve`` runs it with uvicorn. The searches are the command line's
(:mod:`ragloom.searcher`: the same defaults, routes files and pipeline files), and
``POST /search`` answers with the JSON of ``ragloom search --json``.

Endpoints: ``GET /`` (the search page), ``GET|POST /search``, ``POST /plan``,
``GET /documents/{id}`` (a document's text rebuilt from its chunks, with their offsets),
``GET /health``, and the OpenAPI schema at ``/openapi.json`` (``/docs`` renders it).
"""

from __future__ import annotations

import socket

from ._app import ServeLimits, ServeState, create_app

__all__ = ["TOKEN_ENV", "ServeLimits", "ServeState", "create_app", "listening_socket"]

#: The environment variable ``ragloom serve`` reads a bearer token from (``--token`` wins).
TOKEN_ENV = "RAGLOOM_SERVE_TOKEN"


def listening_socket(host: str, port: int, backlog: int = 2048) -> socket.socket:
    """A TCP socket bound to ``host:port`` and listening (``port`` 0: any free port).

    It names ``IPPROTO_TCP``: asyncio sets ``TCP_NODELAY`` only on the connections it accepts
    from such a socket, and without it each response on a kept-alive connection waits for
    the client's delayed acknowledgement (about 40 ms on Linux) between its head and its body.

    Raises:
        OSError: the address cannot be bound (in use, not this machine's, no permission).
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(backlog)  # connections wait in the backlog until the server runs
    except OSError:
        sock.close()
        raise
    return sock
