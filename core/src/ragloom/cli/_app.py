"""The top-level click group: commands are imported lazily, errors become exit statuses."""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any

import click

from .. import __version__
from ..errors import CacheError, ConfigurationError, PluginError

__all__ = ["EXIT_FAILED", "EXIT_INTERRUPTED", "EXIT_OK", "EXIT_USAGE", "cli", "run"]

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130

#: name -> (module, attribute, one-line help). Modules are imported only when the command runs.
COMMANDS: dict[str, tuple[str, str, str]] = {
    "ingest": ("ragloom.cli._ingest", "ingest", "Chunk files and folders into a JSONL file."),
    "plan": ("ragloom.cli._plan", "plan", "Decompose questions and route each sub-query."),
    "run": ("ragloom.cli._run", "run", "Run a pipeline file on paths or questions."),
    "plugins": ("ragloom.cli._plugins", "plugins", "List installed plugins and their status."),
    "cache": ("ragloom.cli._cache", "cache", "Show or clear the step cache."),
    "new-plugin": (
        "ragloom.cli.new_plugin",
        "main",
        "Create a new plugin project from the template.",
    ),
}


class LazyGroup(click.Group):
    """A group whose commands live in modules imported on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(COMMANDS) | set(self.commands))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.commands:
            return self.commands[cmd_name]
        entry = COMMANDS.get(cmd_name)
        if entry is None:
            return None
        module_name, attr, short = entry
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name != module_name:
                raise
            return _unavailable(cmd_name, short)
        target = getattr(module, attr)
        if isinstance(target, click.Command):
            return target
        return _passthrough(cmd_name, short, target)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, COMMANDS[name][2]) for name in sorted(COMMANDS)]
        rows += [
            (name, cmd.get_short_help_str())
            for name, cmd in sorted(self.commands.items())
            if name not in COMMANDS
        ]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


def _unavailable(name: str, short: str) -> click.Command:
    @click.command(
        name,
        help=f"{short} (not available in this installation)",
        add_help_option=False,
        context_settings={"ignore_unknown_options": True, "allow_extra_args": True},
    )
    def command() -> int:
        click.echo(f"ragloom: `ragloom {name}` is not available in this installation", err=True)
        return EXIT_USAGE

    return command


def _passthrough(name: str, short: str, target: Any) -> click.Command:
    """Wrap a plain ``main(argv) -> int`` function as a command that gets its raw arguments."""

    @click.command(
        name,
        help=short,
        add_help_option=False,
        context_settings={"ignore_unknown_options": True, "allow_extra_args": True},
    )
    @click.pass_context
    def command(ctx: click.Context) -> int:
        status = target(list(ctx.args))
        return int(status) if status is not None else EXIT_OK

    return command


@click.group(
    cls=LazyGroup,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.version_option(__version__, "--version", prog_name="ragloom")
def cli() -> None:
    """ragloom: retrieval-augmented-generation pipelines from pluggable async steps.

    Exit status: 0 success, 1 some items failed, 2 usage or configuration error,
    130 interrupted.
    """


def error(message: str) -> None:
    """Print ``ragloom: error: message`` to stderr."""
    click.echo(f"ragloom: error: {message}", err=True)


def run(argv: list[str] | None) -> int:
    """Run the group; turn every outcome into an exit status (no traceback for user errors)."""
    try:
        result = cli.main(args=argv, prog_name="ragloom", standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("ragloom: interrupted", err=True)
        return EXIT_INTERRUPTED
    except KeyboardInterrupt:
        click.echo("\nragloom: interrupted", err=True)
        return EXIT_INTERRUPTED
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    except click.exceptions.Exit as exc:
        return int(exc.exit_code)
    except (ConfigurationError, PluginError, CacheError) as exc:
        error(str(exc))
        return EXIT_USAGE
    except BrokenPipeError:
        # stdout was closed early (piped into `head`): stop quietly, and keep Python from
        # complaining again when it flushes stdout at exit.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_OK
    if isinstance(result, int):
        return result
    return EXIT_OK
