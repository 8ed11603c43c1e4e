"""Chunk sizes in tokens: budgets kept (counted by tokenizing each chunk alone), exact offsets,
registered length functions that pipelines dump and rebuild, and clear errors.

Tokenizers are the bundled model's (ragloom-semantic) and small ones trained here, in memory,
on text of this repository (Hugging Face ``tokenizers``; tiktoken encodings with the real
OpenAI split patterns over a small ranks file written by the test): nothing is downloaded.
"""

from __future__ import annotations

import base64
import functools
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ragloom import ChunkerRouter, ConfigurationError, Document
from ragloom.config import build_pipeline, dump_pipeline
from ragloom.plugins import Registry
from ragloom.testing import ChunkerContract
from ragloom_text import (
    LENGTH_FUNCTIONS,
    CodeChunker,
    MarkdownChunker,
    RecursiveCharacterTextSplitter,
    SentenceChunker,
    default_chunker_router,
)
from ragloom_text._spans import recursive_spans
from ragloom_text.tokens import TiktokenCount, TokenCount, default_tokenizer_path
from text_checks import check_spans, literal_boundaries, reference_pack

tokenizers = pytest.importorskip("tokenizers")
tiktoken = pytest.importorskip("tiktoken")

REPO = Path(__file__).resolve().parents[3]
CHUNKERS: list[type[Any]] = [
    RecursiveCharacterTextSplitter,
    MarkdownChunker,
    SentenceChunker,
    CodeChunker,
]
TRAINING_TEXT = [
    (REPO / "README.md").read_text(encoding="utf-8"),
    (REPO / "docs" / "architecture.md").read_text(encoding="utf-8"),
]


@functools.cache
def independent_counter(path: Path) -> Callable[[str], int]:
    """Tokens of a text tokenized alone, by a tokenizer loaded here (not ragloom's)."""
    tok = tokenizers.Tokenizer.from_file(str(path))
    tok.no_truncation()
    tok.no_padding()
    return lambda text: len(tok.encode(text, add_special_tokens=False).ids)


@pytest.fixture(scope="module")
def bundled() -> Path:
    path = default_tokenizer_path()
    if path is None:
        pytest.skip("ragloom-semantic (the bundled model's tokenizer) is not installed")
    return path


def _train(tmp: Path, name: str, pre: Any, model: Any, trainer: Any, norm: Any = None) -> Path:
    tok = tokenizers.Tokenizer(model)
    if norm is not None:
        tok.normalizer = norm
    tok.pre_tokenizer = pre
    tok.train_from_iterator(TRAINING_TEXT, trainer)
    path = tmp / f"{name}.json"
    tok.save(str(path))
    return path


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Small tokenizers of three families, trained in memory on this repository's docs."""
    from tokenizers import models, normalizers, pre_tokenizers, trainers

    tmp = tmp_path_factory.mktemp("tokenizers")
    byte_level = pre_tokenizers.ByteLevel(add_prefix_space=False)
    return {
        "gpt-style byte-level BPE": _train(
            tmp, "bytelevel", byte_level, models.BPE(),
            trainers.BpeTrainer(
                vocab_size=400, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                special_tokens=["<|endoftext|>"], show_progress=False,
            ),
        ),
        "wordpiece over whitespace, punctuation and digits": _train(
            tmp, "wordpiece",
            pre_tokenizers.Sequence([
                pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Punctuation(),
                pre_tokenizers.Digits(individual_digits=True),
            ]),
            models.WordPiece(unk_token="[UNK]"),
            trainers.WordPieceTrainer(
                vocab_size=300, special_tokens=["[UNK]"], show_progress=False
            ),
            normalizers.Sequence([normalizers.NFKC(), normalizers.Lowercase()]),
        ),
        "sentencepiece-style metaspace BPE (no units)": _train(
            tmp, "metaspace", pre_tokenizers.Metaspace(), models.BPE(unk_token="<unk>"),
            trainers.BpeTrainer(vocab_size=300, special_tokens=["<unk>"], show_progress=False),
        ),
    }  # fmt: skip


@pytest.fixture(scope="module")
def ranks_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small tiktoken ranks file: every byte plus a few merges."""
    ranks = {bytes([i]): i for i in range(256)}
    for merged in (b"th", b"he", b"the", b" t", b" the", b"in", b"ing", b"  ", b"\n\n",
                   b"12", b"123", b"'s", b" a", b"er", b" er", b"on", b" on"):  # fmt: skip
        ranks.setdefault(merged, len(ranks))
    path = tmp_path_factory.mktemp("tiktoken") / "small.tiktoken"
    path.write_bytes(b"".join(base64.b64encode(t) + b" %d\n" % r for t, r in ranks.items()))
    return path


# -- text generation ----------------------------------------------------------------------------

word = st.text(alphabet="abcdeXYZ01éß日本🙂'", min_size=1, max_size=9)
known = st.sampled_from(["unbelievable", "the", "ing", "123456", "[UNK]", "<|endoftext|>",
                         "e\u0301", "İ", "ΟΔΟΣ", "x.y(z)", "##", "'s"])  # fmt: skip
space = st.sampled_from([" ", "  ", "\n", "\n\n", "\t", " \n ", "\r\n", "\xa0", "\u3000"])
mark = st.sampled_from([". ", "! ", "? ", "。", ", ", "...", "\x0b", "\x1c", "\x85", "\u2028"])
structure = st.sampled_from(["# Title\n", "\n## Two\n\n", "```py\nx = 1\n```\n",
                             "| a | b |\n|---|---|\n| 1 | 2 |\n", "def f(x):\n    return x\n",
                             "\n\nclass A:\n    pass\n"])  # fmt: skip
texts = st.lists(st.one_of(word, word, known, space, mark, structure), max_size=45).map("".join)


def run(chunker: Any, text: str) -> list[Document]:
    return chunker.chunk(Document(id="p", content=text, content_format="text"))


def assert_exact(text: str, chunks: list[Document]) -> None:
    for c in chunks:
        assert c.start is not None and c.end is not None
        assert c.content == text[c.start : c.end]
        assert c.parent_id == "p"


# -- budgets, offsets, tiling -------------------------------------------------------------------


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=texts, size=st.integers(1, 24), cls=st.sampled_from(CHUNKERS), data=st.data())
def test_no_chunk_exceeds_its_token_budget_and_offsets_are_exact(
    bundled: Path, text: str, size: int, cls: type[Any], data: st.DataObject
) -> None:
    overlap = data.draw(st.sampled_from([0, 0, min(1, size - 1), size // 3, size - 1]))
    count = independent_counter(bundled)
    chunks = run(cls(chunk_size=size, chunk_overlap=overlap, length_function="tokens"), text)
    assert_exact(text, chunks)
    # every chunk within the budget (unless one atom that cannot be cut), counted alone; the
    # chunks tile the text (overlap 0) or leave no gap, and every overlap is within budget
    check_spans(text, [(c.start, c.end, c.metadata) for c in chunks], size, overlap, count)
    if overlap == 0:
        assert "".join(c.content for c in chunks) == text


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=texts, size=st.integers(1, 16), data=st.data())
def test_budgets_hold_for_every_tokenizer_family(
    trained: dict[str, Path], text: str, size: int, data: st.DataObject
) -> None:
    name = data.draw(st.sampled_from(sorted(trained)), label="tokenizer")
    cls = data.draw(st.sampled_from(CHUNKERS), label="chunker")
    overlap = data.draw(st.sampled_from([0, size // 2]), label="overlap")
    length = TokenCount(str(trained[name]))
    chunks = run(cls(chunk_size=size, chunk_overlap=overlap, length_function=length), text)
    assert_exact(text, chunks)
    count = independent_counter(trained[name])
    check_spans(text, [(c.start, c.end, c.metadata) for c in chunks], size, overlap, count)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=texts, size=st.integers(1, 16), data=st.data())
def test_budgets_hold_for_tiktoken_encodings(
    ranks_file: Path, text: str, size: int, data: st.DataObject
) -> None:
    encoding = data.draw(st.sampled_from(["r50k_base", "cl100k_base", "o200k_base"]))
    cls = data.draw(st.sampled_from(CHUNKERS), label="chunker")
    overlap = data.draw(st.sampled_from([0, size // 2]), label="overlap")
    length = TiktokenCount(str(ranks_file), encoding=encoding, verify=False)
    chunks = run(cls(chunk_size=size, chunk_overlap=overlap, length_function=length), text)
    assert_exact(text, chunks)
    check_spans(text, [(c.start, c.end, c.metadata) for c in chunks], size, overlap, length)


# -- exact slice counts -------------------------------------------------------------------------


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=texts, data=st.data())
def test_slice_counts_equal_tokenizing_the_slice_alone(
    bundled: Path, trained: dict[str, Path], ranks_file: Path, text: str, data: st.DataObject
) -> None:
    choices = {"bundled": bundled, **trained}
    name = data.draw(st.sampled_from([*sorted(choices), "cl100k_base", "o200k_base"]))
    if name in choices:
        length: Any = TokenCount(str(choices[name]))
        count = independent_counter(choices[name])
    else:  # the encoding run on the slice itself
        length = TiktokenCount(str(ranks_file), encoding=name, verify=False)
        count = length
    counts = length.slice_counts(text)
    if counts is None:  # a tokenizer without units: chunkers measure slices directly
        assert "no units" in name
        return
    n = len(text)
    for _ in range(6):
        a = data.draw(st.integers(0, n), label="a")
        b = data.draw(st.integers(a, n), label="b")
        assert counts.count(a, b) == count(text[a:b]), (name, text[a:b])


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    text=st.lists(st.one_of(word, space, mark), max_size=40).map("".join),
    size=st.integers(1, 12),
    data=st.data(),
)
def test_token_chunks_follow_the_plain_packing_rule(
    bundled: Path, text: str, size: int, data: st.DataObject
) -> None:
    """With short words, the counted packer cuts exactly where the plainly written rule does
    (farthest fitting boundary of the most preferred level, measuring every candidate)."""
    overlap = data.draw(st.sampled_from([0, size // 2, size - 1]), label="overlap")
    seps = ["\n\n", "\n", ". ", "。", " ", ""]
    length = TokenCount()
    levels = [(literal_boundaries(text, sep), sep == "") for sep in seps]
    expected = reference_pack(text, levels, size, overlap, length)
    assert recursive_spans(text, size, overlap, seps, length=length) == expected


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=texts, data=st.data())
def test_a_small_memo_changes_nothing_but_speed(
    bundled: Path, text: str, data: st.DataObject
) -> None:
    from ragloom_text._counting import UnitCounter
    from ragloom_text.tokens import WHITESPACE_UNITS

    count = independent_counter(bundled)
    limit = data.draw(st.integers(1, 8), label="memo entries")
    counter = UnitCounter(
        lambda texts: [count(t) for t in texts], WHITESPACE_UNITS,
        memo_limit=limit, memo_chars=limit * 4,
    )  # fmt: skip
    for _ in range(3):  # the memo fills, empties and fills again
        counts = counter.counts(text)
        n = len(text)
        a = data.draw(st.integers(0, n), label="a")
        b = data.draw(st.integers(a, n), label="b")
        assert counts.count(a, b) == count(text[a:b])


def test_counts_are_not_capped_by_the_tokenizer_files_truncation(bundled: Path) -> None:
    # the bundled tokenizer.json truncates at 512 tokens; lengths must not
    assert json.loads(bundled.read_text(encoding="utf-8"))["truncation"]["max_length"] == 512
    text = "word " * 1500
    assert TokenCount()(text) == 1500
    chunks = run(RecursiveCharacterTextSplitter(1000, length_function="tokens"), text)
    assert [TokenCount()(c.content) for c in chunks] == [1000, 500]


# -- Python, the registry, pipeline files -------------------------------------------------------


def test_length_functions_are_registered_and_named_in_configs(bundled: Path) -> None:
    registry = Registry()
    assert {"chars", "words", "whitespace", "tokens", "tiktoken"} <= set(registry.names("length"))
    built = registry.create("length", "tokens", {})
    assert isinstance(built, TokenCount) and built("Hello, world") == 3
    assert set(LENGTH_FUNCTIONS) == {"chars", "words", "whitespace", "tokens", "tiktoken"}
    assert LENGTH_FUNCTIONS["tokens"] is TokenCount
    for spec in ("tokens", TokenCount(), {"name": "tokens"}, {"name": "tokens", "params": {}}):
        assert (
            RecursiveCharacterTextSplitter(length_function=spec).config()["length_function"]
            == "tokens"
        )
    table = {"name": "tokens", "params": {"tokenizer": str(bundled)}}
    chunker = SentenceChunker(64, length_function=table)
    assert chunker.config()["length_function"] == table
    assert SentenceChunker(**chunker.config()).config() == chunker.config()


def test_default_router_counts_tokens(bundled: Path) -> None:
    router = default_chunker_router(chunk_size=40, chunk_overlap=8, length_function="tokens")
    docs = [
        Document(id="m", content=TRAINING_TEXT[0], content_format="markdown"),
        Document(id="t", content=TRAINING_TEXT[1], content_format="text"),
        Document(id="c", content=Path(__file__).read_text(encoding="utf-8"), content_format="code"),
    ]
    count = independent_counter(bundled)
    for doc in docs:
        chunks = router.chunk(doc)
        assert len(chunks) > 3
        spans = [(c.start, c.end, c.metadata) for c in chunks]
        check_spans(doc.content, spans, 40, 8, count, where=doc.id)


PIPELINE = """
version = 1
[[steps]]
chunker = "auto"
params = { chunk_size = 48, chunk_overlap = 6, length_function = "tokens" }

[[steps]]
chunker = "sentence"
params = { chunk_size = 20, length_function = { name = "tokens", params = { tokenizer = "TOK" } } }
"""


def test_pipeline_files_build_dump_and_rebuild_token_lengths(tmp_path: Path, bundled: Path) -> None:
    file = tmp_path / "pipe.toml"
    file.write_text(PIPELINE.replace("TOK", bundled.as_posix()), encoding="utf-8")
    docs = [
        Document(id="a", content=TRAINING_TEXT[0], content_format="markdown"),
        Document(id="b", content=TRAINING_TEXT[1]),
    ]
    pipeline = build_pipeline(file)
    first = pipeline.run_sync(docs)
    dumped = dump_pipeline(pipeline)
    route_params = [r["step"]["params"] for r in dumped["steps"][0]["routes"]]
    assert all(p["length_function"] == "tokens" for p in route_params)
    assert dumped["steps"][0]["default"]["params"]["length_function"] == "tokens"
    assert dumped["steps"][1]["params"]["length_function"] == {
        "name": "tokens", "params": {"tokenizer": bundled.as_posix()},
    }  # fmt: skip
    rebuilt = build_pipeline(json.loads(json.dumps(dumped)))
    assert dump_pipeline(rebuilt) == dumped
    again = rebuilt.run_sync(docs)
    assert [c.model_dump() for c in again] == [c.model_dump() for c in first]
    assert len(first) > 10


def test_an_unregistered_callable_works_from_python_and_is_named() -> None:
    def syllables(text: str) -> int:
        return sum(text.count(v) for v in "aeiou")

    chunker = RecursiveCharacterTextSplitter(12, length_function=syllables)
    assert chunker.config()["length_function"].endswith(":" + syllables.__qualname__)
    check_spans(TRAINING_TEXT[0], chunker.spans(TRAINING_TEXT[0]), 12, 0, syllables)


def test_the_tokenizer_file_is_part_of_the_cache_identity(tmp_path: Path, bundled: Path) -> None:
    file = tmp_path / "tokenizer.json"
    file.write_bytes(bundled.read_bytes())
    table = {"name": "tokens", "params": {"tokenizer": str(file)}}
    before = RecursiveCharacterTextSplitter(100, length_function=table)
    same = RecursiveCharacterTextSplitter(100, length_function=table)
    assert before.config_hash == same.config_hash
    config = json.loads(file.read_text(encoding="utf-8"))
    config["normalizer"]["lowercase"] = False
    file.write_text(json.dumps(config), encoding="utf-8")
    after = RecursiveCharacterTextSplitter(100, length_function=table)
    assert after.config() == before.config()
    assert after.config_hash != before.config_hash


class TestTokenBudgetContract(ChunkerContract):
    @pytest.fixture
    def chunker(self, bundled: Path) -> Any:
        return MarkdownChunker(chunk_size=24, chunk_overlap=4, length_function="tokens")


def test_the_auto_router_is_a_chunker_router_with_token_children() -> None:
    router = default_chunker_router(length_function="tokens")
    assert isinstance(router, ChunkerRouter)
    assert {type(s.length) for _, s in router.routes} == {TokenCount}


# -- errors -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"not json", "is not a Hugging Face tokenizer file"),
        (b'{"version": "1.0"}', "is not a Hugging Face tokenizer file"),
    ],
)
def test_an_invalid_tokenizer_file_is_a_configuration_error(
    tmp_path: Path, content: bytes, message: str
) -> None:
    file = tmp_path / "tokenizer.json"
    file.write_bytes(content)
    with pytest.raises(ConfigurationError, match=message):
        TokenCount(str(file))
    with pytest.raises(ConfigurationError, match="length_function"):
        RecursiveCharacterTextSplitter(
            length_function={"name": "tokens", "params": {"tokenizer": str(file)}}
        )


def test_a_missing_tokenizer_file_is_named(tmp_path: Path) -> None:
    missing = tmp_path / "nope" / "tokenizer.json"
    with pytest.raises(ConfigurationError, match="nope/tokenizer.json.*cannot be read"):
        TokenCount(str(missing))
    with pytest.raises(ConfigurationError, match="is not a file"):
        TokenCount(str(tmp_path))


def test_in_a_pipeline_file_the_error_says_where(tmp_path: Path) -> None:
    spec = {
        "steps": [
            {
                "chunker": "recursive",
                "params": {
                    "length_function": {
                        "name": "tokens",
                        "params": {"tokenizer": str(tmp_path / "missing.json")},
                    }
                },
            }
        ]
    }
    with pytest.raises(ConfigurationError, match=r"steps\[0\].*missing.json"):
        build_pipeline(spec)
    spec = {"steps": [{"chunker": "recursive", "params": {"length_function": "tokenz"}}]}
    with pytest.raises(ConfigurationError, match="did you mean 'tokens'"):
        build_pipeline(spec)


def test_without_ragloom_semantic_tokens_needs_a_file(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    real = importlib.util.find_spec

    def hide(name: str, *args: Any) -> Any:
        return None if name == "ragloom_semantic" else real(name, *args)

    monkeypatch.setattr(importlib.util, "find_spec", hide)
    assert default_tokenizer_path() is None
    with pytest.raises(ConfigurationError, match="no tokenizer: pass tokenizer="):
        RecursiveCharacterTextSplitter(length_function="tokens")


def test_tiktoken_never_downloads_and_checks_the_file(ranks_file: Path) -> None:
    with pytest.raises(ConfigurationError, match="needs encoding_file.*never downloads"):
        RecursiveCharacterTextSplitter(length_function="tiktoken")
    with pytest.raises(ConfigurationError, match="not the ranks file of cl100k_base"):
        TiktokenCount(str(ranks_file))
    with pytest.raises(ConfigurationError, match="unknown tiktoken encoding 'nope'"):
        TiktokenCount(str(ranks_file), encoding="nope", verify=False)
    length = TiktokenCount(str(ranks_file), encoding="gpt-4o", verify=False)
    assert length.encoding_name == "o200k_base"
    params = {"encoding_file": str(ranks_file), "encoding": "cl100k_base", "verify": False}
    table = {"name": "tiktoken", "params": params}
    chunker = CodeChunker(30, length_function=table)
    assert chunker.config()["length_function"] == table
    assert CodeChunker(**chunker.config()).spans(TRAINING_TEXT[0]) == chunker.spans(
        TRAINING_TEXT[0]
    )


def test_a_malformed_ranks_file_is_a_configuration_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.tiktoken"
    bad.write_text("this is not base64 and a rank\n", encoding="utf-8")
    with pytest.raises(ConfigurationError, match="line 1 is not"):
        TiktokenCount(str(bad), verify=False)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-q"]))
