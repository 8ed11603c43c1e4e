"""The organisation's plugin policy: which plugins may load, policy defaults per kind, and the
step wrappers every run must have. Read before any plugin is imported.

Where it comes from, the operator first:

1. the operator's **policy file**: the path in ``RAGLOOM_POLICY_FILE`` if set; else, from the
   working directory upwards, the first folder holding a ``ragloom.toml`` (its top-level
   keys) or a ``pyproject.toml`` with a ``[tool.ragloom]`` table (a ``pyproject.toml`` without
   one is passed over). One file is used, never a merge of several;
2. the operator's environment: ``RAGLOOM_DISABLE_PLUGINS`` and, with
   ``RAGLOOM_PLUGINS_AUTOLOAD=0``, ``RAGLOOM_ALLOW_PLUGINS`` (read by the registry itself);
3. platform plugins: a module named under the ``ragloom.policy`` entry-point group whose
   ``ragloom_policy()`` returns the same settings as a file. Only that module is imported (and
   the packages it sits in), before anything else of any plugin; a plugin the operator blocks
   is not asked.

On a conflict the operator wins: a plugin the operator allow-lists is not blocked by a
plugin's policy, a wrapper a plugin's policy requires is not required when the operator blocks
its plugin, and the operator's default-policy fields win over a plugin's field by field. Several
platform plugins add up (blocks, allowlists and required wrappers are joined; for a default
policy field, the plugin whose distribution name sorts first wins).

The settings (in ``[tool.ragloom]`` of a ``pyproject.toml``, at the top of a ``ragloom.toml``)::

    allow-plugins = ["ragloom-text", "acme-audit"]   # only these load (optional)
    block-plugins = ["ragloom-e2e-clash-b"]            # never loaded
    require-wrappers = ["acme-audit"]                  # runs refuse to start without them
    [default-policy.chunker]                           # per kind, as ragloom_default_policy
    max_attempts = 3
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import PolicyFileError

__all__ = [
    "POLICY_ENV",
    "POLICY_GROUP",
    "OrgPolicy",
    "PolicySettings",
    "find_policy_file",
    "parse_settings",
    "policy_fields",
    "policy_in_force",
]

#: The environment variable naming the operator's policy file.
POLICY_ENV = "RAGLOOM_POLICY_FILE"
#: The entry-point group of platform plugins' policy modules.
POLICY_GROUP = "ragloom.policy"


@dataclass(frozen=True, slots=True)
class PolicySettings:
    """What one source (a file, or one plugin) sets."""

    source: str
    allow: frozenset[str] | None = None
    block: frozenset[str] = frozenset()
    require_wrappers: tuple[str, ...] = ()
    #: kind -> :class:`~ragloom.policy.Policy`
    defaults: Mapping[str, Any] = field(default_factory=dict)

    @property
    def empty(self) -> bool:
        return self.allow is None and not (self.block or self.require_wrappers or self.defaults)


@dataclass(slots=True)
class OrgPolicy:
    """The policy in force: the operator's file over the platform plugins' policies."""

    #: Only these distributions load (``None``: no allowlist), and who said so.
    allow: frozenset[str] | None = None
    allow_source: str = ""
    #: distribution -> who blocked it (a file path, or ``plugin <dist>``)
    block: dict[str, str] = field(default_factory=dict)
    #: distribution whose ``ragloom_wrap_step`` every run must have -> who requires it
    require_wrappers: dict[str, str] = field(default_factory=dict)
    #: kind -> (:class:`~ragloom.policy.Policy`, the sources that set it)
    defaults: dict[str, Any] = field(default_factory=dict)
    default_sources: dict[str, list[str]] = field(default_factory=dict)
    #: Where the policy came from, the operator first.
    sources: list[str] = field(default_factory=list)
    #: Where the operator's setting overruled a plugin's, in words.
    overruled: list[str] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not self.sources

    def blocked(self, dist: str) -> str:
        """Why the policy blocks ``dist`` (``""``: it does not)."""
        who = self.block.get(dist)
        if who is not None:
            return f"{dist} is blocked by the policy in {who}"
        if self.allow is not None and dist not in self.allow:
            return f"{dist} is not in the allow-plugins list of {self.allow_source}"
        return ""

    def to_dict(self) -> dict[str, Any]:
        """The policy as plain JSON (what ``ragloom plugins --check --json`` prints)."""
        return {
            "sources": list(self.sources),
            "allow_plugins": sorted(self.allow) if self.allow is not None else None,
            "allow_source": self.allow_source or None,
            "block_plugins": dict(sorted(self.block.items())),
            "require_wrappers": dict(sorted(self.require_wrappers.items())),
            "default_policy": {
                kind: {"policy": policy_fields(policy), "sources": self.default_sources[kind]}
                for kind, policy in sorted(self.defaults.items())
            },
            "overruled": list(self.overruled),
        }


def policy_fields(policy: Any) -> dict[str, Any]:
    """The set fields of a :class:`~ragloom.policy.Policy`, as plain values."""
    from dataclasses import fields

    out: dict[str, Any] = {}
    for f in fields(policy):
        value = getattr(policy, f.name)
        if value is not None:
            out[f.name] = [t.__name__ for t in value] if f.name == "retry_on" else value
    return out


# -- reading a file ------------------------------------------------------------------------


def find_policy_file(cwd: Path | None = None) -> tuple[Path, str] | None:
    """The operator's policy file and the table prefix its settings sit under (``""`` for a
    ``ragloom.toml`` or the ``RAGLOOM_POLICY_FILE`` file, ``"tool.ragloom"`` for a
    ``pyproject.toml``); ``None`` when there is none."""
    named = os.environ.get(POLICY_ENV, "").strip()
    if named:
        path = Path(named).expanduser()
        prefix = "tool.ragloom" if path.name == "pyproject.toml" else ""
        return path, prefix
    # os.path rather than pathlib: this runs for every registry (every pipeline build)
    folder = os.path.realpath(cwd if cwd is not None else os.getcwd())
    while True:
        candidate = os.path.join(folder, "ragloom.toml")
        if os.path.isfile(candidate):
            return Path(candidate), ""
        project = os.path.join(folder, "pyproject.toml")
        if os.path.isfile(project) and _has_tool_table(Path(project)):
            return Path(project), "tool.ragloom"
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def _has_tool_table(path: Path) -> bool:
    try:
        data = _read_toml(path)
    except PolicyFileError:
        return True  # unreadable: reported when it is read as the policy
    tool = data.get("tool")
    return isinstance(tool, dict) and "ragloom" in tool


_TOML_CACHE: dict[Path, tuple[tuple[int, int], dict[str, Any]]] = {}


def _read_toml(path: Path) -> dict[str, Any]:
    """``path`` parsed (kept while its size and modification time stay the same)."""
    try:
        stat = path.stat()
        key = (stat.st_mtime_ns, stat.st_size)
        cached = _TOML_CACHE.get(path)
        if cached is not None and cached[0] == key:
            return cached[1]
        with path.open("rb") as handle:
            data = tomllib.load(handle)
    except OSError as exc:
        raise PolicyFileError(
            f"policy file {path}: cannot be read: {exc.strerror or exc}", source=str(path)
        ) from None
    except tomllib.TOMLDecodeError as exc:
        raise PolicyFileError(f"policy file {path}: not valid TOML: {exc}", source=str(path)) \
            from None
    _TOML_CACHE[path] = (key, data)
    return data


def _file_settings(path: Path, prefix: str) -> PolicySettings:
    data: Any = _read_toml(path)
    for part in prefix.split(".") if prefix else ():
        data = data.get(part, {}) if isinstance(data, dict) else {}
    return parse_settings(data, str(path), prefix)


def parse_settings(data: Any, source: str, prefix: str = "") -> PolicySettings:
    """Validate policy settings (the keys of a policy file, or what a plugin's
    ``ragloom_policy`` returned) from ``source``.

    Raises:
        PolicyFileError: naming ``source`` and the key at fault.
    """
    from pydantic import ValidationError

    from ._policy_model import PolicyModel

    where = f"{prefix}." if prefix else ""
    try:
        model = PolicyModel.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        key = where + ".".join(str(part) for part in first["loc"])
        more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
        raise PolicyFileError(
            f"policy {source}: {key or 'the policy'}: "
            f"{first['msg'].removeprefix('Value error, ')}{more}",
            source=source, key=key,
        ) from None
    try:
        defaults = model.policies()
    except (ValueError, TypeError) as exc:  # a policy's own rules
        key = f"{where}default-policy"
        raise PolicyFileError(f"policy {source}: {key}: {exc}", source=source, key=key) \
            from None
    from ._discovery import normalize_dist

    return PolicySettings(
        source=source,
        allow=(
            frozenset(normalize_dist(d) for d in model.allow_plugins)
            if model.allow_plugins is not None
            else None
        ),
        block=frozenset(normalize_dist(d) for d in model.block_plugins),
        require_wrappers=tuple(dict.fromkeys(normalize_dist(d) for d in model.require_wrappers)),
        defaults=defaults,
    )


# -- the policy in force -------------------------------------------------------------------


def _env_blocked(dist: str) -> bool:
    from ._discovery import allowed_from_env, disabled_from_env

    allowed = allowed_from_env()
    return dist in disabled_from_env() or (allowed is not None and dist not in allowed)


def _plugin_settings(operator: PolicySettings | None) -> list[PolicySettings]:
    """What each platform plugin the operator does not block says, by distribution name."""
    from ._discovery import _dist_of, installed_entry_points

    found: dict[str, PolicySettings] = {}
    for ep in installed_entry_points().select(group=POLICY_GROUP):
        dist, version, _d = _dist_of(ep)
        if dist in found or _env_blocked(dist):
            continue
        if operator is not None and (
            dist in operator.block or (operator.allow is not None and dist not in operator.allow)
        ):
            continue
        source = f"plugin {dist} {version}"
        try:
            target = ep.load()
            hook = getattr(target, "ragloom_policy", target)
            data = hook()
        except Exception as exc:  # noqa: BLE001 - a policy that cannot be read stops runs
            raise PolicyFileError(
                f"policy {source} ({ep.value}): ragloom_policy failed: "
                f"{type(exc).__name__}: {exc}; block {dist} to go on without its policy",
                source=source,
            ) from None
        found[dist] = parse_settings(data if data is not None else {}, source)
    return [found[d] for d in sorted(found)]


def _combine(operator: PolicySettings | None, plugins: list[PolicySettings]) -> OrgPolicy:
    policy = OrgPolicy()
    sources = [s for s in ([operator] if operator else []) + plugins if not s.empty]
    policy.sources = [s.source for s in sources]
    # allowlist: the operator's, else the plugins' joined
    if operator is not None and operator.allow is not None:
        policy.allow, policy.allow_source = operator.allow, operator.source
    else:
        lists = [p for p in plugins if p.allow is not None]
        if lists:
            policy.allow = frozenset().union(*(p.allow for p in lists if p.allow is not None))
            policy.allow_source = ", ".join(p.source for p in lists)
    for settings in plugins:
        for dist in sorted(settings.block):
            if operator is not None and operator.allow is not None and dist in operator.allow:
                policy.overruled.append(
                    f"{settings.source} blocks {dist}, which {operator.source} allows: it is "
                    "not blocked"
                )
            else:
                policy.block.setdefault(dist, settings.source)
    if operator is not None:
        for dist in sorted(operator.block):
            policy.block[dist] = operator.source
        for dist in operator.require_wrappers:
            policy.require_wrappers[dist] = operator.source
    for settings in plugins:
        for dist in settings.require_wrappers:
            if operator is not None and dist in operator.block:
                policy.overruled.append(
                    f"{settings.source} requires the wrappers of {dist}, which "
                    f"{operator.source} blocks: they are not required"
                )
            else:
                policy.require_wrappers.setdefault(dist, settings.source)
    for settings in ([operator] if operator else []) + plugins:
        for kind, value in settings.defaults.items():
            current = policy.defaults.get(kind)
            policy.defaults[kind] = value if current is None else current.merged_over(value)
            policy.default_sources.setdefault(kind, []).append(settings.source)
    return policy


_CACHE: dict[str, tuple[Any, OrgPolicy]] = {}


def policy_in_force(cwd: Path | None = None) -> OrgPolicy:
    """The organisation's policy for this process and working directory (read again when the
    file, the environment or the installed plugins change).

    Without a policy file and without a ``ragloom.policy`` entry point this imports nothing
    (no pydantic): listing plugins stays fast.

    Raises:
        PolicyFileError: the file or a plugin's policy is unreadable or invalid.
    """
    from ._discovery import installed_entry_points

    located = find_policy_file(cwd)
    stamp: Any = None
    if located is not None:
        try:
            stat = located[0].stat()
            stamp = (stat.st_mtime_ns, stat.st_size)
        except OSError:
            stamp = None
    installed = installed_entry_points()
    key = (
        located, stamp, id(installed),
        *(os.environ.get(v) for v in (
            "RAGLOOM_DISABLE_PLUGINS", "RAGLOOM_PLUGINS_AUTOLOAD", "RAGLOOM_ALLOW_PLUGINS",
        )),
    )
    cached = _CACHE.get("policy")
    if cached is not None and cached[0] == key:
        return cached[1]
    operator = _file_settings(*located) if located is not None else None
    plugins = _plugin_settings(operator) if installed.select(group=POLICY_GROUP) else []
    policy = _combine(operator, plugins)
    if located is not None and not policy.sources:
        policy.sources = [str(located[0])]  # an empty file is still the policy in force
    _CACHE["policy"] = (key, policy)
    return policy
