"""A third-party plugin that takes a name ragloom's own plugins use cannot break the CLI's
defaults (they name their components fully), ``ragloom plugins --check`` reports the clash
before any pipeline trips on it, and ``ragloom plan --decomposer/--router`` picks installed
components without a pipeline file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .conftest import check, make_plugin

pytestmark = pytest.mark.usefixtures("needs_rules")

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

ROUTER = '''
from ragloom import RouteDecision, Router


class WordRouter(Router):
    """Routes questions about installing to "docs", everything else to "general"."""

    step_id = "rb-words/keyword"

    @property
    def valid_routes(self):
        return ("docs", "general")

    @property
    def default_route(self):
        return "general"

    def route_sync(self, query):
        if "install" in query.lower():
            return RouteDecision(route="docs", score=0.75)
        return self.fallback("rb-words: no word of its own")
'''

HOOKED = '''
from ragloom.plugins.hookspecs import hookimpl


@hookimpl
def ragloom_register(register):
    from rb_words import WordRouter

    register("router", "keyword", WordRouter)
    register("router", "hooked-words", WordRouter)


@hookimpl
def ragloom_event(event):
    pass
'''


@pytest.fixture
def needs_rules() -> None:
    pytest.importorskip("ragloom_rules")


@pytest.fixture
def site(tmp_path: Path) -> Path:
    """Two third-party distributions: ``rb-words`` declares a router entry point named
    ``keyword``; ``rb-hooked`` registers ``keyword`` (and ``hooked-words``) from a hook."""
    root = tmp_path / "site"
    root.mkdir()
    make_plugin(root, "rb-words", ROUTER, {"ragloom.routers": {"keyword": "rb_words:WordRouter"}})
    make_plugin(root, "rb-hooked", HOOKED, {"ragloom.plugins": {"rb-hooked": "rb_hooked"}})
    return root


def test_plugins_check_reports_the_clash_and_what_hooks_register(rb, site: Path) -> None:
    listed = rb("plugins", "--check", "--json", pythonpath=[site])
    check(listed, 1)  # a clash is a problem found, not "loaded, all fine"
    report = json.loads(listed.stdout)
    (clash,) = [c for c in report["clashes"] if c["name"] == "keyword"]
    assert clash["kind"] == "router"
    assert sorted(p["distribution"] for p in clash["providers"]) == [
        "ragloom-rules", "rb-hooked", "rb-words",
    ]
    assert "'ragloom-rules:keyword'" in clash["message"]
    plugins = {p["distribution"]: p for p in report["plugins"]}
    hooked = plugins["rb-hooked"]
    assert hooked["status"] == "loaded"
    assert hooked["registered_by_hooks"] == {"router": ["keyword", "hooked-words"]}
    assert hooked["hooks_implemented"] == ["ragloom_event", "ragloom_register"]
    assert [c for c in hooked["clashes"] if "'keyword'" in c]
    assert plugins["rb-words"]["clashes"] and plugins["ragloom-rules"]["clashes"]
    assert plugins["ragloom-text"]["clashes"] == []
    # The table says the same in words.
    table = rb("plugins", "--check", pythonpath=[site])
    check(table, 1)
    row = next(line for line in table.stdout.splitlines() if line.startswith("rb-hooked "))
    assert "routers: hooked-words (by hook), keyword (by hook)" in row
    assert "hooks: rb_hooked (ragloom_event, ragloom_register)" in row
    assert "name clash: router name 'keyword' is provided by both" in table.stdout
    # Without the third-party plugins there is nothing to report.
    check(rb("plugins", "--check", "--json"), 0)


def test_the_cli_defaults_survive_a_plugin_taking_their_short_names(rb, site: Path) -> None:
    routed = rb("plan", "--routes", EXAMPLES / "routes.yaml", "--json",
                "How do I install ragloom and clear the cache?", pythonpath=[site])
    check(routed, 0)
    (plan,) = [json.loads(line) for line in routed.stdout.splitlines()]
    assert [r["route"] for r in plan["routing_plan"]] == ["installation", "caching"]
    check(rb("plan", "What is the refund policy?", pythonpath=[site]), 0)
    # A pipeline file that names the short name meets the clash, with both providers named.
    spec = rb("plan", "--router", "keyword", "q", pythonpath=[site])
    err = check(spec, 2, "router name 'keyword' is provided by both")
    assert "rb-words" in err and "ragloom-rules" in err


def test_plan_picks_installed_components_by_name(rb, site: Path) -> None:
    picked = rb("plan", "--router", "rb-words:keyword", "--json",
                "How do I install ragloom and clear the cache?", pythonpath=[site])
    check(picked, 0)
    (plan,) = [json.loads(line) for line in picked.stdout.splitlines()]
    assert [(r["route"], r["fallback_reason"]) for r in plan["routing_plan"]] == [
        ("docs", None), ("general", "rb-words: no word of its own"),
    ]
    hooked = rb("plan", "--router", "hooked-words", "--decomposer", "heuristic", "--json",
                "install it", pythonpath=[site])
    check(hooked, 0)
    assert json.loads(hooked.stdout)["routing_plan"][0]["route"] == "docs"
    unknown = rb("plan", "--decomposer", "heuristc", "q")
    check(unknown, 2, "unknown decomposer 'heuristc'; did you mean 'heuristic'?")
    with_file = rb("plan", "--config", EXAMPLES / "pipelines" / "plan-rules.toml",
                   "--router", "sample", "q")
    check(with_file, 2,
          "--routes, --decomposer, --router and --index choose the components without")
