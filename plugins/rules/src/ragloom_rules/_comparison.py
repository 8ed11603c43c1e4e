"""Comparisons: one search phrase per compared item ("X vs Y", "difference between X and Y").

Recognised forms: "X or Y: which ...", "which ..., X or Y?", "X vs Y" / "X versus Y"
(chains too), "difference(s) between X and Y", "compare X and Y" / "compare X with Y",
"X compared to Y", "how does X compare to Y", "how do X and Y differ", "X different from Y".
Each item's phrase is the clause with the comparison wording removed ("Compare renewable
energy adoption in Germany vs France since 2020" -> "Renewable energy adoption in Germany
since 2020"); the caller adds the comparison itself.

Only things set side by side (:func:`juxtaposed`: "X vs Y", "X or Y: which ...", "which ...,
X or Y?") are split by the decomposer; a comparison named by a word ("the difference between
X and Y", "compare X and Y", "how do X and Y differ") asks for one relation and stays whole,
its items still being what a later "which one" or "either" stands for. "X vs Y: when would I
use each ...?" gives the question asked of each item (:func:`each_item`).

The compared items are found like any list (:mod:`ragloom_rules._coordination`), except that
their two sides are balanced: in "compare solar and wind power costs" the words after the
last item are the shared head, and in "how do Git rebase and merge differ" the name before the
first item is shared.
"""

from __future__ import annotations

import re
from itertools import pairwise

from . import _lexicon as lx
from ._coordination import Span, list_ops, units
from ._tokens import PRON, REF, SUBJ, B, N, P, Token

__all__ = ["comparison", "each_item", "juxtaposed"]

_P_COMPARE = re.compile(
    r"^(?:please\s+)?(?:(?:can|could|would)\s+you\s+)?(?:compare|contrast|comparing)"
    r"(?:\s+and\s+contrast)?\b\s*",
    re.IGNORECASE,
)
_P_COMPARISON = re.compile(
    r"^(?:(?:a|the)\s+)?(?:comparison|contrast)\s+(?:of|between)\b\s*", re.IGNORECASE
)
_P_DIFFERENCE = re.compile(
    r"^(?:(?:what|which)(?:'s|\u2019s|\s+is|\s+are|\s+was|\s+were)\s+|(?:explain|describe|list)\s+"
    r"|tell\s+me\s+|is\s+there\s+(?:a|any)\s+|are\s+there\s+(?:any\s+)?)?(?:the\s+|a\s+|any\s+)?"
    r"(?:(?:main|key|major|biggest|real|important|primary|basic|fundamental|notable|exact|"
    r"significant|actual)\s+)*(?P<pre>(?:[\w'\u2019-]+\s+){0,3}?)differences?\s+"
    r"(?:(?:in|of)\s+(?P<post>(?:[\w'\u2019-]+\s+){1,3}?))?(?:between|among)(?:\s+(?:the|a|an))?"
    r"(?P<shared>(?:\s+[\w'\u2019.+#-]+)*?)\s*$",
    re.IGNORECASE,
)
#: Any other wording before "difference(s) between" ("I need to know the difference between").
_P_ANY_DIFFERENCE = re.compile(
    r"^.*?\bdifferences?\s+(?:(?:in|of)\s+(?P<post>(?:[\w'\u2019-]+\s+){1,3}?))?"
    r"(?:between|among)(?:\s+(?:the|a|an))?(?P<shared>(?:\s+[\w'\u2019.+#-]+)*?)\s*$",
    re.IGNORECASE,
)
#: The question words before the compared items ("How does", "How do the").
_P_QUESTION = re.compile(
    r"^(?:how\s+)?(?:does|do|did|is|are|was|were|would|will)\b"
    r"(?:\s+(?:the|a|an|my|your|our|their|this|these|those)\b)?\s*",
    re.IGNORECASE,
)
_S_COMPARE = re.compile(r"^\s*(?:differ|differs|compare|compares|contrast)\b\s*", re.IGNORECASE)
_S_DIFFERENCE = re.compile(
    r"^\s*[:,;-]?\s*(?:what(?:'s|\u2019s|\s+is|\s+are)\s+)?the\s+(?:main\s+|key\s+)?differences?\b.*$",
    re.IGNORECASE,
)
_WHICH_HEAD = re.compile(
    r"^(?:which|what)(?:'s|\u2019s)?(?:\s+one)?(?:\s+of\s+(?:them|these|those|the\s+\w+))?"
    r"(?:(?:\s+(?!(?:is|are|was|were|would|will|should|could|can|do|does|did|has|have)\b)"
    r"[a-z][\w-]*){1,3}(?=\s+(?:is|are|was|were|has|have|had|would|will|should|could|can|"
    r"does|do)\b))?"
    r"\s*",
    re.IGNORECASE,
)
_COPULA = re.compile(r"^(?:is|are|was|were|would\s+be|will\s+be)\b\s*", re.IGNORECASE)
_MODAL_SUBJECT_VERB = re.compile(
    r"^(?:should|would|could|can|do|does|did|will|shall|must)\s+(?:i|we|you|they|one)"
    r"(?:\s+rather)?(?:\s+[\w'\u2019-]+)?\b\s*",
    re.IGNORECASE,
)
_ITEM_SEPARATORS = frozenset(("or", "vs", "versus", ","))
_VS = frozenset(("vs", "versus"))
_COMPARE_WORDS = frozenset(
    ("compare", "compared", "compares", "comparing", "comparison", "contrast")
)


def _items_between(text: str, toks: list[Token], a: int, b: int) -> list[str] | None:
    """Items of ``toks[a:b]`` separated by or / vs / versus / commas (two or more, one 'or')."""
    items: list[str] = []
    joined = False
    begin = j = a
    while j < b:
        low = toks[j][0]
        if low in _ITEM_SEPARATORS:
            if low != ",":
                joined = True
            if begin < j:
                items.append(text[toks[begin][1] : toks[j - 1][2]])
            elif not (low == "or" and items and toks[j - 1][0] == ","):  # "A, B, or C"
                return None
            j += 1
            if low in _VS and j < b and toks[j][0] == ".":
                j += 1
            begin = j
            continue
        if toks[j][3] & B:
            return None
        j += 1
    if begin >= b:
        return None
    items.append(text[toks[begin][1] : toks[b - 1][2]])
    return items if joined and len(items) >= 2 else None


def _which_tail(which_part: str) -> str:
    tail = _WHICH_HEAD.sub("", which_part.strip(), count=1)
    tail = _COPULA.sub("", tail, count=1)
    tail = _MODAL_SUBJECT_VERB.sub("", tail, count=1)
    tail = tail.strip(" ?!.:,;")
    last = tail.rsplit(" ", 1)[-1].lower()
    if last in _STRANDED:
        return ""  # "which one should I store API payloads in": no phrase of an item
    return tail


_STRANDED = frozenset(("in", "on", "for", "with", "to", "from", "at", "of", "by", "into"))


def _named(items: list[str]) -> list[str]:
    """Items of a version list with their name: "Python 3.11 vs 3.12" -> "Python 3.12"."""
    head, _, number = items[0].rpartition(" ")
    if not head or not number[:1].isdigit():
        return items
    return [
        f"{head} {item}" if item[:1].isdigit() and " " not in item else item for item in items
    ]


def _which_form(text: str, toks: list[Token]) -> list[str] | None:
    """ "X or Y: which ..." and "which ..., X or Y" -> one "<item> <rest>" per item."""
    n = len(toks)
    if toks[0][0] == "which":
        for d in range(1, n - 1):
            if toks[d][0] in (":", ","):
                items = _items_between(text, toks, d + 1, n)
                if items:
                    tail = _which_tail(text[: toks[d][1]])
                    return [f"{item} {tail}".strip() for item in items]
        return None
    for d in range(1, n - 1):
        if toks[d][0] in (":", ",", "-") and toks[d + 1][0] in ("which", "what", "what's"):
            items = _items_between(text, toks, 0, d)
            if items:
                tail = _which_tail(text[toks[d + 1][1] :])
                return [f"{item} {tail}".strip() for item in _named(items)]
            return None
    return None


def _comparison_ops(toks: list[Token]) -> list[Span] | None:
    n = len(toks)
    lows = [t[0] for t in toks]
    vs = [i for i, w in enumerate(lows) if w in _VS]
    if vs:
        return [(i, i + 2 if i + 1 < n and lows[i + 1] == "." else i + 1) for i in vs]
    for i, w in enumerate(lows):
        if w in ("difference", "differences"):
            for b in range(i + 1, min(n, i + 6)):
                if lows[b] in ("between", "among"):
                    for c in range(b + 1, n):
                        if lows[c] in ("and", "&"):
                            return list_ops(toks, c)
                    return None
            for c in range(i - 1, 0, -1):
                if lows[c] in ("and", "&"):
                    return list_ops(toks, c)
        if w in _COMPARE_WORDS:
            if i + 1 < n and lows[i + 1] in ("to", "with", "against") and i > 0:
                return [(i, i + 2)]
            for c in range(i + 1, n):
                if lows[c] in ("and", "&"):
                    return list_ops(toks, c)
                if lows[c] in ("with", "to", "against"):
                    # "compare X with Y" only when X is a plain noun phrase: in "compare
                    # prices for flights from A to B" the "to" is not the comparison's
                    if any(t[3] & B for t in toks[i + 1 : c]):
                        return None
                    return [(c, c + 1)]
            for c in range(i - 1, 0, -1):
                if lows[c] in ("and", "&"):
                    return list_ops(toks, c)
            return None
        if w in ("differ", "differs", "different"):
            if i + 1 < n and lows[i + 1] == "from" and i > 0:
                return [(i, i + 2)]
            for c in range(i - 1, 0, -1):
                if lows[c] in ("and", "&"):
                    return list_ops(toks, c)
            return None
    return None


def _units_left(toks: list[Token], i: int) -> list[tuple[int, int, int]]:
    """Units ending before token ``i``, nearest first, up to a boundary."""
    j = i
    while j > 0 and not toks[j - 1][3] & B:
        j -= 1
    return units(toks, j, i)[::-1]


def _compared(toks: list[Token], ops: list[Span]) -> list[Span] | None:
    """The compared items around the separators ``ops``, both sides balanced."""
    while True:
        left = _units_left(toks, ops[0][0])
        if left or len(ops) == 1:
            break
        ops = ops[1:]
    end = ops[-1][1]
    stop = end
    while stop < len(toks) and not toks[stop][3] & B:
        stop += 1
    right = units(toks, end, stop)
    if not left or not right:
        return None
    middles: list[Span] = []
    widest = 0
    for (_, a), (b, _) in pairwise(ops):
        found = units(toks, a, b)
        if not found or found[0][0] != a or found[-1][2] != b:
            return None
        middles.append((a, b))
        widest = max(widest, len(found))
    k_left = k_right = widest if middles else min(len(left), len(right))
    if not middles:
        before = left[-1][0] - 1
        if len(left) >= 2 and len(right) >= 2 and before >= 0 and toks[before][3] & SUBJ:
            k_left, k_right = len(left), len(right)
        elif toks[right[-1][2] - 1][0] == toks[left[0][2] - 1][0]:
            # "a Roth IRA and a traditional IRA": the head noun is repeated, not shared
            k_right = len(right)
    if len(left) > k_left and not all(toks[u[1]][3] & N for u in left[k_left:]):
        k_left = len(left)  # only a name may be shared from the front: "Git rebase and merge"
    first = left[min(k_left, len(left)) - 1]
    last = right[min(k_right, len(right)) - 1]
    right_has_det = right[0][0] != right[0][1]
    # "compared to others", "different from Y": a standard of comparison, not a parallel item,
    # shares no determiner
    standard = len(ops) == 1 and toks[ops[0][1] - 1][0] in ("to", "with", "from", "against")
    first_start = first[0] if right_has_det or standard else first[1]
    return [(first_start, left[0][2]), *middles, (right[0][0], last[2])]


def _clean_prefix(prefix: str) -> tuple[str, str]:
    """The prefix without comparison wording, and an aspect to put after each item."""
    p = prefix.strip()
    p = _P_COMPARE.sub("", p, count=1)
    p = _P_COMPARISON.sub("", p, count=1)
    # a name shared by the items stays in front of them: "between SQL joins and subqueries"
    m = _P_DIFFERENCE.match(p)
    if m:
        words = f"{m.group('pre') or ''} {m.group('post') or ''}".split()
        aspect = " ".join(w for w in words if w.lower() not in _DETERMINERS)
        return m.group("shared").strip(), aspect
    m = _P_ANY_DIFFERENCE.match(p)
    if m:
        return m.group("shared").strip(), " ".join(
            w for w in (m.group("post") or "").split() if w.lower() not in _DETERMINERS
        )
    return _P_QUESTION.sub("", p, count=1), ""


_DETERMINERS = lx.words("the a an my your our their his her its this these those")


def comparison(text: str, toks: list[Token]) -> list[str] | None:
    """One search phrase per compared item, or ``None`` when ``text`` compares nothing."""
    which = _which_form(text, toks)
    if which is not None:
        return which
    ops = _comparison_ops(toks)
    if not ops:
        return None
    items = _compared(toks, ops)
    if items is None and len(ops) > 1:
        ops = ops[:1]
        items = _compared(toks, ops)
    if items is None:
        return None
    if any(toks[j][3] & (REF | PRON) for a, b in items for j in range(a, b)):
        return None  # "how does it compare": what "it" is must be known first
    prefix, aspect = _clean_prefix(text[: toks[items[0][0]][1]])
    suffix = text[toks[items[-1][1] - 1][2] :]
    suffix = _S_DIFFERENCE.sub("", _S_COMPARE.sub(" ", suffix, count=1), count=1)
    out = []
    for a, b in items:
        item = text[toks[a][1] : toks[b - 1][2]]
        out.append(f"{prefix} {item} {aspect}{suffix}")
    return out


def juxtaposed(text: str, toks: list[Token]) -> bool:
    """Whether a comparison sets its items side by side ("X vs Y", "X or Y: which ...",
    "which ..., X or Y?"): each item is searched on its own. A comparison named by a word
    ("the difference between X and Y", "compare X and Y", "how do X and Y differ") asks for
    the relation: one ask."""
    return any(t[0] in _VS for t in toks) or _which_form(text, toks) is not None


def each_item(text: str, toks: list[Token]) -> list[str] | None:
    """ "X vs Y: when would I use each ...?" -> the question asked of each item ("when would I
    use X ...", "when would I use Y ..."), or ``None``."""
    n = len(toks)
    for d in range(1, n - 2):
        if toks[d][0] not in (":", ",", "-", "\u2014"):
            continue
        items = _items_between(text, toks, 0, d)
        if items is None or not any(t[0] in _VS for t in toks[:d]):
            return None
        for e in range(d + 1, n):
            if toks[e][0] != "each":
                continue
            nxt = toks[e + 1] if e + 1 < n else None
            stop = toks[e][2]
            if nxt is not None and nxt[0] == "one":
                stop = nxt[2]
            elif nxt is not None and not nxt[3] & (B | P):
                continue  # "each branch": a determiner
            head, tail = text[toks[d + 1][1] : toks[e][1]], text[stop:]
            return [f"{head}{item.strip()}{tail}" for item in items]
        return None
    return None
