"""``ragloom new-plugin NAME``: write a plugin package that installs, registers and passes
the conformance kit as generated."""

from __future__ import annotations

import keyword
import re
from pathlib import Path

import click

from .. import __version__
from ._template import FILES

__all__ = ["main", "write_plugin"]


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


def write_plugin(name: str, directory: Path) -> Path:
    """Write the skeleton of plugin ``name`` into ``directory/<dist>``; return that folder."""
    dist, package, prefix = _names(name)
    major, minor = (int(p) for p in __version__.split(".")[:2])
    core = (
        f"ragloom>={major}.{minor},<{major}.{minor + 1}"
        if major == 0
        else (f"ragloom>={major}.{minor},<{major + 1}")
    )
    root = directory / dist
    if root.exists() and any(root.iterdir()):
        raise click.ClickException(f"{root} exists and is not empty")
    for rel, template in FILES.items():
        path = root / rel.format(package=package)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(
            template.format(dist=dist, package=package, prefix=prefix, core=core),
            encoding="utf-8",
        )
    return root


@click.command("new-plugin")
@click.argument("name")
@click.option(
    "--directory",
    "-d",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("."),
    show_default=True,
    help="Where to create the plugin folder.",
)
def main(name: str, directory: Path) -> None:
    """Create a ragloom plugin package NAME with a chunker, a router and kit tests."""
    root = write_plugin(name, directory)
    _dist, _package, prefix = _names(name)
    click.echo(f"created {root}")
    click.echo(f"  chunker {prefix}-paragraphs, router {prefix}-words")
    click.echo(f"next: pip install -e '{root}[test]' && pytest {root}")
