"""What decomposition is worth, and what a search costs: ``MultiQueryRetrievalPipeline`` measured.

    pip install -e "core[cli]" -e plugins/text -e plugins/rules -e plugins/semantic \\
        -e plugins/lancedb llama-index-core
    python benchmarks/bench_search.py [--part eval latency] [--repeat 3] [--chunks 100000]

**(a) Evaluation.** The corpus is Python's own documentation as the running interpreter ships
it: ``pydoc_data.topics`` (the Language Reference and library pages ``help()`` shows: 79 topics
such as ``with``, ``formatstrings``, ``typesmapping``), one document per topic, cut by
ragloom-text's recursive splitter (800 characters), embedded by the bundled model2vec model and
written to a LanceDB index in a temporary folder. Nothing else is needed: the recipe is the
stdlib, and the run prints the Python version, the topic count and a digest of the text.
The questions below (written for this benchmark) are compound (2-3 facets, each facet answered
by a different topic) or simple (one facet); each facet lists the topics that answer it (the
topic itself and the topics that contain the same section, such as ``compound`` for every
compound statement). A facet is *recalled at k* when one of its topics is among the documents
of the first k passages; recall@k is the share of facets recalled.

Compared, with the same index, chunks and embedding model:

- *whole question*: the question as one query to the retriever (top k);
- *decomposed + fused*: ``MultiQueryRetrievalPipeline`` with ragloom-rules' heuristic
  decomposer and a keyword router over routes written for this corpus (no route filters, so
  only decomposition and fusion differ), top k per sub-query and fused (RRF, k = 60);
- LlamaIndex ``QueryFusionRetriever(mode="reciprocal_rerank")`` fed the *same sub-queries*
  (its query generation replaced by ours, no LLM), over a ``VectorStoreIndex`` of the same
  chunks with the same vectors, the query embedded by the same model wrapped as a LlamaIndex
  ``BaseEmbedding``. It searches by vector only, so it is compared with our vector mode.
  Latency per question: ours end to end (decompose + route + embed + search + fuse), LlamaIndex
  from the sub-queries on (embed + search + fuse), best configuration of ``use_async``.

**(b) Latency.** A 3-facet question against an index of ``--chunks`` chunks of real text
(``tests/support/corpus.py``: the descriptions and documentation of the installed Python
distributions and the stdlib sources, cut at 512 characters, each chunk embedded by the bundled
model), built once into ``--workdir`` and reused. p50/p95 of ``search()`` end to end
(decompose + route + embed the sub-queries + search each + fuse), by mode, and the time of the
parts (one sub-query's embedding, one search of each kind). Times are wall-clock on a shared
2-core machine: each measurement is repeated ``--repeat`` times and the median of the medians
is reported, with the best.
"""

from __future__ import annotations

import argparse
import hashlib
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from importlib.metadata import version
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

# -- the labelled set -------------------------------------------------------------------------

#: facet -> the topics of ``pydoc_data.topics`` that answer it.
FACETS: dict[str, set[str]] = {
    "with": {"with", "compound", "context-managers"},
    "yield": {"yield"},
    "global": {"global"},
    "nonlocal": {"nonlocal"},
    "floats": {"floating", "numbers"},
    "for_else": {"for", "compound"},
    "async": {"async", "compound", "await"},
    "slicing": {"slicings", "typesseq"},
    "identity": {"comparisons"},
    "power": {"power", "operator-summary"},
    "format": {"formatstrings"},
    "dict_display": {"dict"},
    "raise_from": {"raise", "exceptions"},
    "binding": {"naming", "execmodel"},
    "getattr": {"attribute-access", "specialnames"},
    "del": {"del"},
    "lambda": {"lambda"},
    "pass": {"pass"},
    "assert": {"assert"},
    "while": {"while", "compound"},
    "integers": {"integers", "numbers"},
    "imaginary": {"imaginary", "numbers"},
    "numeric_emul": {"numeric-types", "specialnames"},
    "container_emul": {"sequence-types", "specialnames"},
    "try": {"try", "compound", "exceptions"},
    "import": {"import"},
    "class": {"class", "compound"},
    "function_defaults": {"function", "compound"},
    "decorators": {"function", "class", "compound"},
    "bitwise": {"bitwise", "operator-summary", "unary"},
    "shifting": {"shifting", "operator-summary"},
    "membership": {"in", "comparisons"},
    "booleans": {"booleans"},
    "truth": {"truth"},
    "augassign": {"augassign", "assignment"},
    "unpacking": {"assignment"},
    "string_literals": {"strings"},
    "string_methods": {"string-methods"},
    "dict_methods": {"typesmapping"},
    "list_methods": {"typesseq-mutable"},
    "range": {"typesseq"},
    "pdb": {"debugger"},
    "new_init": {"customization", "specialnames"},
    "call": {"callable-types", "specialnames"},
    "slots": {"attribute-access", "specialnames"},
    "descriptors": {"attribute-access", "specialnames"},
    "break": {"break"},
    "continue": {"continue"},
    "return": {"return"},
    "precedence": {"operator-summary"},
    "calls": {"calls"},
    "subscriptions": {"subscriptions"},
    "code_objects": {"bltin-code-objects", "types"},
    "none": {"bltin-null-object"},
    "ellipsis": {"bltin-ellipsis-object"},
    "keywords": {"identifiers"},
    "reserved_names": {"id-classes"},
    "modules": {"typesmodules"},
    "methods": {"typesmethods", "types"},
    "specialattrs": {"specialattrs"},
    "objects": {"objects"},
    "conversions": {"conversions"},
    "floor_division": {"binary"},
    "unary": {"unary"},
    "list_display": {"lists"},
    "starred": {"exprlists"},
    "dynamic": {"dynamic-features", "execmodel"},
    "if": {"if", "else", "compound"},
    "await": {"await", "async"},
}

#: (question, its facets): facets answered by different topics.
COMPOUND: list[tuple[str, list[str]]] = [
    ("How does the with statement work and what does the yield statement do?",
     ["with", "yield"]),
    ("What does the global statement do and what does the nonlocal statement do?",
     ["global", "nonlocal"]),
    ("How are floating point literals written and when is the else clause of a for loop "
     "executed?", ["floats", "for_else"]),
    ("How do I define a coroutine with async def and how does slicing work?",
     ["async", "slicing"]),
    ("What is the difference between is and == and how does the power operator bind?",
     ["identity", "power"]),
    ("What is the syntax of format string fields and how are dictionary displays written?",
     ["format", "dict_display"]),
    ("How does raise from chain exceptions and what are the rules for binding names?",
     ["raise_from", "binding"]),
    ("How do I customize attribute access with __getattr__ and what does the del statement "
     "do?", ["getattr", "del"]),
    ("How are lambda expressions written and what does the pass statement do?",
     ["lambda", "pass"]),
    ("When is an assert statement removed and how does a while loop with an else clause "
     "work?", ["assert", "while"]),
    ("How are integer literals written and how are imaginary literals written?",
     ["integers", "imaginary"]),
    ("Which methods emulate numeric types and which methods emulate container types?",
     ["numeric_emul", "container_emul"]),
    ("How does a finally clause run in a try statement and how does the import statement "
     "find modules?", ["try", "import"]),
    ("How is a class definition executed and how are default parameter values evaluated?",
     ["class", "function_defaults"]),
    ("What do the bitwise operators do and how do shifting operations work?",
     ["bitwise", "shifting"]),
    ("How do the in and not in operators test membership and how do the boolean operators "
     "and and or evaluate?", ["membership", "booleans"]),
    ("Which values are considered false in truth value testing and how does augmented "
     "assignment work?", ["truth", "augassign"]),
    ("How are string literals and raw strings written? Which string methods split and join "
     "text?", ["string_literals", "string_methods"]),
    ("What does dict.setdefault do and how does list.sort sort in place?",
     ["dict_methods", "list_methods"]),
    ("How does the range type work and how do I set a breakpoint in pdb?",
     ["range", "pdb"]),
    ("When is __new__ called instead of __init__ and how do I make instances callable with "
     "__call__?", ["new_init", "call"]),
    ("What does __slots__ do and what does the break statement do?", ["slots", "break"]),
    ("How does the continue statement work and what does a return statement in a generator "
     "do?", ["continue", "return"]),
    ("What is the precedence of Python operators and how are keyword arguments matched in a "
     "call?", ["precedence", "calls"]),
    ("How does subscription select an item and what are code objects?",
     ["subscriptions", "code_objects"]),
    ("What is the None object and what is the Ellipsis object used for?",
     ["none", "ellipsis"]),
    ("Which identifiers are keywords and what do names with leading underscores mean?",
     ["keywords", "reserved_names"]),
    ("What special operations do modules support and how do bound methods work?",
     ["modules", "methods"]),
    ("Which special attributes like __class__ exist and what are the identity, type and "
     "value of an object?", ["specialattrs", "objects"]),
    ("How are arithmetic conversions done and how does floor division with // work?",
     ["conversions", "floor_division"]),
    ("How does unary minus work and how is a list display evaluated?",
     ["unary", "list_display"]),
    ("How does starred unpacking work in expression lists and how do exec and eval resolve "
     "free variables?", ["starred", "dynamic"]),
    ("How does an if statement with elif work and what does an await expression do?",
     ["if", "await"]),
    ("How do descriptors with __get__ work and how does tuple unpacking in assignment work?",
     ["descriptors", "unpacking"]),
    ("What does the global statement do? How are complex numbers written with j? What does "
     "the pass statement do?", ["global", "imaginary", "pass"]),
    ("How does the with statement call __enter__ and __exit__? How are format specifications "
     "written? What does dict.get return for a missing key?",
     ["with", "format", "dict_methods"]),
    ("How does a lambda capture variables, how does the shift operator work, and what does "
     "the nonlocal statement do?", ["lambda", "shifting", "nonlocal"]),
    ("When does a while loop run its else clause? What does list.append do? How do I step "
     "through code in the debugger?", ["while", "list_methods", "pdb"]),
    ("How does raise work without an expression and how does the assert statement work and "
     "what does the del statement do?", ["raise_from", "assert", "del"]),
    ("Which methods implement operator overloading for addition? How do I slice a sequence "
     "with a step? What is the None object?", ["numeric_emul", "slicing", "none"]),
    ("How are decorators applied to a function and what does the import statement do with "
     "from and as?", ["decorators", "import"]),
    ("What does the yield statement do and how do coroutines suspend with await?",
     ["yield", "await"]),
    ("How does the continue statement behave in a loop and how do bitwise and, or and xor "
     "work?", ["continue", "bitwise"]),
    ("How do I define __getattr__ for missing attributes and how do integer literals with "
     "underscores work?", ["getattr", "integers"]),
]

#: (question, its facet).
SIMPLE: list[tuple[str, str]] = [
    ("How does the with statement use a context manager?", "with"),
    ("What does the global statement do?", "global"),
    ("How are floating point literals written?", "floats"),
    ("How does slicing with a step work?", "slicing"),
    ("How is the power operator evaluated?", "power"),
    ("What is the syntax of a format specification?", "format"),
    ("How does raise from set the cause of an exception?", "raise_from"),
    ("How do I customize attribute access with __getattr__?", "getattr"),
    ("What does a lambda expression create?", "lambda"),
    ("When are assert statements removed?", "assert"),
    ("Which methods emulate container types?", "container_emul"),
    ("How does a try statement with finally work?", "try"),
    ("How does the import statement find and load a module?", "import"),
    ("How do the bitwise operators work?", "bitwise"),
    ("Which values are false in truth value testing?", "truth"),
    ("Which string methods split text?", "string_methods"),
    ("What does dict.setdefault do?", "dict_methods"),
    ("How do I set a breakpoint in pdb?", "pdb"),
    ("When is __new__ called?", "new_init"),
    ("What is the precedence of the operators?", "precedence"),
    ("What is the Ellipsis object?", "ellipsis"),
    ("Which identifiers are reserved keywords?", "keywords"),
    ("What special attributes do objects have?", "specialattrs"),
    ("How does an await expression work?", "await"),
]

#: A keyword router over this corpus (no route filters: only decomposition and fusion count).
ROUTES: dict[str, Any] = {
    "default_route": "general",
    "routes": [
        {"name": "statements", "keywords": [
            "statement", "with", "for", "while", "try", "finally", "raise", "import", "global",
            "nonlocal", "del", "pass", "assert", "break", "continue", "return", "if", "elif",
            "loop", "class definition", "decorator",
        ]},
        {"name": "expressions", "keywords": [
            "operator", "literal", "lambda", "slice", "slicing", "comparison", "precedence",
            "await", "yield", "display", "call", "subscription", "unpacking", "expression",
        ]},
        {"name": "data_model", "keywords": [
            "__getattr__", "__new__", "__init__", "__call__", "__slots__", "__get__",
            "__enter__", "__exit__", "method", "emulate", "attribute", "descriptor",
            "special attribute",
        ]},
        {"name": "builtin_types", "keywords": [
            "string method", "dict", "list", "range", "tuple", "sequence", "None", "Ellipsis",
            "module", "code object",
        ]},
        {"name": "debugging", "keywords": ["pdb", "debugger", "breakpoint", "step"]},
        {"name": "general"},
    ],
}


def check_labels() -> None:
    import pydoc_data.topics as topics

    for facet, docs in FACETS.items():
        unknown = docs - set(topics.topics)
        assert not unknown, f"facet {facet}: no topics {unknown}"
    for question, facets in COMPOUND:
        assert 2 <= len(facets) <= 3 and all(f in FACETS for f in facets), question
        primaries = [FACETS[f] for f in facets]
        for i, a in enumerate(primaries):
            for b in primaries[i + 1 :]:
                assert a != b, f"{question}: two facets with the same topics"
    assert all(f in FACETS for _, f in SIMPLE)
    assert len(COMPOUND) >= 40 and len(SIMPLE) >= 20


# -- the corpus and the index -----------------------------------------------------------------


def python_docs() -> tuple[dict[str, str], str]:
    """``pydoc_data.topics`` by topic, and a digest of the whole text."""
    import pydoc_data.topics as topics

    docs = dict(sorted(topics.topics.items()))
    digest = hashlib.sha256("".join(f"{k}\0{v}\0" for k, v in docs.items()).encode()).hexdigest()
    return docs, digest[:16]


def chunk_and_embed(docs: dict[str, str], embedder: Any, chunk_size: int) -> list[Any]:
    from ragloom.models import Document
    from ragloom.stores import IndexedDocument
    from ragloom_text import RecursiveCharacterTextSplitter

    splitter = RecursiveCharacterTextSplitter(chunk_size=chunk_size)
    out = []
    for doc_id, text in docs.items():
        chunks = splitter.chunk(Document(id=doc_id, content=text, metadata={"topic": doc_id}))
        vectors = embedder.embed([c.content for c in chunks])
        chunks = [
            c.model_copy(update={"embedding": v.tolist()})
            for c, v in zip(chunks, vectors, strict=True)
        ]
        out.append(IndexedDocument(doc_id, hashlib.sha256(text.encode()).hexdigest(), chunks))
    return out


# -- measuring --------------------------------------------------------------------------------


def recall(found_docs: Sequence[Sequence[str]], facets: Sequence[Sequence[str]], k: int) -> float:
    hit = total = 0
    for docs, question_facets in zip(found_docs, facets, strict=True):
        top = set(docs[:k])
        for facet in question_facets:
            total += 1
            hit += bool(FACETS[facet] & top)
    return hit / total


def median_ms(fn: Callable[[], Any], count: int) -> list[float]:
    times = []
    for _ in range(count):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return times


class LlamaFusion:
    """LlamaIndex's ``QueryFusionRetriever`` (reciprocal rerank) fed our sub-queries."""

    def __init__(self, documents: list[Any], embedder: Any, top_k: int, use_async: bool) -> None:
        from llama_index.core import VectorStoreIndex
        from llama_index.core.base.embeddings.base import BaseEmbedding
        from llama_index.core.llms import MockLLM
        from llama_index.core.retrievers import QueryFusionRetriever
        from llama_index.core.schema import QueryBundle, TextNode

        class Model2Vec(BaseEmbedding):
            """The bundled model2vec model as a LlamaIndex embedding."""

            def _get_query_embedding(self, query: str) -> list[float]:
                return embedder.embed_query(query)

            async def _aget_query_embedding(self, query: str) -> list[float]:
                return embedder.embed_query(query)

            def _get_text_embedding(self, text: str) -> list[float]:
                return embedder.embed([text])[0].tolist()

            def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
                return embedder.embed(texts).tolist()

        nodes = [
            TextNode(id_=c.id, text=c.content, embedding=list(c.embedding),
                     metadata={"document": d.document_id})
            for d in documents for c in d.chunks
        ]
        index = VectorStoreIndex(nodes, embed_model=Model2Vec(model_name="m2v-minilm-256"))
        retriever = index.as_retriever(similarity_top_k=top_k)

        class Fed(QueryFusionRetriever):
            pending: list[str] = []

            def _get_queries(self, original_query: str) -> list[QueryBundle]:
                return [QueryBundle(q) for q in self.pending]

            async def _aget_queries(self, original_query: str) -> list[QueryBundle]:
                return self._get_queries(original_query)

        self.fusion = Fed(
            [retriever], llm=MockLLM(), mode="reciprocal_rerank", similarity_top_k=top_k,
            num_queries=2, use_async=use_async,
        )
        self._bundle = QueryBundle

    def search(self, sub_queries: list[str]) -> list[str]:
        """Document ids of the fused passages, best first."""
        first, rest = sub_queries[0], sub_queries[1:]
        self.fusion.pending = rest
        self.fusion.num_queries = 1 + len(rest)
        return [n.node.metadata["document"] for n in self.fusion.retrieve(first)]


def evaluation(repeat: int) -> None:
    from ragloom.multi_retrieval import MultiQueryRetrievalPipeline
    from ragloom.retrieval import StoreRetriever
    from ragloom_lancedb import LanceDBStore
    from ragloom_rules import HeuristicDecomposer, KeywordRouter
    from ragloom_semantic import Model2VecEmbedder

    check_labels()
    docs, digest = python_docs()
    embedder = Model2VecEmbedder()
    indexed = chunk_and_embed(docs, embedder, chunk_size=800)
    chunks = sum(len(d.chunks) for d in indexed)
    print(f"corpus: pydoc_data.topics of Python {platform.python_version()}: {len(docs)} "
          f"topics, {sum(map(len, docs.values())):,} characters (sha256 {digest}), "
          f"{chunks} chunks of <= 800 characters")
    print(f"questions: {len(COMPOUND)} compound "
          f"({sum(len(f) for _, f in COMPOUND)} facets), {len(SIMPLE)} simple")
    tmp = Path(tempfile.mkdtemp(prefix="bench-search-eval-"))
    store = LanceDBStore(tmp / "index")
    store.write(indexed)
    store.optimize()
    router = KeywordRouter(ROUTES["routes"], default_route=ROUTES["default_route"])
    decomposer = HeuristicDecomposer()
    k_max = 10

    sets = {
        "compound": ([q for q, _ in COMPOUND], [f for _, f in COMPOUND]),
        "simple": ([q for q, _ in SIMPLE], [[f] for _, f in SIMPLE]),
    }
    rows: list[tuple[str, str, float, float]] = []
    plans: dict[str, list[str]] = {}
    for mode in ("hybrid", "vector"):
        retriever = StoreRetriever(store, embedder, mode=mode, top_k=k_max)
        block = MultiQueryRetrievalPipeline(decomposer, router, retriever, top_k=k_max)
        for name, (questions, facets) in sets.items():
            whole = [[h.chunk.parent_id for h in retriever.retrieve(q)] for q in questions]
            results = [block.search_sync(q) for q in questions]
            fused = [[p.document_id or "" for p in r.passages] for r in results]
            for r in results:
                plans[r.query] = r.sub_queries
            rows.append((f"{name}: whole question as one query", mode,
                         recall(whole, facets, 5), recall(whole, facets, 10)))
            rows.append((f"{name}: decomposed + fused", mode,
                         recall(fused, facets, 5), recall(fused, facets, 10)))
    split = sum(len(plans[q]) > 1 for q, _ in COMPOUND)
    print(f"decomposer: {split}/{len(COMPOUND)} compound questions split, "
          f"{sum(len(plans[q]) > 1 for q, _ in SIMPLE)}/{len(SIMPLE)} simple ones split")

    peer: dict[str, Any] = {}
    try:
        for use_async in (False, True):
            llama = LlamaFusion(indexed, embedder, k_max, use_async)
            for name, (questions, facets) in sets.items():
                found = [llama.search(plans[q]) for q in questions]
                peer[(name, use_async)] = (recall(found, facets, 5), recall(found, facets, 10))
            peer[("llama", use_async)] = llama
        print(f"LlamaIndex: llama-index-core {version('llama-index-core')}")
    except ImportError as exc:
        print(f"LlamaIndex not measured ({exc}): pip install llama-index-core")

    print(f"\nrecall (facets recalled / facets), ragloom {version('ragloom')}, "
          f"lancedb {version('lancedb')}, model2vec m2v-minilm-256")
    print(f"  {'':44} {'mode':7} {'@5':>6} {'@10':>6}")
    for label, mode, r5, r10 in rows:
        print(f"  {label:44} {mode:7} {r5:6.3f} {r10:6.3f}")
    for name in sets:
        if (name, False) in peer:
            r5, r10 = peer[(name, False)]
            a5, a10 = peer[(name, True)]
            assert (r5, r10) == (a5, a10), "LlamaIndex sync and async disagree"
            print(f"  {name + ': LlamaIndex QueryFusionRetriever':44} {'vector':7} "
                  f"{r5:6.3f} {r10:6.3f}")

    # latency per compound question, vector mode: ours end to end vs LlamaIndex from the
    # sub-queries on
    questions = [q for q, _ in COMPOUND]
    retriever = StoreRetriever(store, embedder, mode="vector", top_k=k_max)
    block = MultiQueryRetrievalPipeline(decomposer, router, retriever, top_k=k_max)
    hybrid = MultiQueryRetrievalPipeline(
        decomposer, router, StoreRetriever(store, embedder, top_k=k_max), top_k=k_max
    )
    measured: dict[str, list[float]] = {"ours vector": [], "ours hybrid": []}
    for _ in range(repeat):
        measured["ours vector"].append(statistics.median(
            t for q in questions for t in median_ms(lambda q=q: block.search_sync(q), 3)))
        measured["ours hybrid"].append(statistics.median(
            t for q in questions for t in median_ms(lambda q=q: hybrid.search_sync(q), 3)))
        for use_async in (False, True):
            llama = peer.get(("llama", use_async))
            if llama is None:
                continue
            label = f"LlamaIndex use_async={use_async}"
            measured.setdefault(label, []).append(statistics.median(
                t for q in questions
                for t in median_ms(lambda q=q, llama=llama: llama.search(plans[q]), 3)))
    print(f"\nlatency per compound question (ms, median over {len(questions)} questions x 3, "
          f"median / best of {repeat} runs)")
    base = statistics.median(measured["ours vector"])
    for label, values in measured.items():
        mid = statistics.median(values)
        print(f"  {label:32} {mid:8.2f} {min(values):8.2f}   x{mid / base:5.2f} of ours vector")
    store.close()


# -- (b) latency at scale ---------------------------------------------------------------------

THREE_FACETS = "How do I install the package? How do I configure logging? How do I run the tests?"


def real_chunks(count: int) -> list[str]:
    from ragloom_text import RecursiveCharacterTextSplitter
    from support.corpus import build_corpus

    splitter = RecursiveCharacterTextSplitter(chunk_size=512)
    pieces: list[str] = []
    for _, _, text in build_corpus(min(80_000_000, count * 520)):
        pieces.extend(p for p in splitter.split_text(text) if p.strip())
        if len(pieces) >= count:
            break
    if len(pieces) < count:
        print(f"  (the corpus gave {len(pieces)} chunks: reused round-robin)")
    return [pieces[i % len(pieces)] for i in range(count)]


def big_index(path: Path, count: int, embedder: Any) -> Any:
    from ragloom.models import Document
    from ragloom.stores import IndexedDocument
    from ragloom_lancedb import LanceDBStore

    store = LanceDBStore(path)
    if store.info().chunks == count:
        start = time.perf_counter()
        store.optimize()  # builds the vector index if this index predates it
        print(f"index: {count:,} chunks reused from {path} (optimize: "
              f"{time.perf_counter() - start:.1f} s)")
        return store
    store.clear()
    start = time.perf_counter()
    texts = real_chunks(count)
    cut = time.perf_counter()
    batch = 5000
    for lo in range(0, count, batch):
        vectors = embedder.embed(texts[lo : lo + batch])
        documents = []
        for d in range(lo, min(count, lo + batch), 10):
            doc_id = f"doc-{d // 10}"
            documents.append(IndexedDocument(doc_id, f"fp-{d}", [
                Document.model_construct(
                    id=f"{doc_id}#{i - d}", content=texts[i], content_format="text",
                    metadata={"source": f"s{(d // 10) % 100}"}, parent_id=doc_id,
                    index=i - d, start=None, end=None, embedding=vectors[i - lo].tolist(),
                )
                for i in range(d, min(count, d + 10))
            ]))
        store.write(documents)
    store.optimize()
    print(f"index: {count:,} chunks of real text: cut in {cut - start:.1f} s, embedded, "
          f"written and indexed in {time.perf_counter() - cut:.1f} s -> {path}")
    return store


def index_recall(path: Path, embedder: Any, queries: list[str], top_k: int = 10) -> float:
    """Share of the exact top ``top_k`` that the approximate vector index finds."""
    from ragloom_lancedb import LanceDBStore

    approximate = LanceDBStore(path)
    exact = LanceDBStore(path, vector_index_rows=None)
    shares = []
    for query in queries:
        vector = embedder.embed_query(query)
        want = {h.chunk.id for h in exact.search(vector=vector, top_k=top_k)}
        got = {h.chunk.id for h in approximate.search(vector=vector, top_k=top_k)}
        shares.append(len(want & got) / max(1, len(want)))
    approximate.close()
    exact.close()
    return statistics.mean(shares)


def latency(count: int, repeat: int, workdir: Path, queries: int) -> None:
    from ragloom.multi_retrieval import MultiQueryRetrievalPipeline
    from ragloom.retrieval import StoreRetriever
    from ragloom_rules import HeuristicDecomposer, KeywordRouter
    from ragloom_semantic import Model2VecEmbedder

    embedder = Model2VecEmbedder()
    store = big_index(workdir / f"index-{count}", count, embedder)
    router = KeywordRouter(
        [
            {"name": "install", "keywords": ["install", "package", "pip"]},
            {"name": "logging", "keywords": ["logging", "log", "configure"]},
            {"name": "testing", "keywords": ["test", "tests", "pytest"]},
            {"name": "general"},
        ],
        default_route="general",
    )
    decomposer = HeuristicDecomposer()
    print(f"question: {THREE_FACETS!r} -> {decomposer.transform_sync(THREE_FACETS)}")
    probes = [q for q, _ in COMPOUND[:20]] + [q for q, _ in SIMPLE]
    probes += decomposer.transform_sync(THREE_FACETS)
    print(f"vector index: {store.info().details['indexes']}; recall@10 of the exact vector "
          f"search over {len(probes)} queries: "
          f"{index_recall(workdir / f'index-{count}', embedder, probes):.3f}")
    print(f"ragloom {version('ragloom')}, lancedb {version('lancedb')}, "
          f"{platform.processor() or platform.machine()}")
    print(f"\n{count:,} chunks: ms over {queries} searches, median / best of {repeat} runs")
    print(f"  {'':34} {'p50':>8} {'p95':>8} {'best p50':>9}")

    def report(label: str, fn: Callable[[], Any]) -> None:
        fn()  # warm
        p50s, p95s = [], []
        for _ in range(repeat):
            times = sorted(median_ms(fn, queries))
            p50s.append(statistics.median(times))
            p95s.append(times[int(0.95 * (len(times) - 1))])
        print(f"  {label:34} {statistics.median(p50s):8.2f} {statistics.median(p95s):8.2f} "
              f"{min(p50s):9.2f}")

    sub = "How do I configure logging?"
    vector = embedder.embed_query(sub)
    report("embed one sub-query", lambda: embedder.embed_query(sub))
    exact = type(store)(workdir / f"index-{count}", vector_index_rows=None)
    report("one vector search, exact (top 5)", lambda: exact.search(vector=vector, top_k=5))
    report("one vector search (top 5)", lambda: store.search(vector=vector, top_k=5))
    report("one text search (top 5)", lambda: store.search(text=sub, top_k=5))
    report("one hybrid search (top 5)", lambda: store.search(vector=vector, text=sub, top_k=5))
    for mode in ("vector", "text", "hybrid"):
        retriever = StoreRetriever(store, embedder if mode != "text" else None, mode=mode,
                                   top_k=5)
        block = MultiQueryRetrievalPipeline(decomposer, router, retriever, top_k=5)
        report(f"search() end to end, {mode}", lambda block=block: block.search_sync(THREE_FACETS))
    block = MultiQueryRetrievalPipeline(
        decomposer, router, StoreRetriever(exact, embedder, mode="hybrid", top_k=5), top_k=5
    )
    report("search() end to end, hybrid, exact", lambda: block.search_sync(THREE_FACETS))
    exact.close()
    store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--part", nargs="+", choices=["eval", "latency"],
                        default=["eval", "latency"])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) /
                        "ragloom-bench-search", help="where the large index is kept and reused")
    args = parser.parse_args()
    print(f"Python {sys.version.split()[0]} on {platform.platform()}")
    if "eval" in args.part:
        print("\n== (a) evaluation: whole question vs decomposed + fused ==")
        evaluation(args.repeat)
    if "latency" in args.part:
        print(f"\n== (b) latency: a 3-facet question, {args.chunks:,} chunks ==")
        args.workdir.mkdir(parents=True, exist_ok=True)
        latency(args.chunks, args.repeat, args.workdir, args.queries)


if __name__ == "__main__":
    main()
