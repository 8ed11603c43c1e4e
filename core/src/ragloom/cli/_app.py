"""The top-level click group: commands are imported lazily, errors become exit statuses."""

from __future__ import annotations

import contextlib
import importlib
import logging
import os
import signal
import sys
from collections.abc import Iterator
from typing import Any

import click

from .. import __version__
from .._printable import printable
from ..errors import (
    CacheError,
    ConfigurationError,
    InvalidInputError,
    ItemProcessingError,
    OutputError,
    PluginError,
)
from ..stores import StoreError
from ._commands import BUILTIN_COMMANDS

__all__ = [
    "EXIT_FAILED",
    "EXIT_INTERNAL",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_TERMINATED",
    "EXIT_USAGE",
    "Terminated",
    "cli",
    "error",
    "interrupted",
    "run",
]

EXIT_OK = 0
#: Some items failed (each is reported); everything else was done.
EXIT_FAILED = 1
#: A usage or configuration error: nothing was done.
EXIT_USAGE = 2
#: An unexpected error inside ragloom or a plugin (a bug): the traceback is saved to a file.
EXIT_INTERNAL = 70
#: Stopped by Ctrl-C (SIGINT).
EXIT_INTERRUPTED = 130
#: Stopped by SIGTERM (``timeout``, systemd, Kubernetes).
EXIT_TERMINATED = 143


class Terminated(KeyboardInterrupt):
    """Stands for SIGTERM where a ``KeyboardInterrupt`` would be raised."""


_terminated = False


def interrupted(exc: BaseException, what: str = "") -> int:
    """Report an interrupted run (``what`` says what was kept or not written); the status."""
    _stop_watchdog()
    terminated = _terminated or isinstance(exc, Terminated)
    word = "terminated" if terminated else "interrupted"
    click.echo(f"\nragloom: {word}" + (f"; {printable(what)}" if what else ""), err=True)
    return EXIT_TERMINATED if terminated else EXIT_INTERRUPTED

#: name -> (module, attribute, one-line help) of the built-in commands (click-free table).
COMMANDS = BUILTIN_COMMANDS


class LazyGroup(click.Group):
    """A group whose commands live in modules imported on first use.

    Besides the built-in commands, it offers the commands plugins contribute (the ``command``
    kind: a ``ragloom.commands`` entry point, or ``register("command", name, cmd)`` in a
    ``ragloom_register`` hook). A plugin's command is imported only when it runs; ``--help``
    lists it with the distribution that provides it. A plugin command named like a built-in
    one never replaces it: it runs as ``ragloom DIST:NAME``; two plugins' commands of one name
    run by their qualified names only (``ragloom plugins --check`` reports both clashes).
    """

    def _registry(self, ctx: click.Context) -> Any:
        """The plugin registry of this invocation (entry points read, hook modules loaded,
        no command imported), made once."""
        meta = ctx.find_root().meta
        if "ragloom.registry" not in meta:
            from ..plugins import Registry

            meta["ragloom.registry"] = Registry()
        return meta["ragloom.registry"]

    def _plugin_names(self, ctx: click.Context) -> list[tuple[str, Any]]:
        """``(name to type, provider)`` of every plugin command, qualified where the name
        clashes with a built-in or another plugin's command."""
        out = []
        for name, providers in sorted(self._registry(ctx).providers("command").items()):
            clash = len(providers) > 1 or name in COMMANDS or name in self.commands
            out += [(p.qualified if clash else name, p) for p in providers]
        return out

    def list_commands(self, ctx: click.Context) -> list[str]:
        plugin = [name for name, _p in self._plugin_names(ctx)]
        return sorted(set(COMMANDS) | set(self.commands)) + plugin

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.commands:
            return self.commands[cmd_name]
        entry = COMMANDS.get(cmd_name)
        if entry is None:
            return self._plugin_command(ctx, cmd_name)
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

    def _plugin_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """A plugin's command, imported now (``None``: no plugin has one of that name)."""
        from ..errors import PluginNotFoundError

        try:
            command: click.Command = self._registry(ctx).resolve("command", cmd_name)
        except PluginNotFoundError:
            return None
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, COMMANDS[name][2]) for name in sorted(COMMANDS)]
        rows += [
            (name, cmd.get_short_help_str())
            for name, cmd in sorted(self.commands.items())
            if name not in COMMANDS
        ]
        with formatter.section("Commands"):
            formatter.write_dl(rows)
        try:
            plugin = self._plugin_names(ctx)
        except (ConfigurationError, PluginError) as exc:
            with formatter.section("Plugin commands"):
                formatter.write_text(f"not listed: {printable(str(exc))}")
            return
        if plugin:
            with formatter.section("Plugin commands"):
                formatter.write_dl([(name, _plugin_help(p)) for name, p in plugin])


def _plugin_help(provider: Any) -> str:
    """A plugin command's line in ``--help``: its short help when it is already imported (a
    command registered by a hook), and always the distribution that provides it."""
    where = f"[{provider.dist} {provider.version}]"
    command = provider.factory
    if isinstance(command, click.Command):
        return f"{command.get_short_help_str(limit=60)} {where}"
    return f"a command of {provider.dist} {provider.version} (imported when it runs)"


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
@click.option("-v", "--verbose", count=True, help="More log output (-v info, -vv debug).")
@click.option(
    "--log-level",
    type=click.Choice(["debug", "info", "warning", "error"], case_sensitive=False),
    default=None,
    help="Log level of ragloom's messages on stderr [default: warning].",
)
def cli(verbose: int, log_level: str | None) -> None:
    """ragloom: retrieval-augmented-generation pipelines from pluggable async steps.

    Exit status: 0 success, 1 some items failed, 2 usage or configuration error,
    70 internal error (a bug: the traceback is saved to a file), 130 interrupted (Ctrl-C),
    143 terminated (SIGTERM).
    """
    level = (
        getattr(logging, log_level.upper())
        if log_level
        else {0: logging.WARNING, 1: logging.INFO}.get(verbose, logging.DEBUG)
    )
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_OneLineFormatter("ragloom: %(levelname)s: %(message)s"))
    logger = logging.getLogger("ragloom")
    logger.handlers[:] = [handler]
    logger.setLevel(level)
    logger.propagate = False


class _OneLineFormatter(logging.Formatter):
    """Log messages with control characters escaped (a file name in a warning cannot forge
    a line); a traceback attached to a record keeps its lines."""

    def formatMessage(self, record: logging.LogRecord) -> str:
        record.message = printable(record.message)
        return super().formatMessage(record)


def error(message: str) -> None:
    """Print ``ragloom: error: message`` to stderr, on one line (control characters, e.g. a
    newline in a file name, are escaped)."""
    click.echo(f"ragloom: error: {printable(message)}", err=True)


#: Seconds a SIGTERM waits for the run to unwind before it is raised on the spot (only a step
#: stuck in synchronous code that never returns to the event loop takes that long).
SIGTERM_GRACE = 2.0
_signal_count = 0
_watchdog: Any = None


def _stop_watchdog() -> None:
    global _watchdog
    if _watchdog is not None:
        _watchdog.cancel()
        _watchdog = None


def _on_sigterm(signum: int, frame: Any) -> None:
    """SIGTERM stops a run exactly as Ctrl-C does, and exits 143.

    Inside a run it is handed to the event loop's Ctrl-C handler, which cancels the run so that
    it unwinds in order (the temporary output is removed, the cache stays consistent). A step
    stuck in synchronous code never lets that cancellation in: if the run is still going after
    :data:`SIGTERM_GRACE` seconds, a second interrupt is sent, which the handler raises on the
    spot (as a second Ctrl-C does). Outside a run, it is raised at once.
    """
    global _terminated, _signal_count, _watchdog
    from .._interrupts import note

    _terminated = True
    _signal_count += 1
    note()
    handler = signal.getsignal(signal.SIGINT)
    if not callable(handler) or handler is signal.default_int_handler or _signal_count > 1:
        raise Terminated
    handler(signal.SIGINT, frame)
    import threading

    main = threading.main_thread().ident
    if main is not None:
        # The second signal is a SIGTERM to the main thread: this handler then raises on the
        # spot, whatever the disposition of SIGINT (it may be ignored, or blocked).
        _watchdog = threading.Timer(SIGTERM_GRACE, signal.pthread_kill, (main, signal.SIGTERM))
        _watchdog.daemon = True
        _watchdog.start()


def _waiting_for_the_step(count: int) -> None:
    """On the first Ctrl-C of a run: say at once that the run stops once the running steps
    return (a step stuck in synchronous code never does), and that a second Ctrl-C stops it
    now. Runs in the signal handler: one unbuffered write, no locks."""
    if count != 1 or _terminated:
        return
    with contextlib.suppress(OSError):
        os.write(
            2,
            b"\nragloom: stopping: waiting for the running steps to return; press Ctrl-C "
            b"again to stop now\n",
        )


@contextlib.contextmanager
def _signals() -> Iterator[None]:
    """SIGTERM stops the command as Ctrl-C does (exit 143), whatever SIGINT's disposition.

    When SIGINT was ignored at start (a background job of a non-interactive shell, some CI
    runners), it stays ignored: it is blocked for the process, and Python's handler is put in
    place only so that the event loop installs its own, which SIGTERM then uses to stop the
    run in order (a blocked SIGINT never reaches it). Both are restored at the end, the
    ignored disposition first, which discards a SIGINT still pending.
    """
    global _terminated, _signal_count
    from .._interrupts import on_interrupt

    _terminated = False
    _signal_count = 0
    try:
        previous = signal.signal(signal.SIGTERM, _on_sigterm)
    except ValueError:  # not the main thread: leave signals alone
        yield
        return
    ignored = signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    if ignored:
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        signal.signal(signal.SIGINT, signal.default_int_handler)
    remove = on_interrupt(_waiting_for_the_step)
    try:
        yield
    finally:
        remove()
        _stop_watchdog()
        signal.signal(signal.SIGTERM, previous)
        if ignored:
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def _internal_error(exc: BaseException) -> int:
    """Report a bug in one line; save the traceback to a file whose path is printed."""
    import tempfile
    import traceback

    fd, path = tempfile.mkstemp(prefix="ragloom-crash-", suffix=".txt")
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(f"ragloom {__version__}\n")
        traceback.print_exception(exc, file=handle)
    error(
        f"internal error: {type(exc).__name__}: {exc} (a bug in ragloom or a plugin; the "
        f"traceback is in {path})"
    )
    return EXIT_INTERNAL


def _broken_pipe(exc: BaseException) -> bool:
    """Whether ``exc`` is (or was raised while handling) a write to a closed pipe."""
    import errno

    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, BrokenPipeError) or (
            isinstance(current, OSError) and current.errno == errno.EPIPE
        ):
            return True
        current = current.__cause__ or current.__context__
    return False


def _closed_stdout() -> int:
    """Standard output was closed early (piped into ``head``): a normal, quiet end, like other
    Unix tools. Later writes (Python's own flush at exit included) go to the null device."""
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    return EXIT_OK


def run(argv: list[str] | None) -> int:
    """Run the group; turn every outcome into an exit status (no traceback for user errors)."""
    try:
        with _signals():
            result = cli.main(args=argv, prog_name="ragloom", standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("ragloom: interrupted", err=True)
        return EXIT_INTERRUPTED
    except KeyboardInterrupt as exc:
        return interrupted(exc)
    except click.ClickException as exc:
        # A path argument holding a newline is shown escaped (click types the attribute as
        # Final; it is a plain attribute, read again by show()).
        setattr(exc, "message", printable(exc.message))  # noqa: B010
        exc.show()
        return exc.exit_code
    except click.exceptions.Exit as exc:
        return int(exc.exit_code)
    except ItemProcessingError as exc:
        error(f"run aborted: {exc}")
        return EXIT_FAILED
    except (
        ConfigurationError, PluginError, CacheError, InvalidInputError, StoreError, OutputError
    ) as exc:
        error(str(exc))
        return EXIT_USAGE
    except RecursionError as exc:
        error(
            f"the pipeline is nested too deeply to run ({exc}): chain or nest fewer steps"
        )
        return EXIT_USAGE
    except MemoryError:
        error("out of memory: lower --max-file-size or split the input")
        return EXIT_USAGE
    except BrokenPipeError:
        return _closed_stdout()
    except SystemExit as exc:
        # click turns a closed pipe (EPIPE) into sys.exit(1), after wrapping sys.stdout so
        # that its flush at exit stays quiet (click 8.1 exits with the OSError as context).
        if _broken_pipe(exc) or type(sys.stdout).__name__.lstrip("_") == "PacifyFlushWrapper":
            return _closed_stdout()
        return _internal_error(exc)
    except BaseException as exc:  # noqa: BLE001 - a bug: one line, and the traceback saved
        if _broken_pipe(exc):
            return _closed_stdout()
        return _internal_error(exc)
    if isinstance(result, int):
        return result
    return EXIT_OK
