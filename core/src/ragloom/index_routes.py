"""Routes fitted from an index: one route per collection, learnt from what it holds.

With several collections in an index, the default router of a search (``ragloom search``,
``plan --index``, ``eval``, :class:`~ragloom.Searcher`) is a :class:`CollectionRouter`: one
route per collection, fitted with ragloom-semantic's ``SemanticRouter`` from what the collection
holds (nothing written by hand), saved in the index folder beside the tables and fitted again
when an ingest changes what the index holds.

A route's examples come from a bounded, seeded sample of its collection
(:data:`SAMPLE_DOCUMENTS` documents, those whose hashed ids come first; of each, its title,
headings and :data:`PASSAGES_PER_DOCUMENT` passages of search text), so the routes' size and
the time to fit them do not grow with the collection. Each collection's sample is kept with
the routes under a hash of its documents: fitting again reads only the collections that
changed.

A search decides by what a full-text search of the whole index finds first for the ask (the
``probe`` of :class:`CollectionRouter`; a federated-search collection selector in the manner
of ReDDE):
each collection's share of the rank-weighted first :data:`PROBE_K` passages. From
:data:`RESTRICT_SHARE` of it the ask searches that collection only; from :data:`BOOST_SHARE`
the whole index and the collection beside it; below, the whole index. An ask of several
sentences whose last sentence is sure enough to restrict takes that decision, and the sentence
is searched too, alone, in the same collection (``focus``); when the whole ask's search finds
nothing of that collection, the collection is only boosted. The shares were chosen on the
project's development questions and are kept with the routes (``restrict_share``,
``boost_share``).

Without a probe, the semantic router decides. A routed sub-query is then searched in one of
three ways, by how far apart its scores of the collections are (soft before hard):

- **restrict** when the router is confident (the best collection scores at least the fitted
  gap above the next): only that collection is searched. With three collections or more, a
  sub-query whose best collections are close to each other but far above the rest is
  restricted to those, in one search over them (an ask that fits several collections
  searches several);
- **boost** when it is less sure (a smaller fitted gap): the whole index is searched, and
  beside it the best collection's passages among that search's first
  :data:`~ragloom.multi_retrieval.BOOST_DEPTH` times ``top_k``, weighted
  :data:`DEFAULT_BOOST_WEIGHT` (0.5) times the ask (the fusion keeps each passage's best gain,
  so the ask's own list is not weakened: a right guess lifts the collection's passages, a
  wrong one costs little);
- otherwise (the best collections are too close to call) the whole index, as without routing;
  the plan still shows the best guess, its score and the runner-up.

An ask of several sentences is also scored by its last sentence alone, and that decision wins
when it restricts: a decomposed ask keeps the situation its question opened with, whose words
would otherwise pull it to the situation's collection.

The gaps are fitted on held-out utterances: a quarter of each collection's sampled documents
(by hash) are held out, a router fitted on the others routes short utterances made from them
(their titles, headings and sentences, as short as asks are, never a text the others hold).
The restriction gap is the lowest at which the utterances it restricts are in their own
collection at least :data:`RESTRICT_PRECISION` (0.98) of the time; the boost gap the lowest at
which the utterances at or above it have their own collection best at least
:data:`BOOST_PRECISION` (0.9) of the time. The router is then fitted on the whole sample; what
the held-out utterances measured is kept with the routes (``fit``: their accuracy, the shares
restricted and boosted and how often each was right, the collections read).

With one collection (or none recorded) there is nothing to route: the router is
:class:`WholeIndex`, whose plan says ``one collection: no routing``. A search with a probe
(every search of the command line and the server) loads only the saved manifest (the
collections and the shares), never the semantic router: it routes without ragloom-semantic
installed too, where ingest records the collections with the note :data:`NO_SEMANTIC`.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from .collection import COLLECTION_KEY, CollectionInfo, list_collections
from .query import Retrieval, RouteDecision, Router

__all__ = [
    "ALL_COLLECTIONS",
    "BOOST_PRECISION",
    "BOOST_SHARE",
    "DEFAULT_BOOST_WEIGHT",
    "NO_ROUTING_ONE",
    "NO_SEMANTIC",
    "PROBE_K",
    "PROBE_RANK_K",
    "RESTRICT_PRECISION",
    "RESTRICT_SHARE",
    "TOO_CLOSE",
    "ROUTES_FILE",
    "CollectionRouter",
    "CollectionSample",
    "FittedRoutes",
    "WholeIndex",
    "document_collections",
    "fit_routes",
    "index_router",
    "refresh_routes",
    "sample_collection",
]

log = logging.getLogger("ragloom.index_routes")

#: The route of a sub-query searched over the whole index (no collection preferred).
ALL_COLLECTIONS = "(whole index)"
#: The plan's note on an index with one collection.
NO_ROUTING_ONE = "one collection: no routing"
#: The weight of a boosted sub-query's collection-restricted list, times the sub-query's (its
#: list over the whole index keeps the sub-query's own weight; see the module docstring).
DEFAULT_BOOST_WEIGHT = 0.5
#: The routes' note where ragloom-semantic is missing: searches route by their probe alone.
NO_SEMANTIC = "routed by search only (ragloom-semantic, which fits the routes' scores, is missing)"
#: The plan's note on a sub-query whose best collections score too close to prefer one.
TOO_CLOSE = "too close to call: the whole index"
#: The manifest of the fitted routes, in the index folder (the router is saved beside it).
ROUTES_FILE = "collection-routes.json"
_ROUTER_FILE = "collection-routes.router.json"
_FORMAT = "ragloom/collection-routes"
_VERSION = 3
#: The share of held-out utterances restricted to their own collection that the restriction
#: gap keeps (a wrong restriction loses the ask: it must be rare).
RESTRICT_PRECISION = 0.98
#: The share of held-out utterances at or above the boost gap whose own collection is the best
#: (below it, nothing is preferred).
BOOST_PRECISION = 0.9
#: The share of each collection's sampled documents whose utterances are held out to fit the
#: gaps (chosen by a hash of the document id, so a document stays on its side as others come).
HELD_OUT_SHARE = 0.25
#: Documents per collection read to fit its route: a seeded sample (the documents whose hashed
#: ids come first, so that adding or removing a document rarely changes the others), which
#: bounds the routes' size and the time to fit them however large a collection grows.
SAMPLE_DOCUMENTS = 120
#: Passages (search text) per sampled document given to the router as examples.
PASSAGES_PER_DOCUMENT = 2
#: The semantic router of the fitted routes.
SEMANTIC_ROUTER = "ragloom-semantic:semantic"

#: Passages of an ask's search of the whole index that say which collection it is about.
PROBE_K = 10
#: The rank constant of a probe's passages: the passage at rank r weighs ``1 / (PROBE_RANK_K
#: + r)`` (the fusion's own constant).
PROBE_RANK_K = 5
#: The share of an ask's probe held by one collection from which its search is restricted to
#: that collection.
RESTRICT_SHARE = 0.8
#: The share from which the collection is boosted (below it: too close to call).
BOOST_SHARE = 0.5


# -- what a collection holds -------------------------------------------------------------------

_NUMBERING = re.compile(r"^\s*(?:[A-Z]|\d+)(?:\.\d+)*\.?\s+(?=\S)")
_MANPAGE = re.compile(r"\s*\(\d\w*\)|\s+manual page\s*$", re.IGNORECASE)
_MARKUP = re.compile(r"`+|\*+|_{2,}|\[([^\]]*)\]\([^)]*\)|<[^>]+>|^#+\s*", re.MULTILINE)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")
_WORDS = re.compile(r"[A-Za-z][A-Za-z0-9_+-]*[A-Za-z0-9]|[A-Za-z]")
#: Sentences per held-out document kept as utterances, and their length in words.
_SENTENCES_PER_DOCUMENT = 8
_SENTENCE_WORDS = (6, 40)
#: Characters of a chunk's search text kept as a route example.
_PASSAGE_CHARS = 500


def _clean(text: str) -> str:
    return " ".join(_MARKUP.sub(r"\1", text).split())


def _title(text: str) -> str:
    """A title or heading without its numbering ("4.3.1. ") or man page section ("(1)")."""
    return _clean(_MANPAGE.sub("", _NUMBERING.sub("", text)))


def _sentences(content: str) -> list[str]:
    out = []
    for block in content.split("\n\n"):
        block = block.strip()
        if not block or block.startswith(("```", "|", "    ", "- ", "* ")):
            continue  # code, tables, lists: not how anyone asks
        for sentence in _SENTENCE_END.split(_clean(block)):
            words = len(_WORDS.findall(sentence))
            if _SENTENCE_WORDS[0] <= words <= _SENTENCE_WORDS[1]:
                out.append(sentence)
    return out


def _spread(items: list[str], count: int) -> list[str]:
    """At most ``count`` of ``items``, evenly spaced (the first included)."""
    if len(items) <= count:
        return list(items)
    step = len(items) / count
    return [items[int(i * step)] for i in range(count)]


@dataclass
class CollectionSample:
    """What one collection's route is fitted from, read from a bounded sample of its documents
    (see :data:`SAMPLE_DOCUMENTS`) and kept with the routes, so that routes are fitted again
    without reading a collection that did not change (``fingerprint``: of its documents).

    ``examples`` are the titles, headings and passages (search text: title, heading path,
    text) of the sampled documents that are not held out; ``held_examples`` those of the
    held-out ones (the final router's examples are both); ``utterances`` are short texts of
    the held-out documents (titles, headings, sentences: as short as asks are) on which the
    gaps are fitted."""

    fingerprint: str
    documents: int = 0
    examples: list[str] = field(default_factory=list)
    held_examples: list[str] = field(default_factory=list)
    utterances: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "fingerprint": self.fingerprint, "documents": self.documents,
            "examples": self.examples, "held_examples": self.held_examples,
            "utterances": self.utterances,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CollectionSample:
        def texts(key: str) -> list[str]:
            return [t for t in data.get(key) or () if isinstance(t, str)]

        return cls(
            str(data.get("fingerprint", "")), int(data.get("documents") or 0),
            texts("examples"), texts("held_examples"), texts("utterances"),
        )


def _rank_key(seed: int, document_id: str) -> str:
    return hashlib.sha256(f"{seed}\n{document_id}".encode("utf-8", "replace")).hexdigest()


def document_collections(store: Any) -> dict[str, list[str]]:
    """The ids of the documents of each collection of ``store`` (sorted), from the store's
    ``document_values`` when it has one (two light columns), else from its chunks."""
    reader = getattr(store, "document_values", None)
    values: dict[str, list[str]] = {}
    if callable(reader):
        values = reader(COLLECTION_KEY)
    else:
        chunks = getattr(store, "chunks", None)
        if callable(chunks):
            try:
                found = chunks(vectors=False)
            except TypeError:  # a store whose chunks() always reads the vectors
                found = chunks()
            for document_id, listed in found.items():
                names = [c.metadata.get(COLLECTION_KEY) for c in listed]
                values[document_id] = list(dict.fromkeys(n for n in names if isinstance(n, str)))
    out: dict[str, list[str]] = {}
    for document_id, names in values.items():
        for name in names:
            out.setdefault(name, []).append(document_id)
    return {name: sorted(ids) for name, ids in sorted(out.items())}


def _collection_fingerprint(ids: Sequence[str], fingerprints: Mapping[str, str]) -> str:
    digest = hashlib.sha256()
    for document_id in ids:
        digest.update(
            f"{len(document_id)}:{document_id}{fingerprints.get(document_id, '')}\n".encode(
                "utf-8", "replace"
            )
        )
    return digest.hexdigest()[:32]


def sample_collection(
    store: Any, ids: Sequence[str], fingerprint: str, *, seed: int = 0
) -> CollectionSample:
    """Read the sample of one collection's documents (``ids``) that its route is fitted from."""
    from .search_text import is_boilerplate, search_text

    ranked = sorted(ids, key=lambda d: _rank_key(seed, d))[:SAMPLE_DOCUMENTS]
    held = {
        d for d in ranked if int(_rank_key(seed + 1, d)[:8], 16) < HELD_OUT_SHARE * 16**8
    } if len(ranked) > 1 else set()
    if held and len(held) == len(ranked):
        held.discard(ranked[0])
    reader = store.chunks
    try:
        found = reader(ranked, vectors=False)
    except TypeError:
        found = reader(ranked)
    sample = CollectionSample(fingerprint, documents=len(ranked))
    for document_id in ranked:
        chunks = found.get(document_id, [])
        titles: list[str] = []
        passages: list[str] = []
        sentences: list[str] = []
        for chunk in chunks:
            headings = chunk.metadata.get("headings")
            for text in [chunk.metadata.get("title"),
                         *(headings if isinstance(headings, list) else [])]:
                if isinstance(text, str):
                    clean = _title(text)
                    if _WORDS.search(clean) and clean not in titles:
                        titles.append(clean)
            if not is_boilerplate(chunk.content):
                passages.append(search_text(chunk)[:_PASSAGE_CHARS])
                if document_id in held:
                    sentences.extend(_sentences(chunk.content))
        examples = titles + _spread(passages, PASSAGES_PER_DOCUMENT)
        if document_id in held:
            sample.held_examples += examples
            sample.utterances += titles + _spread(sentences, _SENTENCES_PER_DOCUMENT)
        else:
            sample.examples += examples
    # what the training documents also say is no held-out evidence (a heading they share)
    sample.examples = list(dict.fromkeys(sample.examples))
    seen = set(sample.examples)
    sample.held_examples = [t for t in dict.fromkeys(sample.held_examples) if t not in seen]
    sample.utterances = [t for t in dict.fromkeys(sample.utterances) if t not in seen]
    return sample


def _unshared(samples: Mapping[str, CollectionSample]) -> dict[str, CollectionSample]:
    """The samples without the texts that several collections share (``Introduction``,
    ``OPTIONS``): they say nothing of where an ask belongs."""
    owners: dict[str, set[str]] = {}
    for name, sample in samples.items():
        for text in (*sample.examples, *sample.held_examples, *sample.utterances):
            owners.setdefault(text.casefold(), set()).add(name)

    def own(texts: list[str]) -> list[str]:
        return [t for t in texts if len(owners[t.casefold()]) == 1]

    return {
        name: CollectionSample(
            s.fingerprint, s.documents, own(s.examples), own(s.held_examples),
            own(s.utterances),
        )
        for name, s in samples.items()
    }


# -- fitting -----------------------------------------------------------------------------------


@dataclass
class FittedRoutes:
    """The routes of an index as fitted (or why there are none).

    ``router`` is the semantic router over the collections (``None``: no routing, and
    ``note`` says why). ``restrict_gaps[m - 1]`` is the score gap between the m-th and the
    next collection from which a sub-query is restricted to the top m (``None``: never);
    ``boost_gap`` the gap between the first and the second from which the first is boosted
    (``None``: always, when not restricted); ``fit`` holds what the held-out utterances
    measured; ``samples`` what each collection's route was fitted from.
    """

    collections: list[CollectionInfo]
    state: str
    router: Any = None
    restrict_gaps: list[float | None] = field(default_factory=list)
    boost_gap: float | None = None
    boost_weight: float = DEFAULT_BOOST_WEIGHT
    fit: dict[str, Any] = field(default_factory=dict)
    restrict_share: float = RESTRICT_SHARE
    boost_share: float = BOOST_SHARE
    note: str | None = None
    samples: dict[str, CollectionSample] = field(default_factory=dict)

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.collections if c.name is not None]

    def to_dict(self, router_file: str | None) -> dict[str, Any]:
        return {
            "format": _FORMAT,
            "version": _VERSION,
            "state": self.state,
            "collections": [c.to_dict() for c in self.collections],
            "router": router_file,
            "restrict_gaps": self.restrict_gaps,
            "boost_gap": self.boost_gap,
            "boost_weight": self.boost_weight,
            "restrict_share": self.restrict_share,
            "boost_share": self.boost_share,
            "fit": self.fit,
            "note": self.note,
            "samples": {name: s.to_dict() for name, s in self.samples.items()},
        }


def index_state(store: Any) -> str:
    """What the index holds, in one hash: every document's id and fingerprint (which covers
    its content, its pipeline and its collection)."""
    digest = hashlib.sha256()
    for document_id, fingerprint in sorted(store.fingerprints().items()):
        digest.update(f"{len(document_id)}:{document_id}{fingerprint}\n".encode("utf-8", "replace"))
    return digest.hexdigest()[:32]


def _semantic_factory(registry: Any) -> Any:
    from .errors import PluginError

    try:
        return registry.resolve("router", SEMANTIC_ROUTER)
    except PluginError:
        return None


def _semantic(factory: Any, examples: Mapping[str, list[str]], encoder: Any = None) -> Any:
    extra = {} if encoder is None else {"encoder": encoder}
    return factory(
        [{"name": name, "examples": texts} for name, texts in examples.items() if texts],
        default_route=ALL_COLLECTIONS,
        scoring="knn",
        top_k=5,
        **extra,
    )


class _Memo:
    """An encoder that encodes each text once (the probe router and the final one share most
    of their examples); same name as the encoder it wraps, so what it encodes is the same."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name = inner.name
        self.rows: dict[str, Any] | None = {}

    def close(self) -> None:
        """Encode every text afresh from now on (queries are not kept)."""
        self.rows = None

    def encode(self, texts: Sequence[str]) -> Any:
        import numpy as np  # ragloom-semantic's dependency, there whenever this runs

        if self.rows is None:
            return self.inner.encode(texts)
        missing = list(dict.fromkeys(t for t in texts if t not in self.rows))
        if missing:
            self.rows.update(zip(missing, self.inner.encode(missing), strict=True))
        if not texts:
            return self.inner.encode([])
        return np.stack([self.rows[t] for t in texts])


def _scores_many(router: Any, texts: Sequence[str]) -> list[dict[str, float]]:
    many = getattr(router, "scores_many", None)
    if callable(many):
        return list(many(list(texts)))
    return [router.scores(text) for text in texts]


#: Where a sentence or a clause after a colon ends and another begins.
_SENTENCE_BREAK = re.compile(r"(?<=[.:;?!])\s+(?=[^\s])")
#: Abbreviations whose period ends no sentence.
_ABBREVIATION_END = re.compile(r"(?:^|\W)(?:vs|e\.g|i\.e|etc|cf|approx|incl)\.$", re.IGNORECASE)
#: A last sentence shorter than this (in words) is not routed alone.
_MIN_ASK_WORDS = 5


def _last_sentence(query: str) -> str | None:
    """The last sentence of ``query`` when it has several (``None`` otherwise, or when the
    last is too short to route alone). A break after an abbreviation ("vs.", "e.g.") or
    inside parentheses ("(unique vs. foreign key)") ends no sentence."""
    parts: list[str] = []
    for part in _SENTENCE_BREAK.split(query.strip()):
        if parts and (
            _ABBREVIATION_END.search(parts[-1]) or parts[-1].count("(") > parts[-1].count(")")
        ):
            parts[-1] += " " + part
        else:
            parts.append(part)
    if len(parts) < 2 or len(parts[-1].split()) < _MIN_ASK_WORDS:
        return None
    return parts[-1]


def _ranked(scores: Mapping[str, float]) -> list[tuple[str, float]]:
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))


def fit_gaps(
    ranked: Sequence[Sequence[tuple[str, float]]],
    labels: Sequence[str],
    precision: float = RESTRICT_PRECISION,
) -> list[float | None]:
    """The restriction gaps learnt from routed held-out utterances (each: its collections
    ranked by score, and its own collection).

    Stage m (1, 2, ...) restricts an utterance to its m best collections when the score gap
    between the m-th and the next is at least the stage's threshold. Among the utterances no
    earlier stage restricted, the threshold is the lowest gap such that the utterances at or
    above it have their own collection among the m best at least ``precision`` of the time
    (``None`` when no gap does, or too few utterances reach the stage).
    """
    n = min((len(r) for r in ranked), default=0)
    pending = list(range(len(ranked)))
    gaps: list[float | None] = []
    for m in range(1, n):
        points = sorted(
            (
                (ranked[i][m - 1][1] - ranked[i][m][1],
                 labels[i] in {name for name, _ in ranked[i][:m]})
                for i in pending
            ),
            key=lambda p: -p[0],
        )
        chosen: float | None = None
        right = 0
        for seen, (gap, ok) in enumerate(points, 1):
            right += ok
            # the lowest gap (ties kept together) whose utterances at or above it are right
            # often enough, once there are enough of them to say so
            if seen >= _MIN_STAGE and right / seen >= precision and (
                seen == len(points) or points[seen][0] < gap
            ):
                chosen = gap
        gaps.append(chosen)
        if chosen is not None:
            pending = [
                i for i in pending if ranked[i][m - 1][1] - ranked[i][m][1] < chosen
            ]
    return gaps


#: Held-out utterances a stage needs to fit its threshold.
_MIN_STAGE = 20


def fit_routes(
    store: Any,
    *,
    registry: Any = None,
    seed: int = 0,
    precision: float = RESTRICT_PRECISION,
    boost_precision: float = BOOST_PRECISION,
    previous: FittedRoutes | None = None,
) -> FittedRoutes:
    """Fit the routes of the index ``store`` (see the module docstring); nothing is saved.

    The samples of ``previous`` routes are used again for the collections whose documents
    did not change (only the others are read); the router and its gaps are fitted again.
    """
    import time

    from .plugins import Registry

    started = time.perf_counter()
    collections = list_collections(store)
    state = index_state(store)
    named = [c for c in collections if c.name is not None]
    if len(named) < 2:
        note = NO_ROUTING_ONE if named else "no collections: no routing"
        return FittedRoutes(collections, state, note=note)
    factory = _semantic_factory(registry or Registry())
    if factory is None:
        return FittedRoutes(collections, state, note=NO_SEMANTIC)
    members = document_collections(store)
    fingerprints = store.fingerprints()
    samples: dict[str, CollectionSample] = {}
    read: list[str] = []
    for info in named:
        name = info.name
        assert name is not None
        ids = members.get(name, [])
        fingerprint = _collection_fingerprint(ids, fingerprints)
        kept = previous.samples.get(name) if previous is not None else None
        if kept is not None and kept.fingerprint == fingerprint:
            samples[name] = kept
        else:
            samples[name] = sample_collection(store, ids, fingerprint, seed=seed)
            read.append(name)
    usable = _unshared(samples)
    routable = [n for n, s in usable.items() if s.examples or s.held_examples]
    if len(routable) < 2:
        return FittedRoutes(
            collections, state, samples=samples,
            note="no routing: fewer than two collections hold text to learn routes from",
        )
    held = [(text, name) for name in routable for text in usable[name].utterances]
    train = {name: usable[name].examples for name in routable}
    ranked: list[list[tuple[str, float]]] = []
    memo = None
    if held and all(train.values()):
        probe = _semantic(factory, train)
        memo = _Memo(probe.encoder)
        probe = _semantic(factory, train, memo)
        ranked = [_ranked(s) for s in _scores_many(probe, [text for text, _ in held])]
    labels = [label for _, label in held] if ranked else []
    gaps = fit_gaps(ranked, labels, precision)
    boost_gap = fit_gaps(ranked, labels, boost_precision)[0] if ranked else None
    restricted = right = boosted = boosted_right = 0
    for scores, label in zip(ranked, labels, strict=True):
        top = _restriction(scores, gaps)
        if top is not None:
            restricted += 1
            right += label in top
        elif boost_gap is None or scores[0][1] - scores[1][1] >= boost_gap:
            boosted += 1
            boosted_right += scores[0][0] == label
    correct = sum(scores[0][0] == label for scores, label in zip(ranked, labels, strict=True))
    examples = {
        name: list(dict.fromkeys(usable[name].examples + usable[name].held_examples))
        for name in routable
    }

    def share(count: int, total: int) -> float | None:
        return round(count / total, 4) if total else None

    router = _semantic(factory, examples, memo)
    if memo is not None:
        router.warm_up()  # its examples embedded now, most of them already were
        memo.close()
    report = {
        "restrict_precision_target": precision,
        "boost_precision_target": boost_precision,
        "held_out": len(ranked),
        "held_out_accuracy": share(correct, len(ranked)),
        "restricted_share": share(restricted, len(ranked)),
        "restricted_precision": share(right, restricted),
        "boosted_share": share(boosted, len(ranked)),
        "boosted_precision": share(boosted_right, boosted),
        "examples": {name: len(texts) for name, texts in examples.items()},
        "sampled_documents": {name: samples[name].documents for name in routable},
        "read": read,
    }
    fitted = FittedRoutes(
        collections, state, router=router, restrict_gaps=gaps,
        boost_gap=boost_gap, boost_weight=DEFAULT_BOOST_WEIGHT, fit=report, samples=samples,
    )
    report["seconds"] = round(time.perf_counter() - started, 2)
    return fitted


def _restriction(
    ranked: Sequence[tuple[str, float]], gaps: Sequence[float | None]
) -> list[str] | None:
    """The collections a sub-query is restricted to (``None``: none, a boost)."""
    for m, threshold in enumerate(gaps, 1):
        if m >= len(ranked):
            break
        if threshold is not None and ranked[m - 1][1] - ranked[m][1] >= threshold:
            return [name for name, _ in ranked[:m]]
    return None


# -- saving and loading ------------------------------------------------------------------------


def _folder(store: Any) -> Path | None:
    location = getattr(store, "path", None) or getattr(store, "location", None)
    if location is None:
        return None
    path = Path(os.fspath(location))
    return path if path.is_dir() else None


def save_routes(store: Any, fitted: FittedRoutes) -> Path | None:
    """Write ``fitted`` into the index folder (``None``: the store has no local folder)."""
    folder = _folder(store)
    if folder is None:
        return None
    router_file = None
    if fitted.router is not None:
        fitted.router.save(folder / _ROUTER_FILE)
        router_file = _ROUTER_FILE
    target = folder / ROUTES_FILE
    tmp = target.with_name(f".{target.name}.tmp")
    tmp.write_text(json.dumps(fitted.to_dict(router_file), ensure_ascii=False), "utf-8")
    os.replace(tmp, target)
    return target


def _read_manifest(folder: Path) -> dict[str, Any] | None:
    try:
        data = json.loads((folder / ROUTES_FILE).read_text("utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or (data.get("format"), data.get("version")) != (
        _FORMAT, _VERSION
    ):
        return None
    return data


def _from_manifest(data: Mapping[str, Any], router: Any = None) -> FittedRoutes:
    collections = [
        CollectionInfo(c.get("name"), int(c.get("documents", 0)), int(c.get("chunks", 0)))
        for c in data.get("collections", [])
    ]
    samples = data.get("samples") or {}
    return FittedRoutes(
        collections, str(data.get("state")), router=router,
        restrict_gaps=list(data.get("restrict_gaps") or []),
        boost_gap=data.get("boost_gap"),
        boost_weight=float(data.get("boost_weight") or DEFAULT_BOOST_WEIGHT),
        fit=dict(data.get("fit") or {}), note=data.get("note"),
        restrict_share=float(data.get("restrict_share", RESTRICT_SHARE)),
        boost_share=float(data.get("boost_share", BOOST_SHARE)),
        samples={
            str(name): CollectionSample.from_dict(s)
            for name, s in samples.items() if isinstance(s, Mapping)
        } if isinstance(samples, Mapping) else {},
    )


def load_routes(
    store: Any, *, registry: Any = None, router: bool = True, current: bool = True
) -> FittedRoutes | None:
    """The routes saved in the index folder, if they were fitted on what it holds now
    (``current=False``: whatever it held; ``router=False``: without loading the router
    itself)."""
    folder = _folder(store)
    if folder is None or not (folder / ROUTES_FILE).is_file():
        return None
    data = _read_manifest(folder)
    if data is None:
        return None
    if current and data.get("state") != index_state(store):
        return None
    loaded = None
    if data.get("router") and router:
        from .plugins import Registry

        factory = _semantic_factory(registry or Registry())
        if factory is None:
            return None  # fitted where ragloom-semantic was installed: fit again (a note)
        try:
            loaded = factory.load(folder / data["router"])
        except Exception:  # noqa: BLE001 - a damaged file is fitted again
            log.warning("cannot read the saved routes in %s; fitting them again", folder)
            return None
    return _from_manifest(data, loaded)


def refresh_routes(
    store: Any, *, registry: Any = None
) -> tuple[FittedRoutes | None, bool]:
    """Fit the routes of ``store`` again and save them in its folder, unless the saved ones
    were fitted on what it holds now: (the routes, whether they were fitted now); ``(None,
    False)`` when the store has no local folder. Only the collections that changed since the
    saved routes were fitted are read again."""
    if _folder(store) is None:
        return None, False
    saved = load_routes(store, registry=registry, router=False)
    if saved is not None:
        return saved, False
    previous = load_routes(store, registry=registry, router=False, current=False)
    fitted = fit_routes(store, registry=registry, previous=previous)
    save_routes(store, fitted)
    return fitted, True


def current_routes(store: Any, *, registry: Any = None) -> FittedRoutes:
    """The saved routes when they are current, else routes fitted now (saved when the folder
    can be written: a read-only index is routed all the same)."""
    saved = load_routes(store, registry=registry)
    if saved is not None:
        return saved
    previous = load_routes(store, registry=registry, router=False, current=False)
    fitted = fit_routes(store, registry=registry, previous=previous)
    try:
        save_routes(store, fitted)
    except OSError as exc:
        log.info("routes fitted but not saved (%s)", exc)
    return fitted


# -- the routers -------------------------------------------------------------------------------


class WholeIndex(Router):
    """No routing: every sub-query searches the whole index; its plan says why (``note``)."""

    step_id: ClassVar[str] = "ragloom/whole-index"

    def __init__(self, note: str = NO_ROUTING_ONE) -> None:
        self.note = note

    def config(self) -> Mapping[str, Any]:
        return {"note": self.note}

    @property
    def valid_routes(self) -> Sequence[str]:
        return (ALL_COLLECTIONS,)

    @property
    def default_route(self) -> str | None:
        return ALL_COLLECTIONS

    def route_sync(self, query: str) -> RouteDecision:
        return RouteDecision(route=ALL_COLLECTIONS, note=self.note)


class CollectionRouter(Router):
    """Routes each sub-query to the collections of an index, restricting the search to them
    when the scores are far enough apart and boosting the best one otherwise (see the module
    docstring): by what ``probe``'s search of the whole index finds first when there is one,
    else by ``router``'s scores.

    Args:
        router: scores every collection for a query (``scores(query) -> {name: score}``, as
            ragloom-semantic's ``SemanticRouter`` does); ``None`` with a ``probe`` and the
            ``collections`` (the probe decides alone).
        restrict_gaps: per stage m, the score gap from the m-th collection to the next from
            which the search is restricted to the m best (``None``: never at that stage).
        boost_gap: the gap from the best collection to the next from which a sub-query not
            restricted boosts the best one (``None``: always); below it, the whole index.
        boost_weight: the weight of a boosted collection's list.
        collections: the collections routed among (default: every route of ``router``); a
            search restricted to some collections routes among those only.
        probe: a retriever over the index (the search's own): each collection's share of
            what it finds first for an ask decides (see :meth:`shares`), not ``router``.
        probe_k: the passages of the probe's search that decide.
        restrict_share: the share of them from which an ask is restricted to the collection.
        boost_share: the share from which the collection is boosted.
    """

    step_id: ClassVar[str] = "ragloom/collection-router"

    def __init__(
        self,
        router: Any,
        *,
        restrict_gaps: Sequence[float | None] = (),
        boost_weight: float = DEFAULT_BOOST_WEIGHT,
        boost_gap: float | None = None,
        collections: Iterable[str] | None = None,
        probe: Any = None,
        probe_k: int = PROBE_K,
        restrict_share: float = RESTRICT_SHARE,
        boost_share: float = BOOST_SHARE,
    ) -> None:
        from .errors import ConfigurationError

        if router is None:
            if probe is None or collections is None:
                raise ConfigurationError(
                    "CollectionRouter needs a router that scores every route, or a probe "
                    "and the collections to route among"
                )
        elif not callable(getattr(router, "scores", None)):
            raise ConfigurationError(
                "CollectionRouter needs a router that scores every route (scores(query))"
            )
        routes = (
            list(collections or ()) if router is None
            else [r for r in router.valid_routes if r != ALL_COLLECTIONS]
        )
        chosen = list(routes if collections is None else collections)
        unknown = [c for c in chosen if c not in routes]
        if unknown:
            raise ConfigurationError(
                f"no route for the collection{'s' if len(unknown) > 1 else ''} "
                f"{', '.join(map(repr, unknown))}; routed collections: {', '.join(routes)}"
            )
        self.router = router
        self.collections = tuple(chosen)
        self.restrict_gaps = [None if g is None else float(g) for g in restrict_gaps]
        self.boost_weight = float(boost_weight)
        self.boost_gap = None if boost_gap is None else float(boost_gap)
        if probe is not None and not callable(getattr(probe, "retrieve", None)):
            raise ConfigurationError("CollectionRouter's probe must be a retriever")
        if isinstance(probe_k, bool) or not isinstance(probe_k, int) or probe_k < 1:
            raise ConfigurationError(f"probe_k must be an integer >= 1, got {probe_k!r}")
        if not 0 <= boost_share <= restrict_share:
            raise ConfigurationError(
                "the shares must satisfy 0 <= boost_share <= restrict_share, got "
                f"{boost_share!r} and {restrict_share!r}"
            )
        self.probe = probe
        self.probe_k = probe_k
        self.restrict_share = float(restrict_share)
        self.boost_share = float(boost_share)

    def config(self) -> Mapping[str, Any]:
        probe = None if self.probe is None else {
            "retriever": getattr(self.probe, "config_hash", type(self.probe).__name__),
            "k": self.probe_k, "restrict_share": self.restrict_share,
            "boost_share": self.boost_share,
        }
        return {
            "router": None if self.router is None else self.router.config_hash,
            "collections": list(self.collections),
            "restrict_gaps": self.restrict_gaps,
            "boost_gap": self.boost_gap,
            "boost_weight": self.boost_weight,
            "probe": probe,
        }

    @property
    def valid_routes(self) -> Sequence[str]:
        return (*self.collections, ALL_COLLECTIONS)

    @property
    def default_route(self) -> str | None:
        return ALL_COLLECTIONS

    def route_sync(self, query: str) -> RouteDecision:
        # An ask often comes after a situation that it shares with the question's other asks
        # ("Our Debian server runs on UTC. In a SQLite query, how do I ...?"): the last
        # sentence alone decides when it is confident enough to restrict the search (the
        # whole ask is scored only when it is not).
        ask = _last_sentence(query)
        if self.probe is not None:
            return self._by_search(
                self.shares(query), None if ask is None else (ask, self.shares(ask))
            )
        if ask is not None:
            alone = self._decide(ask)
            if alone.retrieval == "restrict":
                return alone
        return self._decide(query)

    async def route(self, query: str) -> RouteDecision:
        """:meth:`route_sync`, with a probe's searches (the ask's, and its last sentence's)
        run at once in worker threads: the route step awaits a question's asks together, so
        their searches of the index overlap instead of queueing one after another."""
        if self.probe is None:
            return self.route_sync(query)
        import anyio

        ask = _last_sentence(query)
        texts = [query] if ask is None else [query, ask]
        found: list[dict[str, float]] = [{} for _ in texts]

        async def one(i: int, text: str) -> None:
            found[i] = await anyio.to_thread.run_sync(self.shares, text)

        async with anyio.create_task_group() as tg:
            for i, text in enumerate(texts):
                tg.start_soon(one, i, text)
        return self._by_search(found[0], None if ask is None else (ask, found[1]))

    def shares(self, query: str) -> dict[str, float]:
        """Each collection's share of what a search of the whole index for ``query`` finds
        first (its top :attr:`probe_k` passages, the passage at rank r weighing
        ``1 / (PROBE_RANK_K + r)``; passages of no collection routed among count in the
        whole, for none); empty without a probe or when the search finds nothing."""
        if self.probe is None:
            return {}
        mass = dict.fromkeys(self.collections, 0.0)
        total = 0.0
        for rank, hit in enumerate(self.probe.retrieve(query, top_k=self.probe_k), 1):
            weight = 1.0 / (PROBE_RANK_K + rank)
            total += weight
            name = hit.chunk.metadata.get(COLLECTION_KEY)
            if name in mass:
                mass[name] += weight
        return {name: m / total for name, m in mass.items()} if total > 0 else {}

    def _decide(self, query: str) -> RouteDecision:
        scores = self.router.scores(query)
        ranked = _ranked({c: float(scores.get(c, 0.0)) for c in self.collections})
        if not ranked or ranked[0][1] <= 0:
            return self.fallback("nothing to route by (no words the routes know)")
        best, score = ranked[0]
        runner_up, runner_up_score = ranked[1] if len(ranked) > 1 else (None, None)
        restricted = _restriction(ranked, self.restrict_gaps)
        if (
            restricted is None and self.boost_gap is not None and runner_up_score is not None
            and score - runner_up_score < self.boost_gap
        ):
            return RouteDecision(
                route=best, score=score, runner_up=runner_up, runner_up_score=runner_up_score,
                note=TOO_CLOSE,
            )
        return RouteDecision(
            route=best,
            score=score,
            runner_up=runner_up,
            runner_up_score=runner_up_score,
            collections=restricted or [best],
            retrieval="restrict" if restricted else "boost",
        )


    def _by_search(
        self, found: Mapping[str, float], last: tuple[str, Mapping[str, float]] | None
    ) -> RouteDecision:
        """The decision by the shares of the whole ask's search (``found``) and of its last
        sentence's (``last``: the sentence and its shares). The last sentence, searched alone
        beside the ask, restricts when the whole ask's search finds its collection too, and
        only boosts it when not (a sentence read out of its context can find something else
        entirely). When the whole ask would be restricted to another collection than the one
        its last sentence points to, the last sentence decides: the sentences before it are
        the situation the question opened with, shared by all its asks, and an ask restricted
        by them alone ("We're adding a second site on the same box. Generate a key and a
        CSR ...") would never see the collection it asks about."""
        whole = self._by_shares(found)
        if last is None:
            return whole
        ask, shares = last
        alone = self._by_shares(shares)
        if alone.retrieval == "restrict":
            agreed = found.get(alone.route, 0.0) > 0
            return alone.model_copy(
                update={"focus": ask} if agreed else {"focus": ask, "retrieval": "boost"}
            )
        if (
            whole.retrieval == "restrict"
            and alone.fallback_reason is None
            and alone.route != whole.route
        ):
            return alone
        return whole

    def _by_shares(self, shares: Mapping[str, float]) -> RouteDecision:
        ranked = _ranked(shares)
        if not ranked or ranked[0][1] <= 0:
            return self.fallback("nothing to route by (the search found nothing)")
        best, share = ranked[0]
        runner_up, runner_up_share = ranked[1] if len(ranked) > 1 else (None, None)
        decision = RouteDecision(
            route=best, score=round(share, 4), runner_up=runner_up,
            runner_up_score=None if runner_up_share is None else round(runner_up_share, 4),
            note=TOO_CLOSE,
        )
        if share >= self.restrict_share:
            how: Retrieval = "restrict"
        elif share >= self.boost_share:
            how = "boost"
        else:
            return decision
        return decision.model_copy(
            update={"collections": [best], "retrieval": how, "note": None}
        )


def index_router(
    store: Any, *, registry: Any = None, collections: Sequence[str] | None = None,
    probe: Any = None,
) -> Router:
    """The default router of a search of ``store``: a :class:`CollectionRouter` over its
    collections (among ``collections`` when the search is restricted to them), or
    :class:`WholeIndex` with the reason there is no routing.

    With a ``probe`` (what ``ragloom search``, ``plan``, ``eval`` and the server give), the
    probe's search decides and the fitted router is neither loaded nor needed: the saved
    routes give the collections and the shares (without ragloom-semantic too)."""
    if probe is not None:
        saved = load_routes(store, registry=registry, router=False)
        fitted = saved if saved is not None else current_routes(store, registry=registry)
        names = fitted.names
        if len(names) < 2:
            return WholeIndex(NO_ROUTING_ONE if names else "no collections: no routing")
        among = names if collections is None else [c for c in names if c in collections]
        if len(among) < 2:
            return WholeIndex("one collection searched: no routing" if among else "no routing")
        return CollectionRouter(
            None, collections=among, probe=probe, boost_weight=fitted.boost_weight,
            restrict_share=fitted.restrict_share, boost_share=fitted.boost_share,
        )
    fitted = current_routes(store, registry=registry)
    if fitted.router is None:
        return WholeIndex(fitted.note or NO_ROUTING_ONE)
    among = [c for c in fitted.names if c in fitted.router.valid_routes]
    if collections is not None:
        among = [c for c in among if c in collections]
        if len(among) < 2:
            return WholeIndex(
                "one collection searched: no routing" if among else "no routing"
            )
    return CollectionRouter(
        fitted.router, restrict_gaps=fitted.restrict_gaps, boost_gap=fitted.boost_gap,
        boost_weight=fitted.boost_weight, collections=among, probe=probe,
        restrict_share=fitted.restrict_share, boost_share=fitted.boost_share,
    )
