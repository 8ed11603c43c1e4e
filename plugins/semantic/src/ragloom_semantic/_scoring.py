"""Nearest-route scoring over example embeddings: k-nearest examples, centroids, a learned
linear head, and threshold learning. Pure numpy; no model, no ragloom core.

Every function takes L2-normalised rows (queries and examples), so a dot product is a cosine
similarity. Products are taken in float64 and scores returned as float32, so that a query gets
the same score alone or in a batch of any size (BLAS sums in a batch-dependent order; the
float64 error stays far below float32 resolution).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = [
    "LinearHead",
    "RouteIndex",
    "WordCoverage",
    "accuracy_threshold",
    "held_accuracy_threshold",
    "balanced_threshold",
    "prototype_labels",
    "recall_threshold",
    "rejection_threshold",
    "spherical_kmeans",
    "top_two",
    "train_linear_head",
    "weighted_threshold",
]

# Queries are scored in blocks so that a (block, routes, examples) tensor stays small.
_QUERY_BLOCK = 256
# Query rows up to which a product is taken by numpy's own loops instead of BLAS. OpenBLAS
# splits even a one-row product over its threads, which then spin, waiting for more, on the
# cores that the searches routed next need: on a 3-ask hybrid search of 649k chunks on 2 cores,
# 187 ms of CPU per question with BLAS for the routing products, 103 ms without (the product
# itself: about 0.4 ms per query against 4,000 examples either way).
_FEW_QUERIES = 16


def _product(queries: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    """``queries @ matrix`` (float64), without BLAS threads for a few queries."""
    if queries.shape[0] <= _FEW_QUERIES:
        return np.einsum("ij,jk->ik", queries, matrix)
    return queries @ matrix


#: How much larger than the examples themselves the padded tensor of :meth:`RouteIndex.knn_scores`
#: may be; past it each route is scored on its own block. Partitioning padding (``-inf``)
#: costs as much as real cells and more (ties): with routes of a few hundred examples beside
#: one of a few thousand (a fit on collections of unequal size) the blocks took about a third
#: of the time.
PADDED_SHARE = 1.25


@dataclass(frozen=True)
class RouteIndex:
    """Example embeddings grouped by route (route ``r`` owns rows ``starts[r]:ends[r]``).

    Build it with :meth:`build`; every route needs at least one example.
    """

    embeddings: np.ndarray  # (n, d) float64, unit rows, grouped by route
    labels: np.ndarray  # (n,) int64 route index of each row
    starts: np.ndarray  # (R,) int64
    counts: np.ndarray  # (R,) int64
    centroids: np.ndarray  # (R, d) float64 unit rows

    @classmethod
    def build(cls, embeddings: np.ndarray, labels: np.ndarray, n_routes: int) -> RouteIndex:
        embeddings = np.asarray(embeddings, dtype=np.float64)
        labels = np.asarray(labels, dtype=np.int64)
        if embeddings.ndim != 2 or labels.shape != (embeddings.shape[0],):
            raise ValueError("embeddings must be (n, d) and labels (n,)")
        if n_routes < 1:
            raise ValueError("n_routes must be >= 1")
        if labels.size and (labels.min() < 0 or labels.max() >= n_routes):
            raise ValueError("labels must be route indexes in [0, n_routes)")
        counts = np.bincount(labels, minlength=n_routes).astype(np.int64)
        if (counts == 0).any():
            empty = np.flatnonzero(counts == 0).tolist()
            raise ValueError(f"routes {empty} have no example")
        order = np.argsort(labels, kind="stable")
        grouped = np.ascontiguousarray(embeddings[order])
        starts = np.concatenate(([0], np.cumsum(counts)[:-1])).astype(np.int64)
        sums = np.add.reduceat(grouped, starts, axis=0)
        norms = np.linalg.norm(sums, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        return cls(
            embeddings=grouped,
            labels=labels[order],
            starts=starts,
            counts=counts,
            centroids=sums / norms,
        )

    @property
    def n_routes(self) -> int:
        return int(self.counts.shape[0])

    def centroid_scores(self, queries: np.ndarray) -> np.ndarray:
        """``(m, R)`` cosine similarity of each query to each route's centroid."""
        return np.asarray(_product(_f64(queries), self.centroids.T), dtype=np.float32)

    def knn_scores(self, queries: np.ndarray, k: int) -> np.ndarray:
        """``(m, R)``: per route, the mean of the query's ``k`` highest similarities to the
        route's examples (all of them when the route has fewer than ``k``)."""
        if k < 1:
            raise ValueError(f"k must be >= 1, got {k}")
        queries = _f64(queries)
        m = queries.shape[0]
        out = np.empty((m, self.n_routes), dtype=np.float32)
        width = int(self.counts.max())
        padded_cells = width * self.n_routes
        if padded_cells <= PADDED_SHARE * self.embeddings.shape[0] + 64:
            self._knn_padded(queries, k, width, out)
        else:  # unequal routes: a padded tensor would be largely padding
            for r in range(self.n_routes):
                out[:, r] = self._knn_block(queries, r, k)
        return out

    def knn_scores_for(self, queries: np.ndarray, routes: np.ndarray, k: int) -> np.ndarray:
        """``(m,)``: :meth:`knn_scores` of query ``i`` for route ``routes[i]`` only."""
        queries = _f64(queries)
        out = np.empty(queries.shape[0], dtype=np.float32)
        routes = np.asarray(routes, dtype=np.int64)
        for r in np.unique(routes):
            rows = np.flatnonzero(routes == r)
            out[rows] = self._knn_block(queries[rows], int(r), k)
        return out

    def _knn_block(self, queries: np.ndarray, r: int, k: int) -> np.ndarray:
        start, count = int(self.starts[r]), int(self.counts[r])
        sims = _product(queries, self.embeddings[start : start + count].T)
        kk = min(k, count)
        if kk == count:
            return np.asarray(sims.mean(axis=1), dtype=np.float32)
        top = np.partition(sims, count - kk, axis=1)[:, count - kk :]
        return np.asarray(top.mean(axis=1), dtype=np.float32)

    def _knn_padded(self, queries: np.ndarray, k: int, width: int, out: np.ndarray) -> None:
        # (R, width) row indexes into embeddings; padding points at row 0 and is masked.
        offsets = np.arange(width)[None, :]
        valid = offsets < self.counts[:, None]
        index = np.where(valid, self.starts[:, None] + offsets, 0)
        kk = min(k, width)
        divisor = np.minimum(self.counts, k).astype(np.float64)
        equal = bool(valid.all())  # every route has `width` examples: a reshape will do
        for lo in range(0, queries.shape[0], _QUERY_BLOCK):
            sims = _product(queries[lo : lo + _QUERY_BLOCK], self.embeddings.T)  # (b, n)
            if equal:
                cube = sims.reshape(sims.shape[0], self.n_routes, width)
            else:
                cube = sims[:, index]  # (b, R, width)
                cube[:, ~valid] = -np.inf
            top = np.partition(cube, width - kk, axis=2)[:, :, width - kk :]
            top[np.isneginf(top)] = 0.0
            out[lo : lo + _QUERY_BLOCK] = top.sum(axis=2) / divisor[None, :]


_WORD = re.compile(r"\w+")


def words(text: str) -> list[str]:
    """The case-folded words (runs of letters, digits and underscores) of ``text``."""
    return _WORD.findall(text.casefold())


@dataclass(frozen=True)
class WordCoverage:
    """How much of a query's wording a route's examples have used: the inverse-document-
    frequency-weighted share of the query's words that occur in some example of the route.

    An out-of-scope query routed to its nearest route tends to share that route's frame ("what
    is the", "how do I") but not its subject words, which no example of the route ever used;
    the embedding similarity alone cannot tell these apart. A word no example has gets the
    largest weight; frequent words ("the", "my") almost none. A query without words covers 1.0
    (nothing to judge by).
    """

    table: dict[str, tuple[float, frozenset[int]]]  # word: weight, routes whose examples use it
    unseen: float  # weight of a word no example uses

    @classmethod
    def build(cls, texts: Sequence[str], labels: np.ndarray) -> WordCoverage:
        owners: dict[str, set[int]] = {}
        frequency: dict[str, int] = {}
        for text, label in zip(texts, np.asarray(labels).tolist(), strict=True):
            for word in set(words(text)):
                frequency[word] = frequency.get(word, 0) + 1
                owners.setdefault(word, set()).add(int(label))
        n = len(texts)
        table = {
            w: (math.log((n + 1) / (f + 1)), frozenset(owners[w])) for w, f in frequency.items()
        }
        return cls(table, math.log(n + 1))

    def coverage(self, queries: Sequence[str], *routes: np.ndarray) -> list[np.ndarray]:
        """For each array of ``routes`` (one route per query), ``(m,)``: the share of query
        ``i``'s word weight that its route covers. The queries are split into words once."""
        columns = [np.asarray(r).tolist() for r in routes]
        out = np.ones((len(columns), len(queries)), dtype=np.float64)
        get, unknown = self.table.get, (self.unseen, frozenset[int]())
        for i, query in enumerate(queries):
            found = [get(word, unknown) for word in words(query)]
            total = sum([weight for weight, _ in found])
            if total <= 0:
                continue
            for j, column in enumerate(columns):
                route = column[i]
                out[j, i] = sum([weight for weight, mine in found if route in mine]) / total
        return list(out)


def _f64(matrix: np.ndarray) -> np.ndarray:
    return np.asarray(matrix, dtype=np.float64)


def top_two(scores: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per row of ``(m, R)`` scores: best index, best score, runner-up index, runner-up score.

    Ties go to the lower index (the route declared first). With one route the runner-up index
    is -1 and its score NaN.
    """
    m, n_routes = scores.shape
    rows = np.arange(m)
    best = np.argmax(scores, axis=1)
    best_score = scores[rows, best]
    if n_routes < 2:
        return best, best_score, np.full(m, -1), np.full(m, np.nan, dtype=np.float32)
    masked = scores.copy()
    masked[rows, best] = -np.inf
    second = np.argmax(masked, axis=1)
    return best, best_score, second, scores[rows, second]


def spherical_kmeans(
    vectors: np.ndarray, k: int, *, iterations: int = 15, seed: int = 0
) -> np.ndarray:
    """Cluster unit rows into ``k`` groups by cosine similarity; the ``(n,)`` assignment.

    Deterministic for a seed (k-means++ seeding). An emptied cluster keeps its centre.
    """
    n = vectors.shape[0]
    if not 1 <= k <= n:
        raise ValueError(f"k must be in [1, {n}], got {k}")
    if k == 1:
        return np.zeros(n, dtype=np.int64)
    rng = np.random.default_rng(seed)
    centres = np.empty((k, vectors.shape[1]), dtype=np.float32)
    centres[0] = vectors[rng.integers(n)]
    closest = 1.0 - vectors @ centres[0]
    for j in range(1, k):
        weights = np.clip(closest, 0.0, None)
        total = float(weights.sum())
        pick = int(rng.choice(n, p=weights / total)) if total > 0 else int(rng.integers(n))
        centres[j] = vectors[pick]
        closest = np.minimum(closest, 1.0 - vectors @ centres[j])
    assign = np.zeros(n, dtype=np.int64)
    for _ in range(iterations):
        new = np.argmax(vectors @ centres.T, axis=1)
        if _ and np.array_equal(new, assign):
            break
        assign = new
        sums = np.zeros_like(centres)
        np.add.at(sums, assign, vectors)
        norms = np.linalg.norm(sums, axis=1)
        filled = norms > 0
        centres[filled] = sums[filled] / norms[filled, None]
    return assign


@dataclass(frozen=True)
class LinearHead:
    """A softmax classifier over route prototypes; a route's probability is the sum of its
    prototypes' probabilities (so a route whose examples form several clusters is covered by
    several prototypes)."""

    weights: np.ndarray  # (d, P) float64
    bias: np.ndarray  # (P,) float64
    owner: np.ndarray  # (P,) int64 route of each prototype
    n_routes: int

    def route_probabilities(self, queries: np.ndarray) -> np.ndarray:
        """``(m, R)`` route probabilities (rows sum to 1)."""
        logits = _product(_f64(queries), self.weights) + self.bias
        logits -= logits.max(axis=1, keepdims=True)
        np.exp(logits, out=logits)
        logits /= logits.sum(axis=1, keepdims=True)
        membership = np.zeros((self.owner.shape[0], self.n_routes), dtype=np.float64)
        membership[np.arange(self.owner.shape[0]), self.owner] = 1.0
        return np.asarray(_product(logits, membership), dtype=np.float32)

    def to_matrix(self) -> np.ndarray:
        """``(d + 1, P)``: the weights with the bias as the last row (for saving as .npy)."""
        return np.vstack([self.weights, self.bias[None, :]])

    @classmethod
    def from_matrix(cls, matrix: np.ndarray, owner: np.ndarray, n_routes: int) -> LinearHead:
        matrix = np.asarray(matrix, dtype=np.float64)
        owner = np.asarray(owner, dtype=np.int64)
        if matrix.ndim != 2 or matrix.shape[1] != owner.shape[0]:
            raise ValueError("head matrix and prototype owners disagree")
        return cls(matrix[:-1], matrix[-1], owner, n_routes)


def prototype_labels(
    embeddings: np.ndarray,
    labels: np.ndarray,
    n_routes: int,
    *,
    examples_per_prototype: int,
    max_prototypes: int = 32,
    seed: int = 0,
) -> tuple[np.ndarray, np.ndarray]:
    """Split each route's examples into ``count // examples_per_prototype`` clusters (at least
    one, at most ``max_prototypes``). Returns each example's prototype and each prototype's
    route."""
    proto = np.empty(labels.shape[0], dtype=np.int64)
    owner: list[int] = []
    for r in range(n_routes):
        rows = np.flatnonzero(labels == r)
        k = max(1, min(max_prototypes, rows.shape[0] // max(1, examples_per_prototype)))
        assign = spherical_kmeans(embeddings[rows], k, seed=seed + r) if k > 1 else 0
        proto[rows] = len(owner) + assign
        owner.extend([r] * k)
    return proto, np.asarray(owner, dtype=np.int64)


def train_linear_head(
    embeddings: np.ndarray,
    labels: np.ndarray,
    n_routes: int,
    *,
    examples_per_prototype: int = 64,
    max_prototypes: int = 32,
    l2: float = 1e-3,
    iterations: int = 100,
    learning_rate: float = 0.1,
    seed: int = 0,
) -> LinearHead:
    """Multinomial logistic regression on standardised embeddings, full-batch Adam.

    Deterministic (zero initialisation, seeded clustering). Cost: ``iterations`` times two
    ``(n, d) x (d, P)`` products.
    """
    x = np.asarray(embeddings, dtype=np.float32)
    labels = np.asarray(labels, dtype=np.int64)
    proto, owner = prototype_labels(
        x, labels, n_routes, examples_per_prototype=examples_per_prototype,
        max_prototypes=max_prototypes, seed=seed,
    )
    n, dim = x.shape
    n_protos = owner.shape[0]
    mean = x.mean(axis=0)
    # Per-feature scale with a floor, so that a feature nearly constant over a handful of
    # examples is not blown up into noise.
    scale = np.maximum(x.std(axis=0), 0.25 / np.sqrt(dim)).astype(np.float32)
    xs = (x - mean) / scale
    w = np.zeros((dim, n_protos), dtype=np.float32)
    b = np.zeros(n_protos, dtype=np.float32)
    mw, vw = np.zeros_like(w), np.zeros_like(w)
    mb, vb = np.zeros_like(b), np.zeros_like(b)
    rows = np.arange(n)
    beta1, beta2, eps = 0.9, 0.999, 1e-8
    for t in range(1, iterations + 1):
        z = xs @ w + b
        z -= z.max(axis=1, keepdims=True)
        np.exp(z, out=z)
        z /= z.sum(axis=1, keepdims=True)
        z[rows, proto] -= 1.0  # softmax gradient: p - y
        gw = xs.T @ z / n + l2 * w
        gb = z.mean(axis=0)
        mw = beta1 * mw + (1 - beta1) * gw
        vw = beta2 * vw + (1 - beta2) * gw * gw
        mb = beta1 * mb + (1 - beta1) * gb
        vb = beta2 * vb + (1 - beta2) * gb * gb
        c1, c2 = 1 - beta1**t, 1 - beta2**t
        w -= learning_rate * (mw / c1) / (np.sqrt(vw / c2) + eps)
        b -= learning_rate * (mb / c1) / (np.sqrt(vb / c2) + eps)
    # Fold the standardisation into the weights: (q - mean) / scale @ w + b.
    weights = w.astype(np.float64) / scale[:, None]
    bias = b.astype(np.float64) - (mean / scale).astype(np.float64) @ w
    return LinearHead(weights, bias, owner, n_routes)


def weighted_threshold(
    scores: np.ndarray,
    accept: np.ndarray,
    reject: np.ndarray,
    accept_weight: float = 1.0,
    reject_weight: float = 1.0,
) -> float | None:
    """The threshold ``t`` that maximises
    ``accept_weight * #(accept & score >= t) + reject_weight * #(reject & score < t)``.

    ``accept`` marks items whose decision is right and should be kept, ``reject`` items that
    should fall to the default route; items in neither do not count. Returns the midpoint
    between the two scores that bracket the best cut, or ``None`` when keeping everything is
    best (no threshold).
    """
    scores = np.asarray(scores, dtype=np.float64)
    accept = np.asarray(accept, dtype=bool)
    reject = np.asarray(reject, dtype=bool)
    keep = accept | reject
    s, a, r = scores[keep], accept[keep], reject[keep]
    if s.size == 0 or not r.any():
        return None
    order = np.argsort(s, kind="stable")
    s, a, r = s[order], a[order], r[order]
    # Cutting before position i rejects items [0, i): gain = rejects below - accepts below.
    step = reject_weight * r.astype(np.float64) - accept_weight * a.astype(np.float64)
    gain = np.concatenate(([0.0], np.cumsum(step)))
    # Only cut between distinct scores.
    valid = np.ones(s.size + 1, dtype=bool)
    valid[1:-1] = s[1:] > s[:-1]
    gain = np.where(valid, gain, -np.inf)
    best = int(np.argmax(gain))  # first (lowest) cut among equals
    if best == 0 or gain[best] <= 1e-12 * max(accept_weight, reject_weight):
        return None
    if best == s.size:
        return float(np.nextafter(s[-1], np.inf))
    return float((s[best - 1] + s[best]) / 2)


def accuracy_threshold(
    scores: np.ndarray, accept: np.ndarray, reject: np.ndarray
) -> float | None:
    """The threshold ``t`` that maximises the number of right outcomes,
    ``#(accept & score >= t) + #(reject & score < t)`` (see :func:`weighted_threshold`).

    With few items to reject among many to keep this favours never rejecting; see
    :func:`balanced_threshold`.
    """
    return weighted_threshold(scores, accept, reject)


def balanced_threshold(
    scores: np.ndarray, accept: np.ndarray, reject: np.ndarray, n_keep: int | None = None
) -> float | None:
    """The threshold that maximises the kept share of ``accept`` plus the rejected share of
    ``reject``: both classes count equally, however many items each has.

    ``n_keep`` is the size of the class ``accept`` belongs to when it is larger than
    ``accept`` (in-scope items routed to a wrong route count in it but are never right).
    """
    accept = np.asarray(accept, dtype=bool)
    reject = np.asarray(reject, dtype=bool)
    n_accept = int(n_keep if n_keep is not None else accept.sum())
    n_reject = int(reject.sum())
    if n_reject == 0 or n_accept == 0:
        return None
    return weighted_threshold(scores, accept, reject, 1.0 / n_accept, 1.0 / n_reject)


def rejection_threshold(scores: np.ndarray, recall: float) -> float:
    """The lowest threshold that rejects (``score < t``) at least ``recall`` of ``scores``
    (the scores of items that should be rejected)."""
    if not 0 < recall <= 1:
        raise ValueError(f"recall must be in (0, 1], got {recall}")
    s = np.sort(np.asarray(scores, dtype=np.float64))
    if s.size == 0:
        raise ValueError("no scores to take a threshold from")
    count = int(np.ceil(recall * s.size - 1e-9))
    return float(np.nextafter(s[max(count, 1) - 1], np.inf))


def held_accuracy_threshold(
    scores: np.ndarray, correct: np.ndarray, in_scope: np.ndarray, accuracy: float,
    *, z: float = 1.645,
) -> float | None:
    """The highest threshold whose in-scope accuracy (right and kept, over every in-scope
    score) stays at least ``accuracy`` with a one-sided margin of ``z`` standard errors
    (1.645: 95%), so that it holds on utterances the threshold was not fitted on; ``None``
    (no threshold) when even keeping everything does not reach it."""
    if not 0 < accuracy <= 1:
        raise ValueError(f"accuracy must be in (0, 1], got {accuracy}")
    n = int(np.count_nonzero(in_scope))
    if n == 0:
        return None
    right = np.sort(np.asarray(scores, dtype=np.float64)[correct & in_scope])[::-1]
    for kept in range(1, right.size + 1):
        share = kept / n
        if share - z * math.sqrt(share * (1 - share) / n) >= accuracy:
            return float(right[kept - 1])
    return None


def recall_threshold(scores: np.ndarray, recall: float) -> float:
    """The highest threshold that keeps at least ``recall`` of ``scores`` (``score >= t``)."""
    if not 0 < recall <= 1:
        raise ValueError(f"recall must be in (0, 1], got {recall}")
    s = np.sort(np.asarray(scores, dtype=np.float64))
    if s.size == 0:
        raise ValueError("no scores to take a threshold from")
    drop = int(np.floor(s.size * (1 - recall) + 1e-9))
    return float(s[min(drop, s.size - 1)])
