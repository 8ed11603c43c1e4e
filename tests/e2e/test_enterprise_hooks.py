"""An enterprise plugin installed from a real wheel sees every pipeline, however it is built."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from .conftest import PLUGINS, REPO, Env, Wheelhouse, make_env

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory, wheelhouse: Wheelhouse) -> Env:
    wheels = [str(wheelhouse[PLUGINS / name]) for name in ("audit", "clash_a", "clash_b")]
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


def log_records(log: Path) -> list[dict]:
    """The audit log's records, the log kept."""
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]


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


def test_the_enterprise_story_in_one_wheel(env: Env, tmp_path: Path) -> None:
    """One wheel (ragloom-e2e-audit) adds a command, contributes policy before discovery, sets
    policy defaults and wraps every step; the operator's ragloom.toml blocks a clashing plugin,
    requires the wrappers and wins over the plugin's defaults."""
    log = tmp_path / "audit.jsonl"
    work = tmp_path / "work"
    work.mkdir()
    policy = work / "ragloom.toml"
    policy.write_text(
        'block-plugins = ["ragloom-e2e-clash-b"]\n'
        'require-wrappers = ["ragloom-e2e-audit"]\n'
        "[default-policy.chunker]\nmax_attempts = 5\ntimeout = 60.0\n",
        encoding="utf-8",
    )

    def ragloom(*args: str, cwd: Path = work, **extra: str) -> subprocess.CompletedProcess[str]:
        environ = {**os.environ, "E2E_AUDIT_LOG": str(log)}
        environ.pop("RAGLOOM_DISABLE_PLUGINS", None)
        environ.update(extra)
        return subprocess.run([str(env.bin / "ragloom"), *args], capture_output=True,
                              text=True, cwd=cwd, env=environ)

    # --help lists the plugin's command with its distribution, without importing it
    helped = ragloom("--help")
    assert helped.returncode == 0, helped.stderr
    assert "audit-report  a command of ragloom-e2e-audit 0.3.0" in helped.stdout
    assert _records(log) == []

    # without the policy file the two clash plugins clash; the operator's file blocks one
    clashing = ragloom("plugins", "--check", cwd=tmp_path)
    assert clashing.returncode == 1 and "chunker name 'same' is provided by both" in clashing.stdout
    checked = ragloom("plugins", "--check")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    out = checked.stdout
    assert "name clash" not in out
    assert f"Policy in force, from {policy}; plugin ragloom-e2e-audit 0.3.0:" in out
    assert f"block-plugins: ragloom-e2e-clash-b (from {policy})" in out
    assert f"require-wrappers: ragloom-e2e-audit (from {policy})" in out
    assert ("default-policy.chunker: max_attempts=5, timeout=60.0 "
            f"(from {policy}, plugin ragloom-e2e-audit 0.3.0)") in out
    assert "blocked by it: ragloom-e2e-clash-b" in out
    row = next(line for line in out.splitlines() if line.startswith("ragloom-e2e-audit "))
    assert "commands: audit-report" in row and "policy: e2e_audit_policy" in row

    # a run: wrapped by the plugin, under the operator's defaults over the plugin's
    docs = REPO / "examples" / "sample-docs" / "guides"
    ran = ragloom("ingest", str(docs), "-o", str(tmp_path / "out.jsonl"), "--no-cache", "-q")
    assert ran.returncode == 0, ran.stderr
    assert any(r["hook"] == "wrap" for r in log_records(log))

    # the plugin's command reports on that run; it is imported only now
    report = ragloom("audit-report")
    assert report.returncode == 0, report.stderr
    assert report.stdout.startswith("MarkdownChunker: ")
    assert log_records(log)[-1] == {"hook": "import", "module": "commands"}
    effective = env.json(
        "import json\n"
        "from ragloom import Pipeline\n"
        "from ragloom_text import RecursiveCharacterTextSplitter as R\n"
        "p = Pipeline(R(chunk_size=20))\n"
        "q = p.terminal.effective_policy(p.context([]))\n"
        "print(json.dumps([q.max_attempts, q.concurrency, q.timeout]))\n",
        env={"RAGLOOM_POLICY_FILE": str(policy)},
    )
    assert effective == [5, 2, 60.0]  # the file's, then the plugin hook's concurrency


    # without the required wrappers, no run starts
    refused = ragloom("ingest", str(docs), "-o", str(tmp_path / "no.jsonl"), "-q",
                      RAGLOOM_DISABLE_PLUGINS="ragloom-e2e-audit")
    assert refused.returncode == 2
    assert (f"the policy in {policy} requires the step wrappers of ragloom-e2e-audit, and "
            "ragloom-e2e-audit is disabled by RAGLOOM_DISABLE_PLUGINS") in refused.stderr
    assert not (tmp_path / "no.jsonl").exists()
