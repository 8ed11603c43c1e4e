"""The pure scoring module: k-nearest and centroid scores, the linear head, thresholds."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ragloom_semantic._scoring import (
    LinearHead,
    RouteIndex,
    accuracy_threshold,
    balanced_threshold,
    prototype_labels,
    recall_threshold,
    rejection_threshold,
    spherical_kmeans,
    top_two,
    train_linear_head,
)


def unit(*rows: list[float]) -> np.ndarray:
    m = np.asarray(rows, dtype=np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def clusters(seed: int, centres: int, per: int, dim: int = 16, spread: float = 0.3):
    rng = np.random.default_rng(seed)
    mid = rng.standard_normal((centres, dim))
    x = np.repeat(mid, per, axis=0) + spread * rng.standard_normal((centres * per, dim))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    return x.astype(np.float32), np.repeat(np.arange(centres), per)


def test_knn_is_the_mean_of_the_top_k_similarities_per_route() -> None:
    examples = unit([1, 0], [0.8, 0.6], [0, 1], [-1, 0], [0.6, 0.8])
    labels = np.array([0, 0, 1, 1, 1])
    index = RouteIndex.build(examples, labels, 2)
    query = unit([1, 0])
    sims = (query @ examples.T)[0]
    assert index.knn_scores(query, 1)[0] == pytest.approx([sims[0], max(sims[[2, 3, 4]])])
    two = index.knn_scores(query, 2)[0]
    assert two == pytest.approx([(sims[0] + sims[1]) / 2, (sims[4] + sims[2]) / 2], abs=1e-6)
    # k above a route's size averages all of its examples
    assert index.knn_scores(query, 10)[0] == pytest.approx(
        [sims[:2].mean(), sims[2:].mean()], abs=1e-6
    )
    assert index.knn_scores_for(query, np.array([1]), 2)[0] == pytest.approx(two[1], abs=1e-6)
    with pytest.raises(ValueError):
        index.knn_scores(query, 0)


def test_centroids_are_normalised_means() -> None:
    examples = unit([1, 0], [0, 1], [1, 1])
    index = RouteIndex.build(examples, np.array([0, 0, 1]), 2)
    assert index.centroid_scores(unit([1, 1]))[0] == pytest.approx([1.0, 1.0], abs=1e-6)
    assert index.centroid_scores(unit([1, 0]))[0] == pytest.approx([2**-0.5, 2**-0.5], abs=1e-6)


def test_build_validates() -> None:
    with pytest.raises(ValueError, match="no example"):
        RouteIndex.build(unit([1, 0]), np.array([0]), 2)
    with pytest.raises(ValueError, match="route indexes"):
        RouteIndex.build(unit([1, 0]), np.array([3]), 2)
    with pytest.raises(ValueError, match="labels"):
        RouteIndex.build(unit([1, 0]), np.array([0, 0]), 1)


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    k=st.integers(1, 6),
    counts=st.sampled_from([[1, 2, 40], [5, 6, 7], [4, 4, 4]]),
)
def test_padded_and_per_route_knn_agree(seed: int, k: int, counts: list[int]) -> None:
    rng = np.random.default_rng(seed)
    labels = np.repeat(np.arange(3), counts)
    rng.shuffle(labels)
    x = rng.standard_normal((labels.size, 8)).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    q = rng.standard_normal((5, 8)).astype(np.float32)
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    index = RouteIndex.build(x, labels, 3)
    full = index.knn_scores(q, k)
    for r in range(3):
        sims = np.sort(q @ x[labels == r].T, axis=1)[:, ::-1][:, :k]
        assert full[:, r] == pytest.approx(sims.mean(axis=1), abs=1e-5)
        assert index.knn_scores_for(q, np.full(5, r), k) == pytest.approx(full[:, r], abs=1e-6)


def test_scores_do_not_depend_on_the_batch() -> None:
    x, y = clusters(1, 5, 30)
    index = RouteIndex.build(x, y, 5)
    head = train_linear_head(x, y, 5, iterations=20)
    q, _ = clusters(2, 5, 40)
    for fn in (lambda m: index.knn_scores(m, 3), index.centroid_scores, head.route_probabilities):
        batch = fn(q)
        single = np.vstack([fn(q[i : i + 1]) for i in range(len(q))])
        assert np.array_equal(batch, single)


def test_top_two_prefers_the_first_on_ties() -> None:
    best, best_s, second, second_s = top_two(np.array([[0.2, 0.9, 0.9], [0.5, 0.1, 0.3]]))
    assert best.tolist() == [1, 0] and second.tolist() == [2, 2]
    assert best_s.tolist() == [0.9, 0.5] and second_s.tolist() == [0.9, 0.3]
    b, _, s, ss = top_two(np.array([[0.4]]))
    assert b.tolist() == [0] and s.tolist() == [-1] and np.isnan(ss[0])


def test_spherical_kmeans_finds_separated_clusters_deterministically() -> None:
    x, y = clusters(3, 4, 25, spread=0.05)
    a = spherical_kmeans(x, 4, seed=7)
    assert np.array_equal(a, spherical_kmeans(x, 4, seed=7))
    # every true cluster maps to exactly one found cluster
    assert {tuple(sorted(set(a[y == c].tolist()))) for c in range(4)} == {(i,) for i in range(4)}
    assert spherical_kmeans(x, 1).tolist() == [0] * len(x)
    with pytest.raises(ValueError):
        spherical_kmeans(x, 0)


def test_prototypes_scale_with_route_size() -> None:
    x, _ = clusters(4, 1, 200)
    labels = np.array([0] * 150 + [1] * 50)
    proto, owner = prototype_labels(x, labels, 2, examples_per_prototype=50)
    assert owner.tolist() == [0, 0, 0, 1]
    assert set(proto[labels == 0].tolist()) <= {0, 1, 2} and set(proto[labels == 1]) == {3}
    _, capped = prototype_labels(x, labels, 2, examples_per_prototype=1, max_prototypes=5)
    assert capped.tolist() == [0] * 5 + [1] * 5


def test_linear_head_learns_multimodal_routes_and_round_trips() -> None:
    # route 0 is made of two far-apart clusters, route 1 of one between them
    x, sub = clusters(5, 3, 80, spread=0.2)
    labels = np.where(sub == 1, 1, 0)
    head = train_linear_head(x, labels, 2, examples_per_prototype=40)
    assert head.owner.tolist() == [0, 0, 0, 0, 1, 1]
    test, test_sub = clusters(5, 3, 80, spread=0.2)
    probs = head.route_probabilities(test)
    assert probs.sum(axis=1) == pytest.approx(np.ones(len(test)))
    assert (probs.argmax(axis=1) == np.where(test_sub == 1, 1, 0)).mean() > 0.95
    again = LinearHead.from_matrix(head.to_matrix(), head.owner, 2)
    assert np.array_equal(again.route_probabilities(test), probs)
    with pytest.raises(ValueError):
        LinearHead.from_matrix(head.to_matrix(), head.owner[:-1], 2)


def test_accuracy_threshold_maximises_right_outcomes() -> None:
    scores = np.array([0.9, 0.8, 0.7, 0.4, 0.3, 0.75])
    accept = np.array([True, True, True, False, False, False])
    reject = np.array([False, False, False, True, True, True])
    # cutting between 0.4 and 0.7 gets 5 of 6 right; the 0.75 reject cannot be fixed cheaply
    assert accuracy_threshold(scores, accept, reject) == pytest.approx(0.55)
    assert accuracy_threshold(scores, accept, np.zeros(6, bool)) is None  # nothing to reject
    assert accuracy_threshold(np.array([0.2, 0.9]), np.array([True, False]),
                              np.array([False, True])) is None  # rejecting costs as much
    everything = accuracy_threshold(np.array([0.5, 0.6]), np.zeros(2, bool), np.ones(2, bool))
    assert everything is not None and everything > 0.6


def test_recall_threshold_keeps_the_fraction() -> None:
    scores = np.arange(10) / 10
    assert recall_threshold(scores, 0.9) == pytest.approx(0.1)
    assert recall_threshold(scores, 1.0) == 0.0
    assert (scores >= recall_threshold(scores, 0.55)).mean() >= 0.55
    with pytest.raises(ValueError):
        recall_threshold(scores, 0)
    with pytest.raises(ValueError):
        recall_threshold(np.array([]), 0.5)


def test_balanced_threshold_weighs_both_classes_equally() -> None:
    # 20 right in-scope scores spread over 0.30..0.87, 2 out-of-scope at 0.35 and 0.4
    keep = np.linspace(0.3, 0.87, 20)
    scores = np.concatenate([keep, [0.35, 0.4]])
    accept = np.concatenate([np.ones(20, bool), [False, False]])
    reject = ~accept
    # most right outcomes: rejecting both costs 4 in-scope items, so nothing is rejected...
    assert accuracy_threshold(scores, accept, reject) is None
    # ...while each class counting the same rejects both (2/2) for 4/20 of the in-scope
    cut = balanced_threshold(scores, accept, reject)
    assert cut is not None and 0.4 < cut < 0.42
    assert (scores[reject] < cut).all() and (scores[accept] >= cut).sum() == 16


def test_balanced_threshold_counts_wrong_in_scope_items_in_their_class() -> None:
    # two right in-scope items (0.2, 0.9), one routed wrongly (0.5), two out-of-scope
    scores = np.array([0.2, 0.9, 0.5, 0.25, 0.95])
    accept = np.array([True, True, False, False, False])
    reject = np.array([False, False, False, True, True])
    # each rejection costs a right in-scope item: even when both classes weigh 1/2 an item, a
    # gain when the wrong item counts in the in-scope class (each in-scope item weighs 1/3)
    assert balanced_threshold(scores, accept, reject) is None
    assert balanced_threshold(scores, accept, reject, n_keep=3) is not None
    assert balanced_threshold(scores, accept, np.zeros(5, bool)) is None


def test_rejection_threshold_rejects_at_least_the_share() -> None:
    scores = np.arange(1, 11) / 10
    cut = rejection_threshold(scores, 0.75)
    assert (scores < cut).mean() >= 0.75
    assert 0.8 < cut < 0.81  # the lowest such threshold: just above the 8th score
    assert (scores < rejection_threshold(scores, 1.0)).all()
    with pytest.raises(ValueError):
        rejection_threshold(scores, 0)
    with pytest.raises(ValueError):
        rejection_threshold(np.array([]), 0.5)


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.floats(0, 1, allow_nan=False), min_size=1, max_size=40),
    st.floats(0.01, 1.0),
)
def test_rejection_threshold_property(scores: list[float], share: float) -> None:
    s = np.asarray(scores)
    cut = rejection_threshold(s, share)
    assert (s < cut).mean() >= share - 1e-9
    below = s[s < cut]
    # no lower threshold rejects enough: dropping the highest rejected score loses the target
    assert (s < below.max()).mean() < share


def test_held_accuracy_threshold_keeps_the_accuracy_with_a_margin() -> None:
    from ragloom_semantic._scoring import held_accuracy_threshold

    # 100 in-scope utterances: 95 right (scores 0.95 .. 0.01 by 0.01), 5 wrong; 10 out of scope
    scores = np.concatenate([np.arange(95, 0, -1) / 100, np.full(5, 0.5), np.full(10, 0.3)])
    correct = np.concatenate([np.ones(95, bool), np.zeros(15, bool)])
    in_scope = np.concatenate([np.ones(100, bool), np.zeros(10, bool)])
    # without a margin the 90th right answer (0.06) would do; with 1.645 standard errors the
    # share kept must be 0.94 (0.94 - 1.645 * sqrt(0.94 * 0.06 / 100) >= 0.90)
    assert held_accuracy_threshold(scores, correct, in_scope, 0.90, z=0) == pytest.approx(0.06)
    assert held_accuracy_threshold(scores, correct, in_scope, 0.90) == pytest.approx(0.02)
    # out of reach: no threshold
    assert held_accuracy_threshold(scores, correct, in_scope, 0.99) is None
