"""``ragloom cache info`` and ``ragloom cache clear``: the SQLite step cache."""

from __future__ import annotations

import json
import os

import click

from .._display import format_bytes, render_table
from ._app import EXIT_OK

__all__ = ["cache"]

DEFAULT_CACHE = os.path.join(".ragloom", "cache.sqlite")

_cache_option = click.option(
    "--cache",
    "path",
    default=DEFAULT_CACHE,
    show_default=True,
    type=click.Path(dir_okay=False),
    help="SQLite cache file.",
)


@click.group("cache")
def cache() -> None:
    """Show or clear the SQLite step cache (entries are keyed by step identity)."""


@cache.command("info")
@_cache_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def info(path: str, as_json: bool) -> int:
    """Entries, size, entries per step, and the cost decision recorded per step identity
    (whether replaying it is kept or skipped, from the measured microseconds per item)."""
    if not os.path.exists(path):
        if as_json:
            click.echo(
                json.dumps(
                    {"location": path, "exists": False, "entries": 0, "bytes": 0, "steps": {},
                     "decisions": {}}
                )
            )
        else:
            click.echo(f"no cache at {path}")
        return EXIT_OK
    from ..cache import SQLiteCacheStore

    with SQLiteCacheStore(path) as store:
        details = store.info()
        decisions = {
            identity: _decision_out(record) for identity, record in store.decisions().items()
        }
    if as_json:
        click.echo(
            json.dumps(
                {
                    "location": details.location,
                    "exists": True,
                    "entries": details.entries,
                    "bytes": details.bytes,
                    "steps": details.steps,
                    "decisions": decisions,
                },
                indent=2,
            )
        )
        return EXIT_OK
    click.echo(f"cache:   {details.location}")
    click.echo(f"entries: {details.entries}")
    click.echo(
        f"size:    {format_bytes(details.bytes)} of payload "
        f"({format_bytes(os.path.getsize(path))} on disk)"
    )
    if details.steps:
        click.echo("per step:")
        rows = [(step, str(count)) for step, count in sorted(details.steps.items())]
        click.echo(render_table(("STEP", "ENTRIES"), rows, indent=2))
    if decisions:
        click.echo(
            "cost decisions (replay skip: recomputing is cheaper than the cache, so the step "
            "runs uncached; `ragloom cache clear` forgets them):"
        )
        table = [
            (
                identity,
                _step_shown(d),
                str(d["replay"]),
                _micros(d["compute_us"]),
                _micros(d["replay_us"]),
                str(d["items"]),
            )
            for identity, d in sorted(decisions.items(), key=lambda kv: (_step_shown(kv[1]),
                                                                       kv[0]))
        ]
        click.echo(render_table(
            ("IDENTITY", "STEP", "REPLAY", "COMPUTE US/ITEM", "REPLAY US/ITEM", "ITEMS"),
            table, indent=2,
        ))
    return EXIT_OK


def _decision_out(record: dict[str, object]) -> dict[str, object]:
    """A recorded decision in the shape ``info`` shows (absent fields as ``None``)."""
    return {
        "step": record.get("step"),
        "name": record.get("name"),
        "replay": record.get("replay"),
        "compute_us": record.get("compute_us"),
        "replay_us": record.get("replay_us"),
        "items": record.get("items"),
        "measured": record.get("measured"),
    }


def _step_shown(decision: dict[str, object]) -> str:
    """``step-id (name)``, or whichever of the two the record has."""
    step, name = decision.get("step"), decision.get("name")
    if step and name and name != step:
        return f"{step} ({name})"
    return str(step or name or "?")


def _micros(value: object) -> str:
    return f"{value:.1f}" if isinstance(value, int | float) else "?"


@cache.command("clear")
@_cache_option
@click.option("--step", default=None, help="Only entries of this step identity (see `info`).")
def clear(path: str, step: str | None) -> int:
    """Delete every entry (or one step's entries); clearing everything also forgets the
    recorded cost decisions."""
    if not os.path.exists(path):
        click.echo(f"no cache at {path}; nothing to clear")
        return EXIT_OK
    from ..cache import SQLiteCacheStore

    with SQLiteCacheStore(path) as store:
        if step is not None and step not in store.info().steps:
            known = ", ".join(sorted(store.info().steps)) or "none"
            raise click.BadParameter(
                f"no entries for step {step!r} (steps in the cache: {known})", param_hint="--step"
            )
        removed = store.clear(step)
    what = f" of step {step}" if step else ""
    click.echo(f"removed {removed} entries{what} from {path}")
    return EXIT_OK
