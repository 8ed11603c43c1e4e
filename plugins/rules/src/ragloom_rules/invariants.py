"""What any decomposition must keep: the checks behind ``decomposition_violations``.

A decomposition of a question into sub-queries is faithful when

1. **nothing is invented**: every content word of every sub-query is a content word of the
   question (a reference resolved to a phrase of the question brings that phrase's words,
   which are the question's own);
2. **nothing is lost**: every content word of the question appears in some sub-query
   (connectives such as "and", "also", "both", "versus", "compare" or "difference" aside:
   splitting is what expresses them);
3. **every reference is resolved**: a sub-query that keeps a pronoun ("it", "its", "they",
   "them", "their", "he", "she", ...) or a "one" / "either" standing for something named
   earlier in the question also keeps some content word that precedes that pronoun's clause
   in the question, so that it still says what the pronoun stands for (a pronoun in a clause
   inside a question, "... while other connections keep writing to it", may stand for a word
   of that question);
4. sub-queries are non-empty and distinct.

Content words are the words left after removing function words (determiners, pronouns,
prepositions, auxiliaries, question words, conjunctions, courtesy words such as "please" or
"thanks"), compared lower-cased with a possessive "'s" removed. Negations ("not", "never",
"don't") count as content words: dropping one changes the meaning.

The checks are deliberately about words, not grammar: they catch a sub-query that talks about
something the user never mentioned, an item that fell off a list and a dangling "it", but not
a wrong regrouping of the question's own words (such as "video gaming" from "video editing and
gaming"); a labelled set of expected sub-queries catches those.

Pure Python (no ragloom core), fast enough to run on every decomposition of a benchmark.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ._lexicon import DETERMINERS, PREPOSITIONS, SUBORDINATE_OPENERS, VERBS

__all__ = ["FUNCTION_WORDS", "content_words", "decomposition_violations"]


def _set(words: str) -> frozenset[str]:
    return frozenset(words.split())


#: Words that carry no content of their own (compared lower-cased, curly apostrophes folded).
FUNCTION_WORDS: frozenset[str] = _set(
    # determiners and quantifiers
    "a an the this that these those my your our their his her its some any each every all "
    "both either neither another other such no-one one ones "
    # pronouns
    "i me we us you he him she it they them myself yourself itself themselves ourselves "
    "mine yours ours theirs hers there "
    # contractions of a pronoun or question word with an auxiliary
    "i'm i'd i'll i've we're we'd we'll we've you're you'd you'll you've they're they'd "
    "they'll they've he's he'd she's she'd it's that's there's what's how's who's where's "
    "when's why's which's let's "
    # prepositions and particles
    "of in on at for to from with by about between among into onto over under through "
    "across against within via per like than as regarding toward towards around near "
    "beyond behind upon during since until till before after off up down out "
    # auxiliaries
    "is are was were be been being am do does did can could should would will shall may "
    "might must has have had "
    # question words
    "what which who whom whose where when why how "
    # conjunctions and connectives
    "and & or but nor so yet also then plus too whether if "
    # connectives between two asks ("And separately, how do I ..."): a split expresses them
    "separately additionally afterwards afterward "
    # comparison wording (a split expresses it)
    "versus vs vs. compare compared compares comparing comparison contrast difference "
    "differences differ differs different "
    # courtesy and filler
    "please thanks thank hi hello hey cheers ok okay just"
)

#: Words that stand for something named before them.
_REFERENCES = _set("it its they them their theirs he him his she her hers")

_WORD = re.compile(r"[$€£]?[\w](?:[\w'+#&-]|\.(?=\w))*%?")
_WORD_OR_MARK = re.compile(rf"{_WORD.pattern}|[.?!;]")


def _words(text: str) -> list[str]:
    """Lower-cased words of ``text`` (curly apostrophes folded), possessives kept."""
    return _WORD.findall(text.replace("\u2019", "'").lower())


def _base(word: str) -> str:
    if word.endswith("'s"):
        return word[:-2]
    if word.endswith("'") and len(word) > 1:
        return word[:-1]
    return word


def content_words(text: str) -> set[str]:
    """The content words of ``text``: lower-cased, possessive "'s" removed, function words
    (:data:`FUNCTION_WORDS`) left out."""
    out: set[str] = set()
    for word in _words(text):
        base = _base(word)
        if base and base not in FUNCTION_WORDS and word not in FUNCTION_WORDS:
            out.add(base)
    return out


def _is_pleonastic(words: list[str], i: int) -> bool:
    """Whether ``it`` at ``words[i]`` is an expletive ("is it possible to", "it takes",
    "it's raining"): it stands for nothing named before."""
    nxt = words[i + 1] if i + 1 < len(words) else ""
    prev = words[i - 1] if i > 0 else ""
    after = words[i + 2 : i + 5]
    if prev in ("is", "was", "isn't", "wasn't", "will", "would") and "to" in after:
        return True
    if nxt in ("is", "was", "'s", "will", "would") and "to" in words[i + 2 : i + 5]:
        return True
    takes = nxt in ("takes", "take", "took", "costs", "cost")
    return takes and prev in ("does", "did", "will") and "to" in after


def _references(words: list[str]) -> list[int]:
    """Positions of words that refer back: pronouns, and "one" / "either" used as one."""
    found = []
    for i, word in enumerate(words):
        if word in _REFERENCES:
            if word == "it" and _is_pleonastic(words, i):
                continue
            found.append(i)
        elif word == "one":
            prev = words[i - 1] if i > 0 else ""
            nxt = words[i + 1] if i + 1 < len(words) else ""
            if prev in ("which", "either", "that", "this") or (
                nxt == "" and prev not in ("no", "any", "every", "each", "the")
            ):
                found.append(i)
        elif word == "either" and "or" not in words[i + 1 :]:
            found.append(i)
    return found


_CLAUSE_OPENERS = _set(
    "what which who whom whose where when why how is are was were do does did can could "
    "should would will has have i we you they he she it"
)


#: Words that open a clause inside a clause ("... while other connections keep writing to
#: it", "... without importing them"): a pronoun there may stand for a word of the clause it
#: hangs on.
_SUBORDINATE_OPENERS = SUBORDINATE_OPENERS


def _clause_start(words: list[str], marks: list[bool], p: int, inner: bool = True) -> int:
    """Where the clause holding word ``p`` starts: after the last sentence mark before it, at
    an "and" / "but" / "," that opens a new question or clause, or (with ``inner``) at a word
    that opens a clause inside another ("while", "so", "before", ...) when words precede it."""
    for j in range(p - 1, -1, -1):
        if marks[j]:
            return j + 1
        if words[j] in ("and", "but") and j + 1 < p and words[j + 1] in _CLAUSE_OPENERS:
            return j + 1
        if inner and words[j] in _SUBORDINATE_OPENERS and j > 0 and not marks[j - 1]:
            return j
        if inner and words[j] == "as" and j + 1 == p and j > 0 and not marks[j - 1]:
            return j  # "grep the source as it was"
        if inner and j > 0 and not marks[j - 1] and _opens_gerund(words, j):
            return j  # "reject text instead of silently storing it"
        if inner and j > 0 and not marks[j - 1] and _second_action(words, j, p):
            return j  # "take a commit from one branch and apply it to another"
    return 0


def _second_action(words: list[str], j: int, p: int) -> bool:
    """Whether word ``j`` is an "and" (or "and then") before a verb, before ``p``: a second
    action of the same question."""
    if words[j] != "and":
        return False
    k = j + 1 + (j + 1 < p and words[j + 1] == "then")
    return k < p and words[k] in VERBS


def _opens_gerund(words: list[str], j: int) -> bool:
    """Whether word ``j`` is a preposition opening a clause of an -ing verb ("without
    importing them", "of silently storing it")."""
    if words[j] not in PREPOSITIONS:
        return False
    k = j + 1
    while k < len(words) and words[k].endswith("ly") and len(words[k]) > 4:
        k += 1
    return k < len(words) and words[k].endswith("ing") and len(words[k]) > 4


def _antecedents(words: list[str], marks: list[bool], p: int) -> set[str]:
    """The content words a reference at ``p`` may stand for: those before its clause; for a
    clause inside another ("... a live database while others keep writing to it"), also the
    nouns of the clause it hangs on (its verbs, "wait" in "how do I wait while it is held",
    name nothing)."""
    start = _clause_start(words, marks, p)
    outer = _clause_start(words, marks, p, inner=False)
    found = {_base(w) for w in words[:outer]} - FUNCTION_WORDS
    if start > outer:
        found |= {
            _base(w)
            for j, w in enumerate(words[outer:start], outer)
            if w not in VERBS or (j > outer and words[j - 1] in DETERMINERS)  # "a file"
        } - FUNCTION_WORDS
    return found


def _unresolved(question: str, sub: list[str]) -> list[str]:
    """References in ``sub`` to something named in an earlier clause of the question, when
    ``sub`` keeps no content word of the question before that clause."""
    words: list[str] = []
    marks: list[bool] = []  # the word ends a sentence or a clause (".", "?", "!", ";")
    for m in _WORD_OR_MARK.finditer(question.replace("\u2019", "'").lower()):
        token = m.group()
        if token in ".?!;":
            if marks:
                marks[-1] = True
            continue
        words.append(token)
        marks.append(False)
    own = {_base(w) for w in sub}
    out = []
    for i in _references(sub):
        word = sub[i]
        positions = [p for p, w in enumerate(words) if w == word]
        if not positions:
            continue  # not the question's own reference (a phrase inserted for it, say)
        resolved = False
        for p in positions:
            before = _antecedents(words, marks, p)
            if not before or before & own:
                resolved = True
                break
        if not resolved:
            out.append(word)
    return out


def decomposition_violations(question: str, sub_queries: Sequence[str]) -> list[str]:
    """Why ``sub_queries`` is not a faithful decomposition of ``question`` (``[]``: it is).

    Each entry names the sub-query and the problem: an invented content word, a content word
    of the question that no sub-query keeps, an unresolved reference, an empty or duplicate
    sub-query. See the module documentation for the definitions.
    """
    problems: list[str] = []
    asked = content_words(question)
    kept: set[str] = set()
    seen: set[str] = set()
    for sub in sub_queries:
        text = " ".join(sub.split())
        if not text:
            problems.append("empty sub-query")
            continue
        if text in seen:
            problems.append(f"duplicate sub-query {text!r}")
        seen.add(text)
        words = content_words(text)
        invented = sorted(words - asked)
        if invented:
            problems.append(f"{text!r} invents {', '.join(map(repr, invented))}")
        kept |= words
        dangling = _unresolved(question, _words(text))
        if dangling:
            problems.append(f"{text!r} keeps unresolved {', '.join(map(repr, dangling))}")
    lost = sorted(asked - kept)
    if lost:
        problems.append(f"no sub-query keeps {', '.join(map(repr, lost))}")
    return problems
