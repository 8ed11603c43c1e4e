"""``ragloom new-plugin NAME [--kind KIND]...``: write a plugin package that installs, registers
and passes its tests (the conformance kit for its kinds, and their own) as generated."""

from __future__ import annotations

import keyword
import re
from collections.abc import Sequence
from pathlib import Path

import click

from .. import __version__
from ._template import DEFAULT_KINDS, TEMPLATES, render

__all__ = ["KIND_CHOICES", "main", "write_plugin"]

#: The kinds ``--kind`` accepts, as written on the command line (``cache-store``).
KIND_CHOICES = tuple(kind.replace("_", "-") for kind in TEMPLATES)


def _names(name: str) -> tuple[str, str, str]:
    dist = re.sub(r"[-_.\s]+", "-", name.strip()).lower()
    if not re.fullmatch(r"[a-z][a-z0-9-]*[a-z0-9]", dist):
        raise click.BadParameter(
            f"{name!r} is not a valid distribution name (letters, digits and '-', "
            "starting with a letter)",
            param_hint="NAME",
        )
    package = dist.replace("-", "_")
    if keyword.iskeyword(package):
        raise click.BadParameter(f"{package!r} is a Python keyword", param_hint="NAME")
    prefix = dist.removeprefix("ragloom-")
    return dist, package, prefix


def _kinds(kinds: Sequence[str]) -> list[str]:
    """The table's kind names (``cache_store``) for ``--kind`` values, each once, in order."""
    from ..kinds import KINDS

    out: list[str] = []
    for value in kinds or DEFAULT_KINDS:
        kind = value.strip().lower().replace("-", "_")
        if kind not in TEMPLATES:
            known = ", ".join(KIND_CHOICES)
            what = "has no template" if kind in KINDS else "is not a kind"
            raise click.BadParameter(f"{value!r} {what} (kinds: {known})", param_hint="--kind")
        if kind not in out:
            out.append(kind)
    return out


def write_plugin(name: str, directory: Path, kinds: Sequence[str] = ()) -> Path:
    """Write plugin ``name`` with one component of each of ``kinds`` (default: a chunker and a
    router) into ``directory/<dist>``; return that folder."""
    dist, package, prefix = _names(name)
    chosen = _kinds(kinds)
    major, minor = (int(p) for p in __version__.split(".")[:2])
    core = (
        f"ragloom>={major}.{minor},<{major}.{minor + 1}"
        if major == 0
        else (f"ragloom>={major}.{minor},<{major + 1}")
    )
    root = directory / dist
    if root.exists() and not root.is_dir():
        raise _Refused(f"{root} exists and is not a folder: choose another name or --directory")
    if root.exists() and any(root.iterdir()):
        raise _Refused(
            f"{root} exists and is not empty: choose another name or --directory (nothing "
            "was written)"
        )
    files = render(chosen, dist=dist, package=package, prefix=prefix, core=core)
    try:
        for rel, text in files.items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise _Refused(f"cannot write the plugin into {root}: {exc.strerror or exc}") from None
    return root


class _Refused(click.ClickException):
    """The plugin cannot be written where asked: a usage error (exit 2), nothing is changed."""

    exit_code = 2


@click.command("new-plugin")
@click.argument("name")
@click.option(
    "--kind",
    "-k",
    "kinds",
    multiple=True,
    type=click.Choice(KIND_CHOICES, case_sensitive=False),
    help="A kind of component to write (repeat for several) [default: chunker and router].",
)
@click.option(
    "--directory",
    "-d",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("."),
    show_default=True,
    help="Where to create the plugin folder.",
)
def main(name: str, kinds: tuple[str, ...], directory: Path) -> None:
    """Create a ragloom plugin package NAME: one working component per --kind, its entry
    point, and tests (ragloom's conformance kit for the kind, and its own)."""
    root = write_plugin(name, directory, kinds)
    _dist, _package, prefix = _names(name)
    click.echo(f"created {root}")
    for kind in _kinds(kinds):
        template = TEMPLATES[kind]
        label = kind.replace("_", " ")
        click.echo(f"  {label} {prefix}-{template.entry} ({template.cls})")
    click.echo(
        f"next: pip install -e '{root}[test]' && pytest {root}  (with ragloom installed from "
        "its checkout: see the README)"
    )
