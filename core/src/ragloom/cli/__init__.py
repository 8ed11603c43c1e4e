"""The ``ragloom`` command line (needs the ``cli`` extra: ``pip install 'ragloom[cli]'``).

Importing this package imports nothing but the standard library. :func:`main` imports click,
and each command's module (with pydantic, anyio or plugins, when it needs them) only when that
command runs. ``ragloom plugins`` with only its own flags does not even import click: it reads
entry-point metadata and prints, so it starts fast.

Exit status: 0 success, 1 some items failed, 2 usage or configuration error, 70 internal error
(the traceback is saved to a file), 130 interrupted (Ctrl-C), 143 terminated (SIGTERM).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

__all__ = ["CLI_MISSING", "main"]

#: The libraries of the ``cli`` extra, by import name.
CLI_LIBRARIES = ("click", "rich")

CLI_MISSING = "the ragloom command needs {missing}, which is not installed: {hint}"

_PLUGINS_FLAGS = frozenset({"--json", "--check", "--load"})


def _missing_libraries() -> list[str]:
    """The libraries of the ``cli`` extra that cannot be imported."""
    import importlib.util

    missing = []
    for name in CLI_LIBRARIES:
        try:
            found = importlib.util.find_spec(name) is not None
        except (ImportError, ValueError):  # a None entry in sys.modules, a broken finder
            found = False
        if not found:
            missing.append(name)
    return missing


def _plugins_fast(flags: list[str]) -> int:
    """``ragloom plugins [--json] [--check]`` without click."""
    from ..errors import PolicyFileError
    from ._plugin_list import plugins_report

    try:
        text, status = plugins_report("--json" in flags, "--check" in flags or "--load" in flags)
    except PolicyFileError as exc:  # the organisation's policy cannot be read: nothing to list
        from .._printable import printable

        sys.stderr.write(f"ragloom: error: {printable(str(exc))}\n")
        return 2
    try:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()
    except BrokenPipeError:
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return status


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``ragloom`` command with ``argv`` (default: ``sys.argv[1:]``); return the status."""
    args = list(sys.argv[1:] if argv is None else argv)
    missing = _missing_libraries()
    if missing:
        from .._install import install_hint

        message = CLI_MISSING.format(
            missing=" and ".join(missing), hint=install_hint("ragloom", "cli")
        )
        sys.stderr.write(f"ragloom: {message}\n")
        return 2
    if args and args[0] == "plugins" and set(args[1:]) <= _PLUGINS_FLAGS:
        return _plugins_fast(args[1:])
    from ._app import run

    return run(args)
