"""The loader family's contract: subclass :class:`LoaderContract`, provide two fixtures.

Example::

    import pytest
    from ragloom.loading import SourceFile
    from ragloom.testing import LoaderContract

    class TestMyLoader(LoaderContract):
        @pytest.fixture
        def loader(self):
            return MyLoader()

        @pytest.fixture
        def samples(self):  # real files in the loader's formats
            path = Path("tests/data/report.pdf")
            return [SourceFile(path.name, path.read_bytes(), path.name)]

        @pytest.fixture
        def bad_samples(self):  # optional: bytes the loader must refuse
            return [SourceFile("junk.pdf", b"not a pdf", "junk.pdf")]

Empty bytes may be refused (a :class:`~ragloom.loading.LoadError`) or read as no documents;
either is allowed, but say which in your loader's documentation (the built-in loaders and
ragloom-loaders refuse them, so that an empty file is reported rather than silently absent).
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Sequence
from typing import Any, ClassVar

import pytest

from ..loading import Loader, LoadError, SourceFile
from ..models import Document

__all__ = ["LoaderContract", "check_loaded"]


def _strict_json(value: Any, where: str) -> None:
    """``value`` is plain JSON: dicts with str keys, lists, str, int, finite float, bool, None."""
    if value is None or isinstance(value, (str, bool, int)):
        return
    if isinstance(value, float):
        assert math.isfinite(value), f"{where} holds {value!r}, which is not JSON"
        return
    if isinstance(value, list):
        for i, item in enumerate(value):
            _strict_json(item, f"{where}[{i}]")
        return
    if isinstance(value, dict):
        for key, item in value.items():
            assert isinstance(key, str), f"{where} has a key {key!r} that is not a str"
            _strict_json(item, f"{where}[{key!r}]")
        return
    raise AssertionError(
        f"{where} holds a {type(value).__name__} ({value!r:.80}), which is not plain JSON "
        "(use lists, dicts, str, int, float, bool or None)"
    )


def check_loaded(loader: Loader, source: SourceFile, documents: Sequence[Any]) -> None:
    """Check what ``loader.load(source)`` returned against the loader contract.

    At least one :class:`~ragloom.models.Document`, each a whole document (no chunk lineage)
    with non-empty content and a content format among ``loader.produces`` (when it declares
    any); the document of a one-document file has ``source.doc_id`` as id, several have
    distinct ids that start with it; ``source.metadata`` is copied into every document; all
    metadata is strict JSON (no NaN, no tuples, no objects) and survives a JSON round trip.
    """
    assert isinstance(documents, Sequence) and not isinstance(documents, (str, bytes)), (
        f"load() must return a list of documents, got {type(documents).__name__}"
    )
    assert len(documents) >= 1, f"{source.path}: a readable sample gave no documents"
    ids = []
    for doc in documents:
        assert isinstance(doc, Document), f"load() returned a {type(doc).__name__}"
        assert doc.content.strip(), f"{source.path}: document {doc.id!r} has no content"
        assert doc.content_format, f"{source.path}: document {doc.id!r} has no content_format"
        if loader.produces:
            assert doc.content_format in loader.produces, (
                f"{source.path}: content_format {doc.content_format!r} is not among the "
                f"loader's produces {sorted(loader.produces)}"
            )
        assert doc.parent_id is None and doc.start is None and doc.index is None, (
            "a loader reads whole documents, not chunks"
        )
        for key, value in source.metadata.items():
            assert doc.metadata.get(key) == value, (
                f"{source.path}: the caller's metadata {key!r} was not copied into "
                f"document {doc.id!r}"
            )
        _strict_json(doc.metadata, f"{doc.id}.metadata")
        encoded = json.dumps(doc.metadata, allow_nan=False)
        assert json.loads(encoded) == doc.metadata, f"{doc.id}: metadata changes through JSON"
        ids.append(doc.id)
    if len(ids) == 1:
        assert ids[0] == source.doc_id, (
            f"{source.path}: the document's id is {ids[0]!r}, not the source's doc_id "
            f"{source.doc_id!r}"
        )
    else:
        assert len(set(ids)) == len(ids), f"{source.path}: document ids repeat: {ids}"
        assert all(i.startswith(source.doc_id) for i in ids), (
            f"{source.path}: ids of a file's documents must derive from its doc_id "
            f"{source.doc_id!r}: {ids}"
        )


class LoaderContract:
    """The loader contract. Provide ``loader`` and ``samples`` fixtures; ``bad_samples`` too.

    - ``loader``: a new instance of your loader;
    - ``samples``: a list of :class:`~ragloom.loading.SourceFile` of real files in the
      loader's formats, every one readable;
    - ``bad_samples`` (optional): files the loader must refuse with a
      :class:`~ragloom.loading.LoadError` (corrupt, truncated, not the format).

    Besides the samples, the contract feeds the loader empty bytes, seeded random bytes and
    truncated copies of the samples under each of its suffixes: each must give documents or a
    ``LoadError``, never another exception.
    """

    #: Seed of the random junk fed to the loader.
    junk_seed: ClassVar[int] = 20240519

    @pytest.fixture
    def loader(self) -> Loader:  # pragma: no cover - the author overrides it
        raise NotImplementedError("provide a `loader` fixture returning your loader")

    @pytest.fixture
    def samples(self) -> list[SourceFile]:  # pragma: no cover - the author overrides it
        raise NotImplementedError(
            "provide a `samples` fixture: SourceFile objects of real files the loader reads"
        )

    @pytest.fixture
    def bad_samples(self) -> list[SourceFile]:
        return []

    # -- helpers ----------------------------------------------------------------------------

    @staticmethod
    def _suffixes(loader: Loader) -> list[str]:
        return sorted(loader.suffixes) or [""]

    @staticmethod
    def _load_or_refuse(loader: Loader, source: SourceFile) -> list[Document] | LoadError:
        try:
            return list(loader.load(source))
        except LoadError as exc:
            return exc
        except Exception as exc:
            raise AssertionError(
                f"{type(loader).__name__}.load({source.path!r}) raised "
                f"{type(exc).__name__}: {exc} -- a loader must raise LoadError for input it "
                "cannot read"
            ) from exc

    # -- the contract -----------------------------------------------------------------------

    def test_is_a_loader_with_identity(self, loader: Loader) -> None:
        assert isinstance(loader, Loader)
        assert all(isinstance(s, str) and s == s.lower() for s in loader.suffixes)
        assert all(s.startswith(".") and len(s) > 1 for s in loader.suffixes), (
            f"suffixes are lower-case with their dot (\".html\"): {sorted(loader.suffixes)}"
        )
        assert isinstance(loader.config_hash, str) and len(loader.config_hash) == 32
        config = dict(loader.config())
        assert json.loads(json.dumps(config)) == config, "config() must be plain JSON"
        rebuilt = type(loader)(**config)
        assert rebuilt.config_hash == loader.config_hash, "config() must rebuild the loader"
        assert type(loader)(**config).config_hash == rebuilt.config_hash

    def test_samples_are_given(self, samples: list[SourceFile]) -> None:
        assert samples, "the `samples` fixture gave no files"
        assert all(isinstance(s, SourceFile) for s in samples)

    def test_accepts_its_suffixes_and_samples(
        self, loader: Loader, samples: list[SourceFile]
    ) -> None:
        for suffix in loader.suffixes:
            for name in (f"doc{suffix}", f"folder/Doc{suffix.upper()}"):
                assert loader.accepts(SourceFile(name, b"", name)), name
        for sample in samples:
            assert loader.accepts(sample), f"{sample.path}: a sample the loader does not accept"

    def test_samples_load(self, loader: Loader, samples: list[SourceFile]) -> None:
        for sample in samples:
            check_loaded(loader, sample, loader.load(sample))

    def test_caller_metadata_and_doc_id(self, loader: Loader, samples: list[SourceFile]) -> None:
        for sample in samples:
            given = {"tenant": "acme", "size": len(sample.data), "tags": ["a", "b"]}
            source = SourceFile(sample.path, sample.data, "renamed/doc-7", dict(given))
            documents = loader.load(source)
            check_loaded(loader, source, documents)
            assert source.metadata == given, "load() must not change the source's metadata"

    def test_deterministic(self, loader: Loader, samples: list[SourceFile]) -> None:
        other = type(loader)(**dict(loader.config()))
        for sample in samples:
            first = [d.model_dump() for d in loader.load(sample)]
            again = [d.model_dump() for d in loader.load(sample)]
            fresh = [d.model_dump() for d in other.load(sample)]
            assert first == again == fresh, f"{sample.path}: same bytes, different documents"

    def test_bad_samples_raise_load_error(
        self, loader: Loader, bad_samples: list[SourceFile]
    ) -> None:
        if not bad_samples:
            pytest.skip("no `bad_samples` given")
        for bad in bad_samples:
            outcome = self._load_or_refuse(loader, bad)
            assert isinstance(outcome, LoadError), (
                f"{bad.path}: a bad sample was read into {len(outcome)} document(s)"
            )
            message = str(outcome)
            assert message.strip(), f"{bad.path}: LoadError without a message"
            assert bad.path in message, (
                f"{bad.path}: the LoadError message does not name the file: {message!r}"
            )

    def test_empty_bytes(self, loader: Loader) -> None:
        for suffix in self._suffixes(loader):
            outcome = self._load_or_refuse(loader, SourceFile(f"empty{suffix}", b"", "empty"))
            if isinstance(outcome, LoadError):
                assert str(outcome).strip()
            else:
                assert outcome == [], "empty bytes give a LoadError or no documents"

    def test_junk_and_truncated_never_crash(
        self, loader: Loader, samples: list[SourceFile]
    ) -> None:
        rng = random.Random(self.junk_seed)
        blobs = [bytes(rng.getrandbits(8) for _ in range(n)) for n in (1, 7, 512, 4096)]
        blobs.append(b"\x00" * 64)
        blobs.append(b"plain words, no format at all\n" * 20)
        for sample in samples:
            data = sample.data
            blobs.extend((data[: len(data) // 2], data[: max(1, len(data) // 10)], data[:-1]))
        for suffix in self._suffixes(loader):
            for n, blob in enumerate(blobs):
                source = SourceFile(f"junk-{n}{suffix}", blob, f"junk-{n}")
                outcome = self._load_or_refuse(loader, source)
                if isinstance(outcome, LoadError):
                    assert source.path in str(outcome), (
                        f"the LoadError message does not name the file: {outcome}"
                    )
                else:
                    for doc in outcome:
                        assert isinstance(doc, Document)
                        _strict_json(doc.metadata, f"{doc.id}.metadata")

    def test_sniff_is_total(self, loader: Loader, samples: list[SourceFile]) -> None:
        rng = random.Random(self.junk_seed + 1)
        heads = [b"", b"\x00", bytes(rng.getrandbits(8) for _ in range(4096))]
        heads.extend(s.data[:4096] for s in samples)
        for head in heads:
            assert isinstance(loader.sniff(head), bool)
