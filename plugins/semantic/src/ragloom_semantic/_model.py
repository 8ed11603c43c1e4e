"""Loading model2vec static models from local folders, cached per path, and encoding with them.

Pure module: needs numpy and (on first encode) model2vec, not the ragloom core. A model is only
ever read from a local folder: a path that is not a model folder is refused before model2vec
sees it, because model2vec would otherwise take a missing folder for a hub repository name.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Mapping, Sequence
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
    "model_digest",
    "model_files",
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


_DIGESTS: dict[tuple[Path, tuple[tuple[str, int, int], ...]], str] = {}


def model_files(folder: Path) -> list[Path]:
    """The files of a model folder that decide its vectors (config, tokenizer, weights)."""
    names = [*_REQUIRED_FILES, *_WEIGHT_FILES, "modules.json"]
    return [folder / name for name in names if (folder / name).is_file()]


def model_digest(path: str | Path | None = None) -> str:
    """SHA-256 (hex) over the names and bytes of the model's :func:`model_files`.

    Equal for the same model wherever it lies; different when any of those files changes.
    Remembered per folder while the files' sizes and modification times stay the same.
    """
    folder = check_model_dir(bundled_model_path() if path is None else path)
    files = model_files(folder)
    stats = tuple(
        (f.relative_to(folder).as_posix(), st.st_size, st.st_mtime_ns)
        for f in files
        for st in (f.stat(),)
    )
    key = (folder, stats)
    digest = _DIGESTS.get(key)
    if digest is None:
        import hashlib

        h = hashlib.sha256()
        for f, (name, size, _) in zip(files, stats, strict=True):
            h.update(f"{name}\0{size}\0".encode())
            with f.open("rb") as stream:
                for block in iter(lambda s=stream: s.read(1 << 20), b""):
                    h.update(block)
        digest = _DIGESTS[key] = h.hexdigest()
    return digest


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


def header_dimension(folder: Path) -> int | None:
    """The second axis of the ``embeddings`` tensor in the model's safetensors header (what
    ``StaticModel.dim`` reports once loaded), read without the weights; ``None`` when the file
    does not state it plainly."""
    import json

    path = next((folder / n for n in _WEIGHT_FILES if (folder / n).is_file()), None)
    if path is None:
        return None
    try:
        with path.open("rb") as stream:
            size = int.from_bytes(stream.read(8), "little")
            if not 0 < size <= 1 << 24:
                return None
            shape = json.loads(stream.read(size))["embeddings"]["shape"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if (
        isinstance(shape, list)
        and len(shape) == 2
        and all(type(v) is int for v in shape)
        and shape[1] > 0
    ):
        return int(shape[1])
    return None


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
_WORD_CACHE_LIMIT = 100_000  # distinct words remembered per model before the cache restarts
_PIECE_CACHE_LIMIT = 200_000  # distinct ASCII word pieces remembered before that cache restarts
_POOL_ROWS = 256  # texts summed together (their running sums stay in the CPU cache)
# Joins a batch's texts into one string that is split once; a text that holds it is split alone.
_TEXT_SEPARATOR = "\ufdd0"  # a Unicode noncharacter: never whitespace, never in real text
# Whitespace to str.split() but control characters that a BERT normalizer deletes (Cc).
_SPLIT_BUT_DELETED = re.compile("[\x0b\x0c\x1c-\x1f\x85]")
# Joins new ASCII words for one regular-expression pass; never in a printable word.
_WORD_SEPARATOR = "\x01"


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


#: Row numbers as Python ints, made in blocks of ``_NUMBER_BLOCK`` and shared by every cache.
#: A row number made when its key is learned is a small object allocated among the many
#: short-lived ones of a batch (the floats of its vectors among them): kept by the cache, it
#: would keep their memory pages from going back to Python's allocator, and over a long run
#: the cache would hold far more memory than its own size. Made in a block, they sit together.
_NUMBERS: list[int] = []
_NUMBER_BLOCK = 1 << 16
_NUMBERS_LOCK = threading.Lock()  # one thread extends the list at a time (no duplicated block)


class _Keys(dict[str, int]):
    """Key -> row number; an unknown key gets the next row and is queued in ``pending``."""

    __slots__ = ("pending",)

    def __init__(self) -> None:
        super().__init__()
        self.pending: list[str] = []

    def __missing__(self, key: str) -> int:
        row = len(self)
        if row >= len(_NUMBERS):
            with _NUMBERS_LOCK:
                if row >= len(_NUMBERS):
                    _NUMBERS.extend(range(len(_NUMBERS), row + _NUMBER_BLOCK))
        self[key] = number = _NUMBERS[row]
        self.pending.append(key)
        return number


class _TokenCache:
    """Strings (words, word pieces) and their token ids, kept as rows of one flat array.

    :meth:`rows` maps a list of strings to row numbers, learning the unknown ones in one call
    of ``learn`` (which returns each one's token count and their ids, concatenated);
    :meth:`take` gathers the ids of many rows with array operations only, so a batch costs one
    dictionary lookup per string and no per-string Python work once the strings are known.
    ``reserved`` strings have no tokens. Past ``limit`` strings the cache restarts.
    """

    def __init__(
        self,
        learn: Callable[[list[str]], tuple[np.ndarray, np.ndarray]],
        limit: Callable[[], int],
        reserved: Sequence[str] = (),
    ) -> None:
        self._learn = learn
        self._limit = limit
        self._reserved = tuple(reserved)
        self._restart()

    def _restart(self) -> None:
        self.keys = _Keys()
        self.starts = np.zeros(1024, dtype=np.int64)
        self.lengths = np.zeros(1024, dtype=np.int64)
        self.values = np.zeros(8192, dtype=np.int32)
        self.size = 0
        for key in self._reserved:
            self.keys[key]  # registers the key, with no tokens
        self.keys.pending.clear()

    def __len__(self) -> int:
        return len(self.keys)

    def rows(self, keys: Sequence[str]) -> np.ndarray:
        """The row of each key (int64), learning the keys not seen before."""
        if len(self.keys) > self._limit():
            self._restart()
        rows = np.fromiter(map(self.keys.__getitem__, keys), dtype=np.int64, count=len(keys))
        pending = self.keys.pending
        if pending:
            self.keys.pending = []
            lengths, values = self._learn(pending)
            self._append(lengths, values)
        return rows

    def _append(self, lengths: np.ndarray, values: np.ndarray) -> None:
        first = len(self.keys) - lengths.size
        end = first + lengths.size
        if end > self.starts.size:
            grown = max(end, 2 * self.starts.size)
            self.starts = np.resize(self.starts, grown)
            self.lengths = np.resize(self.lengths, grown)
        if self.size + values.size > self.values.size:
            self.values = np.resize(self.values, max(self.size + values.size, 2 * self.values.size))
        self.starts[first:end] = self.size + np.cumsum(lengths) - lengths
        self.lengths[first:end] = lengths
        self.values[self.size : self.size + values.size] = values
        self.size += values.size

    def take(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The ids of ``rows`` concatenated, and the running token count after each row."""
        lengths = self.lengths[rows]
        ends = np.cumsum(lengths)
        total = int(ends[-1]) if ends.size else 0
        flat = self.values[np.repeat(self.starts[rows] - (ends - lengths), lengths)
                           + np.arange(total)]
        return flat, ends


def _drop(ids: Sequence[int], unk: int | None) -> list[int]:
    return [i for i in ids if i != unk] if unk is not None and unk in ids else list(ids)


def _ragged(pieces: Sequence[Sequence[int]]) -> tuple[np.ndarray, np.ndarray]:
    lengths = np.fromiter(map(len, pieces), dtype=np.int64, count=len(pieces))
    flat = np.fromiter(chain.from_iterable(pieces), dtype=np.int32, count=int(lengths.sum()))
    return lengths, flat


# For an uncased BERT tokenizer a printable-ASCII word is lowercased and split into runs of
# letters/digits and single punctuation characters, nothing else.
_ASCII_PIECE = re.compile(r"[a-z0-9]+|[!-/:-@\[-`{-~]")
_ASCII_PIECE_OR_SEPARATOR = re.compile(r"[a-z0-9]+|[!-/:-@\[-`{-~]|" + _WORD_SEPARATOR)


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
        # Pieces with their ids less the unknown token, for :meth:`words`; the separator has none.
        self.known = _TokenCache(
            lambda new: _ragged([_drop(self.piece(p), self.unk) for p in new]),
            lambda: _PIECE_CACHE_LIMIT,
            reserved=(_WORD_SEPARATOR,),
        )

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

    def _has_added(self, text: str) -> bool:
        if not self.added:
            return False
        lowered = text.lower()
        return any(t in text for t in self.added) or any(t in lowered for t in self.added_lower)

    def handles(self, word: str) -> bool:
        """Whether ``word`` is printable ASCII without spaces or added tokens."""
        return (
            word.isascii() and word.isprintable() and " " not in word
            and not self._has_added(word)
        )

    def handled(self, words: Sequence[str]) -> list[bool]:
        """:meth:`handles` of each of ``words`` (whitespace-free), checked on all at once
        when they are all printable ASCII."""
        probe = " ".join(words)
        if probe.isascii() and probe.isprintable() and not self._has_added(probe):
            return [True] * len(words)
        if self._has_added(probe):
            return [self.handles(w) for w in words]
        return [w.isascii() and w.isprintable() for w in words]

    def word(self, word: str) -> list[int] | None:
        """The ids of ``word``, or ``None`` when it is not printable ASCII."""
        if not self.handles(word):
            return None
        ids: list[int] = []
        known = self.pieces
        if len(known) > _WORD_CACHE_LIMIT:
            known.clear()
        for piece in _ASCII_PIECE.findall(word.lower()):
            found = known.get(piece)
            if found is None:
                found = known[piece] = self.piece(piece)
            ids.extend(found)
        return ids

    def words(self, words: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """Token counts and concatenated ids (less the unknown token) of words it
        :meth:`handles`: one regular-expression pass over all of them, then array operations.
        """
        if not words:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int32)
        joined = _WORD_SEPARATOR.join(words).lower()
        pieces = _ASCII_PIECE_OR_SEPARATOR.findall(joined)
        rows = self.known.rows(pieces)
        flat, ends = self.known.take(rows)
        # Word i's tokens end where its separator (or the last piece) is.
        word_ends = np.append(np.flatnonzero(rows == 0), rows.size)
        token_ends = np.concatenate(([0], ends))[word_ends]
        return np.diff(token_ends, prepend=0), flat

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
    tokens), but each distinct word is tokenized once (new printable-ASCII words in one batch),
    and a batch of known words costs a dictionary lookup per word and array operations.
    """

    def __init__(self, model: StaticModel | _LocalWordPiece) -> None:
        self.tokenizer = model.tokenizer
        self.table = np.asarray(model.embedding, dtype=np.float32)
        mapping = getattr(model, "token_mapping", None)
        weights = getattr(model, "weights", None)
        # Ids index the tokenizer's vocabulary; a token mapping, when the model has one, turns
        # them into rows of the table; weights, when it has them, scale each token's vector.
        self.mapping = None if mapping is None else np.asarray(mapping, dtype=np.int64)
        self.weights = None if weights is None else np.asarray(weights, dtype=np.float32)
        self.unk = model.unk_token_id
        self.max_length: int | None = model.max_length
        self.lock = threading.Lock()
        self.ascii = _AsciiWordPiece.for_tokenizer(self.tokenizer)
        # A BERT normalizer that cleans text deletes control characters before splitting:
        # those that Python's str.split() takes for whitespace must go before it splits.
        spec, _, _ = _tokenizer_kinds(self.tokenizer)
        normalizer = spec.get("normalizer") or {}
        cleans = normalizer.get("type") == "BertNormalizer" and normalizer.get("clean_text")
        self.removed = _SPLIT_BUT_DELETED if cleans else None
        self.cache = _TokenCache(
            self._learn, lambda: _WORD_CACHE_LIMIT, reserved=(_TEXT_SEPARATOR,)
        )

    @property
    def words(self) -> dict[str, int]:
        """The words whose token ids are cached (with their rows)."""
        return self.cache.keys

    def _learn(self, words: list[str]) -> tuple[np.ndarray, np.ndarray]:
        # Unknown-token ids are dropped, as StaticModel.tokenize does.
        if self.ascii is None:
            fast: list[int] = []
            rest = words
        else:
            handled = self.ascii.handled(words)
            fast = [i for i, ok in enumerate(handled) if ok]
            if len(fast) == len(words):
                return self.ascii.words(words)
            rest = [w for w, ok in zip(words, handled, strict=True) if not ok]
        encodings = self.tokenizer.encode_batch_fast(rest, add_special_tokens=False) if rest else []
        rest_lengths, rest_ids = _ragged([_drop(e.ids, self.unk) for e in encodings])
        if not fast:
            return rest_lengths, rest_ids
        assert self.ascii is not None
        fast_lengths, fast_ids = self.ascii.words([words[i] for i in fast])
        # Interleave the two sets back into the order of ``words``.
        lengths = np.empty(len(words), dtype=np.int64)
        is_fast = np.zeros(len(words), dtype=bool)
        is_fast[fast] = True
        lengths[is_fast] = fast_lengths
        lengths[~is_fast] = rest_lengths
        starts = np.empty(len(words), dtype=np.int64)
        starts[is_fast] = np.cumsum(fast_lengths) - fast_lengths
        starts[~is_fast] = fast_ids.size + np.cumsum(rest_lengths) - rest_lengths
        values = np.concatenate((fast_ids, rest_ids))
        ends = np.cumsum(lengths)
        total = int(ends[-1]) if ends.size else 0
        return lengths, values[np.repeat(starts - (ends - lengths), lengths) + np.arange(total)]

    def token_ids(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """The concatenated token ids of ``texts`` and each text's number of tokens."""
        if not texts:
            return np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.int64)
        removed = self.removed
        joined = not any(_TEXT_SEPARATOR in text for text in texts)
        if joined:
            # One split of the whole batch; the separator words (row 0) end the texts.
            batch = f" {_TEXT_SEPARATOR} ".join(texts)
            if removed is not None and removed.search(batch):
                batch = removed.sub("", batch)
            words = batch.split()
        else:
            if removed is not None:
                texts = [removed.sub("", text) for text in texts]
            splits = [text.split() for text in texts]
            counts = np.fromiter(map(len, splits), dtype=np.int64, count=len(splits))
            words = list(chain.from_iterable(splits))
        with self.lock:
            rows = self.cache.rows(words)
            flat, ends = self.cache.take(rows)
        text_ends = (
            np.append(np.flatnonzero(rows == 0), rows.size) if joined else np.cumsum(counts)
        )
        lengths = np.diff(np.concatenate(([0], ends))[text_ends], prepend=0)
        limit = self.max_length
        if limit is not None and lengths.size and int(lengths.max()) > limit:
            starts = np.repeat(np.cumsum(lengths) - lengths, lengths)
            flat = flat[np.arange(flat.size) - starts < limit]
            lengths = np.minimum(lengths, limit)
        return flat, lengths

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Mean token embedding of each text (not normalised; zero rows for no tokens)."""
        token_ids, lengths = self.token_ids(texts)
        out = self.sums(token_ids, lengths)
        rows = np.flatnonzero(lengths)
        out[rows] /= lengths[rows, None]
        return out

    def sums(self, token_ids: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        """Sum of the token vectors of each text (``lengths[i]`` ids each, concatenated).

        Texts are taken longest first in groups of ``_POOL_ROWS``; a group's running sums
        (small enough to stay in the CPU cache) get the ``j``-th token vector of every text
        that has one, for ``j`` from 0 to its longest length. Each text's sum is therefore
        added up in token order whatever else is in the batch: a text gets the same vector
        alone or in any batch.
        """
        dim = self.table.shape[1]
        out = np.zeros((lengths.size, dim), dtype=np.float32)
        starts = np.cumsum(lengths) - lengths
        order = np.argsort(-lengths, kind="stable")
        table, mapping, weights = self.table, self.mapping, self.weights
        for lo in range(0, order.size, _POOL_ROWS):
            group = order[lo : lo + _POOL_ROWS]
            sizes = lengths[group]
            longest = int(sizes[0])
            if longest == 0:
                break
            # How many texts of the group (longest first) have a j-th token, for each j.
            active = sizes.size - np.searchsorted(sizes[::-1], np.arange(longest), side="right")
            first = starts[group]
            acc = np.zeros((sizes.size, dim), dtype=np.float32)
            for j, count in enumerate(active.tolist()):
                ids = token_ids[first[:count] + j]
                vectors = table[ids if mapping is None else mapping[ids]]
                if weights is not None:
                    vectors *= weights[ids][:, None]
                acc[:count] += vectors
            out[group] = acc
        return out


class _LocalWordPiece:
    """What :class:`_WordPooler` needs of a model, read straight from a model2vec folder.

    ``StaticModel.from_pretrained`` imports ``huggingface_hub`` (for model cards and
    downloads), which costs several times what reading the files does; a WordPiece model in
    model2vec's own layout (``config.json``, ``tokenizer.json``, ``model.safetensors`` with an
    ``embeddings`` tensor) is read here the way it reads one, without that import.
    """

    def __init__(self, tokenizer: Any, embedding: np.ndarray, weights: np.ndarray | None,
                 mapping: np.ndarray | None, max_length: int | None) -> None:
        self.tokenizer = tokenizer
        self.embedding = embedding
        self.weights = weights
        self.token_mapping = mapping
        self.max_length = max_length
        self.unk_token_id = _unk_token_id(tokenizer)

    @property
    def dim(self) -> int:
        return int(self.embedding.shape[1])

    @classmethod
    def read(cls, folder: Path) -> _LocalWordPiece | None:
        """The model in ``folder``, or ``None`` when it is not a WordPiece model in model2vec's
        layout (then ``StaticModel`` loads it)."""
        import json

        files = [folder / n for n in ("config.json", "tokenizer.json", "model.safetensors")]
        if not all(f.is_file() for f in files):
            return None
        from safetensors import safe_open
        from tokenizers import Tokenizer

        try:
            config = json.loads(files[0].read_text(encoding="utf-8"))
            tokenizer = Tokenizer.from_file(str(files[1]))
            with safe_open(str(files[2]), framework="numpy") as tensors:
                names = set(tensors.keys())
                if "embeddings" not in names:
                    return None
                embedding = tensors.get_tensor("embeddings")
                weights = tensors.get_tensor("weights") if "weights" in names else None
                mapping = tensors.get_tensor("mapping") if "mapping" in names else None
        except Exception:  # noqa: BLE001 - anything odd: StaticModel loads it (or says why)
            return None
        if not isinstance(config, dict) or embedding.ndim != 2 or not _word_local(tokenizer):
            return None
        if mapping is None and embedding.shape[0] != tokenizer.get_vocab_size():
            return None
        padding = tokenizer.padding  # as StaticModel: no padding, the pad token kept
        if padding is not None:
            tokenizer.enable_padding(
                pad_id=padding["pad_id"], pad_token=padding["pad_token"],
                pad_type_id=padding["pad_type_id"], length=0,
            )
        max_length = config.get("max_length", 512)
        return cls(tokenizer, embedding, weights, mapping, max_length)


def _unk_token_id(tokenizer: Any) -> int | None:
    """The unknown token's id, as ``StaticModel`` finds it."""
    token = getattr(tokenizer.model, "unk_token", None)
    return None if token is None else tokenizer.token_to_id(token)


class StaticEncoder:
    """An :class:`Encoder` over a model2vec model, loaded lazily on the first encode.

    WordPiece models (like the bundled one) are pooled by :class:`_WordPooler`, which gives
    ``StaticModel.encode``'s vectors faster on long texts; in model2vec's folder layout they
    are read without model2vec (whose loader imports ``huggingface_hub``, most of a second).
    Other models go through ``StaticModel.encode``, which reconfigures its tokenizer on every
    call and so is not safe from two threads at once: those calls are serialised by a
    per-model lock.
    """

    def __init__(self, model_path: str | Path | None = None, *, batch_size: int = 2048) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        self.folder = check_model_dir(bundled_model_path() if model_path is None else model_path)
        self.batch_size = batch_size
        self._model: StaticModel | None = None
        self._pooler: _WordPooler | None = None
        self._dim: int | None = None
        self._init_lock = threading.Lock()

    @property
    def name(self) -> str:
        if self.folder == bundled_model_path():
            return f"bundled:{BUNDLED_MODEL}"
        return str(self.folder)

    def __ragloom_identity__(self) -> dict[str, str]:
        """What a cache keys this encoder's results by: its model's files (not their path)."""
        return {"model": model_digest(self.folder)}

    @property
    def model(self) -> StaticModel:
        """model2vec's ``StaticModel`` of the folder (loaded on first use, with what encoding
        needs when that is not loaded yet)."""
        if self._model is None:
            with self._init_lock:
                if self._model is None:
                    model = load_static_model(self.folder)
                    if self._dim is None:
                        if _word_local(model.tokenizer):
                            self._pooler = _WordPooler(model)
                        self._dim = int(model.dim)
                    self._model = model
        return self._model

    def _ready(self) -> None:
        """Load what encoding needs: the pooler of a WordPiece model, else the model."""
        if self._dim is not None:
            return
        with self._init_lock:
            if self._dim is None:
                local = _LocalWordPiece.read(self.folder)
                if local is not None:
                    self._pooler = _WordPooler(local)
                    self._dim = local.dim
        if self._dim is None:
            self.model  # noqa: B018 - loads the model (and the pooler, if it has one)

    @property
    def dim(self) -> int:
        """The vector dimension; read from the weights file's header while the model is not
        loaded (asking for it, e.g. to check an index, does not load the model)."""
        if self._dim is None:
            found = header_dimension(self.folder)
            if found is not None:
                return found
            self._ready()
        assert self._dim is not None
        return self._dim

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        self._ready()
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        if self._pooler is not None:
            return normalize_rows(self._pooler.encode(texts))
        model = self.model
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
