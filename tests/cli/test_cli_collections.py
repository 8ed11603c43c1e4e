"""Collections and the routes fitted from them, through the real entry point: ``ragloom
ingest`` records collections, ``index info`` lists them, ``plan --index`` and ``search`` route
by them (restricting or boosting), and ``--routes`` / ``--router`` / ``--collection`` override
or narrow it."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

pytestmark = pytest.mark.usefixtures("needs_rules", "needs_text")

pytest.importorskip("ragloom_lancedb")
pytest.importorskip("ragloom_semantic")

#: Two bodies of documents with nothing in common, written from word lists (seeded).
TOPICS = {
    "astronomy": {
        "nouns": "telescope galaxy comet nebula planet star orbit eclipse asteroid moon "
        "observatory constellation supernova meteor spectrum satellite".split(),
        "verbs": "orbits eclipses observes reflects emits crosses outshines approaches".split(),
        "titles": ["Observing comets", "Planets and their moons", "Nebulae and supernovae",
                   "Choosing a telescope", "Eclipses explained", "Meteor showers",
                   "Mapping constellations", "Asteroids near the Earth"],
    },
    "cooking": {
        "nouns": "oven flour dough garlic butter onion skillet recipe pastry sauce broth "
        "yeast saucepan oregano tomato dumpling".split(),
        "verbs": "simmers kneads bakes roasts seasons thickens melts browns".split(),
        "titles": ["Kneading bread dough", "Simmering a tomato sauce", "Roasting garlic",
                   "Baking pastry", "Browning onions in a skillet", "A broth for dumplings",
                   "Seasoning with oregano", "Melting butter for sauces"],
    },
}


def write_topic(folder: Path, topic: str, seed: int = 0) -> None:
    rng = random.Random(f"{topic}-{seed}")
    words = TOPICS[topic]
    folder.mkdir(parents=True, exist_ok=True)
    for n, title in enumerate(words["titles"]):
        sections = []
        for part in ("Overview of the topic here", "Details worth knowing here"):
            sentences = []
            for _ in range(8):
                a, b, c = rng.sample(words["nouns"], 3)
                verb = rng.choice(words["verbs"])
                sentences.append(f"The {a} {verb} the {b} beside the {c} every single time.")
            sections.append(f"## {part} {n}\n\n" + " ".join(sentences))
        (folder / f"{topic}-{n}.md").write_text(
            f"# {title}\n\n" + "\n\n".join(sections) + "\n", encoding="utf-8"
        )


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("collections") / "library"
    write_topic(root / "astronomy", "astronomy")
    write_topic(root / "cooking", "cooking")
    return root


def info(cli, index: Path) -> dict:
    proc = cli("index", "info", "--index", index, "--json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def plan_of(cli, index: Path, *questions: str) -> list[dict]:
    proc = cli("plan", "--index", index, "--json", *questions)
    assert proc.returncode == 0, proc.stderr
    return [json.loads(line) for line in proc.stdout.splitlines()]


def test_collections_from_folders_and_from_the_flag(cli, workdir, corpus) -> None:
    (corpus.parent / "extra").mkdir(exist_ok=True)
    loose = corpus.parent / "extra" / "notes.md"
    loose.write_text("# Notes\n\nA loose file directly under the folder given.\n", "utf-8")
    both = workdir / "both"
    proc = cli("ingest", corpus, corpus.parent / "extra", "--index", both, "--no-cache",
               "--out", workdir / "chunks.jsonl", "--json")
    assert proc.returncode == 0, proc.stderr
    held = info(cli, both)
    # each top-level folder under a path is a collection; a file directly under a path
    # belongs to the path's own folder name
    assert [(c["name"], c["documents"]) for c in held["collections"]] == [
        ("astronomy", 8), ("cooking", 8), ("extra", 1),
    ]
    assert sum(c["chunks"] for c in held["collections"]) == held["chunks"]
    chunks = [json.loads(line) for line in (workdir / "chunks.jsonl").read_text().splitlines()]
    by_document = {c["parent"]: c["metadata"]["collection"] for c in chunks}
    assert by_document["library/astronomy/astronomy-0.md"] == "astronomy"
    assert by_document["extra/notes.md"] == "extra"
    table = cli("index", "info", "--index", both)
    assert "COLLECTION" in table.stdout and "astronomy" in table.stdout

    # --collection names every document's collection; document ids do not change
    one = workdir / "one"
    named = cli("ingest", corpus, "--index", one, "--collection", "Library", "--no-cache",
                "--out", workdir / "named.jsonl")
    assert named.returncode == 0, named.stderr
    assert [(c["name"], c["documents"]) for c in info(cli, one)["collections"]] == [
        ("Library", 16),
    ]
    alone = cli("ingest", corpus, "--no-cache", "--out", workdir / "plain.jsonl")
    assert alone.returncode == 0, alone.stderr
    ids = [json.loads(line)["id"] for line in (workdir / "plain.jsonl").read_text().splitlines()]
    named_ids = [
        json.loads(line)["id"] for line in (workdir / "named.jsonl").read_text().splitlines()
    ]
    assert ids == named_ids and "astronomy/astronomy-0.md#0" in ids
    # moving documents to another collection writes them again, with the new name
    moved = cli("ingest", corpus, "--index", one, "--collection", "Shelf", "--no-cache", "--json")
    assert json.loads(moved.stdout)["indexed"] == 16
    assert [c["name"] for c in info(cli, one)["collections"]] == ["Shelf"]
    blank = cli("ingest", corpus, "--index", one, "--collection", " ")
    assert blank.returncode == 2 and "--collection" in blank.stderr


@pytest.fixture(scope="module")
def routed(corpus, tmp_path_factory) -> Path:
    """An index of the two collections, built by the command."""
    import os
    import subprocess
    import sys

    index = tmp_path_factory.mktemp("routed") / "index"
    env = dict(os.environ, RAGLOOM_DISABLE_PLUGINS="ragloom-docling")
    proc = subprocess.run(
        [sys.executable, "-m", "ragloom.cli", "ingest", str(corpus), "--index", str(index),
         "--no-cache", "--json"],
        capture_output=True, text=True, env=env, timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    routes = json.loads(proc.stdout)["routes"]
    assert routes["routing"] == "fitted" and routes["fitted"] is True
    assert [c["name"] for c in routes["collections"]] == ["astronomy", "cooking"]
    return index


def test_routes_are_fitted_saved_and_refreshed_by_ingest(cli, routed, corpus, tmp_path) -> None:
    import shutil

    manifest = json.loads((routed / "collection-routes.json").read_text("utf-8"))
    assert [c["name"] for c in manifest["collections"]] == ["astronomy", "cooking"]
    fit = manifest["fit"]
    assert fit["held_out"] > 0 and fit["restrict_precision_target"] == 0.98
    assert fit["examples"]["astronomy"] > 0 and fit["examples"]["cooking"] > 0
    assert (routed / manifest["router"]).is_file()

    index = tmp_path / "index"
    shutil.copytree(routed, index)
    again = cli("ingest", corpus, "--index", index, "--no-cache")
    assert again.returncode == 0, again.stderr
    assert "collections: astronomy (8), cooking (8); routes up to date" in again.stdout

    # an index records its root: grow a copy of the corpus ingested into an index of its own
    library = tmp_path / "library"
    shutil.copytree(corpus, library)
    index = tmp_path / "grown-index"
    first = cli("ingest", library, "--index", index, "--no-cache")
    assert first.returncode == 0, first.stderr
    write_topic(library / "gardening", "cooking", seed=1)  # a third collection
    for page in (library / "gardening").iterdir():
        page.write_text(
            page.read_text("utf-8").replace("oven", "greenhouse").replace("flour", "compost")
            .replace("dough", "seedling").replace("garlic", "tulip").replace("butter", "hedge")
            .replace("onion", "rosebush").replace("skillet", "trowel").replace("pastry", "lawn")
            .replace("sauce", "orchard").replace("broth", "mulch").replace("yeast", "fern")
            .replace("saucepan", "wheelbarrow").replace("oregano", "ivy")
            .replace("tomato", "daffodil").replace("dumpling", "shrub"),
            "utf-8",
        )
    grown = cli("ingest", library, "--index", index, "--no-cache", "--json")
    assert grown.returncode == 0, grown.stderr
    routes = json.loads(grown.stdout)["routes"]
    assert routes["fitted"] is True
    assert [c["name"] for c in routes["collections"]] == ["astronomy", "cooking", "gardening"]
    # only the new collection was read again: the others' samples are kept with the routes
    assert routes["fit"]["read"] == ["gardening"]
    manifest = json.loads((index / "collection-routes.json").read_text("utf-8"))
    assert set(manifest["samples"]) == {"astronomy", "cooking", "gardening"}
    assert manifest["samples"]["astronomy"]["documents"] == 8
    (plan,) = plan_of(cli, index, "Which tulip grows best beside the greenhouse compost?")
    assert plan["routing_plan"][0]["route"] == "gardening"


def test_a_confident_route_restricts_and_a_less_sure_one_boosts(cli, routed, tmp_path) -> None:
    import shutil

    question = "How does the comet cross the orbit of the planet near the nebula?"
    (plan,) = plan_of(cli, routed, question)
    (route,) = plan["routing_plan"]
    assert route["route"] == "astronomy" and route["runner_up"] == "cooking"
    assert route["score"] > route["runner_up_score"]
    assert route["retrieval"] == "restrict" and route["collections"] == ["astronomy"]
    proc = cli("search", question, "--index", routed, "--json")
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["routing_plan"][0]["retrieval"] == "restrict"
    assert result["passages"]
    for passage in result["passages"]:
        assert passage["metadata"]["collection"] == "astronomy"
        assert [h["collections"] for h in passage["found_by"]] == [["astronomy"]]
    table = cli("plan", "--index", routed, question)
    header = next(line for line in table.stdout.splitlines() if "SUB-QUERY" in line)
    assert header.split() == ["#", "SUB-QUERY", "ROUTE", "SCORE", "SEARCH", "NOTE"]
    assert "only astronomy" in table.stdout and "runner-up: cooking" in table.stdout

    # the same routes, less sure of themselves: a restriction needs more than this share of
    # the ask's search, a boost does not
    index = tmp_path / "index"
    shutil.copytree(routed, index)
    manifest_file = index / "collection-routes.json"
    manifest = json.loads(manifest_file.read_text("utf-8"))
    manifest["restrict_share"] = 10.0
    manifest["boost_share"] = 0.0
    manifest_file.write_text(json.dumps(manifest), "utf-8")
    (plan,) = plan_of(cli, index, question)
    (route,) = plan["routing_plan"]
    assert route["retrieval"] == "boost" and route["collections"] == ["astronomy"]
    proc = cli("search", question, "--index", index, "--json", "-k", "10")
    result = json.loads(proc.stdout)
    lists = {tuple(h["collections"] or ()) for p in result["passages"] for h in p["found_by"]}
    assert lists == {(), ("astronomy",)}  # the whole index, and the collection beside it
    assert "all, astronomy boosted" in cli("plan", "--index", index, question).stdout

    # and too close to call: the whole index, as without routing
    manifest["boost_share"] = 10.0
    manifest_file.write_text(json.dumps(manifest), "utf-8")
    (plan,) = plan_of(cli, index, question)
    (route,) = plan["routing_plan"]
    assert route["route"] == "astronomy" and route["retrieval"] is None
    assert route["note"].startswith("too close to call")
    result = json.loads(cli("search", question, "--index", index, "--json").stdout)
    assert all(h["collections"] is None for p in result["passages"] for h in p["found_by"])


def test_each_ask_of_a_compound_question_goes_to_its_collection(cli, routed) -> None:
    (plan,) = plan_of(
        cli, routed,
        "How does the comet cross the orbit of the planet? "
        "How long does the dough rest before the oven bakes the pastry?",
    )
    assert [r["route"] for r in plan["routing_plan"]] == ["astronomy", "cooking"]
    assert all(r["retrieval"] in ("restrict", "boost") for r in plan["routing_plan"])


def test_one_collection_means_no_routing(cli, corpus, workdir) -> None:
    index = workdir / "index"
    proc = cli("ingest", corpus / "astronomy", "--index", index, "--no-cache", "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["routes"]["routing"] == "one collection: no routing"
    question = "How does the comet cross the orbit? And what does the telescope observe?"
    (plan,) = plan_of(cli, index, question)
    assert len(plan["routing_plan"]) == 2
    for route in plan["routing_plan"]:
        assert route["route"] == "(whole index)"
        assert route["note"] == "one collection: no routing"
        assert route["retrieval"] is None and route["score"] is None
    table = cli("plan", "--index", index, question)
    assert table.stdout.count("one collection: no routing") == 2
    result = json.loads(cli("search", question, "--index", index, "--json").stdout)
    assert result["routing_plan"][0]["note"] == "one collection: no routing"
    assert all(h["collections"] is None for p in result["passages"] for h in p["found_by"])


def test_a_routes_file_or_a_named_router_overrides_the_fitted_routes(cli, routed, workdir) -> None:
    routes = workdir / "routes.yaml"
    routes.write_text(
        "default_route: general\nroutes:\n  - name: sky\n    keywords: [comet]\n"
        "  - name: general\n",
        encoding="utf-8",
    )
    question = "How does the comet cross the orbit of the planet?"
    for command in ("plan", "search"):
        proc = cli(command, question, "--index", routed, "--routes", routes, "--json")
        assert proc.returncode == 0, proc.stderr
        (route,) = json.loads(proc.stdout)["routing_plan"]
        assert route["route"] == "sky" and route["retrieval"] is None
    sample = cli("plan", "--index", routed, "--router", "ragloom-rules:sample", "--json",
                 "What is the return policy?")
    assert json.loads(sample.stdout)["routing_plan"][0]["route"] == "policies"
    off = cli("search", question, "--index", routed, "--router", "none", "--json")
    (route,) = json.loads(off.stdout)["routing_plan"]
    assert route["route"] == "(whole index)" and route["note"] == "routing off"


def test_search_only_some_collections(cli, routed) -> None:
    question = "How does the comet cross the orbit of the planet near the nebula?"
    proc = cli("search", question, "--index", routed, "--collection", "cooking", "--json",
               "--mode", "text")
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["routing_plan"][0]["note"] == "one collection searched: no routing"
    assert all(p["metadata"]["collection"] == "cooking" for p in result["passages"])
    both = cli("search", question, "--index", routed, "--collection", "cooking",
               "--collection", "astronomy", "--json")
    assert json.loads(both.stdout)["routing_plan"][0]["route"] == "astronomy"
    wrong = cli("search", question, "--index", routed, "--collection", "cookin")
    assert wrong.returncode == 2
    assert "no collection 'cookin' in the index (did you mean 'cooking'?)" in wrong.stderr


def test_eval_reports_how_often_an_ask_reaches_its_collection(routed) -> None:
    """``ragloom eval`` over an index routed by its collections scores the routing: a facet is
    routed when some ask of its question went to the collection of its documents."""
    import ragloom

    questions = [
        {
            "id": "both",
            "question": "How does the comet cross the orbit of the planet? "
            "How long does the dough rest before the oven bakes the pastry?",
            "expected": [
                {"facet": 1, "document": "astronomy/astronomy-0.md"},
                {"facet": 2, "document": "cooking/cooking-3.md"},
            ],
        },
        {   # labelled with the other collection's page: its one ask cannot be routed there
            "id": "astray",
            "question": "How does the comet cross the orbit of the planet near the nebula?",
            "expected": [{"facet": 1, "document": "cooking/cooking-1.md"}],
        },
    ]
    report = ragloom.evaluate(
        questions, str(routed), setups={"default": {}, "off": {"router": "none"}}
    )
    default, off = report.setups
    facets = {(q.id, f.label): f for q in default.questions for f in q.facets}
    assert facets["both", "1"].collections == ["astronomy"]
    assert facets["both", "2"].collections == ["cooking"]
    assert [f.routed for f in facets.values()] == [True, True, False]
    assert default.overall.routed_facets == pytest.approx(2 / 3)
    assert default.overall.routed_questions == pytest.approx(1 / 2)
    # routing turned off: nothing to score
    assert off.overall.routed_facets is None and off.overall.routed_questions is None
    assert all(f.routed is None for q in off.questions for f in q.facets)
