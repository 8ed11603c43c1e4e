"""``SemanticRouter``: a ragloom ``Router`` that routes by embedding similarity to example
utterances, with a model2vec static model (no torch, no network)."""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, ClassVar, Literal

import numpy as np
from pydantic import Field, field_validator
from ragloom import ConfigurationError, RouteDecision, Router
from ragloom.config import read_data_file
from ragloom.query import Route, coerce_route

from ._model import Encoder, ModelPathError, check_model_dir, get_encoder
from ._scoring import (
    LinearHead,
    RouteIndex,
    WordCoverage,
    accuracy_threshold,
    balanced_threshold,
    held_accuracy_threshold,
    recall_threshold,
    rejection_threshold,
    top_two,
    train_linear_head,
)

__all__ = [
    "BELOW_THRESHOLD",
    "CONFIDENCES",
    "CRITERIA",
    "DEFAULT_MIN_ACCURACY",
    "EMPTY_QUERY",
    "SCORINGS",
    "Calibration",
    "CalibrationPoint",
    "SemanticRoute",
    "SemanticRouter",
]

logger = logging.getLogger(__name__)

#: ``fallback_reason`` when the best route's score is under its threshold.
BELOW_THRESHOLD = "below threshold"
#: ``fallback_reason`` for a query with no content (nothing to embed).
EMPTY_QUERY = "empty query"

Scoring = Literal["linear", "knn", "centroid", "hybrid"]
SCORINGS: tuple[str, ...] = ("linear", "knn", "centroid", "hybrid")
Confidence = Literal["discounted", "covered", "similarity"]
CONFIDENCES: tuple[str, ...] = ("discounted", "covered", "similarity")
#: The score of an unfitted router made without ``confidence``.
DEFAULT_CONFIDENCE = "discounted"
#: The scores :meth:`SemanticRouter.fit` chooses between when none was given, the preferred
#: first: another is chosen only when it does clearly better on the fit's utterances.
FITTED_CONFIDENCES: tuple[str, ...] = ("covered", "discounted")
#: How clearly (one-sided z of the two-sample difference) another score must do better.
_CHOICE_Z = 1.645
#: The in-scope accuracy that :meth:`SemanticRouter.fit` holds when given no criterion.
DEFAULT_MIN_ACCURACY = 0.90
Criterion = Literal["balanced", "accuracy"]
CRITERIA: tuple[str, ...] = ("balanced", "accuracy")

_FORMAT = "ragloom-semantic/router"
#: Version 2: the linear scoring's score is discounted by the head's probability; a saved
#: version 1 router is loaded with ``confidence="similarity"``, its scores unchanged.
_FORMAT_VERSION = 2
_READABLE_VERSIONS = (1, 2)
#: The out-of-scope rejection levels of a calibration's trade-off curve.
_CURVE_LEVELS = tuple(round(0.05 * i, 2) for i in range(21))


@dataclass(frozen=True)
class CalibrationPoint:
    """One threshold of the trade-off, measured on the utterances given to :meth:`fit`.

    ``threshold`` ``None`` is no threshold. ``oos_rejection``: the share of out-of-scope
    utterances sent to the default route (NaN without any). ``in_scope_accuracy``: the share
    of in-scope utterances routed to their own route and kept (a fallback counts as wrong).
    ``in_scope_kept``: the share of in-scope utterances not sent to the default route.
    """

    threshold: float | None
    oos_rejection: float
    in_scope_accuracy: float
    in_scope_kept: float


@dataclass(frozen=True)
class Calibration:
    """What :meth:`SemanticRouter.fit` measured and chose.

    ``criterion`` says how the threshold was chosen; ``chosen`` is its point; ``curve`` has one
    point per out-of-scope rejection level (0%, 5%, ..., 100%: the lowest threshold that
    rejects that share, and the in-scope accuracy it leaves), so that another operating point
    can be picked from it (``router.threshold = calibration.point(0.8).threshold``).
    ``confidence`` is the score the threshold is on; when ``fit`` chose it, ``tried`` has the
    point each score gave under the same rule (empty when the score was given).
    """

    criterion: str
    threshold: float | None
    chosen: CalibrationPoint
    curve: tuple[CalibrationPoint, ...]
    in_scope: int
    out_of_scope: int
    confidence: str = DEFAULT_CONFIDENCE
    tried: Mapping[str, CalibrationPoint] = field(default_factory=dict)

    def point(self, oos_rejection: float) -> CalibrationPoint:
        """The curve point with the lowest threshold that rejects at least ``oos_rejection``
        of the out-of-scope utterances."""
        for point in self.curve:
            if point.oos_rejection >= oos_rejection - 1e-9:
                return point
        raise ValueError(f"no point of the curve rejects {oos_rejection:.0%} of out-of-scope")

    def table(self) -> str:
        """The trade-off curve as a text table, the chosen point marked."""
        lines = [
            f"criterion: {self.criterion}; {self.in_scope} in-scope and {self.out_of_scope} "
            "out-of-scope utterances",
            f"score: confidence={self.confidence!r}"
            + "".join(
                f"; {name}: {p.oos_rejection:.1%} out-of-scope rejected at "
                f"{p.in_scope_accuracy:.1%} in-scope accuracy"
                for name, p in self.tried.items()
            ),
            f"{'threshold':>10}  {'oos rejected':>12}  {'in-scope accuracy':>17}  "
            f"{'in-scope kept':>13}",
        ]
        chosen = self.chosen
        rows = [*self.curve, chosen] if chosen not in self.curve else list(self.curve)
        rows.sort(key=lambda p: -math.inf if p.threshold is None else p.threshold)
        for p in rows:
            t = "none" if p.threshold is None else f"{p.threshold:.4f}"
            mark = "  <- chosen" if p == chosen else ""
            lines.append(
                f"{t:>10}  {p.oos_rejection:>12.1%}  {p.in_scope_accuracy:>17.1%}  "
                f"{p.in_scope_kept:>13.1%}{mark}"
            )
        return "\n".join(lines)


class SemanticRoute(Route):
    """One named route: what it is for (``description``) and example utterances.

    The description, when set, counts as one more example (unless the router is built with
    ``use_descriptions=False``). ``threshold`` overrides the router's global threshold for this
    route: a decision for it scoring below the threshold goes to the default route.
    """

    examples: list[str] = Field(default_factory=list)
    threshold: float | None = None

    @field_validator("examples")
    @classmethod
    def _examples_not_blank(cls, value: list[str]) -> list[str]:
        for i, example in enumerate(value):
            if not example.strip():
                raise ValueError(f"example {i} is blank")
        return value

    @field_validator("threshold")
    @classmethod
    def _threshold_finite(cls, value: float | None) -> float | None:
        if value is not None and not math.isfinite(value):
            raise ValueError(f"threshold must be a finite number, got {value!r}")
        return value


def _as_route(i: int, entry: Any) -> SemanticRoute:
    return coerce_route(i, entry, SemanticRoute)


def read_routes_file(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read a route set from JSON, TOML or YAML: a mapping with ``routes`` (a list of route
    mappings) and optionally ``default_route``, ``threshold`` and ``description``; or a bare
    list of routes."""
    file = Path(path)
    data = read_data_file(file, what="routes", default_format="json")
    if isinstance(data, list):
        data = {"routes": data}
    if not isinstance(data, dict) or not isinstance(data.get("routes"), list):
        raise ConfigurationError(
            f"{file}: a routes file is a list of routes or a mapping with a 'routes' list "
            "(each route: name, description, examples, threshold)"
        )
    unknown = sorted(set(data) - {"routes", "default_route", "threshold", "description"})
    if unknown:
        raise ConfigurationError(
            f"{file}: unknown keys {', '.join(map(repr, unknown))} (expected 'routes', "
            "'default_route', 'threshold')"
        )
    return data


@dataclass(frozen=True)
class _State:
    """What the router computes once, lazily: example embeddings and the scoring model."""

    texts: tuple[str, ...]
    text_routes: np.ndarray  # route index (into scorable routes) of each text
    embeddings: np.ndarray  # (n, d), in the order of ``texts``
    index: RouteIndex
    head: LinearHead | None
    coverage: WordCoverage | None  # for confidence="covered"


class SemanticRouter(Router):
    """Routes a query to the route whose example utterances it is most similar to.

    Queries and examples are embedded with a model2vec static model (by default the bundled
    ``m2v-minilm-256``; any other local model2vec folder through ``model_path``), loaded
    lazily and shared by every router and chunker of the process.

    Scoring (``scoring``):

    - ``"linear"`` (default; the best on CLINC150, see ``benchmarks/bench_semantic.py``): a
      small softmax classifier trained (numpy, deterministic, once) on the example
      embeddings, with one prototype per ``examples_per_prototype`` examples of a route, picks
      the route; the decision's score is the route's k-nearest-example similarity (below)
      times the square root of the classifier's probability for the route
      (``confidence="discounted"``, the default), so that a query close to some example but
      between routes scores low; ``confidence="similarity"`` keeps the similarity alone.
      ``confidence="covered"`` also multiplies it by the square root of the query's word
      coverage by the route's examples (the inverse-document-frequency-weighted share of the
      query's words that some example of the route uses), so that a query that shares a
      route's phrasing but not its subject scores low, and of the classifier's two best routes
      the one that scores higher wins (the words also tell close routes apart). It separates
      out-of-scope queries better when each route has many examples and the threshold is
      fitted (CLINC150: 100 per route), but with a handful of examples most words of an
      in-scope query are new to its route too, and every score is lower than a hand-set
      threshold expects. Unless it is given, :meth:`fit` chooses between the two.
    - ``"knn"``: a route's score is the mean of the query's ``top_k`` highest cosine
      similarities to the route's examples; the highest score wins.
    - ``"centroid"``: cosine similarity to the mean of the route's examples.
    - ``"hybrid"``: the mean of the ``knn`` and ``centroid`` scores.

    Every decision carries ``score`` and the ``runner_up`` with its score, both on the cosine
    scale of the scoring (for ``"linear"``: k-nearest similarity, discounted as above). A
    decision whose score is below the route's ``threshold`` (else the router's ``threshold``)
    goes to the default route with ``fallback_reason="below threshold"``; then ``runner_up``
    names the best real route. :meth:`fit` chooses the thresholds from labelled utterances and
    keeps what it measured in :attr:`calibration`.
    A query with nothing to embed falls back with ``"empty query"``. Without a default route
    those fallbacks raise ``RoutingError``.

    Args:
        routes: :class:`SemanticRoute` objects, mappings with the same fields, or the path of a
            JSON/TOML/YAML routes file (see :func:`read_routes_file`).
        default_route: a route with no examples (a catch-all), a route with examples, or a new
            name that only fallbacks take. ``valid_routes`` is the route names plus it.
        threshold: global minimum score of a real decision (``None``: no threshold).
        scoring: ``"linear"``, ``"knn"``, ``"centroid"`` or ``"hybrid"``.
        top_k: examples averaged by the k-nearest score.
        model_path: a local model2vec model folder (``None``: the bundled model).
        oos_label: a label that :meth:`fit` treats as out-of-scope (as well as ``None``).
        examples_per_prototype: the linear head gives a route one prototype per this many
            examples (at most 32), so broad routes made of sub-topics are covered.
        use_descriptions: embed route descriptions as examples.
        confidence: ``"discounted"``, ``"covered"`` or ``"similarity"``: the score of a
            ``"linear"`` decision (see above; the other scorings keep their similarity).
            ``None`` (default): ``"discounted"`` until :meth:`fit` chooses between
            ``"covered"`` and it by what each does on the labelled utterances.
        encoder: an object with ``name`` and ``encode(texts) -> (n, d) unit rows`` used instead
            of a model (tests, custom embeddings). Not part of :meth:`config`.

    Raises:
        ConfigurationError: no routes, an invalid or duplicate route, a route that could never
            be chosen (no examples, no description, not the default), a bad parameter (named),
            or a ``model_path`` that is not a local model2vec folder.
    """

    step_id: ClassVar[str] = "ragloom-semantic/router"
    awaits: ClassVar[bool] = False

    def __init__(
        self,
        routes: Sequence[SemanticRoute | Mapping[str, Any]] | str | os.PathLike[str],
        default_route: str | None = None,
        *,
        threshold: float | None = None,
        scoring: Scoring = "linear",
        top_k: int = 3,
        model_path: str | None = None,
        oos_label: str | None = None,
        examples_per_prototype: int = 64,
        use_descriptions: bool = True,
        confidence: Confidence | None = None,
        encoder: Encoder | None = None,
    ) -> None:
        if isinstance(routes, str | os.PathLike):
            data = read_routes_file(routes)
            routes = data["routes"]
            if default_route is None:
                default_route = data.get("default_route")
            if threshold is None:
                threshold = data.get("threshold")
        if isinstance(routes, bytes | Mapping) or not isinstance(routes, Sequence):
            raise ConfigurationError(
                f"routes must be a list of routes or a routes file path, got "
                f"{type(routes).__name__}"
            )
        if not routes:
            raise ConfigurationError("routes must not be empty")
        parsed = tuple(_as_route(i, entry) for i, entry in enumerate(routes))
        names = [r.name for r in parsed]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ConfigurationError(f"duplicate route names: {', '.join(map(repr, dupes))}")
        if default_route is not None and (
            not isinstance(default_route, str) or not default_route.strip()
        ):
            raise ConfigurationError(f"default_route must be a route name, got {default_route!r}")
        if scoring not in SCORINGS:
            raise ConfigurationError(
                f"scoring must be one of {', '.join(map(repr, SCORINGS))}, got {scoring!r}"
            )
        if confidence is not None and confidence not in CONFIDENCES:
            raise ConfigurationError(
                f"confidence must be one of {', '.join(map(repr, CONFIDENCES))}, "
                f"got {confidence!r}"
            )
        if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1:
            raise ConfigurationError(f"top_k must be an integer >= 1, got {top_k!r}")
        if (
            isinstance(examples_per_prototype, bool)
            or not isinstance(examples_per_prototype, int)
            or examples_per_prototype < 1
        ):
            raise ConfigurationError(
                f"examples_per_prototype must be an integer >= 1, got {examples_per_prototype!r}"
            )
        if threshold is not None and (
            isinstance(threshold, bool)
            or not isinstance(threshold, int | float)
            or not math.isfinite(threshold)
        ):
            raise ConfigurationError(
                f"threshold must be a finite number or None, got {threshold!r}"
            )
        for route in parsed:
            if not self._route_texts(route, use_descriptions) and route.name != default_route:
                raise ConfigurationError(
                    f"route {route.name!r} has no examples"
                    + (" or description" if use_descriptions else "")
                    + " and is not the default route, so it could never be chosen"
                )
        if encoder is None:
            try:
                if model_path is not None:
                    check_model_dir(model_path)
            except ModelPathError as exc:
                raise ConfigurationError(str(exc)) from None
        elif not isinstance(encoder, Encoder):
            raise ConfigurationError(
                "encoder must have a name and an encode(texts) method, got "
                f"{type(encoder).__name__}"
            )
        self._routes = parsed
        self._default_route = default_route
        self.threshold = None if threshold is None else float(threshold)
        self.scoring: str = scoring
        self.top_k = top_k
        self.model_path = None if model_path is None else str(model_path)
        self.oos_label = oos_label
        self.examples_per_prototype = examples_per_prototype
        self.use_descriptions = use_descriptions
        #: The score of a ``"linear"`` decision; :meth:`fit` chooses it when the constructor
        #: was not given one (see :attr:`confidence_fixed`).
        self.confidence: str = confidence or DEFAULT_CONFIDENCE
        #: Whether the score was given (constructor, saved router), so that :meth:`fit` keeps it.
        self.confidence_fixed = confidence is not None
        #: What the last :meth:`fit` measured and chose (``None`` before any fit).
        self.calibration: Calibration | None = None
        self._encoder = encoder
        self._scorable = tuple(r for r in parsed if self._route_texts(r, use_descriptions))
        valid = list(names)
        if default_route is not None and default_route not in valid:
            valid.append(default_route)
        self._valid = tuple(valid)
        self._state: _State | None = None
        self._state_lock = threading.Lock()
        self._preloaded: dict[str, np.ndarray] = {}

    # -- construction helpers ----------------------------------------------------------------

    @staticmethod
    def _route_texts(route: SemanticRoute, use_descriptions: bool) -> list[str]:
        texts = list(route.examples)
        if use_descriptions and route.description.strip():
            texts.append(route.description)
        return texts

    # -- the Router contract -----------------------------------------------------------------

    @property
    def routes(self) -> tuple[SemanticRoute, ...]:
        """The routes in declaration order (with thresholds learned by :meth:`fit`)."""
        return self._routes

    @property
    def valid_routes(self) -> tuple[str, ...]:
        return self._valid

    @property
    def default_route(self) -> str | None:
        return self._default_route

    def config(self) -> Mapping[str, Any]:
        return {
            "routes": [r.model_dump(exclude_none=True) for r in self._routes],
            "default_route": self._default_route,
            "threshold": self.threshold,
            "scoring": self.scoring,
            "top_k": self.top_k,
            "model_path": self.model_path,
            "oos_label": self.oos_label,
            "examples_per_prototype": self.examples_per_prototype,
            "use_descriptions": self.use_descriptions,
            "confidence": self.confidence,
        }

    async def route(self, query: str) -> RouteDecision:
        if self._state is None:  # the first call embeds the examples: keep the loop free
            import anyio.to_thread

            await anyio.to_thread.run_sync(self.warm_up)
        return self.route_many([query])[0]

    def route_sync(self, query: str) -> RouteDecision:
        """:meth:`route` without the event loop."""
        return self.route_many([query])[0]

    def route_many(self, queries: Sequence[str]) -> list[RouteDecision]:
        """Decide many queries at once: one encode call and matrix products for the batch."""
        if isinstance(queries, str):
            raise TypeError("route_many takes a sequence of queries, not one string")
        for query in queries:
            if not isinstance(query, str):
                raise TypeError(f"query must be a string, got {type(query).__name__}")
        if not queries:
            return []
        state = self.warm_up()
        vectors = self.encoder.encode(list(queries))
        best, best_score, second, second_score = self._rank(state, vectors, queries)
        empty = ~np.any(vectors != 0, axis=1)
        decisions: list[RouteDecision] = []
        for i in range(len(queries)):
            if empty[i]:
                decisions.append(self.fallback(EMPTY_QUERY))
                continue
            route = self._scorable[int(best[i])]
            score = float(best_score[i])
            limit = route.threshold if route.threshold is not None else self.threshold
            if limit is not None and score < limit:
                decisions.append(
                    self.fallback(
                        BELOW_THRESHOLD, score=score, runner_up=route.name, runner_up_score=score
                    )
                )
                continue
            has_second = second[i] >= 0
            decisions.append(
                RouteDecision(
                    route=route.name,
                    score=score,
                    runner_up=self._scorable[int(second[i])].name if has_second else None,
                    runner_up_score=float(second_score[i]) if has_second else None,
                )
            )
        return decisions

    async def aroute_many(self, queries: Sequence[str]) -> list[RouteDecision]:
        """:meth:`route_many` in a worker thread, so a large batch does not block the loop."""
        import anyio.to_thread

        batch = list(queries)
        return await anyio.to_thread.run_sync(self.route_many, batch)

    def scores(self, query: str) -> dict[str, float]:
        """Every scorable route's score for ``query`` on the scoring's own scale (route
        probabilities for ``"linear"``)."""
        return self.scores_many([query])[0]

    def scores_many(self, queries: Sequence[str]) -> list[dict[str, float]]:
        """:meth:`scores` of many queries at once (one encode call)."""
        if isinstance(queries, str):
            raise TypeError("scores_many takes a sequence of queries, not one string")
        if not queries:
            return []
        state = self.warm_up()
        matrix = self._score_matrix(state, self.encoder.encode(list(queries)))
        return [
            {r.name: float(s) for r, s in zip(self._scorable, row, strict=True)}
            for row in matrix
        ]

    # -- embedding and scoring ---------------------------------------------------------------

    @property
    def encoder(self) -> Encoder:
        if self._encoder is None:
            self._encoder = get_encoder(self.model_path)
        return self._encoder

    def warm_up(self) -> _State:
        """Embed the route examples (and train the linear head) now rather than on first use.

        Computed once per router, thread-safe.
        """
        state = self._state
        if state is not None:
            return state
        with self._state_lock:
            if self._state is None:
                self._state = self._build_state()
            return self._state

    def _texts(self) -> tuple[tuple[str, ...], np.ndarray]:
        texts: list[str] = []
        owners: list[int] = []
        for r, route in enumerate(self._scorable):
            route_texts = self._route_texts(route, self.use_descriptions)
            texts.extend(route_texts)
            owners.extend([r] * len(route_texts))
        return tuple(texts), np.asarray(owners, dtype=np.int64)

    def _fingerprint(self, texts: Sequence[str], owners: np.ndarray) -> str:
        payload = json.dumps(
            [self.encoder.name, [r.name for r in self._scorable], list(texts), owners.tolist()],
            ensure_ascii=False,
        )
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()

    def _head_fingerprint(self, texts_fingerprint: str) -> str:
        spec = f"{texts_fingerprint}|linear|{self.examples_per_prototype}|v1"
        return hashlib.sha256(spec.encode("utf-8")).hexdigest()

    def _build_state(self) -> _State:
        texts, owners = self._texts()
        fingerprint = self._fingerprint(texts, owners)
        embeddings = self._preloaded.get(f"embeddings:{fingerprint}")
        if embeddings is None:
            embeddings = self.encoder.encode(list(texts))
        index = RouteIndex.build(embeddings, owners, len(self._scorable))
        head: LinearHead | None = None
        if self.scoring == "linear" and len(self._scorable) > 1:
            head_key = f"head:{self._head_fingerprint(fingerprint)}"
            matrix = self._preloaded.get(head_key)
            owner = self._preloaded.get(head_key + ":owner")
            if matrix is not None and owner is not None:
                head = LinearHead.from_matrix(matrix, owner, len(self._scorable))
            else:
                head = train_linear_head(
                    embeddings, owners, len(self._scorable),
                    examples_per_prototype=self.examples_per_prototype,
                )
        self._preloaded.clear()
        coverage = None
        if head is not None and self.confidence == "covered":
            coverage = WordCoverage.build(texts, owners)
        return _State(texts, owners, embeddings, index, head, coverage)

    def _score_matrix(self, state: _State, vectors: np.ndarray) -> np.ndarray:
        if self.scoring == "linear" and state.head is not None:
            return state.head.route_probabilities(vectors)
        if self.scoring == "centroid":
            return state.index.centroid_scores(vectors)
        knn = state.index.knn_scores(vectors, self.top_k)
        if self.scoring == "hybrid":
            return np.asarray((knn + state.index.centroid_scores(vectors)) / 2, dtype=np.float32)
        return knn

    def _with_coverage(self) -> _State:
        """The state with the word coverage of the route examples (built once)."""
        with self._state_lock:
            state = self._state
            assert state is not None and state.head is not None
            if state.coverage is None:
                state = replace(
                    state, coverage=WordCoverage.build(state.texts, state.text_routes)
                )
                self._state = state
            return state

    def _rank(
        self, state: _State, vectors: np.ndarray, queries: Sequence[str],
        confidence: str | None = None,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Best route, its score, runner-up and its score for each query (vector), scored
        by ``confidence`` (default: the router's)."""
        confidence = confidence or self.confidence
        if confidence == "covered" and state.head is not None and state.coverage is None:
            state = self._with_coverage()  # the score was changed after the state was built
        if self.scoring == "linear" and state.head is not None:
            best, best_p, second, second_p = top_two(state.head.route_probabilities(vectors))
            best_score = state.index.knn_scores_for(vectors, best, self.top_k)
            second_score = state.index.knn_scores_for(vectors, second, self.top_k)
            if confidence != "similarity":
                best_score = np.asarray(best_score * np.sqrt(best_p), dtype=np.float32)
                second_score = np.asarray(second_score * np.sqrt(second_p), dtype=np.float32)
            if confidence == "covered" and state.coverage is not None:
                # The word coverage separates out-of-scope queries that the similarity and the
                # probability do not: on CLINC150 (routes from train, min_accuracy=0.90 fitted
                # on one half of val + oos_val, measured on the other; 10 random halvings, both
                # ways) out-of-scope rejection 0.708 mean / 0.608 worst without it, 0.771 /
                # 0.688 with it; on oos_train, at the threshold that keeps in-scope accuracy
                # 0.91 on val, 0.80 -> 0.85 rejected. Whitened (Mahalanobis-like) similarity,
                # energy and margin scores did not beat the plain discounted similarity there.
                covered, second_covered = state.coverage.coverage(queries, best, second)
                best_score = np.asarray(best_score * np.sqrt(covered), dtype=np.float32)
                second_score = np.asarray(
                    second_score * np.sqrt(second_covered), dtype=np.float32
                )
                # Of the classifier's two best routes, the one that scores higher wins: the
                # words also tell two close routes apart (CLINC150 intents: accuracy 0.930 ->
                # 0.936 with no threshold; held-out rejection at min_accuracy=0.90 0.771 ->
                # 0.79 mean, 0.688 -> 0.708 worst).
                swap = second_score > best_score
                if swap.any():
                    best, second = np.where(swap, second, best), np.where(swap, best, second)
                    best_score, second_score = (
                        np.where(swap, second_score, best_score),
                        np.where(swap, best_score, second_score),
                    )
            return best, best_score, second, second_score
        return top_two(self._score_matrix(state, vectors))

    # -- learning thresholds -----------------------------------------------------------------

    def fit(
        self,
        utterances: Sequence[str],
        labels: Sequence[str | None],
        *,
        criterion: Criterion | None = None,
        oos_recall: float | None = None,
        min_recall: float | None = None,
        min_accuracy: float | None = None,
        per_route: bool = False,
        min_route_examples: int = 10,
    ) -> SemanticRouter:
        """Learn thresholds from labelled utterances (held out from the route examples).

        A label is a route name, or out-of-scope: ``None``, the router's ``oos_label``, or the
        default route when it is a catch-all without examples. Each utterance is routed; an
        in-scope one is *right* when routed to its label and kept, an out-of-scope one when
        sent to the default route. How the global ``threshold`` is chosen:

        - ``min_accuracy=a``: the highest threshold (the most out-of-scope rejection) whose
          in-scope accuracy stays at least ``a`` on utterances it was not fitted on: the
          accuracy measured here less a one-sided 95% margin (1.645 standard errors) must
          reach ``a`` (no threshold when nothing does). Given nothing else, ``fit`` holds
          :data:`DEFAULT_MIN_ACCURACY` (0.90) this way;
        - ``criterion="balanced"``: the threshold that maximises the in-scope accuracy plus
          the out-of-scope rejection rate, so that both classes weigh the same however many
          utterances each has (it rejects more and keeps less: see the calibration curve);
        - ``criterion="accuracy"``: the threshold with the most right outcomes (with many
          more in-scope than out-of-scope utterances it rarely rejects anything);
        - ``oos_recall=r``: the lowest threshold that sends at least the share ``r`` of the
          out-of-scope utterances to the default route (the most in-scope accuracy for that
          rejection);
        - ``min_recall=r``: the highest threshold that keeps the share ``r`` of the in-scope
          utterances (no out-of-scope utterance needed).

        The score is fitted too: a router made without ``confidence`` (and with ``"linear"``
        scoring) tries ``"covered"`` and ``"discounted"`` on the utterances, each with the
        threshold its rule gives, and keeps ``"covered"`` unless ``"discounted"`` does clearly
        better by that rule (out-of-scope rejection for ``min_accuracy`` and ``min_recall``,
        in-scope accuracy for ``oos_recall``, their sum for the criteria) - by more than
        1.645 standard errors of the difference, so that the noise of a small fit set does
        not decide. The word coverage separates out-of-scope queries better when routes have
        many examples (CLINC150 domains: on each of 20 held-out halves it rejected at least as
        much), and can do worse with a handful, when in-scope queries use words no example
        of their route has. A ``confidence`` given to the constructor, or a loaded router's,
        is kept.

        What was measured is kept in :attr:`calibration`: the chosen point and the trade-off
        curve (in-scope accuracy at each out-of-scope rejection level), from which another
        threshold can be picked, and the score chosen with what each score tried gave. With
        ``per_route``, each route whose decisions include at
        least ``min_route_examples`` labelled utterances (some of them out-of-scope) gets its
        own threshold by the same rule; the others use the global one.

        Returns the router (thresholds changed in place; so does :attr:`config_hash`).

        Raises:
            ConfigurationError: mismatched lengths, no utterances, an unknown label or
                criterion, more than one of ``oos_recall``, ``min_recall`` and
                ``min_accuracy``, a share outside (0, 1], or no out-of-scope utterances for
                ``criterion`` or ``oos_recall``.
        """
        if isinstance(utterances, str) or isinstance(labels, str):
            raise ConfigurationError("utterances and labels must be sequences, not strings")
        if len(utterances) != len(labels):
            raise ConfigurationError(
                f"utterances and labels differ in length ({len(utterances)} != {len(labels)})"
            )
        if not utterances:
            raise ConfigurationError("fit needs at least one labelled utterance")
        if criterion is not None and criterion not in CRITERIA:
            raise ConfigurationError(
                f"criterion must be one of {', '.join(map(repr, CRITERIA))}, got {criterion!r}"
            )
        for name, share in (
            ("oos_recall", oos_recall), ("min_recall", min_recall),
            ("min_accuracy", min_accuracy),
        ):
            if share is not None and not (
                isinstance(share, int | float) and not isinstance(share, bool) and 0 < share <= 1
            ):
                raise ConfigurationError(f"{name} must be in (0, 1], got {share!r}")
        if sum(x is not None for x in (oos_recall, min_recall, min_accuracy)) > 1:
            raise ConfigurationError("give one of oos_recall, min_recall and min_accuracy")
        if criterion is None and oos_recall is None and min_recall is None:
            min_accuracy = DEFAULT_MIN_ACCURACY if min_accuracy is None else min_accuracy
        position = {r.name: i for i, r in enumerate(self._scorable)}
        oos_names = {self.oos_label} if self.oos_label is not None else set()
        if self._default_route is not None and self._default_route not in position:
            oos_names.add(self._default_route)
        target = np.full(len(labels), -1, dtype=np.int64)
        for i, label in enumerate(labels):
            if label is None or label in oos_names:
                continue
            if label not in position:
                raise ConfigurationError(
                    f"label {label!r} (utterance {i}) is not a route; out-of-scope labels are "
                    f"None{' or ' + repr(self.oos_label) if self.oos_label else ''}"
                )
            target[i] = position[label]
        in_scope = target >= 0
        oos = ~in_scope
        if not oos.any() and min_recall is None and min_accuracy is None:
            raise ConfigurationError(
                "fit needs out-of-scope utterances (label None or oos_label) to learn a "
                "threshold, or min_recall"
            )
        if (min_recall is not None or min_accuracy is not None) and not in_scope.any():
            raise ConfigurationError("min_recall and min_accuracy need in-scope utterances")
        state = self.warm_up()
        vectors = self.encoder.encode(list(utterances))
        rule = _Rule(criterion or "balanced", oos_recall, min_recall, min_accuracy)
        candidates = [self.confidence]
        if not self.confidence_fixed and state.head is not None and oos.any():
            candidates = list(FITTED_CONFIDENCES)
            state = self._with_coverage()
        tried: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray, float | None]] = {}
        points: dict[str, CalibrationPoint] = {}
        for confidence in candidates:
            best, raw, _, _ = self._rank(state, vectors, utterances, confidence)
            score = np.asarray(raw, dtype=np.float64)
            correct = in_scope & (best == target)
            cut = rule.threshold(score, correct, in_scope, oos)
            tried[confidence] = (best, score, correct, cut)
            points[confidence] = _point(cut, score, correct, in_scope, oos)
        chosen = candidates[0]
        n_in, n_oos = int(in_scope.sum()), int(oos.sum())
        for other in candidates[1:]:
            if rule.clearly_better(points[other], points[chosen], n_in, n_oos):
                chosen = other
        best, score, correct, global_threshold = tried[chosen]
        self.confidence = chosen
        routes = list(self._routes)
        for i, route in enumerate(routes):
            if route.name not in position:
                continue
            learned: float | None = None
            if per_route:
                mine = best == position[route.name]
                accept, reject = correct & mine, oos & mine
                if int(accept.sum() + reject.sum()) >= min_route_examples and reject.any():
                    if min_recall is not None:
                        kept = in_scope & (target == position[route.name]) & mine
                        learned = recall_threshold(score[kept], min_recall) if kept.any() else None
                    else:
                        cut = rule.threshold(score[mine], correct[mine], in_scope[mine], oos[mine])
                        learned = -1.0 if cut is None else cut
            routes[i] = route.model_copy(update={"threshold": learned})
        self._routes = tuple(routes)
        self._scorable = tuple(r for r in self._routes if r.name in position)
        self.threshold = global_threshold
        self.calibration = _calibrate(
            rule.name, global_threshold, score, correct, in_scope, oos,
            confidence=chosen, tried=points if len(points) > 1 else {},
        )
        return self

    # -- persistence -------------------------------------------------------------------------

    def save(self, path: str | os.PathLike[str], *, embeddings: bool = True) -> Path:
        """Write the routes, thresholds and settings as JSON at ``path``; with ``embeddings``
        also the example embeddings (and the linear head) as ``.npy`` files beside it, so that
        :meth:`load` need not recompute them. Never pickles. Returns the JSON path."""
        target = Path(path)
        document: dict[str, Any] = {
            "format": _FORMAT,
            "version": _FORMAT_VERSION,
            "config": dict(self.config()),
            "embeddings": None,
            "head": None,
        }
        stem = target.name[: -len(target.suffix)] if target.suffix else target.name
        if embeddings:
            state = self.warm_up()
            fingerprint = self._fingerprint(state.texts, state.text_routes)
            emb_file = f"{stem}.embeddings.npy"
            np.save(target.parent / emb_file, state.embeddings.astype(np.float32))
            document["embeddings"] = {
                "file": emb_file,
                "fingerprint": fingerprint,
                "encoder": self.encoder.name,
                "shape": list(state.embeddings.shape),
            }
            if state.head is not None:
                head_file = f"{stem}.head.npy"
                np.save(target.parent / head_file, state.head.to_matrix())
                document["head"] = {
                    "file": head_file,
                    "fingerprint": self._head_fingerprint(fingerprint),
                    "owner": state.head.owner.tolist(),
                }
        target.write_text(json.dumps(document, ensure_ascii=False, indent=1), encoding="utf-8")
        return target

    @classmethod
    def load(
        cls, path: str | os.PathLike[str], *, encoder: Encoder | None = None
    ) -> SemanticRouter:
        """A router saved by :meth:`save`. Cached embeddings are used only when they were
        computed by the same model for the same examples; otherwise they are recomputed."""
        source = Path(path)
        try:
            document = json.loads(source.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ConfigurationError(f"cannot read saved router {source}: {exc}") from None
        if not isinstance(document, dict) or document.get("format") != _FORMAT:
            raise ConfigurationError(f"{source} is not a saved SemanticRouter")
        version = document.get("version")
        if version not in _READABLE_VERSIONS:
            raise ConfigurationError(f"{source}: unsupported saved router version {version!r}")
        config = dict(document["config"])
        if version == 1:  # saved before scores were discounted: keep its thresholds' scale
            config.setdefault("confidence", "similarity")
        router = cls(**config, encoder=encoder)
        texts, owners = router._texts()
        fingerprint = router._fingerprint(texts, owners)
        saved = document.get("embeddings")
        if isinstance(saved, dict):
            if saved.get("fingerprint") == fingerprint:
                matrix = np.load(source.parent / saved["file"], allow_pickle=False)
                if matrix.shape[0] == len(texts):
                    router._preloaded[f"embeddings:{fingerprint}"] = matrix.astype(np.float32)
            else:
                logger.warning(
                    "%s: saved embeddings were made for other examples or another model; "
                    "recomputing them", source,
                )
        head = document.get("head")
        head_fp = router._head_fingerprint(fingerprint)
        if isinstance(head, dict) and head.get("fingerprint") == head_fp:
            key = f"head:{head_fp}"
            router._preloaded[key] = np.load(source.parent / head["file"], allow_pickle=False)
            router._preloaded[key + ":owner"] = np.asarray(head["owner"], dtype=np.int64)
        return router

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(routes={list(self.valid_routes)!r}, "
            f"default_route={self._default_route!r}, scoring={self.scoring!r}, "
            f"threshold={self.threshold!r})"
        )


@dataclass(frozen=True)
class _Rule:
    """How :meth:`SemanticRouter.fit` turns scores into a threshold."""

    criterion: str
    oos_recall: float | None
    min_recall: float | None
    min_accuracy: float | None = None

    @property
    def name(self) -> str:
        if self.min_accuracy is not None:
            return f"min_accuracy={self.min_accuracy:g}"
        if self.oos_recall is not None:
            return f"oos_recall={self.oos_recall:g}"
        if self.min_recall is not None:
            return f"min_recall={self.min_recall:g}"
        return self.criterion

    def clearly_better(
        self, other: CalibrationPoint, preferred: CalibrationPoint, n_in: int, n_oos: int
    ) -> bool:
        """Whether ``other`` beats ``preferred`` by more than the noise of the fit's
        utterances (:data:`_CHOICE_Z` standard errors of the difference of two proportions)
        on what this rule maximises: out-of-scope rejection for ``min_accuracy`` and
        ``min_recall``, in-scope accuracy for ``oos_recall``, their sum for the criteria."""

        def spread(a: float, b: float, n: int) -> float:
            mean = (a + b) / 2
            return 2 * mean * (1 - mean) / n if n else 0.0

        rejection = spread(other.oos_rejection, preferred.oos_rejection, n_oos)
        accuracy = spread(other.in_scope_accuracy, preferred.in_scope_accuracy, n_in)
        if self.min_accuracy is not None or self.min_recall is not None:
            gain, variance = other.oos_rejection - preferred.oos_rejection, rejection
        elif self.oos_recall is not None:
            gain, variance = other.in_scope_accuracy - preferred.in_scope_accuracy, accuracy
        else:
            gain = (other.oos_rejection + other.in_scope_accuracy) - (
                preferred.oos_rejection + preferred.in_scope_accuracy
            )
            variance = rejection + accuracy
        return gain > _CHOICE_Z * math.sqrt(variance)

    def threshold(
        self, score: np.ndarray, correct: np.ndarray, in_scope: np.ndarray, oos: np.ndarray
    ) -> float | None:
        if self.min_accuracy is not None:
            return held_accuracy_threshold(score, correct, in_scope, self.min_accuracy)
        if self.min_recall is not None:
            return recall_threshold(score[in_scope], self.min_recall)
        if self.oos_recall is not None:
            return rejection_threshold(score[oos], self.oos_recall)
        if self.criterion == "accuracy":
            return accuracy_threshold(score, correct, oos)
        return balanced_threshold(score, correct, oos, n_keep=int(in_scope.sum()))


def _point(
    threshold: float | None,
    score: np.ndarray,
    correct: np.ndarray,
    in_scope: np.ndarray,
    oos: np.ndarray,
) -> CalibrationPoint:
    kept = np.ones(score.shape[0], dtype=bool) if threshold is None else score >= threshold
    n_in, n_oos = int(in_scope.sum()), int(oos.sum())
    return CalibrationPoint(
        threshold=threshold,
        oos_rejection=float((oos & ~kept).sum() / n_oos) if n_oos else math.nan,
        in_scope_accuracy=float((correct & kept).sum() / n_in) if n_in else math.nan,
        in_scope_kept=float((in_scope & kept).sum() / n_in) if n_in else math.nan,
    )


def _calibrate(
    criterion: str,
    threshold: float | None,
    score: np.ndarray,
    correct: np.ndarray,
    in_scope: np.ndarray,
    oos: np.ndarray,
    *,
    confidence: str,
    tried: Mapping[str, CalibrationPoint],
) -> Calibration:
    curve: list[CalibrationPoint] = []
    if oos.any():
        for level in _CURVE_LEVELS:
            cut = None if level == 0 else rejection_threshold(score[oos], level)
            curve.append(_point(cut, score, correct, in_scope, oos))
    return Calibration(
        criterion=criterion,
        threshold=threshold,
        chosen=_point(threshold, score, correct, in_scope, oos),
        curve=tuple(curve),
        in_scope=int(in_scope.sum()),
        out_of_scope=int(oos.sum()),
        confidence=confidence,
        tried=dict(tried),
    )
