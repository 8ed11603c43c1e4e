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


class DropsDelimiter(Good):
    # Cuts at every DELIMITER and leaves it out of the chunks: a gap in the tiling, invisible
    # on documents that never contain the delimiter.
    step_id = "kit/drops-delimiter"
    DELIMITER = ";"
    def split(self, doc):
        text, start = doc.content, 0
        for end in [i for i, c in enumerate(text) if c == self.DELIMITER] + [len(text)]:
            for i in range(start, end, self.chunk_size):
                yield ChunkSpan(i, min(end, i + self.chunk_size))
            start = end + 1


class DropsSection(DropsDelimiter):
    step_id = "kit/drops-section"
    DELIMITER = "\u00a7"


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
    result.assert_outcomes(passed=18, skipped=1)


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


def test_a_chunker_dropping_its_delimiter_passes_the_fixed_documents_only(
    pytester: pytest.Pytester,
) -> None:
    body = """
class TestDrops(ChunkerContract):
    @pytest.fixture
    def chunker(self):
        return DropsDelimiter(chunk_size=50)
"""
    # The kit's fixed sample documents hold no ';': on them alone the bug goes unseen.
    fixed_only = run_kit_args(pytester, body, "-k", "not generated")
    fixed_only.assert_outcomes(passed=9, skipped=1)
    # Generated documents hold every delimiter of the alphabet: the gap is found and named.
    result = run_kit(pytester, body)
    result.assert_outcomes(passed=9, skipped=1, failed=1)
    result.stdout.fnmatch_lines(["*gap between offsets * and * (';')*"])
    result.stdout.fnmatch_lines(["*FAILED*test_generated_documents_are_cut_exactly*"])


def test_the_alphabet_hook_reaches_delimiters_beyond_the_default(
    pytester: pytest.Pytester,
) -> None:
    # "\u00a7" (the section sign) is not in the default alphabet: only an author who names it
    # gets it generated.
    result = run_kit(
        pytester,
        """
from ragloom.testing import DEFAULT_ALPHABET

class TestDefault(ChunkerContract):
    @pytest.fixture
    def chunker(self):
        return DropsSection(chunk_size=50)

class TestWithSection(TestDefault):
    alphabet = DEFAULT_ALPHABET + "\u00a7"
""",
    )
    result.assert_outcomes(passed=19, skipped=2, failed=1)
    result.stdout.fnmatch_lines(["*FAILED*TestWithSection::test_generated_documents_are_cut*"])


def test_the_documents_attribute_is_honoured(pytester: pytest.Pytester) -> None:
    result = run_kit(
        pytester,
        """
from ragloom import Document

class TestStrings(ChunkerContract):
    generated_examples = 5
    documents = ["one;two", "no delimiter here"]
    @pytest.fixture
    def chunker(self):
        return DropsDelimiter(chunk_size=50)

class TestFactory(TestStrings):
    @staticmethod
    def documents(chunker):
        assert isinstance(chunker, DropsDelimiter)
        return [Document(id="given", content="a;b", metadata={"k": 1})]

class TestGoodOnGiven(TestStrings):
    @pytest.fixture
    def chunker(self):
        return Good(chunk_size=3)
""",
    )
    # Every check on the fixed documents now sees the delimiter: the broken chunker fails the
    # span check with the given documents, the good one passes everything on them.
    result.stdout.fnmatch_lines(["*FAILED*TestStrings::test_exact_spans_lineage_and_sizes*"])
    result.stdout.fnmatch_lines(["*FAILED*TestFactory::test_exact_spans_lineage_and_sizes*"])
    outcomes = result.parseoutcomes()
    assert "TestGoodOnGiven" not in "".join(
        line for line in result.stdout.lines if line.startswith("FAILED")
    )
    assert outcomes["passed"] >= 11


def test_a_document_strategy_for_a_format_of_ones_own(pytester: pytest.Pytester) -> None:
    result = run_kit(
        pytester,
        """
from hypothesis import strategies as st
from ragloom import Document

class CsvRows(Good):
    step_id = "kit/csv-rows"
    accepted_content_formats = frozenset({"x-csv"})
    def split(self, doc):
        start = 0
        for i, c in enumerate(doc.content):
            if c == "\\n":
                yield ChunkSpan(start, i)  # drops the newline: a gap
                start = i + 1
        if start < len(doc.content):
            yield ChunkSpan(start, len(doc.content))

class TestCsv(ChunkerContract):
    documents = ["a,b"]
    @pytest.fixture
    def chunker(self):
        return CsvRows(chunk_size=100_000)
    @pytest.fixture
    def document_strategy(self):
        rows = st.lists(st.lists(st.text("xyz", min_size=1), min_size=1), min_size=2)
        return rows.map(lambda rs: Document(
            id="csv", content="".join(",".join(r) + "\\n" for r in rs),
            content_format="x-csv",
        ))
""",
    )
    result.stdout.fnmatch_lines(["*gap between offsets*"])
    result.stdout.fnmatch_lines(["*FAILED*test_generated_documents_are_cut_exactly*"])
    result.assert_outcomes(passed=10, failed=1)


def run_kit_args(pytester: pytest.Pytester, body: str, *args: str) -> pytest.RunResult:
    pytester.makepyfile(test_subject=HEADER + body)
    return pytester.runpytest_subprocess("-q", "-p", "no:cacheprovider", *args)


def test_without_hypothesis_the_generated_check_says_how_to_install_it(
    pytester: pytest.Pytester,
) -> None:
    # As if hypothesis were not installed (its own pytest plugin left out too).
    pytester.makeconftest("import sys\nsys.modules['hypothesis'] = None\n")
    result = run_kit_args(
        pytester,
        """
class TestGood(ChunkerContract):
    @pytest.fixture
    def chunker(self):
        return Good(chunk_size=50)
""",
        "-p", "no:hypothesispytest",
    )
    result.assert_outcomes(passed=9, skipped=1, errors=1)
    result.stdout.fnmatch_lines(["*generates documents with hypothesis*pip install hypothesis*"])
