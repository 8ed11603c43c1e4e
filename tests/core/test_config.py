"""Declarative pipelines: build, located errors, import refusal, dump round trip (issue 3)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

import pytest
from ragloom import (
    Chunker,
    ChunkerRouter,
    ChunkSpan,
    ConfigurationError,
    Document,
    PluginNotFoundError,
    build_pipeline,
    dump_pipeline,
)
from ragloom.config import load_spec
from ragloom.plugins import Registry


class Fixed(Chunker):
    step_id = "tests/fixed"

    def __init__(self, size: int = 3, **kw: object) -> None:
        super().__init__(**kw)  # type: ignore[arg-type]
        self.size = size

    def config(self) -> dict[str, int]:
        return {"size": self.size}

    def split(self, document: Document) -> Iterable[ChunkSpan]:
        n = len(document.content)
        return [ChunkSpan(i, min(n, i + self.size)) for i in range(0, n, self.size)]


@pytest.fixture
def registry() -> Registry:
    reg = Registry(entry_points=False)
    reg.register("chunker", "fixed", Fixed, dist="tests")
    from ragloom.filters import ContentFormatFilter, MetadataFilter

    reg.register("filter", "content_format", ContentFormatFilter, dist="ragloom")
    reg.register("filter", "metadata", MetadataFilter, dist="ragloom")
    return reg


SPEC = {
    "name": "ingest",
    "policy": {"max_attempts": 2, "concurrency": 4},
    "steps": [
        {
            "routes": [
                {
                    "filter": {"content_format": {"include_formats": ["markdown"]}},
                    "step": {"chunker": "fixed", "params": {"size": 4}},
                },
                {
                    "filter": {
                        "all": [{"metadata": {"lang": "de"}}, {"not": {"metadata": {"x": 1}}}]
                    },
                    "step": {"chunker": "fixed", "params": {"size": 2}, "cache": False},
                },
            ],
            "default": {"chunker": "fixed", "policy": {"timeout": 5}},
        }
    ],
}


def test_builds_a_routed_pipeline_that_runs(registry: Registry) -> None:
    pipeline = build_pipeline(SPEC, registry=registry)
    (router,) = pipeline.steps()
    assert isinstance(router, ChunkerRouter)
    docs = [
        Document(id="m", content="abcdefgh", content_format="markdown"),
        Document(id="d", content="abcd", metadata={"lang": "de"}),
        Document(id="t", content="abcdef"),
    ]
    out = pipeline.run_sync(docs)
    assert [c.content for c in out] == ["abcd", "efgh", "ab", "cd", "abc", "def"]
    assert out.failed == []


@pytest.mark.parametrize("suffix", [".toml", ".yaml", ".json"])
def test_reads_toml_yaml_json(tmp_path: Path, registry: Registry, suffix: str) -> None:
    path = tmp_path / f"p{suffix}"
    if suffix == ".toml":
        path.write_text('[[steps]]\nchunker = "fixed"\nparams = { size = 5 }\n')
    elif suffix == ".yaml":
        path.write_text("steps:\n  - chunker: fixed\n    params: {size: 5}\n")
    else:
        path.write_text(json.dumps({"steps": [{"chunker": "fixed", "params": {"size": 5}}]}))
    spec = load_spec(path)
    assert spec.steps is not None and spec.steps[0].params == {"size": 5}
    pipeline = build_pipeline(path, registry=registry)
    assert [c.content for c in pipeline.run_sync([Document(id="a", content="0123456789")])] == [
        "01234",
        "56789",
    ]


def _error(spec: dict[str, object], registry: Registry) -> ConfigurationError:
    with pytest.raises(ConfigurationError) as info:
        build_pipeline(spec, registry=registry, source="pipe.toml")
    return info.value


def test_unknown_step_name_suggests_close_names(registry: Registry) -> None:
    err = _error({"steps": [{"chunker": "fixd"}]}, registry)
    assert isinstance(err, PluginNotFoundError)
    assert "pipe.toml: steps[0].chunker" in str(err)
    assert "did you mean 'fixed'" in str(err)


def test_bad_parameter_type_names_parameter_and_location(registry: Registry) -> None:
    err = _error({"steps": [{"chunker": "fixed", "params": {"size": "big"}}]}, registry)
    assert "pipe.toml: steps[0].params" in str(err)
    assert "'size'" in str(err) and "expected int" in str(err)


def test_unknown_parameter_lists_valid_ones(registry: Registry) -> None:
    err = _error({"steps": [{"chunker": "fixed", "params": {"sise": 3}}]}, registry)
    assert "steps[0]" in str(err) and "'sise'" in str(err) and "did you mean 'size'" in str(err)


def test_bad_filter(registry: Registry) -> None:
    spec = {"steps": [{"routes": [{"filter": {"content_fmt": {}}, "step": {"chunker": "fixed"}}]}]}
    err = _error(spec, registry)
    assert "steps[0].routes[0].filter.content_fmt" in str(err)
    assert "did you mean 'content_format'" in str(err)
    spec2 = {"steps": [{"routes": [{"filter": {"a": {}, "b": {}}, "step": {"chunker": "fixed"}}]}]}
    assert "exactly one key" in str(_error(spec2, registry))
    bad_params = {
        "steps": [
            {
                "routes": [
                    {"filter": {"content_format": {"formats": ["x"]}}, "step": {"chunker": "fixed"}}
                ]
            }
        ]
    }
    assert "'formats'" in str(_error(bad_params, registry))


def test_unknown_policy_field(registry: Registry) -> None:
    err = _error({"steps": [{"chunker": "fixed", "policy": {"retries": 3}}]}, registry)
    assert "pipe.toml: steps[0].policy.retries: unknown field 'retries'" in str(err)
    err = _error({"steps": [{"chunker": "fixed", "policy": {"retry_on": ["Nope"]}}]}, registry)
    assert "steps[0].policy.retry_on[0]" in str(err)


def test_arbitrary_import_path_refused_unless_opted_in(registry: Registry) -> None:
    spec = {"steps": [{"import": f"{Fixed.__module__}:Fixed", "params": {"size": 5}}]}
    err = _error(spec, registry)
    assert "steps[0].import" in str(err) and "refused" in str(err)
    pipeline = build_pipeline(spec, registry=registry, allow_imports=True)
    assert pipeline.run_sync([Document(id="a", content="0123456")])[0].content == "01234"


def test_spec_shape_errors_are_located(registry: Registry) -> None:
    err = _error({"steps": [{"chunker": "fixed", "step": "x"}]}, registry)
    assert "steps[0]" in str(err) and "exactly one of" in str(err)
    err = _error({"steps": [], "query": None}, registry)
    assert "'steps' must not be empty" in str(err)


def test_dump_round_trips(registry: Registry) -> None:
    pipeline = build_pipeline(SPEC, registry=registry)
    dumped = dump_pipeline(pipeline, registry=registry)
    again = dump_pipeline(build_pipeline(dumped, registry=registry), registry=registry)
    assert dumped == again
    assert dumped["policy"] == {"max_attempts": 2, "concurrency": 4}
    route1 = dumped["steps"][0]["routes"][1]
    assert route1["step"] == {"chunker": "fixed", "params": {"size": 2}, "cache": False}


def test_each_build_has_its_own_registry() -> None:
    a, b = Registry(entry_points=False), Registry(entry_points=False)
    a.register("chunker", "fixed", Fixed)
    assert a.names("chunker") == ["fixed"] and b.names("chunker") == []
