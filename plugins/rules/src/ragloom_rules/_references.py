"""References across questions: what "it", "they", "its", "one", "which one" stand for.

A question that follows another ("What is Docker and how does it work?") often refers to what
the first one is about. That thing, its *topic*, is read off the first question's shape:

- "What/Who is X" -> X ("What is a race condition" -> "a race condition");
- "Who painted X", "Where can I buy X" -> the object X when the subject is the question word or
  a person ("I", "you");
- "Why is X slow", "How does X work", "Is X waterproof", "When was X built" -> the subject X,
  without the predicate word that ends the question.

The things a question lists or compares ("the Pixel 8 and the iPhone 15", "the Dyson V15 ...
than the Shark Stratos") are its *members*: "which one" becomes "which of A and B", "either"
becomes "A or B".

A reference is replaced only when its antecedent is found and agrees with it ("it" a single
thing, "they" several, "he"/"she" a name); otherwise :func:`resolve` returns ``None`` and the
caller keeps the two questions together.
"""

from __future__ import annotations

from ._tokens import AUX, COP, PREP, PRON, WH, B, D, N, P, T, Token, V, tokenize

__all__ = [
    "THEY", "answer_reference", "members", "needs_resolution", "pronouns_only", "resolve",
    "same_referent", "topic",
]

#: Verbs after which "that" opens a clause ("check that the service answers").
_SAYING_VERBS = frozenset(
    (
        "test", "check", "verify", "ensure", "confirm", "sure", "know", "say", "says", "think",
        "mean", "means", "show", "prove", "assume", "guarantee", "validate", "assert",
    )
)
_PERSONS = frozenset(("i", "you", "we", "they", "someone", "somebody"))
_PREDICATE_WH = frozenset(("why", "how", "when"))
_QUANTITY = frozenset(("much", "many", "long", "often", "far", "big", "old"))
_ONE_BEFORE = frozenset(("which", "either", "that", "this"))
_NOT_ONE_BEFORE = frozenset(("no", "any", "every", "each", "the", "a", "this", "that"))
#: Words before "that" / "this" in a phrase that orders the question after what came before
#: ("After that, how do I ...", "Apart from this, ...", "On top of that, ..."): the question
#: does not need what "that" stands for.
_SEQUENCING = frozenset(("after", "before", "besides", "beyond", "following", "from", "of", "than"))
#: After "that" / "this", a person: the one a "who" question asks for ("that person").
PERSON_NOUNS = frozenset(("person", "people", "guy", "man", "woman", "individual"))


def _body(toks: list[Token]) -> int:
    """Index of the first token after an introduction ("Since 2020, ...")."""
    if len(toks) > 2 and toks[0][3] & T and toks[1][0] == ",":
        return 2
    return 0


def _text(text: str, toks: list[Token], a: int, b: int) -> str:
    return text[toks[a][1] : toks[b - 1][2]]


def _noun_phrase(toks: list[Token], start: int, *, predicate: bool) -> tuple[int, int] | None:
    """The noun phrase starting at ``start``: determiners, names and words up to a boundary or
    a verb (a verb-like word followed by an object: "the iPad Air [support] the Pencil");
    with ``predicate``, a last word that ends the question ("slow", "built", "work") is the
    predicate and is left out."""
    n = len(toks)
    end = start
    while end < n and not toks[end][3] & B:
        flags = toks[end][3]
        word = toks[end][0]
        adverb = word.endswith("ly") and len(word) > 4 and not flags & (N | V | D)
        if end > start and adverb and not toks[end - 1][3] & D:
            break  # "the logs daily": an adverb ends the phrase ("our nightly backup" aside)
        if (
            end > start
            and flags & V
            and not flags & N
            and not toks[end - 1][3] & D
            and end + 1 < n
            and (toks[end + 1][3] & (D | N | PREP) or not toks[end + 1][3] & (V | B))
        ):
            break
        end += 1
    if predicate and end < n - 2 and toks[end][3] & PREP and not toks[end][3] & T:
        # "the Nobel Prize in physics [awarded]": a phrase after the noun, then the predicate
        stop = end + 1
        while stop < n and not toks[stop][3] & B:
            stop += 1
        last = stop - 1
        participle = toks[last][3] & V or toks[last][0].endswith("ed")
        if stop == n and last > end + 1 and participle and not toks[last][3] & N:
            end = last
            return (start, end) if end - start >= 1 else None
    while start < end and toks[end - 1][3] & D:
        end -= 1
    if end <= start:
        return None
    if (
        predicate
        and end - start >= 2
        and not toks[end - 1][3] & N
        and not toks[end - 2][3] & D
        and (end == n or toks[end][3] & B)
    ):
        end -= 1
    if toks[start][3] & D and end - start < 2:
        return None
    return start, end


def _object(toks: list[Token], verb: int) -> tuple[int, int] | None:
    """The noun phrase after the verb at ``verb`` (a particle such as "up" skipped)."""
    j = verb + 1
    n = len(toks)
    particle = toks[j][0] in ("up", "out", "off", "down", "back") if j < n else False
    if particle and j + 1 < n and not toks[j + 1][3] & B:
        j += 1
    if j >= n or toks[j][3] & B:
        return None
    span = _noun_phrase(toks, j, predicate=False)
    if span is not None and span[1] - span[0] >= 2:
        last = toks[span[1] - 1]
        if last[3] & V and last[0].endswith("ed") and not toks[span[1] - 2][3] & D:
            span = (span[0], span[1] - 1)  # "get my tires checked": "checked" says what of it
    return span


def topic(text: str, toks: list[Token]) -> str | None:
    """What the question ``text`` is about, as a phrase of it, or ``None``."""
    i = _body(toks)
    n = len(toks)
    if i >= n:
        return None
    first = toks[i]
    span: tuple[int, int] | None = None
    if first[0] in ("what's", "who's"):
        span = _predicate_noun(toks, i + 1)
    elif first[3] & WH:
        j = i + 1
        if first[0] in ("who", "what") and j < n and toks[j][3] & V and not toks[j][3] & N:
            span = _object(toks, j)  # "Who painted the Mona Lisa"
            span = None if span is None else _one_of(toks, span)
            return None if span is None else _text(text, toks, *span)
        quantity = False
        while j < n and toks[j][0] in _QUANTITY:
            quantity = True
            j += 1
        own = j
        while j < n and not toks[j][3] & B:  # "What size", "How many watts"
            j += 1
        if j > own and not quantity and (j >= n or toks[j][3] & COP):
            return None  # "Which running shoes are best": about the question word's noun
        if j < n and toks[j][3] & AUX:
            copula = bool(toks[j][3] & COP)
            if j + 1 < n and toks[j + 1][0] in _PERSONS:
                span = _after_person(toks, j + 1)
            elif copula and (first[0] in ("what", "who") or quantity) and j == own:
                span = _predicate_noun(toks, j + 1)  # "How long is the warranty on X"
            else:
                predicate = (first[0] in _PREDICATE_WH and not quantity) or not copula
                span = _noun_phrase(toks, j + 1, predicate=predicate)
    elif first[3] & AUX:
        if i + 1 < n and toks[i + 1][0] in _PERSONS:
            span = _after_person(toks, i + 1)
        else:
            span = _noun_phrase(toks, i + 1, predicate=True)
    else:
        # a request or a command: what its action is done to ("Show me how to register my
        # own chunker" -> "my own chunker", "Set up a server" -> "a server")
        verb = _action(toks, i)
        if verb is not None:
            span = _object(toks, verb)
        elif first[3] & D and not first[3] & B:
            # a statement: what it is about ("Our nightly backup takes hours")
            span = _noun_phrase(toks, i, predicate=False)
            if span is not None and (span[1] >= n or not toks[span[1]][3] & V):
                span = None
    if span is None or _one_of(toks, span) is None:
        return None
    return _text(text, toks, *span)


def _one_of(toks: list[Token], span: tuple[int, int]) -> tuple[int, int] | None:
    """``span``, or ``None`` when it is one side of a choice ("should I use cron or a systemd
    timer": a later "its" stands for neither alone)."""
    if span[1] < len(toks) and toks[span[1]][0] == "or":
        return None
    return span


_REQUESTS = frozenset(("show", "tell", "explain", "teach", "describe"))
#: Words that start a phrase and are capitalised only at the start of a sentence.
_LEADS = frozenset(("the", "a", "an", "my", "our", "your", "their", "his", "her", "its", "this"))


def _action(toks: list[Token], i: int) -> int | None:
    """Index of the verb of a request ("Show me how to | register ...") or a command."""
    n = len(toks)
    if toks[i][0] in ("i", "we", "i'd", "we'd"):
        # a wish: "I want to rotate the logs", "we'd like to publish our packages"
        for j in range(i + 1, min(n - 1, i + 4)):
            if toks[j][0] == "to":
                return j + 1 if toks[j + 1][3] & V else None
        return None
    if toks[i][0] in _REQUESTS:
        for j in range(i + 1, min(n - 2, i + 4)):
            if toks[j][0] == "how" and toks[j + 1][0] == "to":
                return j + 2
        return None
    if toks[i][3] & V and not toks[i][3] & (B | N):
        return i
    return None


def _predicate_noun(toks: list[Token], start: int) -> tuple[int, int] | None:
    """What "What is ..." asks about: the rest of the question ("a decorator in Python", "the
    GDP of Germany") when it is one noun phrase with its prepositional phrases, else the noun
    phrase alone."""
    n = len(toks)
    end = n
    while end > start and toks[end - 1][3] & P:
        end -= 1
    if _is_noun_phrase(toks, start, end):
        return start, end
    return _with_of(toks, _noun_phrase(toks, start, predicate=False))


def _is_noun_phrase(toks: list[Token], start: int, end: int) -> bool:
    """Whether ``toks[start:end]`` is noun phrases joined by prepositions: no verb (a verb-like
    word counts as a noun after a determiner), no clause word, no list."""
    if end - start < 1 or toks[end - 1][3] & B or (toks[start][3] & D and end - start < 2):
        return False
    if toks[start][3] & PREP:
        return False  # "what's up with my 401k": no noun phrase
    for k in range(start, end):
        low, _, _, flags = toks[k]
        if low in ("and", "or", "&", "that", "which", "who"):
            return False
        if flags & (PREP | D):
            continue
        if flags & (AUX | WH | PRON):
            return False
        if flags & V and not (k > start and toks[k - 1][3] & D):
            return False
    return True


def _with_of(toks: list[Token], span: tuple[int, int] | None) -> tuple[int, int] | None:
    """``span`` with an "of" phrase after it ("the GDP" -> "the GDP of Germany")."""
    n = len(toks)
    if span is None or span[1] >= n - 1 or toks[span[1]][0] != "of":
        return span
    end = span[1] + 1
    while end < n and not toks[end][3] & B:
        end += 1
    return (span[0], end) if end > span[1] + 1 else span


def _after_person(toks: list[Token], person: int) -> tuple[int, int] | None:
    verb = person + 1
    if verb >= len(toks) or toks[verb][3] & B:
        return None
    return _object(toks, verb)


def members(text: str, toks: list[Token]) -> list[str]:
    """The named things of a question ("the Dyson V15", "the Shark Stratos"): runs of
    capitalised words with their determiners."""
    found: list[str] = []
    j = 0
    n = len(toks)
    while j < n:
        if toks[j][3] & N and not toks[j][3] & B:
            start = j
            while start > 0 and toks[start - 1][3] & D:
                start -= 1
            end = j + 1
            while end < n and toks[end][3] & N and not toks[end][3] & B:
                end += 1
            phrase = _text(text, toks, start, end)
            if phrase.lower() not in (f.lower() for f in found):
                found.append(phrase)
            j = end
        else:
            j += 1
    return found


def _pleonastic(toks: list[Token], i: int) -> bool:
    """ "is it possible to", "does it take", "it's raining": an "it" standing for nothing."""
    n = len(toks)
    prev = toks[i - 1][0] if i > 0 else ""
    nxt = toks[i + 1][0] if i + 1 < n else ""
    later = [t[0] for t in toks[i + 2 : i + 5]]
    if prev in ("is", "was", "isn't", "will", "would") and "to" in later:
        return True
    if nxt in ("is", "was", "will", "would") and "to" in later:
        return True
    takes = nxt in ("take", "takes", "took", "cost", "costs")
    return takes and prev in ("does", "did", "will") and "to" in later


def _kind(toks: list[Token], i: int) -> str | None:
    """What the reference at ``i`` needs: "thing", "things", "person", "possessive:...",
    "one", "which", "either", "unresolvable", or ``None`` when it is no reference."""
    low = toks[i][0]
    n = len(toks)
    nxt = toks[i + 1] if i + 1 < n else None
    if low == "it":
        return None if _pleonastic(toks, i) else "thing"
    if low in ("they", "them"):
        return "things"
    if low in ("he", "him", "she"):
        return "person"
    if low == "its":
        return "possessive:thing"
    if low == "their":
        return "possessive:things"
    if low == "his":
        return "possessive:person"
    if low == "her":
        if nxt is not None and not nxt[3] & B:
            return "possessive:person"
        return "person"
    if low == "one":
        prev = toks[i - 1][0] if i > 0 else ""
        if prev == "which":
            return "which"
        if prev == "either":
            return None  # part of "either one", handled there
        if nxt is not None and nxt[0] == "of":
            return None
        ends = nxt is None or nxt[3] & (P | PREP) or nxt[0] == "instead"
        if ends and prev not in _NOT_ONE_BEFORE:
            return "one"
        return None
    if low == "either":
        if any(t[0] == "or" for t in toks[i + 1 :]):
            return None
        return "either"
    if low == "each" and (nxt is None or nxt[0] == "one" or nxt[3] & (B | P)):
        return "unresolvable"  # "what does each one contain": each of what was asked for
    if low in ("that", "this", "those", "these") and nxt is not None and nxt[0] in PERSON_NOUNS:
        return "unresolvable"  # "how much authority does that person have": the answer
    if (
        low in ("that", "this")
        and 0 < i <= 3
        and toks[i - 1][0] in _SEQUENCING
        and (nxt is None or nxt[0] == "," or nxt[3] & (WH | PRON))
    ):
        return None  # "After that, how do I ...", "after that I want to ...": an order
    if (
        low == "that"
        and i > 0
        and toks[i - 1][0] in _SAYING_VERBS
        and nxt is not None
        and not nxt[3] & (AUX | P)
    ):
        return None  # "test that bind answers lookups": "that" opens what is tested
    if low in ("that", "this") and (nxt is None or nxt[3] & (AUX | P) or nxt[3] & V):
        if i > 0 and not toks[i - 1][3] & (B | V):
            return None  # "the plan that ...": a relative clause
        if i > 1 and nxt is not None and nxt[3] & AUX and _plural_noun(toks, i - 1):
            return None  # "upload files that might be crafted": "files" names, "that" relates
        return "unresolvable"
    return None


def _plural_noun(toks: list[Token], i: int) -> bool:
    """Whether ``toks[i]`` reads as a plural noun ("files", "users") rather than a verb after
    its subject ("he uses"): it ends in "s" and no pronoun or auxiliary stands before it."""
    low = toks[i][0]
    return (
        low.endswith("s") and not low.endswith("ss") and not toks[i - 1][3] & (PRON | AUX | WH)
    )


def answer_reference(toks: list[Token]) -> bool:
    """Whether the question refers to what an earlier one asks for, not to something it
    names ("how much authority does that person have", "what does each one contain")."""
    return any(_kind(toks, i) == "unresolvable" for i in range(len(toks)))


def pronouns_only(toks: list[Token]) -> bool:
    """Whether every reference of the question is a pronoun ("it", "their"), which a scene
    set before the questions may name, not "one" / "which one" / "either"."""
    kinds = (_kind(toks, i) for i in range(len(toks)))
    return all(k is None or k.split(":")[-1] in ("thing", "things", "person") for k in kinds)


#: The pronouns of several things or people.
THEY = frozenset(("they", "them", "their"))


def same_referent(toks: list[Token], before: list[Token]) -> bool:
    """Whether every reference of the question is "they", "them" or "their" and the question
    ``before`` it says one of them too: both mean the same people, named before both or
    nowhere, not something the earlier question names ("show how their server ..., and
    explain what happens in their client": the customer's)."""
    refs = [toks[i][0] for i in range(len(toks)) if _kind(toks, i) is not None]
    return bool(refs) and set(refs) <= THEY and any(t[0] in THEY for t in before)


def needs_resolution(toks: list[Token]) -> bool:
    """Whether the question has a reference to something named before it."""
    return any(_kind(toks, i) is not None for i in range(len(toks)))


def _possessive(phrase: str) -> str:
    return f"{phrase}'" if phrase.endswith("s") and not phrase[-2:-1].isupper() else f"{phrase}'s"


def _plural(phrase: str) -> bool:
    """Whether ``phrase`` names several things: a list, or a plural head noun (the last word
    before a preposition: "the Nobel Prize in physics" is one prize)."""
    toks = tokenize(phrase)
    if any(t[0] in ("and", "&") for t in toks):
        return True  # a list ("Pride and Prejudice" is one token: a title)
    head = ""
    for low, start, end, flags in toks:
        if flags & PREP:
            break
        if not low.endswith("ly"):  # "the logs daily": the head is "logs"
            head = phrase[start:end]
    return head.islower() and head.endswith("s") and not head.endswith(("ss", "us", "is"))


def _agrees(need: str, phrase: str) -> bool:
    if need == "thing":
        return not _plural(phrase)
    if need == "things":
        return _plural(phrase)
    if need == "person":
        toks = tokenize(phrase)
        return bool(toks) and all(t[3] & N for t in toks) and len(toks) <= 3
    return True


def resolve(
    text: str, toks: list[Token], antecedent: str | None, things: list[str]
) -> str | None:
    """``text`` with its references replaced by ``antecedent`` (or, for "which one" and
    "either", by ``things``); ``None`` when some reference cannot be resolved."""
    out: list[str] = []
    last = 0
    skip_until = -1
    for i, (_, start, end, _f) in enumerate(toks):
        if i < skip_until:
            continue
        need = _kind(toks, i)
        if need is None:
            continue
        if need == "unresolvable":
            return None
        if need == "which":
            if len(things) < 2:
                return None
            # "which one" -> "which of A and B" (the "which" is kept as typed)
            out.append(text[last:start])
            out.append("of " + " and ".join(_strip(t) for t in things))
            last = end
            continue
        if need == "either":
            if len(things) < 2:
                return None
            stop = end
            if i + 1 < len(toks) and toks[i + 1][0] == "one":
                stop = toks[i + 1][2]
                skip_until = i + 2
            out.append(text[last:start])
            out.append(" or ".join(_strip(t) for t in things))
            last = stop
            continue
        if antecedent is None:
            return None
        possessive = need.startswith("possessive:")
        need = need.split(":", 1)[-1]
        if need == "one":
            if antecedent.split(" ", 1)[0].lower() not in ("a", "an"):
                return None  # "one" stands for one of a kind: "a decorator", not "the format"
            replacement = antecedent
        else:
            if not _agrees(need, antecedent):
                return None
            replacement = antecedent
            if possessive:
                replacement = _possessive(replacement)
        if start == 0 or text[:start].rstrip().endswith((".", "?", "!")):
            replacement = replacement[:1].upper() + replacement[1:]
        elif replacement[:1].isupper() and replacement.split(" ", 1)[0].lower() in _LEADS:
            replacement = replacement[:1].lower() + replacement[1:]
        out.append(text[last:start])
        out.append(replacement)
        last = end
    if not out:
        return text
    out.append(text[last:])
    return "".join(out)


def _strip(phrase: str) -> str:
    return phrase.strip(" ,.;:?!")
