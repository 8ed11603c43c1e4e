"""The public surface: ``ragloom.__all__`` and the one exception tree."""

from __future__ import annotations

import inspect

import pytest
import ragloom
import ragloom.errors

REQUIRED = {
    "Document",
    "ContentFormat",
    "PipelineStep",
    "RoutedStep",
    "Filter",
    "ContentFormatFilter",
    "Policy",
    "ExecutionContext",
    "Pipeline",
    "IterableSource",
    "Chunker",
    "ChunkerRouter",
    "ItemFailed",
    "ConfigurationError",
    "QueryTransformer",
    "Router",
}


def test_all_contains_the_core_names() -> None:
    missing = REQUIRED - set(ragloom.__all__)
    assert not missing, f"missing from ragloom.__all__: {sorted(missing)}"
    assert len(ragloom.__all__) == len(set(ragloom.__all__))


@pytest.mark.parametrize("name", sorted(ragloom.__all__))
def test_every_exported_name_resolves(name: str) -> None:
    value = getattr(ragloom, name)
    assert value is not None
    if inspect.isclass(value) or inspect.isfunction(value):
        assert value.__module__.startswith("ragloom")


def test_unknown_names_raise_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no_such_name"):
        ragloom.no_such_name  # noqa: B018
    assert not hasattr(ragloom, "Chunkr")


def test_dir_lists_the_public_names() -> None:
    assert REQUIRED <= set(dir(ragloom))


def test_every_error_is_a_ragloom_error() -> None:
    errors = [getattr(ragloom.errors, name) for name in ragloom.errors.__all__]
    assert errors
    for error in errors:
        assert issubclass(error, ragloom.RagloomError), error
        assert getattr(ragloom, error.__name__) is error  # re-exported at the top


def test_builtin_bases_of_the_error_tree() -> None:
    assert issubclass(ragloom.ConfigurationError, ValueError)
    assert issubclass(ragloom.ComponentTypeError, TypeError)
    assert issubclass(ragloom.InvalidInputError, ValueError)
    assert issubclass(ragloom.StepTimeoutError, TimeoutError)
    assert issubclass(ragloom.UnroutedItemError, ragloom.RoutingError)
    assert issubclass(ragloom.PluginNotFoundError, ragloom.ConfigurationError)
    assert issubclass(ragloom.CacheCorruptError, ragloom.CacheError)
    assert issubclass(ragloom.IncompatiblePluginError, ragloom.BrokenPluginError)


def test_events_share_a_base() -> None:
    for name in (
        "RunStarted",
        "RunFinished",
        "StepStarted",
        "StepFinished",
        "ItemRetried",
        "ItemFailed",
        "CacheHit",
        "CacheMiss",
    ):
        assert issubclass(getattr(ragloom, name), ragloom.Event)


def test_type_checkers_see_every_lazy_name_of_the_kit() -> None:
    """``ragloom.testing`` resolves its names lazily; its ``TYPE_CHECKING`` block must import
    each of them, or a plugin's ``mypy --strict`` sees the missing one as ``Any`` (and cannot
    subclass a contract)."""
    import ast

    import ragloom.testing

    tree = ast.parse(inspect.getsource(ragloom.testing))
    seen: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            for statement in node.body:
                if isinstance(statement, ast.ImportFrom):
                    seen.update(alias.asname or alias.name for alias in statement.names)
    assert seen == set(ragloom.testing.__all__)
