"""The organisation's plugin policy: where it is read from, what it blocks before any import,
policy defaults, required step wrappers, a platform plugin's policy, and ``plugins --check``."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from ragloom import (
    Document,
    FunctionStep,
    Pipeline,
    PluginBlockedError,
    PluginConflictError,
    Policy,
    PolicyFileError,
    PolicyViolationError,
)
from ragloom.cli import main
from ragloom.plugins import Registry, discover_plugins, policy_in_force
from support.fake_dists import Site, make_site

SAME = """
from ragloom import Chunker, ChunkSpan

class Same(Chunker):
    def split(self, document):
        yield ChunkSpan(0, len(document.content))
"""

WRAPPER = """
from ragloom.plugins.hookspecs import hookimpl

CALLS = []

@hookimpl
def ragloom_wrap_step(step, call, is_async):
    if is_async:
        return None
    def wrapped(item):
        CALLS.append(step.name)
        return call(item)
    return wrapped

@hookimpl
def ragloom_default_policy(kind, step):
    from ragloom import Policy
    return Policy(max_attempts=4, concurrency=2, timeout=9.0)
"""


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Site]:
    yield from make_site(tmp_path, monkeypatch)


@pytest.fixture(autouse=True)
def _operator(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """No operator setting from the test run's environment; work in an empty folder."""
    for var in ("RAGLOOM_DISABLE_PLUGINS", "RAGLOOM_POLICY_FILE", "RAGLOOM_PLUGINS_AUTOLOAD",
                "RAGLOOM_ALLOW_PLUGINS"):
        monkeypatch.delenv(var, raising=False)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    return work


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_where_the_policy_file_is_found_and_its_precedence(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = Path.cwd()
    assert policy_in_force().empty
    # a pyproject.toml without [tool.ragloom] is passed over on the way up
    _write(work / "pyproject.toml", "[project]\nname = 'x'\n")
    _write(tmp_path / "pyproject.toml", "[tool.ragloom]\nblock-plugins = ['from-pyproject']\n")
    assert policy_in_force().block == {"from-pyproject": str(tmp_path / "pyproject.toml")}
    # a ragloom.toml nearer wins; in one folder, ragloom.toml before pyproject.toml
    _write(work / "pyproject.toml", "[tool.ragloom]\nblock-plugins = ['near-pyproject']\n")
    _write(work / "ragloom.toml", "block-plugins = ['Near_Toml']\n")
    assert set(policy_in_force().block) == {"near-toml"}  # names are normalized
    # the environment variable names the file outright
    named = _write(tmp_path / "elsewhere" / "org.toml", "block-plugins = ['named']\n")
    monkeypatch.setenv("RAGLOOM_POLICY_FILE", str(named))
    assert policy_in_force().block == {"named": str(named)}
    assert policy_in_force().sources == [str(named)]


@pytest.mark.parametrize(
    ("text", "key", "words"),
    [
        ("block-plugins = 'x'\n", "block-plugins", "valid list"),
        ("blok-plugins = ['x']\n", "blok-plugins", "Extra inputs"),
        ("[default-policy.chunkr]\nmax_attempts = 2\n", "default-policy", "unknown kind"),
        ("[default-policy.chunker]\nmax_attempts = 0\n", "default-policy.chunker", ">= 1"),
        ("[default-policy.chunker]\nretry_on = ['NoSuchError']\n", "default-policy",
         "unknown exception 'NoSuchError'"),
        ("block-plugins = [\n", "", "not valid TOML"),
    ],
)
def test_bad_input_names_the_file_and_the_key(text: str, key: str, words: str) -> None:
    path = _write(Path.cwd() / "ragloom.toml", text)
    with pytest.raises(PolicyFileError) as caught:
        policy_in_force()
    assert str(path) in str(caught.value) and words in str(caught.value)
    assert caught.value.key.startswith(key) and caught.value.source == str(path)
    # the command line: a usage error (exit 2) in one line, no traceback
    assert main(["plugins"]) == 2


def test_bad_input_in_pyproject_names_the_tool_table() -> None:
    _write(Path.cwd() / "pyproject.toml", "[tool.ragloom]\nrequire-wrappers = [1]\n")
    with pytest.raises(PolicyFileError, match=r"tool\.ragloom\.require-wrappers\.0"):
        Registry()


def test_blocked_before_import_and_a_blocked_clash_goes_away(site: Site) -> None:
    site.dist("ragloom-pa", {"ragloom.chunkers": {"same": "pol_a:Same"}}, {"pol_a": SAME})
    site.dist(
        "ragloom-pb",
        {"ragloom.chunkers": {"same": "pol_b:Same"}, "ragloom.plugins": {"pb": "pol_b_hooks"}},
        {"pol_b": SAME, "pol_b_hooks": "raise RuntimeError('imported although blocked')\n"},
    )
    with pytest.raises(PluginConflictError, match="provided by both"):
        Registry().resolve("chunker", "same")
    policy = _write(Path.cwd() / "ragloom.toml", "block-plugins = ['ragloom-pb']\n")
    registry = Registry()
    assert registry.resolve("chunker", "same").__module__ == "pol_a"
    assert registry.broken == {}  # the hook module was never imported
    assert not site.imported("pol_b_hooks") and not site.imported("pol_b")
    with pytest.raises(PluginBlockedError, match=f"blocked by the policy in {policy}"):
        registry.resolve("chunker", "ragloom-pb:same")
    (info,) = [i for i in discover_plugins() if i.dist == "ragloom-pb"]
    assert info.status == "blocked" and str(policy) in info.reason


def test_an_allowlist_loads_only_what_it_names(site: Site) -> None:
    site.dist("ragloom-pa", {"ragloom.chunkers": {"same": "pol_a:Same"}}, {"pol_a": SAME})
    _write(Path.cwd() / "ragloom.toml", "allow-plugins = ['ragloom-text']\n")
    with pytest.raises(PluginBlockedError, match="not in the allow-plugins list"):
        Registry().resolve("chunker", "same")


def test_policy_defaults_and_required_wrappers(site: Site, monkeypatch: pytest.MonkeyPatch) -> None:
    site.dist("ragloom-wrap", {"ragloom.plugins": {"wrap": "pol_wrap"}}, {"pol_wrap": WRAPPER})
    _write(
        Path.cwd() / "ragloom.toml",
        "require-wrappers = ['ragloom-wrap']\n"
        "[default-policy.step]\nmax_attempts = 5\nretry_on = ['TimeoutError']\n",
    )
    step = FunctionStep(lambda d: d, name="Echo")
    pipeline = Pipeline(step)
    # the file's fields win over the plugin's hook; the hook fills the rest
    policy = step.effective_policy(pipeline.context([]))
    assert (policy.max_attempts, policy.concurrency, policy.timeout) == (5, 2, 9.0)
    assert policy.retry_on == (TimeoutError,)
    # what the step sets itself still wins
    own = FunctionStep(lambda d: d, name="Own", policy=Policy(max_attempts=1))
    assert own.effective_policy(Pipeline(own).context([])).max_attempts == 1
    assert len(pipeline.run_sync([Document(id="a", content="x")])) == 1
    assert sys.modules["pol_wrap"].CALLS == ["Echo"]

    with pytest.raises(PolicyViolationError, match="built with plugin_hooks=False"):
        Pipeline(step, plugin_hooks=False).run_sync([])
    monkeypatch.setenv("RAGLOOM_DISABLE_PLUGINS", "ragloom-wrap")
    with pytest.raises(PolicyViolationError, match="disabled by RAGLOOM_DISABLE_PLUGINS"):
        Pipeline(step).run_sync([])
    monkeypatch.delenv("RAGLOOM_DISABLE_PLUGINS")
    _write(Path.cwd() / "ragloom.toml", "require-wrappers = ['ragloom-missing']\n")
    with pytest.raises(PolicyViolationError, match="ragloom-missing is not installed"):
        Pipeline(step).run_sync([])


def test_policy_defaults_without_any_plugin_hook() -> None:
    _write(Path.cwd() / "ragloom.toml", "[default-policy.step]\nconcurrency = 3\n")
    step = FunctionStep(lambda d: d, name="Echo")
    assert step.effective_policy(Pipeline(step).context([])).concurrency == 3
    # a pipeline without plugin hooks opts out of them, policy defaults included
    bare = Pipeline(step, plugin_hooks=False)
    assert step.effective_policy(bare.context([])).concurrency == 8


PLATFORM = """
from ragloom.plugins.hookspecs import hookimpl

@hookimpl
def ragloom_policy():
    return {
        "block-plugins": ["ragloom-pa", "ragloom-pb"],
        "require-wrappers": ["ragloom-pb"],
        "default-policy": {"chunker": {"max_attempts": 7, "timeout": 30.0}},
    }
"""


def test_a_platform_plugins_policy_and_the_operator_winning(site: Site) -> None:
    site.dist(
        "ragloom-platform",
        {"ragloom.policy": {"platform": "platform_policy"},
         "ragloom.chunkers": {"plat": "platform_rest:Same"}},
        {"platform_policy": PLATFORM, "platform_rest": SAME},
    )
    site.dist("ragloom-pa", {"ragloom.chunkers": {"same": "pol_a:Same"}}, {"pol_a": SAME})
    policy = policy_in_force()
    assert site.imported("platform_policy") and not site.imported("platform_rest")
    assert policy.block == {
        "ragloom-pa": "plugin ragloom-platform 0.3", "ragloom-pb": "plugin ragloom-platform 0.3"
    }
    with pytest.raises(PluginBlockedError, match="plugin ragloom-platform 0.3"):
        Registry().resolve("chunker", "same")
    # the operator's file wins on every conflict
    operator = _write(
        Path.cwd() / "ragloom.toml",
        "allow-plugins = ['ragloom-pa', 'ragloom-platform']\nblock-plugins = ['ragloom-pb']\n"
        "[default-policy.chunker]\nmax_attempts = 2\n",
    )
    policy = policy_in_force()
    assert policy.sources == [str(operator), "plugin ragloom-platform 0.3"]
    assert policy.block == {"ragloom-pb": str(operator)}
    assert policy.require_wrappers == {}
    assert (policy.defaults["chunker"].max_attempts, policy.defaults["chunker"].timeout) == (
        2, 30.0
    )
    assert any("ragloom-pa" in note for note in policy.overruled)
    assert any("requires the wrappers of ragloom-pb" in note for note in policy.overruled)
    assert Registry().resolve("chunker", "same").__module__ == "pol_a"


def test_a_platform_policy_that_fails_stops_runs_until_blocked(
    site: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    site.dist(
        "ragloom-platform", {"ragloom.policy": {"p": "platform_bad"}},
        {"platform_bad": "def ragloom_policy():\n    return {'block-plugins': 3}\n"},
    )
    with pytest.raises(PolicyFileError, match=r"plugin ragloom-platform 0\.3: block-plugins"):
        Registry()
    monkeypatch.setenv("RAGLOOM_DISABLE_PLUGINS", "ragloom-platform")
    assert policy_in_force().empty


def test_plugins_check_shows_the_policy(site: Site, capsys: pytest.CaptureFixture[str]) -> None:
    site.dist("ragloom-pa", {"ragloom.chunkers": {"same": "pol_a:Same"}}, {"pol_a": SAME})
    assert main(["plugins", "--check"]) == 0
    assert "Policy: none" in capsys.readouterr().out
    path = _write(
        Path.cwd() / "ragloom.toml",
        "block-plugins = ['ragloom-pa']\n[default-policy.chunker]\ntimeout = 5.0\n",
    )
    assert main(["plugins", "--check"]) == 0
    out = capsys.readouterr().out
    assert f"Policy in force, from {path}:" in out
    assert f"block-plugins: ragloom-pa (from {path})" in out
    assert f"default-policy.chunker: timeout=5.0 (from {path})" in out
    assert "blocked by it: ragloom-pa" in out
    assert main(["plugins", "--check", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)["policy"]
    assert shown["blocked"] == ["ragloom-pa"] and shown["sources"] == [str(path)]
    assert shown["default_policy"]["chunker"]["policy"] == {"timeout": 5.0}
