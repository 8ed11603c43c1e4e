"""Query-side kinds reach a search through the table of kinds: the stages they plug into, the
lists made from the table (hook docstring, pipeline files, settings, routes files, the command
line), the reranker's checks, and a toy query-side kind added as one row, with nothing else
edited, that pipeline files, settings and the command line then take."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from typing import Any

import anyio
import pytest
from ragloom.context import ExecutionContext
from ragloom.errors import ComponentTypeError, ConfigurationError
from ragloom.kinds import KINDS, QUERY_KINDS, Kind
from ragloom.multi_query import MultiQueryRoutingState, SubQueryRoute
from ragloom.multi_retrieval import FusedPassage, RetrievalResult, RetrieveStep
from ragloom.query_stages import SearchStage, stage_type
from ragloom.reranking import Reranker
from ragloom.retrieval import Retriever
from ragloom.stores import ScoredChunk


class _Chunk:
    def __init__(self, n: int, text: str) -> None:
        self.id, self.parent_id, self.start, self.end = f"c{n}", f"doc{n}", 0, len(text)
        self.content, self.metadata = text, {}


CHUNKS = [_Chunk(n, f"passage {n} about topic {n % 3}") for n in range(8)]


class Listed(Retriever):
    """The chunks, best first: from the fifth for the query "b", else from the first."""

    def retrieve(self, query: str, *, top_k: int | None = None,
                 where: Any = None) -> list[ScoredChunk]:
        chunks = CHUNKS[4:] if query == "b" else CHUNKS
        return [ScoredChunk(c, 1.0 / n) for n, c in enumerate(chunks, 1)][: top_k or 10]


class Reverse(Reranker):
    """The fused passages, last first; records how many it was given."""

    def __init__(self) -> None:
        self.given: list[int] = []

    def rerank(self, question: str, passages: list[FusedPassage],
               top_k: int) -> list[FusedPassage]:
        self.given.append(len(passages))
        return passages[::-1][:top_k]


class DropEven(SearchStage):
    """A search-stage component: drops the chunks of even number from every search."""

    def on_search(self, question: str, sub_query: str,
                  hits: list[ScoredChunk]) -> list[ScoredChunk]:
        return [h for h in hits if int(h.chunk.id[1:]) % 2]


def _retrieve(step: RetrieveStep, *asks: str) -> RetrievalResult:
    asks = asks or ("q?",)
    state = MultiQueryRoutingState(
        query=" and ".join(asks), sub_queries=list(asks),
        routing_plan=[SubQueryRoute(sub_query=ask, route="r") for ask in asks],
    )

    async def run() -> RetrievalResult:
        result: RetrievalResult = await step.transform(state, ExecutionContext())
        return result

    return anyio.run(run)


def test_the_hook_docstring_lists_every_kind_of_the_table() -> None:
    from ragloom.plugins.hookspecs import RagloomHookSpecs

    doc = " ".join((RagloomHookSpecs.ragloom_register.__doc__ or "").split())
    listed = re.search(r"table of kinds \(([^;)]*)", doc)
    assert listed is not None
    assert re.findall(r"``(\w+)``", listed.group(1)) == list(KINDS)


def test_every_query_side_kind_is_wired_from_its_row() -> None:
    from ragloom.cli._app import cli
    from ragloom.config._spec import RetrievalSpec
    from ragloom.searcher import ROUTES_KEYS, SearchSettings

    assert [row.name for row in QUERY_KINDS] == ["reranker"]
    commands = {name: cli.get_command(None, name) for name in ("search", "ask", "serve", "eval")}
    for row in QUERY_KINDS:
        assert row.setting and row.query_stage
        assert issubclass(row.base_type(), stage_type(row.query_stage))
        assert row.contract_type() is not None
        assert row.setting in RetrievalSpec.model_fields
        assert {row.setting, f"{row.setting}_options"} <= set(SearchSettings.model_fields)
        assert row.setting in ROUTES_KEYS
        flag = row.setting.replace("_", "-")
        for name, command in commands.items():
            opts = {o for p in command.params for o in getattr(p, "opts", ())}
            assert {f"--{flag}", f"--{flag}-option"} <= opts, name


def test_a_kind_row_names_both_its_stage_and_its_setting() -> None:
    with pytest.raises(ValueError, match="both query_stage and setting"):
        Kind("x", "ragloom.xs", "m:X", "x", query_stage="fused")
    with pytest.raises(ValueError, match="unknown query stage"):
        Kind("x", "ragloom.xs", "m:X", "x", query_stage="later", setting="x")  # type: ignore[arg-type]


def test_a_reranker_sees_every_fused_passage_and_chooses_the_top_k() -> None:
    reverse = Reverse()
    plain = _retrieve(RetrieveStep(Listed(), top_k=3, whole_weight=0), "a", "b")
    reranked = _retrieve(RetrieveStep(Listed(), top_k=3, whole_weight=0,
                                      components={"reranker": reverse}), "a", "b")
    assert [p.chunk_id for p in plain.passages] == ["c0", "c4", "c1"]
    # both asks' three passages, not the fused first three
    assert reverse.given == [6]
    assert [p.chunk_id for p in reranked.passages] == ["c6", "c2", "c5"]
    scores = [p.score for p in reranked.passages]
    assert scores == sorted(scores) and scores[0] < scores[-1]  # the fused scores, reversed


def test_both_stages_run_from_the_table_in_the_order_of_a_search(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from types import MappingProxyType

    import ragloom.kinds as kinds

    toy = Kind("drop_even", "ragloom.drop_evens", f"{DropEven.__module__}:DropEven", "toy",
               query_stage="search", setting="drop_even")
    monkeypatch.setattr(kinds, "KINDS", MappingProxyType({"drop_even": toy, **kinds.KINDS}))
    step = RetrieveStep(Listed(), top_k=3, whole_weight=0,
                        components={"reranker": Reverse(), "drop_even": DropEven()})
    # each search loses its even chunks before the fusion; the reranker sees what is left
    assert [p.chunk_id for p in _retrieve(step).passages] == ["c1"]
    step = RetrieveStep(Listed(), top_k=8, whole_weight=0,
                        components={"reranker": Reverse(), "drop_even": DropEven()})
    assert [p.chunk_id for p in _retrieve(step).passages] == ["c7", "c5", "c3", "c1"]


def test_components_are_checked_against_the_table() -> None:
    with pytest.raises(ConfigurationError, match="not a query-side kind .*reranker"):
        RetrieveStep(Listed(), components={"router": Reverse()})
    with pytest.raises(ComponentTypeError, match="reranker must be a Reranker, got DropEven"):
        RetrieveStep(Listed(), components={"reranker": DropEven()})


@pytest.mark.parametrize(
    ("broken", "message"),
    [
        (lambda ps, k: ps + ps, "twice"),
        (lambda ps, k: ps[:k] + [ps[0].model_copy(update={"chunk_id": "x"})], "not given"),
        (lambda ps, k: ps, "more than top_k=1"),
        (lambda ps, k: tuple(ps), "expected a list"),
    ],
)
def test_a_reranker_that_breaks_the_rules_fails_the_question(broken: Any, message: str) -> None:
    class Broken(Reranker):
        def rerank(self, question: str, passages: list[FusedPassage],
                   top_k: int) -> list[FusedPassage]:
            return broken(passages, top_k)  # type: ignore[no-any-return]

    with pytest.raises(ComponentTypeError, match=message):
        _retrieve(RetrieveStep(Listed(), top_k=1, whole_weight=0,
                               components={"reranker": Broken()}), "a", "b")


TOY = textwrap.dedent('''
    import json, sys
    from types import MappingProxyType
    import ragloom.kinds as kinds

    # The one row a new query-side kind adds (its module and contract aside).
    row = kinds.Kind(
        "hit_filter", "ragloom.hit_filters", "__main__:HitFilter", "drops hits of a search",
        query_stage="search", setting="hit_filter",
    )
    kinds.KINDS = MappingProxyType({**kinds.KINDS, row.name: row})
    kinds.QUERY_KINDS = (*kinds.QUERY_KINDS, row)
    kinds._BY_GROUP[row.group] = row

    from ragloom.query_stages import SearchStage

    class HitFilter(SearchStage):
        """The toy kind's base type (its module)."""

    class DropWord(HitFilter):
        def __init__(self, word: str = "x") -> None:
            self.word = word
        def config(self):
            return {"word": self.word}
        def on_search(self, question, sub_query, hits):
            return [h for h in hits if self.word not in h.chunk.content]

    from ragloom.cli import main
    from ragloom.config import build_pipeline, dump_pipeline
    from ragloom.models import Document
    from ragloom.query import WholeQuestion
    from ragloom.index_routes import WholeIndex
    from ragloom.retrieval import StoreRetriever
    from ragloom.searcher import ROUTES_KEYS, SearchSettings
    from ragloom.stores import ScoredChunk, Store, StoreInfo
    from ragloom.testing import isolated_registry

    class Memory(Store):
        def __init__(self, path: str = "m") -> None:
            self.path = path
        def config(self):
            return {"path": self.path}
        def write(self, documents): ...
        def delete(self, ids): return 0
        def fingerprints(self): return {}
        def info(self): return StoreInfo(self.path, 1, 3, None)
        def search(self, *, vector=None, text=None, top_k=10, where=None, mode=None):
            chunks = [Document(id=f"c{n}", content=w, parent_id="d", index=n)
                      for n, w in enumerate(["keep one", "drop two", "keep three"])]
            return [ScoredChunk(c, 1.0) for c in chunks][:top_k]

    registry = isolated_registry()
    registry.register("hit_filter", "drop-word", DropWord)
    registry.register("decomposer", "whole", WholeQuestion)
    registry.register("router", "all", WholeIndex)
    registry.register("store", "memory", Memory)
    registry.register("retriever", "store", StoreRetriever)
    spec = {
        "query": {"decomposer": "whole", "router": {"name": "all", "params": {"note": "n"}}},
        "retrieval": {"store": "memory",
                      "hit_filter": {"name": "drop-word", "params": {"word": "drop"}}},
    }
    pipeline = build_pipeline(spec, registry=registry)
    (result,) = pipeline.run_sync(["anything"])
    dumped = dump_pipeline(pipeline)
    again = dump_pipeline(build_pipeline(dumped, registry=registry))
    status = main(["search", "--help"])
    print(json.dumps({
        "passages": [p.content for p in result.passages],
        "dumped": dumped["retrieval"]["hit_filter"],
        "round_trip": again == dumped,
        "settings": [f for f in SearchSettings.model_fields if f.startswith("hit_filter")],
        "routes_key": "hit_filter" in ROUTES_KEYS,
    }))
''')


def test_a_new_query_side_kind_is_one_row_its_module_and_nothing_else() -> None:
    done = subprocess.run([sys.executable, "-c", TOY], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    *help_lines, last = done.stdout.strip().splitlines()
    import json

    report = json.loads(last)
    assert report["passages"] == ["keep one", "keep three"]
    assert report["dumped"] == {"name": "drop-word", "params": {"word": "drop"}}
    assert report["round_trip"] is True
    assert report["settings"] == ["hit_filter", "hit_filter_options"]
    assert report["routes_key"] is True
    shown = "\n".join(help_lines)
    assert "--hit-filter NAME" in shown and "--hit-filter-option KEY=VALUE" in shown


def test_the_plugin_guide_lists_every_kind_of_the_table() -> None:
    from support.doc_blocks import REPO

    page = (REPO / "docs" / "plugins" / "writing-a-plugin.md").read_text(encoding="utf-8")
    rows = dict(re.findall(r"^\| `(ragloom\.\w+)` \| `(\w+)` \|", page, flags=re.M))
    assert rows == {row.group: row.name for row in KINDS.values()}


def test_a_routes_file_names_a_reranker_by_name_or_table(tmp_path) -> None:
    from ragloom.searcher import load_routes, routes_components

    path = tmp_path / "routes.json"
    path.write_text('{"routes": [{"name": "a"}], "rerank": "mmr"}', encoding="utf-8")
    assert routes_components(str(path)) == {"reranker": ("mmr", {})}
    assert load_routes(str(path)) == {"routes": [{"name": "a"}]}  # the router's part only
    path.write_text('{"routes": [], "rerank": {"name": "mmr", "params": {"lambda_mult": 1}}}',
                    encoding="utf-8")
    assert routes_components(str(path)) == {"reranker": ("mmr", {"lambda_mult": 1})}
    for bad in ('3', '{"name": "mmr", "depth": 2}', '""'):
        path.write_text(f'{{"routes": [], "rerank": {bad}}}', encoding="utf-8")
        with pytest.raises(ConfigurationError, match="'rerank' names a registered reranker"):
            routes_components(str(path))


def test_the_kit_exports_every_contract_the_table_names() -> None:
    import ragloom.testing

    for row in KINDS.values():
        if row.contract is not None:
            name = row.contract.rsplit(":", 1)[1]
            assert getattr(ragloom.testing, name) is row.contract_type(), row.name
