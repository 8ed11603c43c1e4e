"""Token lengths: chunk sizes counted in the tokens of a tokenizer, offline.

- :class:`TokenCount` (``"tokens"``): a Hugging Face ``tokenizer.json`` (the ``tokenizers``
  library). Without a file it uses the tokenizer of the model bundled with ragloom-semantic
  (``m2v-minilm-256``, a BERT WordPiece tokenizer), found on disk without importing it.
- :class:`TiktokenCount` (``"tiktoken"``): a tiktoken encoding (``cl100k_base``, ``o200k_base``,
  ...) read from a local ``.tiktoken`` file. Nothing is ever downloaded: without the file it
  refuses, saying so.

Counts are the tokens of the text alone, without the special tokens a model adds around an
input (``[CLS]``, ``[SEP]``): leave room for them in ``chunk_size`` (e.g. 510 for a model that
reads 512). Truncation and padding configured in a ``tokenizer.json`` are turned off, so a
count is never capped.

Counting is exact. For tokenizers whose tokens never cross whitespace (BERT-style) or a space
after a word (GPT-style byte-level regexes), chunkers count a whole text once by its memoized
units (:mod:`ragloom_text._counting`) instead of re-tokenizing candidate chunks; any other
tokenizer is still exact, only slower.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import json
import os
import re
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ragloom import ConfigurationError

from ragloom_text._counting import UnitCounter, UnitCounts
from ragloom_text._named import NamedLength

__all__ = [
    "DEFAULT_TOKENIZER",
    "TiktokenCount",
    "TokenCount",
    "default_tokenizer_path",
    "forget_tokenizers",
]

#: Where the default tokenizer lives: a package and the file's path inside it.
DEFAULT_TOKENIZER = ("ragloom_semantic", "models/m2v-minilm-256/tokenizer.json")


def default_tokenizer_path() -> Path | None:
    """The bundled model's ``tokenizer.json`` if ragloom-semantic is installed, else ``None``.

    Found with ``importlib.util.find_spec``, which locates the package without importing it.
    """
    package, relative = DEFAULT_TOKENIZER
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        return None
    for root in (spec.submodule_search_locations or []) if spec else []:
        path = Path(root, relative)
        if path.is_file():
            return path
    return None


class _Engine:
    """A loaded tokenizer: exact counts of one text, of many, and of a text's slices."""

    digest: str
    units: UnitCounter | None

    def count(self, text: str) -> int:
        raise NotImplementedError

    def count_many(self, texts: list[str]) -> list[int]:
        return [self.count(t) for t in texts]


_ENGINES: dict[tuple[str, str, int, int], _Engine] = {}
_ENGINES_LOCK = threading.Lock()


def forget_tokenizers() -> None:
    """Drop the loaded tokenizers and their memoized counts (they load again when next used),
    e.g. to free memory after a large run."""
    with _ENGINES_LOCK:
        _ENGINES.clear()


def _cached_engine(kind: str, path: Path, build: Any) -> _Engine:
    """One engine per file version and settings: chunkers that share a tokenizer share its
    memo. Keyed by the file's path, modification time and size, so an edited file reloads."""
    try:
        stat = path.stat()
    except OSError as exc:
        raise ConfigurationError(f"{kind} file {str(path)!r} cannot be read: {exc}") from None
    if not path.is_file():
        raise ConfigurationError(f"{kind} file {str(path)!r} is not a file")
    key = (kind, str(path.resolve()), stat.st_mtime_ns, stat.st_size)
    with _ENGINES_LOCK:
        engine = _ENGINES.get(key)
    if engine is None:
        engine = build()
        with _ENGINES_LOCK:
            if len(_ENGINES) >= 16:
                _ENGINES.clear()
            engine = _ENGINES.setdefault(key, engine)
    return engine


# -- Hugging Face tokenizers ---------------------------------------------------------------------

# Normalizers that act character by character and never turn " \t\n\r" into anything but
# whitespace: a text normalized whole equals its whitespace-separated units normalized alone.
_LOCAL_NORMALIZERS = frozenset(
    {"BertNormalizer", "Lowercase", "NFC", "NFD", "NFKC", "NFKD", "StripAccents", "Strip"}
)
# Pre-tokenizers that split at whitespace and drop it, and those that only split further.
_WHITESPACE_SPLITTERS = frozenset({"BertPreTokenizer", "Whitespace", "WhitespaceSplit"})
_FURTHER_SPLITTERS = frozenset({"Punctuation", "Digits"})


def _local_normalizer(spec: Any) -> bool:
    if spec is None:
        return True
    if not isinstance(spec, Mapping):
        return False
    if spec.get("type") == "Sequence":
        return all(_local_normalizer(n) for n in spec.get("normalizers") or [])
    return spec.get("type") in _LOCAL_NORMALIZERS


def _pre_tokenizers(spec: Any) -> list[Mapping[str, Any]] | None:
    if not isinstance(spec, Mapping):
        return None
    if spec.get("type") == "Sequence":
        members = spec.get("pretokenizers") or []
        return [m for m in members if isinstance(m, Mapping)] if members else None
    return [spec]


#: Cut points of a text for a whitespace-splitting tokenizer: runs of whitespace.
WHITESPACE_UNITS = re.compile(r"([ \t\n\r]+)")
#: Cut points for GPT-style byte-level regexes: before a space that follows a non-space.
SPACE_UNITS = re.compile(r"(?<=\S)(?= )")
_ASCII_PUNCTUATION = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"
# CJK ideographs a BERT normalizer isolates (``handle_chinese_chars``), in the Basic
# Multilingual Plane
_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"


def _bert_units(config: Mapping[str, Any]) -> re.Pattern[str]:
    """Cut points for BERT's pre-tokenizer, which also isolates every punctuation character
    (and the normalizer every CJK ideograph): runs of whitespace and those characters. A
    character that appears in an added token (``[UNK]``) is left out, so that an added token
    in the text is never cut."""
    in_added = {ch for added in config.get("added_tokens") or [] for ch in str(added["content"])}
    marks = "".join(re.escape(ch) for ch in _ASCII_PUNCTUATION if ch not in in_added)
    normalizer = config.get("normalizer") or {}
    if (
        normalizer.get("type") == "BertNormalizer"
        and normalizer.get("handle_chinese_chars")
        and not any(re.match(f"[{_CJK}]", ch) for ch in in_added)
    ):
        marks += _CJK
    return re.compile(f"([ \\t\\n\\r{marks}]+)")


def hf_unit_pattern(config: Mapping[str, Any]) -> re.Pattern[str] | None:
    """How a Hugging Face tokenizer's texts can be cut into independently counted units.

    For a whitespace-splitting pre-tokenizer after a character-local normalizer: runs of
    whitespace (and, for BERT's pre-tokenizer, of punctuation); for the GPT-2 byte-level
    regex without a normalizer or a prefix space: before each space that follows a non-space;
    ``None`` otherwise (counts stay exact: chunkers then measure candidate slices). Added tokens
    containing whitespace, or stripping it around them, rule both out.
    """
    for added in config.get("added_tokens") or []:
        content = str(added.get("content", ""))
        if any(ch.isspace() for ch in content) or added.get("lstrip") or added.get("rstrip"):
            return None
    members = _pre_tokenizers(config.get("pre_tokenizer"))
    if not members:
        return None
    types = [m.get("type") for m in members]
    normalizer = config.get("normalizer")
    if (
        _local_normalizer(normalizer)
        and any(t in _WHITESPACE_SPLITTERS for t in types)
        and all(t in _WHITESPACE_SPLITTERS or t in _FURTHER_SPLITTERS for t in types)
    ):
        return _bert_units(config) if types == ["BertPreTokenizer"] else WHITESPACE_UNITS
    if (
        normalizer is None
        and types == ["ByteLevel"]
        and not members[0].get("add_prefix_space", True)
        and members[0].get("use_regex", True)
    ):
        return SPACE_UNITS
    return None


class _HuggingFace(_Engine):
    def __init__(self, path: Path) -> None:
        try:
            from tokenizers import Tokenizer
        except ImportError:
            from ragloom.plugins import install_hint

            raise ConfigurationError(
                "length_function 'tokens' needs the tokenizers package: "
                f"{install_hint('ragloom-text', 'tokens')}"
            ) from None
        data = path.read_bytes()
        try:
            text = data.decode("utf-8")
            config = json.loads(text)
            tokenizer = Tokenizer.from_str(text)
        except Exception as exc:  # noqa: BLE001 - any parse failure means "not a tokenizer.json"
            raise ConfigurationError(
                f"{str(path)!r} is not a Hugging Face tokenizer file (tokenizer.json): "
                f"{type(exc).__name__}: {exc}"
            ) from None
        model = config.get("model") if isinstance(config, Mapping) else None
        if isinstance(model, Mapping) and model.get("dropout"):
            raise ConfigurationError(
                f"tokenizer {str(path)!r} uses BPE dropout: its counts change from call to "
                "call, so chunk sizes could not be kept"
            )
        tokenizer.no_truncation()
        tokenizer.no_padding()
        self.tokenizer = tokenizer
        self.digest = hashlib.sha256(data).hexdigest()
        pattern = hf_unit_pattern(config)
        self.units = UnitCounter(self.count_many, pattern) if pattern else None
        batch = getattr(tokenizer, "encode_batch_fast", None) or tokenizer.encode_batch
        self._batch = batch

    def count(self, text: str) -> int:
        return len(self.tokenizer.encode(text, add_special_tokens=False))

    def count_many(self, texts: list[str]) -> list[int]:
        if len(texts) < 64:  # a batch pays for threads: small ones go one by one
            encode = self.tokenizer.encode
            return [len(encode(t, add_special_tokens=False)) for t in texts]
        return [len(e) for e in self._batch(texts, add_special_tokens=False)]


class TokenCount(NamedLength):
    """Tokens of a Hugging Face tokenizer (``tokenizer.json``), special tokens not counted.

    Args:
        tokenizer: path of a ``tokenizer.json``; ``None`` (default) uses the tokenizer of the
            model bundled with ragloom-semantic. A relative path is read from the current
            directory.

    Raises:
        ConfigurationError: no tokenizer (none given and ragloom-semantic not installed), a
            missing or invalid file, or the ``tokenizers`` package not installed.
    """

    name = "tokens"

    def __init__(self, tokenizer: str | None = None) -> None:
        if tokenizer is not None and not isinstance(tokenizer, str | os.PathLike):
            raise ConfigurationError(
                f"tokenizer must be a path to a tokenizer.json, got {type(tokenizer).__name__}"
            )
        self.tokenizer = None if tokenizer is None else os.fspath(tokenizer)
        if self.tokenizer is not None:
            path = Path(os.path.expanduser(self.tokenizer))
        else:
            found = default_tokenizer_path()
            if found is None:
                raise ConfigurationError(
                    "length_function 'tokens' has no tokenizer: pass tokenizer='path/to/"
                    "tokenizer.json' (a Hugging Face tokenizer file), or install "
                    "ragloom-semantic, whose bundled model's tokenizer is the default"
                )
            path = found
        self.path = path
        self._engine = _cached_engine("tokenizer", path, lambda: _HuggingFace(path))

    def __call__(self, text: str, /) -> int:
        return self._engine.count(text)

    def slice_counts(self, text: str) -> UnitCounts | None:
        """Exact counts of every slice of ``text`` (``None``: this tokenizer has no units)."""
        units = self._engine.units
        return units.counts(text) if units is not None else None

    def config(self) -> dict[str, Any]:
        return {} if self.tokenizer is None else {"tokenizer": self.tokenizer}

    def fingerprint(self) -> str:
        """SHA-256 of the tokenizer file: a changed file changes every cache identity."""
        return self._engine.digest

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.tokenizer,))


# -- tiktoken ------------------------------------------------------------------------------------

_CAPTURE_LOCK = threading.Lock()

# SHA-256 of the split patterns of the OpenAI encodings (as tiktoken 0.14 defines them) for
# which a space that follows a non-space always starts a new piece: units then split there.
_SPACE_SPLIT_PATTERNS = frozenset(
    {
        "bf51d578af57187876ec1c8a34fb0ee2fb3025c50ce663ac154b633ae39de092",  # r50k, p50k
        "f021c3d976978e62ee64cdad150cc3405c2e3d6e3b40407850bb9e8d9eb65899",  # cl100k
        "2d1b8dc11e89af71459b36004f698ab3693f59fd84f63e8ec2b49564ab857420",  # o200k
    }
)


def _encoding_spec(encoding: str) -> tuple[dict[str, Any], str | None]:
    """The pattern and special tokens tiktoken defines for ``encoding`` (an encoding or a
    model name), and the SHA-256 of its official ranks file, without reading any file.

    tiktoken's constructors load the ranks from a URL; the loader is swapped for one that only
    records the expected hash, so nothing is downloaded.
    """
    try:
        import tiktoken
        import tiktoken.model
        from tiktoken_ext import openai_public
    except ImportError:
        from ragloom.plugins import install_hint

        raise ConfigurationError(
            "length_function 'tiktoken' needs the tiktoken package: "
            f"{install_hint('ragloom-text', 'tiktoken')}"
        ) from None
    name = encoding
    if name not in openai_public.ENCODING_CONSTRUCTORS:
        try:
            name = tiktoken.model.encoding_name_for_model(encoding)
        except KeyError:
            known = sorted(k for k in openai_public.ENCODING_CONSTRUCTORS if k != "gpt2")
            raise ConfigurationError(
                f"unknown tiktoken encoding {encoding!r}; known encodings: {', '.join(known)} "
                "(or a model name such as 'gpt-4o')"
            ) from None
    if name == "gpt2":
        name = "r50k_base"  # the same encoding, shipped as one ranks file
    if not hasattr(openai_public, "load_tiktoken_bpe"):
        raise ConfigurationError(
            f"this tiktoken version ({getattr(tiktoken, '__version__', '?')}) defines its "
            "encodings differently; ragloom-text cannot read them offline"
        )
    expected: list[str | None] = []

    def record(_url: str, expected_hash: str | None = None) -> dict[bytes, int]:
        expected.append(expected_hash)
        return {}

    with _CAPTURE_LOCK:
        saved = openai_public.load_tiktoken_bpe
        openai_public.load_tiktoken_bpe = record
        try:
            spec = dict(openai_public.ENCODING_CONSTRUCTORS[name]())
        finally:
            openai_public.load_tiktoken_bpe = saved
    spec["name"] = name
    return spec, (expected[0] if expected else None)


def _read_ranks(data: bytes, path: Path) -> dict[bytes, int]:
    ranks: dict[bytes, int] = {}
    for number, line in enumerate(data.splitlines(), 1):
        if not line:
            continue
        try:
            token, rank = line.split()
            ranks[base64.b64decode(token, validate=True)] = int(rank)
        except ValueError:
            raise ConfigurationError(
                f"{str(path)!r} is not a tiktoken ranks file: line {number} is not "
                "'<base64 token> <rank>'"
            ) from None
    if not ranks:
        raise ConfigurationError(f"{str(path)!r} is not a tiktoken ranks file: it is empty")
    return ranks


class _Tiktoken(_Engine):
    def __init__(self, path: Path, encoding: str, verify: bool) -> None:
        spec, expected = _encoding_spec(encoding)
        data = path.read_bytes()
        digest = hashlib.sha256(data).hexdigest()
        if verify and expected is not None and digest != expected:
            raise ConfigurationError(
                f"{str(path)!r} is not the ranks file of {spec['name']} (its SHA-256 is "
                f"{digest[:16]}..., expected {expected[:16]}...); pass verify=False to use it "
                "anyway"
            )
        import tiktoken

        self.encoding = tiktoken.Encoding(
            name=spec["name"],
            pat_str=spec["pat_str"],
            mergeable_ranks=_read_ranks(data, path),
            special_tokens=spec.get("special_tokens", {}),
        )
        self.digest = hashlib.sha256(f"{spec['name']}\n{digest}".encode()).hexdigest()
        pattern = hashlib.sha256(spec["pat_str"].encode()).hexdigest()
        self.units = (
            UnitCounter(self.count_many, SPACE_UNITS) if pattern in _SPACE_SPLIT_PATTERNS else None
        )

    def count(self, text: str) -> int:
        return len(self.encoding.encode_ordinary(text))


class TiktokenCount(NamedLength):
    """Tokens of a tiktoken encoding read from a local ranks file (never downloaded).

    Special-token text (``<|endoftext|>``) counts as ordinary text.

    Args:
        encoding_file: path of the encoding's ``.tiktoken`` ranks file.
        encoding: the encoding (``cl100k_base``, ``o200k_base``, ``p50k_base``, ``r50k_base``)
            or a model name that tiktoken maps to one (``gpt-4o``).
        verify: check the file's SHA-256 against the official file of ``encoding``.

    Raises:
        ConfigurationError: no file given, a missing or malformed file, a file that is not the
            encoding's (with ``verify``), an unknown encoding, or tiktoken not installed.
    """

    name = "tiktoken"

    def __init__(
        self,
        encoding_file: str | None = None,
        encoding: str = "cl100k_base",
        verify: bool = True,
    ) -> None:
        if encoding_file is None:
            raise ConfigurationError(
                "length_function 'tiktoken' needs encoding_file: the path of a local "
                f"{encoding}.tiktoken ranks file (ragloom never downloads one)"
            )
        if not isinstance(encoding_file, str | os.PathLike):
            raise ConfigurationError(
                f"encoding_file must be a path, got {type(encoding_file).__name__}"
            )
        if not isinstance(encoding, str) or not isinstance(verify, bool):
            raise ConfigurationError("encoding must be a string and verify a bool")
        self.encoding_file = os.fspath(encoding_file)
        self.encoding = encoding
        self.verify = verify
        path = Path(os.path.expanduser(self.encoding_file))
        self.path = path
        self._engine: _Tiktoken = _cached_engine(  # type: ignore[assignment]
            f"tiktoken:{encoding}:{verify}", path, lambda: _Tiktoken(path, encoding, verify)
        )
        #: The encoding's own name (``encoding`` may be a model name).
        self.encoding_name: str = self._engine.encoding.name

    def __call__(self, text: str, /) -> int:
        return self._engine.count(text)

    def slice_counts(self, text: str) -> UnitCounts | None:
        """Exact counts of every slice of ``text`` (``None``: this pattern has no units)."""
        units = self._engine.units
        return units.counts(text) if units is not None else None

    def config(self) -> dict[str, Any]:
        out: dict[str, Any] = {"encoding_file": self.encoding_file, "encoding": self.encoding}
        if not self.verify:
            out["verify"] = False
        return out

    def fingerprint(self) -> str:
        """SHA-256 of the encoding's name and its ranks file."""
        return self._engine.digest

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.encoding_file, self.encoding, self.verify))
