"""Tokens of a question, with the word classes of :mod:`ragloom_rules._lexicon` as bit flags.

A token is ``(lower-cased text, start, end, flags)``; offsets index the text it came from, so
sub-queries are always slices of the user's own words. A time phrase ("between 2010 and
2015") and a fixed pair ("terms and conditions") are one token each.
"""

from __future__ import annotations

import re

from . import _lexicon as lx

__all__ = ["Token", "tokenize"]

B = 1  # boundary: ends an item
D = 2  # determiner or possessive: belongs to the word after it
N = 4  # name-like: a capital letter (not just sentence-initial) or a digit
G = 8  # starts with a digit or a currency sign: joins the word before it
P = 16  # punctuation
T = 32  # time phrase
WH = 64  # question word
AUX = 128  # auxiliary verb
SUBJ = 256  # pronoun that can follow an auxiliary ("is it", "can I")
V = 512  # can be a verb
PREP = 1024  # preposition or particle
PRON = 2048  # personal pronoun
REF = 4096  # refers back ("it", "their", ...)
SYM = 8192  # a relation between things ("disagree", "together")
CONJ = 16384  # conjunction
FACET = 32768  # a facet of a thing ("price", "release date")
COP = 65536  # copula ("is", "are")
PAIR = 131072  # "both", "either", "neither"
POSS = 262144  # possessive noun ("Apple's")
NUM = 524288  # a number or version ("3.13", "20")

Token = tuple[str, int, int, int]

_WORD = re.compile(r"[$€£]?\w(?:[\w'\u2019&+#-]|[./](?=\w)|(?<=\d):(?=\d))*%?|[^\w\s]")
_TIME_AT = re.compile(rf"(?:{lx.TIME})(?!\w)", re.IGNORECASE)
_FIXED_AT = re.compile(rf"(?:{lx.FIXED_PAIRS})(?!\w)", re.IGNORECASE)
_NUMBER = re.compile(r"[$€£]?\d[\d.,]*[a-z%]{0,3}$")

_FLAGS: dict[str, int] = {}


def _add(words: frozenset[str], flags: int) -> None:
    for word in words:
        _FLAGS[word] = _FLAGS.get(word, 0) | flags


_add(lx.PREPOSITIONS, B | PREP)
_add(lx.CONJUNCTIONS, B | CONJ)
_add(lx.COMPARISON | lx.OTHER_BOUNDARIES, B)
_add(lx.PERSONAL, B | PRON)
_add(lx.WH, B | WH)
_add(lx.AUXILIARIES, B | AUX)
_add(lx.COPULAS, COP)
_add(lx.SUBJECTS, SUBJ)
_add(lx.PAIR_MARKERS, B | PAIR)
_add(lx.SYMMETRIC, SYM)
_add(lx.FACETS, FACET)
_add(lx.REFERENCES, REF)
_add(lx.TIME_WORDS, B | T)
_add(lx.ORDINALS, NUM)
for _word in lx.VERBS:
    if not _FLAGS.get(_word, 0) & (B | AUX):
        _FLAGS[_word] = _FLAGS.get(_word, 0) | V
for _word in lx.DETERMINERS:  # determiners are not boundaries, even "that" or "her"
    _FLAGS[_word] = (_FLAGS.get(_word, 0) & ~B) | D
del _word
# "her" and "his" are determiners before a noun, "that" and "this" too; "it" never is.
_FLAGS["that"] = (_FLAGS["that"] & ~D) | B
_FLAGS["all"] = D
_FLAGS["no"] = D


def _title(phrase: str) -> bool:
    """Whether a fixed pair is written as a title: every word capitalised but "and" (a verb
    idiom such as "Go and" or "Try and" ends in "and" and is none)."""
    words = phrase.split()
    return (
        len(words) >= 3
        and words[-1].lower() not in ("and", "&")
        and all(w[0].isupper() for w in words if w.lower() not in ("and", "&", "of", "the"))
    )


def flags_of(word: str) -> int:
    """The flags of a lower-cased word (0 for an unknown content word)."""
    return _FLAGS.get(word, 0)


def tokenize(text: str) -> list[Token]:
    """Words and punctuation marks of ``text`` (one sentence or clause) with their flags."""
    tokens: list[Token] = []
    append = tokens.append
    get = _FLAGS.get
    skip_to = 0
    for m in _WORD.finditer(text):
        start = m.start()
        if start < skip_to:
            continue
        raw = m.group()
        low = raw.lower().replace("\u2019", "'")
        if low in lx.TIME_STARTS or (low[0].isdigit() and len(low) >= 4):
            phrase = _TIME_AT.match(text, start)
            if phrase is not None:
                skip_to = phrase.end()
                append((phrase.group().lower(), start, skip_to, B | T))
                continue
        if low in lx.FIXED_STARTS:
            # a capitalised word inside a sentence is a name: "in Go and Rust"; a fixed pair
            # written as a title ("Pride and Prejudice", "War and Peace") is one name
            phrase = _FIXED_AT.match(text, start)
            if phrase is not None and (not tokens or raw[0].islower() or _title(phrase.group())):
                skip_to = phrase.end()
                title = raw[0].isupper() and _title(phrase.group())
                append((phrase.group().lower(), start, skip_to, N if title else 0))
                continue
        end = m.end()
        first = raw[0]
        if not first.isalnum() and first not in "$€£_" and end - start == 1:
            append((raw, start, end, B | P))
            continue
        flags = get(low, 0)
        if flags & PRON and len(raw) > 1 and raw.isupper():
            flags = N  # "the US", "IT support": a name, not a pronoun
        elif flags & PREP and len(raw) > 1 and raw.isupper() and tokens:
            before = text[tokens[-1][1] : tokens[-1][2]]
            if before.isupper() and len(before) > 1:
                flags = N  # "GROUP BY", "INSERT INTO": a keyword, not a preposition
        if not flags and (low.endswith("'s") and len(low) > 2):
            base = get(low[:-2], 0)
            flags = D | POSS if not base & (B | AUX | D) else B | AUX | PRON
        if raw != raw.lower():
            inner = any(c.isupper() for c in raw[1:])
            if inner or (tokens and not flags & (B | D | AUX)):
                flags |= N
        if first.isdigit() or first in "$€£":
            flags |= N | G
            if _NUMBER.match(low):
                flags |= NUM
        elif not raw.isalpha() and any(c.isdigit() for c in raw):
            flags |= N
        append((low, start, end, flags))
    # A capitalised first word is a name when the next word is one ("Samsung Galaxy").
    if tokens and len(tokens) > 1:
        low, s, e, f = tokens[0]
        if not f & (N | B | D) and text[s : s + 1].isupper() and tokens[1][3] & N:
            tokens[0] = (low, s, e, f | N)
    return tokens
