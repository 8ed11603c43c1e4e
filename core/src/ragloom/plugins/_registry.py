"""The per-build registry: one plugin manager and one name table per pipeline build."""

from __future__ import annotations

import importlib
import inspect
import logging
import types
import typing
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from .._hints import did_you_mean
from ..errors import (
    BrokenPluginError,
    ComponentTypeError,
    ConfigurationError,
    IncompatiblePluginError,
    PluginBlockedError,
    PluginConflictError,
    PluginNotFoundError,
    PolicyViolationError,
)
from ..kinds import KINDS
from ._discovery import (
    CORE_DIST,
    GROUPS,
    Provider,
    allowed_from_env,
    disabled_from_env,
    incompatibility,
    install_hint,
    installed_entry_points,
    iter_hook_modules,
    iter_providers,
    missing_first_party,
    normalize_dist,
)
from ._hookcalls import HookCalls
from ._policy import OrgPolicy, policy_in_force

__all__ = ["Registry"]


def _expected_type(kind: str) -> type | None:
    row = KINDS.get(kind)
    return row.base_type() if row is not None else None


class Registry(HookCalls):
    """Named components available to one pipeline build.

    Entry points are read from metadata when the registry is created; a component's module is
    imported only when :meth:`resolve` or :meth:`create` asks for it. Modules under
    ``ragloom.plugins`` (pluggy hooks) are imported when the registry is created with
    ``load_hooks=True`` (the default for builds), and their ``ragloom_register`` contributions
    go through the same name table as entry points. Calling the plugins' hooks (each plugin
    isolated) is :class:`~ragloom.plugins._hookcalls.HookCalls`'s part.

    Args:
        autoload: load every installed plugin (``False``: only those in ``allow``).
        allow: an allowlist of distribution names (implies ``autoload=False``).
        disabled: distributions to block before import (default: ``RAGLOOM_DISABLE_PLUGINS``);
            the organisation's policy (:mod:`ragloom.plugins._policy`) blocks besides, in
            every registry with entry points.
        entry_points: read installed entry points (``False`` for an empty, isolated registry).
        load_hooks: import hook modules and call ``ragloom_register``.
    """

    def __init__(
        self,
        *,
        autoload: bool = True,
        allow: Iterable[str] | None = None,
        disabled: Iterable[str] | None = None,
        entry_points: bool = True,
        load_hooks: bool = True,
    ) -> None:
        self.disabled = (
            frozenset(normalize_dist(d) for d in disabled)
            if disabled is not None
            else disabled_from_env()
        )
        if allow is not None:
            self.allow: frozenset[str] | None = frozenset(normalize_dist(d) for d in allow)
        elif not autoload:
            self.allow = frozenset()
        else:
            self.allow = allowed_from_env()
        self._providers: dict[str, dict[str, list[Provider]]] = {k: {} for k in GROUPS}
        self._blocked: dict[str, dict[str, Provider]] = {k: {} for k in GROUPS}
        self._loaded: dict[tuple[str, str, str], Any] = {}
        #: Components this registry built: id -> (component, kind, name), for dumping.
        self._made: dict[int, tuple[Any, str, str]] = {}
        #: Distributions set aside as broken, with the reason.
        self.broken: dict[str, str] = {}
        #: Which names each distribution registered through ``ragloom_register``.
        self.hook_contributions: dict[str, list[tuple[str, str]]] = {}
        HookCalls.__init__(self)
        #: The organisation's policy in force (a policy file, platform plugins' policies),
        #: read before any plugin is imported; empty for a registry without entry points.
        self.org_policy = policy_in_force() if entry_points else OrgPolicy()
        self.policy_defaults = dict(self.org_policy.defaults)
        if entry_points:
            installed = installed_entry_points()
            for provider in iter_providers(installed):
                self._add(provider)
            if load_hooks:
                self._load_hook_modules(installed)

    # -- contributing ----------------------------------------------------------------------

    def _is_blocked(self, dist: str) -> str:
        if dist == CORE_DIST:
            return ""
        if dist in self.disabled:
            return f"{dist} is disabled by RAGLOOM_DISABLE_PLUGINS"
        if self.allow is not None and dist not in self.allow:
            return f"{dist} is not in the plugin allowlist (autoload is off)"
        return self.org_policy.blocked(dist)

    def check_required_wrappers(self) -> None:
        """Refuse a run the organisation's policy forbids: every distribution listed in
        ``require-wrappers`` must be installed, not blocked, not broken, and have a hook module
        that implements ``ragloom_wrap_step``.

        Raises:
            PolicyViolationError: naming the plugin, who requires it, and what is wrong.
        """
        required = self.org_policy.require_wrappers
        if not required:
            return
        active = {
            name.rsplit(":", 1)[0] for name, _plugin in self._hook_plugins("ragloom_wrap_step")
        }
        for dist, who in required.items():
            if dist in active:
                continue
            why = self._is_blocked(dist) or self.broken.get(dist, "")
            if not why:
                installed = {d for d, _v, _ep in iter_hook_modules()} | {
                    p.dist for table in self._providers.values() for ps in table.values()
                    for p in ps
                }
                why = (
                    f"{dist} has no hook module implementing ragloom_wrap_step"
                    if dist in installed
                    else f"{dist} is not installed"
                )
            raise PolicyViolationError(
                f"the run does not start: the policy in {who} requires the step wrappers of "
                f"{dist}, and {why}"
            )

    def _add(self, provider: Provider) -> None:
        if provider.kind not in GROUPS:
            raise ConfigurationError(
                f"unknown component kind {provider.kind!r}; valid kinds: {sorted(GROUPS)}"
            )
        if self._is_blocked(provider.dist):
            self._blocked[provider.kind][provider.name] = provider
            return
        same = self._providers[provider.kind].setdefault(provider.name, [])
        for other in same:
            if other.dist == provider.dist and other.value == provider.value:
                return  # identical duplicate (e.g. an editable install seen twice)
        same.append(provider)

    def register(
        self,
        kind: str,
        name: str,
        factory: Callable[..., Any],
        *,
        dist: str = "__main__",
        version: str = "0",
        hook: bool = False,
    ) -> None:
        """Register ``factory`` as ``name`` of ``kind`` (the core-owned callback)."""
        if kind not in GROUPS:
            raise ConfigurationError(
                f"cannot register {name!r}: unknown kind {kind!r}; valid kinds: {sorted(GROUPS)}"
            )
        if not isinstance(name, str) or not name or ":" in name:
            raise ConfigurationError(f"invalid component name {name!r} (non-empty, no ':')")
        if not callable(factory):
            raise ComponentTypeError(f"{kind} {name!r}: factory must be callable")
        value = f"{getattr(factory, '__module__', '?')}:{getattr(factory, '__qualname__', '?')}"
        self._add(Provider(kind, name, value, normalize_dist(dist), version, factory=factory))
        if hook:
            self.hook_contributions.setdefault(normalize_dist(dist), []).append((kind, name))

    def _load_hook_modules(self, installed: Any = None) -> None:
        """Import each hook module and take its contributions, one plugin at a time.

        A module that fails to import, implements a hook name ragloom does not know, or raises
        in ``ragloom_register`` is set aside as broken (see :attr:`broken`, with one warning):
        its contributions are withdrawn and every other plugin works as usual.
        """
        for dist, version, ep in iter_hook_modules(installed):
            if not self._is_blocked(dist):
                _load_hook_module(self, dist, version, ep)

    def _set_broken(self, dist: str, reason: str) -> None:
        if dist not in self.broken:
            self.broken[dist] = reason
            logging.getLogger("ragloom").warning("plugin %s is broken and not used: %s", dist,
                                                 reason)

    def _provided_by(self, dist: str) -> set[tuple[str, str, str]]:
        return {
            (kind, name, p.value)
            for kind, table in self._providers.items()
            for name, providers in table.items()
            for p in providers
            if p.dist == dist
        }

    def _withdraw(self, dist: str, keep: set[tuple[str, str, str]]) -> None:
        for kind, table in self._providers.items():
            for name in list(table):
                table[name] = [
                    p for p in table[name] if p.dist != dist or (kind, name, p.value) in keep
                ]
                if not table[name]:
                    del table[name]

    # -- looking up ------------------------------------------------------------------------

    def names(self, kind: str) -> list[str]:
        """Names available for ``kind`` (qualified ``dist:name`` where names clash)."""
        out: list[str] = []
        for name, providers in sorted(self._providers[kind].items()):
            if len(providers) == 1:
                out.append(name)
            else:
                out.extend(p.qualified for p in providers)
        return out

    def providers(self, kind: str) -> dict[str, list[Provider]]:
        return self._providers[kind]

    def _find(self, kind: str, name: str) -> Provider:
        if kind not in GROUPS:
            raise ConfigurationError(f"unknown component kind {kind!r}; valid: {sorted(GROUPS)}")
        dist_filter: str | None = None
        short = name
        if ":" in name:
            dist_part, short = name.split(":", 1)
            dist_filter = normalize_dist(dist_part)
        candidates = self._providers[kind].get(short, [])
        if dist_filter is not None:
            candidates = [p for p in candidates if p.dist == dist_filter]
        if not candidates:
            blocked = self._blocked[kind].get(short)
            if blocked is not None and (dist_filter in (None, blocked.dist)):
                raise PluginBlockedError(
                    f"{kind} {name!r} is provided by {blocked.dist} {blocked.version}, "
                    f"which is blocked: {self._is_blocked(blocked.dist)}"
                )
            known = self.names(kind)
            listing = ", ".join(known) if known else "none installed"
            missing = missing_first_party(kind, name)
            if missing is not None:
                raise PluginNotFoundError(
                    f"unknown {kind} {name!r}: it comes with {missing}, which is not "
                    f"installed; {install_hint(missing)} (known {kind}s: {listing})"
                )
            hint = did_you_mean(short, [k.split(":")[-1] for k in known], n=3, form="; {}")
            raise PluginNotFoundError(f"unknown {kind} {name!r}{hint} (known {kind}s: {listing})")
        if len(candidates) > 1:
            who = " and ".join(f"{p.dist} {p.version} ({p.value})" for p in candidates)
            options = " or ".join(repr(p.qualified) for p in candidates)
            raise PluginConflictError(
                f"{kind} name {short!r} is provided by both {who}; write the qualified name "
                f"{options}, or disable one with RAGLOOM_DISABLE_PLUGINS (or block-plugins in "
                "the policy file)"
            )
        return candidates[0]

    def resolve(self, kind: str, name: str) -> Callable[..., Any]:
        """The class or factory registered as ``name`` of ``kind``, imported now."""
        provider = self._find(kind, name)
        key = (provider.kind, provider.dist, provider.name)
        if key in self._loaded:
            return self._loaded[key]  # type: ignore[no-any-return]
        where = f"{provider.dist} {provider.version}"
        problem = incompatibility(provider.requires_core)
        if problem:
            raise IncompatiblePluginError(
                f"{kind} {provider.name!r} from {where} is refused: {problem}. Install a "
                f"version of {provider.dist} built for this ragloom"
            )
        target: Any
        if provider.factory is not None:
            target = provider.factory
        else:
            assert provider.entry_point is not None
            try:
                target = provider.entry_point.load()
            except Exception as exc:
                raise BrokenPluginError(
                    f"{kind} {provider.name!r} from {where} cannot be loaded from "
                    f"{provider.value!r}: {type(exc).__name__}: {exc}"
                ) from exc
        row = KINDS.get(kind)
        expected = _expected_type(kind)
        if row is not None and row.instance:
            if expected is not None and not isinstance(target, expected):
                raise BrokenPluginError(
                    f"{kind} {provider.name!r} from {where} ({provider.value}) is a "
                    f"{type(target).__name__}, not a {expected.__module__}."
                    f"{expected.__qualname__}"
                )
        elif isinstance(target, type):
            if expected is not None and not issubclass(target, expected):
                raise BrokenPluginError(
                    f"{kind} {provider.name!r} from {where} ({provider.value}) is a "
                    f"{target.__name__}, not a {expected.__name__}"
                )
        elif not callable(target):
            raise BrokenPluginError(
                f"{kind} {provider.name!r} from {where} ({provider.value}) is not a class "
                f"or factory but {type(target).__name__}"
            )
        self._loaded[key] = target
        resolved: Callable[..., Any] = target
        return resolved

    def create(self, kind: str, name: str, params: Mapping[str, Any] | None = None) -> Any:
        """Build the component ``name`` of ``kind`` with ``params``, validated first.

        Raises ``ConfigurationError`` for unknown or mistyped parameters (naming them and
        the accepted ones) and for constructor errors.
        """
        factory = self.resolve(kind, name)
        kwargs = validate_params(factory, dict(params or {}), f"{kind} {name!r}")
        try:
            component = factory(**kwargs)
        except (ValueError, TypeError) as exc:
            raise ConfigurationError(f"{kind} {name!r}: {exc}") from exc
        expected = _expected_type(kind)
        if expected is not None and not isinstance(component, expected):
            provider = self._find(kind, name)
            raise BrokenPluginError(
                f"{kind} {name!r} from {provider.dist} {provider.version} built a "
                f"{type(component).__name__}, not a {expected.__name__}"
            )
        self._made[id(component)] = (component, kind, name)
        return component

    def name_of(self, component: Any) -> tuple[str, str] | None:
        """``(kind, name)`` under which ``component`` was built or its class is registered."""
        made = self._made.get(id(component))
        if made is not None and made[0] is component:
            return made[1], made[2]
        cls = type(component)
        value = f"{cls.__module__}:{cls.__qualname__}"
        maybe: list[tuple[str, str, Provider]] = []
        for kind, table in self._providers.items():
            for name, providers in table.items():
                for p in providers:
                    label = name if len(providers) == 1 else p.qualified
                    if p.value == value or p.factory is cls:
                        return kind, label
                    if p.value.rsplit(":", 1)[-1].rsplit(".", 1)[-1] == cls.__name__:
                        maybe.append((kind, label, p))
        for kind, label, _p in maybe:  # re-exported: compare the loaded object itself
            try:
                if self.resolve(kind, label) is cls:
                    return kind, label
            except Exception:  # noqa: BLE001 - a broken provider is simply not this class
                continue
        return None


_SKIP = {"self", "cache", "policy", "name"}


def validate_params(
    factory: Callable[..., Any], params: dict[str, Any], what: str
) -> dict[str, Any]:
    """Check ``params`` against ``factory``'s signature and annotations (with pydantic)."""
    from pydantic import TypeAdapter, ValidationError

    target = factory.__init__ if isinstance(factory, type) else factory  # type: ignore[misc]
    try:
        sig = inspect.signature(factory)
    except (TypeError, ValueError):
        return params
    try:
        hints = typing.get_type_hints(target)
    except Exception:  # noqa: BLE001 - unresolvable annotations: skip type checks
        hints = {}
    accepts_kwargs = any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values())
    known = {
        n: p
        for n, p in sig.parameters.items()
        if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
    }
    if accepts_kwargs and isinstance(factory, type):
        # **kwargs forwarded to base classes: accept what the bases accept, nothing else.
        accepts_kwargs = False
        for base in factory.__mro__[1:]:
            init = base.__dict__.get("__init__")
            if init is None:
                continue
            if base is object:  # the class consumes **kwargs itself
                accepts_kwargs = True
                break
            base_params = inspect.signature(init).parameters
            for n, p in base_params.items():
                if n != "self" and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
                    known.setdefault(n, p.replace(default=None) if p.default is p.empty else p)
            if not any(p.kind is p.VAR_KEYWORD for p in base_params.values()):
                break
        else:
            accepts_kwargs = True
    out: dict[str, Any] = {}
    for key, value in params.items():
        param = known.get(key)
        if param is None:
            if accepts_kwargs:
                out[key] = value
                continue
            valid = sorted(k for k in known if k not in _SKIP)
            hint = did_you_mean(key, valid, form="; {}")
            raise ConfigurationError(
                f"{what} has no parameter {key!r}{hint} (valid parameters: {', '.join(valid)})"
            )
        hint_type = hints.get(key)
        if hint_type is None or hint_type is Any:
            out[key] = value
            continue
        try:
            # Booleans and strings are not numbers: ``chunk_size = true`` or ``"500"`` is
            # refused, not taken as 1 or 500. Other values keep pydantic's usual conversions
            # (a list for a tuple, a string for an enum or a path).
            strict = isinstance(value, bool) or (isinstance(value, str) and _numeric(hint_type))
            out[key] = TypeAdapter(hint_type).validate_python(value, strict=strict or None)
        except ValidationError as exc:
            msg = "; ".join(e["msg"] for e in exc.errors())
            raise ConfigurationError(
                f"{what}: parameter {key!r} got {value!r}, expected {_type_name(hint_type)} ({msg})"
            ) from None
        except Exception:  # noqa: BLE001 - a type pydantic cannot check: pass it through
            out[key] = value
    missing = [
        n for n, p in known.items() if p.default is p.empty and n not in out and n not in _SKIP
    ]
    if missing:
        raise ConfigurationError(f"{what} is missing required parameter(s): {', '.join(missing)}")
    return out


def _numeric(tp: Any) -> bool:
    """Whether ``tp`` is a number type, or a union of number types and ``None``."""
    args = typing.get_args(tp) if typing.get_origin(tp) in (typing.Union, types.UnionType) else ()
    parts = [a for a in args if a is not type(None)] if args else [tp]
    return bool(parts) and all(p in (int, float) for p in parts)


def _type_name(tp: Any) -> str:
    return getattr(tp, "__name__", None) or str(tp).replace("typing.", "")


def import_object(path: str) -> Any:
    """Import ``module:attr`` (only used when a caller opted in to import paths)."""
    module_name, _, attr = path.partition(":")
    if not module_name or not attr:
        raise ConfigurationError(f"import path must look like 'module:attr', got {path!r}")
    try:
        obj: Any = importlib.import_module(module_name)
        for part in attr.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError) as exc:
        raise ConfigurationError(f"cannot import {path!r}: {exc}") from exc
    return obj


def _load_hook_module(registry: Registry, dist: str, version: str, ep: Any) -> None:
    """Import one plugin's hook module and take its contributions (a failure sets the
    plugin aside as broken and withdraws what it added)."""
    where = f"{dist} {version}: hook module {ep.value!r}"
    try:
        module = ep.load()
    except Exception as exc:  # noqa: BLE001 - a broken plugin breaks only itself
        registry._set_broken(dist, f"{where} cannot be imported: {type(exc).__name__}: {exc}")
        return
    name = f"{dist}:{ep.name}"
    try:
        registry.pm.register(module, name=name)
        registry.pm.check_pending()
    except Exception as exc:  # noqa: BLE001 - e.g. a misspelled hook name
        if registry.pm.get_plugin(name) is not None:
            registry.pm.unregister(name=name)
        registry._set_broken(dist, f"{where} is invalid: {exc}")
        return
    before = registry._provided_by(dist)

    def register(
        kind: str,
        component: str,
        factory: Callable[..., Any],
        _d: str = dist,
        _v: str = version,
    ) -> None:
        registry.register(kind, component, factory, dist=_d, version=_v, hook=True)

    try:
        registry._caller("ragloom_register", module)(register=register)
    except Exception as exc:  # noqa: BLE001 - withdraw what it added, keep the rest
        registry._withdraw(dist, before)
        registry.pm.unregister(name=name)
        registry._set_broken(
            dist, f"{where}: ragloom_register raised {type(exc).__name__}: {exc}"
        )
