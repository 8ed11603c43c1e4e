"""SemanticRouter on CLINC150 with the bundled model: accuracy and out-of-scope calibration.

Routes are built from the train split (linear scoring, the score left to ``fit``, which
chooses ``confidence="covered"`` here: asserted); the numbers are taken on the validation
split and its 100 out-of-scope utterances (``oos_val``). Held: intent accuracy >= 0.92 and
domain accuracy >= 0.96 without a threshold; at the threshold ``fit`` picks for a target
out-of-scope recall of 0.75, out-of-scope rejection >= 0.70 with in-scope accuracy >= 0.90
(a fallback counts as wrong), both when fitted on the whole set and when fitted on one half
and measured on the other; with ``fit``'s default (``min_accuracy=0.90``) fitted on one
half, in-scope accuracy >= 0.90 and out-of-scope rejection >= 0.70 on the other (the mean of
both ways; measured: intent 0.914 and 0.777, domain 0.909 and 0.897; over 20 random halves
``benchmarks/bench_semantic.py`` reports mean and worst). The data is carried in
``tests/data/clinc150`` (CC BY 3.0, source in its README).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from ragloom_semantic import SemanticRouter

pytestmark = pytest.mark.slow

CLINC150 = Path(__file__).resolve().parents[2] / "data" / "clinc150"


@pytest.fixture(scope="module")
def clinc() -> dict:
    data = json.loads((CLINC150 / "train_val.json").read_text(encoding="utf-8"))
    domains = json.loads((CLINC150 / "domains.json").read_text(encoding="utf-8"))
    data["domain_of"] = {intent: d for d, intents in domains.items() for intent in intents}
    return data


def _label(clinc: dict, intent: str, task: str) -> str:
    return intent if task == "intent" else clinc["domain_of"][intent]


def _router(clinc: dict, task: str) -> SemanticRouter:
    grouped: dict[str, list[str]] = {}
    for utterance, intent in clinc["train"]:
        grouped.setdefault(_label(clinc, intent, task), []).append(utterance)
    routes = [
        {
            "name": name,
            "description": name.replace("_", " ") if task == "intent" else "",
            "examples": examples,
        }
        for name, examples in sorted(grouped.items())
    ]
    # no score given: fit chooses it (the word coverage, with 100 examples a route)
    return SemanticRouter(routes, "oos")


def _measure(router: SemanticRouter, utterances: list[str], labels: list[str | None]):
    """(in-scope accuracy with a fallback counted wrong, out-of-scope rejection)."""
    decisions = router.route_many(utterances)
    inside = [(d, y) for d, y in zip(decisions, labels, strict=True) if y is not None]
    outside = [d for d, y in zip(decisions, labels, strict=True) if y is None]
    accuracy = float(np.mean([d.route == y for d, y in inside]))
    rejection = float(np.mean([d.is_fallback for d in outside]))
    return accuracy, rejection


@pytest.mark.parametrize(
    ("task", "floor", "fitted_floor"), [("intent", 0.92, 0.90), ("domain", 0.96, 0.90)]
)
def test_accuracy_and_out_of_scope_calibration(
    clinc: dict, task: str, floor: float, fitted_floor: float
) -> None:
    router = _router(clinc, task)
    utterances = [u for u, _ in clinc["val"]] + [u for u, _ in clinc["oos_val"]]
    labels: list[str | None] = [_label(clinc, i, task) for _, i in clinc["val"]]
    labels += [None] * len(clinc["oos_val"])

    accuracy, rejection = _measure(router, utterances, labels)
    assert accuracy >= floor and rejection == 0.0
    router.confidence = "covered"  # what fit chooses below (asserted); same scale throughout
    accuracy, rejection = _measure(router, utterances, labels)
    assert accuracy >= floor and rejection == 0.0

    # a target out-of-scope recall, fitted on the whole set
    router.fit(utterances, labels, oos_recall=0.75)
    accuracy, rejection = _measure(router, utterances, labels)
    assert rejection >= 0.70 and accuracy >= fitted_floor, (accuracy, rejection)
    calibration = router.calibration
    assert calibration is not None
    assert calibration.chosen.in_scope_accuracy == pytest.approx(accuracy)

    # fitted on one half, measured on the other (and the other way round)
    order = np.random.default_rng(0).permutation(len(utterances))
    halves = [order[: len(order) // 2], order[len(order) // 2 :]]
    held: list[tuple[float, float]] = []
    for fit_half, test_half in (halves, halves[::-1]):
        router.fit(
            [utterances[i] for i in fit_half], [labels[i] for i in fit_half], oos_recall=0.75
        )
        held.append(
            _measure(router, [utterances[i] for i in test_half], [labels[i] for i in test_half])
        )
    accuracy, rejection = np.mean(held, axis=0)
    assert rejection >= 0.70 and accuracy >= fitted_floor, held

    # an in-scope accuracy to hold on utterances the fit did not see (with a margin), then as
    # much rejection as it leaves: measured on the other half, both ways
    kept: list[tuple[float, float]] = []
    for fit_half, test_half in (halves, halves[::-1]):
        router.fit([utterances[i] for i in fit_half], [labels[i] for i in fit_half])  # default
        assert router.calibration is not None
        assert router.calibration.criterion == "min_accuracy=0.9"
        assert router.confidence == router.calibration.confidence == "covered"
        assert router.calibration.chosen.in_scope_accuracy >= 0.90
        kept.append(
            _measure(router, [utterances[i] for i in test_half], [labels[i] for i in test_half])
        )
    accuracy, rejection = np.mean(kept, axis=0)
    assert accuracy >= 0.90 and rejection >= 0.70, kept

    # the class-balanced default rejects far more than the old "most right outcomes" rule,
    # at a cost in in-scope accuracy that the curve shows
    balanced = router.fit(utterances, labels, criterion="balanced").calibration
    most_right = router.fit(utterances, labels, criterion="accuracy").calibration
    assert balanced is not None and most_right is not None
    assert balanced.chosen.oos_rejection >= 0.9
    assert balanced.chosen.oos_rejection > most_right.chosen.oos_rejection
    assert balanced.point(0.75).in_scope_accuracy >= fitted_floor
