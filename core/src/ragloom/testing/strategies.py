"""Hypothesis strategies of documents, for the conformance kit and for authors' own tests.

Generated texts are runs of *words* (the alphanumeric characters of the alphabet) and
*separators* (every other character of it), so every delimiter of the alphabet keeps turning up
between words, at the start and at the end, alone and in runs: a chunker that drops or
duplicates a delimiter leaves a gap or an overlap the kit's span checks find.

Needs ``hypothesis`` (``pip install hypothesis``); it is imported when a strategy is built.
"""

from __future__ import annotations

import string
from collections.abc import Iterable
from typing import Any

from ..models import ContentFormat, Document

__all__ = ["DEFAULT_ALPHABET", "alphabet_document", "text_documents", "texts"]

#: The characters generated documents are made of by default: ASCII letters and digits, every
#: ASCII punctuation mark, the whitespace characters chunkers split on (space, tab, newline,
#: carriage return, form feed, no-break space) and a few characters beyond ASCII (accented and
#: CJK letters, an emoji outside the BMP, a combining accent, the Unicode line and paragraph
#: separators).
DEFAULT_ALPHABET = (
    string.ascii_letters
    + string.digits
    + string.punctuation
    + " \t\n\r\f\u00a0"
    + "éßÆ数据🙂\u0301\u2028\u2029"
)

HYPOTHESIS_MISSING = (
    "the conformance kit generates documents with hypothesis, which is not installed: "
    "pip install hypothesis"
)


def _parts(alphabet: str) -> tuple[str, str]:
    """The word characters and the separator characters of ``alphabet`` (each once)."""
    unique = "".join(dict.fromkeys(alphabet))
    if not unique:
        raise ValueError("the alphabet of generated documents is empty")
    words = "".join(c for c in unique if c.isalnum())
    separators = "".join(c for c in unique if not c.isalnum())
    return words, separators


def texts(alphabet: str | None = None, *, max_tokens: int = 120) -> Any:
    """A strategy of texts made of ``alphabet`` (default :data:`DEFAULT_ALPHABET`): words
    (1 to 12 word characters, now and then up to 60) and separator runs (1 to 3 separators)."""
    try:
        from hypothesis import strategies as st
    except ImportError:
        raise ModuleNotFoundError(HYPOTHESIS_MISSING, name="hypothesis") from None
    words, separators = _parts(DEFAULT_ALPHABET if alphabet is None else alphabet)
    tokens = []
    if words:
        tokens.append(st.text(alphabet=words, min_size=1, max_size=12))
        tokens.append(st.text(alphabet=words, min_size=13, max_size=60))
    if separators:
        tokens.append(st.text(alphabet=separators, min_size=1, max_size=3))
        tokens.append(st.sampled_from(list(separators)))
    return st.lists(st.one_of(*tokens), max_size=max_tokens).map("".join)


def text_documents(
    alphabet: str | None = None,
    *,
    formats: Iterable[str] = (ContentFormat.TEXT,),
    max_tokens: int = 120,
    metadata: dict[str, Any] | None = None,
) -> Any:
    """A strategy of :class:`Document` objects whose content is :func:`texts` of ``alphabet``,
    in one of ``formats``, with id ``"generated"`` and ``metadata``."""
    content = texts(alphabet, max_tokens=max_tokens)  # says how to install hypothesis if needed
    from hypothesis import strategies as st

    meta = {"source": "ragloom.testing.generated"} if metadata is None else metadata
    return st.builds(
        lambda text, fmt: Document(
            id="generated", content=text, content_format=fmt, metadata=dict(meta)
        ),
        content,
        st.sampled_from(sorted(str(f) for f in formats)),
    )


def alphabet_document(
    alphabet: str | None = None, *, content_format: str = ContentFormat.TEXT, repeat: int = 3
) -> Document:
    """One document in which every character of ``alphabet`` stands between two words, alone
    and doubled, ``repeat`` times over: whatever delimiter a chunker splits on, it is there."""
    words, separators = _parts(DEFAULT_ALPHABET if alphabet is None else alphabet)
    letters = words or "w"
    pieces: list[str] = []
    for round_ in range(repeat):
        for n, separator in enumerate(separators):
            k = round_ * len(separators) + n
            pieces += [letters[k % len(letters)] * (1 + k % 7), separator]
            pieces += [letters[(k + 1) % len(letters)] * (1 + k % 3), separator * 2]
    text = "".join(pieces) + letters[:5]
    return Document(
        id="alphabet", content=text, content_format=content_format,
        metadata={"source": "ragloom.testing.alphabet"},
    )
