"""An enterprise plugin installed from a real wheel sees every pipeline, however it is built."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .conftest import PLUGINS, REPO, Env, Wheelhouse, make_env

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory, wheelhouse: Wheelhouse) -> Env:
    wheels = [str(wheelhouse[PLUGINS / "audit"])]
    wheels += [str(wheelhouse[REPO / "plugins" / name]) for name in ("text", "rules")]
    core = wheelhouse[REPO / "core"]
    # the core with its cli extra (click, rich), as the README installs it
    return make_env(tmp_path_factory.mktemp("venv"), wheelhouse, *wheels, f"{core}[cli]")


def _records(log: Path) -> list[dict]:
    if not log.exists():
        return []
    records = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    log.unlink()
    return records


def _kinds(records: list[dict]) -> set[str]:
    return {r["kind"] for r in records if r["hook"] == "event"}


def test_every_way_of_building_a_pipeline_is_audited(env: Env, tmp_path: Path) -> None:
    log = tmp_path / "audit.jsonl"
    audited = {"E2E_AUDIT_LOG": str(log)}

    # A pipeline built in Python: events (sync and async observers) and wrapped calls.
    env.run(
        "from ragloom import Document, Pipeline\n"
        "from ragloom_text import RecursiveCharacterTextSplitter as R\n"
        "p = Pipeline(R(chunk_size=20))\n"
        "r = p.run_sync([Document(id='a', content='one two three four five six seven eight')])\n"
        "assert len(r) > 1, r\n"
        "policy = p.terminal.effective_policy(p.context([]))\n"
        "assert (policy.max_attempts, policy.concurrency) == (4, 2), policy\n"
        "explicit = Pipeline(R(chunk_size=20, policy=__import__('ragloom').Policy("
        "max_attempts=1)))\n"
        "assert explicit.terminal.effective_policy(explicit.context([])).max_attempts == 1\n",
        env=audited,
    )
    records = _records(log)
    assert {"run_started", "step_started", "step_finished", "run_finished"} <= _kinds(records)
    assert {"hook": "event_async", "kind": "run_finished"} in records
    assert {"hook": "wrap", "step": "RecursiveCharacterTextSplitter"} in records

    # A query block built in Python: the plugin's step sees each question first.
    env.run(
        "from ragloom import MultiQueryRoutingPipeline\n"
        "from ragloom_rules import HeuristicDecomposer, sample_router\n"
        "block = MultiQueryRoutingPipeline(HeuristicDecomposer(), sample_router())\n"
        "r = block.build().run_sync(['What is the refund policy and how do I cancel?'])\n"
        "assert len(r) == 1 and len(r[0].sub_queries) == 2, r\n",
        env=audited,
    )
    records = _records(log)
    assert "run_finished" in _kinds(records)
    assert {"hook": "question",
            "text": "What is the refund policy and how do I cancel?"} in records

    # The CLI: ingest without and with a pipeline file, and plan.
    docs = REPO / "examples" / "sample-docs" / "guides"
    config = tmp_path / "ingest.toml"
    config.write_text('version = 1\n[[steps]]\nchunker = "markdown"\n', encoding="utf-8")
    for args in (
        ["ingest", str(docs), "-o", str(tmp_path / "a.jsonl"), "--no-cache", "-q"],
        ["ingest", str(docs), "-o", str(tmp_path / "b.jsonl"), "--no-cache", "-q", "-c",
         str(config)],
        ["plan", "How do I pay and when will my order arrive?"],
    ):
        code = "import sys\nfrom ragloom.cli import main\nsys.exit(main(" + repr(args) + "))\n"
        env.run(code, env=audited)
        records = _records(log)
        assert {"run_started", "run_finished"} <= _kinds(records), args
        assert any(r["hook"] == "wrap" for r in records), args

    # Opting out is explicit.
    env.run(
        "from ragloom import Document, Pipeline\n"
        "from ragloom_text import RecursiveCharacterTextSplitter as R\n"
        "Pipeline(R(chunk_size=20), plugin_hooks=False).run_sync([Document(id='a', "
        "content='x y')])\n",
        env=audited,
    )
    assert _records(log) == []
