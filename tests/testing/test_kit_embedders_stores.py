"""The embedder and store contracts pass good components and catch broken ones.

A small JSON-file store written here (no LanceDB) shows that the store contract asks only for
what the ``Store`` base class documents; its broken variants each fail the test that names
their fault, and nothing else.
"""

from __future__ import annotations

import re

import pytest

EMBEDDERS = """
import hashlib, re
import pytest
from ragloom.embedding import Embedder
from ragloom.testing import EmbedderContract


class Hashing(Embedder):
    step_id = "kit/hashing"
    batch_size = 16

    def __init__(self, salt: str = ""):
        self.salt = salt

    def config(self):
        return {"salt": self.salt}

    @property
    def dimension(self):
        return 16

    def _one(self, text):
        row = [0.0] * 16
        for word in re.findall(r"\\w+", text.lower()):
            digest = hashlib.sha256((self.salt + word).encode()).digest()
            row[digest[0] % 16] += 1.0
        return row

    def embed(self, texts):
        return [self._one(t) for t in texts]


class BatchDependent(Hashing):
    step_id = "kit/batch-dependent"

    def embed(self, texts):
        rows = super().embed(texts)
        return [[v + len(texts) for v in row] for row in rows]


class WrongDimension(Hashing):
    step_id = "kit/wrong-dimension"

    def embed(self, texts):
        return [row[:-1] for row in super().embed(texts)]


class IgnoresItsModel(Hashing):
    step_id = "kit/ignores-model"
    # Wrongly declared irrelevant: the salt (its "model") changes the vectors. (Leaving it out
    # of config() alone would not hide it: every constructor argument is part of the identity.)
    identity_ignores = frozenset({"salt"})

    def config(self):
        return {}

    def __init__(self, salt: str = ""):
        super().__init__(salt)


class TestGood(EmbedderContract):
    @pytest.fixture
    def embedder(self):
        return Hashing()

    @pytest.fixture
    def variants(self):
        return [Hashing("other model")]


class TestBatchDependent(EmbedderContract):
    @pytest.fixture
    def embedder(self):
        return BatchDependent()


class TestWrongDimension(EmbedderContract):
    @pytest.fixture
    def embedder(self):
        return WrongDimension()


class TestIgnoresItsModel(EmbedderContract):
    @pytest.fixture
    def embedder(self):
        return IgnoresItsModel()

    @pytest.fixture
    def variants(self):
        return [IgnoresItsModel("other model")]
"""

STORES = """
import json, math, re
from pathlib import Path
import pytest
from ragloom.models import Document
from ragloom.stores import ScoredChunk, Store, StoreError, StoreInfo, matches_where
from ragloom.testing import StoreContract


class JsonStore(Store):
    step_id = "kit/json-store"

    def __init__(self, path):
        self.path = Path(path) / "store.json"
        self.data = json.loads(self.path.read_text()) if self.path.exists() else {}

    def config(self):
        return {"path": str(self.path.parent)}

    def _save(self):
        self.path.write_text(json.dumps(self.data))

    def _dimension(self):
        for doc in self.data.values():
            for chunk in doc["chunks"]:
                return len(chunk["embedding"])
        return None

    def write(self, documents):
        dim = self._dimension()
        for doc in documents:
            for chunk in doc.chunks:
                dim = dim or len(chunk.embedding)
                self.check_dimension(dim, len(chunk.embedding))
        for doc in documents:
            self.replace(doc)
        self._save()

    def check_dimension(self, have, got):
        if have != got:
            raise StoreError(f"{self.path}: dimension {have}, got {got}")

    def replace(self, doc):
        self.data[doc.document_id] = {
            "fingerprint": doc.fingerprint,
            "chunks": [c.model_dump() for c in doc.chunks],
        }

    def delete(self, ids):
        gone = [i for i in dict.fromkeys(ids) if self.data.pop(i, None) is not None]
        self._save()
        return len(gone)

    def fingerprints(self):
        return {k: v["fingerprint"] for k, v in self.data.items()}

    def info(self):
        return StoreInfo(str(self.path), len(self.data),
                         sum(len(d["chunks"]) for d in self.data.values()), self._dimension())

    def _matching(self, where):
        for doc in self.data.values():
            for raw in doc["chunks"]:
                if self.keep(raw["metadata"], where):
                    yield raw

    def keep(self, metadata, where):
        return matches_where(metadata, where)

    def search(self, *, vector=None, text=None, top_k=10, where=None, mode=None):
        mode = mode or ("hybrid" if vector is not None and text is not None
                        else "vector" if vector is not None else "text" if text is not None
                        else None)
        if mode is None or (mode != "text" and vector is None) or (
                mode != "vector" and text is None):
            raise StoreError("missing query part")
        if vector is not None and self._dimension() not in (None, len(vector)):
            raise StoreError(f"dimension {self._dimension()}, query {len(vector)}")
        rows = list(self._matching(where))
        by_vector = sorted(((self._cos(vector, r["embedding"]), r) for r in rows),
                           key=lambda p: -p[0]) if vector is not None else []
        words = set(re.findall(r"\\w+", (text or "").lower()))
        by_text = sorted(((s, r) for r in rows
                          if (s := sum(w in words for w in re.findall(r"\\w+",
                                                                       r["content"].lower())))),
                         key=lambda p: -p[0])
        if mode == "vector":
            ranked = by_vector
        elif mode == "text":
            ranked = by_text
        else:
            fused = {}
            for ranking in (by_vector, by_text):
                for rank, (_, r) in enumerate(ranking, 1):
                    score, _ = fused.get(r["id"], (0.0, r))
                    fused[r["id"]] = (score + 1 / (60 + rank), r)
            ranked = sorted(fused.values(), key=lambda p: -p[0])
        return [ScoredChunk(Document(**{**r, "embedding": None}), float(s))
                for s, r in ranked[:top_k]]

    @staticmethod
    def _cos(a, b):
        na = math.sqrt(sum(x * x for x in a)); nb = math.sqrt(sum(x * x for x in b))
        return sum(x * y for x, y in zip(a, b)) / (na * nb)


class Appends(JsonStore):
    step_id = "kit/appends"

    def replace(self, doc):
        old = self.data.get(doc.document_id, {"chunks": []})["chunks"]
        self.data[doc.document_id] = {"fingerprint": doc.fingerprint,
                                      "chunks": old + [c.model_dump() for c in doc.chunks]}


class IgnoresListValues(JsonStore):
    step_id = "kit/ignores-list-values"

    def keep(self, metadata, where):
        flat = {k: v for k, v in metadata.items() if not isinstance(v, list)}
        return matches_where(flat, where)


class Forgets(JsonStore):
    step_id = "kit/forgets"

    def _save(self):
        pass


class AnyDimension(JsonStore):
    step_id = "kit/any-dimension"

    def check_dimension(self, have, got):
        pass


def _factory(cls):
    return lambda directory: cls(directory)


class TestGood(StoreContract):
    @pytest.fixture
    def store_factory(self):
        return _factory(JsonStore)


class TestAppends(StoreContract):
    @pytest.fixture
    def store_factory(self):
        return _factory(Appends)


class TestIgnoresListValues(StoreContract):
    @pytest.fixture
    def store_factory(self):
        return _factory(IgnoresListValues)


class TestForgets(StoreContract):
    @pytest.fixture
    def store_factory(self):
        return _factory(Forgets)


class TestAnyDimension(StoreContract):
    @pytest.fixture
    def store_factory(self):
        return _factory(AnyDimension)
"""


def failures(pytester: pytest.Pytester, source: str) -> dict[str, set[str]]:
    """Run ``source`` as a test module; the failed tests of each class."""
    pytester.makepyfile(test_subject=source)
    result = pytester.runpytest_subprocess("-q", "-p", "no:cacheprovider", "-rf")
    failed: dict[str, set[str]] = {}
    for line in result.outlines:
        match = re.match(r"FAILED \S+::(\w+)::(\w+)", line)
        if match:
            failed.setdefault(match.group(1), set()).add(match.group(2))
    assert result.ret in (0, 1), "\n".join(result.outlines[-30:])
    return failed


def test_embedder_contract(pytester: pytest.Pytester) -> None:
    failed = failures(pytester, EMBEDDERS)
    assert "TestGood" not in failed
    assert failed["TestBatchDependent"] == {"test_batch_equals_one_by_one_in_order"}
    assert "test_vectors_have_the_dimension_and_are_finite" in failed["TestWrongDimension"]
    assert failed["TestIgnoresItsModel"] == {"test_identity_changes_with_the_model"}


def test_store_contract(pytester: pytest.Pytester) -> None:
    failed = failures(pytester, STORES)
    assert "TestGood" not in failed
    assert failed["TestAppends"] == {"test_rewriting_a_document_replaces_its_chunks"}
    assert failed["TestIgnoresListValues"] == {
        "test_where_on_a_known_corpus", "test_where_means_matches_where",
    }
    assert failed["TestForgets"] == {"test_persists_across_close_and_reopen"}
    assert failed["TestAnyDimension"] == {"test_another_dimension_is_refused_and_nothing_changes"}
