"""Real wheels of small plugin packages installed into a fresh environment (issue 3)."""

from __future__ import annotations

import json

import pytest

from .conftest import PLUGINS, Env, Wheelhouse, make_env

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory, wheelhouse: Wheelhouse) -> Env:
    wheels = [str(wheelhouse[PLUGINS / name]) for name in ("good", "broken", "clash_a", "clash_b")]
    env = make_env(tmp_path_factory.mktemp("venv"), wheelhouse, *wheels)
    env.pip("--no-deps", str(wheelhouse[PLUGINS / "old"]))
    return env


def test_discovery_reads_metadata_only(env: Env) -> None:
    out = env.json(
        "import json, sys\n"
        "from ragloom.plugins import discover_plugins\n"
        "infos = {i.dist: i.to_dict() for i in discover_plugins()}\n"
        "mods = [m for m in sys.modules if m.startswith('e2e_')]\n"
        "print(json.dumps({'infos': infos, 'mods': mods}))"
    )
    infos = out["infos"]  # type: ignore[index]
    assert infos["ragloom-e2e-good"]["provides"] == {"chunker": ["halves"]}
    assert infos["ragloom-e2e-good"]["version"] == "1.2.3"
    assert infos["ragloom-e2e-good"]["hooks"] == ["e2e_good_hooks"]
    assert infos["ragloom-e2e-broken"]["provides"] == {"chunker": ["explodes"]}
    assert infos["ragloom-e2e-old"]["status"] == "broken"
    assert "requires ragloom<0.1" in infos["ragloom-e2e-old"]["reason"]
    assert out["mods"] == []  # type: ignore[index]


BUILD = (
    "import json, sys\n"
    "from ragloom import build_pipeline, Document\n"
    "def build(name):\n"
    "    try:\n"
    "        p = build_pipeline({'steps': [{'chunker': name}]}, source='p.toml')\n"
    "    except Exception as e:\n"
    "        return {'error': type(e).__name__, 'message': str(e)}\n"
    "    out = p.run_sync([Document(id='d', content='abcdef')])\n"
    "    return {'chunks': [c.content for c in out]}\n"
)


def test_lazy_import_until_a_pipeline_names_it(env: Env) -> None:
    out = env.json(
        BUILD + "r1 = build('whole')\n"
        "before = 'e2e_good' in sys.modules\n"
        "r2 = build('halves')\n"
        "after = 'e2e_good' in sys.modules\n"
        "print(json.dumps([r1, before, r2, after]))"
    )
    whole, before, halves, after = out  # type: ignore[misc]
    assert whole == {"chunks": ["abcdef"]}  # registered through the pluggy hook
    assert before is False
    assert halves == {"chunks": ["abc", "def"]}
    assert after is True


def test_clash_names_both_and_qualified_name_resolves(env: Env) -> None:
    clash, qualified = env.json(
        BUILD + "print(json.dumps([build('same'), build('ragloom-e2e-clash-b:same')]))"
    )  # type: ignore[misc]
    assert clash["error"] == "PluginConflictError"
    for text in (
        "ragloom-e2e-clash-a 1.2.3",
        "ragloom-e2e-clash-b 1.2.3",
        "steps[0]",
        "'ragloom-e2e-clash-a:same'",
        "RAGLOOM_DISABLE_PLUGINS",
    ):
        assert text in clash["message"]
    assert qualified == {"chunks": ["abcdef"]}


def test_broken_plugin_breaks_only_its_pipelines(env: Env) -> None:
    broken, good = env.json(BUILD + "print(json.dumps([build('explodes'), build('halves')]))")  # type: ignore[misc]
    assert broken["error"] == "BrokenPluginError"
    assert "ragloom-e2e-broken 1.2.3" in broken["message"]
    assert "e2e_broken:Explodes" in broken["message"]
    assert "not installed" in broken["message"]
    assert good == {"chunks": ["abc", "def"]}


def test_incompatible_core_is_refused(env: Env) -> None:
    (old,) = env.json(BUILD + "print(json.dumps([build('ancient')]))")  # type: ignore[misc]
    assert old["error"] == "IncompatiblePluginError"
    assert "requires ragloom<0.1" in old["message"]


def test_blocking_before_import(env: Env) -> None:
    out = env.json(
        BUILD + "r = build('halves')\n"
        "print(json.dumps([r, 'e2e_good' in sys.modules, 'e2e_good_hooks' in sys.modules,"
        " build('same')]))",
        env={"RAGLOOM_DISABLE_PLUGINS": "ragloom-e2e-good,ragloom-e2e-clash-a"},
    )
    blocked, imported, hooks_imported, unclashed = out  # type: ignore[misc]
    assert blocked["error"] == "PluginBlockedError"
    assert "ragloom-e2e-good" in blocked["message"]
    assert imported is False and hooks_imported is False
    assert unclashed == {"chunks": ["abcdef"]}  # only clash-b is left


def test_allowlist_turns_autoload_off(env: Env) -> None:
    out = env.json(
        BUILD + "print(json.dumps([build('halves'), build('same')]))",
        env={"RAGLOOM_PLUGINS_AUTOLOAD": "0", "RAGLOOM_ALLOW_PLUGINS": "ragloom-e2e-clash-a"},
    )
    halves, same = out  # type: ignore[misc]
    assert halves["error"] == "PluginBlockedError"
    assert same == {"chunks": ["abcdef"]}


def test_observer_hook_sees_events(env: Env) -> None:
    out = env.json(
        BUILD + "build('halves')\nimport e2e_good_hooks\nprint(json.dumps(e2e_good_hooks.EVENTS))"
    )
    assert "run_started" in out and "run_finished" in out  # type: ignore[operator]
    assert json.dumps(out)
