"""StoreRetriever over a real LanceDB index passes the kit's retriever contract, by vector, by
full text and hybrid, over chunks cut by ragloom-text and embedded by the bundled model2vec
model."""

from __future__ import annotations

import pytest
from ragloom.retrieval import StoreRetriever
from ragloom.stores import IndexedDocument
from ragloom.testing import RetrieverContract
from ragloom_lancedb import LanceDBStore

semantic = pytest.importorskip("ragloom_semantic")
text = pytest.importorskip("ragloom_text")


@pytest.fixture(scope="module")
def embedder():
    return semantic.Model2VecEmbedder()


def index(corpus, directory, embedder) -> LanceDBStore:
    chunker = text.RecursiveCharacterTextSplitter(chunk_size=120)
    documents = []
    for doc in corpus:
        chunks = chunker.chunk(doc)
        vectors = embedder.embed([c.content for c in chunks])
        chunks = [c.model_copy(update={"embedding": v.tolist()}) for c, v in zip(chunks, vectors)]
        documents.append(IndexedDocument(doc.id, doc.content_hash, chunks))
    store = LanceDBStore(directory / "index")
    store.write(documents)
    return store


@pytest.fixture(scope="module")
def store(tmp_path_factory, embedder):
    from ragloom.testing.retrievers import contract_corpus

    store = index(contract_corpus(), tmp_path_factory.mktemp("retriever"), embedder)
    yield store
    store.close()


class TestVector(RetrieverContract):
    @pytest.fixture
    def retriever(self, store, embedder):
        return StoreRetriever(store, embedder, mode="vector")


class TestText(RetrieverContract):
    @pytest.fixture
    def retriever(self, store):
        return StoreRetriever(store, mode="text", top_k=4)


class TestHybrid(RetrieverContract):
    @pytest.fixture
    def retriever(self, store, embedder):
        return StoreRetriever(store, embedder)


class TestHybridWithItsOwnCondition(RetrieverContract):
    """A retriever restricted to two topics: the kit's conditions narrow it further."""

    relevant_k = 5

    @pytest.fixture
    def retriever(self, store, embedder):
        return StoreRetriever(store, embedder, where={"topic": ["billing", "security"]})

    @pytest.fixture
    def relevant(self):
        return {
            "How long does a refund take?": {"invoices"},
            "How do I reset a forgotten password?": {"passwords"},
        }

    def test_its_own_condition_holds(self, retriever, queries) -> None:
        for query in queries:
            for where in (None, {"topic": "security"}, {"topic": ["setup", "billing"]}):
                found = retriever.retrieve(query, top_k=20, where=where)
                topics = {hit.chunk.metadata["topic"] for hit in found}
                assert topics <= {"billing", "security"}
                if where is not None:
                    wanted = where["topic"]
                    assert topics <= set(wanted if isinstance(wanted, list) else [wanted])
            assert retriever.retrieve(query, where={"topic": "setup"}) == []
