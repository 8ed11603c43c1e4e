"""Griffe extension: ragloom's docstrings use Sphinx cross-reference roles
(``:class:`Ingestor```, ``:meth:`~ragloom.Pipeline.run```) and reST's ``::`` before a code
block. mkdocstrings reads docstrings as Markdown, where those would show as written: this
turns a role into inline code (``~`` keeps the last name, as Sphinx does) and ``::`` into ``:``.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

_ROLE = re.compile(r":(?:py:)?(?:class|meth|func|mod|data|attr|exc|obj|const|term):`(~?)([^`]+)`")
_LITERAL = re.compile(r"(\S)::$", re.M)


def _target(match: re.Match[str]) -> str:
    short, target = match.groups()
    return f"`{target.rsplit('.', 1)[-1] if short else target}`"


def clean(text: str) -> str:
    """The docstring with roles as inline code and ``word::`` as ``word:``."""
    return _LITERAL.sub(r"\1:", _ROLE.sub(_target, text))


class SphinxRoles(griffe.Extension):
    """Cleans every docstring of a package once it is loaded (after extensions that set
    docstrings, such as griffe_sphinx's ``#:`` comments, have run)."""

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        seen: set[int] = set()

        def walk(obj: griffe.Object) -> None:
            if id(obj) in seen:
                return
            seen.add(id(obj))
            if obj.docstring is not None:
                obj.docstring.value = clean(obj.docstring.value)
            for member in obj.members.values():
                if not member.is_alias:
                    walk(member)  # type: ignore[arg-type]

        walk(pkg)
