"""ragloom-ray without a running Ray: the package, options, the cache rule, plugin checks,
filesystem inputs."""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import ragloom_ray
from ragloom.errors import ConfigurationError
from ragloom.ingest import walk_inputs
from ragloom.loading import LoadError
from ragloom.plugins import Registry
from ragloom_ray._cache import absolute_cache_paths, cache_files, check_cache_sharing
from ragloom_ray._fs import is_uri, read_uri_file, walk_uris
from ragloom_ray._requirements import MissingOnWorker, check_requirements, requirements

REPO = Path(__file__).resolve().parents[3]
SAMPLE = REPO / "examples" / "sample-docs"


def test_importing_the_package_imports_no_ray() -> None:
    code = (
        "import sys, ragloom_ray; "
        "print(sorted(m for m in ('ray', 'pyarrow', 'pydantic') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_engine_is_registered_and_builds_without_ray() -> None:
    code = (
        "import sys; from ragloom.plugins import Registry; r = Registry(); "
        "e = r.create('engine', 'ray'); print(type(e).__name__, 'ray' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["RayEngine", "False"]
    assert "ray" in Registry().names("engine")
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        ragloom_ray.nope  # noqa: B018
    assert set(ragloom_ray.__all__) == {
        "PipelineRun", "RayEngine", "RaySettings", "documents_dataset", "run_pipeline",
    }


def test_options_are_parsed_and_checked() -> None:
    settings = ragloom_ray.RaySettings.parse({
        "address": "ray://head:10001", "workers": "4", "batch_size": "8",
        "cpus_per_worker": "0.5", "task_retries": "0", "runtime_env": '{"pip": ["x"]}',
    })
    assert settings.address == "ray://head:10001"
    assert (settings.workers, settings.batch_size, settings.task_retries) == (4, 8, 0)
    assert settings.cpus_per_worker == 0.5
    assert settings.runtime_env == {"pip": ["x"]}
    bad = {
        "nope": ("1", "unknown ray engine option 'nope'; valid options: address, batch_size"),
        "workers": ("0", "workers must be an integer >= 1, got '0'"),
        "batch_size": ("many", "batch_size must be an integer >= 1, got 'many'"),
        "task_retries": ("-1", "task_retries must be an integer >= 0"),
        "cpus_per_worker": ("nan", "cpus_per_worker must be a number > 0"),
        "runtime_env": ("[1]", "runtime_env must be a JSON object"),
    }
    for key, (value, message) in bad.items():
        with pytest.raises(ConfigurationError, match=message.replace("(", r"\(")):
            ragloom_ray.RaySettings.parse({key: value})
    engine = ragloom_ray.RayEngine(workers=3)
    assert engine.config()["workers"] == 3


# -- the cache rule ------------------------------------------------------------------------------


def _node(address: str, alive: bool = True) -> dict[str, object]:
    return {"NodeID": address * 4, "Alive": alive, "NodeManagerAddress": address}


def test_one_node_shares_the_cache_file() -> None:
    check_cache_sharing(["/data/cache.sqlite"], [_node("10.0.0.1")])
    check_cache_sharing(["/data/cache.sqlite"], [_node("10.0.0.1"), _node("10.0.0.2", False)])
    check_cache_sharing([], [_node("10.0.0.1"), _node("10.0.0.2")])


def test_several_nodes_refuse_a_cache_file_with_a_clear_message() -> None:
    with pytest.raises(ConfigurationError) as caught:
        check_cache_sharing(["/data/cache.sqlite"], [_node("10.0.0.2"), _node("10.0.0.1")])
    message = str(caught.value)
    assert "the cache file /data/cache.sqlite cannot be shared by the 2 nodes" in message
    assert "(10.0.0.1, 10.0.0.2)" in message
    assert "--no-cache" in message


def test_cache_paths_of_a_spec_are_found_and_made_absolute(tmp_path: Path) -> None:
    spec = {
        "steps": [
            {"routes": [{"filter": {"content_format": {"include_formats": ["markdown"]}},
                         "step": {"chunker": "markdown", "cache": {"path": "md.sqlite"}}}],
             "default": {"chunker": "recursive"}},
        ],
        "cache": {"store": "sqlite", "path": "main.sqlite"},
    }
    absolute_cache_paths(spec, str(tmp_path))
    assert spec["cache"]["path"] == str(tmp_path / "main.sqlite")
    route_cache = spec["steps"][0]["routes"][0]["step"]["cache"]
    assert route_cache["path"] == str(tmp_path / "md.sqlite")
    found = cache_files(spec, ["/x/extra.sqlite", "/x/extra.sqlite"])
    assert sorted(found) == sorted([
        "/x/extra.sqlite", str(tmp_path / "md.sqlite"), str(tmp_path / "main.sqlite"),
    ])
    assert cache_files(None) == []


# -- plugins on the workers ----------------------------------------------------------------------


def test_requirements_name_every_distribution_the_pipeline_needs() -> None:
    spec = {
        "steps": [
            {"routes": [{"filter": {"content_format": {"include_formats": ["docling"]}},
                         "step": {"chunker": "ragloom-docling:docling"}}],
             "default": {"chunker": "ragloom-text:auto"}},
            {"embedder": "model2vec"},
        ],
        "cache": {"store": "sqlite", "path": "/c.sqlite"},
    }
    needed = requirements(spec, Registry(), loaders=False)
    version = importlib.metadata.version
    assert needed == {
        "ragloom": version("ragloom"),
        "ragloom-docling": version("ragloom-docling"),
        "ragloom-semantic": version("ragloom-semantic"),
        "ragloom-text": version("ragloom-text"),
    }
    with_loaders = requirements({"steps": [{"chunker": "recursive"}]}, Registry())
    assert with_loaders["ragloom-loaders"] == version("ragloom-loaders")


def test_a_worker_without_a_plugin_refuses_naming_the_distribution() -> None:
    needed = {"ragloom": importlib.metadata.version("ragloom"), "ragloom-text": "0.1.0"}
    with pytest.raises(MissingOnWorker) as caught:
        check_requirements(needed, disabled=frozenset({"ragloom-text"}), where="node n1")
    message = str(caught.value)
    assert message.startswith("ragloom-ray: node n1 cannot build the pipeline: ")
    assert "ragloom-text 0.1.0 is disabled there by RAGLOOM_DISABLE_PLUGINS" in message
    assert "ragloom-text==0.1.0" in message
    with pytest.raises(MissingOnWorker, match="ragloom-nowhere 2.0 is not installed there"):
        check_requirements({"ragloom-nowhere": "2.0"}, where="node n1")
    with pytest.raises(MissingOnWorker, match="ragloom-text is .* there but 99.0 on the driver"):
        check_requirements({"ragloom-text": "99.0"}, where="node n1")
    with pytest.raises(MissingOnWorker, match="not in the plugin allowlist"):
        check_requirements({"ragloom-text": "0.1.0"}, allowed=frozenset(), where="node n1")
    check_requirements({"ragloom-text": importlib.metadata.version("ragloom-text")})


# -- inputs on a pyarrow filesystem --------------------------------------------------------------


def test_uris_are_walked_like_local_folders(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.md").write_text("# B\n")
    (tmp_path / "a.txt").write_text("a\n")
    (tmp_path / ".hidden").write_text("no\n")
    (tmp_path / "sub" / ".git").mkdir()
    (tmp_path / "sub" / ".git" / "x").write_text("no\n")
    assert is_uri(f"file://{tmp_path}") and not is_uri(str(tmp_path))
    walked = walk_uris([f"file://{tmp_path}"])
    local = walk_inputs([str(tmp_path)])
    assert [f.doc_id for f in walked.files] == [f.doc_id for f in local.files] == [
        "a.txt", "sub/b.md",
    ]
    source = read_uri_file(walked.files[1].path, doc_id="sub/b.md", max_bytes=100)
    assert (source.data, source.doc_id, source.metadata["size"]) == (b"# B\n", "sub/b.md", 4)
    with pytest.raises(LoadError, match="file too large: 4 bytes, limit 3"):
        read_uri_file(walked.files[1].path, doc_id="sub/b.md", max_bytes=3)
    with pytest.raises(LoadError, match="no such file"):
        read_uri_file(f"file://{tmp_path}/gone.md", doc_id="gone.md", max_bytes=3)
    with pytest.raises(ConfigurationError, match="no such file or folder"):
        walk_uris([f"file://{tmp_path}/gone"])


def test_uris_get_the_collections_local_paths_get(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    (docs / "guide" / "deep").mkdir(parents=True)
    (docs / "guide" / "deep" / "c.md").write_text("# C\n")
    (docs / "api").mkdir()
    (docs / "api" / "b.md").write_text("# B\n")
    (docs / "a.txt").write_text("a\n")

    def collections(walked: Any) -> list[tuple[str, str | None]]:
        return [(f.doc_id, f.collection) for f in walked.files]

    want = [("a.txt", "docs"), ("api/b.md", "api"), ("guide/deep/c.md", "guide")]
    assert collections(walk_uris([f"file://{docs}"])) == want
    assert collections(walk_inputs([str(docs)])) == want
    # a file given itself belongs to its folder's name; one name for the run overrides all
    assert collections(walk_uris([f"file://{docs}/api/b.md"])) == [("b.md", "api")]
    assert collections(walk_uris([f"file://{docs}"], collection="manual")) == [
        (d, "manual") for d, _ in want
    ]


def test_a_worker_hands_back_what_the_local_engine_yields_for_its_batch(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A worker (called without Ray, as its actor is) runs the core's local engine over a batch
    of documents: the outputs (bare) in input order, each failed item, then the batch's
    counts."""
    from ragloom.engines import BatchStats
    from ragloom.events import ItemFailed
    from ragloom.models import Document
    from ragloom_ray._worker import IngestWorker, WorkerConfig

    monkeypatch.syspath_prepend(str(Path(__file__).parent / "steps"))
    worker = IngestWorker(WorkerConfig(
        spec={"steps": [
            {"chunker": "recursive", "params": {"chunk_size": 300}},
            {"import": "ragloom_ray_test_steps:FailOn", "params": {"marker": "FAIL-THIS"}},
        ]},
        requirements={},
    ))
    events = worker.process([
        Document(
            id="a.md", content="# A\n\nSome text about alpha.\n", metadata={"collection": "guide"}
        ),
        Document(id="b.md", content="Text that says FAIL-THIS.\n"),
        Document(id="c.md", content="Some text about gamma.\n"),
    ])
    outputs = [e for e in events if not isinstance(e, ItemFailed | BatchStats)]
    assert [(c.parent_id, c.metadata.get("collection")) for c in outputs] == [
        ("a.md", "guide"), ("c.md", None),
    ]
    failed = [e for e in events if isinstance(e, ItemFailed)]
    assert [(e.item_id, e.step, e.exception) for e in failed] == [("b.md#0", "FailOn", None)]
    assert isinstance(events[-1], BatchStats) and not events[-1].no_chunks


def test_a_worker_with_the_index_writer_writes_its_batch_and_hands_back_counts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Given the index's part writer, a worker writes the outputs of every document without a
    failed item as one part and hands back an ``Indexed`` in their place; a failed
    document's outputs come back as they are (the driver drops them, as a local run does)."""
    from ragloom.engines import BatchStats, Indexed, IndexPart
    from ragloom.events import ItemFailed
    from ragloom.models import Document
    from ragloom.stores import StorePart
    from ragloom_ray._worker import IngestWorker, WorkerConfig

    class Recording:
        machine_local = True

        def __init__(self) -> None:
            self.written: list[list[tuple[str, list[Any]]]] = []

        def write(self, documents: list[tuple[str, list[Any]]]) -> StorePart:
            self.written.append(documents)
            return StorePart(tuple((d, len(c)) for d, c in documents), "fragments")

    monkeypatch.syspath_prepend(str(Path(__file__).parent / "steps"))
    writer = Recording()
    worker = IngestWorker(WorkerConfig(
        spec={"steps": [
            {"chunker": "recursive", "params": {"chunk_size": 100}},
            {"import": "ragloom_ray_test_steps:FailOn", "params": {"marker": "FAIL-THIS"}},
        ]},
        requirements={}, index_writer=writer,
    ))
    events = worker.process([
        Document(id="a.md", content="Alpha. " * 30),
        Document(id="b.md", content="Beta. " * 15 + "\n\nThis one says FAIL-THIS.\n"),
        Document(id="c.md", content="Gamma.\n"),
    ])
    (part,) = writer.written
    assert [(d, len(chunks)) for d, chunks in part] == [("a.md", 3), ("c.md", 1)]
    shown = [
        (type(e).__name__, getattr(e, "document_id", None) or getattr(e, "id", None)
         or getattr(e, "item_id", None))
        for e in events
    ]
    # (a failure comes no later than the outputs after it: here, first)
    assert [s for s in shown if s[0] != "ItemFailed"] == [
        ("Indexed", "a.md"), ("Document", "b.md#0"), ("Indexed", "c.md"), ("IndexPart", None),
        ("BatchStats", None),
    ]
    assert [e.item_id for e in events if isinstance(e, ItemFailed)] == ["b.md#1"]
    assert [e.count for e in events if isinstance(e, Indexed)] == [3, 1]
    assert [e.part.data for e in events if isinstance(e, IndexPart)] == ["fragments"]
    assert isinstance(events[-1], BatchStats)


def test_the_workers_write_an_index_folder_only_on_one_node() -> None:
    from ragloom_ray._engine import reachable_writer

    class Writer:
        def __init__(self, machine_local: bool) -> None:
            self.machine_local = machine_local

    here, anywhere = Writer(True), Writer(False)
    one = [_node("10.0.0.1"), _node("10.0.0.2", False)]
    two = [_node("10.0.0.1"), _node("10.0.0.2")]
    assert reachable_writer(here, one) is here
    assert reachable_writer(here, two) is None  # the driver writes the parts itself
    assert reachable_writer(anywhere, two) is anywhere
    assert reachable_writer(None, one) is None


def test_a_small_job_on_a_ray_it_would_start_is_told_the_local_engine_is_faster(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ragloom.ingest import walk_inputs as walk
    from ragloom_ray._engine import SMALL_JOB_BYTES, RaySettings, _advice

    (tmp_path / "a.txt").write_text("a" * 1000)
    files = walk([str(tmp_path)]).files
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    note = _advice(files, RaySettings(), running=False)
    assert note is not None and "1 file(s), 0.0 MB" in note and "local engine" in note
    assert _advice(files, RaySettings(address="auto"), running=False) is None  # a cluster
    monkeypatch.setenv("RAY_ADDRESS", "head:6379")
    assert _advice(files, RaySettings(), running=False) is None
    monkeypatch.delenv("RAY_ADDRESS")
    with open(tmp_path / "big.bin", "wb") as handle:  # sparse: no disk written
        handle.truncate(SMALL_JOB_BYTES)
    assert _advice(walk([str(tmp_path)]).files, RaySettings(), running=False) is None
    assert _advice(files, RaySettings(), running=True) is None  # a Ray already up
