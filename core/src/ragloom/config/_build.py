"""Building pipelines from specs, and writing pipelines back out as specs."""

from __future__ import annotations

import builtins
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .. import errors as ragloom_errors
from ..chunking import Chunker, ChunkerRouter
from ..errors import ConfigurationError, PluginError, RagloomError
from ..filters import AllOf, AnyOf, Filter, Not
from ..kinds import KINDS, QUERY_KINDS, kind
from ..multi_query import MultiQueryRoutingPipeline
from ..multi_retrieval import MultiQueryRetrievalPipeline
from ..pipeline import Pipeline
from ..plugins import Registry
from ..plugins._registry import import_object, validate_params
from ..policy import Policy
from ..query_stages import with_index
from ..routed import RoutedStep
from ..step import PipelineStep
from ._spec import (
    CacheSpec,
    ComponentSpec,
    PipelineSpec,
    PolicySpec,
    RetrievalSpec,
    StepSpec,
    load_spec,
    parse_spec,
)

__all__ = ["MAX_CHAINED_STEPS", "build_pipeline", "dump_pipeline", "load_pipeline"]

#: The most steps one pipeline file may chain (far beyond any real pipeline, well within what
#: the engine's nested generators can run on a default Python stack).
MAX_CHAINED_STEPS = 256


class _Builder:
    def __init__(
        self, registry: Registry, source: str, allow_imports: bool, base_dir: Path | None
    ) -> None:
        self.registry = registry
        self.source = source
        self.allow_imports = allow_imports
        self.base_dir = base_dir

    def fail(self, where: str, message: str) -> ConfigurationError:
        return ConfigurationError(f"{self.source}: {where}: {message}")

    def locate(self, where: str, exc: Exception) -> RagloomError:
        text = f"{self.source}: {where}: {exc}"
        if isinstance(exc, PluginError | ConfigurationError):
            return type(exc)(text)  # keep the precise type, add the location
        return ConfigurationError(text)

    # -- parts -----------------------------------------------------------------------------

    def policy(self, spec: PolicySpec | None, where: str) -> Policy | None:
        if spec is None:
            return None
        values = spec.model_dump(exclude_none=True)
        if "retry_on" in values:
            types = []
            for i, name in enumerate(values["retry_on"]):
                exc_type = getattr(ragloom_errors, name, None) or getattr(builtins, name, None)
                if not (isinstance(exc_type, type) and issubclass(exc_type, BaseException)):
                    raise self.fail(
                        f"{where}.retry_on[{i}]",
                        f"unknown exception {name!r}; use a builtin exception "
                        "(e.g. TimeoutError, ConnectionError) or a ragloom error name",
                    )
                types.append(exc_type)
            values["retry_on"] = tuple(types)
        try:
            return Policy(**values)
        except ValueError as exc:
            raise self.locate(where, exc) from None

    def cache(self, spec: CacheSpec | bool | None, where: str) -> Any:
        if spec is None:
            return None
        if spec is False:
            return False
        assert isinstance(spec, CacheSpec)
        params = dict(spec.params)
        if spec.path is not None:
            path = Path(os.path.expanduser(spec.path))
            if not path.is_absolute() and self.base_dir is not None:
                path = self.base_dir / path
            params["path"] = str(path)
        try:
            return self.registry.create("cache_store", spec.store, params)
        except RagloomError as exc:
            raise self.locate(f"{where}.store", exc) from None

    def component(self, kind: str, spec: ComponentSpec | str, where: str) -> Any:
        if isinstance(spec, str):
            spec = ComponentSpec(name=spec)
        if spec.import_ is not None:
            return self.imported(spec.import_, spec.params, kind, where)
        assert spec.name is not None
        try:
            return self.registry.create(kind, spec.name, spec.params)
        except RagloomError as exc:
            raise self.locate(
                f"{where}.name" if "parameter" not in str(exc) else f"{where}.params", exc
            ) from None

    def imported(self, path: str, params: Mapping[str, Any], kind: str, where: str) -> Any:
        if not self.allow_imports:
            raise self.fail(
                f"{where}.import",
                f"import path {path!r} refused: pipeline files may only name registered "
                "components; pass allow_imports=True (CLI: --allow-imports) to opt in",
            )
        try:
            factory = import_object(path)
            kwargs = validate_params(factory, dict(params), f"{kind} {path!r}")
            return factory(**kwargs)
        except (RagloomError, ValueError, TypeError) as exc:
            raise self.locate(where, exc) from None

    def filter(self, spec: Mapping[str, Any], where: str) -> Filter[Any]:
        if not isinstance(spec, Mapping) or len(spec) != 1:
            raise self.fail(
                where,
                "a filter is a table with exactly one key: a filter name "
                f"({', '.join(self.registry.names('filter'))}), 'all', 'any' or 'not'",
            )
        ((key, value),) = spec.items()
        if key in ("all", "any"):
            if not isinstance(value, list) or not value:
                raise self.fail(f"{where}.{key}", "needs a non-empty list of filters")
            parts = [self.filter(v, f"{where}.{key}[{i}]") for i, v in enumerate(value)]
            return AllOf(*parts) if key == "all" else AnyOf(*parts)
        if key == "not":
            return Not(self.filter(value, f"{where}.not"))
        if value is None:
            value = {}
        if not isinstance(value, Mapping):
            raise self.fail(f"{where}.{key}", "filter parameters must be a table")
        try:
            return self.registry.create("filter", key, value)  # type: ignore[no-any-return]
        except RagloomError as exc:
            raise self.locate(f"{where}.{key}", exc) from None

    def step(self, spec: StepSpec, where: str) -> PipelineStep[Any]:
        policy = self.policy(spec.policy, f"{where}.policy")
        cache = self.cache(spec.cache, f"{where}.cache")
        if spec.routes is not None or spec.default is not None:
            children: list[tuple[Filter[Any] | None, PipelineStep[Any]]] = []
            for i, route in enumerate(spec.routes or []):
                flt: Filter[Any] | None = self.filter(route.filter, f"{where}.routes[{i}].filter")
                children.append((flt, self.step(route.step, f"{where}.routes[{i}].step")))
            if spec.default is not None:
                children.append((None, self.step(spec.default, f"{where}.default")))
            all_chunkers = all(isinstance(s, Chunker) for _f, s in children)
            router: RoutedStep[Any] = (
                ChunkerRouter(cache=cache, policy=policy, name=spec.name)
                if all_chunkers
                else _GenericRouter(cache=cache, policy=policy, name=spec.name)
            )
            for route_filter, child in children:
                if route_filter is not None:
                    router = router.route(route_filter, child)
                else:
                    router = router.default(child)
            return router
        if spec.import_ is not None:
            step: PipelineStep[Any] = self.imported(spec.import_, spec.params, "step", where)
            if not isinstance(step, PipelineStep):
                raise self.fail(f"{where}.import", f"{spec.import_} is not a PipelineStep")
        else:
            named = spec.component
            assert named is not None
            kind_name, name = named
            row = kind(kind_name)
            try:
                component = self.registry.create(kind_name, name, dict(spec.params))
            except RagloomError as exc:
                field = "params" if "parameter" in str(exc) else row.step_key
                raise self.locate(f"{where}.{field}", exc) from None
            wrapper = row.wrapper_type()
            step = component if wrapper is None else wrapper(component)
        if policy is not None:
            step.configure(policy=policy)
        if cache is not None:
            step.configure(cache=cache)
        if spec.cache_mode is not None:
            step.configure(cache_mode=spec.cache_mode)
        if spec.cache_version is not None:
            step.configure(cache_version=spec.cache_version)
        return step.configure(name=spec.name)


    def retrieval(
        self, spec: RetrievalSpec, decomposer: Any, router: Any, query: Any, policy: Any
    ) -> tuple[MultiQueryRetrievalPipeline, Any]:
        """The retrieval block and the store it opened (the caller owns and closes it)."""
        store_spec = spec.store
        if store_spec.name is not None:
            params = dict(store_spec.params)
            path = params.get("path")
            if isinstance(path, str) and self.base_dir is not None:
                resolved = Path(os.path.expanduser(path))
                if not resolved.is_absolute():
                    params["path"] = str(self.base_dir / resolved)
            store_spec = store_spec.model_copy(update={"params": params})
        store = self.component("store", store_spec, "retrieval.store")
        try:
            embedder = (
                None
                if spec.embedder is None
                else self.component("embedder", spec.embedder, "retrieval.embedder")
            )
            retriever = self.indexed("retriever", spec.retriever, store, embedder)
            components = {
                row.name: self.indexed(row.name, value, store, embedder, row.setting)
                for row in QUERY_KINDS
                if row.setting and (value := getattr(spec, row.setting, None)) is not None
            }
            try:
                block = MultiQueryRetrievalPipeline(
                    decomposer,
                    router,
                    retriever,
                    top_k=spec.top_k,
                    fusion_k=spec.fusion_k,
                    consensus=spec.consensus,
                    whole_weight=spec.whole_weight,
                    per_document=spec.per_document,
                    search_depth=spec.search_depth,
                    max_sub_queries=query.max_sub_queries,
                    on_empty_decomposition=query.on_empty_decomposition,
                    policy=policy,
                    registry=self.registry,
                    store=store,
                    embedder=embedder,
                    components=components,
                )
            except (ValueError, TypeError, PluginError) as exc:
                raise self.locate("retrieval", exc) from None
        except BaseException:
            store.close()
            raise
        return block, store

    def indexed(
        self, kind_name: str, spec: ComponentSpec, store: Any, embedder: Any,
        key: str | None = None,
    ) -> Any:
        """A component of the retrieval section (the retriever, a query-side kind's), handed
        the block's store and embedder when its factory takes them."""
        where = f"retrieval.{key or kind_name}"
        if spec.import_ is not None:
            params = dict(spec.params)
            if self.allow_imports:  # (refused with the usual message by imported() otherwise)
                try:
                    params = with_index(import_object(spec.import_), params, store, embedder)
                except (RagloomError, ValueError, TypeError) as exc:
                    raise self.locate(f"{where}.import", exc) from None
            return self.imported(spec.import_, params, kind_name, where)
        assert spec.name is not None
        try:
            factory = self.registry.resolve(kind_name, spec.name)
            params = with_index(factory, dict(spec.params), store, embedder)
            return self.registry.create(kind_name, spec.name, params)
        except RagloomError as exc:
            field = "params" if "parameter" in str(exc) else "name"
            raise self.locate(f"{where}.{field}", exc) from None


class _GenericRouter(RoutedStep[Any]):
    """A routed step over steps of mixed kinds, built from a pipeline file."""

    step_id = "ragloom/routed"


def build_pipeline(
    spec: PipelineSpec | Mapping[str, Any] | str | os.PathLike[str],
    *,
    registry: Registry | None = None,
    allow_imports: bool = False,
    source: str | None = None,
) -> Pipeline[Any]:
    """Build a :class:`Pipeline` from a spec, plain data or a pipeline file path.

    Each call uses its own :class:`Registry` unless one is given. An ingestion spec builds a
    pipeline with no source (feed it with ``run(inputs)``); a ``query`` spec builds the
    ``MultiQueryRoutingPipeline`` block (run it with ``run(["question", ...])``), and with a
    ``retrieval`` section the ``MultiQueryRetrievalPipeline`` block, which owns the store it
    opened (close the pipeline, or use it as a context manager, to close the store).
    """
    base_dir: Path | None = None
    if isinstance(spec, str | os.PathLike):
        path = Path(spec)
        source = source or str(path)
        base_dir = path.parent
        spec = load_spec(path)
    else:
        source = source or "<spec>"
        spec = parse_spec(spec, source=source)
    registry = registry or Registry()
    builder = _Builder(registry, source, allow_imports, base_dir)
    policy = builder.policy(spec.policy, "policy")
    cache = builder.cache(spec.cache, "cache")
    if spec.query is not None:
        q = spec.query
        decomposer = builder.component("decomposer", q.decomposer, "query.decomposer")
        router = builder.component("router", q.router, "query.router")
        if spec.retrieval is not None:
            searching, store = builder.retrieval(spec.retrieval, decomposer, router, q, policy)
            try:
                found: Pipeline[Any] = searching.build()
            except BaseException:
                store.close()
                raise
            found.own(store)
            found.cache = cache
            found.name = spec.name or found.name
            return _finish(found, registry, spec)
        try:
            block = MultiQueryRoutingPipeline(
                decomposer,
                router,
                max_sub_queries=q.max_sub_queries,
                on_empty_decomposition=q.on_empty_decomposition,
                policy=policy,
            )
        except (ValueError, TypeError) as exc:
            raise builder.locate("query", exc) from None
        pipeline = block.build(registry=registry)
        pipeline.cache = cache
        pipeline.name = spec.name or pipeline.name
    else:
        assert spec.steps is not None
        if len(spec.steps) > MAX_CHAINED_STEPS:
            raise builder.fail(
                "steps",
                f"{len(spec.steps)} steps in one chain; a pipeline runs at most "
                f"{MAX_CHAINED_STEPS} (each step nests one level of the engine's generators): "
                "merge steps, or split the work into several pipelines",
            )
        node: PipelineStep[Any] | None = None
        for i, step_spec in enumerate(spec.steps):
            step = builder.step(step_spec, f"steps[{i}]")
            node = step if node is None else step(node)
        assert node is not None
        pipeline = Pipeline(node, policy=policy, cache=cache, name=spec.name)
    return _finish(pipeline, registry, spec)


def _finish(pipeline: Pipeline[Any], registry: Registry, spec: PipelineSpec) -> Pipeline[Any]:
    pipeline.registry = registry
    try:
        registry.call_isolated("ragloom_pipeline_built", pipeline=pipeline, spec=spec)
    except BaseException:
        pipeline.close()
        raise
    return pipeline


def load_pipeline(
    path: str | os.PathLike[str], *, registry: Registry | None = None, allow_imports: bool = False
) -> Pipeline[Any]:
    """Read and build a pipeline file."""
    return build_pipeline(path, registry=registry, allow_imports=allow_imports)


# -- writing specs back out -----------------------------------------------------------------


def _policy_out(policy: Policy | None) -> dict[str, Any] | None:
    if policy is None:
        return None
    values = policy.explicit_fields()
    if "retry_on" in values:
        values["retry_on"] = [t.__name__ for t in values["retry_on"]]  # type: ignore[attr-defined]
    return values or None


class _Dumper:
    def __init__(self, registry: Registry) -> None:
        self.registry = registry

    def name(self, component: Any, kind: str) -> str:
        ref = self.registry.name_of(component)
        if ref is None or ref[0] != kind:
            raise ConfigurationError(
                f"cannot write {type(component).__name__} to a spec: it is not a registered "
                f"{kind} (register it under an entry point)"
            )
        return ref[1]

    def filter(self, flt: Filter[Any]) -> dict[str, Any]:
        if isinstance(flt, AllOf):
            return {"all": [self.filter(p) for p in flt.parts]}
        if isinstance(flt, AnyOf):
            return {"any": [self.filter(p) for p in flt.parts]}
        if isinstance(flt, Not):
            return {"not": self.filter(flt.part)}
        return {self.name(flt, "filter"): dict(flt.config())}

    def step(self, step: PipelineStep[Any]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if isinstance(step, RoutedStep):
            out["routes"] = [
                {"filter": self.filter(f), "step": self.step(s)} for f, s in step.routes
            ]
            if step.default_step is not None:
                out["default"] = self.step(step.default_step)
        else:
            component = getattr(step, "component", step)
            ref = self.registry.name_of(component)
            row = KINDS.get(ref[0]) if ref is not None else None
            if ref is None and component is step and _importable(type(step)):
                # Not registered, but importable: written as an import (building it back
                # needs allow_imports), with the arguments it was built with.
                out["import"] = f"{type(step).__module__}:{type(step).__qualname__}"
                params = dict(component.config()) or _plain_arguments(step)
            elif ref is None or row is None or row.step_key is None:
                raise ConfigurationError(
                    f"cannot write {type(component).__name__} to a spec: it is not a "
                    "registered step component (register it under an entry point, e.g. "
                    "ragloom.chunkers or ragloom.steps)"
                )
            else:
                out[row.step_key] = ref[1]
                params = dict(component.config())
            if params:
                out["params"] = params
        if step.name != type(step).__name__ and step.name != _default_name(step):
            out["name"] = step.name
        policy = _policy_out(step.policy)
        if policy:
            out["policy"] = policy
        cache = self.cache(step.cache)
        if cache is not None:
            out["cache"] = cache
        if getattr(step, "cache_mode", None) is not None:
            out["cache_mode"] = step.cache_mode
        version = step.__dict__.get("cache_version")
        if version is not None:
            out["cache_version"] = version
        return out

    def cache(self, cache: Any) -> Any:
        if cache is None or cache is False:
            return cache
        ref = self.registry.name_of(cache)
        if ref is None or ref[0] != "cache_store":
            raise ConfigurationError(
                f"cannot write the cache store {type(cache).__name__} to a spec: it is not a "
                "registered cache store (register it under ragloom.cache_stores)"
            )
        config = dict(cache.config()) if callable(getattr(cache, "config", None)) else {}
        out: dict[str, Any] = {"store": ref[1]}
        if "path" in config:
            out["path"] = str(config.pop("path"))
        if config:
            out["params"] = config
        return out


def _importable(cls: type) -> bool:
    return "<" not in cls.__qualname__ and cls.__module__ not in ("__main__", "builtins")


def _plain_arguments(step: PipelineStep[Any]) -> dict[str, Any]:
    """The arguments ``step`` was built with that rebuild it (plain data only)."""
    import json

    from ..identity import captured_arguments

    out: dict[str, Any] = {}
    for key, value in captured_arguments(step).items():
        if key in step.identity_ignores:
            continue
        try:
            json.dumps(value)
        except (TypeError, ValueError):
            raise ConfigurationError(
                f"cannot write {type(step).__name__} to a spec: its argument {key!r} is not "
                "plain data; register the step, or give it a config()"
            ) from None
        out[key] = value
    return out


def _default_name(step: PipelineStep[Any]) -> str:
    """The name a step gets when none is given (a wrapper names itself after its component)."""
    component = getattr(step, "component", None)
    return f"Embed[{type(component).__name__}]" if component is not None else type(step).__name__


def dump_pipeline(pipeline: Pipeline[Any], *, registry: Registry | None = None) -> dict[str, Any]:
    """An equivalent spec (plain data) of a built pipeline; ``build_pipeline`` accepts it.

    Every component must be registered (its class under an entry point or ``register``).
    """
    registry = registry or getattr(pipeline, "registry", None) or Registry()
    dumper = _Dumper(registry)
    out: dict[str, Any] = {"version": 1}
    if pipeline.name:
        out["name"] = pipeline.name
    policy = _policy_out(pipeline.policy)
    block = pipeline.block
    if isinstance(block, MultiQueryRetrievalPipeline):
        out["query"] = _query_out(dumper, block.routing)
        out["retrieval"] = _retrieval_out(dumper, block)
    elif isinstance(block, MultiQueryRoutingPipeline):
        out["query"] = _query_out(dumper, block)
    else:
        out["steps"] = [dumper.step(s) for s in pipeline.steps()]
    if policy:
        out["policy"] = policy
    cache = dumper.cache(pipeline.cache)
    if cache is not None:
        out["cache"] = cache
    return out


def _query_out(dumper: _Dumper, block: MultiQueryRoutingPipeline) -> dict[str, Any]:
    return {
        "decomposer": {
            "name": dumper.name(block.decomposer, "decomposer"),
            "params": dict(block.decomposer.config()),
        },
        "router": {
            "name": dumper.name(block.router, "router"),
            "params": dict(block.router.config()),
        },
        "max_sub_queries": block.max_sub_queries,
        "on_empty_decomposition": block.on_empty_decomposition.value,
    }


def _retrieval_out(dumper: _Dumper, block: MultiQueryRetrievalPipeline) -> dict[str, Any]:
    given = sorted(set(block.given_retrievers) & {s.retriever for s in block.routes.values()})
    if given:
        raise ConfigurationError(
            f"cannot write the retrievers {', '.join(map(repr, given))} to a spec: they were "
            "given in code, and a pipeline file names registered retrievers only (let the "
            "block build them from a registry)"
        )
    if block.store is None:
        raise ConfigurationError(
            "cannot write the retrieval block to a spec: it has no store (pass store=...)"
        )
    out: dict[str, Any] = {
        "store": {
            "name": dumper.name(block.store, "store"),
            "params": dict(block.store.config()),
        },
    }
    if block.embedder is not None:
        out["embedder"] = {
            "name": dumper.name(block.embedder, "embedder"),
            "params": dict(block.embedder.config()),
        }
    out["retriever"] = {
        "name": dumper.name(block.retriever, "retriever"),
        "params": dict(block.retriever.config()),
    }
    out["top_k"] = block.top_k
    out["fusion_k"] = block.fusion_k
    out["consensus"] = block.consensus
    out["whole_weight"] = block.whole_weight
    out["per_document"] = block.per_document
    out["search_depth"] = block.search_depth
    for kind_name, component in block.components.items():
        setting = KINDS[kind_name].setting
        assert setting is not None
        out[setting] = {
            "name": dumper.name(component, kind_name),
            "params": _params_out(component),
        }
    return out


def _params_out(component: Any) -> dict[str, Any]:
    """A component's parameters for a spec (those the search hands over left out: the block's
    store and embedder are handed over again when it is built)."""
    return {
        k: v for k, v in dict(component.config()).items() if k not in ("store", "embedder")
    }
