"""Files of a new plugin package (``ragloom new-plugin NAME --kind KIND ...``).

One working component per kind asked for, each with its entry point (the group comes from the
table of kinds, :mod:`ragloom.kinds`) and its tests: the conformance kit's contract for the
kind when the kit has one, plus tests of its own behaviour, registration included.

Placeholders in the texts below: ``__DIST__`` (distribution name), ``__PACKAGE__`` (import
package), ``__PREFIX__`` (the prefix of registered names), ``__CORE__`` (the requirement on
ragloom), ``__RAGLOOM_FROM_URL__`` (the pip command installing ragloom from its repository's URL,
for the README: the README ships in the wheel's metadata, so it names no path of the machine
the project was made on).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["DEFAULT_KINDS", "TEMPLATES", "KindTemplate", "render"]


@dataclass(frozen=True)
class KindTemplate:
    """What ``new-plugin`` writes for one kind."""

    #: Module of the component in the package (``chunker`` -> ``src/pkg/chunker.py``).
    module: str
    #: The component's class.
    cls: str
    #: The registered name after the prefix (``paragraphs`` -> ``acme-paragraphs``).
    entry: str
    #: One line for the README.
    summary: str
    source: str
    tests: str


# -- chunker ------------------------------------------------------------------------------------

CHUNKER = '''"""A paragraph chunker: exact spans that tile the document."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from ragloom import Chunker, ChunkSpan, Document

_PARAGRAPH_END = re.compile(r"\\n\\s*\\n")


class ParagraphChunker(Chunker):
    """Packs paragraphs into chunks of at most ``chunk_size`` characters; a longer paragraph
    is cut at the limit. The spans tile the document: no character is lost."""

    step_id = "__DIST__/paragraphs"

    def __init__(self, chunk_size: int = 1000, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size < 1:
            raise ValueError(f"chunk_size must be an integer >= 1, got {chunk_size!r}")
        self.chunk_size = chunk_size

    def config(self) -> Mapping[str, Any]:
        return {"chunk_size": self.chunk_size}

    def split(self, document: Document) -> Iterator[ChunkSpan]:
        text = document.content
        ends = [m.end() for m in _PARAGRAPH_END.finditer(text)] + [len(text)]
        start = end = 0
        for bound in ends:
            if bound - start <= self.chunk_size:
                end = bound
                continue
            if end > start:
                yield ChunkSpan(start, end)
                start = end
            while bound - start > self.chunk_size:
                yield ChunkSpan(start, start + self.chunk_size)
                start += self.chunk_size
            end = bound
        if end > start:
            yield ChunkSpan(start, end)
'''

CHUNKER_TESTS = '''"""ParagraphChunker: ragloom's chunker contract, and its own behaviour."""

from __future__ import annotations

from typing import Any

import pytest
from ragloom import Document, Pipeline
from ragloom.plugins import Registry
from ragloom.testing import ChunkerContract

from __PACKAGE__.chunker import ParagraphChunker


class TestParagraphChunkerContract(ChunkerContract):
    # The kit also checks the chunks of documents generated from an alphabet of letters, digits,
    # punctuation and whitespace. If your chunker splits on a character outside it, add it:
    #     from ragloom.testing import DEFAULT_ALPHABET
    #     alphabet = DEFAULT_ALPHABET + "\\u00a7"
    @pytest.fixture
    def chunker(self) -> ParagraphChunker:
        return ParagraphChunker(chunk_size=200)

    @pytest.fixture
    def identity_variants(self) -> list[dict[str, Any]]:
        return [{"chunk_size": 100}]


def test_paragraphs_are_packed_and_long_ones_cut() -> None:
    text = "one\\n\\ntwo\\n\\n" + "x" * 30
    chunks = ParagraphChunker(chunk_size=12).split_text(text)
    assert chunks == ["one\\n\\ntwo\\n\\n", "x" * 12, "x" * 12, "x" * 6]
    assert "".join(chunks) == text


def test_in_a_pipeline() -> None:
    docs = [Document(id="a", content="a\\n\\nb"), Document(id="b", content="c" * 13)]
    result = Pipeline(ParagraphChunker(chunk_size=12)).run_sync(docs)
    assert [(c.id, c.content) for c in result] == [
        ("a#0", "a\\n\\nb"), ("b#0", "c" * 12), ("b#1", "c"),
    ]


def test_bad_settings_are_refused() -> None:
    with pytest.raises(ValueError, match="chunk_size"):
        ParagraphChunker(chunk_size=0)


def test_registered_under_its_name() -> None:
    registry = Registry()
    assert registry.resolve("chunker", "__DIST__:__PREFIX__-paragraphs") is ParagraphChunker
    built = registry.create("chunker", "__DIST__:__PREFIX__-paragraphs", {"chunk_size": 50})
    assert built.chunk_size == 50
'''

# -- router -------------------------------------------------------------------------------------

ROUTER = '''"""A word router: the route whose words a query contains most."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from ragloom import RouteDecision, Router

_WORD = re.compile(r"\\w+")

#: Routes when none are given: a route with no words is a catch-all.
EXAMPLE_ROUTES = {"docs": ["install", "configure", "guide"], "general": []}


class WordRouter(Router):
    """Routes to the route with the most words in the query; ties go to the first declared.

    As with ragloom-rules' keyword router, ``default_route`` must be one of the routes (or
    ``None``: no fallback, and a query that matches nothing is a routing error), and only the
    default route may have no words (a catch-all).
    """

    step_id = "__DIST__/words"

    def __init__(
        self,
        routes: Mapping[str, Sequence[str]] | None = None,
        default_route: str | None = "general",
    ) -> None:
        given = EXAMPLE_ROUTES if routes is None else routes
        if not given:
            raise ValueError("routes must name at least one route")
        self.routes = {name: [w.lower() for w in words] for name, words in given.items()}
        if default_route is not None and default_route not in self.routes:
            raise ValueError(
                f"default_route {default_route!r} is not one of the routes "
                f"({', '.join(self.routes)})"
            )
        for name, words in self.routes.items():
            if not words and name != default_route:
                raise ValueError(
                    f"route {name!r} has no words: only the default route may be a catch-all"
                )
        self._default = default_route

    def config(self) -> Mapping[str, Any]:
        return {"routes": self.routes, "default_route": self._default}

    @property
    def valid_routes(self) -> tuple[str, ...]:
        return tuple(self.routes)

    @property
    def default_route(self) -> str | None:
        return self._default

    def route_sync(self, query: str) -> RouteDecision:
        words = set(_WORD.findall(query.lower()))
        scores = {name: len(words.intersection(ws)) for name, ws in self.routes.items()}
        best = max(scores, key=lambda name: scores[name])
        if scores[best] == 0:
            return self.fallback("no route word matched", score=0.0)
        total = sum(scores.values())
        return RouteDecision(route=best, score=scores[best] / total)
'''

ROUTER_TESTS = '''"""WordRouter: ragloom's router contract, and its own behaviour."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest
from ragloom import MultiQueryRoutingPipeline, QueryTransformer
from ragloom.plugins import Registry
from ragloom.testing import RouterContract

from __PACKAGE__.router import WordRouter

ROUTES = {"docs": ["install", "guide"], "billing": ["invoice", "price"], "general": []}


class TestWordRouterContract(RouterContract):
    queries: ClassVar[list[str]] = [
        *RouterContract.queries, "How do I install it?", "Where is my invoice?",
    ]

    @pytest.fixture
    def router(self) -> WordRouter:
        return WordRouter(ROUTES)

    @pytest.fixture
    def identity_variants(self) -> list[dict[str, Any]]:
        return [{"routes": {**ROUTES, "docs": ["install", "guide", "setup"]}}]


def test_routes_by_words_and_falls_back_with_a_reason() -> None:
    router = WordRouter(ROUTES)
    assert router.decide_sync("install guide please").route == "docs"
    fallback = router.decide_sync("hello there")
    assert (fallback.route, fallback.fallback_reason) == ("general", "no route word matched")


def test_the_default_route_must_be_one_of_the_routes() -> None:
    with pytest.raises(ValueError, match="not one of the routes"):
        WordRouter({"docs": ["install"]}, default_route="general")
    with pytest.raises(ValueError, match="only the default route may be a catch-all"):
        WordRouter({"docs": [], "general": []})


def test_plans_questions() -> None:
    class Halves(QueryTransformer):
        def transform_sync(self, query: str) -> list[str]:
            return query.split(" and ")

    plan = MultiQueryRoutingPipeline(Halves(), WordRouter(ROUTES)).plan_sync(
        "install the guide and pay the invoice"
    )
    assert [r.route for r in plan.routing_plan] == ["docs", "billing"]


def test_registered_under_its_name() -> None:
    assert Registry().resolve("router", "__DIST__:__PREFIX__-words") is WordRouter
'''

# -- decomposer ---------------------------------------------------------------------------------

DECOMPOSER = '''"""A clause splitter: one sub-query per clause of a compound question."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ragloom import QueryTransformer

_QUESTION_WORDS = "how|what|why|when|where|who|which|can|could|do|does|is|are|should"
_CLAUSE = re.compile(
    rf"\\s*;\\s*|(?<=\\?)\\s+(?=\\S)|\\s+and\\s+(?=(?:{_QUESTION_WORDS})\\b)", re.IGNORECASE
)


class ClauseSplitter(QueryTransformer):
    """Splits a question at ``;``, after a ``?`` followed by more text, and at ``and`` followed
    by a question word (``"How do I install it and how do I test it?"``): at most
    ``max_parts`` sub-queries, in order."""

    step_id = "__DIST__/clauses"

    def __init__(self, max_parts: int = 5) -> None:
        if isinstance(max_parts, bool) or not isinstance(max_parts, int) or max_parts < 1:
            raise ValueError(f"max_parts must be an integer >= 1, got {max_parts!r}")
        self.max_parts = max_parts

    def config(self) -> Mapping[str, Any]:
        return {"max_parts": self.max_parts}

    def transform_sync(self, query: str) -> list[str]:
        parts = [part.strip() for part in _CLAUSE.split(query)]
        return [part for part in parts if part][: self.max_parts]
'''

DECOMPOSER_TESTS = '''"""ClauseSplitter: ragloom's decomposer contract, and its own behaviour."""

from __future__ import annotations

from typing import Any

import pytest
from ragloom.plugins import Registry
from ragloom.testing import QueryTransformerContract

from __PACKAGE__.decomposer import ClauseSplitter


class TestClauseSplitterContract(QueryTransformerContract):
    @pytest.fixture
    def decomposer(self) -> ClauseSplitter:
        return ClauseSplitter()

    @pytest.fixture
    def identity_variants(self) -> list[dict[str, Any]]:
        return [{"max_parts": 1}]


@pytest.mark.parametrize(
    ("question", "parts"),
    [
        ("How do I install it and how do I test it?", ["How do I install it", "how do I test it?"]),
        ("What is it? Why use it?", ["What is it?", "Why use it?"]),
        ("pricing; refunds ;", ["pricing", "refunds"]),
        ("salt and pepper", ["salt and pepper"]),
        ("   ", []),
    ],
)
def test_clauses(question: str, parts: list[str]) -> None:
    assert ClauseSplitter().transform_sync(question) == parts


def test_at_most_max_parts() -> None:
    assert ClauseSplitter(max_parts=2).transform_sync("a; b; c") == ["a", "b"]
    with pytest.raises(ValueError, match="max_parts"):
        ClauseSplitter(max_parts=0)


def test_registered_under_its_name() -> None:
    assert Registry().resolve("decomposer", "__DIST__:__PREFIX__-clauses") is ClauseSplitter
'''

# -- filter -------------------------------------------------------------------------------------

FILTER = '''"""A tag filter: routes items by the tags in their metadata."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ragloom import Filter


class TagFilter(Filter[Any]):
    """Matches items whose ``metadata[key]`` (one tag or a list of tags) holds one of
    ``tags``, compared case-insensitively. It reads metadata only, never content."""

    requires_content = False

    def __init__(self, tags: str | Sequence[str], key: str = "tags") -> None:
        wanted = [tags] if isinstance(tags, str) else list(tags)
        if not wanted or not all(isinstance(t, str) and t.strip() for t in wanted):
            raise ValueError(f"tags must be one or more non-empty strings, got {tags!r}")
        if not isinstance(key, str) or not key:
            raise ValueError(f"key must be a non-empty string, got {key!r}")
        self.tags = frozenset(t.strip().lower() for t in wanted)
        self.key = key

    def matches(self, item: Any) -> bool:
        value = (getattr(item, "metadata", None) or {}).get(self.key)
        if isinstance(value, str):
            found = [value]
        elif isinstance(value, list | tuple | set | frozenset):
            found = [v for v in value if isinstance(v, str)]
        else:
            return False
        return any(v.strip().lower() in self.tags for v in found)

    def config(self) -> Mapping[str, Any]:
        return {"tags": sorted(self.tags), "key": self.key}
'''

FILTER_TESTS = '''"""TagFilter: matching, composing, routing and registration."""

from __future__ import annotations

import pytest
from ragloom import Document, FunctionStep, Pipeline, RoutedStep
from ragloom.plugins import Registry

from __PACKAGE__.filter import TagFilter


def doc(doc_id: str, **metadata: object) -> Document:
    return Document(id=doc_id, content="some text", metadata=metadata)


def test_matches_a_tag_or_a_list_of_tags() -> None:
    faq = TagFilter(["FAQ", "help"])
    assert faq.matches(doc("a", tags="faq"))
    assert faq.matches(doc("b", tags=["news", "Help "]))
    assert not faq.matches(doc("c", tags=["news"]))
    assert not faq.matches(doc("d"))
    assert not faq.matches(doc("e", tags=3))
    assert TagFilter("x", key="labels").matches(doc("f", labels=["x"]))
    assert faq.requires_content is False


def test_composes_with_and_or_not() -> None:
    published_faq = TagFilter("faq") & ~TagFilter("draft")
    assert published_faq.matches(doc("a", tags=["faq"]))
    assert not published_faq.matches(doc("b", tags=["faq", "draft"]))
    assert (TagFilter("a") | TagFilter("b")).matches(doc("c", tags="b"))


def test_routes_items_in_a_pipeline() -> None:
    step = (
        RoutedStep()
        .route(TagFilter("faq"), FunctionStep(lambda d: f"faq:{d.id}", name="faq"))
        .default(FunctionStep(lambda d: f"other:{d.id}", name="other"))
    )
    result = Pipeline(step).run_sync([doc("a", tags=["FAQ"]), doc("b", tags="news")])
    assert list(result) == ["faq:a", "other:b"]


def test_bad_settings_are_refused() -> None:
    with pytest.raises(ValueError, match="tags"):
        TagFilter([])
    with pytest.raises(ValueError, match="tags"):
        TagFilter(["ok", " "])


def test_registered_and_built_by_name() -> None:
    built = Registry().create("filter", "__DIST__:__PREFIX__-tags", {"tags": ["faq"]})
    assert isinstance(built, TagFilter) and built.matches(doc("a", tags="faq"))
'''

# -- step ---------------------------------------------------------------------------------------

STEP = '''"""A word-count step: adds each document's number of words to its metadata."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ragloom import Document, ExecutionContext, PipelineStep
from ragloom.errors import InvalidInputError

_WORD = re.compile(r"\\w+")


class WordCountStep(PipelineStep[Document]):
    """Adds ``metadata[key]``: the number of words of each document (or chunk). The content
    is unchanged; outputs are cached like any step's."""

    step_id = "__DIST__/word-count"
    input_type = Document

    def __init__(self, key: str = "words", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if not isinstance(key, str) or not key:
            raise ValueError(f"key must be a non-empty string, got {key!r}")
        self.key = key

    def config(self) -> Mapping[str, Any]:
        return {"key": self.key}

    def validate_input(self, item: Document) -> None:
        if not isinstance(item, Document):
            raise InvalidInputError(f"{self.name} takes documents, got {type(item).__name__}")

    def transform(self, item: Document, context: ExecutionContext) -> Document:
        words = len(_WORD.findall(item.content))
        return item.model_copy(update={"metadata": {**item.metadata, self.key: words}})
'''

STEP_TESTS = '''"""WordCountStep: in pipelines, cached, rebuilt from its config, registered."""

from __future__ import annotations

import anyio
import pytest
from ragloom import Document, Pipeline, build_pipeline
from ragloom.cache import MemoryCacheStore
from ragloom.plugins import Registry
from ragloom.testing import run_step

from __PACKAGE__.step import WordCountStep

DOCS = [Document(id="a", content="one two, three"), Document(id="b", content="")]


def test_counts_words_and_keeps_the_rest() -> None:
    result = Pipeline(WordCountStep()).run_sync(DOCS)
    assert [d.metadata["words"] for d in result] == [3, 0]
    assert [d.content for d in result] == [d.content for d in DOCS]
    assert result.failed == []


def test_outputs_are_cached_and_replayed() -> None:
    store = MemoryCacheStore()
    step = WordCountStep(key="n").configure(cache_mode="always")
    cold = anyio.run(lambda: run_step(step, DOCS, cache=store))
    warm = anyio.run(lambda: run_step(step, DOCS, cache=store))
    assert [d.model_dump() for d in warm] == [d.model_dump() for d in cold]
    assert warm.cache_hits == len(DOCS)


def test_rebuilds_from_its_config_with_the_same_identity() -> None:
    step = WordCountStep(key="n")
    assert WordCountStep(**step.config()).config_hash == step.config_hash
    assert WordCountStep(key="m").config_hash != step.config_hash


def test_refuses_what_is_not_a_document() -> None:
    with pytest.raises(TypeError, match="Document"):
        Pipeline(WordCountStep()).run_sync(["plain text"])


def test_registered_and_named_in_a_pipeline_file() -> None:
    assert Registry().resolve("step", "__DIST__:__PREFIX__-word-count") is WordCountStep
    spec = {"steps": [{"step": "__DIST__:__PREFIX__-word-count", "params": {"key": "n"}}]}
    with build_pipeline(spec) as pipeline:
        assert pipeline.run_sync(DOCS[:1])[0].metadata["n"] == 3
'''

# -- cache store --------------------------------------------------------------------------------

CACHE_STORE = '''"""A cache store in one JSON Lines file."""

from __future__ import annotations

import json
import os
import threading
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ragloom import CacheEntry
from ragloom.cache import CacheInfo
from ragloom.errors import CacheCorruptError, CacheError


class JsonlCacheStore:
    """Per-item step outputs kept in one JSON Lines file.

    Each batch of entries is one line appended, flushed and synced: a batch is kept whole or
    not at all (a line cut short by a crash is left out when the file is read, and removed
    before the next write). The file is read once, when the store opens.
    """

    def __init__(self, path: str = ".ragloom/cache.jsonl") -> None:
        self.path = Path(path).expanduser()
        self._entries: dict[str, CacheEntry] = {}
        self._lock = threading.Lock()
        self._good_size = 0
        if self.path.exists():
            self._read()

    def _read(self) -> None:
        try:
            data = self.path.read_bytes()
        except OSError as exc:
            raise CacheError(f"cannot read the cache {self.path}: {exc.strerror}") from None
        good = 0
        for number, line in enumerate(data.splitlines(keepends=True), 1):
            if not line.endswith(b"\\n"):
                break  # a batch cut short: never written
            try:
                batch = json.loads(line)
                entries = [CacheEntry(*fields) for fields in batch["entries"]]
            except (ValueError, KeyError, TypeError) as exc:
                raise CacheCorruptError(
                    f"the cache {self.path} is damaged at line {number} ({exc}); delete it to "
                    "start afresh"
                ) from None
            for entry in entries:
                self._entries[entry.key] = entry
            good += len(line)
        self._good_size = good

    def config(self) -> Mapping[str, Any]:
        return {"path": str(self.path)}

    def get_many(self, keys: Sequence[str]) -> dict[str, CacheEntry]:
        with self._lock:
            return {k: e for k in keys if (e := self._entries.get(k)) is not None}

    def put_many(self, entries: Iterable[CacheEntry]) -> None:
        batch = list(entries)
        if not batch:
            return
        fields = [
            [e.key, e.step, e.item_id, e.payload, e.outputs, e.created] for e in batch
        ]
        line = (json.dumps({"entries": fields}, ensure_ascii=False) + "\\n").encode("utf-8")
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("ab") as handle:
                handle.truncate(self._good_size)  # drop a line cut short by a crash
                handle.write(line)
                handle.flush()
                os.fsync(handle.fileno())
            self._good_size += len(line)
            for entry in batch:
                self._entries[entry.key] = entry

    def info(self) -> CacheInfo:
        with self._lock:
            steps = Counter(e.step for e in self._entries.values())
            size = sum(len(e.payload) for e in self._entries.values())
            return CacheInfo(str(self.path), len(self._entries), size, dict(steps))

    def clear(self, step: str | None = None) -> int:
        with self._lock:
            doomed = [k for k, e in self._entries.items() if step is None or e.step == step]
            for key in doomed:
                del self._entries[key]
            self._rewrite()
            return len(doomed)

    def _rewrite(self) -> None:
        """Write the entries kept to a new file, then put it in place of the old one."""
        if not self.path.exists() and not self._entries:
            return
        temp = self.path.with_name(self.path.name + ".tmp")
        fields = [
            [e.key, e.step, e.item_id, e.payload, e.outputs, e.created]
            for e in self._entries.values()
        ]
        text = json.dumps({"entries": fields}, ensure_ascii=False) + "\\n" if fields else ""
        temp.write_text(text, encoding="utf-8")
        os.replace(temp, self.path)
        self._good_size = len(text.encode("utf-8"))

    def close(self) -> None:
        """Nothing to release: every batch is written when it is put. Idempotent."""

    def __enter__(self) -> JsonlCacheStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
'''

CACHE_STORE_TESTS = '''"""JsonlCacheStore: outputs replayed after reopening, clearing, damage."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pytest
from ragloom import Chunker, Document, Pipeline
from ragloom.errors import CacheCorruptError
from ragloom.plugins import Registry

from __PACKAGE__.cache_store import JsonlCacheStore


class Lines(Chunker):
    step_id = "__DIST__-tests/lines"
    cache_mode = "always"  # cached even where replaying costs more than recomputing

    def split(self, document: Document) -> Iterable[str]:
        return document.content.splitlines(keepends=True)


class Words(Lines):
    step_id = "__DIST__-tests/words"

    def split(self, document: Document) -> Iterable[str]:
        text = document.content
        start = 0
        for i, char in enumerate(text):
            if char == " ":
                yield text[start : i + 1]
                start = i + 1
        if start < len(text):
            yield text[start:]


DOCS = [Document(id="a", content="one two\\nthree\\n"), Document(id="b", content="four five\\n")]


def test_outputs_are_replayed_after_reopening(tmp_path: Path) -> None:
    path = tmp_path / "cache" / "c.jsonl"
    with JsonlCacheStore(str(path)) as store:
        cold = Pipeline(Lines(), cache=store).run_sync(DOCS)
        assert cold.cache_misses == 2 and cold.cache_hits == 0
    with JsonlCacheStore(str(path)) as store:
        warm = Pipeline(Lines(), cache=store).run_sync(DOCS)
        assert warm.cache_hits == 2
        assert [c.model_dump() for c in warm] == [c.model_dump() for c in cold]
        info = store.info()
        assert info.entries == 2 and info.bytes > 0 and list(info.steps.values()) == [2]


def test_clear_one_step_or_everything(tmp_path: Path) -> None:
    path = str(tmp_path / "c.jsonl")
    store = JsonlCacheStore(path)
    Pipeline(Lines(), cache=store).run_sync(DOCS)
    Pipeline(Words(), cache=store).run_sync(DOCS)
    (lines_step, words_step) = sorted(store.info().steps)
    assert store.clear(lines_step) == 2
    assert JsonlCacheStore(path).info().steps == {words_step: 2}
    assert store.clear() == 2 and JsonlCacheStore(path).info().entries == 0


def test_a_batch_cut_short_is_left_out_and_removed(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    Pipeline(Lines(), cache=JsonlCacheStore(str(path))).run_sync(DOCS[:1])
    with path.open("ab") as handle:
        handle.write(b'{"entries": [["half')  # a crash in the middle of a write
    store = JsonlCacheStore(str(path))
    assert store.info().entries == 1
    Pipeline(Lines(), cache=store).run_sync(DOCS)
    assert JsonlCacheStore(str(path)).info().entries == 2


def test_a_damaged_file_is_named(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    path.write_text("not json\\n", encoding="utf-8")
    with pytest.raises(CacheCorruptError, match=r"c\\.jsonl is damaged at line 1"):
        JsonlCacheStore(str(path))


def test_registered_and_built_by_name(tmp_path: Path) -> None:
    built = Registry().create(
        "cache_store", "__DIST__:__PREFIX__-jsonl", {"path": str(tmp_path / "c.jsonl")}
    )
    assert isinstance(built, JsonlCacheStore)
'''

# -- loader -------------------------------------------------------------------------------------

LOADER = '''"""A CSV loader: each CSV or TSV file becomes one Markdown table."""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping, Sequence
from typing import Any

from ragloom import Document, Loader
from ragloom.loaders_builtin import decode_text
from ragloom.loading import LoadError, SourceFile


def _cell(value: str) -> str:
    return value.replace("|", "\\\\|").replace("\\r\\n", "<br>").replace("\\n", "<br>").strip()


class CsvLoader(Loader):
    """Reads ``.csv`` (comma) and ``.tsv`` (tab) files, UTF-8, into one Markdown table per file.

    The first row is the header. Blank rows are skipped, short rows padded. Metadata:
    ``columns`` (the header) and ``rows`` (rows under it). A file that is not valid UTF-8, has
    an unterminated quote, no row, or more than ``max_rows`` rows is refused with a
    ``LoadError`` naming it.
    """

    step_id = "__DIST__/csv"
    suffixes = frozenset({".csv", ".tsv"})
    produces = frozenset({"markdown"})

    def __init__(self, max_rows: int = 100_000) -> None:
        if isinstance(max_rows, bool) or not isinstance(max_rows, int) or max_rows < 1:
            raise ValueError(f"max_rows must be an integer >= 1, got {max_rows!r}")
        self.max_rows = max_rows

    def config(self) -> Mapping[str, Any]:
        return {"max_rows": self.max_rows}

    def load(self, source: SourceFile) -> Sequence[Document]:
        text = decode_text(source)
        delimiter = "\\t" if source.suffix == ".tsv" else ","
        try:
            rows = list(csv.reader(io.StringIO(text, newline=""), delimiter=delimiter,
                                   strict=True))
        except csv.Error as exc:
            raise LoadError(f"{source.path}: not {source.suffix[1:] or 'CSV'}: {exc}") from None
        rows = [row for row in rows if any(cell.strip() for cell in row)]
        if not rows:
            raise LoadError(f"{source.path}: no rows")
        if len(rows) - 1 > self.max_rows:
            raise LoadError(f"{source.path}: {len(rows) - 1} rows, more than {self.max_rows}")
        width = max(len(row) for row in rows)
        table = [[_cell(c) for c in row] + [""] * (width - len(row)) for row in rows]
        lines = ["| " + " | ".join(table[0]) + " |", "|" + " --- |" * width]
        lines += ["| " + " | ".join(row) + " |" for row in table[1:]]
        metadata = {**source.metadata, "columns": table[0], "rows": len(table) - 1}
        return [
            Document(
                id=source.doc_id,
                content="\\n".join(lines) + "\\n",
                content_format="markdown",
                metadata=metadata,
            )
        ]
'''

LOADER_TESTS = '''"""CsvLoader: ragloom's loader contract, and its own behaviour."""

from __future__ import annotations

import pytest
from ragloom.loading import LoadError, SourceFile
from ragloom.plugins import Registry
from ragloom.testing import LoaderContract

from __PACKAGE__.loader import CsvLoader

PEOPLE = b'name,city\\nAda,London\\n"Grace, R.","New\\nYork"\\n\\n'
SCORES = "team\\tscore\\n\\u00c6gir\\t3\\nshort\\n".encode()


class TestCsvLoaderContract(LoaderContract):
    @pytest.fixture
    def loader(self) -> CsvLoader:
        return CsvLoader()

    @pytest.fixture
    def samples(self) -> list[SourceFile]:
        return [
            SourceFile("people.csv", PEOPLE, "people.csv"),
            SourceFile("data/scores.tsv", SCORES, "data/scores.tsv"),
        ]

    @pytest.fixture
    def bad_samples(self) -> list[SourceFile]:
        return [
            SourceFile("latin1.csv", "caf\\u00e9,1\\n".encode("latin-1"), "latin1.csv"),
            SourceFile("quote.csv", b'a,"never closed\\n', "quote.csv"),
            SourceFile("blank.csv", b"\\n , \\n", "blank.csv"),
        ]


def test_a_table_with_its_header() -> None:
    (doc,) = CsvLoader().load(SourceFile("people.csv", PEOPLE, "p", {"size": len(PEOPLE)}))
    assert doc.content == (
        "| name | city |\\n| --- | --- |\\n| Ada | London |\\n| Grace, R. | New<br>York |\\n"
    )
    assert doc.metadata == {"size": len(PEOPLE), "columns": ["name", "city"], "rows": 2}
    (tsv,) = CsvLoader().load(SourceFile("s.tsv", SCORES, "s"))
    assert tsv.content.splitlines()[-1] == "| short |  |"


def test_too_many_rows_are_refused() -> None:
    with pytest.raises(LoadError, match=r"big\\.csv: 3 rows, more than 2"):
        CsvLoader(max_rows=2).load(SourceFile("big.csv", b"h\\n1\\n2\\n3\\n", "big"))


def test_registered_under_its_name() -> None:
    assert Registry().resolve("loader", "__DIST__:__PREFIX__-csv") is CsvLoader
'''

# -- command ------------------------------------------------------------------------------------

COMMAND = '''"""`ragloom __PREFIX__-stats`: this plugin's command (imported when it runs)."""

from __future__ import annotations

import json
from pathlib import Path

import click


@click.command("__PREFIX__-stats")
@click.argument("chunks", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
def chunk_stats(chunks: Path, as_json: bool) -> int:
    """Count the chunks, documents and characters of a chunks file (ragloom ingest -o)."""
    count, characters, documents = 0, 0, set()
    with chunks.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                chunk = json.loads(line)
            except json.JSONDecodeError as exc:
                raise click.BadParameter(
                    f"line {number} is not JSON: {exc.msg}", param_hint="CHUNKS"
                ) from None
            if not isinstance(chunk, dict) or not isinstance(chunk.get("content"), str):
                raise click.BadParameter(
                    f"line {number} is not a chunk (no content)", param_hint="CHUNKS"
                )
            count += 1
            characters += len(chunk["content"])
            documents.add(chunk.get("parent_id") or chunk.get("id"))
    stats = {"chunks": count, "documents": len(documents), "characters": characters}
    if as_json:
        click.echo(json.dumps(stats))
    else:
        click.echo(f"{count} chunks of {len(documents)} documents, {characters} characters")
    return 0
'''

COMMAND_TESTS = '''"""The stats command: the kit's contract, its output and errors, in `ragloom`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from ragloom.cli import main
from ragloom.testing import CommandContract

from __PACKAGE__.command import chunk_stats

CHUNKS = [
    {"id": "a#0", "parent_id": "a", "content": "one two"},
    {"id": "a#1", "parent_id": "a", "content": "three"},
    {"id": "b#0", "parent_id": "b", "content": "four"},
]


@pytest.fixture
def chunks_file(tmp_path: Path) -> Path:
    path = tmp_path / "chunks.jsonl"
    path.write_text("".join(json.dumps(c) + "\\n" for c in CHUNKS), encoding="utf-8")
    return path


class TestStatsContract(CommandContract):
    @pytest.fixture
    def command(self) -> object:
        return chunk_stats

    @pytest.fixture
    def command_name(self) -> str:
        return "__DIST__:__PREFIX__-stats"

    @pytest.fixture
    def command_args(self, chunks_file: Path) -> list[str]:
        return [str(chunks_file)]


def test_counts_chunks_documents_and_characters(chunks_file: Path) -> None:
    result = CliRunner().invoke(chunk_stats, [str(chunks_file), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output) == {"chunks": 3, "documents": 2, "characters": 16}


def test_a_line_that_is_not_a_chunk_is_a_usage_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"content": "ok"}\\n[1, 2]\\n', encoding="utf-8")
    result = CliRunner().invoke(chunk_stats, [str(bad)])
    assert result.exit_code == 2 and "line 2 is not a chunk" in result.output


def test_runs_as_a_ragloom_command(chunks_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["__PREFIX__-stats", str(chunks_file)]) == 0
    assert "3 chunks of 2 documents, 16 characters" in capsys.readouterr().out
'''

# -- embedder -----------------------------------------------------------------------------------

EMBEDDER = '''"""A hashing embedder: vectors from words and character trigrams, no model."""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from ragloom import Embedder

_WORD = re.compile(r"\\w+")


class HashingEmbedder(Embedder):
    """Feature hashing: every word and character trigram of a text adds +1 or -1 to one of
    ``dimension`` slots chosen by a salted BLAKE2 hash; vectors are L2-normalised, so texts
    that share words point the same way. ``salt`` picks another hashing (another "model")."""

    step_id = "__DIST__/hashing"

    def __init__(self, dimension: int = 256, salt: str = "") -> None:
        if isinstance(dimension, bool) or not isinstance(dimension, int) or dimension < 2:
            raise ValueError(f"dimension must be an integer >= 2, got {dimension!r}")
        self._dimension = dimension
        self.salt = salt

    def config(self) -> Mapping[str, Any]:
        return {"dimension": self._dimension, "salt": self.salt}

    @property
    def dimension(self) -> int:
        return self._dimension

    def _features(self, text: str) -> list[str]:
        words = _WORD.findall(text.lower())
        grams = [w[i : i + 3] for w in words for i in range(max(1, len(w) - 2))]
        return [f"w:{w}" for w in words] + [f"g:{g}" for g in grams]

    def _one(self, text: str) -> list[float]:
        row = [0.0] * self._dimension
        for feature in self._features(text):
            data = f"{self.salt}\\0{feature}".encode("utf-8", "surrogatepass")
            digest = hashlib.blake2b(data, digest_size=8).digest()
            slot = int.from_bytes(digest[:4], "little") % self._dimension
            row[slot] += 1.0 if digest[4] & 1 else -1.0
        norm = math.sqrt(sum(v * v for v in row))
        return [v / norm for v in row] if norm else row

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [self._one(text) for text in texts]
'''

EMBEDDER_TESTS = '''"""HashingEmbedder: ragloom's embedder contract, and its own behaviour."""

from __future__ import annotations

import pytest
from ragloom import Document, EmbeddingStep, Pipeline
from ragloom.plugins import Registry
from ragloom.testing import EmbedderContract

from __PACKAGE__.embedder import HashingEmbedder


class TestHashingEmbedderContract(EmbedderContract):
    @pytest.fixture
    def embedder(self) -> HashingEmbedder:
        return HashingEmbedder(dimension=64)

    @pytest.fixture
    def variants(self) -> list[HashingEmbedder]:
        return [HashingEmbedder(dimension=64, salt="another model")]


def cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def test_texts_sharing_words_are_closer() -> None:
    embedder = HashingEmbedder()
    refund, refunds, weather = embedder.embed(
        ["how do I get a refund", "refund rules for annual plans", "sunny weather tomorrow"]
    )
    assert cosine(refund, refunds) > cosine(refund, weather)
    assert embedder.embed([""]) == [[0.0] * 256]


def test_in_an_embedding_step() -> None:
    docs = [Document(id="a", content="some text"), Document(id="b", content="more text")]
    result = Pipeline(EmbeddingStep(HashingEmbedder(dimension=16))).run_sync(docs)
    assert [len(d.embedding or []) for d in result] == [16, 16]


def test_registered_under_its_name() -> None:
    assert Registry().resolve("embedder", "__DIST__:__PREFIX__-hashing") is HashingEmbedder
'''

# -- store --------------------------------------------------------------------------------------

STORE = '''"""A store in one JSON file: exact vector search, word-count text search, hybrid."""

from __future__ import annotations

import json
import math
import os
import re
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from ragloom import Document, Store
from ragloom.stores import (
    IndexedDocument,
    ScoredChunk,
    SearchMode,
    StoreError,
    StoreInfo,
    matches_where,
)

_WORD = re.compile(r"\\w+")


class JsonStore(Store):
    """Every document's chunks (with vectors) in ``<path>/store.json``, rewritten atomically
    after each change. Vector search is exact (cosine over every chunk); text search ranks
    chunks by how many query words they contain; hybrid fuses both by reciprocal rank. Meant
    for small corpora and tests: everything is held in memory."""

    step_id = "__DIST__/json-store"

    def __init__(self, path: str = ".ragloom/json-store") -> None:
        self.path = Path(path).expanduser()
        self.file = self.path / "store.json"
        self._lock = threading.Lock()
        self.data: dict[str, dict[str, Any]] = {}
        if self.file.exists():
            try:
                self.data = json.loads(self.file.read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:
                raise StoreError(f"the store {self.file} cannot be read: {exc}") from None

    def config(self) -> Mapping[str, Any]:
        return {"path": str(self.path)}

    # -- writing ------------------------------------------------------------------------------

    def _save(self) -> None:
        self.path.mkdir(parents=True, exist_ok=True)
        temp = self.file.with_name("store.json.tmp")
        temp.write_text(json.dumps(self.data), encoding="utf-8")
        os.replace(temp, self.file)

    def _dimension(self) -> int | None:
        for doc in self.data.values():
            for chunk in doc["chunks"]:
                if chunk.get("embedding") is not None:
                    return len(chunk["embedding"])
        return None

    def write(self, documents: Sequence[IndexedDocument]) -> None:
        with self._lock:
            dimension = self._dimension()
            for doc in documents:
                for chunk in doc.chunks:
                    if chunk.embedding is None:
                        continue
                    dimension = dimension or len(chunk.embedding)
                    if len(chunk.embedding) != dimension:
                        raise StoreError(
                            f"{self.file}: the store holds vectors of {dimension} values, "
                            f"chunk {chunk.id!r} has {len(chunk.embedding)}"
                        )
            for doc in documents:
                self.data[doc.document_id] = {
                    "fingerprint": doc.fingerprint,
                    "chunks": [c.model_dump(mode="json") for c in doc.chunks],
                }
            self._save()

    def delete(self, document_ids: Iterable[str]) -> int:
        with self._lock:
            gone = [i for i in dict.fromkeys(document_ids) if self.data.pop(i, None) is not None]
            if gone:
                self._save()
            return len(gone)

    # -- reading ------------------------------------------------------------------------------

    def fingerprints(self) -> dict[str, str]:
        with self._lock:
            return {k: v["fingerprint"] for k, v in self.data.items()}

    def info(self) -> StoreInfo:
        with self._lock:
            chunks = sum(len(d["chunks"]) for d in self.data.values())
            return StoreInfo(str(self.path), len(self.data), chunks, self._dimension())

    def _rows(self, where: Mapping[str, Any] | None) -> Iterator[dict[str, Any]]:
        for doc in self.data.values():
            for row in doc["chunks"]:
                if matches_where(row.get("metadata") or {}, where):
                    yield row

    def search(
        self,
        *,
        vector: Sequence[float] | None = None,
        text: str | None = None,
        top_k: int = 10,
        where: Mapping[str, Any] | None = None,
        mode: SearchMode | None = None,
    ) -> list[ScoredChunk]:
        if mode is None:
            mode = "hybrid" if vector is not None and text is not None else (
                "vector" if vector is not None else "text"
            )
        if mode in ("vector", "hybrid") and vector is None:
            raise StoreError(f"{self.file}: a {mode} search needs a query vector")
        if mode in ("text", "hybrid") and text is None:
            raise StoreError(f"{self.file}: a {mode} search needs a query text")
        with self._lock:
            dimension = self._dimension()
            if vector is not None and dimension not in (None, len(vector)):
                raise StoreError(
                    f"{self.file}: the store holds vectors of {dimension} values, the query "
                    f"has {len(vector)}"
                )
            rows = list(self._rows(where))
        rankings = []
        if mode in ("vector", "hybrid"):
            assert vector is not None
            rankings.append(_by_vector(rows, vector))
        if mode in ("text", "hybrid"):
            rankings.append(_by_text(rows, text or ""))
        if len(rankings) == 1:
            ranked = rankings[0]
        else:
            fused: dict[str, tuple[float, dict[str, Any]]] = {}
            for ranking in rankings:
                for rank, (_score, row) in enumerate(ranking, 1):
                    score, _ = fused.get(row["id"], (0.0, row))
                    fused[row["id"]] = (score + 1 / (60 + rank), row)
            ranked = sorted(fused.values(), key=lambda pair: -pair[0])
        return [
            ScoredChunk(Document.model_validate({**row, "embedding": None}), float(score))
            for score, row in ranked[:top_k]
        ]


def _by_vector(
    rows: list[dict[str, Any]], vector: Sequence[float]
) -> list[tuple[float, dict[str, Any]]]:
    norm = math.sqrt(sum(x * x for x in vector)) or 1.0
    scored = []
    for row in rows:
        other = row.get("embedding")
        if other is None:
            continue
        other_norm = math.sqrt(sum(x * x for x in other)) or 1.0
        cosine = sum(x * y for x, y in zip(vector, other, strict=True)) / (norm * other_norm)
        scored.append((cosine, row))
    return sorted(scored, key=lambda pair: -pair[0])


def _by_text(rows: list[dict[str, Any]], text: str) -> list[tuple[float, dict[str, Any]]]:
    words = set(_WORD.findall(text.lower()))
    scored = []
    for row in rows:
        count = sum(word in words for word in _WORD.findall(row["content"].lower()))
        if count:
            scored.append((float(count), row))
    return sorted(scored, key=lambda pair: -pair[0])
'''

STORE_TESTS = '''"""JsonStore: ragloom's store contract, and its own behaviour."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from ragloom import Document
from ragloom.plugins import Registry
from ragloom.stores import IndexedDocument, StoreError
from ragloom.testing import StoreContract

from __PACKAGE__.store import JsonStore


class TestJsonStoreContract(StoreContract):
    @pytest.fixture
    def store_factory(self) -> Callable[[Path], JsonStore]:
        return lambda directory: JsonStore(str(directory / "index"))


def test_a_damaged_file_is_named(tmp_path: Path) -> None:
    (tmp_path / "store.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(StoreError, match=r"store\\.json cannot be read"):
        JsonStore(str(tmp_path))


def test_written_chunks_are_found_by_words(tmp_path: Path) -> None:
    chunk = Document(id="d#0", content="refunds take ten days", parent_id="d", index=0,
                     start=0, end=21, embedding=[1.0, 0.0])
    with JsonStore(str(tmp_path)) as store:
        store.write([IndexedDocument("d", "fp", [chunk])])
        (hit,) = store.search(text="how long do refunds take")
        assert hit.chunk.id == "d#0" and hit.chunk.embedding is None


def test_registered_under_its_name() -> None:
    assert Registry().resolve("store", "__DIST__:__PREFIX__-json") is JsonStore
'''

# -- retriever ----------------------------------------------------------------------------------

RETRIEVER = '''"""A retriever over a chunks file (``ragloom ingest --out``): BM25 over words."""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ragloom import Document, Retriever
from ragloom.errors import ConfigurationError, InvalidInputError
from ragloom.stores import ScoredChunk, matches_where

_WORD = re.compile(r"\\w+")


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


class ChunksFileRetriever(Retriever):
    """Finds passages in a chunks file (``ragloom ingest DOCS --out chunks.jsonl``), ranked by
    BM25 (``k1``, ``b``) over words: no index and no model. The file is read once."""

    step_id = "__DIST__/chunks-file"

    def __init__(self, path: str, top_k: int = 5, k1: float = 1.2, b: float = 0.75) -> None:
        if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1:
            raise ValueError(f"top_k must be an integer >= 1, got {top_k!r}")
        if k1 < 0 or not 0 <= b <= 1:
            raise ValueError(f"k1 must be >= 0 and b within [0, 1], got k1={k1!r}, b={b!r}")
        self.path = path
        self.top_k = top_k
        self.k1 = float(k1)
        self.b = float(b)
        self._chunks = self._read(Path(path).expanduser())
        self._terms = [Counter(_words(c.content)) for c in self._chunks]
        self._lengths = [sum(t.values()) for t in self._terms]
        self._average = sum(self._lengths) / len(self._lengths) if self._lengths else 0.0
        frequency: Counter[str] = Counter()
        for terms in self._terms:
            frequency.update(terms.keys())
        total = len(self._chunks)
        self._idf = {w: math.log(1 + (total - n + 0.5) / (n + 0.5)) for w, n in frequency.items()}

    @staticmethod
    def _read(path: Path) -> list[Document]:
        chunks = []
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigurationError(f"cannot read the chunks file {path}: {exc}") from None
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                chunks.append(
                    Document(
                        id=record["id"], content=record["content"],
                        content_format=record.get("content_format") or "text",
                        metadata=record.get("metadata") or {}, parent_id=record.get("parent"),
                        index=record.get("index"), start=record.get("start"),
                        end=record.get("end"),
                    )
                )
            except (ValueError, KeyError, TypeError) as exc:
                raise ConfigurationError(
                    f"{path}, line {number}: not a chunk record ({exc})"
                ) from None
        return chunks

    def config(self) -> Mapping[str, Any]:
        return {"path": self.path, "top_k": self.top_k, "k1": self.k1, "b": self.b}

    def retrieve(
        self, query: str, *, top_k: int | None = None, where: Mapping[str, Any] | None = None
    ) -> list[ScoredChunk]:
        if top_k is not None and (isinstance(top_k, bool) or top_k < 1):
            raise InvalidInputError(f"top_k must be >= 1, got {top_k!r}")
        wanted = set(_words(query))
        scored = []
        for n, (chunk, terms) in enumerate(zip(self._chunks, self._terms, strict=True)):
            if not matches_where(chunk.metadata, where):
                continue
            score = 0.0
            norm = self.k1 * (1 - self.b + self.b * self._lengths[n] / (self._average or 1))
            for word in wanted & terms.keys():
                tf = terms[word]
                score += self._idf[word] * tf * (self.k1 + 1) / (tf + norm)
            if score > 0:
                scored.append((-score, n, chunk))
        scored.sort(key=lambda t: t[:2])
        return [ScoredChunk(chunk, -s) for s, _n, chunk in scored[: top_k or self.top_k]]
'''

RETRIEVER_TESTS = '''"""ChunksFileRetriever: ragloom's retriever contract, and its own behaviour."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from ragloom import Document
from ragloom.errors import ConfigurationError
from ragloom.plugins import Registry
from ragloom.testing import RetrieverContract

from __PACKAGE__.retriever import ChunksFileRetriever


def write_chunks(path: Path, corpus: list[Document]) -> Path:
    """``corpus`` cut into paragraphs, written as ``ragloom ingest --out`` writes chunks."""
    with path.open("w", encoding="utf-8") as out:
        for doc in corpus:
            start = 0
            for index, part in enumerate(re.split(r"(?<=\\n\\n)", doc.content)):
                record = {
                    "id": f"{doc.id}#{index}", "parent": doc.id, "start": start,
                    "end": start + len(part), "index": index, "content": part,
                    "content_format": "text", "metadata": doc.metadata,
                }
                out.write(json.dumps(record) + "\\n")
                start += len(part)
    return path


class TestChunksFileRetrieverContract(RetrieverContract):
    @pytest.fixture
    def retriever(self, corpus: list[Document], tmp_path: Path) -> ChunksFileRetriever:
        return ChunksFileRetriever(str(write_chunks(tmp_path / "chunks.jsonl", corpus)))


def test_ranks_the_passage_with_the_rarer_words_first(tmp_path: Path) -> None:
    docs = [
        Document(id="a", content="the cache keeps the results of every step"),
        Document(id="b", content="the router picks a route for the query"),
    ]
    retriever = ChunksFileRetriever(str(write_chunks(tmp_path / "c.jsonl", docs)))
    (best, *_rest) = retriever.retrieve("which route does the router pick")
    assert best.chunk.parent_id == "b" and best.chunk.content == docs[1].content


def test_a_bad_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="cannot read the chunks file"):
        ChunksFileRetriever(str(tmp_path / "missing.jsonl"))
    (tmp_path / "bad.jsonl").write_text('{"id": "x"}\\n', encoding="utf-8")
    with pytest.raises(ConfigurationError, match=r"bad\\.jsonl, line 1: not a chunk record"):
        ChunksFileRetriever(str(tmp_path / "bad.jsonl"))


def test_registered_under_its_name() -> None:
    name = "__DIST__:__PREFIX__-chunks-file"
    assert Registry().resolve("retriever", name) is ChunksFileRetriever
'''


TEMPLATES: dict[str, KindTemplate] = {
    "chunker": KindTemplate(
        "chunker", "ParagraphChunker", "paragraphs",
        "packs paragraphs into chunks with exact spans", CHUNKER, CHUNKER_TESTS,
    ),
    "router": KindTemplate(
        "router", "WordRouter", "words",
        "routes a query to the route whose words it contains", ROUTER, ROUTER_TESTS,
    ),
    "decomposer": KindTemplate(
        "decomposer", "ClauseSplitter", "clauses",
        "splits a compound question into one sub-query per clause", DECOMPOSER,
        DECOMPOSER_TESTS,
    ),
    "filter": KindTemplate(
        "filter", "TagFilter", "tags", "matches items by the tags in their metadata", FILTER,
        FILTER_TESTS,
    ),
    "step": KindTemplate(
        "step", "WordCountStep", "word-count", "adds each document's word count to its metadata",
        STEP, STEP_TESTS,
    ),
    "cache_store": KindTemplate(
        "cache_store", "JsonlCacheStore", "jsonl", "keeps step outputs in one JSON Lines file",
        CACHE_STORE, CACHE_STORE_TESTS,
    ),
    "loader": KindTemplate(
        "loader", "CsvLoader", "csv", "reads CSV and TSV files into Markdown tables", LOADER,
        LOADER_TESTS,
    ),
    "embedder": KindTemplate(
        "embedder", "HashingEmbedder", "hashing",
        "embeds texts by feature hashing (no model to download)", EMBEDDER, EMBEDDER_TESTS,
    ),
    "store": KindTemplate(
        "store", "JsonStore", "json", "keeps chunks and vectors in one JSON file", STORE,
        STORE_TESTS,
    ),
    "retriever": KindTemplate(
        "retriever", "ChunksFileRetriever", "chunks-file",
        "finds passages in a chunks file by BM25", RETRIEVER, RETRIEVER_TESTS,
    ),
    "command": KindTemplate(
        "command", "chunk_stats", "stats",
        "a `ragloom` subcommand: counts the chunks of a chunks file", COMMAND, COMMAND_TESTS,
    ),
}

#: What ``new-plugin`` writes when no ``--kind`` is given.
DEFAULT_KINDS = ("chunker", "router")


PYPROJECT = """[build-system]
requires = ["hatchling>=1.24"]
build-backend = "hatchling.build"

[project]
name = "__DIST__"
version = "0.1.0"
description = "A ragloom plugin"
readme = "README.md"
requires-python = ">=3.11"
dependencies = ["__CORE__"]

[project.optional-dependencies]
# what ragloom's conformance kit (ragloom.testing) needs
test = ["pytest>=8", "hypothesis>=6.100"]
__ENTRY_POINTS__
[tool.hatch.build.targets.wheel]
packages = ["src/__PACKAGE__"]
"""

README = """# __DIST__

A ragloom plugin made with `ragloom new-plugin`.

__COMPONENTS__

## Install and test

ragloom is not published on a package index: install it, with its command line, from the
root of a checkout of its repository (`python -m pip install "./core[cli]"`) or from the
repository's URL, then this plugin with its test extra:

```bash
python3 -m venv .venv && . .venv/bin/activate
python -m __RAGLOOM_FROM_URL__
python -m pip install -e ".[test]"
pytest                     # ragloom's conformance kit and the plugin's own tests
ragloom plugins            # lists __DIST__ and what it provides
```

To install elsewhere without the checkout or the network, build ragloom's wheel once in the
checkout, `python -m pip wheel --no-deps ./core -w dist`, and install
`"dist/ragloom-<version>-py3-none-any.whl[cli]"`.
"""

INIT = '''"""__DIST__: a ragloom plugin."""

from __future__ import annotations

__all__ = [
__NAMES__
]

#: Component -> module: imported only when used, so that `import __PACKAGE__` stays light
#: (ragloom imports a component's module when a pipeline that names it is built).
_MODULES = {
__MODULES__
}


def __getattr__(name: str) -> object:
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(name)
    from importlib import import_module

    return getattr(import_module(f"{__name__}.{module}"), name)
'''


def _entry_points(kinds: Sequence[str], prefix: str, package: str) -> str:
    from ..kinds import KINDS

    out = []
    for name in kinds:
        template = TEMPLATES[name]
        group = KINDS[name].group
        out.append(
            f'\n[project.entry-points."{group}"]\n'
            f'{prefix}-{template.entry} = "{package}.{template.module}:{template.cls}"\n'
        )
    return "".join(out)


def _cls(kind: str) -> str:
    return TEMPLATES[kind].cls


def render(
    kinds: Sequence[str], *, dist: str, package: str, prefix: str, core: str
) -> dict[str, str]:
    """The files of a plugin with one component of each of ``kinds``: path -> text."""
    from .._install import install_command
    from ..kinds import KINDS

    def fill(text: str) -> str:
        return (
            text.replace("__DIST__", dist)
            .replace("__PACKAGE__", package)
            .replace("__PREFIX__", prefix)
            .replace("__CORE__", core)
            .replace("__RAGLOOM_FROM_URL__", install_command("ragloom", "cli", checkout=False))
        )

    components = "\n".join(
        f"- {KINDS[k].name.replace('_', ' ')} `{prefix}-{TEMPLATES[k].entry}` "
        f"(`{TEMPLATES[k].cls}`): {TEMPLATES[k].summary}"
        for k in kinds
    )
    names = "".join(f'    "{TEMPLATES[k].cls}",\n' for k in sorted(kinds, key=_cls)).rstrip()
    modules = "".join(
        f'    "{TEMPLATES[k].cls}": "{TEMPLATES[k].module}",\n' for k in sorted(kinds, key=_cls)
    ).rstrip()
    # a command is a click command: the plugin needs ragloom's command line (its cli extra)
    requirement = core.replace("ragloom", "ragloom[cli]", 1) if "command" in kinds else core
    files = {
        "pyproject.toml": fill(
            PYPROJECT.replace("__ENTRY_POINTS__", _entry_points(kinds, prefix, package))
            .replace("__CORE__", requirement)
        ),
        "README.md": fill(README.replace("__COMPONENTS__", components)),
        f"src/{package}/__init__.py": fill(
            INIT.replace("__NAMES__", names).replace("__MODULES__", modules)
        ),
        f"src/{package}/py.typed": "",
    }
    for kind in kinds:
        template = TEMPLATES[kind]
        files[f"src/{package}/{template.module}.py"] = fill(template.source)
        files[f"tests/test_{template.module}.py"] = fill(template.tests)
    return files
