"""Commands plugins add to ``ragloom``: found by entry point (imported only when they run) or
registered by a hook, listed in ``--help`` with their distribution, and clashes reported."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from ragloom.cli import main
from ragloom.plugins import Registry
from support.fake_dists import Site, make_site

HELLO = """
import click

@click.command("hello")
@click.option("--name", default="world")
def hello(name):
    \"\"\"Say hello.\"\"\"
    click.echo(f"hello {name}")
    return 0
"""

INGEST = """
import click

@click.command()
def ingest():
    \"\"\"A plugin's own ingest.\"\"\"
    click.echo("the plugin's ingest")
"""

HOOK = """
import click
from ragloom.plugins.hookspecs import hookimpl

@click.command()
def audit():
    \"\"\"Report the audit trail.\"\"\"
    click.echo("audit by hook")
    return 3

@hookimpl
def ragloom_register(register):
    register("command", "audit-trail", audit)
"""


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Site]:
    yield from make_site(tmp_path, monkeypatch)


@pytest.fixture(autouse=True)
def _no_operator_settings(monkeypatch: pytest.MonkeyPatch, tmp_path: object) -> None:
    for var in ("RAGLOOM_DISABLE_PLUGINS", "RAGLOOM_POLICY_FILE", "RAGLOOM_PLUGINS_AUTOLOAD"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(str(tmp_path))


def test_an_entry_point_command_is_listed_then_imported_when_it_runs(
    site: Site, capsys: pytest.CaptureFixture[str]
) -> None:
    site.dist("ragloom-hello", {"ragloom.commands": {"hello": "cmd_hello:hello"}},
              {"cmd_hello": HELLO})
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    assert "Plugin commands:" in out
    assert "hello  a command of ragloom-hello 0.3 (imported when it runs)" in out
    assert not site.imported("cmd_hello")
    assert main(["hello", "--name", "ragloom"]) == 0
    assert capsys.readouterr().out == "hello ragloom\n"
    assert site.imported("cmd_hello")
    # ragloom plugins lists it with its distribution, imports nothing
    assert main(["plugins", "--json"]) == 0
    (plugin,) = [p for p in json.loads(capsys.readouterr().out)["plugins"]
                 if p["distribution"] == "ragloom-hello"]
    assert plugin["provides"] == {"command": ["hello"]}


def test_a_hook_registered_command_runs_and_returns_its_status(
    site: Site, capsys: pytest.CaptureFixture[str]
) -> None:
    site.dist("ragloom-audit", {"ragloom.plugins": {"audit": "cmd_audit_hooks"}},
              {"cmd_audit_hooks": HOOK})
    assert main(["--help"]) == 0
    assert "audit-trail  Report the audit trail. [ragloom-audit 0.3]" in capsys.readouterr().out
    assert main(["audit-trail"]) == 3
    assert capsys.readouterr().out == "audit by hook\n"
    assert main(["plugins", "--check"]) == 0
    assert "commands: audit-trail (by hook)" in capsys.readouterr().out


def test_clashes_with_a_builtin_and_between_plugins(
    site: Site, capsys: pytest.CaptureFixture[str]
) -> None:
    site.dist("ragloom-one", {"ragloom.commands": {"ingest": "cmd_one:ingest",
                                                   "hello": "cmd_one_hello:hello"}},
              {"cmd_one": INGEST, "cmd_one_hello": HELLO})
    site.dist("ragloom-two", {"ragloom.commands": {"hello": "cmd_two:hello"}},
              {"cmd_two": HELLO})
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    for name in ("ragloom-one:ingest", "ragloom-one:hello", "ragloom-two:hello"):
        assert re.search(rf"^  {name} +a command of", out, flags=re.M), name
    # the built-in command still runs; the plugin's by its qualified name
    assert main(["ingest", "--help"]) == 0
    assert "Chunk the files under PATH" in capsys.readouterr().out
    assert main(["ragloom-one:ingest"]) == 0
    assert capsys.readouterr().out == "the plugin's ingest\n"
    # two plugins: the short name fails with both named, the qualified names work
    assert main(["hello"]) == 2
    err = capsys.readouterr().err
    assert "command name 'hello' is provided by both" in err
    assert "ragloom-one 0.3" in err and "ragloom-two 0.3" in err
    assert main(["ragloom-two:hello"]) == 0
    assert capsys.readouterr().out == "hello world\n"
    assert main(["plugins", "--check"]) == 1
    out = capsys.readouterr().out
    assert "command name 'ingest' is provided by both ragloom 0.1.0" in out
    assert "`ragloom ingest` runs the built-in command" in out
    assert "command name 'hello' is provided by both" in out


def test_blocked_broken_and_unknown_commands(
    site: Site, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    site.dist("ragloom-hello", {"ragloom.commands": {"hello": "cmd_hello:hello",
                                                     "notcmd": "json:dumps"}},
              {"cmd_hello": HELLO})
    assert main(["notcmd"]) == 2
    assert "is a function, not a click.core.Command" in capsys.readouterr().err
    assert main(["no-such-command"]) == 2
    assert "No such command" in capsys.readouterr().err
    monkeypatch.setenv("RAGLOOM_DISABLE_PLUGINS", "ragloom-hello")
    assert main(["hello"]) == 2
    assert "provided by ragloom-hello 0.3, which is blocked" in capsys.readouterr().err
    assert main(["--help"]) == 0
    assert "hello" not in capsys.readouterr().out.split("Commands:")[1]


def test_register_accepts_the_command_kind() -> None:
    import click

    registry = Registry(entry_points=False)
    command = click.Command("x", help="X.")
    registry.register("command", "x", command, dist="ragloom-x")
    assert registry.resolve("command", "x") is command


def test_the_command_contract_catches_what_ragloom_would_trip_on() -> None:
    import click
    from ragloom.testing import CommandContract

    contract = CommandContract()

    @click.command()
    def quiet() -> int:
        return 1

    with pytest.raises(AssertionError, match="give the command a docstring"):
        contract.test_is_a_click_command_with_help(quiet)
    with pytest.raises(AssertionError, match="must be a click.Command"):
        contract.test_is_a_click_command_with_help(print)
    with pytest.raises(AssertionError, match="exit status 1"):
        contract.test_a_valid_invocation_succeeds(quiet, [])
    with pytest.raises(AssertionError, match="built-in ragloom command"):
        contract.test_registered_under_its_name(quiet, "acme:ingest")
    contract.test_help_exits_zero(quiet)
    contract.test_an_unknown_option_is_a_usage_error(quiet)
