"""Load a local HuggingFace tokenizer file with ``tokenizers`` (no network, no transformers)."""

from __future__ import annotations

from typing import Any

from ._options import DoclingOptionsError, resolve_tokenizer_file

__all__ = ["count_tokens", "load_tokenizer"]


def load_tokenizer(tokenizer_path: str) -> Any:
    """A ``tokenizers.Tokenizer`` from ``tokenizer_path``, truncation and padding turned off.

    A model's ``tokenizer.json`` often truncates to the model's input length (512 for BERT);
    counting chunk sizes needs the full count.
    """
    path = resolve_tokenizer_file(tokenizer_path)
    try:
        from tokenizers import Tokenizer
    except ImportError as exc:  # pragma: no cover - a declared dependency
        raise DoclingOptionsError(
            "tokenizer_path needs the 'tokenizers' package (pip install tokenizers)"
        ) from exc
    try:
        tokenizer = Tokenizer.from_file(str(path))
    except Exception as exc:  # the Rust loader raises a bare Exception on a bad file
        raise DoclingOptionsError(
            f"tokenizer_path: {str(path)!r} is not a HuggingFace tokenizer file ({exc})"
        ) from exc
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return tokenizer


def count_tokens(tokenizer: Any, text: str) -> int:
    """Tokens in ``text`` without special tokens, as docling-core's HuggingFaceTokenizer counts."""
    return len(tokenizer.encode(text, add_special_tokens=False).ids)
