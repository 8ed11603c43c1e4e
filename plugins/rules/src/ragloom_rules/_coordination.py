"""Coordination: which words an "and" (or a list "A, B, or C") joins, and what they share.

The rule of thumb is that an item is a contiguous stretch of the user's words, fully
delimited by the words around the list, and that the list's frame (the words before the
first item and after the last) is shared by every item. Sharing more than that needs
evidence:

- a determiner or possessive before the first item only ("my phone, tablet, and laptop",
  "Apple's revenue and profit") is shared;
- a verb before the first item is shared when the items are its objects ("cook rice and
  beans"); two verbs in the same form make two actions ("reset my password and update my
  email"), and a lone verb shares its object ("install and configure nginx");
- a brand or product name before a list of facets is shared ("Samsung Galaxy S24 price and
  release date"), so is the name of a version list ("Python 3.12 and 3.13");
- the words after the last item are shared as a head noun ("fast and cheap options") only
  when they are a plural or a facet noun, or as a predicate only in a question that fronts
  its auxiliary ("How do bees and butterflies pollinate flowers?", "Are dolphins and whales
  mammals?").

Without such evidence no word is moved: "video editing and gaming" gives "video editing" and
"gaming", never "video gaming"; "credit card, PayPal, and bank transfer" gives the three.

A coordination is left alone (the question stays whole) when splitting it would change what is
asked: its items stand in a relation ("disagree", "together", "each other", "between X and
Y", "the sum of A and B", "on the same order"), an item refers back to another ("read a file
and write it"), it sits in a relative clause ("a job that runs every Monday and Friday"), it
is the subject of a statement ("My invoice and my app keeps crashing"), or the "and" joins
two clauses ("... and need help", "one at 12 pm and the next at 1 pm", "... at startup and
never touch malloc"). It is also left
alone when the words cannot settle its structure: a lone word facing several ("solar and
wind power": is "power" shared?), an adjective that may describe both items ("handcrafted
pasta & pizza"), a verb phrase that may be an object ("change my password and enable
two-step verification"). Statements and commands get stricter checks than questions: only
short, parallel noun phrases at the end of the clause split.

:func:`one_ask` tells, once the items are found, whether the list is part of one ask ("grant
SELECT and INSERT on a table", "dump and restore a database", "so people can clone and
push", "in a single command", ...): then the decomposer keeps the question whole.
"""

from __future__ import annotations

from itertools import pairwise

from . import _lexicon as lx
from ._asks import one_action, verb_at
from ._tokens import (
    AUX,
    CONJ,
    COP,
    FACET,
    NUM,
    PAIR,
    POSS,
    PREP,
    PRON,
    REF,
    SYM,
    WH,
    B,
    D,
    G,
    N,
    P,
    T,
    Token,
    V,
)

__all__ = [
    "Span", "Unit", "coordination_items", "list_ops", "one_ask", "relation_word", "units"
]

Span = tuple[int, int]  # token range [start, end)
Unit = tuple[int, int, int]  # (start with its determiners, start of the word, end)


def _joins(prev_flags: int, flags: int) -> bool:
    """Whether a word continues the unit before it ("New York", "iPhone 15", "Python 3")."""
    return bool(flags & G) or bool(flags & N and prev_flags & N)


def units(toks: list[Token], start: int, stop: int) -> list[Unit]:
    """The units of ``toks[start:stop]`` (a stretch without boundaries): a word with the
    determiners before it, names and numbers grouped ("the Apple Watch Ultra 2")."""
    out: list[Unit] = []
    det = -1
    j = start
    while j < stop:
        flags = toks[j][3]
        if flags & D and j + 1 < stop:
            if det < 0:
                det = j
            j += 1
            continue
        begin = det if det >= 0 else j
        det = -1
        end = j + 1
        while end < stop:
            nxt = toks[end][3]
            if nxt & (B | D) or not _joins(toks[end - 1][3], nxt):
                break
            end += 1
        out.append((begin, j, end))
        j = end
    return out


def list_ops(toks: list[Token], c: int) -> list[Span]:
    """Separators of the list whose last conjunction is token ``c`` (commas before it too)."""
    end = c + 1
    if end < len(toks) and toks[end][0] in ("also", "then", "just"):
        end += 1
    start = c - 1 if c > 0 and toks[c - 1][0] == "," else c
    ops: list[Span] = [(start, end)]
    j = start - 1
    while j >= 0:
        s = j
        while s >= 0 and not toks[s][3] & B:
            s -= 1
        if s < 0 or s == j or toks[s][0] != ",":
            break
        ops.insert(0, (s, s + 1))
        j = s - 1
    return ops


def relation_word(toks: list[Token]) -> bool:
    """Whether the clause speaks of a relation between things ("disagree", "each other",
    "together"), not of each thing on its own ("compatible with Android" is of each)."""
    n = len(toks)
    for i, (low, _, _, flags) in enumerate(toks):
        if flags & SYM:
            nxt = toks[i + 1][0] if i + 1 < n else ""
            if nxt in lx.DISTRIBUTIVE_AFTER and low not in ("together", "independently"):
                continue
            return True
        if low == "each" and i + 1 < n and toks[i + 1][0] == "other":
            return True
        if low in ("one", "in") and i + 1 < n and toks[i + 1][0] in ("another", "common"):
            return True
    return False


def _run_start(toks: list[Token], end: int) -> int:
    """Start of the stretch without boundaries that ends at ``end``."""
    j = end
    while j > 0 and not toks[j - 1][3] & B:
        j -= 1
    return j


def _run_end(toks: list[Token], start: int) -> int:
    """End of the stretch without boundaries that starts at ``start``."""
    j = start
    n = len(toks)
    while j < n and not toks[j][3] & B:
        j += 1
    return j


def _verb_form(word: str) -> str:
    if word in lx.VERB_BASES:
        return "base"
    if word.endswith("ing"):
        return "ing"
    if word.endswith("ed") or word in lx.IRREGULAR_PAST:
        return "past"
    return "s"


def _verbs(toks: list[Token], start: int, stop: int) -> list[int]:
    """Positions in ``[start, stop)`` of words used as verbs: verb-like words that do not
    follow a determiner or a possessive (then they are nouns: "my order")."""
    out = []
    for j in range(start, stop):
        flags = toks[j][3]
        if not flags & V or flags & N:
            continue
        if j > start and toks[j - 1][3] & (D | POSS):
            continue
        if (
            j == start
            and j > 0
            and toks[j - 1][3] & (D | POSS | PREP)
            and not (toks[j - 1][0] == "to" and toks[j][0] in lx.VERB_BASES)
        ):
            continue  # "for sleep tracking": a noun; "to store": a verb
        out.append(j)
    return out


def _plural(word: str) -> bool:
    return len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is"))


def _starts_clause(toks: list[Token], anchor: int) -> bool:
    """Whether the list starts its clause (nothing before it, or only an introduction)."""
    return anchor < 0 or bool(toks[anchor][3] & (P | CONJ))


def _is_question_clause(toks: list[Token]) -> bool:
    return bool(toks) and bool(toks[0][3] & (WH | AUX))


class _NoSplit(Exception):
    pass


#: Adverbs before the verb of a second predicate ("... and never touch ...").
_PREDICATE_ADVERBS = frozenset(("never", "always", "not", "still", "only", "just", "also"))


def coordination_items(
    toks: list[Token], c: int, *, strict: bool
) -> list[Span] | None:
    """The items joined by the conjunction at token ``c`` (with the commas before it), as
    token ranges, or ``None`` when the coordination must not be split. The text before the
    first item and after the last is the shared frame. ``strict``: the clause is a statement
    or a command, not a question or a request."""
    n = len(toks)
    low = toks[c][0]
    ops = list_ops(toks, c)
    if low == "or" and sum(1 for a, _ in ops if toks[a][0] == ",") < 2:
        return None  # "X or Y" is a choice; "A, B, or C" is a list
    # "In 2020, Germany, France and Italy ...": a first segment without words is no item
    while len(ops) > 1 and _run_start(toks, ops[0][0]) == ops[0][0]:
        ops = ops[1:]
    l_end = ops[0][0]
    r_start = ops[-1][1]
    if r_start >= n or l_end == 0:
        return None
    middles: list[Span] = []
    for (_, a), (b, _) in pairwise(ops):
        if a >= b or _run_end(toks, a) < b:
            return None
        middles.append((a, b))

    # -- a list of prepositional phrases: "at rest and in transit", "for and against X" --
    if toks[r_start][3] & PREP and not toks[r_start][3] & T:
        return _prepositional(toks, ops, middles)

    l_start = _run_start(toks, l_end)
    if l_start >= l_end:
        return None
    anchor = l_start - 1
    pair = -1
    if anchor >= 0 and toks[anchor][3] & PAIR:  # "both dental and vision"
        pair = anchor
        anchor -= 1
    r_max = _run_end(toks, r_start)
    if r_max == r_start:
        return None
    if r_max < n and toks[r_max][3] & PREP and (r_max + 1 == n or toks[r_max + 1][3] & P):
        r_max += 1  # "a tune up": a particle that ends the clause is the item's
    if anchor >= 0 and toks[anchor][3] & CONJ:
        return None  # "between A and B and C": the span is another list's item
    r_verb = bool(toks[r_start][3] & V) and not toks[r_start][3] & (N | D)
    if (
        toks[r_start][0] in _PREDICATE_ADVERBS
        and r_start + 1 < n
        and (toks[r_start + 1][3] & V or verb_at(toks, r_start + 1))
    ):
        return None  # "handed a buffer at startup and never touch malloc": a second predicate
    if anchor >= 0 and toks[anchor][0] in ("between", "among", "amongst"):
        return None  # "between the start and end": the pair is one thing
    if (
        anchor >= 0
        and r_max < n
        and toks[anchor][3] & PREP
        and toks[r_max][0] == toks[anchor][0]
    ):
        return None  # "one at 12 pm and the next at 1 pm": two clauses sharing a verb
    if r_verb and (strict or (r_max < n and toks[r_max][0] == "to")):
        # a statement's second action ("... and need help"), "and want to inform my bank":
        # two clauses, not a list
        return None
    if r_verb and toks[r_start][0] in lx.CONSTRAINT_VERBS:
        return None  # "undo the last commit and keep my changes": one task
    a_flags = toks[anchor][3] if anchor >= 0 else 0
    kind = "np"
    suffix_shared = False  # the last item was cut short: the words after it are shared
    form = _verb_form(toks[r_start][0]) if r_verb else ""
    verbs = _verbs(toks, l_start, l_end)
    same_form = [j for j in verbs if r_verb and _verb_form(toks[j][0]) == form]

    if a_flags & PREP and not a_flags & T and toks[l_start][3] & D:
        same_form = []  # "to my shopping list": a noun phrase, "list" is no verb here
    if r_verb and middles and not same_form and (not a_flags & PREP or toks[l_start][3] & D):
        return None  # "on my list, remove bread and add milk": the first part is no action
    if toks[r_start][3] & D and l_end - l_start == 1 and _verbs(toks, l_start, l_end):
        return None  # "if my account's blocked and the reason": a predicate and a noun
    if a_flags & PREP and not a_flags & T:
        second = toks[r_start + 1][3] if r_start + 1 < r_max else 0
        if not r_verb and _verb_shaped(toks, r_start, r_max) and not _verb_shaped(
            toks, l_start, l_end
        ):
            return None  # "to march 1 and notify my bank": an action, not a second date
        if r_verb and same_form and not middles:
            # "sfo arriving april 1st and returning april 7th": two actions in the list
            l_start, kind = same_form[-1], "vp"
            r_end = r_max
        elif r_verb and not middles and (toks[l_start][3] & D or second & (D | PRON | N)):
            # "off my shopping list and add milk", "set up 2FA and recover my account": the
            # "and" joins two actions, the first one's verb before the preposition
            before = [
                j
                for j in _verbs(toks, _run_start(toks, anchor), anchor)
                if _verb_form(toks[j][0]) == form
            ]
            if not before:
                return None
            l_start, kind = before[-1], "vp"
            r_end = r_max
        else:
            if verbs and toks[anchor][0] == "to" and verbs[0] == l_start and l_end - l_start > 1:
                # "to reach the North Pole and the South Pole": objects of the verb
                l_start = l_start + 1
            if (
                toks[anchor][0] == "of"
                and toks[r_start][3] & D
                and not toks[l_start][3] & D
                and not middles
            ):
                # "16GB of RAM and a 1TB SSD": the list is "16GB of RAM" and "a 1TB SSD"
                outer = _run_start(toks, anchor)
                if outer == anchor:
                    return None
                l_start, anchor = outer, outer - 1
            r_end = r_max
            if _shared_head(toks, l_start, l_end, r_start, r_max, middles):
                # "for my water and gas bills" shares its plural head; "for solar and wind
                # power", "in 32 and 34 waist" may or may not: unsure
                if not _plural(toks[r_max - 1][0]):
                    return None
                r_end, suffix_shared = units(toks, r_start, r_max)[0][2], True
    else:
        parallel = bool(same_form) and _parallel(toks, same_form[-1], l_end, r_start, r_max)
        if r_verb and parallel and not middles:
            # two actions: "reset my password and update my email"
            l_start, kind = same_form[-1], "vp"
            r_end = r_start + 1 if l_end - l_start == 1 else r_max  # "install and configure"
            suffix_shared = r_end < r_max
        elif r_verb and verbs and (same_form or form != "ing"):
            # "change my password and enable two-step verification" (two actions) or "change
            # my username and profile picture" (two objects), "got hired and need help": the
            # words cannot tell. An "-ing" word before a noun names a kind of thing:
            # "find my order confirmation and tracking number" lists objects
            return None
        elif r_verb and not verbs and anchor >= 0 and toks[anchor][3] & (PRON | P):
            return None  # "do me a favor and put sharpies on my list": two actions
        elif verbs and any(j + 1 < l_end for j in verbs):
            # objects of a verb: "cook rice and beans", "affect coral reefs and polar bears";
            # a verb after the last object ends it: "let my mom and dad know my location"
            l_start = max(j for j in verbs if j + 1 < l_end) + 1
            r_end = r_max
            # "and a virtual host in Apache": a verb-like word after the item's determiner
            # and its modifiers is the item's noun
            later = [
                j for j in _verbs(toks, r_start + 1, r_max) if not _in_phrase(toks, r_start, j)
            ]
            if later and not middles:
                r_end, suffix_shared = later[0], True
        else:
            try:
                l_start, r_end, suffix_shared = _balanced(
                    toks, l_start, l_end, r_start, r_max, middles, anchor
                )
            except _NoSplit:
                return None
    if kind == "vp" and r_end < n and (
        toks[r_end][3] & WH or (r_end - r_start == 1 and toks[r_end][0] in ("if", "whether"))
    ):
        # "and just play what comes next", "and see if I can redeem my points": its object
        r_end = _clause_end(toks, r_end)
    elif (
        kind == "vp"
        and r_end < n
        and toks[r_end][3] & PREP
        and not toks[r_end][3] & T
        and not suffix_shared
        and r_end - r_start > 1
    ):
        # "fix the clock setting and put GRUB back on the MBR": a place after the second
        # action with its own object is that action's (a clause after it, "if I lose my
        # phone", is shared by both)
        r_end = r_end + 1
        while r_end < n and not toks[r_end][3] & P and toks[r_end][0] not in lx.SUBORDINATORS:
            r_end += 1
    if kind == "vp" and any(toks[j][3] & REF for j in range(r_end, n)):
        return None  # "get my shopping list and order everything on it": "it" is the list
    if kind == "np" and _modifier_may_be_shared(toks, l_start, l_end, r_start, r_end, middles):
        return None  # "gusto handcrafted pasta & pizza": "handcrafted" may be shared

    if kind == "np":
        l_start = _version_list(toks, l_start, l_end, r_start, r_end)
    items = [(l_start, l_end), *middles, (r_start, r_end)]
    # a determiner or possessive on the first item only is shared: "my phone, tablet, and
    # laptop", "the Sony and Bose headphones"; when the last item has its own, or is a name
    # of its own ("the US and Europe"), each keeps its own
    r_flags = toks[r_start][3]
    own = r_flags & D or (r_flags & N and not suffix_shared)
    if kind == "np" and toks[l_start][3] & D and not own:
        first = l_start
        while first < l_end - 1 and toks[first][3] & D:
            first += 1
        if not any(toks[a][3] & D for a, _ in middles):
            if l_end - first > 1 and r_end - r_start == 1 and not middles:
                return None  # "a custom size and fabric": "custom" may be shared too
            items[0] = (first, l_end)
    if not _plausible(toks, items, anchor, pair, kind, suffix_shared, strict):
        return None
    return items


def _balanced(
    toks: list[Token],
    l_start: int,
    l_end: int,
    r_start: int,
    r_max: int,
    middles: list[Span],
    anchor: int,
) -> tuple[int, int, bool]:
    """Item extents where no preposition or verb delimits them: the first item and the last
    are given the same number of units, when the words that this moves into the frame may be
    shared (see the module documentation)."""
    left = units(toks, l_start, l_end)
    right = units(toks, r_start, r_max)
    if not left or not right:
        raise _NoSplit
    width = max((len(units(toks, a, b)) for a, b in middles), default=0)
    k_left = k_right = width if middles else min(len(left), len(right))
    # a brand or product before facets: "Samsung Galaxy S24 price and release date"
    if (
        not middles
        and len(left) >= 2
        and toks[left[0][1]][3] & N
        and not any(toks[j][3] & (N | D) for j in range(r_start, r_max))
        and toks[r_max - 1][3] & FACET
        and all(not toks[u[1]][3] & N for u in left[1:])
    ):
        return left[1][0], r_max, False
    if len(left) > k_left:
        dropped = left[: len(left) - k_left]
        # only a name (a brand, a product) may be shared from the front of the first item
        if not all(toks[u[1]][3] & N for u in dropped):
            k_left = len(left)
    l_new = left[len(left) - min(k_left, len(left))]
    l_begin = l_new[0]
    r_end = r_max
    shared = False
    if len(right) > k_right:
        cut = right[min(k_right, len(right)) - 1][2]
        singles = middles and all(b - a == 1 for a, b in middles)
        rest_first, rest_last = toks[cut][3], toks[r_max - 1]
        fronted = anchor >= 0 and bool(toks[anchor][3] & AUX) and _fronted(toks, anchor)
        # "Are dolphins and whales mammals?": the predicate of a yes/no question
        copula_question = _body_start(toks) == anchor and bool(toks[anchor][3] & COP)
        predicate = fronted and bool(rest_first & V)
        # a head noun shared by modifiers: "fast and cheap options", not "price and release
        # date" (the first item is a noun of its own)
        l_last = toks[l_end - 1]
        head = (
            (not middles or singles)
            and len(left) == 1
            and (_plural(rest_last[0]) or bool(rest_last[3] & FACET))
            and not (l_last[3] & FACET or _plural(l_last[0]))
        )
        if predicate or copula_question or head:
            r_end, shared = cut, True
        elif middles:
            raise _NoSplit  # "sick, personal, and vacation days" needs its shared head
        elif _starts_clause(toks, anchor):
            raise _NoSplit  # "My invoice and my app keeps crashing": no evidence, a clause
        elif _shared_head(toks, l_start, l_end, r_start, r_max, middles):
            raise _NoSplit  # "a cool and interesting thing": the head may be shared
    return l_begin, r_end, shared


def _version_list(toks: list[Token], l_start: int, l_end: int, r_start: int, r_end: int) -> int:
    """Start of the first item of a version list ("Python 3.12 and 3.13", "iOS 17 and 18"):
    the name before the first number is shared."""
    if (
        r_end - r_start == 1
        and toks[r_start][3] & NUM
        and l_end - l_start >= 2
        and toks[l_end - 1][3] & NUM
        and not toks[l_end - 2][3] & (NUM | D)
    ):
        return l_end - 1  # also "march 2 and 3", "july second and third"
    return l_start


def _parallel(toks: list[Token], verb: int, l_end: int, r_start: int, r_max: int) -> bool:
    """Whether two verb phrases have the same shape: a lone verb each ("install and
    configure"), or a verb followed by the same kind of word ("reset my password and update
    my email"), unlike "change my username and profile picture"."""
    if l_end - verb == 1:
        return True
    if r_max - r_start == 1:
        return False
    left, right = toks[verb + 1][3], toks[r_start + 1][3]
    if right & (D | PRON | PREP) or (right & N and left & D):
        return True  # "fix the clock setting and put GRUB back": two objects, two actions
    return _class(left) == _class(right) and not left & (D | PREP)


def _shared_head(
    toks: list[Token], l_start: int, l_end: int, r_start: int, r_max: int, middles: list[Span]
) -> bool:
    """Whether the last item may end in a head noun that the first one shares ("solar and
    wind power", "32 and 34 waist"): the first item is a lone word, the last one a word of the
    same kind (not a plural: modifiers are singular) followed by more words."""
    while l_start < l_end - 1 and toks[l_start][3] & D:
        l_start += 1  # "my water and gas bills": the determiner is the list's
    if middles or l_end - l_start != 1 or toks[l_start][3] & (D | FACET):
        return False
    number = bool(toks[l_start][3] & NUM)  # "20th and market streets"
    if _plural(toks[l_start][0]):
        return False  # "notifications and email alerts": a plural is a noun of its own
    right = units(toks, r_start, r_max)
    if len(right) < 2 or any(toks[j][3] & D for j in range(r_start, r_max)):
        return False
    return number or _class(toks[l_start][3]) == _class(toks[r_start][3])


def _in_phrase(toks: list[Token], start: int, j: int) -> bool:
    """Whether ``toks[j]`` ends the noun phrase opened by a determiner at ``start`` ("a
    virtual host"): only modifiers without a part of speech stand between them."""
    return bool(toks[start][3] & D) and all(not toks[k][3] for k in range(start + 1, j))


def _verb_shaped(toks: list[Token], start: int, end: int) -> bool:
    """Whether ``toks[start:end]`` looks like a verb and its object ("notify my bank"): a
    word, then a determiner or a pronoun."""
    return (
        end - start >= 2
        and not toks[start][3] & (D | N | B)
        and bool(toks[start + 1][3] & (D | PRON))
    )


def _clause_end(toks: list[Token], start: int) -> int:
    """End of the clause from ``start``: the next sentence mark or the end."""
    j = start
    while j < len(toks) and toks[j][0] not in (".", "?", "!", ";"):
        j += 1
    return j


_ADJECTIVE_ENDINGS = ("ed", "ful", "ous", "able", "ible", "less")


def _modifier_may_be_shared(
    toks: list[Token], l_start: int, l_end: int, r_start: int, r_end: int, middles: list[Span]
) -> bool:
    """Whether an adjective before the first item's noun may describe the other item too
    ("handcrafted pasta & pizza", "unusable and damaged card" aside): the first item is
    adjective(s) + noun, the other a lone noun. Noun modifiers ("video editing and gaming")
    are the first item's own."""
    if middles or r_end - r_start != 1 or toks[r_start][3] & (D | N):
        return False
    words = [j for j in range(l_start, l_end) if not toks[j][3] & D]
    if len(words) < 2:
        return False
    for j in words[:-1]:
        low = toks[j][0]
        if toks[j][3] & N or len(low) < 5:
            continue
        if low.endswith(_ADJECTIVE_ENDINGS) and not low.endswith(("ing", "eed")):
            return True
    return False


def _body_start(toks: list[Token]) -> int:
    """Index of the first word after an introduction ("Since 2020, ...")."""
    return 2 if len(toks) > 2 and toks[0][3] & T and toks[1][0] == "," else 0


def _fronted(toks: list[Token], aux: int) -> bool:
    """Whether the auxiliary at ``aux`` is fronted: first in the clause, or right after a
    question word phrase ("How do ...", "Why are ...", "How long do ...")."""
    if aux == 0:
        return True
    j = aux - 1
    while j >= 0 and not toks[j][3] & WH:
        if toks[j][3] & (B | D) and toks[j][0] not in ("much", "many", "long", "often"):
            return False
        j -= 1
    return j >= 0


def _prepositional(toks: list[Token], ops: list[Span], middles: list[Span]) -> list[Span] | None:
    """Items of a list of prepositional phrases, or ``None``."""
    l_end = ops[0][0]
    r_start = ops[-1][1]
    if l_end > 0 and toks[l_end - 1][3] & PREP and not toks[l_end - 1][3] & T:
        # "for and against nuclear power": the prepositions share their object
        if middles or r_start + 1 >= len(toks) or toks[r_start + 1][3] & B:
            return None
        return [(l_end - 1, l_end), (r_start, r_start + 1)]
    l_start = _run_start(toks, l_end)
    prep = l_start - 1
    if prep < 0 or l_start == l_end or not toks[prep][3] & PREP or toks[prep][3] & T:
        return None
    for a, b in middles:
        if not toks[a][3] & PREP or _run_end(toks, a + 1) < b:
            return None
    r_end = _run_end(toks, r_start + 1)
    if r_end == r_start + 1:
        return None
    return [(prep, l_end), *middles, (r_start, r_end)]


def _plausible(
    toks: list[Token],
    items: list[Span],
    anchor: int,
    pair: int,
    kind: str,
    suffix_shared: bool,
    strict: bool,
) -> bool:
    """Whether splitting the list keeps every sub-query's meaning (see the module doc)."""
    n = len(toks)
    first, last = items[0], items[-1]
    if any(a >= b for a, b in items):
        return False
    after = toks[last[1]] if last[1] < n else None
    # an item that refers to another ("write it"), or is followed by a pronoun ("tell them")
    for a, b in items:
        if any(toks[j][3] & (REF | PRON) for j in range(a, b)):
            return False
    # an item with a verb of its own is a clause: "and the printing wore off"
    if kind == "np":
        for a, b in items:
            for j in range(a + 1, b):
                low, _, _, flags = toks[j]
                finite = low in lx.IRREGULAR_PAST or low.endswith("ed") or (
                    strict and low.endswith("s")
                )
                if flags & V and finite and not flags & N and not toks[j - 1][3] & (D | V):
                    return False
    if after is not None and after[3] & PRON:
        return False
    # "between X and Y", "among A, B and C" bind the list
    for j in range(first[0] - 1, -1, -1):
        word = toks[j][0]
        if word in ("and", "&"):
            break
        if word in ("between", "among", "amongst"):
            return False
    # a list inside a relative clause describes one thing: "a job that runs every Monday
    # and Friday"
    for j in range(1, first[0]):
        if toks[j][0] in lx.RELATIVES and not toks[j - 1][3] & (B | D):
            return False
    # "the sum of 3, 7, 9, and 24", "the average of A and B": one value of them all
    if anchor > 0 and toks[anchor][0] == "of" and toks[anchor - 1][0] in lx.AGGREGATES:
        return False
    # "add 5 and 89": numbers to be combined
    if all(b - a == 1 and toks[a][0].isdigit() for a, b in items) and any(
        t[0] in ("add", "plus", "times") for t in toks
    ):
        return False
    # "a gift card and a promo code on the same order": used together
    if any(toks[j][0] in ("same", "together") for j in range(last[1], n)):
        return False
    question = _is_question_clause(toks)
    # the last item followed by an auxiliary is the subject of a new clause ("at the airport
    # and my luggage is not here"), unless a question word opens the list ("What sizes and
    # colors does it come in?")
    wh_list = anchor >= 0 and bool(toks[anchor][3] & WH) and not suffix_shared
    if after is not None and after[3] & AUX and not wh_list:
        return False
    # the subject of a statement: "My invoice and my app keeps crashing"
    if _starts_clause(toks, anchor) and after is not None and not after[3] & (P | PREP | T):
        return False
    if strict:
        if kind == "vp" or suffix_shared:
            return False
        if _verb_shaped(toks, last[0], last[1]):
            return False  # "use the map and pinpoint my position": two actions
        if after is not None and (not after[3] & (P | PREP | T) or after[0] == "to"):
            return False  # "... and my bank needs to know": a clause
        words = [j for j in range(last[0], last[1]) if not toks[j][3] & D]
        if len(words) > 2:
            return False
        first_class = "det" if first[0] > 0 and toks[first[0] - 1][3] & D else None
        classes = {first_class or _class(toks[first[0]][3])}
        classes |= {_class(toks[a][3]) for a, _ in items[1:]}
        if len(classes) > 1:
            return False  # "in my pocket and bent": not two of a kind
    elif not question and kind == "vp" and not suffix_shared and anchor < 0:
        return False
    texts = [" ".join(t[0] for t in toks[a:b]) for a, b in items]
    return len(set(texts)) == len(texts)


def _class(flags: int) -> str:
    if flags & D:
        return "det"
    if flags & NUM:
        return "number"
    if flags & N:
        return "name"
    return "word"


def _inverse(a: str, b: str) -> bool:
    """Whether two actions undo each other ("enable" / "disable", "dump" / "restore")."""
    if frozenset((a, b)) in lx.INVERSE_PAIRS:
        return True
    for x, y in ((a, b), (b, a)):
        for prefix in lx.INVERSE_PREFIXES:
            if y == prefix + x:
                return True
    return False


def _participle(word: str) -> bool:
    return word.endswith("ed") or word in lx.IRREGULAR_PAST


def _pleonastic_it(toks: list[Token], i: int) -> bool:
    """ "is it possible to", "does it take": an "it" that stands for nothing."""
    prev = toks[i - 1][0] if i > 0 else ""
    nxt = toks[i + 1][0] if i + 1 < len(toks) else ""
    later = [t[0] for t in toks[i + 2 : i + 5]]
    return "to" in later and (prev in ("is", "was", "does", "did", "will") or nxt in ("is", "was"))


def _request_frame(toks: list[Token]) -> int:
    """Index after a request's opening words ("Show me how", "Can you tell me what")."""
    j = 0
    n = len(toks)
    while j < n and (
        toks[j][0] in lx.REQUEST_VERBS or toks[j][0] in ("me", "us", "please", "can", "could",
                                                         "would", "you")
    ):
        j += 1
    if 0 < j < n and toks[j][3] & WH:
        j += 1
    return j


#: Subordinators that open a clause before the question ("If I change X and Y, does ...").
_OPENING_SUBORDINATORS = lx.words(
    "if when whenever while once unless although though because until"
)
#: "make X wait and retry": the actions are X's behaviour.
_CAUSATIVE = lx.words("make makes making let lets")


def _literal(text: str, toks: list[Token], a: int, b: int) -> bool:
    """Whether ``toks[a:b]`` is a literal of code: a keyword in capitals ("SELECT"), a call
    ("assert()"), an option ("-x"), a name with an underscore ("dense_rank")."""
    if b - a != 1 and not all(not toks[j][3] & (N | B | D | P) for j in range(a + 1, b)):
        return False  # a keyword and a head noun ("TEMP privileges") is one too
    raw = text[toks[a][1] : toks[a][2]]
    if raw.startswith("-") or "_" in raw or raw.endswith(")"):
        return True
    return len(raw) >= 3 and raw.isalpha() and raw.isupper()


def one_ask(text: str, toks: list[Token], items: list[Span]) -> bool:
    """Whether the list ``items`` is part of one ask, so that splitting it would change or
    garble what is asked (the caller keeps the clause whole):

    - the clause says its actions are one: "in a single apt command", "at once";
    - a pronoun after the list refers back to it: "booleans and dates, given SQLite has no
      types for them", "a directory and everything in it";
    - the items are participles describing one thing: "rows inserted, updated and deleted";
    - the items are actions that undo each other: "enable and disable Apache modules", "dump
      and restore a database";
    - the list sits in a clause inside the clause: "so people can clone and push", "when git
      says ... and HEAD points", "see how much space each table and index uses";
    - "which clients can talk both SIP and XMPP": the things that do both;
    - a medial list of words followed by more of the action ("grant SELECT and INSERT on a
      table to a role", "a folder of Markdown and HTML docs from the command line"): the
      items are the action's values, not separate asks (facets, "price and release date of
      X", and time phrases aside);
    - the subject of a question after its question word ("Which companies and products use
      SQLite?").
    """
    n = len(toks)
    first, last = items[0], items[-1]
    if one_action(text):
        return True
    for j in range(last[0], n):
        if toks[j][3] & REF and not (toks[j][0] == "it" and _pleonastic_it(toks, j)):
            return True
    for a, b in items[1:]:
        if any(toks[j][0] in ("one", "ones") and not toks[j - 1][3] & NUM for j in range(a + 1, b)):
            return True  # "list all indexes and drop the unused ones": ones of the first
    if all(b - a == 1 and _participle(toks[a][0]) for a, b in items):
        return True
    ends = [toks[b - 1][0] for a, b in items]
    verbs = [w for (a, b), w in zip(items, ends, strict=True) if toks[b - 1][3] & V or b - a == 1]
    if len(verbs) == len(items) and any(
        _inverse(x, y) for i, x in enumerate(verbs) for y in verbs[i + 1 :]
    ):
        return True
    frame = max(_request_frame(toks), 1)
    for j in range(frame, first[0]):
        low = toks[j][0]
        if low in lx.SUBORDINATORS and not (toks[j][3] & WH and toks[j + 1][0] == "to"):
            return True
    if toks[0][0] in _OPENING_SUBORDINATORS and not toks[1][3] & AUX:
        return True  # "If I change the chunk size and rerun the ingest, does ...?"
    after = toks[last[1]] if last[1] < n else None
    if after is not None and after[0] in ("and", "or", "&"):
        return True  # "put the SSID and passphrase into ...": where the last item ends is unsure
    lone = all(b - a == 1 for a, b in items) and bool(toks[last[0]][3] & V)
    if (
        first[1] - first[0] == 1
        and toks[first[0]][3] & V
        and any(toks[j][0] in _CAUSATIVE for j in range(max(first[0] - 3, 0), first[0]))
    ):
        return True  # "make SQLite wait and retry for a few seconds": one behaviour
    if lone and any(
        toks[j][0] in ("and", "or", "&") or toks[j][0] in lx.RELATIVES
        for j in range(last[1], n)
    ):
        # "find and confine daemons that have no profile", "build and run a pipeline with
        # anyio and Document objects": what the actions share is itself a structure
        return True
    lead = toks[0]
    if first[0] > 0 and toks[first[0] - 1][0] == "both" and lead[0] in ("which", "what", "who"):
        return True
    if first[0] > 1 and toks[first[0] - 1][0] == "both" and toks[first[0] - 2][3] & PREP:
        return True  # "open a file for both reading and writing": one mode that is both
    # the word after the list is the clause's verb ("Do HTTP and HTTPS use ...?") unless a
    # verb follows it ("the SHARED and EXCLUSIVE locks work")
    verb_after = (
        after is not None
        and bool(after[3] & (V | AUX | P))
        and not (last[1] + 1 < n and toks[last[1] + 1][3] & V)
    )
    if all(_literal(text, toks, a, b) for a, b in items) and (len(items) > 2 or not verb_after):
        # "grant SELECT and INSERT on a table", "the SHARED, RESERVED and PENDING locks":
        # the values one action or one thing takes ("Do HTTP and HTTPS use ...?" aside)
        return True
    if after is not None and after[3] & PREP and not after[3] & T:
        # "chunk a folder of Markdown and HTML docs from the command line into a JSONL file":
        # the list is one of several things the action is given
        preps = sum(1 for t in toks[last[1] :] if t[3] & PREP and not t[3] & T)
        verb_list = bool(toks[last[0]][3] & V) and not toks[last[0]][3] & (N | D)
        facets = all(toks[b - 1][3] & FACET for _, b in items)  # "symptoms and causes of X"
        if preps >= 2 and not verb_list and not facets:
            return True
    if first[0] == 1 and lead[0] in ("which", "what"):
        inner = range(last[0] + 1, last[1])
        verb = after if after is not None else None
        if any(toks[j][3] & V and not toks[j][3] & (N | D) for j in inner) or (
            verb is not None and verb[3] & V and not verb[3] & (AUX | N)
        ):
            return True
    return False
