"""Search an index in one call, with the same defaults as ``ragloom search``.

:func:`search` answers one question; :class:`Searcher` keeps the index, the model and the
components open for many (``ragloom eval`` and a notebook's loop use it). Both build the search
the command line builds: with no pipeline file, the ``ragloom-rules`` heuristic decomposer, the
routes fitted from the index's collections (:mod:`ragloom.index_routes`: no routing with one
collection; a keyword router over a routes file, or any router named, instead), and a
:class:`StoreRetriever` over the embedded LanceDB index of ragloom-lancedb (hybrid when the
index holds vectors, embedding each sub-query with ragloom-semantic's model2vec encoder),
restricted to some collections when asked; with a reranker when one is named (``rerank``, or
a routes file's ``rerank`` key: each query-side kind of :mod:`ragloom.kinds` adds such a
setting). A pipeline file with ``query`` and ``retrieval`` sections names any other components.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

from ._hints import did_you_mean
from .collection import collection_where
from .errors import ConfigurationError
from .kinds import QUERY_KINDS

if TYPE_CHECKING:
    from .multi_retrieval import RetrievalResult
    from .pipeline import Pipeline

__all__ = [
    "DEFAULT_DECOMPOSER",
    "DEFAULT_EMBEDDER",
    "DEFAULT_INDEX",
    "DEFAULT_ROUTER",
    "DEFAULT_STORE",
    "DEFAULT_TOP_K",
    "NO_ROUTER",
    "ROUTES_ROUTER",
    "WHOLE_QUESTION",
    "SearchSettings",
    "Searcher",
    "load_routes",
    "index_exists",
    "index_probe",
    "is_remote",
    "open_index",
    "routes_router",
    "search",
]

#: The index folder when none is named.
DEFAULT_INDEX = os.path.join(".ragloom", "index")
#: The components used when none is named, by distribution-qualified name so that no other
#: installed plugin can take their place.
DEFAULT_STORE = "ragloom-lancedb:lancedb"
DEFAULT_DECOMPOSER = "ragloom-rules:heuristic"
#: The default router: the routes fitted from the index's collections (not a registered name).
DEFAULT_ROUTER = "index"
ROUTES_ROUTER = "ragloom-rules:keyword"
#: The ``router`` value that routes nothing (every sub-query searches the whole index).
NO_ROUTER = "none"
#: The embedder of queries against an index with vectors.
DEFAULT_EMBEDDER = "ragloom-semantic:model2vec"
#: Passages per sub-query and in the fused answer.
DEFAULT_TOP_K = 5
#: The ``decomposer`` value that searches each question whole (no decomposition).
WHOLE_QUESTION = "none"

#: The keys of a routes file: its routes, and one per query-side kind of the table of kinds
#: (``rerank``: the reranker of the searches that use the file).
ROUTES_KEYS = (
    "routes", "default_route", "description", *(row.setting for row in QUERY_KINDS if row.setting)
)

SearchMode = Literal["hybrid", "vector", "text"]


class _SearchFields(BaseModel):
    """What a search is made of (every field has the command line's default).

    ``config`` (a pipeline file with ``query`` and ``retrieval`` sections) replaces all the
    component fields; giving both is an error. Each query-side kind of the table of kinds adds
    two fields: its ``setting`` (``rerank``: a registered name) and ``SETTING_options`` (its
    parameters); a routes file may name one too (the settings win).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    index: str = DEFAULT_INDEX
    routes: str | None = None
    decomposer: str | None = None
    #: A registered router, ``"none"`` (no routing) or ``"index"`` (the routes fitted from the
    #: index: the default without ``routes``).
    router: str | None = None
    #: Search only these collections of the index (``None``: all).
    collections: list[str] | None = None
    mode: SearchMode | None = None
    #: The embedder of the sub-queries (``None``: the one the index records, else
    #: :data:`DEFAULT_EMBEDDER`).
    embedder: str | None = None
    top_k: int = Field(default=DEFAULT_TOP_K, ge=1)
    #: The weight of a split question's whole-question search (``None``: the block's default;
    #: 0: not searched).
    whole_weight: float | None = Field(default=None, ge=0)
    #: Passages of one document the fused list shows before every other document's first
    #: (``None``: the block's default; 0: the fused order alone).
    per_document: int | None = Field(default=None, ge=0)
    #: Each search asks for this many times ``top_k`` passages (``None``: the block's default).
    search_depth: int | None = Field(default=None, ge=1)
    config: str | None = None
    allow_imports: bool = False

    def check(self) -> None:
        """Refuse a pipeline file together with settings it replaces."""
        if self.config is None:
            return
        given = [
            name
            for name in (
                "routes", "decomposer", "router", "mode", "embedder", "whole_weight",
                "per_document", "search_depth",
                "collections", *query_settings(),
            )
            if getattr(self, name, None) is not None
        ]
        if self.top_k != DEFAULT_TOP_K:
            given.append("top_k")
        if given:
            raise ConfigurationError(
                f"{', '.join(given)}: these choose the search without a file; with a pipeline "
                "file set them in its 'query' and 'retrieval' sections"
            )


def query_settings() -> list[str]:
    """The fields of :class:`SearchSettings` that the query-side kinds add (``rerank``,
    ``rerank_options``...)."""
    return [
        name for row in QUERY_KINDS if row.setting
        for name in (row.setting, f"{row.setting}_options")
    ]


#: The fields of the query-side kinds (a registered name, its parameters).
if TYPE_CHECKING:
    SearchSettings = _SearchFields
else:
    SearchSettings = create_model(
        "SearchSettings",
        __base__=_SearchFields,
        __module__=__name__,
        **{
            name: field
            for row in QUERY_KINDS
            if row.setting
            for name, field in (
                (row.setting, (str | None, Field(
                    default=None, description=f"A registered {row.name}: {row.description}."
                ))),
                (f"{row.setting}_options", (dict[str, Any] | None, Field(
                    default=None, description=f"The parameters of the {row.name}."
                ))),
            )
        },
    )
    SearchSettings.__doc__ = _SearchFields.__doc__


def is_remote(path: str) -> bool:
    """Whether ``path`` names an index in object storage (a URI such as ``s3://bucket/path``)
    rather than a local folder."""
    return "://" in path and not path.startswith("file://")


def index_exists(path: str) -> bool:
    """Whether there is an index at ``path`` (a local folder, or objects under a URI: asked
    of the store)."""
    if not is_remote(path):
        return os.path.exists(path)
    store = open_index(path)
    try:
        return bool(store.exists())
    finally:
        store.close()


def open_index(
    path: str, *, registry: Any = None, must_exist: bool = False, wait: float | None = None
) -> Any:
    """The store at ``path`` (the embedded LanceDB store of ragloom-lancedb); ``wait``: the
    seconds a writer waits for another one (default: the store's).

    Raises:
        ConfigurationError: ragloom-lancedb is not installed, or ``must_exist`` and there is no
            index at ``path``.
    """
    from .errors import PluginNotFoundError
    from .plugins import Registry
    from .plugins._discovery import install_hint

    missing = ConfigurationError(
        f"no index at {path}: build one with `ragloom ingest PATH... --index {path}`"
    )
    if must_exist and not is_remote(path) and not os.path.exists(path):
        raise missing
    registry = registry or Registry()
    try:
        params: dict[str, Any] = {"path": path}
        if wait is not None:
            params["lock_timeout"] = wait
        store = registry.create("store", DEFAULT_STORE, params)
    except PluginNotFoundError:
        raise ConfigurationError(
            f"an index needs the store {DEFAULT_STORE}: {install_hint('ragloom-lancedb')}"
        ) from None
    if must_exist and is_remote(path):
        try:
            found = bool(store.exists())
        except BaseException:
            store.close()
            raise
        if not found:
            store.close()
            raise missing
    return store


def load_routes(path: str) -> dict[str, Any]:
    """Read a route set (JSON, YAML or TOML): ``routes`` (a list) and ``default_route``.

    Errors name the file and the key at fault (``routes[2]``), with the closest valid keys for
    a misspelt one.
    """
    from .config import read_data_file

    file = Path(path)
    data = read_data_file(file, what="routes", default_format="json")
    shape = (
        "a routes file is a mapping with a 'routes' list (each route: name, keywords, patterns, "
        "weight) and an optional 'default_route'"
    )
    if not isinstance(data, dict):
        raise ConfigurationError(f"{file}: {shape}, not a {type(data).__name__}")
    unknown = sorted(set(data) - set(ROUTES_KEYS))
    if unknown:
        notes = []
        for key in unknown:
            notes.append(f"{key!r}{did_you_mean(str(key), ROUTES_KEYS)}")
        raise ConfigurationError(
            f"{file}: unknown key{'s' if len(notes) > 1 else ''} {', '.join(notes)}; {shape}"
        )
    routes = data.get("routes")
    if not isinstance(routes, list):
        got = "missing" if routes is None else f"a {type(routes).__name__}"
        raise ConfigurationError(f"{file}: 'routes' is {got}; {shape}")
    for index, route in enumerate(routes):
        if not isinstance(route, dict):
            raise ConfigurationError(
                f"{file}: routes[{index}] is a {type(route).__name__}, not a mapping (name, "
                "keywords, patterns, weight)"
            )
    params: dict[str, Any] = {"routes": routes}
    if data.get("default_route") is not None:
        params["default_route"] = data["default_route"]
    return params


def routes_components(path: str) -> dict[str, tuple[str, dict[str, Any]]]:
    """The query-side components a routes file names (``rerank: mmr``, or ``rerank: {name:
    mmr, params: {...}}``): kind name -> (registered name, parameters)."""
    from .config import read_data_file

    data = read_data_file(Path(path), what="routes", default_format="json")
    out: dict[str, tuple[str, dict[str, Any]]] = {}
    if not isinstance(data, dict):
        return out
    for row in QUERY_KINDS:
        value = data.get(row.setting) if row.setting else None
        if value is None:
            continue
        if isinstance(value, str) and value.strip():
            out[row.name] = (value, {})
            continue
        if (
            isinstance(value, dict)
            and isinstance(value.get("name"), str)
            and set(value) <= {"name", "params"}
            and isinstance(value.get("params", {}), dict)
        ):
            out[row.name] = (value["name"], dict(value.get("params") or {}))
            continue
        raise ConfigurationError(
            f"{path}: {row.setting!r} names a registered {row.name}: a name, or a mapping with "
            f"'name' and 'params', not {value!r}"
        )
    return out


def routes_router(registry: Any, name: str, path: str) -> Any:
    """The router ``name`` over the routes of the file at ``path``; a mistake in the routes is
    reported against that file."""
    from .errors import PluginError

    params = load_routes(path)
    try:
        return registry.create("router", name, params)
    except PluginError:
        raise  # not the file's fault: the router itself is missing, blocked or clashing
    except ConfigurationError as exc:
        message = str(exc).removeprefix(f"router {name!r}: ")
        raise ConfigurationError(f"{path}: {message}") from None


def build_search(settings: SearchSettings) -> Pipeline[Any]:
    """The search pipeline of ``settings``; it owns the index it opened (close it)."""
    settings.check()
    if settings.config is not None:
        return _config_pipeline(settings.config, settings.allow_imports)
    return _default_pipeline(settings)


def _default_pipeline(settings: SearchSettings) -> Pipeline[Any]:
    from .multi_retrieval import (
        DEFAULT_PER_DOCUMENT,
        DEFAULT_SEARCH_DEPTH,
        DEFAULT_WHOLE_WEIGHT,
        MultiQueryRetrievalPipeline,
    )
    from .plugins import Registry
    from .retrieval import StoreRetriever

    registry = Registry()
    # The components first (a mistake in the routes file is reported before anything opens).
    chosen: Any = None
    if settings.routes is not None:
        chosen = routes_router(registry, settings.router or ROUTES_ROUTER, settings.routes)
    elif settings.router == NO_ROUTER:
        from .index_routes import WholeIndex

        chosen = WholeIndex("routing off")
    elif settings.router not in (None, DEFAULT_ROUTER):
        chosen = registry.create("router", settings.router)
    if settings.decomposer == WHOLE_QUESTION:
        from .query import WholeQuestion

        planner: Any = WholeQuestion()
    else:
        planner = registry.create("decomposer", settings.decomposer or DEFAULT_DECOMPOSER)
    store = open_index(settings.index, registry=registry, must_exist=True)
    try:
        from .stores import StoreError

        try:  # opening the tables first lets the check read through them
            dimension = _dimension(store)
        except StoreError:
            check_index(store)  # says what is damaged, and how to repair it
            raise
        check_index(store)
        if settings.collections is not None:
            check_collections(store, settings.collections)
        embedder = None
        if dimension is not None and settings.mode != "text":
            embedder = index_embedder(store, registry, settings.embedder, dimension)
        retriever = StoreRetriever(
            store, embedder, mode=settings.mode, top_k=settings.top_k,
            where=collection_where(settings.collections),
        )
        if chosen is None:
            from .index_routes import index_router

            chosen = index_router(
                store, registry=registry, collections=settings.collections,
                probe=index_probe(store, settings.collections),
            )
        block = MultiQueryRetrievalPipeline(
            planner,
            chosen,
            retriever,
            top_k=settings.top_k,
            whole_weight=(
                DEFAULT_WHOLE_WEIGHT if settings.whole_weight is None else settings.whole_weight
            ),
            per_document=(
                DEFAULT_PER_DOCUMENT if settings.per_document is None else settings.per_document
            ),
            search_depth=(
                DEFAULT_SEARCH_DEPTH if settings.search_depth is None else settings.search_depth
            ),
            registry=registry,
            store=store,
            embedder=embedder,
            components=_query_components(settings, registry, store, embedder),
        )
        pipeline = block.build()
    except BaseException:
        store.close()
        raise
    pipeline.registry = registry
    pipeline.own(store)
    return pipeline


def _query_components(
    settings: SearchSettings, registry: Any, store: Any, embedder: Any
) -> dict[str, Any]:
    """The query-side components the settings (or, for those they leave out, the routes
    file) name, handed the store and the embedder when they take them."""
    from .query_stages import build_query_component

    chosen = routes_components(settings.routes) if settings.routes is not None else {}
    for row in QUERY_KINDS:
        assert row.setting is not None
        name = getattr(settings, row.setting, None)
        options = getattr(settings, f"{row.setting}_options", None)
        if name is not None:
            chosen[row.name] = (name, dict(options or {}))
        elif options:
            if row.name not in chosen:
                raise ConfigurationError(
                    f"{row.setting}_options: name the {row.name} they are for "
                    f"({row.setting}=NAME)"
                )
            chosen[row.name] = (chosen[row.name][0], {**chosen[row.name][1], **options})
    return {
        kind_name: build_query_component(registry, kind_name, name, params, store, embedder)
        for kind_name, (name, params) in chosen.items()
    }


def check_collections(store: Any, names: Sequence[str]) -> None:
    """Refuse a collection the index does not hold (naming the closest and those it holds)."""
    from .collection import list_collections

    if not names:
        raise ConfigurationError("collections: name at least one collection (or give none)")
    held = [c.name for c in list_collections(store) if c.name is not None]
    for name in names:
        if name in held:
            continue
        hint = did_you_mean(name, held)
        listed = ", ".join(held) if held else "none"
        raise ConfigurationError(
            f"no collection {name!r} in the index{hint}; its collections: {listed}"
        )


def check_index(store: Any) -> None:
    """Refuse an index whose consistency check finds damage (a write under way in another
    process is not damage).

    Raises:
        StoreError: naming the problems and the command that repairs them.
    """
    from .stores import StoreError

    found = store.check()
    if found.ok or (found.busy and not found.unreadable):
        return
    where = found.location
    raise StoreError(
        f"the index at {where} is damaged: {'; '.join(found.problems)}; repair it with "
        f"`ragloom index check --repair --index {where}`, then ingest its files again"
    )


def index_embedder(store: Any, registry: Any, name: str | None, dimension: int) -> Any:
    """The embedder of queries against ``store``: ``name`` if given, else the one the index
    records (by name and parameters), else :data:`DEFAULT_EMBEDDER`.

    Raises:
        ConfigurationError: the recorded embedder cannot be made here.
        StoreError: the embedder's vectors have another dimension than the index's.
    """
    from .errors import RagloomError
    from .stores import StoreError

    where = getattr(store, "location", None) or store.info().location
    recorded = store.properties().get("embedder") if name is None else None
    if isinstance(recorded, dict) and recorded.get("name"):
        try:
            embedder = registry.create(
                "embedder", str(recorded["name"]), dict(recorded.get("params") or {})
            )
        except RagloomError as exc:
            raise ConfigurationError(
                f"the index at {where} was built with the embedder "
                f"{recorded['name']!r}, which cannot be made here: {exc}"
            ) from None
        source = "the embedder the index records"
    else:
        embedder = registry.create("embedder", name or DEFAULT_EMBEDDER)
        source = f"the embedder {name!r}" if name else (
            f"the default embedder {DEFAULT_EMBEDDER!r} (the index does not record its own: "
            "it was built by an older ragloom)"
        )
    made = embedder.dimension
    if made != dimension:
        raise StoreError(
            f"the index at {where} holds vectors of dimension {dimension}, but "
            f"{source} makes vectors of dimension {made}: search with --embedder NAME (the "
            "embedder that built it), or ingest the files again"
        )
    return embedder


def index_probe(store: Any, collections: list[str] | None = None) -> Any:
    """The search of ``store`` (of these ``collections`` only, when given) that the routes
    fitted from its collections decide by, for ``ragloom search`` and ``ragloom plan --index``
    alike: by full text, which routes as well as the hybrid search on the project's
    development questions at a fraction of its cost (a hybrid search reads the vectors too,
    and grows with the index; see the query side's guide)."""
    from .retrieval import StoreRetriever

    return StoreRetriever(store, None, mode="text", where=collection_where(collections))


def _dimension(store: Any) -> int | None:
    """The store's vector dimension, read without counting its rows where it can be."""
    dimension = getattr(store, "dimension", None)
    if dimension is None or not isinstance(dimension, int):
        dimension = store.info().dimension
    return dimension if isinstance(dimension, int) else None


def _config_pipeline(config: str, allow_imports: bool) -> Pipeline[Any]:
    """The search pipeline of a pipeline file with ``query`` and ``retrieval`` sections."""
    from .config import build_pipeline, load_spec

    spec = load_spec(config)
    if spec.query is None or spec.retrieval is None:
        what = "an ingestion pipeline (it has 'steps')" if spec.query is None else (
            "a query block without a 'retrieval' section (`ragloom plan --config` runs it)"
        )
        raise ConfigurationError(
            f"{config} is {what}; a search needs a 'query' block and a 'retrieval' section "
            "naming the store to search"
        )
    pipeline = build_pipeline(config, allow_imports=allow_imports)
    store = getattr(getattr(pipeline, "block", None), "store", None)
    if store is not None and callable(getattr(store, "check", None)):
        try:
            check_index(store)  # a damaged index is refused here too, never searched empty
        except BaseException:
            close = getattr(store, "close", None)
            if callable(close):
                close()
            raise
    return pipeline


class Searcher:
    """An open search: the index, the model and the components, kept for many questions.

    ``Searcher(index=PATH)`` takes the fields of :class:`SearchSettings` (or ``settings=``).
    Use it as a context manager, or call :meth:`close`.
    """

    def __init__(self, settings: SearchSettings | None = None, **fields: Any) -> None:
        if settings is not None and fields:
            raise TypeError("pass settings= or the settings' fields, not both")
        self.settings = settings if settings is not None else SearchSettings(**fields)
        self.pipeline = build_search(self.settings)

    def __enter__(self) -> Searcher:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.pipeline.close()

    @property
    def store(self) -> Any:
        """The store searched (``None`` when the pipeline names none)."""
        block = getattr(self.pipeline, "block", None)
        return getattr(block, "store", None)

    @property
    def routes_by_collection(self) -> bool:
        """Whether the search routes each ask by the collections of its index (the routes
        fitted from them: an index of several collections, no other router named)."""
        from .index_routes import CollectionRouter

        block = getattr(self.pipeline, "block", None)
        router = getattr(getattr(block, "routing", None), "router", None)
        return isinstance(router, CollectionRouter)

    def document_ids(self) -> list[str]:
        """The ids of the documents in the index searched (empty if it cannot list them)."""
        store = self.store
        if store is None or not hasattr(store, "fingerprints"):
            return []
        return sorted(store.fingerprints())

    async def asearch(self, question: str) -> RetrievalResult:
        """One question answered; raises its failure as :class:`~ragloom.errors.RagloomError`
        (every sub-query failed, a blank question...)."""
        from .errors import ItemProcessingError

        result = await self.pipeline.run([question])
        if result:
            answer: RetrievalResult = result[0]
            return answer
        reason = result.failed[0].reason if result.failed else "no result"
        raise ItemProcessingError(f"{question!r}: {reason}")

    def search(self, question: str) -> RetrievalResult:
        """:meth:`asearch` from synchronous code."""
        from ._sync import run_sync

        return run_sync(self.asearch, question)

    def search_many(self, questions: Sequence[str]) -> list[RetrievalResult | str]:
        """Every question through the pipeline in one run (input order kept); a question that
        failed gives its reason (a string) in its place."""
        return answers_in_order(self.pipeline.run_sync(list(questions)), questions)


def answers_in_order(result: Any, questions: Sequence[str]) -> list[RetrievalResult | str]:
    """A search pipeline's run over ``questions`` as one entry per question, in order: its
    answer, or the reason it failed (a string)."""
    answers: dict[str, list[Any]] = {}
    for answer in result:
        answers.setdefault(answer.query, []).append(answer)
    reasons: dict[str, list[str]] = {}
    for failure in result.failed:
        query = getattr(failure.item, "query", failure.item)
        reasons.setdefault(query if isinstance(query, str) else "", []).append(failure.reason)
    out: list[RetrievalResult | str] = []
    for question in questions:
        if answers.get(question):
            out.append(answers[question].pop(0))
            continue
        pending = reasons.get(question) or reasons.get("") or ["no result"]
        out.append(pending.pop(0) if len(pending) > 1 else pending[0])
    return out


def search(
    question: str, *, index: str = DEFAULT_INDEX, **settings: Any
) -> RetrievalResult:
    """Answer one question from the index with the command line's defaults.

    ``settings`` are the other fields of :class:`SearchSettings` (``routes``, ``mode``,
    ``top_k``, ``decomposer``, ``router``, ``config``). For many questions, open a
    :class:`Searcher` once instead: this opens the index and loads the model every call.
    """
    with Searcher(index=index, **settings) as searcher:
        return searcher.search(question)


def settings_from(values: Mapping[str, Any], base: SearchSettings) -> SearchSettings:
    """``base`` with ``values`` replacing its fields (an unknown key is an error that names the
    closest one)."""
    known = set(SearchSettings.model_fields)
    for key in values:
        if key not in known:
            raise ConfigurationError(
                f"unknown search setting {key!r}{did_you_mean(key, sorted(known))}; known: "
                f"{', '.join(sorted(known))}"
            )
    return SearchSettings(**{**base.model_dump(exclude_unset=True), **dict(values)})
