"""The conformance kit catches real violations, and passes good components (issue 9)."""

from __future__ import annotations

import pytest

HEADER = """
import pytest
from ragloom import Chunker, ChunkSpan, Router, RouteDecision
from ragloom.testing import ChunkerContract, RouterContract


class Good(Chunker):
    step_id = "kit/good"
    def __init__(self, chunk_size: int = 64, **kw):
        super().__init__(**kw)
        self.chunk_size = chunk_size
    def config(self):
        return {"chunk_size": self.chunk_size}
    def split(self, doc):
        n = len(doc.content)
        for i in range(0, n, self.chunk_size):
            yield ChunkSpan(i, min(n, i + self.chunk_size))


class LosesWhitespace(Good):
    step_id = "kit/loses-whitespace"
    def split(self, doc):
        for span in super().split(doc):
            text = doc.content[span.start:span.end]
            if text.strip():
                yield text.strip()


class OffByOne(Good):
    step_id = "kit/off-by-one"
    def split(self, doc):
        for span in super().split(doc):
            yield ChunkSpan(span.start, max(span.start, span.end - 1))


class Fixed(Router):
    step_id = "kit/fixed"
    def __init__(self, answer: str = "a"):
        self.answer = answer
    def config(self):
        return {"answer": self.answer}
    @property
    def valid_routes(self):
        return ("a", "b")
    @property
    def default_route(self):
        return "b"
    async def route(self, query):
        return RouteDecision(route=self.answer, score=0.5)
"""


def run_kit(pytester: pytest.Pytester, body: str) -> pytest.RunResult:
    pytester.makepyfile(test_subject=HEADER + body)
    return pytester.runpytest_subprocess("-q", "-p", "no:cacheprovider")


def test_good_components_pass(pytester: pytest.Pytester) -> None:
    result = run_kit(
        pytester,
        """
class TestGood(ChunkerContract):
    @pytest.fixture
    def chunker(self):
        return Good(chunk_size=50)

class TestRouter(RouterContract):
    @pytest.fixture
    def router(self):
        return Fixed("a")
""",
    )
    result.assert_outcomes(passed=17, skipped=1)


def test_chunker_that_loses_whitespace_fails_span_contract(pytester: pytest.Pytester) -> None:
    result = run_kit(
        pytester,
        """
class TestBad(ChunkerContract):
    @pytest.fixture
    def chunker(self):
        return LosesWhitespace(chunk_size=50)
""",
    )
    result.stdout.fnmatch_lines(["*test_exact_spans_lineage_and_sizes*", "*gap between offsets*"])
    outcomes = result.parseoutcomes()
    assert outcomes.get("failed", 0) >= 1


def test_off_by_one_spans_fail(pytester: pytest.Pytester) -> None:
    result = run_kit(
        pytester,
        """
class TestBad(ChunkerContract):
    @pytest.fixture
    def chunker(self):
        return OffByOne(chunk_size=50)
""",
    )
    result.stdout.fnmatch_lines(["*FAILED*test_exact_spans_lineage_and_sizes*"])


def test_router_answering_an_unknown_route_is_caught(pytester: pytest.Pytester) -> None:
    result = run_kit(
        pytester,
        """
class TestBad(RouterContract):
    @pytest.fixture
    def router(self):
        return Fixed("nowhere")
""",
    )
    # decide() turns the unknown answer into a labelled fallback; the kit checks the raw
    # route() answers as well and fails on them.
    result.stdout.fnmatch_lines(["*FAILED*test_route_answers_are_valid*"])
