"""ragloom-otel from a real wheel in a fresh environment: configured by the OTEL_* variables
alone, silent without them, never breaking a run on bad configuration."""

from __future__ import annotations

import json

import pytest

from .conftest import REPO, Env, Wheelhouse, make_env

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

RUN = (
    "from ragloom import Document, FunctionStep, Pipeline\n"
    "from ragloom_text import RecursiveCharacterTextSplitter as R\n"
    "def check(doc):\n"
    "    if doc.id == 'bad':\n"
    "        raise ValueError('rejected')\n"
    "    return doc\n"
    "p = Pipeline(R(chunk_size=20)(FunctionStep(check, name='Check')))\n"
    "r = p.run_sync([Document(id='a', content='one two three four five six seven eight'),\n"
    "                Document(id='bad', content='x')])\n"
    "assert len(r) > 1 and [f.item_id for f in r.failed] == ['bad'], r\n"
)


def objects(text: str) -> list[dict]:
    """The JSON objects the console exporters printed, one after the other."""
    decoder = json.JSONDecoder()
    out, at = [], 0
    while (start := text.find("{", at)) != -1:
        value, at = decoder.raw_decode(text, start)
        out.append(value)
    return out


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory, wheelhouse: Wheelhouse) -> Env:
    wheels = [str(wheelhouse[REPO / "plugins" / name]) for name in ("otel", "text")]
    return make_env(tmp_path_factory.mktemp("venv"), wheelhouse, *wheels)


def test_console_exporters_sampling_and_bad_configuration(env: Env) -> None:
    # Installed and not configured: nothing printed, nothing of OpenTelemetry at import.
    quiet = env.run(
        "import sys, ragloom_otel\n"
        "assert not [m for m in sys.modules if m.startswith('opentelemetry')]\n" + RUN
    )
    assert quiet == ""

    # The standard variables: a service name and the SDK's console exporters, which write to
    # standard error (standard output stays the program's own)
    console = {
        "OTEL_SERVICE_NAME": "e2e-ingest",
        "OTEL_TRACES_EXPORTER": "console",
        "OTEL_METRICS_EXPORTER": "console",
    }
    assert env.run(RUN, env=console) == ""
    printed = objects(env.run(RUN, env=console, stderr=True))
    spans = [o for o in printed if "context" in o and "kind" in o]
    by_name = {s["name"]: s for s in spans}
    assert set(by_name) == {
        "ragloom run", "ragloom step Check", "ragloom step RecursiveCharacterTextSplitter",
        "ragloom failed item",
    }
    run = by_name["ragloom run"]
    assert run["parent_id"] is None
    assert run["resource"]["attributes"]["service.name"] == "e2e-ingest"
    assert by_name["ragloom step Check"]["parent_id"] == run["context"]["span_id"]
    failed = by_name["ragloom failed item"]
    assert failed["parent_id"] == by_name["ragloom step Check"]["context"]["span_id"]
    assert failed["attributes"]["ragloom.item.id"] == "bad"
    (exported,) = [o for o in printed if "resource_metrics" in o]
    names = {
        m["name"]
        for rm in exported["resource_metrics"]
        for sm in rm["scope_metrics"]
        for m in sm["metrics"]
    }
    assert {"ragloom.step.items.in", "ragloom.step.items.failed", "ragloom.step.duration"} <= names

    # Sampling off: no spans (the metrics exporter is not named: nothing else either).
    off = env.run(RUN, env={"OTEL_TRACES_EXPORTER": "console", "OTEL_TRACES_SAMPLER": "always_off"},
                  stderr=True)
    assert off == ""

    # An exporter that is not installed: the run goes on, one warning names it.
    lines = env.run(
        "import logging, sys\nlogging.basicConfig(stream=sys.stdout)\n" + RUN
        + "p.run_sync([Document(id='b', content='y')])\nprint('ran')\n",
        env={"OTEL_TRACES_EXPORTER": "no-such-exporter"},
    ).splitlines()
    assert lines[-1] == "ran"
    (warning,) = lines[:-1]
    assert "OTEL_TRACES_EXPORTER names the exporter 'no-such-exporter'" in warning
    assert "installed: console" in warning and "no traces are exported" in warning
