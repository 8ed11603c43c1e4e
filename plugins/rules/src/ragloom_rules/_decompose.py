"""Rule-based query decomposition: comparisons, coordinated questions and enumerations.

Pure Python, no ragloom core, no model. :func:`decompose` is deterministic and fast (tens of
microseconds a query): every regular expression is compiled once, at import.

How it works, in order:

1. A query whose spec-002 :func:`~ragloom_rules._signals.complexity` is 1 (no comparison or
   conjunction word, no list punctuation, ten words or fewer) and that holds a single sentence
   is returned whole.
2. The query is cut into sentences (after ``?`` / ``!``, or after ``.`` when a question word
   follows), then into clauses at ``;`` and at "and" / "&" / "but" / "plus" (also ", also")
   when a new question starts after it ("What is X and how does Y work?"). Clauses share
   context: a time phrase ("since 2020", "in 2023", "between 2010 and 2015", "over the last
   5 years") or a place phrase ("in Germany", "across the United States") found in one clause
   is appended to every clause that has none of that kind (a place only to clauses that name
   nothing themselves); a pronoun (it, its, they, them, their, he, she, him, his) in a later
   clause is replaced by the subject of a first clause of the form "What/Who is <short noun
   phrase>" ("What is Docker and how does it work?" -> "How does Docker work?").
3. Each clause is checked for a comparison, else for an enumeration, else kept whole:

   * comparisons: "X or Y: which ...", "which ..., X or Y?", "X vs Y" / "X versus Y"
     (chains too), "difference(s) between X and Y", "compare X and Y" / "compare X with Y",
     "X compared to Y", "how does X compare to Y", "how do X and Y differ", "X different
     from Y". One sub-query per compared item is made from the clause with the comparison
     wording removed ("Compare renewable energy adoption in Germany vs France since 2020" ->
     "Renewable energy adoption in Germany since 2020", ...), followed by the clause itself
     (the comparison) unless ``include_comparison`` is false.
   * enumerations: "A, B, and C" (also with "or" when there are three items or more) and
     "A and B". The text before the first item and after the last one is shared, so
     "What are the effects of caffeine on sleep, memory, and mood?" gives one question per
     item. The items' extent is found without a tagger: words run up to a boundary word
     (preposition, question word, auxiliary, pronoun, conjunction, punctuation, time phrase),
     capitalised words and numbers group into names ("New York", "iPhone 15"), determiners
     belong to the word after them, and the two sides of an "and" are made the same number
     of such units ("cook rice and beans", "reset my password and update my email", "solar
     panels and wind turbines generate electricity"). Fixed pairs ("terms and conditions",
     "pros and cons", "research and development", ...) and "between X and Y" are not split.
     Nested enumerations multiply ("causes and effects of inflation and unemployment"). An
     "and" that joins actions or clauses is left alone: an item followed by a pronoun
     ("text Mary and tell them ..."), a determined item followed by an auxiliary ("... and
     my card was declined"), and, outside questions, anything but short or determined items
     ("take bread off my list and add milk" stays whole; see ``_plausible``).

The result keeps the user's words: sub-queries are slices of the query put back together,
with spacing normalised, the first letter capitalised when the query's was, and a ``?`` when
the sentence asked one (item sub-queries of a comparison are search phrases and get no ``?``
unless they start with a question word). Duplicates are dropped and at most
``max_sub_queries`` are returned; a comparison that must be cut keeps its comparison query.

Known limits (no part-of-speech tagger): a modifier shared by coordinated nouns is read as
belonging to the nearest one only ("green tea and coffee" -> "green tea", "green coffee";
"food prices and rents" -> "food prices", "food rents"); "X or Y" outside the which-forms is
left whole (it is usually a choice inside one question); comparative questions without a
comparison word ("Is X faster than Y?") stay whole.
"""

from __future__ import annotations

import re
from itertools import pairwise

from ._signals import complexity

__all__ = ["decompose"]

# -- vocabulary ------------------------------------------------------------------------------


def _set(words: str) -> frozenset[str]:
    return frozenset(words.split())


_PREPOSITIONS = _set(
    "of in on at for to from with without by about between among amongst during since until "
    "till before after into onto over under through across against within via per like than "
    "as regarding toward towards around near beyond behind upon despite except versus vs"
)
_WH = _set(
    "what which who whom whose where when why how what's how's who's where's "
    "what\u2019s how\u2019s who\u2019s where\u2019s"
)
_AUX = _set(
    "is are was were be been being am do does did can could should would will shall may might "
    "must has have had isn't aren't wasn't weren't don't doesn't didn't can't couldn't "
    "shouldn't wouldn't won't hasn't haven't"
)
_PRONOUNS = _set(
    "i we you they he she it me us them him there i'm i'd i'll i've we're we'd we'll we've "
    "you're you'd you'll you've they're they'd they'll they've he's he'd she's she'd it's "
    "that's there's"
)
_CONJUNCTIONS = _set("and & or but nor so yet also then plus")
_COMPARISON = _set(
    "compare compared compares comparing comparison comparisons contrast difference "
    "differences differ differs different"
)
_OTHER_BOUNDARIES = _set("that whether if please both either neither not")
_DETERMINERS = _set(
    "the a an my your our their his her its this these those some any each every another"
)
_SUBJECT_WORDS = _set("i you we they it he she there this that these those")

_YEAR = r"(?:1[6-9]|20)\d{2}"
_MONTH = (
    r"(?:january|february|march|april|may|june|july|august|september|october|november|"
    r"december|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)\.?"
)
_COUNT = (
    r"(?:\d+|a|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|"
    r"thirty|fifty|hundred|few|several|couple(?:\s+of)?)"
)
_UNIT = r"(?:years?|months?|weeks?|days?|hours?|decades?|century|centuries|quarters?)"
_SEASON = r"(?:year|month|week|quarter|decade|summer|winter|spring|autumn|fall|season)"
#: A time phrase: shared context, never an item, and its "and" is not a conjunction.
_TIME = (
    rf"between\s+(?:{_MONTH}\s+)?{_YEAR}\s+and\s+(?:{_MONTH}\s+)?{_YEAR}"
    rf"|from\s+(?:{_MONTH}\s+)?{_YEAR}\s*(?:to|until|till|through|-|\u2013)\s*(?:{_MONTH}\s+)?{_YEAR}"
    r"|(?:since|in|during|before|after|until|till|by|through|throughout|as\s+of|from|around)"
    rf"\s+(?:the\s+)?(?:(?:early|late|mid)(?:\s+|-))?(?:{_MONTH}\s+(?:\d{{1,2}},?\s+)?)?"
    rf"{_YEAR}s?(?:\s*(?:-|\u2013|to)\s*{_YEAR})?"
    rf"|(?:in|over|during|within|for)\s+the\s+(?:last|past|next|previous|coming)\s+"
    rf"(?:{_COUNT}\s+)?{_UNIT}"
    rf"|(?:in\s+|during\s+)?q[1-4]\s+{_YEAR}"
    rf"|(?:(?:since|until|before|after|by|in|during)\s+)?(?:last|this|next|past)\s+{_SEASON}"
    r"|(?:in\s+)?recent\s+years"
    rf"|{_YEAR}\s*(?:-|\u2013)\s*{_YEAR}"
)
#: Set phrases whose "and" never separates two items.
_FIXED_PAIRS = (
    "research and development|terms and conditions|pros and cons|salt and pepper|rock and roll|"
    "black and white|bread and butter|trial and error|supply and demand|profit and loss|"
    "mergers and acquisitions|health and safety|law and order|arts and crafts|ups and downs|"
    "back and forth|odds and ends|wear and tear|peace and quiet|first and foremost|"
    "each and every|by and large|more and more|again and again|over and over|q and a|"
    "r and d|b and b|bed and breakfast|fish and chips|procter and gamble|johnson and johnson|"
    "marks and spencer|barnes and noble|ben and jerry's|dungeons and dragons|"
    "search and rescue|hide and seek|give and take|cut and paste|copy and paste|"
    "drag and drop|plug and play|point and click|lock and key|nuts and bolts|"
    # "go ahead and cancel it": one action, not two
    "go ahead and|try and|go and|come and|check and see|wait and see|stop and|"
    "peanut butter and jelly|macaroni and cheese|mac and cheese|ham and cheese|"
    "bath and body works|ben and jerry|tom and jerry|simon and garfunkel|"
    "fast and furious|pride and prejudice|crime and punishment|war and peace"
)

_WORD = re.compile(r"[$€£]?\w(?:[\w'\u2019&+#-]|\.(?=\w))*%?|[^\w\s]")
_TIME_AT = re.compile(rf"(?:{_TIME})(?!\w)", re.IGNORECASE)
_FIXED_AT = re.compile(rf"(?:{_FIXED_PAIRS})(?!\w)", re.IGNORECASE)
#: Words a time phrase can start with; the phrase regex is only tried at these tokens.
_TIME_STARTS = _set(
    "between from since in during before after until till by through throughout as around "
    "over within for q1 q2 q3 q4 last this next past recent"
)
_FIXED_STARTS = frozenset(pair.split()[0] for pair in _FIXED_PAIRS.split("|"))
_NOT_PLACES = _set(
    "january february march april may june july august september october november december "
    "monday tuesday wednesday thursday friday saturday sunday i"
)
_PLACE_RE = re.compile(
    r"(?<!\w)(?:[Ii]n|[Aa]cross|[Ww]ithin|[Tt]hroughout)\s+(?:the\s+)?"
    r"(?P<name>[A-Z][\w'\u2019.&-]*(?:\s+(?:of\s+)?[A-Z][\w'\u2019.&-]*)*)"
)

# token flags
_B = 1  # boundary: ends an item
_D = 2  # determiner: belongs to the word after it
_N = 4  # name-like: has a capital letter or a digit
_G = 8  # starts with a digit or currency sign: joins the word before it
_P = 16  # punctuation
_T = 32  # time phrase
_WHF = 64  # question word
_AUXF = 128  # auxiliary verb
_SUBJ = 256  # pronoun that can follow an auxiliary ("is it", "can I")

_WORD_FLAGS: dict[str, int] = {}
for _w in _PREPOSITIONS | _CONJUNCTIONS | _COMPARISON | _OTHER_BOUNDARIES | _PRONOUNS:
    _WORD_FLAGS[_w] = _B
for _w in _WH:
    _WORD_FLAGS[_w] = _B | _WHF
for _w in _AUX:
    _WORD_FLAGS[_w] = _B | _AUXF
for _w in _DETERMINERS:
    _WORD_FLAGS[_w] = _D
for _w in _SUBJECT_WORDS:
    _WORD_FLAGS[_w] = _WORD_FLAGS.get(_w, 0) | _SUBJ
del _w

Token = tuple[str, int, int, int]  # (lower-cased text, start, end, flags)


def _tokenize(text: str) -> list[Token]:
    """Words and punctuation marks; a time phrase or a fixed pair is one token."""
    tokens: list[Token] = []
    append = tokens.append
    flags_of = _WORD_FLAGS.get
    skip_to = 0
    for m in _WORD.finditer(text):
        start = m.start()
        if start < skip_to:
            continue
        raw = m.group()
        low = raw.lower()
        if low in _TIME_STARTS or (low[0].isdigit() and len(low) >= 4):
            phrase = _TIME_AT.match(text, start)
            if phrase is not None:
                skip_to = phrase.end()
                append((phrase.group().lower(), start, skip_to, _B | _T))
                continue
        if low in _FIXED_STARTS:
            phrase = _FIXED_AT.match(text, start)
            if phrase is not None:
                skip_to = phrase.end()
                append((phrase.group().lower(), start, skip_to, 0))
                continue
        end = m.end()
        if not raw[0].isalnum() and raw[0] not in "$€£_" and end - start == 1:
            append((raw, start, end, _B | _P))
            continue
        flags = flags_of(low, 0)
        if raw != low:
            flags |= _N
        c = raw[0]
        if c.isdigit() or c in "$€£":
            flags |= _N | _G
        append((low, start, end, flags))
    return tokens


# -- item extent -----------------------------------------------------------------------------

Unit = tuple[int, int, int]  # (start token with its determiners, start token of the word, end)


def _joins(prev_flags: int, flags: int) -> bool:
    """Whether a word continues the unit before it ("New York", "iPhone 15", "Python 3")."""
    return bool(flags & _G) or bool(flags & _N and prev_flags & _N)


def _units_right(toks: list[Token], i: int, stop: int) -> list[Unit]:
    """Units from token ``i`` rightwards, up to a boundary or ``stop``."""
    units: list[Unit] = []
    det = -1
    j = i
    while j < stop:
        flags = toks[j][3]
        if flags & _B:
            break
        if flags & _D:
            if det < 0:
                det = j
            j += 1
            continue
        start = det if det >= 0 else j
        det = -1
        end = j + 1
        while end < stop:
            nxt = toks[end][3]
            if nxt & (_B | _D) or not _joins(toks[end - 1][3], nxt):
                break
            end += 1
        units.append((start, j, end))
        j = end
    if det >= 0 and not units:
        return []
    return units


def _units_left(toks: list[Token], i: int) -> list[Unit]:
    """Units ending before token ``i``, nearest first, up to a boundary."""
    units: list[Unit] = []
    j = i - 1
    while j >= 0:
        flags = toks[j][3]
        if flags & (_B | _D):
            break
        start = j
        while start > 0:
            before = toks[start - 1][3]
            if before & (_B | _D) or not _joins(before, toks[start][3]):
                break
            start -= 1
        word = start
        while start > 0 and toks[start - 1][3] & _D:
            start -= 1
        units.append((start, word, j + 1))
        j = start - 1
    return units


Span = tuple[int, int]  # token range [start, end)


def _coordinate(toks: list[Token], ops: list[Span], *, enumeration: bool) -> list[Span] | None:
    """The items joined by the separators ``ops`` (each a token range), or ``None``."""
    while True:
        left = _units_left(toks, ops[0][0])
        if left or len(ops) == 1:
            break
        ops = ops[1:]  # "In 2020, Germany, France and Italy": the first segment is no item
    right = _units_right(toks, ops[-1][1], len(toks))
    if not left or not right:
        return None
    middles: list[Span] = []
    widest = 0
    for (_, a), (b, _) in pairwise(ops):
        units = _units_right(toks, a, b)
        if not units or units[0][0] != a or units[-1][2] != b:
            return None
        middles.append((a, b))
        widest = max(widest, len(units))
    k_left = k_right = widest if middles else min(len(left), len(right))
    if not middles:
        before = left[-1][0] - 1
        if len(left) >= 2 and len(right) >= 2 and before >= 0 and toks[before][3] & _SUBJ:
            # "how do I set up backups and recover my account": two predicates after "I"
            k_left, k_right = len(left), len(right)
        elif toks[right[-1][2] - 1][0] == toks[left[0][2] - 1][0]:
            # "a Roth IRA and a traditional IRA": the head noun is repeated, not shared
            k_right = len(right)
    first = left[min(k_left, len(left)) - 1]
    last = right[min(k_right, len(right)) - 1]
    right_has_det = right[0][0] != right[0][1]
    first_start = first[0] if right_has_det else first[1]
    if enumeration and first_start > 0 and toks[first_start - 1][0] in ("between", "among"):
        return None
    return [(first_start, left[0][2]), *middles, (right[0][0], last[2])]


def _list_ops(toks: list[Token], c: int) -> list[Span]:
    """Separators of the list whose last conjunction is token ``c`` (commas before it too)."""
    end = c + 1
    if end < len(toks) and toks[end][0] in ("also", "then"):
        end += 1
    start = c - 1 if c > 0 and toks[c - 1][0] == "," else c
    ops: list[Span] = [(start, end)]
    j = start - 1
    while j >= 0:
        s = j
        while s >= 0 and not toks[s][3] & _B:
            s -= 1
        if s < 0 or s == j or toks[s][0] != ",":
            break
        ops.insert(0, (s, s + 1))
        j = s - 1
    return ops


# -- comparisons -----------------------------------------------------------------------------

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
    r"(?:(?:in|of)\s+(?P<post>(?:[\w'\u2019-]+\s+){1,3}?))?(?:between|among)(?:\s+(?:the|a|an))?\s*$",
    re.IGNORECASE,
)
#: Any other wording before "difference(s) between" ("I need to know the difference between").
_P_ANY_DIFFERENCE = re.compile(
    r"^.*?\bdifferences?\s+(?:(?:in|of)\s+(?P<post>(?:[\w'\u2019-]+\s+){1,3}?))?"
    r"(?:between|among)(?:\s+(?:the|a|an))?\s*$",
    re.IGNORECASE,
)
_P_QUESTION_ONLY = re.compile(
    r"^(?:how\s+)?(?:does|do|did|is|are|was|were|would|will)"
    r"(?:\s+(?:the|a|an|my|your|our|their|this|these|those))?\s*$",
    re.IGNORECASE,
)
_S_COMPARE = re.compile(r"^\s*(?:differ|differs|compare|compares|contrast)\b\s*", re.IGNORECASE)
_S_DIFFERENCE = re.compile(
    r"^\s*[:,;-]?\s*(?:what(?:'s|\u2019s|\s+is|\s+are)\s+)?the\s+(?:main\s+|key\s+)?differences?\b.*$",
    re.IGNORECASE,
)
_WHICH_HEAD = re.compile(
    r"^(?:which|what)(?:'s|\u2019s)?(?:\s+one)?(?:\s+of\s+(?:them|these|those|the\s+\w+))?\s*",
    re.IGNORECASE,
)
_COPULA = re.compile(r"^(?:is|are|was|were|would\s+be|will\s+be)\b\s*", re.IGNORECASE)
_MODAL_SUBJECT_VERB = re.compile(
    r"^(?:should|would|could|can|do|does|did|will|shall|must)\s+(?:i|we|you|they|one)"
    r"(?:\s+[\w'\u2019-]+)?\b\s*",
    re.IGNORECASE,
)
_ITEM_SEPARATORS = frozenset(("or", "vs", "versus", ","))
_VS = frozenset(("vs", "versus"))


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
        if toks[j][3] & _B:
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
    return tail.strip(" ?!.:,;")


def _which_form(text: str, toks: list[Token]) -> list[str] | None:
    """ "X or Y: which ..." and "which ..., X or Y" -> one "<item> <rest>" per item."""
    n = len(toks)
    if toks[0][0] == "which":
        for d in range(1, n - 1):
            if toks[d][0] in (":", ","):
                items = _items_between(text, toks, d + 1, n)
                if items:
                    tail = _which_tail(text[: toks[d][1]])
                    return [f"{item} {tail}" for item in items]
        return None
    for d in range(1, n - 1):
        if toks[d][0] in (":", ",", "-") and toks[d + 1][0] in ("which", "what", "what's"):
            items = _items_between(text, toks, 0, d)
            if items:
                tail = _which_tail(text[toks[d + 1][1] :])
                return [f"{item} {tail}" for item in items]
            return None
    return None


def _comparison_ops(toks: list[Token]) -> list[Span] | None:
    n = len(toks)
    lows = [t[0] for t in toks]
    vs = [i for i, w in enumerate(lows) if w in _VS]
    if vs:
        ops = [(i, i + 2 if i + 1 < n and lows[i + 1] == "." else i + 1) for i in vs]
        return ops
    for i, w in enumerate(lows):
        if w in ("difference", "differences"):
            for b in range(i + 1, min(n, i + 6)):
                if lows[b] in ("between", "among"):
                    for c in range(b + 1, n):
                        if lows[c] in ("and", "&"):
                            return _list_ops(toks, c)
                    return None
            for c in range(i - 1, 0, -1):
                if lows[c] in ("and", "&"):
                    return _list_ops(toks, c)
        if w in ("compare", "compared", "compares", "comparing", "comparison", "contrast"):
            if i + 1 < n and lows[i + 1] in ("to", "with", "against") and i > 0:
                return [(i, i + 2)]
            for c in range(i + 1, n):
                if lows[c] in ("and", "&"):
                    return _list_ops(toks, c)
                if lows[c] in ("with", "to", "against"):
                    # "compare X with Y" only when X is a plain noun phrase: in "compare
                    # prices for flights from A to B" the "to" is not the comparison's
                    if any(t[3] & _B for t in toks[i + 1 : c]):
                        return None
                    return [(c, c + 1)]
            for c in range(i - 1, 0, -1):
                if lows[c] in ("and", "&"):
                    return _list_ops(toks, c)
            return None
        if w in ("differ", "differs", "different"):
            if i + 1 < n and lows[i + 1] == "from" and i > 0:
                return [(i, i + 2)]
            for c in range(i - 1, 0, -1):
                if lows[c] in ("and", "&"):
                    return _list_ops(toks, c)
            return None
    return None


def _clean_prefix(prefix: str) -> tuple[str, str]:
    """The prefix without comparison wording, and an aspect to put after each item."""
    p = prefix.strip()
    p = _P_COMPARE.sub("", p, count=1)
    p = _P_COMPARISON.sub("", p, count=1)
    m = _P_DIFFERENCE.match(p)
    if m:
        words = f"{m.group('pre') or ''} {m.group('post') or ''}".split()
        return "", " ".join(w for w in words if w.lower() not in _DETERMINERS)
    m = _P_ANY_DIFFERENCE.match(p)
    if m:
        return "", " ".join(
            w for w in (m.group("post") or "").split() if w.lower() not in _DETERMINERS
        )
    if _P_QUESTION_ONLY.match(p):
        return "", ""
    return p, ""


def _comparison(text: str, toks: list[Token]) -> list[str] | None:
    """One search phrase per compared item, or ``None`` when ``text`` compares nothing."""
    which = _which_form(text, toks)
    if which is not None:
        return which
    ops = _comparison_ops(toks)
    if not ops:
        return None
    items = _coordinate(toks, ops, enumeration=False)
    if items is None and len(ops) > 1:
        ops = ops[:1]
        items = _coordinate(toks, ops, enumeration=False)
    if items is None:
        return None
    prefix, aspect = _clean_prefix(text[: toks[items[0][0]][1]])
    suffix = text[toks[items[-1][1] - 1][2] :]
    suffix = _S_DIFFERENCE.sub("", _S_COMPARE.sub(" ", suffix, count=1), count=1)
    out = []
    for a, b in items:
        item = text[toks[a][1] : toks[b - 1][2]]
        out.append(f"{prefix} {item} {aspect}{suffix}")
    return out


# -- enumerations ----------------------------------------------------------------------------


def _binds_to_between(toks: list[Token], first: int) -> bool:
    """Whether a "between"/"among" before the first item still waits for its "and"."""
    for j in range(first - 1, -1, -1):
        low = toks[j][0]
        if low in ("and", "&"):
            return False
        if low in ("between", "among"):
            return True
    return False


def _plausible(toks: list[Token], items: list[Span], question: bool) -> bool:
    """Whether the coordinated items look like items, not like two clauses or predicates.

    Everywhere: an item followed by a pronoun ("text Mary and tell them ...") is a predicate,
    and one that starts with a determiner and is followed by an auxiliary is the subject of a
    new clause ("... at the airport and my luggage is not here"). Statements and commands
    ("take bread off my list and add milk") are checked harder than questions: the last item,
    if it has several words, must start with a determiner or a name, and with two items it
    must end where its words end (not be cut short to match the first), have at most two
    words, and not be followed by "to" ("... and want to inform my bank") or an auxiliary.
    """
    first, (b_start, b_end) = items[0][0], items[-1]
    after = toks[b_end] if b_end < len(toks) else None
    if after is not None and after[0] in _PRONOUNS:
        return False
    if after is not None and after[3] & _AUXF and toks[b_start][3] & _D:
        return False
    if _binds_to_between(toks, first):
        return False
    if question:
        return True
    if (
        len(items) == 2
        and after is not None
        and (not after[3] & _B or after[3] & _AUXF or after[0] == "to")
    ):
        return False
    size = len(_units_right(toks, b_start, b_end))
    if len(items) == 2 and size > 2:
        return False  # "... buying shoes and my card got declined": a clause
    return size < 2 or bool(toks[b_start][3] & (_D | _N))


def _enumeration(text: str, toks: list[Token], question: bool) -> list[str] | None:
    """One sub-query per enumerated item, or ``None``."""
    for c, tok in enumerate(toks):
        low = tok[0]
        if low not in ("and", "&", "or") or c == 0:
            continue
        ops = _list_ops(toks, c)
        if low == "or" and sum(1 for a, _ in ops if toks[a][0] == ",") < 2:
            continue  # "X or Y" is a choice; "A, B, or C" (two commas at least) is a list
        items = _coordinate(toks, ops, enumeration=True)
        if items is None or not _plausible(toks, items, question):
            continue
        texts = [text[toks[a][1] : toks[b - 1][2]] for a, b in items]
        if len({t.lower() for t in texts}) < len(texts):
            continue  # "add twelve and twelve"
        cut = toks[items[0][0]][1]
        if items[0][0] > 0 and toks[items[0][0] - 1][0] == "both":
            cut = toks[items[0][0] - 1][1]
        prefix = text[:cut]
        suffix = text[toks[items[-1][1] - 1][2] :]
        return [f"{prefix}{item}{suffix}" for item in texts]
    return None


# -- sentences and clauses -------------------------------------------------------------------

_SENTENCES = re.compile(
    r"(?<=[?!])\s+|(?<![Vv][Ss]\.)(?<!\b[Vv]\.)(?<=\.)\s+(?=(?:what|which|who|where|when|why|"
    r"how|is|are|can|could|do|does|did|should|would|will|was|were|has|have|also|and|plus)\b)",
    re.IGNORECASE,
)
_LEADING_FILLER = re.compile(r"^(?:(?:also|and|plus|then|so|but)\b[\s,]*)+", re.IGNORECASE)
_CLAUSE_JOINERS = frozenset(("and", "&", "but", "plus"))
_SUBJECT = re.compile(
    r"^(?:what|who)\s+(?:is|are|was|were)\s+(?P<s>(?:(?:a|an|the)\s+)?[\w'\u2019.+#&-]+"
    r"(?:\s+[\w'\u2019.+#&-]+){0,3})$",
    re.IGNORECASE,
)
_PRONOUN_RE = re.compile(r"(?<!\w)(it|its|they|them|their|he|she|him|his)(?!\w)", re.IGNORECASE)
_TRAILING = " \t?!.,;:"


def _starts_question(toks: list[Token], j: int) -> bool:
    if j >= len(toks) - 1:
        return False
    flags = toks[j][3]
    if flags & _WHF:
        return True
    if flags & _AUXF:
        nxt = toks[j + 1][3]
        return bool(nxt & (_SUBJ | _D)) or bool(nxt & _N and not nxt & _B)
    return False


def _is_question(clause: str) -> bool:
    """Whether ``clause`` starts with a question word, possibly after an introductory phrase
    ("Since 2020, how ...")."""
    starts = [clause]
    if ", " in clause:
        starts.append(clause.split(", ", 1)[1])
    return any(_WORD_FLAGS.get(s.split(" ", 1)[0].lower(), 0) & (_WHF | _AUXF) for s in starts if s)


Clause = tuple[str, list[Token] | None]  # text, and its tokens when already known


def _clause(sentence: str, toks: list[Token], begin: int, end: int) -> Clause | None:
    """``sentence[begin:end]`` without surrounding punctuation, with its tokens re-based."""
    piece = sentence[begin:end]
    stripped = piece.strip(_TRAILING)
    if not stripped:
        return None
    first = begin + len(piece) - len(piece.lstrip(_TRAILING))
    last = first + len(stripped)
    return stripped, [
        (low, s - first, e - first, f) for low, s, e, f in toks if s >= first and e <= last
    ]


def _clause_words(toks: list[Token], j: int) -> int:
    """Words from token ``j`` to the next ";" (or the end)."""
    count = 0
    for low, _, _, flags in toks[j:]:
        if low == ";":
            break
        if not flags & _P:
            count += 1
    return count


def _split_clauses(sentence: str) -> list[Clause]:
    toks = _tokenize(sentence)
    clauses: list[Clause] = []
    begin = 0
    n = len(toks)
    for i, (low, start, _, _) in enumerate(toks):
        if i == 0:
            continue
        if low == ";":
            end, nxt = start, i + 1
        elif low in _CLAUSE_JOINERS or (low == "," and i + 1 < n and toks[i + 1][0] == "also"):
            nxt = i + 1
            while nxt < n and toks[nxt][0] in ("also", "then", "and"):
                nxt += 1
            if not _starts_question(toks, nxt):
                continue
            end = toks[i - 1][1] if toks[i - 1][0] == "," else start
        else:
            continue
        if nxt >= n or _clause_words(toks, nxt) < 3:
            continue  # "...; why" / "... and how much": too short to stand alone
        piece = _clause(sentence, toks, begin, end)
        if piece is not None:
            clauses.append(piece)
        begin = toks[nxt][1]
    last = _clause(sentence, toks, begin, len(sentence))
    if last is not None:
        clauses.append(last)
    return clauses


def _places(clause: str) -> list[str]:
    return [
        m.group()
        for m in _PLACE_RE.finditer(clause)
        if m.group("name").split()[0].lower().rstrip(".") not in _NOT_PLACES
    ]


def _with_tokens(parts: list[Clause]) -> list[tuple[str, list[Token]]]:
    return [(c, toks if toks is not None else _tokenize(c)) for c, toks in parts]


def _names_a_thing(toks: list[Token]) -> bool:
    """Whether a clause names something (a capitalised word or a number after its first word);
    such a clause is about that thing, so no place is carried into it."""
    return any(t[3] & _N and t[0] != "i" for t in toks[1:])


def _lower_first(phrase: str) -> str:
    return phrase[:1].lower() + phrase[1:]


def _share_context(parts: list[Clause]) -> list[str]:
    """Carry time and place phrases to clauses that lack them, and resolve pronouns."""
    tokenized = _with_tokens(parts)
    clauses = [c for c, _ in tokenized]
    times = [[c[t[1] : t[2]] for t in toks if t[3] & _T] for c, toks in tokenized]
    places = [_places(c) for c in clauses]
    all_times = _unique(p for ps in times for p in ps)
    all_places = _unique(p for ps in places for p in ps)
    m = _SUBJECT.match(clauses[0])
    subject = None
    if m and not any(t[3] & (_B | _P) for t in _tokenize(m.group("s"))):
        subject = m.group("s")
    out = []
    for i, clause in enumerate(clauses):
        if subject is not None and i > 0:
            clause = _PRONOUN_RE.sub(lambda mm: _pronoun(mm.group(1), subject), clause)
        extra: list[str] = []
        if not places[i] and not _names_a_thing(tokenized[i][1]):
            extra.extend(_lower_first(p) for p in all_places)
        if not times[i]:
            extra.extend(_lower_first(p) for p in all_times)
        out.append(" ".join([clause, *extra]) if extra else clause)
    return out


def _pronoun(word: str, subject: str) -> str:
    if word.lower() in ("its", "their", "his"):
        return f"{subject}'" if subject.endswith("s") else f"{subject}'s"
    return subject


def _unique(items: object) -> list[str]:
    seen: set[str] = set()
    out: list[str] = []
    for item in items:  # type: ignore[attr-defined]
        key = item.lower()
        if key not in seen:
            seen.add(key)
            out.append(item)
    return out


# -- assembly --------------------------------------------------------------------------------


def _finish(text: str, question: bool, capitalize: bool, search_phrase: bool) -> str:
    sub = " ".join(text.split()).strip(_TRAILING).lstrip(" ,;:-")
    sub = sub.replace(" ,", ",").replace(" ?", "?")
    if not sub:
        return ""
    first = sub.split(" ", 1)[0]
    if capitalize and first.isalpha() and first.islower():
        sub = sub[0].upper() + sub[1:]
    if question and (not search_phrase or _WORD_FLAGS.get(first.lower(), 0) & (_WHF | _AUXF)):
        sub += "?"
    return sub


#: Words that can start another comparison or enumeration inside an enumerated item.
_NESTED = re.compile(
    r"(?<!\w)(?:and|&|or|vs|versus|compar\w*|contrast|differ\w*)(?!\w)", re.IGNORECASE
)


def _decompose_clause(
    clause: str,
    toks: list[Token] | None,
    question: bool,
    capitalize: bool,
    include_comparison: bool,
    limit: int,
    depth: int,
) -> tuple[list[str], bool]:
    if toks is None:
        toks = _tokenize(clause)
    if not toks:
        return [], False
    compared = _comparison(clause, toks)
    if compared is not None:
        subs = [_finish(s, question, capitalize, True) for s in compared]
        subs = [s for s in subs if s]
        if include_comparison:
            subs = [*subs[: max(limit - 1, 0)], _finish(clause, question, capitalize, False)]
        return subs, True
    if depth < 3:
        parts = _enumeration(clause, toks, question or _is_question(clause))
        if parts is not None:
            out: list[str] = []
            for part in parts:
                if _NESTED.search(part) is None:
                    out.append(_finish(part, question, capitalize, False))
                    continue
                out.extend(
                    _decompose_clause(
                        part, None, question, capitalize, include_comparison, limit, depth + 1
                    )[0]
                )
            return out, True
    return [_finish(clause, question, capitalize, False)], False


def decompose(query: str, max_sub_queries: int = 5, include_comparison: bool = True) -> list[str]:
    """The sub-queries of ``query`` (see the module docstring); ``[query.strip()]`` when it
    holds a single intent, ``[]`` when it is blank."""
    whole = query.strip()
    if not whole:
        return []
    text = " ".join(whole.split())
    sentences = [s for s in _SENTENCES.split(text) if s]
    if len(sentences) == 1 and complexity(text) == 1:
        return [whole]
    capitalize = text[0].isupper()
    clauses: list[tuple[str, list[Token] | None, bool]] = []
    for sentence in sentences:
        sentence = _LEADING_FILLER.sub("", sentence)
        asks = sentence.rstrip().endswith("?")
        parts = _split_clauses(sentence)
        for k, (clause, toks) in enumerate(parts):
            # The sentence's "?" belongs to its last clause and to every clause that is
            # itself a question ("In 2020, X grew; what happened next?").
            question = asks and (k == len(parts) - 1 or _is_question(clause))
            clauses.append((clause, toks, question))
    if not clauses:
        return [whole]
    changed = len(clauses) > 1
    if changed:
        shared = _share_context([(c, t) for c, t, _ in clauses])
        clauses = [
            (s, t if s == c else None, q) for s, (c, t, q) in zip(shared, clauses, strict=True)
        ]
    out: list[str] = []
    seen: set[str] = set()
    for clause, toks, question in clauses:
        subs, split = _decompose_clause(
            clause, toks, question, capitalize, include_comparison, max_sub_queries, 0
        )
        changed = changed or split
        for sub in subs:
            if sub and sub not in seen:
                seen.add(sub)
                out.append(sub)
    if not changed or not out:
        return [whole]
    return out[:max_sub_queries]
