"""The synchronous, string-first API: it works in a script and inside a running event loop (a
notebook cell), and a wrong input type is refused at once with its full class name and the way
to convert it."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Iterable
from typing import Any

import anyio
import pytest
from ragloom import (
    Chunker,
    ChunkerRouter,
    ComponentTypeError,
    ContentFormatFilter,
    Document,
    InvalidInputError,
    MultiQueryRoutingPipeline,
    Pipeline,
    QueryTransformer,
    RouteDecision,
    Router,
)

TEXT = "Caching keeps results. Plugins add chunkers.\n\nRouting picks a route."


class Sentences(Chunker):
    """Sentence spans (a synchronous chunker)."""

    step_id = "tests/sentences"

    def split(self, document: Document) -> Iterable[str]:
        text, start = document.content, 0
        for i, char in enumerate(text):
            if i < start:
                continue
            if char in ".\n" and (i + 1 == len(text) or text[i + 1] in " \n"):
                end = i + 1
                while end < len(text) and text[end] in " \n":
                    end += 1
                yield text[start:end]
                start = end
        if start < len(text):
            yield text[start:]


class AsyncWords(Chunker):
    """An asynchronous chunker: ``chunk`` has to run it on an event loop of its own."""

    step_id = "tests/async-words"

    async def asplit(self, document: Document) -> AsyncIterator[str]:
        text, start = document.content, 0
        for i, char in enumerate(text):
            if char == " ":
                await anyio.sleep(0)
                yield text[start : i + 1]
                start = i + 1
        if start < len(text):
            yield text[start:]


class AndSplitter(QueryTransformer):
    """Async decomposer: splits a question on " and "."""

    step_id = "tests/and-splitter"

    async def transform(self, query: str) -> list[str]:
        await anyio.sleep(0)
        return [part.strip() for part in query.split(" and ")]


class Topic(Router):
    """Async router over three topics, "general" being the default."""

    step_id = "tests/topic"

    @property
    def valid_routes(self) -> tuple[str, ...]:
        return ("caching", "plugins", "general")

    @property
    def default_route(self) -> str:
        return "general"

    async def route(self, query: str) -> RouteDecision:
        await anyio.sleep(0)
        for route in ("caching", "plugins"):
            if route[:5] in query.lower():
                return RouteDecision(route=route, score=1.0)
        return self.fallback("no topic word")


class SyncTopic(Topic):
    """The same router, synchronous."""

    step_id = "tests/sync-topic"

    def route_sync(self, query: str) -> RouteDecision:
        for route in ("caching", "plugins"):
            if route[:5] in query.lower():
                return RouteDecision(route=route, score=1.0)
        return self.fallback("no topic word")


def use_everything() -> dict[str, Any]:
    """Every synchronous entry point, as a notebook cell would call them."""
    chunker = Sentences()
    block = MultiQueryRoutingPipeline(AndSplitter(), Topic())
    docs = [Document(id="a", content=TEXT), Document(id="b", content="One. Two.")]
    router = ChunkerRouter().route(ContentFormatFilter(include_formats="markdown"), AsyncWords())
    router.default(chunker)
    return {
        "thread": threading.current_thread().name,
        "split_text": chunker.split_text(TEXT),
        "chunk": [c.content for c in chunker.chunk(docs)],
        "async_chunk": AsyncWords().split_text("one two three"),
        "routed": [
            (c.parent_id, c.content)
            for c in router.chunk(
                [Document(id="m", content="# a b", content_format="markdown"), docs[1]]
            )
        ],
        "run_sync": [c.content for c in Pipeline(Sentences()).run_sync(docs)],
        "plan_sync": [
            (r.sub_query, r.route)
            for r in block.plan_sync("how does caching work and how do plugins load").routing_plan
        ],
        "decide_sync": [Topic().decide_sync("plugins?").route, SyncTopic().decide_sync("hi").route],
        "transform_sync": AndSplitter().transform_sync("a and b"),
        "route_sync": Topic().route_sync("caching").route,
    }


SENTENCES = ["Caching keeps results. ", "Plugins add chunkers.\n\n", "Routing picks a route."]
EXPECTED = {
    "split_text": SENTENCES,
    "chunk": [
        "Caching keeps results. ", "Plugins add chunkers.\n\n", "Routing picks a route.",
        "One. ", "Two.",
    ],
    "async_chunk": ["one ", "two ", "three"],
    "routed": [("m", "# "), ("m", "a "), ("m", "b"), ("b", "One. "), ("b", "Two.")],
    "run_sync": [
        "Caching keeps results. ", "Plugins add chunkers.\n\n", "Routing picks a route.",
        "One. ", "Two.",
    ],
    "plan_sync": [("how does caching work", "caching"), ("how do plugins load", "plugins")],
    "decide_sync": ["plugins", "general"],
    "transform_sync": ["a", "b"],
    "route_sync": "caching",
}


def test_the_sync_api_in_a_script() -> None:
    out = use_everything()
    assert out.pop("thread") == threading.main_thread().name
    assert out == EXPECTED


def test_the_sync_api_inside_a_running_asyncio_loop_like_a_notebook_cell() -> None:
    # Jupyter runs every cell inside a running asyncio loop: anyio.run would refuse to start
    # there. The synchronous API still works, and returns the same results.
    async def cell() -> dict[str, Any]:
        asyncio.get_running_loop()  # really inside a running loop
        return use_everything()

    out = asyncio.run(cell())
    assert out.pop("thread") == threading.main_thread().name  # called from the loop's thread
    assert out == EXPECTED


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_the_sync_api_inside_a_running_anyio_loop(backend: str) -> None:
    async def main() -> dict[str, Any]:
        return use_everything()

    out = anyio.run(main, backend=backend)
    out.pop("thread")
    assert out == EXPECTED


def test_errors_raised_inside_the_helper_loop_reach_the_caller() -> None:
    class Broken(Chunker):
        step_id = "tests/broken"

        async def asplit(self, document: Document) -> AsyncIterator[str]:
            raise RuntimeError("broken chunker")
            yield ""  # pragma: no cover

    async def cell() -> None:
        with pytest.raises(RuntimeError, match="broken chunker"):
            Broken().chunk("some text")
        with pytest.raises(InvalidInputError, match="blank"):
            MultiQueryRoutingPipeline(AndSplitter(), Topic()).plan_sync("   ")

    asyncio.run(cell())


# -- wrong input types ------------------------------------------------------------------------


def foreign(module: str, name: str = "Document") -> Any:
    """An instance of a class that lives in ``module`` (another framework's document class,
    as far as its full name goes: the frameworks need not be installed)."""
    cls = type(name, (), {"__module__": module, "page_content": "text"})
    return cls()


FOREIGN = [
    ("langchain_core.documents.base", "ragloom_interop.langchain.from_langchain()"),
    ("llama_index.core.schema", "ragloom_interop.llama_index.from_llama_index()"),
    ("haystack.dataclasses.document", "ragloom_interop.haystack.from_haystack()"),
]


@pytest.mark.parametrize(("module", "adapter"), FOREIGN)
def test_a_foreign_document_is_named_in_full_with_its_adapter(module: str, adapter: str) -> None:
    full = f"{module}.Document"
    doc = foreign(module)
    calls = [
        lambda: Sentences().chunk(doc),
        lambda: Sentences().chunk([Document.from_text("fine"), doc]),
        lambda: ChunkerRouter().default(Sentences()).chunk([doc]),
        lambda: Pipeline(Sentences()).run_sync([doc]),
    ]
    for call in calls:
        with pytest.raises(TypeError) as info:
            call()
        message = str(info.value)
        assert full in message and adapter in message, message
        assert "pip install" in message or "ragloom-interop" in message


def test_other_wrong_inputs_say_what_to_do() -> None:
    with pytest.raises(TypeError, match=r"expected a str, got int"):
        Sentences().split_text(42)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"got bytes"):
        Sentences().chunk(b"bytes")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"got dict; build one with ragloom\.Document\(\*\*data\)"):
        Sentences().chunk([{"id": "a", "content": "x"}])  # type: ignore[list-item]
    with pytest.raises(TypeError, match=r"Document\.from_text\(text\).*chunker\.chunk\(text\)"):
        Pipeline(Sentences()).run_sync(["plain text"])
    with pytest.raises(TypeError, match="expected a query string, got int"):
        MultiQueryRoutingPipeline(AndSplitter(), Topic()).plan_sync(7)  # type: ignore[arg-type]


# -- a decomposer answering a bare string ------------------------------------------------------


class Bare(QueryTransformer):
    """Answers a string where a list of strings is due."""

    step_id = "tests/bare"

    async def transform(self, query: str) -> list[str]:
        return query  # type: ignore[return-value]


class BareSync(QueryTransformer):
    step_id = "tests/bare-sync"

    def transform_sync(self, query: str) -> list[str]:
        return query  # type: ignore[return-value]


@pytest.mark.parametrize("decomposer", [Bare, BareSync])
def test_a_decomposer_returning_a_bare_string_is_refused_not_split_into_letters(
    decomposer: type[QueryTransformer],
) -> None:
    block = MultiQueryRoutingPipeline(decomposer(), SyncTopic())
    with pytest.raises(ComponentTypeError, match=r"transform returned str, expected list\[str\]"):
        block.plan_sync("caching")
    with pytest.raises(ComponentTypeError, match=r"returned str"):
        anyio.run(block.plan, "caching")
    # In a pipeline the question fails with that reason; nothing is routed letter by letter.
    result = block.build().run_sync(["caching", "plugins"])
    assert list(result) == []
    assert [f.item for f in result.failed] == ["caching", "plugins"]
    assert all("returned str, expected list[str]" in f.reason for f in result.failed)
