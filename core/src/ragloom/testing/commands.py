"""The command contract: a plugin's ``ragloom`` subcommand (a click command) checked as the
``ragloom`` group runs it.

Example::

    import pytest
    from ragloom.testing import CommandContract

    from acme.commands import stats

    class TestStats(CommandContract):
        @pytest.fixture
        def command(self):
            return stats

        @pytest.fixture
        def command_name(self):  # the entry-point name (None: not checked)
            return "acme-stats"

        @pytest.fixture
        def command_args(self, tmp_path):  # one invocation that must succeed
            path = tmp_path / "chunks.jsonl"
            path.write_text('{"id": "a", "content": "x"}\\n')
            return [str(path)]

What is checked: the command is a :class:`click.Command` with help text (``ragloom --help``
shows its first line once imported) and a ``--help`` that exits 0; an unknown option is a usage
error (exit 2, no traceback); ``command_args`` run to exit 0 as the ``ragloom`` group runs a
subcommand (a command returns its exit status, or ``None`` for 0, as built-in ones do); and, when
``command_name`` is given, that name is not a built-in command's (the built-in one would run
instead) and the installed plugins resolve it to this very command, found by its entry point
or ``register("command", ...)``.
"""

from __future__ import annotations

from typing import Any

import pytest

__all__ = ["CommandContract"]


def _runner() -> Any:
    from click.testing import CliRunner

    return CliRunner()


class CommandContract:
    """The command kind's contract. Provide ``command`` (the click command); optionally
    ``command_name`` (its registered name) and ``command_args`` (a successful invocation)."""

    @pytest.fixture
    def command(self) -> Any:  # pragma: no cover - overridden
        raise NotImplementedError("provide a `command` fixture: the plugin's click command")

    @pytest.fixture
    def command_name(self) -> str | None:
        return None

    @pytest.fixture
    def command_args(self) -> list[str] | None:
        return None

    def test_is_a_click_command_with_help(self, command: Any) -> None:
        import click

        assert isinstance(command, click.Command), (
            f"a command must be a click.Command (use @click.command), got "
            f"{type(command).__name__}"
        )
        assert (command.help or command.short_help or "").strip(), (
            "give the command a docstring or help=: `ragloom --help` shows its first line"
        )

    def test_help_exits_zero(self, command: Any) -> None:
        result = _runner().invoke(command, ["--help"])
        assert result.exit_code == 0, result.output
        assert "Usage:" in result.output

    def test_an_unknown_option_is_a_usage_error(self, command: Any) -> None:
        if command.ignore_unknown_options:
            pytest.skip("the command takes unknown options as arguments")
        result = _runner().invoke(command, ["--no-such-option-of-the-contract"])
        assert result.exit_code == 2, result.output
        assert result.exception is None or isinstance(result.exception, SystemExit)

    def test_a_valid_invocation_succeeds(
        self, command: Any, command_args: list[str] | None
    ) -> None:
        if command_args is None:
            pytest.skip("no `command_args` fixture: one invocation that must succeed")
        import click

        # as the ragloom group runs a subcommand: not standalone, the return value the status
        group = click.Group("ragloom", commands={"under-test": command})
        result = _runner().invoke(group, ["under-test", *command_args], standalone_mode=False)
        assert result.exception is None, f"{result.exception!r}\n{result.output}"
        status = result.return_value
        assert status in (None, 0), f"exit status {status!r}, expected 0:\n{result.output}"

    def test_registered_under_its_name(self, command: Any, command_name: str | None) -> None:
        if command_name is None:
            pytest.skip("no `command_name` fixture")
        from ..cli._commands import BUILTIN_COMMANDS
        from ..plugins import Registry

        short = command_name.rpartition(":")[2]
        assert short not in BUILTIN_COMMANDS, (
            f"{short!r} is a built-in ragloom command: `ragloom {short}` runs the built-in "
            "one; choose another name"
        )
        assert Registry().resolve("command", command_name) is command
