"""``ragloom eval`` through the real entry point, over a LanceDB index of the sample documents
and the labelled questions shipped in examples/questions.jsonl."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from cli_support import EXAMPLES
from support.sample_index import build_sample_index

pytestmark = pytest.mark.usefixtures("needs_rules")

pytest.importorskip("ragloom_lancedb")
pytest.importorskip("ragloom_semantic")
pytest.importorskip("ragloom_text")

QUESTIONS = EXAMPLES / "questions.jsonl"


@pytest.fixture(scope="module")
def index(tmp_path_factory) -> Path:
    return build_sample_index(tmp_path_factory.mktemp("cli-eval") / "index")


def run_json(cli, *args) -> dict:
    proc = cli("eval", *args, "--json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_table_per_kind_and_misses(cli, index) -> None:
    proc = cli("eval", QUESTIONS, "--index", index)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    header = next(line for line in out.splitlines() if line.startswith("SET-UP"))
    for column in ("R@1", "R@3", "R@5", "R@10", "HIT@10", "MRR", "NDCG@10", "P50 MS"):
        assert column in header
    assert "by kind:" in out
    for kind in ("compound", "simple", "one-ask"):
        assert f" {kind} " in out
    assert "Traceback" not in proc.stderr


def test_json_report_matches_its_schema_and_the_questions(cli, index) -> None:
    from ragloom.evaluation import EvaluationReport

    data = run_json(cli, QUESTIONS, "--index", index)
    report = EvaluationReport.model_validate(data)  # the documented schema
    assert data["schema_version"] == 1 and data["ks"] == [1, 3, 5, 10]
    (setup,) = report.setups
    lines = [json.loads(line) for line in QUESTIONS.read_text().splitlines() if line.strip()]
    assert [q.id for q in setup.questions] == [line["id"] for line in lines]
    assert setup.overall.questions == len(lines)
    assert setup.overall.facets == sum(
        len({e["facet"] for e in line["expected"]}) for line in lines
    )
    assert setup.settings["top_k"] == 10  # the largest k unless -k says otherwise
    for outcome in setup.questions:
        assert outcome.sub_queries and len(outcome.routes) == len(outcome.sub_queries)
        assert len(outcome.returned) <= 10
        for facet in outcome.facets:
            if facet.rank is not None:
                # the passage at that rank is from an expected document
                assert outcome.returned[facet.rank - 1] == facet.document_id
                assert any(e.startswith(facet.document_id) for e in facet.expected)
    recall = [a.recall for a in setup.overall.at]
    assert recall == sorted(recall)  # recall never falls as k grows
    assert setup.latency.p50_ms > 0 and setup.latency.p95_ms >= setup.latency.p50_ms


def test_the_same_numbers_at_any_concurrency(cli, index) -> None:
    one = run_json(cli, QUESTIONS, "--index", index, "--concurrency", "1")
    four = run_json(cli, QUESTIONS, "--index", index, "--concurrency", "4")
    ranks = [[[f["rank"] for f in q["facets"]] for q in r["setups"][0]["questions"]]
             for r in (one, four)]
    assert ranks[0] == ranks[1]


def test_compare_setups_side_by_side_with_differences(cli, index) -> None:
    data = run_json(
        cli, QUESTIONS, "--index", index, "--compare", "whole=decomposer=none",
        "--compare", "text=mode=text,top_k=3",
    )
    names = [s["name"] for s in data["setups"]]
    assert names == ["default", "whole", "text"]
    whole, text = data["setups"][1], data["setups"][2]
    assert all(q["sub_queries"] == [q["question"]] for q in whole["questions"])
    assert all(len(q["returned"]) <= 3 for q in text["questions"])
    for difference in data["differences"]:
        ranks = difference["ranks"]
        assert set(ranks) == set(names)
        assert any(r is None for r in ranks.values()) and any(
            r is not None for r in ranks.values()
        )
    proc = cli("eval", QUESTIONS, "--index", index, "--compare", "whole=decomposer=none",
               "--compare", "text=mode=text,top_k=3")
    assert proc.returncode == 0, proc.stderr
    for difference in data["differences"]:
        assert f"{difference['question_id']} facet {difference['facet']}: found by" in proc.stdout


def test_a_set_up_spreads_its_passages_over_documents(cli, index) -> None:
    data = run_json(
        cli, QUESTIONS, "--index", index, "--compare", "spread=per_document=1,search_depth=2",
    )
    default, spread = data["setups"]
    assert spread["name"] == "spread"

    def repeats(setup: dict) -> int:  # passages of a page already shown above them
        return sum(
            len(q["returned"]) - len(set(q["returned"]))
            for q in setup["questions"]
        )

    def first_repeat(question: dict) -> int:
        documents = question["returned"]  # the document of each passage, in order
        later = [i for i, d in enumerate(documents) if d in documents[:i]]
        return later[0] if later else len(documents)

    # the sample documents are few: every answer repeats some page, but with the spread set-up
    # only once every page found has shown a passage
    assert repeats(default) > 0 and repeats(spread) > 0
    for question in spread["questions"]:
        documents = question["returned"]
        assert len(set(documents[: first_repeat(question)])) == first_repeat(question)
        assert set(documents[first_repeat(question):]) <= set(documents[: first_repeat(question)])
    assert sum(first_repeat(q) for q in spread["questions"]) > sum(
        first_repeat(q) for q in default["questions"]
    )


def test_several_indexes(cli, index, tmp_path) -> None:
    copy = tmp_path / "other" / "index"
    shutil.copytree(index, copy)
    data = run_json(cli, QUESTIONS, "--index", index, "--index", copy)
    assert len(data["setups"]) == 2
    first, second = data["setups"]
    assert first["name"] != second["name"] and first["name"].startswith("default@")
    assert first["overall"] == second["overall"]  # the same index, copied


def test_unknown_document_is_a_warning_with_a_suggestion(cli, index, tmp_path) -> None:
    questions = tmp_path / "q.jsonl"
    questions.write_text(
        json.dumps({"id": "a", "question": "How do I clear the cache?",
                    "expected": [{"facet": 1, "document": "caching.md"},
                                 {"facet": 2, "document": "nowhere/at-all.txt"}]}) + "\n"
        + json.dumps({"id": "b", "question": "How do I clear the cache?",
                      "expected": ["guides/caching.md"]}) + "\n",
        encoding="utf-8",
    )
    proc = cli("eval", questions, "--index", index, "--json")
    assert proc.returncode == 0, proc.stderr
    assert "'caching.md' is not in the index (did you mean 'guides/caching.md'?)" in proc.stderr
    assert "'nowhere/at-all.txt' is not in the index; facet 2 is not judged" in proc.stderr
    data = json.loads(proc.stdout)
    first = data["setups"][0]["questions"][0]
    assert first["unjudged"] == ["1", "2"] and first["facets"] == []
    # a question with nothing to judge is left out of the scores, not counted as a miss
    assert data["setups"][0]["overall"]["questions"] == 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--at", "0,5"], "each k must be >= 1"),
        (["--at", "x"], "a comma-separated list of integers"),
        (["--compare", "nameonly"], "expected NAME=CONFIG"),
        (["--compare", "a=mood=text"], "unknown search setting 'mood' (did you mean 'mode'?)"),
        (["--compare", "a=top_k=0"], "top_k"),
        (["--compare", "a=missing.toml"], "neither a pipeline file nor key=value"),
    ],
)
def test_bad_options_exit_2_with_one_line(cli, index, args, message) -> None:
    proc = cli("eval", QUESTIONS, "--index", index, *args)
    assert proc.returncode == 2
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr


def test_bad_question_file_and_missing_index(cli, index, tmp_path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question": "x", "expected": [{"document": "a", "contans": "b"}]}\n')
    proc = cli("eval", bad, "--index", index)
    assert proc.returncode == 2
    assert f"{bad}:1: unknown key 'contans' (did you mean 'contains'?)" in proc.stderr
    proc = cli("eval", QUESTIONS, "--index", tmp_path / "absent")
    assert proc.returncode == 2 and "no index at" in proc.stderr


def test_html_page_written_and_never_over_foreign_files(cli, index, tmp_path) -> None:
    page = tmp_path / "report.html"
    proc = cli("eval", QUESTIONS, "--index", index, "--compare", "text=mode=text",
               "--html", page)
    assert proc.returncode == 0, proc.stderr
    html = page.read_text(encoding="utf-8")
    assert html.startswith("<!doctype html>") and "<svg" in html
    assert "http://" not in html and "https://" not in html  # opens with no network
    assert "Facet recall at k" in html and "s01" in html
    # the next run may replace its own page
    assert cli("eval", QUESTIONS, "--index", index, "--html", page).returncode == 0
    foreign = tmp_path / "notes.html"
    foreign.write_text("<p>mine</p>")
    proc = cli("eval", QUESTIONS, "--index", index, "--html", foreign)
    assert proc.returncode == 2 and "is not a page `ragloom eval` wrote" in proc.stderr
    assert foreign.read_text() == "<p>mine</p>"
    proc = cli("eval", QUESTIONS, "--index", index, "--html", QUESTIONS)
    assert proc.returncode == 2


def _chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.skipif(_chromium() is None, reason="Chromium is not installed (Debian: chromium)")
def test_html_page_renders_in_headless_chromium(cli, index, tmp_path) -> None:
    page = tmp_path / "report.html"
    proc = cli("eval", QUESTIONS, "--index", index, "--compare", "whole=decomposer=none",
               "--html", page)
    assert proc.returncode == 0, proc.stderr
    shot = tmp_path / "report.png"
    flags = [
        "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1200,1600",
    ]
    done = subprocess.run(
        [_chromium(), *flags, f"--screenshot={shot}", page.as_uri()],
        capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stderr
    png = shot.read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 20_000  # a page was drawn
    dom = subprocess.run(
        [_chromium(), *flags, "--dump-dom", page.as_uri()],
        capture_output=True, text=True, timeout=120,
    )
    assert dom.returncode == 0, dom.stderr
    assert "<polyline" in dom.stdout and "whole" in dom.stdout
