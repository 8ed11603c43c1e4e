"""Plugins cannot take the process down or lie about success: a broken plugin breaks only
itself (reported by ``ragloom plugins --check`` and in one warning at build), a hook or
observer that raises is reported once and the run goes on, and any exception from plugin code,
``SystemExit`` and other ``BaseException`` included, fails only its item."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import check, environment, make_plugin, pipeline_file, sigint_default, snapshot

HOOKS = "ragloom.plugins"

BROKEN = {
    "rb-register-raises": (
        "from ragloom.plugins.hookspecs import hookimpl\n"
        "@hookimpl\ndef ragloom_register(register):\n    raise RuntimeError('register boom')\n",
        "ragloom_register raised RuntimeError: register boom",
    ),
    "rb-misspelled": (
        "from ragloom.plugins.hookspecs import hookimpl\n"
        "@hookimpl\ndef ragloom_regster(register):\n    pass\n",
        "unknown hook 'ragloom_regster'",
    ),
    "rb-no-import": (
        "import a_module_that_does_not_exist_anywhere\n",
        "cannot be imported: ModuleNotFoundError",
    ),
}

OBSERVING = (
    "from ragloom.plugins.hookspecs import hookimpl\n"
    "@hookimpl\ndef ragloom_event(event):\n    raise RuntimeError('event boom')\n"
    "@hookimpl\ndef ragloom_pipeline_built(pipeline, spec):\n"
    "    raise RuntimeError('built boom')\n"
)


@pytest.fixture
def plugins(tmp_path: Path) -> Path:
    root = tmp_path / "site"
    root.mkdir()
    for dist, (source, _reason) in BROKEN.items():
        make_plugin(root, dist, source, {HOOKS: {dist: dist.replace("-", "_")}})
    make_plugin(root, "rb-observer", OBSERVING, {HOOKS: {"rb-observer": "rb_observer"}})
    # A chunker that cannot be imported: only a pipeline naming it may fail.
    make_plugin(root, "rb-bad-chunker", "raise ImportError('broken on purpose')\n",
                {"ragloom.chunkers": {"badchunk": "rb_bad_chunker:Chunk"}})
    return root


def test_broken_plugins_break_only_themselves(rb, work: Path, plugins: Path) -> None:
    spec = pipeline_file(work / "p.toml", 'chunker = "recursive"')
    proc = rb("ingest", "docs", "-c", spec, "-o", "out.jsonl", "--no-cache", "-q",
              pythonpath=[plugins])
    err = check(proc, 0)
    for dist, (_source, reason) in BROKEN.items():
        lines = [line for line in err.splitlines() if f"plugin {dist} is broken" in line]
        assert len(lines) == 1 and reason in lines[0], err
    # The observing plugin raised in both hooks: each reported once, the run went on.
    assert err.count("ragloom_pipeline_built raised RuntimeError: built boom") == 1, err
    assert err.count("ragloom_event raised RuntimeError: event boom") == 1, err
    parents = {json.loads(line)["parent"] for line in (work / "out.jsonl").read_text().splitlines()}
    assert parents == {"a.md", "b.txt", "c.py"}


def test_plugins_check_reports_each_broken_plugin(rb, plugins: Path) -> None:
    listed = rb("plugins", "--json", "--check", pythonpath=[plugins])
    check(listed, 1)
    assert listed.stderr == ""  # problems are in the listing, not repeated as warnings
    status = {p["distribution"]: p for p in json.loads(listed.stdout)["plugins"]}
    for dist, (_source, reason) in BROKEN.items():
        assert status[dist]["status"] == "broken" and reason in status[dist]["reason"]
    assert status["rb-bad-chunker"]["status"] == "broken"
    assert "broken on purpose" in status["rb-bad-chunker"]["reason"]
    assert status["rb-observer"]["status"] == "loaded"
    assert status["ragloom-text"]["status"] == "loaded"
    # Without --check nothing is imported: exit 0.
    check(rb("plugins", pythonpath=[plugins]), 0)


def test_a_pipeline_naming_a_broken_plugin_fails_with_a_message(rb, work, plugins) -> None:
    spec = pipeline_file(work / "p.toml", 'chunker = "badchunk"')
    check(rb("ingest", "docs", "-c", spec, "-o", "out.jsonl", "--no-cache",
             pythonpath=[plugins]), 2, "badchunk", "broken on purpose")


@pytest.mark.parametrize(
    ("step", "kind"),
    [
        ("ExitZero", "SystemExit"),
        ("RaiseBase", "Base"),
        ("Fail", "ValueError"),
        ("RaiseInterrupt", "KeyboardInterrupt"),
        ("RaiseInterruptAsync", "KeyboardInterrupt"),
    ],
)
def test_any_exception_from_a_step_fails_only_its_item(rb, work: Path, step, kind) -> None:
    (work / "docs" / "bad.txt").write_text("the bad one\n", encoding="utf-8")
    spec = pipeline_file(work / "p.toml", f'import = "ragloom_rb_steps:{step}"',
                         'chunker = "recursive"')
    before = snapshot(work / "docs")
    proc = rb("ingest", "docs", "-c", spec, "--allow-imports", "-o", "out.jsonl", "--no-cache",
              "--json")
    check(proc, 1)
    report = json.loads(proc.stdout)
    assert [(f["source"], f["kind"]) for f in report["failures"]] == [("docs/bad.txt", kind)]
    parents = {json.loads(line)["parent"] for line in (work / "out.jsonl").read_text().splitlines()}
    assert parents == {"a.md", "b.txt", "c.py"}
    assert snapshot(work / "docs") == before


def test_in_the_library_only_a_real_interrupt_stops_a_run(work: Path) -> None:
    """Through the Python API: a step's own KeyboardInterrupt fails its item; an interrupt
    delivered as a signal (here simulated by ``_thread.interrupt_main``) stops the run; the
    SIGINT handler is as it was afterwards."""
    script = (
        "import _thread, signal\n"
        "import anyio\n"
        "from ragloom import FunctionStep, Pipeline\n"
        "def own(x):\n"
        "    if x == 2: raise KeyboardInterrupt('mine')\n"
        "    return x\n"
        "result = Pipeline(FunctionStep(own)).run_sync([1, 2, 3])\n"
        "assert list(result) == [1, 3], list(result)\n"
        "assert [f.error_type for f in result.failed] == ['KeyboardInterrupt']\n"
        "async def real(x):\n"
        "    if x == 2:\n"
        "        _thread.interrupt_main()  # as Ctrl-C: the run is cancelled\n"
        "        await anyio.sleep_forever()\n"
        "    return x\n"
        "try:\n"
        "    Pipeline(FunctionStep(real)).run_sync([1, 2, 3])\n"
        "except KeyboardInterrupt:\n"
        "    print('stopped')\n"
        "assert signal.getsignal(signal.SIGINT) is signal.default_int_handler\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script], cwd=work, env=environment(), capture_output=True,
        text=True, timeout=120, preexec_fn=sigint_default,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "stopped\n"
