"""The package surface: lazy exports, entry points, cheap import."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import entry_points

import ragloom_dspy
from ragloom.query import QueryTransformer, Router


def test_every_export_resolves() -> None:
    for name in ragloom_dspy.__all__:
        assert getattr(ragloom_dspy, name) is not None
    assert set(ragloom_dspy.__all__) <= set(dir(ragloom_dspy))


def test_unknown_attribute_is_an_attribute_error() -> None:
    try:
        ragloom_dspy.NoSuchThing  # type: ignore[attr-defined]  # noqa: B018
    except AttributeError as exc:
        assert "NoSuchThing" in str(exc)
    else:
        raise AssertionError("expected AttributeError")


def test_importing_the_package_does_not_import_dspy() -> None:
    code = (
        "import sys, ragloom_dspy\n"
        "assert 'dspy' not in sys.modules, 'dspy imported eagerly'\n"
        "ragloom_dspy.determine_complexity('a and b')\n"
        "assert 'dspy' not in sys.modules, 'the heuristic needs no dspy'\n"
        "ragloom_dspy.SubQueryGenerator\n"
        "assert 'dspy' in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_entry_points_name_the_adapters() -> None:
    (decomposer,) = [ep for ep in entry_points(group="ragloom.decomposers") if ep.name == "dspy"]
    (router,) = [ep for ep in entry_points(group="ragloom.routers") if ep.name == "dspy"]
    assert decomposer.dist is not None and decomposer.dist.name == "ragloom-dspy"
    assert issubclass(decomposer.load(), QueryTransformer)
    assert issubclass(router.load(), Router)
    assert decomposer.load() is ragloom_dspy.DSPyDecomposer
    assert router.load() is ragloom_dspy.DSPyRouter
