"""``ragloom plugins`` without click: list installed plugins, what each provides, their status.

Without ``--check`` only entry-point metadata is read: no plugin, pydantic or anyio is
imported. ``--check`` imports every provider (and hook module) of every plugin that is not
blocked, and reports each as loaded or broken with the error.
"""

from __future__ import annotations

import json
from typing import Any

from .. import __version__
from ..plugins._discovery import GROUPS, PluginInfo, discover_plugins

__all__ = ["check_plugins", "plugins_report"]


def check_plugins(infos: list[PluginInfo]) -> dict[str, dict[str, str]]:
    """Import every provider of every non-blocked plugin; return errors per distribution.

    Updates each info's status to ``loaded`` or ``broken`` (with the first error as reason).
    """
    import logging

    from ..errors import RagloomError
    from ..plugins import Registry

    # Broken hook modules are reported in the listing itself: no warning line besides.
    logger = logging.getLogger("ragloom")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        registry = Registry()
    finally:
        logger.setLevel(level)
    errors: dict[str, dict[str, str]] = {}
    for info in infos:
        if info.status == "blocked":
            continue
        problems: dict[str, str] = {}
        hook_problem = registry.broken.get(info.dist)
        if hook_problem:
            problems["hooks"] = hook_problem
        for kind, names in info.provides.items():
            for name in names:
                try:
                    registry.resolve(kind, f"{info.dist}:{name}")
                except RagloomError as exc:
                    problems[f"{kind}:{name}"] = str(exc)
        if problems:
            errors[info.dist] = problems
            info.status = "broken"
            first = next(iter(problems.values()))
            more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
            info.reason = first + more
        elif info.status != "broken":
            info.status = "loaded"
            info.reason = info.reason or "every provider imports"
    return errors


def _provides_text(info: PluginInfo) -> str:
    parts = []
    for kind in GROUPS:
        names = info.provides.get(kind)
        if names:
            label = GROUPS[kind].removeprefix("ragloom.")
            parts.append(f"{label}: {', '.join(sorted(names))}")
    if info.hooks:
        parts.append(f"hooks: {', '.join(info.hooks)}")
    return "; ".join(parts) or "-"


def _table(infos: list[PluginInfo], errors: dict[str, dict[str, str]]) -> str:
    from .._display import render_table

    headers = ("DISTRIBUTION", "VERSION", "STATUS", "PROVIDES")
    rows = [(i.dist, i.version, i.status, _provides_text(i)) for i in infos]
    lines = [render_table(headers, rows)]
    notes = []
    for info in infos:
        if info.status in ("broken", "blocked") and info.reason:
            notes.append(f"  {info.dist}: {info.status}: {info.reason}")
            for where, message in errors.get(info.dist, {}).items():
                if message != info.reason.split(" (and ")[0]:
                    notes.append(f"    {where}: {message}")
    if notes:
        lines += ["", "Problems:", *notes]
    return "\n".join(lines)


def plugins_report(as_json: bool, check: bool) -> tuple[str, int]:
    """The text (table or JSON) ``ragloom plugins`` prints, and its exit status.

    The status is 1 when ``check`` found a broken plugin, else 0.
    """
    infos = discover_plugins()
    errors = check_plugins(infos) if check else {}
    broken = any(i.status == "broken" for i in infos)
    if as_json:
        payload: dict[str, Any] = {
            "ragloom": __version__,
            "plugins": [{**info.to_dict(), "errors": errors.get(info.dist, {})} for info in infos],
        }
        text = json.dumps(payload, indent=2)
    else:
        text = _table(infos, errors)
    return text, 1 if check and broken else 0
