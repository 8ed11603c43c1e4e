"""``ragloom plugins``: the click command (``ragloom plugins`` usually skips click: see
:func:`ragloom.cli.main`)."""

from __future__ import annotations

import click

from ._plugin_list import plugins_report

__all__ = ["plugins"]


@click.command("plugins")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@click.option(
    "--check",
    "--load",
    "check",
    is_flag=True,
    help="Import every provider to find broken plugins (slower).",
)
def plugins(as_json: bool, check: bool) -> int:
    """List installed plugins: distribution, version, what each provides, and its status.

    Status is available (installed, not imported), loaded (imported fine, with --check),
    broken (cannot be used; the reason says why) or blocked (disabled by
    RAGLOOM_DISABLE_PLUGINS, not allow-listed when RAGLOOM_PLUGINS_AUTOLOAD=0, or by the
    organisation's policy). --check also shows the policy in force and where it came from.
    """
    text, status = plugins_report(as_json, check)
    click.echo(text)
    return status
