"""``ragloom plan`` and ``ragloom run`` on query pipelines, through the real entry point."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_support import EXAMPLES, PIPELINES

pytestmark = pytest.mark.usefixtures("needs_rules")

COMPARISON = "Compare renewable energy adoption in Germany vs France since 2020"
#: The customer-support sample router: an example, chosen by name (never the default).
SAMPLE = ("--router", "ragloom-rules:sample")


def test_plan_json_one_object_per_question_in_order(cli) -> None:
    proc = cli(
        "plan", COMPARISON, "What is the return policy?", "hello there", "--json", *SAMPLE
    )
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [o["query"] for o in lines] == [COMPARISON, "What is the return policy?", "hello there"]
    comparison, policy, hello = lines
    assert comparison["sub_queries"] == [
        "Renewable energy adoption in Germany since 2020",
        "Renewable energy adoption in France since 2020",
        COMPARISON,
    ]
    assert [r["sub_query"] for r in comparison["routing_plan"]] == comparison["sub_queries"]
    assert policy["routing_plan"][0]["route"] == "policies"
    assert policy["routing_plan"][0]["fallback_reason"] is None
    assert 0 < policy["routing_plan"][0]["score"] <= 1
    (fallback,) = hello["routing_plan"]
    assert fallback["route"] == "general"
    assert fallback["fallback_reason"] == "no keyword matched"


def test_plan_table_shows_routes_scores_and_fallbacks(cli) -> None:
    proc = cli("plan", "How do I get a refund?", "hello there", *SAMPLE)
    assert proc.returncode == 0
    out = proc.stdout
    assert "Q1: How do I get a refund?" in out and "Q2: hello there" in out
    header = next(line for line in out.splitlines() if "SUB-QUERY" in line)
    assert header.split() == ["#", "SUB-QUERY", "ROUTE", "SCORE", "NOTE"]
    refund = next(line for line in out.splitlines() if line.strip().startswith("1  How do I"))
    assert "billing" in refund
    assert "fallback: no keyword matched" in out


def test_without_an_index_nothing_is_routed_and_the_plan_says_so(cli) -> None:
    proc = cli("plan", "How do I get a refund and what is the return policy?", "--json")
    assert proc.returncode == 0, proc.stderr
    (plan,) = [json.loads(line) for line in proc.stdout.splitlines()]
    assert len(plan["routing_plan"]) == 2
    for route in plan["routing_plan"]:
        assert route["route"] == "(whole index)"
        assert route["note"].startswith("no index: no routing")
        assert route["retrieval"] is None and route["collections"] is None
    table = cli("plan", "How do I get a refund?")
    assert "no index: no routing" in table.stdout
    assert "billing" not in table.stdout and "general" not in table.stdout


def test_plan_reads_questions_from_stdin_and_files(cli, workdir: Path) -> None:
    stdin = cli("plan", "-", "--json", input="what is the return policy?\n\n  \nmy wifi is slow\n")
    assert stdin.returncode == 0
    queries = [json.loads(line)["query"] for line in stdin.stdout.splitlines()]
    assert queries == ["what is the return policy?", "my wifi is slow"]
    questions = workdir / "questions.txt"
    questions.write_text("first question about billing\nsecond one about wifi\n", "utf-8")
    from_file = cli("plan", "--file", questions, "--json")
    assert [json.loads(line)["query"] for line in from_file.stdout.splitlines()] == [
        "first question about billing", "second one about wifi",
    ]


def test_plan_with_a_routes_file(cli) -> None:
    proc = cli("plan", "--routes", EXAMPLES / "routes.yaml", "--json",
               "How do I install ragloom and clear the cache?")
    assert proc.returncode == 0, proc.stderr
    (plan,) = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [(r["sub_query"], r["route"]) for r in plan["routing_plan"]] == [
        ("How do I install ragloom?", "installation"),
        ("How do I clear the cache?", "caching"),
    ]


def test_plan_with_config_and_run_on_query_pipeline(cli) -> None:
    question = "The recursive chunker vs the markdown chunker"
    by_plan = cli("plan", "--config", PIPELINES / "plan-rules.toml", question, "--json")
    by_run = cli("run", PIPELINES / "plan-rules.toml", question, "--json")
    assert by_plan.returncode == by_run.returncode == 0
    assert by_plan.stdout == by_run.stdout
    (plan,) = [json.loads(line) for line in by_run.stdout.splitlines()]
    assert len(plan["sub_queries"]) == 3
    assert {r["route"] for r in plan["routing_plan"]} == {"chunking"}


def test_failed_question_is_reported_in_order_and_exit_1(cli, workdir: Path) -> None:
    # A keyword router without a default route cannot route a question that matches nothing.
    strict = workdir / "strict.yaml"
    strict.write_text(
        "query:\n"
        "  decomposer: heuristic\n"
        "  router:\n"
        "    name: keyword\n"
        "    params:\n"
        "      routes:\n"
        "        - {name: billing, keywords: [refund, invoice]}\n",
        encoding="utf-8",
    )
    proc = cli("plan", "--config", strict, "--json", "I want a refund", "hello", "an invoice")
    assert proc.returncode == 1
    first, second, third = (json.loads(line) for line in proc.stdout.splitlines())
    assert first["routing_plan"][0]["route"] == "billing"
    assert second["query"] == "hello" and "RoutingError" in second["error"]
    assert third["routing_plan"][0]["route"] == "billing"
    table = cli("plan", "--config", strict, "hello")
    assert table.returncode == 1 and "error (Route): RoutingError" in table.stdout


def test_plan_usage_and_configuration_errors_exit_2(cli, workdir: Path) -> None:
    assert cli("plan").returncode == 2
    ingest = cli("plan", "--config", PIPELINES / "ingest.toml", "q")
    assert ingest.returncode == 2 and "ingestion pipeline" in ingest.stderr
    routes = workdir / "routes.json"
    routes.write_text('{"routes": [{"name": "a", "keywords": ["x"]}], "extra": 1}', "utf-8")
    bad = cli("plan", "--routes", routes, "q")
    assert bad.returncode == 2 and "routes.json: unknown key 'extra'" in bad.stderr
    assert "Traceback" not in bad.stderr
    both = cli("plan", "--routes", routes, "--config", PIPELINES / "plan-rules.toml", "q")
    assert both.returncode == 2
    run_out = cli("run", PIPELINES / "plan-rules.toml", "q", "--out", "x.jsonl")
    assert run_out.returncode == 2 and "--out" in run_out.stderr


def test_a_blank_question_is_a_usage_error_not_an_empty_plan(cli) -> None:
    blank = cli("plan", "   ", "--json")
    assert blank.returncode == 2 and "every QUESTION is blank" in blank.stderr
    assert blank.stdout == ""
    only_blank_lines = cli("plan", "-", input="\n   \n\t\n")
    assert only_blank_lines.returncode == 2 and "only blank lines" in only_blank_lines.stderr


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "default_route: general\nroutes:\n  - name: installation\n    keyword: [pip]\n"
            "  - name: general\n",
            "routes.yaml: route 'installation' (routes[0]) is invalid: unknown key 'keyword' "
            "(did you mean 'keywords'?",
        ),
        (
            "default_route: general\nroute:\n  - name: general\n",
            "routes.yaml: unknown key 'route' (did you mean 'routes'?)",
        ),
        ("routes:\n  - installation\n", "routes.yaml: routes[0] is a str, not a mapping"),
        ("routes: {name: a}\n", "routes.yaml: 'routes' is a dict"),
        (
            "routes:\n  - name: a\n    keywords: [x]\n    weight: -1\n",
            "routes.yaml: route 'a' (routes[0]) is invalid: weight",
        ),
        (
            "default_route: general\nroutes:\n  - name: a\n    keywords: [x]\n",
            "routes.yaml: default_route 'general' is not one of the routes",
        ),
    ],
)
def test_route_file_errors_name_the_file_and_key(
    cli, workdir: Path, text: str, message: str
) -> None:
    (workdir / "routes.yaml").write_text(text, encoding="utf-8")
    for command in ("plan", "search"):
        proc = cli(command, "--routes", "routes.yaml", "how do I install it")
        assert proc.returncode == 2, proc.stderr
        assert f"ragloom: error: {message}" in proc.stderr, proc.stderr
        assert "query.router" not in proc.stderr and "Traceback" not in proc.stderr


def test_dspy_example_pipeline_is_a_valid_spec() -> None:
    from ragloom.config import load_spec

    spec = load_spec(PIPELINES / "plan-dspy.toml")
    assert spec.query is not None
    assert spec.query.decomposer.name == spec.query.router.name == "dspy"
    assert spec.query.router.params["default_route"] == "general"
    names = [r["name"] for r in spec.query.router.params["routes"]]
    assert "general" in names and len(names) == len(set(names))
