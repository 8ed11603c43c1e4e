"""Loading model2vec static models from local folders, cached per path, and encoding with them.

Pure module: needs numpy and (on first encode) model2vec, not the ragloom core. A model is only
ever read from a local folder: a path that is not a model folder is refused before model2vec
sees it, because model2vec would otherwise take a missing folder for a hub repository name.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping, Sequence
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

if TYPE_CHECKING:
    from model2vec import StaticModel

__all__ = [
    "BUNDLED_MODEL",
    "Encoder",
    "ModelPathError",
    "StaticEncoder",
    "bundled_model_path",
    "check_model_dir",
    "get_encoder",
    "load_static_model",
    "normalize_rows",
]

#: Name of the model shipped inside this package (see its PROVENANCE.md).
BUNDLED_MODEL = "m2v-minilm-256"

_REQUIRED_FILES = ("config.json", "tokenizer.json")
_WEIGHT_FILES = ("model.safetensors", "0_StaticEmbedding/model.safetensors")


class ModelPathError(ValueError):
    """``model_path`` does not name a local model2vec model folder."""


@runtime_checkable
class Encoder(Protocol):
    """Turns texts into L2-normalised float32 rows (a text with no tokens gives a zero row)."""

    @property
    def name(self) -> str:
        """A stable identity of the embedding space (used in fingerprints of cached vectors)."""

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """``(len(texts), dim)`` float32, each row of norm 1 or 0."""


def bundled_model_path() -> Path:
    """The folder of the model shipped in this package."""
    return Path(__file__).resolve().parent / "models" / BUNDLED_MODEL


def check_model_dir(path: str | Path) -> Path:
    """The resolved folder of a local model2vec model.

    Raises:
        ModelPathError: ``path`` is not a folder holding ``config.json``, ``tokenizer.json``
            and the safetensors weights.
    """
    folder = Path(path).expanduser()
    if not folder.is_dir():
        raise ModelPathError(
            f"model_path {str(path)!r} is not a local folder; ragloom-semantic loads model2vec "
            "models from local folders only and never downloads one"
        )
    missing = [name for name in _REQUIRED_FILES if not (folder / name).is_file()]
    if not any((folder / name).is_file() for name in _WEIGHT_FILES):
        missing.append("model.safetensors")
    if missing:
        raise ModelPathError(
            f"model_path {str(path)!r} is not a model2vec model folder: missing "
            f"{', '.join(missing)}"
        )
    return folder.resolve()


_MODELS: dict[Path, StaticModel] = {}
_MODELS_LOCK = threading.Lock()


def load_static_model(path: str | Path | None = None) -> StaticModel:
    """The model2vec ``StaticModel`` at ``path`` (``None``: the bundled model).

    Loaded once per resolved path in this process; concurrent first calls load it once.
    """
    folder = check_model_dir(bundled_model_path() if path is None else path)
    model = _MODELS.get(folder)
    if model is not None:
        return model
    with _MODELS_LOCK:
        model = _MODELS.get(folder)
        if model is None:
            from model2vec import StaticModel

            # A local folder that exists is read directly; nothing is fetched.
            model = StaticModel.from_pretrained(folder, force_download=False)
            _MODELS[folder] = model
    return model


def normalize_rows(matrix: np.ndarray) -> np.ndarray:
    """``matrix`` as float32 with rows scaled to norm 1 (zero rows stay zero)."""
    out = np.asarray(matrix, dtype=np.float32)
    if out.ndim != 2:
        raise ValueError(f"expected a 2-d matrix, got shape {out.shape}")
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return np.asarray(out / norms, dtype=np.float32)


# Pre-tokenizers that split on whitespace first and never look across it; with a normalizer
# that maps characters one by one, tokenizing each whitespace-separated word alone gives the
# same ids as tokenizing the whole text.
_WORD_LOCAL_PRE_TOKENIZERS = {"BertPreTokenizer", "Whitespace", "WhitespaceSplit"}
_CHAR_LOCAL_NORMALIZERS = {
    "BertNormalizer", "Lowercase", "NFD", "NFC", "NFKD", "NFKC", "StripAccents",
}
_WORD_CACHE_LIMIT = 500_000  # distinct words remembered per model before the cache restarts
_TOKEN_BLOCK = 8192  # tokens gathered at once when pooling (keeps the block in cache)


def _tokenizer_kinds(tokenizer: Any) -> tuple[dict[str, Any], list[str], list[str]]:
    """The tokenizer's JSON spec, its pre-tokenizer kinds and its normalizer kinds."""
    import json

    spec: dict[str, Any] = json.loads(tokenizer.to_str())

    def kinds(node: Any, key: str) -> list[str]:
        if node is None:
            return []
        if node.get("type") == "Sequence":
            return [k for child in node.get(key, []) for k in kinds(child, key)]
        return [str(node.get("type"))]

    return (
        spec,
        kinds(spec.get("pre_tokenizer"), "pretokenizers"),
        kinds(spec.get("normalizer"), "normalizers"),
    )


def _word_local(tokenizer: Any) -> bool:
    """Whether ``tokenizer`` tokenizes whitespace-separated words independently."""
    spec, pre, norm = _tokenizer_kinds(tokenizer)
    model_type = (spec.get("model") or {}).get("type")
    return (
        model_type == "WordPiece"
        and bool(pre)
        and all(k in _WORD_LOCAL_PRE_TOKENIZERS for k in pre)
        and all(k in _CHAR_LOCAL_NORMALIZERS for k in norm)
    )


# For an uncased BERT tokenizer a printable-ASCII word is lowercased and split into runs of
# letters/digits and single punctuation characters, nothing else.
_ASCII_PIECE = re.compile(r"[a-z0-9]+|[!-/:-@\[-`{-~]")


class _AsciiWordPiece:
    """Uncased BERT WordPiece for printable-ASCII words, in Python, over the tokenizer's own
    vocabulary: the same ids as the Rust tokenizer (checked in the tests) at a fraction of its
    per-word cost."""

    def __init__(self, model_spec: Mapping[str, Any], added_tokens: Sequence[str] = ()) -> None:
        # Added (special) tokens are matched in the raw text before normalisation: a word that
        # contains one is left to the real tokenizer.
        self.added = tuple(t for t in added_tokens if t)
        self.added_lower = tuple(t.lower() for t in self.added)
        vocab: dict[str, int] = dict(model_spec["vocab"])
        prefix = str(model_spec.get("continuing_subword_prefix") or "##")
        self.vocab = vocab
        self.continuing = {k[len(prefix) :]: v for k, v in vocab.items() if k.startswith(prefix)}
        self.unk = vocab[str(model_spec["unk_token"])]
        self.max_chars = int(model_spec.get("max_input_chars_per_word") or 100)
        self.pieces: dict[str, list[int]] = {}

    @classmethod
    def for_tokenizer(cls, tokenizer: Any) -> _AsciiWordPiece | None:
        spec, pre, norm = _tokenizer_kinds(tokenizer)
        normalizer = spec.get("normalizer") or {}
        model = spec.get("model") or {}
        if (
            pre == ["BertPreTokenizer"]
            and norm == ["BertNormalizer"]
            and normalizer.get("lowercase") is True
            and model.get("type") == "WordPiece"
            and isinstance(model.get("vocab"), dict)
        ):
            added = [str(t.get("content", "")) for t in spec.get("added_tokens") or []]
            return cls(model, added)
        return None

    def word(self, word: str) -> list[int] | None:
        """The ids of ``word``, or ``None`` when it is not printable ASCII."""
        if not (word.isascii() and word.isprintable()) or " " in word:
            return None
        lowered = word.lower()
        if self.added and (
            any(t in word for t in self.added) or any(t in lowered for t in self.added_lower)
        ):
            return None
        ids: list[int] = []
        known = self.pieces
        if len(known) > _WORD_CACHE_LIMIT:
            known.clear()
        for piece in _ASCII_PIECE.findall(lowered):
            found = known.get(piece)
            if found is None:
                found = known[piece] = self.piece(piece)
            ids.extend(found)
        return ids

    def piece(self, piece: str) -> list[int]:
        """Greedy longest-match-first WordPiece of one pre-token."""
        n = len(piece)
        if n > self.max_chars:
            return [self.unk]
        out: list[int] = []
        table = self.vocab
        start = 0
        while start < n:
            end = n
            while end > start:
                found = table.get(piece[start:end])
                if found is not None:
                    out.append(found)
                    break
                end -= 1
            else:
                return [self.unk]
            start = end
            table = self.continuing
        return out


class _WordPooler:
    """Mean pooling of a WordPiece static model with a per-word cache of token ids.

    Equivalent to ``StaticModel.encode`` (same ids, same mean; truncation at ``max_length``
    tokens), but the tokenizer only sees each distinct word once, which makes long texts
    several times faster to encode.
    """

    def __init__(self, model: StaticModel) -> None:
        self.tokenizer = model.tokenizer
        self.table = np.asarray(model.embedding, dtype=np.float32)
        rows, dim = self.table.shape
        # Texts are padded to a common length with an extra id, ``pad``, whose vector is a
        # zero row (and whose weight is zero). Ids index the tokenizer's vocabulary; a token
        # mapping, when the model has one, turns them into rows of the table.
        self.padded_table = np.vstack([self.table, np.zeros((1, dim), np.float32)])
        mapping = getattr(model, "token_mapping", None)
        weights = getattr(model, "weights", None)
        if mapping is not None:
            mapping = np.asarray(mapping, dtype=np.int64)
            self.pad = int(mapping.shape[0])
            self.padded_mapping: np.ndarray | None = np.concatenate([mapping, [rows]])
        else:
            self.pad = rows
            self.padded_mapping = None
        self.padded_weights = (
            None
            if weights is None
            else np.concatenate([np.asarray(weights, dtype=np.float32), [0.0]]).astype(np.float32)
        )
        self.unk = model.unk_token_id
        self.max_length: int | None = model.max_length
        self.words: dict[str, list[int]] = {}
        self.lock = threading.Lock()
        self.ascii = _AsciiWordPiece.for_tokenizer(self.tokenizer)

    def _learn(self, words: list[str]) -> None:
        # Unknown-token ids are dropped, as StaticModel.tokenize does.
        learned = self.words
        unk = self.unk
        rest: list[str] = []
        if self.ascii is not None:
            tokenize = self.ascii.word
            for word in words:
                ids = tokenize(word)
                if ids is None:
                    rest.append(word)
                else:
                    learned[word] = [i for i in ids if i != unk] if unk in ids else ids
        else:
            rest = words
        if not rest:
            return
        encodings = self.tokenizer.encode_batch_fast(rest, add_special_tokens=False)
        for word, encoding in zip(rest, encodings, strict=True):
            ids = encoding.ids
            learned[word] = [i for i in ids if i != unk] if unk is not None and unk in ids else ids

    def token_ids(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """The concatenated token ids of ``texts`` and each text's number of tokens."""
        splits = [text.split() for text in texts]
        words_per_text = np.fromiter(map(len, splits), dtype=np.int64, count=len(splits))
        all_words = list(chain.from_iterable(splits))
        with self.lock:
            unique = set(all_words)
            missing = [w for w in unique if w not in self.words]
            if missing:
                if len(self.words) + len(missing) > _WORD_CACHE_LIMIT:
                    self.words = {}
                    missing = list(unique)
                self._learn(missing)
            per_word = list(map(self.words.__getitem__, all_words))
        flat = np.fromiter(chain.from_iterable(per_word), dtype=np.int64)
        word_tokens = np.fromiter(map(len, per_word), dtype=np.int64, count=len(per_word))
        cumulative = np.concatenate(([0], np.cumsum(word_tokens)))
        word_ends = np.cumsum(words_per_text)
        lengths = cumulative[word_ends] - cumulative[word_ends - words_per_text]
        limit = self.max_length
        if limit is not None and lengths.size and int(lengths.max()) > limit:
            starts = np.repeat(np.cumsum(lengths) - lengths, lengths)
            flat = flat[np.arange(flat.size) - starts < limit]
            lengths = np.minimum(lengths, limit)
        return flat, lengths

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Mean token embedding of each text (not normalised; zero rows for no tokens).

        Texts are grouped by token count rounded up to a power of two and pooled as padded
        ``(texts, length, dim)`` blocks (the padding row is zero), which numpy sums several
        times faster than segment reductions; a sum never depends on the rest of the batch.
        """
        token_ids, lengths = self.token_ids(texts)
        dim = self.table.shape[1]
        out = np.zeros((len(texts), dim), dtype=np.float32)
        rows = np.flatnonzero(lengths)
        if rows.size == 0:
            return out
        starts = np.cumsum(lengths) - lengths
        padded = 1 << np.ceil(np.log2(lengths[rows])).astype(np.int64)
        for width in np.unique(padded).tolist():
            members = rows[padded == width]
            step = max(1, _TOKEN_BLOCK // width)
            for lo in range(0, members.size, step):
                block = members[lo : lo + step]
                out[block] = self._pool(token_ids, starts[block], lengths[block], width)
        out[rows] /= lengths[rows, None]
        return out

    def _pool(
        self, token_ids: np.ndarray, starts: np.ndarray, lengths: np.ndarray, width: int
    ) -> np.ndarray:
        """Sums of the token vectors of texts ``[starts, starts + lengths)``, ``width`` wide."""
        total = int(lengths.sum())
        offsets = np.arange(total) - np.repeat(np.cumsum(lengths) - lengths, lengths)
        index = np.full((lengths.size, width), self.pad, dtype=np.int64)
        index[np.arange(width)[None, :] < lengths[:, None]] = token_ids[
            np.repeat(starts, lengths) + offsets
        ]
        table_rows = index if self.padded_mapping is None else self.padded_mapping[index]
        vectors = self.padded_table[table_rows]
        if self.padded_weights is not None:
            vectors *= self.padded_weights[index][:, :, None]
        return np.asarray(vectors.sum(axis=1), dtype=np.float32)


class StaticEncoder:
    """An :class:`Encoder` over a model2vec model, loaded lazily on the first encode.

    WordPiece models (like the bundled one) are pooled by :class:`_WordPooler`, which gives
    ``StaticModel.encode``'s vectors faster on long texts. Other models go through
    ``StaticModel.encode``, which reconfigures its tokenizer on every call and so is not safe
    from two threads at once: those calls are serialised by a per-model lock.
    """

    def __init__(self, model_path: str | Path | None = None, *, batch_size: int = 2048) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        self.folder = check_model_dir(bundled_model_path() if model_path is None else model_path)
        self.batch_size = batch_size
        self._model: StaticModel | None = None
        self._pooler: _WordPooler | None = None
        self._init_lock = threading.Lock()

    @property
    def name(self) -> str:
        if self.folder == bundled_model_path():
            return f"bundled:{BUNDLED_MODEL}"
        return str(self.folder)

    @property
    def model(self) -> StaticModel:
        if self._model is None:
            with self._init_lock:
                if self._model is None:
                    model = load_static_model(self.folder)
                    if _word_local(model.tokenizer):
                        self._pooler = _WordPooler(model)
                    self._model = model
        return self._model

    @property
    def dim(self) -> int:
        return int(self.model.dim)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        model = self.model
        if not texts:
            return np.zeros((0, model.dim), dtype=np.float32)
        if self._pooler is not None:
            return normalize_rows(self._pooler.encode(texts))
        with _lock_for(self.folder):
            vectors: Any = model.encode(
                list(texts),
                batch_size=self.batch_size,
                use_multiprocessing=False,
                show_progress_bar=False,
                normalize=True,
            )
        return normalize_rows(np.asarray(vectors, dtype=np.float32).reshape(len(texts), -1))

    def __repr__(self) -> str:
        return f"StaticEncoder({self.name!r})"


_ENCODE_LOCKS: dict[Path, threading.Lock] = {}


def _lock_for(folder: Path) -> threading.Lock:
    lock = _ENCODE_LOCKS.get(folder)
    if lock is None:
        with _MODELS_LOCK:
            lock = _ENCODE_LOCKS.setdefault(folder, threading.Lock())
    return lock


_ENCODERS: dict[Path, StaticEncoder] = {}


def get_encoder(model_path: str | Path | None = None) -> StaticEncoder:
    """The shared :class:`StaticEncoder` of ``model_path`` (``None``: the bundled model)."""
    folder = check_model_dir(bundled_model_path() if model_path is None else model_path)
    encoder = _ENCODERS.get(folder)
    if encoder is None:
        with _MODELS_LOCK:
            encoder = _ENCODERS.setdefault(folder, StaticEncoder(folder))
    return encoder
