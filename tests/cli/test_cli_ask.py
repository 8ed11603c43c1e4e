"""``ragloom ask`` through the real entry point and ``ragloom.ask()``, over a LanceDB index of
the sample documents; ``ragloom eval --answerer`` over the labelled sample questions."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from cli_support import EXAMPLES, SAMPLE_DOCS
from support.sample_index import build_sample_index

# one pytest-xdist worker runs the whole module: the index is built once
pytestmark = [pytest.mark.usefixtures("needs_rules"), pytest.mark.xdist_group("cli-ask")]

pytest.importorskip("ragloom_lancedb")
pytest.importorskip("ragloom_semantic")
pytest.importorskip("ragloom_text")
pytest.importorskip("ragloom_loaders")

QUESTION = "How do I clear the cache and how do I write a plugin?"
ASKS = ["How do I clear the cache?", "How do I write a plugin?"]
ROUTES = EXAMPLES / "routes.yaml"

#: The documented keys of ``ragloom ask --json`` (docs/answers.md).
ANSWER_KEYS = {
    "question", "text", "claims", "not_found", "answerer", "warnings", "retrieval", "citations",
    "found",
}
CLAIM_KEYS = {"text", "ask", "citations"}
CITATION_KEYS = {"passage", "chunk_id", "document_id", "start", "end", "quote"}
RESULT_KEYS = {"query", "sub_queries", "routing_plan", "passages", "failures"}


@pytest.fixture(scope="module")
def index(tmp_path_factory) -> Path:
    return build_sample_index(tmp_path_factory.mktemp("cli-ask") / "index")


def document_text(document_id: str) -> str:
    """The text a document of the index was cut from (an HTML file's, as its loader reads it)."""
    path = SAMPLE_DOCS / document_id
    if path.suffix != ".html":
        return path.read_text(encoding="utf-8")
    from ragloom.loading import SourceFile
    from ragloom.plugins import Registry

    loader = Registry().create("loader", "html")
    (document,) = loader.load(SourceFile(document_id, path.read_bytes(), document_id))
    return str(document.content)


def test_json_answer_citations_with_exact_spans_and_the_search_under_it(cli, index) -> None:
    proc = cli("ask", QUESTION, "--routes", ROUTES, "--index", index, "--json")
    assert proc.returncode == 0, proc.stderr
    answer = json.loads(proc.stdout)
    assert set(answer) == ANSWER_KEYS
    assert answer["question"] == QUESTION and answer["answerer"] == "extractive"
    assert answer["found"] is True and answer["not_found"] == []
    retrieval = answer["retrieval"]
    assert set(retrieval) == RESULT_KEYS and retrieval["sub_queries"] == ASKS
    assert [claim["ask"] for claim in answer["claims"]][0] == ASKS[0]
    assert {claim["ask"] for claim in answer["claims"]} == set(ASKS)
    cited = []
    for claim in answer["claims"]:
        assert set(claim) == CLAIM_KEYS
        for citation in claim["citations"]:
            assert set(citation) == CITATION_KEYS
            passage = retrieval["passages"][citation["passage"] - 1]
            assert citation["chunk_id"] == passage["chunk_id"]
            assert citation["document_id"] == passage["document_id"]
            text = document_text(citation["document_id"])
            assert text[citation["start"] : citation["end"]] == citation["quote"]
            assert passage["start"] <= citation["start"] < citation["end"] <= passage["end"]
            cited.append(citation)
    assert cited == answer["citations"]  # every claim cites once here
    # the cache ask quotes the command that clears it
    assert any("ragloom cache clear" in c["quote"] for c in answer["claims"][0]["citations"])


def test_text_output_is_the_python_answer(cli, index) -> None:
    import ragloom

    proc = cli("ask", QUESTION, "--routes", ROUTES, "--index", index)
    assert proc.returncode == 0, proc.stderr
    answer = ragloom.ask(QUESTION, index=str(index), routes=str(ROUTES))
    lines = proc.stdout.splitlines()
    assert lines[0] == f"Q: {QUESTION}"
    assert "\n".join(lines[1:]).startswith(answer.text + "\n\nSources:\n")
    for citation in answer.citations:
        assert f"] {citation.document_id} " in proc.stdout
        assert f"[{citation.start}:{citation.end}]" in proc.stdout
    assert answer.text.splitlines()[0] == ASKS[0]


def test_not_found_is_an_answer(index) -> None:
    import ragloom

    answer = ragloom.ask("zebra giraffe okapi?", index=str(index), mode="text")
    assert answer.found is False and answer.citations == []
    assert answer.text == "Not found in the documents."
    with pytest.raises(ragloom.InvalidInputError):
        ragloom.ask("  ", index=str(index))


def test_usage_errors_exit_2(cli, index) -> None:
    cases = {
        ("ask", "   ", "--index", index): "blank",
        ("ask", "q", "--index", index, "--answerer", "oracle"): "unknown answerer 'oracle'",
        ("ask", "q", "--index", index, "--answerer-option", "speed=3"): "no parameter 'speed'",
        ("ask", "q", "--config", ROUTES, "-k", "3"): "--top-k",
    }
    for args, message in cases.items():
        proc = cli(*args)
        assert proc.returncode == 2, (args, proc.stderr)
        assert message in proc.stderr, (args, proc.stderr)
        assert "Traceback" not in proc.stderr


class _Rogue:
    """Cites the passages it was given, with one quote that is not the passage's text."""

    def __new__(cls):
        from ragloom.answering import Answer, Answerer, Claim, cite

        class Rogue(Answerer):
            def answer_sync(self, question, retrieval):
                if not retrieval.passages:
                    return Answer(question=question, text="Not found in the documents.")
                good = cite(retrieval, 1)
                bad = good.model_copy(update={"quote": good.quote + " (and more)"})
                claim = Claim(text="x", citations=[good, bad])
                return Answer(question=question, text="x [1]", claims=[claim])

        return Rogue()


def test_eval_reports_citation_recall_and_precision(index) -> None:
    from ragloom import EvaluationReport, evaluate

    done = evaluate(EXAMPLES / "questions.jsonl", str(index), answerer="extractive")
    data = json.loads(done.to_json())  # what `ragloom eval --json` prints
    report = EvaluationReport.model_validate(data)
    assert data["schema_version"] == 1
    (setup,) = report.setups
    assert setup.answerer == "ragloom/extractive-answerer"
    # every citation of the extractive answerer points to a passage returned: 1 by construction
    assert setup.overall.citation_precision == 1.0
    facets = [f for q in setup.questions for f in q.facets]
    cited = sum(1 for f in facets if f.cited)
    assert 0 < cited <= len(facets)
    assert setup.overall.citation_recall == pytest.approx(cited / len(facets))
    for question in setup.questions:
        assert question.answer is not None and question.answer.error is None
        assert question.answer.valid_citations == question.answer.citations
        for facet in question.facets:
            assert not facet.cited or facet.rank is not None  # cited only if retrieved
    # a citation whose quote is not its passage's text counts against precision
    rogue = evaluate(EXAMPLES / "questions.jsonl", str(index), ks=[5], answerer=_Rogue())
    assert rogue.setups[0].overall.citation_precision == pytest.approx(0.5)
    from ragloom.evaluation import render_html

    page = render_html(report)
    # the first table's first row: its cite-P cell (routing's cells may follow it)
    table = page[page.index("<table>"):page.index("</table>")]
    heads = re.findall(r"<th>(.*?)</th>", table)
    cells = re.findall(r"<td>(.*?)</td>", table[table.index("<tbody>"):])
    assert heads[heads.index("cite-R") + 1] == "cite-P"
    assert cells[heads.index("cite-P")] == "1.000"


def test_eval_table_shows_citations(cli, index) -> None:
    proc = cli(
        "eval", EXAMPLES / "questions.jsonl", "--index", index, "--at", "5",
        "--answerer", "extractive", "--answerer-option", "sentences_per_ask=1",
        "--details", "all",
    )
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    header = next(line for line in out.splitlines() if line.startswith("SET-UP"))
    columns = header.split()
    assert columns[columns.index("CITE-R") + 1] == "CITE-P"
    facets = [line for line in out.splitlines() if line.lstrip().startswith("facet ")]
    judged = [line for line in facets if "not judged" not in line]
    assert judged and all(line.endswith(("  cited", "  not cited")) for line in judged)
    assert any(line.endswith("  cited") and "not cited" not in line for line in judged)
