"""Reading a message: its sentences, its clauses, and what kind of clause each one is.

The first step of :mod:`ragloom_rules._decompose` (see its docstring, step 1): sentences are
cut after "?" and, when a new sentence starts, after "!" and "."; a greeting, a closing thanks
and what only leads to or orders the asks are dropped; a preamble before a colon, the words
before numbered items or before a list of needs are clauses of their own; each sentence is cut
into clauses at the joiners before a new question or request; and each clause is a question,
a request, a command, a phrase, a statement or a preamble (:func:`read`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from . import _lexicon as lx
from ._asks import comma_intro_end, introduction_end, relative_at, verb_at
from ._tokens import AUX, PAIR, PREP, PRON, WH, B, D, N, P, T, Token, V, tokenize

__all__ = [
    "COMMAND", "PHRASE", "PREAMBLE", "QUESTION", "REQUEST", "STATEMENT", "Clause", "body_start",
    "has_predicate", "read", "sentences", "words_before",
]

_TRAILING = " \t?!.,;:"
_ABBREVIATIONS = lx.words(
    "vs v e.g eg i.e ie etc mr mrs ms dr st jr sr inc ltd co no approx fig dept u.s u.k"
)
_BREAK = re.compile(r"(?<=[.?!])\s+")
_QUESTION_START = re.compile(
    r"(?:what|which|who|where|when|why|how|is|are|can|could|do|does|did|should|would|will|"
    r"was|were|has|have|also|and|plus)\b",
    re.IGNORECASE,
)
_GREETING = re.compile(r"^(?:hi|hello|hey)(?:\s+there)?\s*[,!.]\s*(?=\S)", re.IGNORECASE)
_COURTESY = re.compile(
    r"^(?:(?:thanks|thank\s+you|thx|cheers|ty)(?:\s+(?:so\s+much|a\s+lot|very\s+much))?"
    r"|(?:hi|hello|hey)(?:\s+there)?)(?:\s*[.!,]+)?$",
    re.IGNORECASE,
)
#: An item's marker before a colon or a comma ("First: ...", "Second, ...", "Lastly:"): it
#: orders the asks, it is no scene of its own.
#: The markers of an item after the first ("Second: ...", "Lastly, ..."): each opens a new
#: topic, as "Also," does.
_LATER_ITEMS = r"second(?:ly)?|third(?:ly)?|fourth(?:ly)?|fifth(?:ly)?|finally|lastly"
_ORDER_MARKERS = (
    r"first(?:ly)?|" + _LATER_ITEMS
    + r"|next|afterwards|after\s+th(?:at|is)|on\s+top\s+of\s+th(?:at|is)"
)
_LEADING_FILLER = re.compile(
    r"^(?:(?:(?:also|and|plus|then|so|but|additionally|separately|btw|by\s+the\s+way|oh|ok|okay)"
    r"\b(?:\s*:\s+|[\s,]*))|(?:" + _ORDER_MARKERS + r")\s*[:,]\s*"
    r"|\(?[1-9][.)]\s+)+",  # or an item's number ("2. ...")
    re.IGNORECASE,
)
#: Markers of the filler that put the ask after the ones before ("then", "Finally:", "After
#: that,"): the statements before it are an ask of their own, as with "then".
_SEQUENCE_MARKS = re.compile(r"\b(?:then|finally|lastly|next|after|afterwards)\b", re.IGNORECASE)
#: "We also need ...", "I'd also like ...": what the sentences before it said is an ask of its
#: own, as before "then" (the scene goes on).
_ALSO_WISH = re.compile(
    r"(?:i|we)(?:'d|\s+would)?\s+also\s+(?:need|want|like|have)\b", re.IGNORECASE
)
_NEW_TOPIC = re.compile(
    r"^(?:also|plus|additionally|separately|btw|by\s+the\s+way|another\s+question|"
    r"one\s+more\s+thing|unrelated(?:ly)?)\b"
    r"|^(?:" + _LATER_ITEMS + r")\s*[:,]",
    re.IGNORECASE,
)
_REQUEST_START = re.compile(
    r"^(?:(?:please|can\s+you|could\s+you|would\s+you)\s+)?(?:tell|show|explain|compare|"
    r"contrast|list|describe|give|find|recommend|suggest|define|summari[sz]e|outline|search)\b"
    r"|^i(?:'d|\s+would)?\s+(?:want|like|need|wish)\s+to\s+(?:know|learn|understand|find\s+out)\b"
    r"|^i(?:'m|\s+am)\s+(?:looking\s+for|wondering|curious)\b",
    re.IGNORECASE,
)
#: Adverbs that may open a command ("First back up ...", "Next, restart ...").
_LEADING_ADVERBS = lx.words("first firstly next finally then now")
#: Words that, before "of", open a statement about some of a group, not a command.
_QUANTIFIERS = lx.words("one some none all most many few several each both either neither half")
_CLAUSE_JOINERS = frozenset(("and", "&", "but", "plus", "then"))
#: Words skipped after a joiner before the next clause ("and then how", ", and afterwards how").
_CONNECTIVES = frozenset(
    ("and", "also", "then", "afterwards", "afterward", "separately", "additionally", "plus")
)
_NEW_TOPIC_CUES = frozenset(("also", "separately", "additionally", "plus"))
_DASHES = frozenset(("\u2014", "\u2013", "-", "--"))
#: The words of a request before its question word ("Show me how to ...", "Tell me what ...").
_REQUEST_FRAME = re.compile(
    r"(?:please\s+)?(?:show|tell|explain\s+to|teach)\s+(?:me|us)\s+(?=(?:how|what|why|where|when|"
    r"which|whether)\b)",
    re.IGNORECASE,
)
#: Request verbs that start another request after "and" ("... and explain how to test it").
_REQUEST_AFTER_AND = frozenset(("explain", "tell", "show", "describe", "give", "teach"))
#: Words that open an introduction before a question ("once I dpkg -i the result, what ...").
_INTRO_WORDS = lx.SUBORDINATORS | lx.words("then afterwards after before once")
#: Question words that open an introduction rather than a question when no auxiliary follows
#: ("When reusing a prepared statement in a loop, what's ...").
_INTRO_WH = frozenset(("when", "where", "while", "once", "if", "after", "before", "whenever"))

QUESTION, REQUEST, COMMAND, STATEMENT = "question", "request", "command", "statement"
PREAMBLE = "preamble"  # "For a release script:", "Dual-boot with Windows:": sets the scene
PHRASE = "phrase"  # words without a verb: what to search for ("Samsung Galaxy S24 price")


@dataclass
class Clause:
    text: str  # the clause as it will be decomposed (an introduction or a resolution applied)
    toks: list[Token]
    start: int  # offsets of the clause in the normalised message
    end: int
    kind: str
    asks: bool  # ends with the question mark of its sentence, or is a question itself
    new_topic: bool = False
    merged: bool = False  # two questions kept together: never split further
    things: list[str] = field(default_factory=list)  # what it lists or compares
    sequence: bool = False  # joined by "then": the clause before it is an ask of its own
    prefix: str = ""  # a statement right before it that sets its scene ("X is off - how ...")
    ask: bool = False
    keep: bool = False  # a statement that is an ask of its own: never split
    headed: bool = False  # its prefix holds a preamble ("On the server: what ...")


# -- sentences ------------------------------------------------------------------------------


_NEXT_WORD = re.compile(r"[A-Za-z']+")


def _opens_sentence(text: str, at: int) -> bool:
    """Whether the word at ``at`` starts a sentence after a capital letter and a period ("in
    C. Then I ...", "in C. How do I"), not a name after an initial ("J. Smith"): a question
    word, or a word of the lexicon (a pronoun, a determiner, a conjunction, a preposition,
    an auxiliary, "then", "next", ...)."""
    if _QUESTION_START.match(text, at):
        return True
    word = _NEXT_WORD.match(text, at)
    if word is None:
        return False
    low = word.group().lower()
    return low in lx.LINKING_ADVERBS or bool(tokenize(low)[0][3] & (B | D | AUX | PRON | WH))


def sentences(text: str) -> list[tuple[int, int]]:
    """Sentence offsets: a break after "?", after "!" or "." when a sentence starts (a
    capital letter or a question word) and, for ".", the word before is no abbreviation."""
    out: list[tuple[int, int]] = []
    begin = 0
    for m in _BREAK.finditer(text):
        mark = text[m.start() - 1]
        if mark == ".":
            word = text[: m.start() - 1].rsplit(" ", 1)[-1].lower().rstrip(".")
            initial = len(word) == 1 and word.isalpha()  # "J. Smith", not "in C. How do I"
            if word in _ABBREVIATIONS or (initial and not _opens_sentence(text, m.end())):
                continue
            if word.isdigit() and len(word) <= 2 and not text[begin : m.start() - 1].strip(
                " \t("
            ).removesuffix(word).strip():
                continue  # "2. How do I ...": the number of an item, not a sentence
        # a new sentence starts with a capital or a question word ("add help! by the
        # beatles to my playlist" is one request), or anything after a question mark
        # ("... at runtime? openssl: which command ...": typed in lower case)
        nxt = text[m.end() : m.end() + 1]
        if mark != "?" and not (
            nxt.isupper() or nxt.isdigit() or _QUESTION_START.match(text, m.end())
        ):
            continue
        out.append((begin, m.start()))
        begin = m.end()
    out.append((begin, len(text)))
    return out


#: An item's number or letter inside a sentence: "(1)", "2)", "(b)", after a space, a comma,
#: a colon or the start, before a space.
_ITEM_MARK = re.compile(r"(?:(?<=^)|(?<=[\s,;:]))\(?([1-9]|[a-e])\)(?=\s)")


def _numbered_items(text: str) -> list[tuple[int, int]]:
    """Where the numbered items of a sentence start and their text begins (after the marker),
    when it holds at least two numbered in order from 1 or "a" ("(1) ..., (2) ..."); else
    ``[]``."""
    found: list[tuple[int, int]] = []
    expected = None
    for m in _ITEM_MARK.finditer(text):
        label = m.group(1)
        if expected is None:
            if label not in ("1", "a"):
                continue
        elif label != expected:
            continue
        found.append((m.start(), m.end()))
        expected = chr(ord(label) + 1)
    return found if len(found) >= 2 else []


#: Words that open an item of a list of needs after a preamble ("..., a checksum line ...").
_NEED_OPENERS = lx.words("a an the one our my some")


def _listed_needs(toks: list[Token], colon: int) -> list[tuple[int, int]]:
    """Where the items of a list of needs after the preamble ending at token ``colon`` start
    ("Release checklist: a gzipped tarball of the tree, a SHA-256 checksum line in the same
    layout, and a detached signature of the tarball"): noun phrases that each open with "a",
    "the", "our", ..., separated by commas (", and"), at least three of five words or more
    (an "and" after an item counts), or two of six or more; else ``[]`` (as
    :func:`_numbered_items`). Short items ("a cup of flour, a pinch of salt, ...") are one
    list, and items apart by semicolons are left alone."""
    first = colon + 1
    if first >= len(toks) or toks[first][0] not in _NEED_OPENERS:
        return []
    later: list[int] = []  # where an item starts after a comma (", a ...", ", and the ...")
    depth = 0
    anded = False  # whether the last item has "and" before it
    for j in range(first, len(toks)):
        low = toks[j][0]
        if low in ("(", "["):
            depth += 1
        elif low in (")", "]"):
            depth = max(depth - 1, 0)
        elif low in ("?", "!", ":", ";"):
            return []  # a question, another preamble, items apart by ";": left alone
        elif low == "," and not depth:
            n = j + 1 + (j + 1 < len(toks) and toks[j + 1][0] in ("and", "plus"))
            if n < len(toks) and toks[n][0] in _NEED_OPENERS:
                later.append(n)
                anded = n > j + 1
    starts = [first, *later]
    if len(starts) == 2 and not anded:
        return []  # "a key, a certificate ...": two items need ", and"
    ends = [*later, len(toks)]
    words = [sum(1 for t in toks[a:b] if not t[3] & P) for a, b in zip(starts, ends, strict=True)]
    if len(starts) < 2 or min(words) < (5 if len(starts) > 2 else 6):
        return []  # "a cup of flour, a pinch of salt, ...": one list
    return [(toks[a][1], toks[a][1]) for a in starts]


def _starts_question(toks: list[Token], j: int) -> bool:
    if j >= len(toks) - 1:
        return False
    flags = toks[j][3]
    if flags & WH:
        return True
    if flags & AUX:
        nxt = toks[j + 1][3]
        if toks[j][0] in ("have", "has", "had") and nxt & D:
            return False  # "and have my tires changed": an action, not a question
        word = toks[j + 1][0]
        if word in ("be", "not", "also") or (word.endswith("ly") and not nxt & (D | N)):
            return False  # "... and can safely be deleted": a second predicate, no subject
        if word in lx.VERB_BASES and not nxt & (PRON | D | PAIR | N):
            return False  # "a script that connects ... and must fail whenever ...": no subject
        return bool(nxt & (PRON | D | PAIR)) or word in lx.SUBJECTS or not nxt & B
    return False


#: What a question asks of a comparison ("X vs Y, what's the difference?").
_COMPARING = frozenset(("difference", "differences", "better", "faster", "prefer", "pick"))


def _compared_before(toks: list[Token], first: int, i: int) -> bool:
    """Whether the clause before the comma at ``i`` sets things side by side ("implicit vs
    explicit fetching") and the question after it asks how they compare ("what's the
    difference?"): one ask."""
    if not any(t[0] in ("vs", "versus") for t in toks[first:i]):
        return False
    return any(t[0] in _COMPARING for t in toks[i + 1 : i + 7])


def _words_until_semicolon(toks: list[Token], j: int) -> int:
    count = 0
    for low, _, _, flags in toks[j:]:
        if low == ";":
            break
        if not flags & P:
            count += 1
    return count


def _asks_at(toks: list[Token], j: int) -> bool:
    """Whether a question starts at token ``j``, maybe after a short introduction that ends
    at a comma ("on the receiving side, how do I", "once I dpkg -i the result, what") or at
    the question word ("on the mail host how do I")."""
    if _starts_question(toks, j):
        return True
    if j >= len(toks) or not (toks[j][3] & (PREP | T) or toks[j][0] in _INTRO_WORDS):
        return False

    def question_word(k: int) -> bool:
        # "and on the mail host how do I configure ...": no comma after the place
        return bool(toks[k][3] & WH) and toks[k][0] not in _INTRO_WH and bool(
            toks[k + 1][3] & AUX
        )

    end = introduction_end(toks, j + 1, j + 12, question_word)
    if end is None:
        return False
    return _starts_question(toks, end + 1 if toks[end][0] == "," else end)


#: Words that open a subordinate clause as well as a question ("runs when files are staged").
_SUBORDINATORS = frozenset(("when", "where", "whenever", "wherever", "while"))


def _parallel_subordinate(toks: list[Token], first: int, i: int, j: int) -> bool:
    """Whether the clause at ``j``, after the joiner at ``i``, is a second subordinate clause
    like one in ``toks[first:i]`` ("... runs when files are staged and when they're checked
    out"): the same word, then a subject and no auxiliary before it (no question)."""
    low = toks[j][0] if j < len(toks) else ""
    if low not in _SUBORDINATORS or j + 1 >= len(toks) or toks[j + 1][3] & (AUX | WH):
        return False
    return any(t[0] == low for t in toks[first:i])


def _request_at(toks: list[Token], j: int) -> bool:
    """Whether a request starts at token ``j`` ("explain how to ...", "tell me whether")."""
    if j + 1 >= len(toks) or toks[j][0] not in _REQUEST_AFTER_AND:
        return False
    nxt = toks[j + 1]
    if nxt[0] in ("me", "us") and j + 2 < len(toks):
        nxt = toks[j + 2]
    return bool(nxt[3] & WH) or nxt[0] in ("whether", "if")


def _skip_connectives(toks: list[Token], j: int) -> int:
    while j < len(toks) and toks[j][0] in _CONNECTIVES:
        j += 1
    return j


def _past_adverbs(toks: list[Token], j: int) -> int:
    """Index of the question word after adverbs at ``j`` ("and more generally how do I"),
    else ``j``."""
    k = j
    while k < len(toks) and (
        toks[k][0] in ("more", "most") or (toks[k][0].endswith("ly") and len(toks[k][0]) > 4)
    ):
        k += 1
    return k if k > j and k < len(toks) and toks[k][3] & WH else j


def _asker(toks: list[Token], a: int, b: int) -> bool:
    """Whether ``toks[a:b]`` asks something or states something (a question, a command, a
    statement with its subject), not an introduction ("When reusing a statement in a loop",
    "If I change the chunk size")."""
    if a >= b:
        return False
    low, _, _, flags = toks[a]
    if low in _INTRO_WH:
        return a + 1 < b and bool(toks[a + 1][3] & AUX)
    if flags & WH:
        return True
    if flags & (PREP | T) or low in _INTRO_WORDS:
        return False
    return not low.endswith("ing")


def _situation(toks: list[Token], a: int, b: int) -> bool:
    """Whether ``toks[a:b]`` only sets a scene ("I'm sick of typing my password", "Upgrading
    our servers from buster to bullseye"): no question, no command, no wish ("I need to")."""
    if a >= b or toks[a][3] & (WH | AUX) or _command_at(toks, a):
        return False
    for k in range(a, b - 1):
        low = toks[k][0]
        if low == "then" or (low in ("need", "want", "like", "have") and toks[k + 1][0] == "to"):
            return False
    return True


def _clauses(toks: list[Token], length: int) -> list[tuple[int, int, frozenset[str], bool]]:
    """Clause offsets in a stretch of ``length`` characters with tokens ``toks`` (offsets of
    the stretch's text), each with the connectives skipped before it ("also", "then") and
    whether it only sets the scene of the next one ("I'm sick of X - how do I ...")."""
    out: list[tuple[int, int, frozenset[str], bool]] = []
    if not toks:
        return [(0, length, frozenset(), False)]
    begin, first = toks[0][1], 0
    cues: frozenset[str] = frozenset()
    n = len(toks)
    depth = 0  # inside parentheses: "(and how do I reclaim the space)" stays in its ask
    for i, (low, start, _, _) in enumerate(toks):
        if low in ("(", "["):
            depth += 1
        elif low in (")", "]"):
            depth = max(depth - 1, 0)
        if i == 0 or depth:
            continue
        situation = False
        if low == ";":
            end, nxt = start, _skip_connectives(toks, i + 1)
            if (
                nxt > i + 1
                and toks[i + 1][0] in ("then", "also")
                and not _asks_at(toks, nxt)
                and verb_at(toks, nxt)
            ):
                continue  # "; then set up OSPF": the next action of the same frame
        elif low in _CLAUSE_JOINERS or (
            low == "," and i + 1 < n and toks[i + 1][0] in ("also", "then")
        ):
            nxt = _skip_connectives(toks, i + 1)
            if not _asks_at(toks, _past_adverbs(toks, nxt)) and not (
                low in ("and", "&") and _request_at(toks, nxt)
            ):
                continue
            if _parallel_subordinate(toks, first, i, nxt):
                continue
            end = toks[i - 1][1] if toks[i - 1][0] == "," else start
        elif (
            low == ","
            and i + 1 < n
            and (toks[i + 1][3] & WH or (toks[i + 1][3] & AUX and _starts_question(toks, i + 1)))
            and (i + 2 >= n or toks[i + 1][0] not in _INTRO_WH or toks[i + 2][3] & AUX)
            and not relative_at(toks, i + 1)
            and _asker(toks, first, i)
            and not _compared_before(toks, first, i)
        ):
            # "what X contains, why Y ..., and how Z"; "which version ..., was it built ..."
            end, nxt = start, i + 1
        elif low in _DASHES and _asks_at(toks, i + 1) and _situation(toks, first, i):
            end, nxt, situation = start, i + 1, True
        elif (
            low == "," and i + 2 < n and toks[i + 1][0] == "so" and _starts_question(toks, i + 2)
            and _situation(toks, first, i)
        ):
            # "the clients must trust our CA, so what's the proper way to add it?": a
            # situation, then its question
            end, nxt, situation = start, i + 2, True
        else:
            continue
        if nxt >= n or _words_until_semicolon(toks, nxt) < 3:
            continue  # "...; why" / "... and how much": too short to stand alone
        if sum(1 for t in toks[first:i] if not t[3] & P) < 2:
            continue  # "what and when is the next holiday": no question before the "and"
        out.append((begin, end, cues, situation))
        cues = frozenset(t[0] for t in toks[i:nxt])
        begin, first = toks[nxt][1], nxt
    out.append((begin, length, cues, False))
    return out


def words_before(toks: list[Token], offset: int) -> int:
    """Words before character ``offset`` (the start of the current clause)."""
    return sum(1 for t in toks if t[1] < offset and not t[3] & P)


def _slice(toks: list[Token], start: int, end: int) -> list[Token]:
    """The tokens of ``[start, end)`` with offsets counted from ``start``."""
    return [(low, s - start, e - start, f) for low, s, e, f in toks if s >= start and e <= end]


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start] in _TRAILING:
        start += 1
    while end > start and text[end - 1] in _TRAILING:
        end -= 1
    return start, end


#: Adverbs between a subject and its verb ("the old code also needs ...").
_VERB_ADVERBS = lx.VERB_ADVERBS | lx.words("just")


def has_predicate(toks: list[Token]) -> bool:
    """Whether a clause that is no question says something (a statement) rather than naming
    what to search for ("Samsung Galaxy S24 price and release date")."""
    for j, (low, _, _, flags) in enumerate(toks):
        if flags & (AUX | PRON) or low.endswith("n't"):
            return True
        finite = low.endswith(("s", "ed")) or low in lx.IRREGULAR_PAST
        k = j - 1  # the word before the verb, past an adverb ("the code also needs")
        while k > 0 and toks[k][0] in _VERB_ADVERBS:
            k -= 1
        if flags & V and finite and k >= 0 and not toks[k][3] & (D | B):
            return True
    return False


def _command_at(toks: list[Token], i: int) -> bool:
    """Whether the clause at ``i`` is a command: a verb in its base form first ("Set vimdiff
    as ...", "Commit just a few hunks", "Figure out which ...")."""
    if i >= len(toks) - 1:
        return False
    low, _, _, flags = toks[i]
    if flags & V and low in lx.VERB_BASES and not flags & B:
        return True
    if flags or not low.isalpha() or low.endswith(("ing", "ed", "ly")):
        return False
    if toks[i + 1][0] == "of" and low in _QUANTIFIERS:
        return False  # "one of our reports got slow": a statement about some of them
    if low.endswith("s") and not low.endswith("ss"):
        return False
    nxt = toks[i + 1]
    return bool(nxt[3] & (D | PREP)) or nxt[0] in ("just", "only")


def _preamble(text: str, toks: list[Token]) -> int | None:
    """Index of the colon that ends a preamble ("For a release script: how do I ...",
    "Dual-boot with Windows: the clock ..."): words before it that ask nothing and compare
    nothing."""
    for k, (low, _, end, _) in enumerate(toks):
        if low in (";", "?", "!", "."):
            return None
        if low != ":" or not text[end : end + 1].isspace():
            continue
        if k == 0 or k + 2 >= len(toks) or toks[0][3] & (WH | AUX):
            return None
        before = {t[0] for t in toks[:k]}
        if before & {"vs", "versus", "or"} or (
            toks[0][0] in lx.REQUEST_VERBS and (before & {"and", "&"} or not _asks_at(toks, k + 1))
        ):
            # "Postgres or MySQL: which ...", "Compare RAID and LVM: which one"; not "Show me
            # how to pin a key: what form ..., how do I ...?" (a request, then its questions)
            return None
        after = {t[0] for t in toks[k + 1 :]}
        if "and" in before and after & {"difference", "differences", "differ", "better"}:
            return None  # "The Beatles and The Rolling Stones: what's the difference?"
        return k
    return None


def _kind(text: str, toks: list[Token]) -> str:
    i = body_start(toks)
    if i < len(toks) and toks[i][3] & (WH | AUX):
        return QUESTION
    if _REQUEST_START.match(text[toks[i][1] :] if i < len(toks) else text):
        return REQUEST
    lead = 0  # "First back up the configuration, then ...": a command after its adverb
    while lead < len(toks) - 1 and toks[lead][0] in _LEADING_ADVERBS:
        lead += 1
    if toks and _command_at(toks, lead):
        return COMMAND
    if toks and toks[0][3] & PREP:  # "on the offline side, check that ...": after its place
        comma = next((k for k in range(1, min(len(toks) - 1, 9)) if toks[k][0] == ","), None)
        if comma is not None and _command_at(toks, comma + 1):
            return COMMAND
    return STATEMENT if has_predicate(toks) else PHRASE


def _opens_intro(toks: list[Token]) -> bool:
    """Whether the clause opens with "When I ...", "If ...": an introduction, not a question
    ("When does it run?" is one)."""
    return toks[0][0] in _INTRO_WH and len(toks) > 1 and not toks[1][3] & AUX


def body_start(toks: list[Token]) -> int:
    """Index of the first word after an introduction: a time phrase ("Since 2020, ...") or a
    phrase that ends at a comma before a question ("On the receiving side, how do I ...")."""
    n = len(toks)
    if n > 2 and toks[0][3] & T and toks[1][0] == ",":
        return 2
    if not toks or (toks[0][3] & (WH | AUX) and not _opens_intro(toks)):
        return 0
    return comma_intro_end(toks)


def read(text: str) -> list[Clause] | None:
    """The clauses of the message, or ``None`` when it must stay whole."""
    clauses: list[Clause] = []
    for s_start, s_end in sentences(text):
        sentence = text[s_start:s_end]
        if _COURTESY.match(sentence.strip()):
            continue
        lead = 0
        greeting = _GREETING.match(sentence)
        if greeting:
            lead = greeting.end()
        new_topic = bool(_NEW_TOPIC.match(sentence, lead))
        filler = _LEADING_FILLER.match(sentence, lead)
        sequence = False
        if filler:
            sequence = bool(_SEQUENCE_MARKS.search(filler.group()))
            lead = filler.end()
        sequence = sequence or bool(_ALSO_WISH.match(sentence, lead))
        asks = sentence.rstrip().endswith("?")
        rest = sentence[lead:]
        sentence_toks = tokenize(rest)
        colon = _preamble(rest, sentence_toks)
        parts: list[tuple[int, int, frozenset[str], bool]] = []
        items = _numbered_items(rest)
        needs = False  # the items are things wanted: each one is searched for
        if not items and colon is not None:
            items = _listed_needs(sentence_toks, colon)
            needs = bool(items)
        lead_in = False  # the first part only sets the scene of the rest (a preamble)
        if items:
            # "(1) which files ..., (2) what command ..., and (3) how ...": each item is
            # read as a stretch of its own; the words before the first set their scene
            if rest[: items[0][0]].strip(" ,;:-\u2014"):
                parts.append((0, items[0][0], frozenset(), False))
                lead_in = True
            for n, (_, after) in enumerate(items):
                end = items[n + 1][0] if n + 1 < len(items) else len(rest)
                body = [t for t in sentence_toks if t[1] >= after and t[2] <= end]
                while body and (body[-1][0] in ("and", "or", "then") or body[-1][3] & P):
                    body.pop()  # "..., and (3)": the joiner before the next item
                end = body[-1][2] if body and n + 1 < len(items) else end
                if body:
                    parts += _clauses(body, end)
        elif colon is not None:
            parts.append((0, sentence_toks[colon][1], frozenset(), False))
            lead_in = True
            body = sentence_toks[colon + 1 :]
            parts += _clauses(body, len(rest))
        else:
            parts = _clauses(sentence_toks, len(rest))
        base = s_start + lead
        intro = ""
        timed = False
        request: re.Match[str] | None = None
        for k, (c_start, c_end, cues, situation) in enumerate(parts):
            c_start, c_end = _trim(rest, c_start, c_end)
            if c_start >= c_end:
                continue
            body_text = rest[c_start:c_end]
            toks = sentence_toks if len(parts) == 1 and c_start == 0 else None
            if toks is None or c_end != len(rest):
                toks = _slice(sentence_toks, c_start, c_end)
            c_start, c_end = base + c_start, base + c_end
            if not toks:
                continue
            if k == 0 and len(toks) > 2 and toks[0][3] & T and toks[1][0] == ",":
                intro = body_text[: toks[2][1]]  # "Since 2020, ": it scopes over the sentence
                timed = True
            elif k == 0 and colon is None and body_start(toks) > 0:
                # "For money calculations, how do I A, and how do I B?": the introduction
                # scopes over the questions of its sentence
                intro, timed = body_text[: toks[body_start(toks)][1]], False
            elif k > 0 and intro and not any(t[3] & T for t in toks) and (
                timed or (toks[0][3] & (WH | AUX) and body_start(toks) == 0)
            ):
                body_text = intro + body_text
                toks = tokenize(body_text)
            if k == 0 and not lead_in:  # a request before a colon is the questions' scene
                request = _REQUEST_FRAME.match(body_text)
            elif (
                request and toks[0][3] & WH and not cues & _NEW_TOPIC_CUES
                and not any(t[3] & AUX for t in toks[1:4])
            ):
                # "Show me how to X, and how to Y": "Show me" is the frame of both
                body_text = request.group() + body_text
                toks = tokenize(body_text)
            if lead_in and k == 0:
                kind = PREAMBLE
            elif needs:
                kind = PHRASE
            elif situation:
                kind = STATEMENT
            else:
                kind = _kind(body_text, toks)
            last = k == len(parts) - 1
            clauses.append(
                Clause(
                    text=body_text,
                    toks=toks,
                    start=c_start,
                    end=c_end,
                    kind=kind,
                    asks=asks and (last or kind == QUESTION),
                    new_topic=(new_topic and k == 0) or bool(cues & _NEW_TOPIC_CUES),
                    sequence=(sequence and k == 0) or "then" in cues,
                )
            )
    return clauses
