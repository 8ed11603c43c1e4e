"""Model loading and encoding: the bundled model, local paths only, the fast word pooler."""

from __future__ import annotations

import json
import string

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ragloom_semantic import StaticEncoder, _model, bundled_model_path, load_static_model
from ragloom_semantic._model import ModelPathError, check_model_dir, get_encoder

SENTENCES = [
    "What's the weather like in Paris tomorrow?",
    "Retrieval systems split documents into chunks; each chunk keeps its offsets.",
    "naïve café résumé — Ünïcödé façade",
    "数据 and 中文 mixed with English words",
    "emoji 🙂 and symbols © ® ™ • → ≥",
    "CamelCaseIdentifiers snake_case_names and foo.bar(baz, qux=1)",
    "https://example.com/path?query=1&x=%20y#frag",
    "tabs\tand\nnewlines\r\nand  double  spaces",
    "control\x00chars\x07inside",
    "A" * 150 + " supercalifragilisticexpialidocious",
    "",
    "   ",
    "?!",
]


@pytest.fixture(scope="module")
def model():
    return load_static_model()


def test_bundled_model_ships_with_its_provenance() -> None:
    folder = bundled_model_path()
    for name in ("config.json", "model.safetensors", "modules.json", "tokenizer.json",
                 "README.md", "PROVENANCE.md"):
        assert (folder / name).is_file(), name
    assert "all-MiniLM-L6-v2" in (folder / "PROVENANCE.md").read_text()
    assert json.loads((folder / "config.json").read_text())["hidden_dim"] == 256
    assert check_model_dir(folder) == folder


def test_paths_must_be_local_model_folders(tmp_path) -> None:
    with pytest.raises(ModelPathError, match="never downloads"):
        check_model_dir("minishlab/potion-base-8M")  # a hub name is not a folder
    with pytest.raises(ModelPathError, match="missing config.json, tokenizer.json"):
        check_model_dir(tmp_path)
    with pytest.raises(ModelPathError):
        load_static_model(tmp_path / "nope")
    assert issubclass(ModelPathError, ValueError)


def test_models_and_encoders_are_shared_per_path(model) -> None:
    assert load_static_model(bundled_model_path()) is model
    assert load_static_model(str(bundled_model_path())) is model
    assert get_encoder() is get_encoder(bundled_model_path())
    assert get_encoder().name == "bundled:m2v-minilm-256"


def test_fast_pooler_gives_model2vecs_vectors(model) -> None:
    encoder = StaticEncoder()
    ours = encoder.encode(SENTENCES)
    reference = np.asarray(model.encode(SENTENCES, use_multiprocessing=False), dtype=np.float32)
    assert ours.shape == (len(SENTENCES), 256) and ours.dtype == np.float32
    assert np.allclose(ours, reference, atol=1e-3)  # model2vec pools in float16
    norms = np.linalg.norm(ours, axis=1)
    assert np.allclose(norms[:-3], 1.0, atol=1e-5)
    assert np.array_equal(norms[-3:-1], [0.0, 0.0])  # nothing to embed: zero rows
    # the same text gets the same vector alone or in any batch
    alone = np.vstack([encoder.encode([s]) for s in SENTENCES])
    assert np.array_equal(alone, ours)
    assert encoder.encode([]).shape == (0, 256)


def test_long_texts_are_truncated_like_model2vec(model) -> None:
    long = " ".join(["retrieval"] * 700)  # 700 tokens: only the first 512 count
    short = " ".join(["retrieval"] * 512) + " chunking" * 300
    a, b = StaticEncoder().encode([long, short])
    assert np.allclose(a, b, atol=1e-6)  # the tokens after the 512th are ignored


def test_other_tokenizers_go_through_model2vec(monkeypatch, model) -> None:
    monkeypatch.setattr(_model, "_word_local", lambda tokenizer: False)
    encoder = StaticEncoder()
    vectors = encoder.encode(SENTENCES[:6])
    assert encoder._pooler is None
    reference = np.asarray(model.encode(SENTENCES[:6], use_multiprocessing=False))
    assert np.allclose(vectors, reference, atol=1e-3)


def test_word_cache_restarts_when_full(monkeypatch) -> None:
    monkeypatch.setattr(_model, "_WORD_CACHE_LIMIT", 5)
    monkeypatch.setattr(_model, "_PIECE_CACHE_LIMIT", 3)
    encoder = StaticEncoder()
    texts = ["one two three four", "five six seven"]
    first = encoder.encode(texts)
    pooler = encoder._pooler
    assert pooler is not None and {"one", "seven"} <= set(pooler.words)
    other = encoder.encode(["eight nine"])  # the cache was over its limit: it restarts
    assert "one" not in pooler.words and {"eight", "nine"} <= set(pooler.words)
    assert len(pooler.words) <= 5
    assert np.array_equal(encoder.encode(texts), first)
    monkeypatch.undo()
    assert np.array_equal(StaticEncoder().encode(texts), first)
    assert np.array_equal(StaticEncoder().encode(["eight nine"]), other)


_printable = st.text(alphabet=string.ascii_letters + string.digits + string.punctuation,
                     min_size=1, max_size=40)
_words = _printable | st.sampled_from(
    ["unaffable", "tokenization", "Hello,", "don't", "e-mail", "3.14159", "x" * 120,
     "ABCDEFGHIJ" * 11, "##", "[UNK]", "[CLS]", "...", "aaaaaaaaaaaaaaaaaaaaqqqqqq"]
)


@settings(max_examples=200, deadline=None)
@given(word=_words)
def test_python_wordpiece_matches_the_rust_tokenizer(word: str) -> None:
    tokenizer = _reference_tokenizer()
    wordpiece = _model._AsciiWordPiece.for_tokenizer(tokenizer)
    assert wordpiece is not None
    expected = tokenizer.encode(word, add_special_tokens=False).ids
    ours = wordpiece.word(word)
    if ours is not None:  # None: left to the real tokenizer
        assert ours == expected
    # through the encoder: the same ids, less unknown tokens (as StaticModel.tokenize)
    encoder = get_encoder()
    assert encoder.model is not None  # loads the model and its pooler
    pooler = encoder._pooler
    assert pooler is not None
    ids, lengths = pooler.token_ids([word, word + " " + word])
    unk = tokenizer.token_to_id("[UNK]")
    known = [i for i in expected if i != unk]
    assert ids.tolist() == known * 3 and lengths.tolist() == [len(known), 2 * len(known)]


_TOKENIZER = []


def _reference_tokenizer():
    if not _TOKENIZER:
        from tokenizers import Tokenizer

        tok = Tokenizer.from_file(str(bundled_model_path() / "tokenizer.json"))
        tok.no_truncation()
        _TOKENIZER.append(tok)
    return _TOKENIZER[0]


def test_python_wordpiece_leaves_other_words_to_the_tokenizer() -> None:
    wordpiece = _model._AsciiWordPiece.for_tokenizer(_reference_tokenizer())
    assert wordpiece.word("café") is None
    assert wordpiece.word("tab\there") is None
    assert wordpiece.word("ctrl\x07") is None
    assert wordpiece.word("x[UNK]y") is None and wordpiece.word("[pad]") is None


def test_pooler_applies_token_mapping_and_weights(model) -> None:
    """Quantised/weighted model2vec models: rows via the mapping, weights by original id."""
    from types import SimpleNamespace

    rng = np.random.default_rng(0)
    vocab = model.tokenizer.get_vocab_size()
    table = rng.standard_normal((50, 8)).astype(np.float32)
    mapping = rng.integers(0, 50, vocab)
    weights = rng.uniform(0.5, 2.0, vocab).astype(np.float32)
    fake = SimpleNamespace(
        tokenizer=model.tokenizer, embedding=table, token_mapping=mapping, weights=weights,
        unk_token_id=model.unk_token_id, max_length=512,
    )
    pooler = _model._WordPooler(fake)  # type: ignore[arg-type]
    texts = ["the cat sat on the mat", "tokenization is fun", "", "x"]
    out = pooler.encode(texts)
    for text, row in zip(texts, out, strict=True):
        ids = [i for i in model.tokenizer.encode(text, add_special_tokens=False).ids
               if i != model.unk_token_id]
        expected = (table[mapping[ids]] * weights[ids][:, None]).mean(axis=0) if ids else 0
        assert np.allclose(row, expected, atol=1e-5)


_text_pieces = st.sampled_from(
    ["the", "Retrieval", "chunk,", "foo.bar(baz)", "naïve", "数据", "🙂", "[UNK]", "[unk]",
     "x" * 120, "e-mail", "3.14", "\ufdd0", "\x01", "a\x1cb", "c\x0bd", "e\x85f", "\u200b",
     "\u2028", "\xa0", "\x00", "tab\there", "\r\n", "  ", "Ünïcödé", "##ing", "?!"]
) | st.text(min_size=0, max_size=12)


@settings(max_examples=150, deadline=None)
@given(texts=st.lists(st.lists(_text_pieces, max_size=12).map(" ".join), max_size=6),
       fresh=st.booleans())
def test_batched_token_ids_match_the_tokenizer_text_by_text(texts, fresh) -> None:
    """Whole texts (joined into one split, or split one by one when a text holds the
    separator) give the tokenizer's ids, less unknown tokens, text by text."""
    encoder = StaticEncoder() if fresh else get_encoder()
    assert encoder.model is not None
    pooler = encoder._pooler
    assert pooler is not None
    tokenizer = _reference_tokenizer()
    unk = tokenizer.token_to_id("[UNK]")
    expected = [
        [i for i in tokenizer.encode(t, add_special_tokens=False).ids if i != unk][:512]
        for t in texts
    ]
    ids, lengths = pooler.token_ids(texts)
    assert lengths.tolist() == [len(e) for e in expected]
    assert ids.tolist() == [i for e in expected for i in e]


def test_a_wordpiece_folder_is_read_without_model2vec(model) -> None:
    """The bundled model is read from its files directly: the same vectors as the pooler over
    model2vec's loaded model, and neither model2vec nor huggingface_hub imported."""
    import subprocess
    import sys

    texts = SENTENCES + [" ".join(["retrieval"] * 700), "x " * 600]
    ours = StaticEncoder().encode(texts)
    reference = _model.normalize_rows(_model._WordPooler(model).encode(texts))
    assert np.array_equal(ours, reference)
    code = (
        "import sys\n"
        "from ragloom_semantic import StaticEncoder\n"
        "encoder = StaticEncoder()\n"
        "vectors = encoder.encode(['one text', 'and another'])\n"
        "assert vectors.shape == (2, encoder.dim == 256 and 256)\n"
        "print(sorted(m for m in ('model2vec', 'huggingface_hub') if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_a_folder_in_another_layout_is_left_to_model2vec(tmp_path) -> None:
    import shutil

    folder = tmp_path / "no-config"
    shutil.copytree(bundled_model_path(), folder)
    (folder / "config.json").write_text("[]", encoding="utf-8")  # not model2vec's config
    assert _model._LocalWordPiece.read(folder) is None
    assert _model._LocalWordPiece.read(bundled_model_path()) is not None


def test_word_cache_is_bounded_and_its_rows_sit_together(monkeypatch) -> None:
    """The cache holds at most ``_WORD_CACHE_LIMIT`` words, 100,000: a 200 MB corpus has about
    2.4 million distinct words, 20 MB about 330,000, so a cache of 500,000 made the peak memory
    of an ingest grow with the corpus (``benchmarks/bench_scale.py --only ingest``). A learned
    word's row number is one of the numbers made in a block, never a small object allocated
    among a batch's short-lived ones (the floats of its vectors), which, kept by the cache,
    kept their memory pages in the process."""
    assert _model._WORD_CACHE_LIMIT <= 100_000
    monkeypatch.setattr(_model, "_NUMBER_BLOCK", 1000)
    encoder = StaticEncoder()
    texts = [" ".join(f"w{n}x{k}" for k in range(300)) for n in range(5)]
    encoder.encode(texts)
    pooler = encoder._pooler
    assert pooler is not None and len(pooler.words) > 1500
    assert all(number is _model._NUMBERS[number] for number in pooler.words.values())
