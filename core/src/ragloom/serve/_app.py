"""The ASGI application of ``ragloom serve`` (FastAPI)."""

from __future__ import annotations

import json
import logging
import secrets
import threading
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from importlib import resources
from typing import Any

import anyio
from fastapi import Depends, FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, Response
from fastapi_offline import FastAPIOffline
from pydantic import BaseModel, ConfigDict, Field
from starlette.exceptions import HTTPException

from ..errors import ConfigurationError, InvalidInputError, RagloomError
from ..searcher import Searcher, SearchSettings

__all__ = ["ServeLimits", "ServeState", "create_app"]

log = logging.getLogger("ragloom.serve")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


@dataclass(frozen=True)
class ServeLimits:
    """What one request may ask (past these: a 4xx answer, nothing searched)."""

    #: Bytes of a request body (413 past it).
    max_body: int = 16 * 1024
    #: Characters of a question (422 past it).
    max_question: int = 2000
    #: The largest ``k`` (passages per sub-query and in the answer; 422 past it).
    max_k: int = 50
    #: Distinct ``k`` values kept open at once (each is a search with its own index handle).
    max_searchers: int = 8
    #: Answers kept for questions asked again while the index stays at the same version
    #: (0: none). Only for stores that tell their version (``read_version()``).
    cached_answers: int = 1024


class ServeState:
    """The searches a server answers with: one :class:`~ragloom.searcher.Searcher` per ``k``
    asked (the settings' ``top_k`` first), opened on first use and kept; closed by
    :meth:`close`."""

    def __init__(
        self, settings: SearchSettings, limits: ServeLimits | None = None, *,
        answerer: Any = None,
    ) -> None:
        settings.check()
        self.settings = settings
        #: What ``POST /ask`` answers with (an :class:`~ragloom.answering.Answerer`; default:
        #: the offline extractive one), chosen by whoever starts the server, never by a request.
        self.answerer = answerer
        self.limits = limits or ServeLimits()
        self._searchers: dict[int, Searcher] = {}
        self._lock = threading.Lock()
        self._answers: OrderedDict[tuple[int | None, str], tuple[Any, str]] = OrderedDict()
        self.default = self.searcher(None)

    async def answer(self, question: str, k: int | None) -> str:
        """The JSON of ``ragloom search --json`` for ``question`` (raises its failure).

        An answer is kept (up to ``limits.cached_answers``, least recently asked dropped
        first) with the version of the index it was read from, and given again only while
        the index is still at that version: a re-ingest makes every kept answer stale."""
        searcher = await self._searcher_for(k)
        reader = getattr(searcher.store, "read_version", None)
        version = reader() if reader is not None and self.limits.cached_answers else None
        key = (k, question)
        if version is not None:
            with self._lock:
                kept = self._answers.get(key)
                if kept is not None and kept[0] == version:
                    self._answers.move_to_end(key)
                    return kept[1]
        result = await searcher.asearch(question)
        text = json.dumps(result.model_dump(mode="json"), ensure_ascii=False)
        if version is not None:
            with self._lock:
                self._answers[key] = (version, text)
                self._answers.move_to_end(key)
                while len(self._answers) > self.limits.cached_answers:
                    self._answers.popitem(last=False)
        return text

    async def ask(self, question: str, k: int | None) -> str:
        """The JSON of ``ragloom ask --json`` for ``question``: the search, then the
        server's answerer (raises the search's or the answerer's failure)."""
        if self.answerer is None:
            from ..answering import create_answerer

            self.answerer = create_answerer()
        result = await (await self._searcher_for(k)).asearch(question)
        answered = await self.answerer.answer(question, result)
        return json.dumps(answered.model_dump(mode="json"), ensure_ascii=False)

    async def _searcher_for(self, k: int | None) -> Searcher:
        if k is None or k == self.settings.top_k:
            return self.default
        # opening another search reads the index: not on the event loop
        return await anyio.to_thread.run_sync(self.searcher, k)

    def searcher(self, k: int | None) -> Searcher:
        """The search with ``k`` passages (``None``: the settings' own)."""
        if k is not None and self.settings.config is not None and k != self.settings.top_k:
            raise InvalidInputError(
                "k is set by the server's pipeline file (its 'retrieval' section); leave it out"
            )
        wanted = self.settings.top_k if k is None else k
        with self._lock:
            found = self._searchers.get(wanted)
            if found is not None:
                return found
            if len(self._searchers) >= self.limits.max_searchers:
                raise InvalidInputError(
                    f"this server keeps {self.limits.max_searchers} values of k open "
                    f"({', '.join(str(n) for n in sorted(self._searchers))}): use one of them"
                )
            settings = self.settings.model_copy(update={"top_k": wanted})
            searcher = self._searchers[wanted] = Searcher(settings)
            return searcher

    def close(self) -> None:
        with self._lock:
            searchers, self._searchers = list(self._searchers.values()), {}
        for searcher in searchers:
            searcher.close()


class SearchRequest(BaseModel):
    """A question to answer (the body of ``POST /search``)."""

    model_config = ConfigDict(extra="forbid")

    question: str = Field(description="The question, asked as on the command line.")
    k: int | None = Field(
        default=None, ge=1, description="Passages per sub-query and in the answer "
        "(default: the server's -k)."
    )


class PlanRequest(BaseModel):
    """A question to plan (the body of ``POST /plan``)."""

    model_config = ConfigDict(extra="forbid")

    question: str


def _error(status: int, message: str, **extra: Any) -> JSONResponse:
    return JSONResponse({"error": message, **extra}, status_code=status)


def _json(payload: Any, status: int = 200) -> Response:
    # the bytes `ragloom search --json` prints for the same answer
    return Response(
        json.dumps(payload, ensure_ascii=False), status_code=status,
        media_type="application/json",
    )


class _BodyLimit:
    """Refuses a request body past ``limit`` bytes with 413, declared or streamed."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or ()).get(b"content-length")
        too_big = JSONResponse(
            {"error": f"the request body is over {self.limit} bytes"}, status_code=413
        )
        if declared is not None and (not declared.isdigit() or int(declared) > self.limit):
            await too_big(scope, receive, send)
            return
        seen = 0

        async def limited() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.limit:
                    raise HTTPException(413, f"the request body is over {self.limit} bytes")
            return message

        await self.app(scope, limited, send)


def _check_question(question: str, limits: ServeLimits) -> str:
    asked = question.strip()
    if not asked:
        raise HTTPException(422, "the question is blank: ask something")
    if len(asked) > limits.max_question:
        raise HTTPException(
            422, f"the question is {len(asked)} characters long; the limit is "
            f"{limits.max_question}"
        )
    return asked


def _check_k(k: int | None, limits: ServeLimits) -> int | None:
    if k is not None and not 1 <= k <= limits.max_k:
        raise HTTPException(422, f"k must be between 1 and {limits.max_k}, got {k}")
    return k


def _document_view(document_id: str, chunks: list[Any]) -> dict[str, Any]:
    """A document's text rebuilt from its chunks' exact offsets, and the chunks.

    The index keeps chunks, not whole documents: characters no chunk covers (the whitespace
    between chunks, mostly) are spaces here, and listed in ``gaps``."""
    placed = [c for c in chunks if c.start is not None and c.end is not None]
    whole = {id(c) for c in placed}
    length = max((c.end for c in placed), default=0)
    text = [" "] * length
    covered = [False] * length
    for chunk in placed:
        if len(chunk.content) == chunk.end - chunk.start:
            text[chunk.start:chunk.end] = chunk.content
            covered[chunk.start:chunk.end] = [True] * (chunk.end - chunk.start)
    gaps: list[list[int]] = []
    for i, done in enumerate(covered):
        if done:
            continue
        if gaps and gaps[-1][1] == i:
            gaps[-1][1] = i + 1
        else:
            gaps.append([i, i + 1])
    return {
        "document_id": document_id,
        "text": "".join(text),
        "gaps": gaps,
        "chunks": [
            {
                "chunk_id": c.id,
                "index": c.index,
                "start": c.start,
                "end": c.end,
                "metadata": dict(c.metadata),
                # a chunk whose text is not the document's slice (rendered) is shown apart
                "content": None if id(c) in whole else c.content,
            }
            for c in chunks
        ],
    }


def create_app(
    settings: SearchSettings | ServeState,
    *,
    token: str | None = None,
    limits: ServeLimits | None = None,
) -> FastAPI:
    """The ASGI application answering searches with ``settings`` (opened now: a missing index
    or a bad routes file raises here, before anything listens).

    ``token``: when given, ``/search``, ``/ask``, ``/plan`` and ``/documents`` want the header
    ``Authorization: Bearer <token>`` (401 without it). The application closes the index
    when it shuts down.
    """
    state = settings if isinstance(settings, ServeState) else ServeState(settings, limits)
    limits = state.limits

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        try:
            yield
        finally:
            state.close()

    # the API's documentation pages (/docs, /redoc) from files shipped with fastapi-offline:
    # no CDN, so they work where the server has no internet
    app = FastAPIOffline(
        title="ragloom",
        summary="Search an index built by `ragloom ingest`: plan, retrieve, fuse.",
        lifespan=lifespan,
    )
    app.state.ragloom = state

    def authorized(request: Request) -> None:
        if token is None:
            return
        given = request.headers.get("authorization", "")
        scheme, _, value = given.partition(" ")
        if scheme.lower() != "bearer" or not secrets.compare_digest(
            value.strip().encode(), token.encode()
        ):
            raise HTTPException(
                401, "this server wants a bearer token (Authorization: Bearer TOKEN)",
                headers={"WWW-Authenticate": "Bearer"},
            )

    guarded = [Depends(authorized)]

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> Response:
        response = _error(exc.status_code, str(exc.detail))
        for name, value in (exc.headers or {}).items():
            response.headers[name] = value
        return response

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> Response:
        problems = []
        for problem in exc.errors():
            where = ".".join(str(part) for part in problem.get("loc", ()) if part != "body")
            problems.append(f"{where}: {problem.get('msg', 'invalid')}" if where else
                            str(problem.get("msg", "invalid")))
        return _error(422, "; ".join(problems) or "invalid request")

    @app.exception_handler(RagloomError)
    async def refused(request: Request, exc: RagloomError) -> Response:
        status = 422 if isinstance(exc, InvalidInputError | ConfigurationError) else 500
        return _error(status, str(exc))

    @app.exception_handler(Exception)
    async def failed(request: Request, exc: Exception) -> Response:
        log.error("%s %s failed", request.method, request.url.path, exc_info=exc)
        return _error(500, f"internal error ({type(exc).__name__}); see the server's log")

    async def answer(question: str, k: int | None, run: Any = state.answer) -> Response:
        """``run`` (a search or an ask) for a checked question; a failed question is what
        `ragloom search --json` (or `ask --json`) prints for it."""
        asked = _check_question(question, limits)
        k = _check_k(k, limits)
        try:
            text = await run(asked, k)
        except (InvalidInputError, ConfigurationError):
            raise
        except RagloomError as exc:
            # what `ragloom search --json` prints for a question that failed
            return _json({"query": asked, "error": str(exc)}, status=500)
        return Response(text, media_type="application/json")

    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    async def page() -> HTMLResponse:
        html = resources.files(__package__).joinpath("page.html").read_text(encoding="utf-8")
        return HTMLResponse(html, headers={"Cache-Control": "no-cache"})

    @app.get("/health", summary="Whether the server is up")
    async def health() -> dict[str, Any]:
        return {"status": "ok"}  # nothing about the index: this needs no token

    @app.get("/search", dependencies=guarded, summary="Answer a question (query string)")
    async def search_get(
        q: str = Query(description="The question."),
        k: int | None = Query(default=None, description="Passages per sub-query and in all."),
    ) -> Response:
        """The JSON of `ragloom search --json` for `q`."""
        return await answer(q, k)

    @app.post("/search", dependencies=guarded, summary="Answer a question")
    async def search_post(body: SearchRequest) -> Response:
        """The JSON of `ragloom search --json` for the question."""
        return await answer(body.question, body.k)

    @app.post("/ask", dependencies=guarded, summary="Answer a question with citations")
    async def ask(body: SearchRequest) -> Response:
        """The JSON of `ragloom ask --json` for the question: the answer, its claims, the
        citations with their exact spans, and the search under it (the answerer is the
        server's, `ragloom serve --answerer`)."""
        return await answer(body.question, body.k, state.ask)

    @app.post("/plan", dependencies=guarded, summary="Plan a question (no retrieval)")
    async def plan(body: PlanRequest) -> Response:
        """The sub-queries and their routes: the JSON of `ragloom plan --json`."""
        asked = _check_question(body.question, limits)
        block = getattr(state.default.pipeline, "block", None)
        routing = getattr(block, "routing", None)
        if routing is None:
            raise HTTPException(501, "this server's pipeline has no query block to plan with")
        planned = await routing.plan(asked)
        return _json(planned.model_dump(mode="json"))

    @app.get("/documents/{document_id:path}", dependencies=guarded,
             summary="A document's text and its chunks")
    async def document(document_id: str) -> Response:
        """The document's text rebuilt from its chunks, with each chunk's offsets and
        metadata. Documents are chosen by their id in the index, never by a path."""
        if len(document_id) > limits.max_question:
            raise HTTPException(422, "the document id is too long")
        store = state.default.store
        if store is None or not hasattr(store, "chunks"):
            raise HTTPException(501, "this server's store cannot list a document's chunks")
        found = await anyio.to_thread.run_sync(store.chunks, [document_id])
        chunks = found.get(document_id)
        if not chunks:
            raise HTTPException(404, f"no document {document_id!r} in the index")
        return _json(_document_view(document_id, chunks))

    app.add_middleware(_BodyLimit, limit=limits.max_body)
    return app
