"""``ragloom plugins`` without click: list installed plugins, what each provides, their status.

Without ``--check`` only entry-point metadata is read: no plugin, pydantic or anyio is
imported. ``--check`` builds a registry as a pipeline build would: it imports every hook module
and every provider of every plugin that is not blocked, and reports

- each plugin as loaded or broken, with the error;
- the names each plugin registered through its ``ragloom_register`` hook, and the hooks it
  implements;
- name clashes: a name of one kind provided by two distributions, which every pipeline naming
  it by its short name would fail on (the qualified ``dist:name`` still works).

The exit status is 1 when ``--check`` found a broken plugin or a clash, else 0.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from .. import __version__
from ..plugins._discovery import GROUPS, PluginInfo
from ..plugins._listing import discover_plugins

__all__ = ["Clash", "PluginCheck", "check_plugins", "plugins_report"]


@dataclass
class Clash:
    """One name of one kind provided by more than one distribution."""

    kind: str
    name: str
    #: ``(distribution, version, target)`` of each provider.
    providers: list[tuple[str, str, str]]

    @property
    def message(self) -> str:
        who = " and ".join(f"{d} {v} ({t})" for d, v, t in self.providers)
        qualified = " or ".join(f"'{d}:{self.name}'" for d, _v, _t in self.providers)
        if self.kind == "command":
            builtin = any(d == "ragloom" for d, _v, _t in self.providers)
            plugins = " or ".join(
                f"`ragloom {d}:{self.name}`" for d, _v, _t in self.providers if d != "ragloom"
            )
            runs = (
                f"`ragloom {self.name}` runs the built-in command; run the plugin's as "
                f"{plugins}"
                if builtin
                else f"`ragloom {self.name}` fails; run {plugins}"
            )
            return (
                f"command name {self.name!r} is provided by both {who}: {runs}, or block "
                "one (RAGLOOM_DISABLE_PLUGINS, or block-plugins in the policy file)"
            )
        return (
            f"{self.kind} name {self.name!r} is provided by both {who}: a pipeline naming "
            f"{self.name!r} fails; write {qualified}, or disable one with "
            "RAGLOOM_DISABLE_PLUGINS (or block-plugins in the policy file)"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "name": self.name,
            "providers": [
                {"distribution": d, "version": v, "target": t} for d, v, t in self.providers
            ],
            "message": self.message,
        }


@dataclass
class PluginCheck:
    """What ``--check`` found, per distribution and overall."""

    #: distribution -> {where: error}
    errors: dict[str, dict[str, str]] = field(default_factory=dict)
    clashes: list[Clash] = field(default_factory=list)
    #: distribution -> {kind: [names registered through ``ragloom_register``]}
    registered: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    #: distribution -> names of the hooks its hook modules implement
    implements: dict[str, list[str]] = field(default_factory=dict)
    #: The organisation's policy in force (an ``OrgPolicy``).
    policy: Any = None

    def clashes_of(self, dist: str) -> list[Clash]:
        return [c for c in self.clashes if any(d == dist for d, _v, _t in c.providers)]


def _quiet_registry() -> Any:
    import logging

    from ..plugins import Registry

    # Broken hook modules are reported in the listing itself: no warning line besides.
    logger = logging.getLogger("ragloom")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        return Registry()
    finally:
        logger.setLevel(level)


def check_plugins(infos: list[PluginInfo]) -> PluginCheck:
    """Import every provider and hook module of every non-blocked plugin.

    Updates each info's status to ``loaded`` or ``broken`` (with the first error as reason)
    and returns the errors, the clashes, and what each plugin's hooks contribute.
    """
    from ..errors import RagloomError

    registry = _quiet_registry()
    found = PluginCheck(policy=registry.org_policy)
    for dist, plugin in registry.pm.list_name_plugin():
        owner = dist.rsplit(":", 1)[0]
        hooks = sorted(caller.name for caller in registry.pm.get_hookcallers(plugin) or ())
        found.implements.setdefault(owner, [])
        found.implements[owner] = sorted({*found.implements[owner], *hooks})
    for dist, pairs in registry.hook_contributions.items():
        for kind, name in pairs:
            names = found.registered.setdefault(dist, {}).setdefault(kind, [])
            if name not in names:
                names.append(name)
    from ._commands import BUILTIN_COMMANDS

    for kind in GROUPS:
        for name, providers in sorted(registry.providers(kind).items()):
            who = [(p.dist, p.version, p.value) for p in providers]
            if kind == "command" and name in BUILTIN_COMMANDS:
                module, attr = BUILTIN_COMMANDS[name][:2]
                who.insert(0, ("ragloom", __version__, f"{module}:{attr}"))
            if len(who) > 1:
                found.clashes.append(Clash(kind, name, who))
    for info in infos:
        if info.status == "blocked":
            continue
        problems: dict[str, str] = {}
        hook_problem = registry.broken.get(info.dist)
        if hook_problem:
            problems["hooks"] = hook_problem
        provided = {kind: list(names) for kind, names in info.provides.items()}
        for kind, extra in found.registered.get(info.dist, {}).items():
            provided.setdefault(kind, []).extend(n for n in extra if n not in provided[kind])
        for kind, kind_names in provided.items():
            for name in kind_names:
                try:
                    registry.resolve(kind, f"{info.dist}:{name}")
                except RagloomError as exc:
                    problems[f"{kind}:{name}"] = str(exc)
        if problems:
            found.errors[info.dist] = problems
            info.status = "broken"
            first = next(iter(problems.values()))
            more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
            info.reason = first + more
        elif info.status != "broken":
            info.status = "loaded"
            info.reason = info.reason or "every provider imports"
    return found


def _provides_text(info: PluginInfo, found: PluginCheck | None) -> str:
    parts = []
    registered = found.registered.get(info.dist, {}) if found is not None else {}
    for kind in GROUPS:
        names = sorted(info.provides.get(kind, []))
        by_hook = sorted(n for n in registered.get(kind, []) if n not in names)
        if names or by_hook:
            label = GROUPS[kind].removeprefix("ragloom.")
            shown = names + [f"{n} (by hook)" for n in by_hook]
            parts.append(f"{label}: {', '.join(shown)}")
    if info.policy:
        parts.append(f"policy: {', '.join(info.policy)}")
    if info.hooks:
        implemented = found.implements.get(info.dist) if found is not None else None
        suffix = f" ({', '.join(implemented)})" if implemented else ""
        parts.append(f"hooks: {', '.join(info.hooks)}{suffix}")
    return "; ".join(parts) or "-"


def _table(infos: list[PluginInfo], found: PluginCheck | None) -> str:
    from .._display import render_table

    headers = ("DISTRIBUTION", "VERSION", "STATUS", "PROVIDES")
    rows = [(i.dist, i.version, i.status, _provides_text(i, found)) for i in infos]
    lines = [render_table(headers, rows)]
    errors = found.errors if found is not None else {}
    notes = []
    for info in infos:
        if info.status in ("broken", "blocked") and info.reason:
            notes.append(f"  {info.dist}: {info.status}: {info.reason}")
            for where, message in errors.get(info.dist, {}).items():
                if message != info.reason.split(" (and ")[0]:
                    notes.append(f"    {where}: {message}")
    for clash in found.clashes if found is not None else ():
        notes.append(f"  name clash: {clash.message}")
    if notes:
        lines += ["", "Problems:", *notes]
    if found is not None:
        lines += ["", *policy_lines(found.policy, infos)]
    return "\n".join(lines)


def policy_lines(policy: Any, infos: list[PluginInfo]) -> list[str]:
    """The organisation's policy in force, where it came from and what it blocked, in
    words."""
    from ..plugins._policy import policy_fields

    if policy is None or policy.empty:
        return ["Policy: none (no RAGLOOM_POLICY_FILE, ragloom.toml or [tool.ragloom] found, "
                "and no plugin contributes one)"]
    lines = ["Policy in force, from " + "; ".join(policy.sources) + ":"]
    if policy.allow is not None:
        lines.append(
            f"  allow-plugins: {', '.join(sorted(policy.allow)) or '(none)'} "
            f"(from {policy.allow_source})"
        )
    for dist, who in sorted(policy.block.items()):
        lines.append(f"  block-plugins: {dist} (from {who})")
    for dist, who in policy.require_wrappers.items():
        lines.append(f"  require-wrappers: {dist} (from {who})")
    for kind, value in sorted(policy.defaults.items()):
        shown = ", ".join(f"{k}={v}" for k, v in policy_fields(value).items())
        lines.append(
            f"  default-policy.{kind}: {shown} (from {', '.join(policy.default_sources[kind])})"
        )
    blocked = [i.dist for i in infos if i.status == "blocked" and policy.blocked(i.dist)]
    lines.append(f"  blocked by it: {', '.join(blocked) if blocked else 'nothing installed'}")
    for note in policy.overruled:
        lines.append(f"  the operator wins: {note}")
    return lines


def plugins_report(as_json: bool, check: bool) -> tuple[str, int]:
    """The text (table or JSON) ``ragloom plugins`` prints, and its exit status.

    The status is 1 when ``check`` found a broken plugin or a name clash, else 0.
    """
    infos = discover_plugins()
    found = check_plugins(infos) if check else None
    broken = any(i.status == "broken" for i in infos)
    if as_json:
        plugins = []
        for info in infos:
            entry: dict[str, Any] = {**info.to_dict()}
            if found is not None:
                entry["errors"] = found.errors.get(info.dist, {})
                entry["registered_by_hooks"] = found.registered.get(info.dist, {})
                entry["hooks_implemented"] = found.implements.get(info.dist, [])
                entry["clashes"] = [c.message for c in found.clashes_of(info.dist)]
            else:
                entry["errors"] = {}
            plugins.append(entry)
        payload: dict[str, Any] = {"ragloom": __version__, "plugins": plugins}
        if found is not None:
            payload["clashes"] = [c.to_dict() for c in found.clashes]
            payload["policy"] = {
                **found.policy.to_dict(),
                "blocked": [
                    i.dist for i in infos
                    if i.status == "blocked" and found.policy.blocked(i.dist)
                ],
            }
        text = json.dumps(payload, indent=2)
    else:
        text = _table(infos, found)
    failed = found is not None and (broken or bool(found.clashes))
    return text, 1 if failed else 0
