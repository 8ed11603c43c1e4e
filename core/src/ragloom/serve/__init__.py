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

from ._app import ServeLimits, ServeState, create_app

__all__ = ["TOKEN_ENV", "ServeLimits", "ServeState", "create_app"]

#: The environment variable ``ragloom serve`` reads a bearer token from (``--token`` wins).
TOKEN_ENV = "RAGLOOM_SERVE_TOKEN"
