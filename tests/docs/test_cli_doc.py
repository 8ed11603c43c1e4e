"""``docs/cli.md`` lists every option of every command, and nothing else: each command has a
section (``## `ragloom NAME` ``, ``### `ragloom GROUP NAME` ``) whose ``| option |`` table is
compared with the click command's options, and the summary table names only real options."""

from __future__ import annotations

import re
from collections.abc import Iterator

import click
import pytest
from ragloom.cli._app import cli
from support.doc_blocks import REPO

PAGE = REPO / "docs" / "cli.md"
_HEADING = re.compile(r"#{2,3} `ragloom((?: [a-z][a-z-]*)*)`")
_OPTION = re.compile(r"(?<![\w-])(--?[A-Za-z][\w-]*)")


def _commands() -> Iterator[tuple[str, click.Command]]:
    """Every command and group under ``ragloom`` by its path (``""``, ``"cache info"``)."""
    ctx = click.Context(cli)

    def walk(path: str, command: click.Command) -> Iterator[tuple[str, click.Command]]:
        yield path, command
        if isinstance(command, click.Group):
            for name in command.list_commands(ctx):
                sub = command.get_command(ctx, name)
                assert sub is not None, name
                yield from walk(f"{path} {name}".strip(), sub)

    yield from walk("", cli)


def _options(command: click.Command) -> set[str]:
    """The options ``--help`` shows (``-h, --help`` aside)."""
    return {
        opt
        for param in command.params
        if isinstance(param, click.Option) and not param.hidden
        for opt in (*param.opts, *param.secondary_opts)
    }


def _sections() -> dict[str, list[str]]:
    """The page's lines per command path; ``""`` is the introduction before any section."""
    sections: dict[str, list[str]] = {"": []}
    current: str | None = ""
    for line in PAGE.read_text(encoding="utf-8").splitlines():
        heading = _HEADING.fullmatch(line)
        if heading:
            current = heading.group(1).strip()
            assert current not in sections, f"two sections for `ragloom {current}`"
            sections[current] = []
        elif line.startswith("## ") or line.startswith("### "):
            current = None  # a section about no one command
        elif current is not None:
            sections[current].append(line)
    return sections


def _table(lines: list[str], header: str) -> list[str]:
    """The first cells of the rows of the first table whose header starts with ``header``."""
    rows: list[str] = []
    inside = False
    for line in lines:
        if not inside:
            inside = line.startswith(f"| {header} |")
            continue
        if not line.startswith("|"):
            break
        rows.append(line.split(" | ")[0].removeprefix("| "))
    return rows[1:]  # the separator row


def _documented(cells: list[str]) -> set[str]:
    return {option for cell in cells for option in _OPTION.findall(cell)}


SECTIONS = _sections()
COMMANDS = dict(_commands())


@pytest.mark.parametrize("path", sorted(COMMANDS), ids=lambda p: p or "ragloom")
def test_each_commands_table_lists_exactly_its_options(path: str) -> None:
    command = COMMANDS[path]
    actual = _options(command)
    if not actual:
        return  # a group without options of its own: its commands have the tables
    assert path in SECTIONS, f"docs/cli.md has no section `ragloom {path}`"
    cells = _table(SECTIONS[path], "option")
    assert cells, f"the section `ragloom {path}` has no option table"
    documented = _documented(cells) - {"-h", "--help"}
    assert documented == actual, (
        f"ragloom {path}: missing from docs/cli.md {sorted(actual - documented)}, "
        f"not options of the command {sorted(documented - actual)}"
    )


def test_the_summary_table_names_real_commands_and_options() -> None:
    rows = _table(SECTIONS[""], "command")
    assert rows
    seen = set()
    for cell in rows:
        words = cell.strip("`").split()
        assert words[0] == "ragloom", cell
        name = words[1]
        seen.add(name)
        assert name in COMMANDS, f"no command {name!r}"
        # ``index info\|clear``: the options of the group's commands together
        family = {p: c for p, c in COMMANDS.items() if p == name or p.startswith(f"{name} ")}
        known = set().union(*(_options(c) for c in family.values()))
        assert _documented([cell]) <= known, (cell, sorted(_documented([cell]) - known))
    top = {path.split()[0] for path in COMMANDS if path}
    assert seen == top, f"commands missing from the summary table: {sorted(top - seen)}"
