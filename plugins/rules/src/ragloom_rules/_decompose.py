"""Rule-based query decomposition: the asks of a message, however they are phrased.

Pure Python, no ragloom core, no model; deterministic and fast (about a tenth of a
millisecond a query): regular expressions are compiled once, at import.

How a message is read, in order:

1. **Sentences and clauses.** The message is cut into sentences (after "?"; after "!" and "."
   when a new sentence starts, not after an item's number: "2. How do I ...", nor after an
   initial: "J. Smith", but "from C. Then I ..."), a greeting ("Hi,") and a closing "Thanks!"
   are dropped, and so is what only leads to the asks ("So: with openssl, how ...") or orders
   them ("First:", "Second,", "Lastly:", "After that,", "2."; a later item's marker opens a new
   topic, as "Also," does). A preamble before a colon ("For a release script: ...") is a clause
   of its own, and so are the words before a sentence's numbered items ("We use WAL: (1) which
   files ..., (2) what command ...") or before a list of needs ("Release checklist: a gzipped
   tarball of ..., a checksum line ..., and a detached signature ..."), each item then read as a
   stretch of its own (a need is a phrase to search for). Each sentence is cut into clauses at
   ";"; at "and" / "but" / "plus" / "then" / ", also" / ", then" / "and afterwards" when a new
   question starts after it, maybe after an introduction ("What is X and how does Y work?",
   "..., and once I install it, what ..."); at "and" before a new request ("... and explain how
   to test it"); at a comma before a question of a list of questions ("which version ..., was it
   built threadsafe, and ..."; not before a relative clause: "MD4 and RC4, which now fail to
   load", nor before an auxiliary and a verb: "and must pass", nor before a second "when ...",
   nor before the question of a comparison: "X vs Y, what's the difference?"); and at a dash
   after a situation ("I'm sick of X - how do I ...?"). A clause is a question (it starts with a
   question word or an auxiliary, maybe after an introduction, or ends the sentence's "?"), a
   request ("Tell me about ...", "Compare ..."), a command ("Set X ...", "on the offline side,
   check ..."), a phrase (words without a verb: a search), a statement, or a preamble.
2. **What is asked and what is the scene.** Preambles and statements before the first ask set
   the scene: they are kept in front of each sub-query of the asks that follow ("I live in
   Canada. Can I pay with PayPal?"; of a story of three sentences or more, the asks after the
   first keep its last sentence), unless an ask opens a new topic ("Also, ...", "separately") or
   follows with "then", in which case the statements are a sub-query of their own (a preamble
   still sets the scene); when a statement of the scene opens the new topic ("I need A; also the
   script needs B; and which call ...?", "We also need ..."), those before it are. A preamble of
   the scene heads the questions, with what follows it, until another preamble heads one ("On
   the web box: how ...? On the database box: how ...?"). A phrase that ends with a period
   before a question is a scene too ("My laptop battery drains fast.", after a preamble too:
   "Long story: two years ago a contractor ..."). A situation before a dash ("I'm tired of
   typing the passphrase - how do I cache it?") is the scene of the questions of its own
   sentence only. A statement between two asks sets the scene of the ask after it; a statement
   after the last ask keeps the message whole, unless it is a wish ("How do I A? After that I
   want to B": an ask of its own, when it names what it wants rather than "I need to do it
   today"). When the message asks nothing else, or only what points back at them ("How do I do
   each of these?"), its wishes are its asks ("I want A. I also want B."; "I need A. I'd also
   like B. What should I use for each?"), the question that only points back dropped. An
   introduction before a comma ("Since 2020, ...", "For money calculations, ...") belongs to
   every question of its sentence, "Show me" to every "how to ..." of it; a request before a
   colon ("Show me how to pin a key: what form ..., how do I ...?") is the scene of the
   questions after it.
3. **References.** A later question that refers to an earlier one gets the reference
   replaced ("What is Docker and how does it work?" -> "How does Docker work?"; "its" ->
   "Docker's"; "one" -> "a race condition"; "which one" -> "which of A and B"); see
   :mod:`ragloom_rules._references`. A pronoun named by the question itself ("... while
   others keep writing to it", "Then, once my VFS is registered, how do I look it up?", "tar
   vs zip - which one ...?") or
   by a scene that says something ("sshd refuses to start ... once it's running") is left
   as it is, and so is a "they" / "their" that the earlier question says too (the same
   people: "show how their proxy ..., and explain what happens in their client"). When
   what a reference stands for cannot be told, the two questions stay together.
4. **Within each ask**: "X vs Y: when would I use each ...?" gives the question asked of each
   item; things set side by side ("X vs Y", "X or Y: which ...") give one search phrase per
   item and then the comparison; a comparison named by a word ("the difference between X
   and Y", "compare X and Y") is one ask and stays whole (see
   :mod:`ragloom_rules._comparison`). A list of actions under one frame ("How do I A, B, and
   C?", "Set X, then use Y") gives one sub-query per action with the frame in front (see
   :mod:`ragloom_rules._asks`). Otherwise an enumeration with a shared frame gives one
   sub-query per item ("effects of caffeine on sleep, memory, and mood"); see
   :mod:`ragloom_rules._coordination` for how the items are delimited and when a list is
   part of one ask and left alone (relations such as "disagree" or "between X and Y", a
   pronoun, a clause inside the clause, actions that undo each other, values in capitals,
   "in a single command", ...). Nested lists multiply ("causes and effects of inflation and
   unemployment").

Sub-queries are the user's words put back together (a resolved reference brings words of the
question itself): spacing normalised, the first letter capitalised when the query's was (or
after a scene that ends a sentence), a "?" when the question asked one (comparison items are
search phrases without one). Duplicates are dropped. At most ``max_sub_queries`` are
returned: a comparison that must be cut keeps its comparison query; a cut that would drop a
word of the question falls back to one sub-query per question, then to the whole query,
because a missed split costs less than a lost item.

A query whose :func:`~ragloom.signals.complexity` is 1 (no comparison or conjunction
word, no list punctuation, ten words or fewer) and that holds a single sentence is returned
whole, as is any query in which nothing is split.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ragloom.signals import complexity

from . import _lexicon as lx
from ._asks import ask_list, comma_intro_end, introduction_end, relative_at, verb_at
from ._comparison import comparison, each_item, juxtaposed
from ._coordination import coordination_items, one_ask, relation_word
from ._references import (
    members,
    needs_resolution,
    pronouns_only,
    resolve,
    same_referent,
    topic,
)
from ._tokens import AUX, PAIR, PREP, PRON, REF, WH, B, D, N, P, T, Token, V, tokenize
from .invariants import content_words

__all__ = ["decompose"]

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
#: A wish, whatever it wants ("I want a way to ...", "we need the list of ...", "I'd also like
#: the check to ...", "After that I need to ..."): after a question it is an ask of its own,
#: not the story the question is in.
_WISH_ANY = re.compile(
    r"^(?:(?:for|from|in|on|with|during|before|after|once|when)\s[^,;:?!.]{1,60}?,?\s+)?"
    r"(?:(?:after\s+th(?:at|is)|then|also|next|finally|lastly|and|so|plus)[\s,]+)*(?:i|we)"
    r"(?:'d|\s+would)?\s+(?:(?:also|then|still|really|now|additionally|just)\s+)?"
    r"(?:want|like|need|wish|prefer)\s+(?=\w)",
    re.IGNORECASE,
)
#: A question that only points back at what the message said it wants ("How do I do each of
#: these?", "Which commands do this?", "What should I use for each of those?").
_POINTS_BACK = re.compile(
    r"^(?:so\s+|and\s+)?(?:how|what|which)\b(?:\s+\S+){0,5}?\s+"
    r"(?:(?:each|all|both|any)\s+of\s+(?:these|those|them|this)|these|those|them|this|that|"
    r"both|each)(?:\s+(?:things|steps|ones))?\s*\??$",
    re.IGNORECASE,
)
#: A wish's verb whose object is a pronoun ("... to do it today", "... to fix that").
_PRONOUN_OBJECT = re.compile(
    r"(?:to\s+)?\w+\s+(?:it|them|this|that|these|those)(?:\s+\w+){0,3}\s*[.!?,;]*$",
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
#: Words that can start another comparison or enumeration inside an enumerated item.
_NESTED = re.compile(
    r"(?<!\w)(?:and|&|or|vs|versus|compar\w*|contrast|differ\w*)(?!\w)", re.IGNORECASE
)

QUESTION, REQUEST, COMMAND, STATEMENT = "question", "request", "command", "statement"
PREAMBLE = "preamble"  # "For a release script:", "Dual-boot with Windows:": sets the scene
PHRASE = "phrase"  # words without a verb: what to search for ("Samsung Galaxy S24 price")


@dataclass
class _Clause:
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


def _sentences(text: str) -> list[tuple[int, int]]:
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


def _words_before(toks: list[Token], offset: int) -> int:
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
_VERB_ADVERBS = lx.words("also still now often usually always never already sometimes just")


def _has_predicate(toks: list[Token]) -> bool:
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
    i = _body_start(toks)
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
    return STATEMENT if _has_predicate(toks) else PHRASE


def _opens_intro(toks: list[Token]) -> bool:
    """Whether the clause opens with "When I ...", "If ...": an introduction, not a question
    ("When does it run?" is one)."""
    return toks[0][0] in _INTRO_WH and len(toks) > 1 and not toks[1][3] & AUX


def _body_start(toks: list[Token]) -> int:
    """Index of the first word after an introduction: a time phrase ("Since 2020, ...") or a
    phrase that ends at a comma before a question ("On the receiving side, how do I ...")."""
    n = len(toks)
    if n > 2 and toks[0][3] & T and toks[1][0] == ",":
        return 2
    if not toks or (toks[0][3] & (WH | AUX) and not _opens_intro(toks)):
        return 0
    return comma_intro_end(toks)


def _read(text: str) -> list[_Clause] | None:
    """The clauses of the message, or ``None`` when it must stay whole."""
    clauses: list[_Clause] = []
    for s_start, s_end in _sentences(text):
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
            elif k == 0 and colon is None and _body_start(toks) > 0:
                # "For money calculations, how do I A, and how do I B?": the introduction
                # scopes over the questions of its sentence
                intro, timed = body_text[: toks[_body_start(toks)][1]], False
            elif k > 0 and intro and not any(t[3] & T for t in toks) and (
                timed or (toks[0][3] & (WH | AUX) and _body_start(toks) == 0)
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
                _Clause(
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


# -- assembly ---------------------------------------------------------------------------------


def _finish(text: str, question: bool, capitalize: bool, search_phrase: bool) -> str:
    sub = " ".join(text.split()).strip(_TRAILING).lstrip(" ,;:-")
    sub = sub.replace(" ,", ",").replace(" ?", "?")
    if not sub:
        return ""
    first = sub.split(" ", 1)[0]
    if capitalize and first[:1].isalpha() and first == first.lower():
        sub = sub[0].upper() + sub[1:]
    if question and (not search_phrase or _starts_with_question_word(first)):
        sub += "?"
    return sub


def _starts_with_question_word(word: str) -> bool:
    toks = tokenize(word)
    return bool(toks) and bool(toks[0][3] & (WH | AUX))


def _enumeration(
    text: str, toks: list[Token], strict: bool, guard: bool = True
) -> tuple[list[str], list[str]] | None:
    """One text per enumerated item (the frame around it), and the items; or ``None``. With
    ``guard``, a list that is part of one ask (:func:`~ragloom_rules._coordination.one_ask`)
    gives ``None``."""
    for c, tok in enumerate(toks):
        if tok[0] not in ("and", "&", "or") or c == 0:
            continue
        items = coordination_items(toks, c, strict=strict)
        if items is None:
            continue
        if guard and one_ask(text, toks, items):
            return None
        first = items[0][0]
        cut = toks[first][1]
        if first > 0 and toks[first - 1][3] & PAIR:  # "both dental and vision"
            cut = toks[first - 1][1]
        last = items[-1][1]
        tail = text[toks[last - 1][2] :]
        if last < len(toks) and toks[last][0] == "both":  # "do X and Y both support it"
            tail = text[toks[last][2] :]
        texts = [text[toks[a][1] : toks[b - 1][2]] for a, b in items]
        return [f"{text[:cut]}{item}{tail}" for item in texts], texts
    return None


def _split(
    clause: _Clause,
    capitalize: bool,
    include_comparison: bool,
    limit: int,
    depth: int = 0,
) -> tuple[list[str], bool]:
    """The sub-queries of one clause, and whether it was split."""
    text, toks, question = clause.text, clause.toks, clause.asks
    whole = [_finish(text, question, capitalize, False)]
    if clause.merged or clause.keep or not toks:
        return whole, False
    if depth == 0:
        each = each_item(text, toks)  # "X vs Y: when would I use each ...?"
        if each is not None:
            return [_finish(e, question, capitalize, False) for e in each], True
    compared = None if _aside_comparison(toks) else comparison(text, toks)
    if compared is not None:
        clause.things = compared
        if not juxtaposed(text, toks):
            return whole, False  # "the difference between X and Y", "compare X and Y": one ask
        subs = [s for s in (_finish(c, question, capitalize, True) for c in compared) if s]
        kept: set[str] = set()
        for sub in subs:
            kept |= content_words(sub)
        # without the comparison query, the item phrases must still carry every word of it
        # ("Which TV ..., X or Y?": "TV" is in no phrase): then it is kept anyway
        if include_comparison or not content_words(text) <= kept:
            subs = [*subs[: max(limit - 1, 0)], whole[0]]
        return subs, True
    if depth == 0:
        actions = ask_list(text, toks, clause.kind in (COMMAND, REQUEST))
        if actions is not None:
            asked = question and clause.kind == QUESTION
            first = [_finish(a, asked, capitalize, False) for a in actions[:-1]]
            return [*first, _finish(actions[-1], question, capitalize, False)], True
    if depth >= 3 or relation_word(toks):
        return whole, False
    found = _enumeration(text, toks, strict=clause.kind in (STATEMENT, COMMAND))
    if found is None:
        return whole, False
    parts, things = found
    if depth == 0:
        clause.things = things
    out: list[str] = []
    for part in parts:
        if _NESTED.search(part) is None:
            out.append(_finish(part, question, capitalize, False))
            continue
        inner = _Clause(part, tokenize(part), 0, 0, clause.kind, question)
        out.extend(_split(inner, capitalize, include_comparison, limit, depth + 1)[0])
    return out, True


_DEMONSTRATIVES = frozenset({"that", "this", "these", "those"})


def _local_antecedent(clause: _Clause) -> bool:
    """Whether what the clause's pronouns stand for is named in the clause itself: in the
    statement before it ("Extension loading seems off - how do I turn it on?") or in its
    introduction ("Then, once my VFS is registered, how do I look it up?")."""
    if clause.prefix:
        return True
    toks = clause.toks
    lows = [t[0] for t in toks]
    if "one" in lows and ({"vs", "versus"} & set(lows[: lows.index("one")])):
        return True  # "smime vs cms - which one should I use?": what it compares
    body = _body_start(toks)
    for _low, _, _, flags in toks[:body]:
        if flags & N or not flags & (B | D | P | V | AUX | PRON | T):
            return True
    # "before it migrates", "without importing them", "so I know to quote it": a pronoun in
    # a clause inside the question, after a noun of the question
    if "one" in lows and not any(t[3] & REF for t in toks):
        one = lows.index("one")
        if {"a", "an"} & set(lows[: one - 2]):
            return True  # "a table of the numbers 1 to 100 without creating one"
    noun = plural = inner = False
    seen: set[str] = set()
    for j, (low, _, _, flags) in enumerate(toks):
        if flags & REF:
            return inner and (plural if low in ("they", "them", "their") else noun)
        # the word after, past an adverb ("instead of silently storing it")
        k = j + 1
        while k < len(toks) and toks[k][0].endswith("ly") and len(toks[k][0]) > 4:
            k += 1
        nxt = toks[k][0] if k < len(toks) else ""
        if low in _DEMONSTRATIVES and nxt in seen and inner:
            return True  # "grep an old release without checking that release out"
        seen.add(low)
        # "grep the source as it was": "as" before a pronoun opens a clause too
        opens = low in lx.SUBORDINATE_OPENERS or (
            low == "as" and k < len(toks) and bool(toks[k][3] & REF)
        ) or (low == "and" and _then_verb(toks, j + 1))
        if noun and (opens or (flags & PREP and nxt.endswith("ing"))):
            inner = True
        elif (
            flags & N
            or not flags & (B | D | P | V | AUX | PRON | T | WH)
            or (j > 0 and toks[j - 1][3] & D and not flags & (B | D | P))  # "a file"
        ):
            noun = True
            plural = plural or (low.endswith("s") and not low.endswith("ss"))
    return False


def _then_verb(toks: list[Token], k: int) -> bool:
    """Whether a verb stands at ``k`` (past a "then"): after "and", a second action of the
    same question, whose pronoun stands for its nouns ("take a commit from one branch and
    apply it to another")."""
    if k < len(toks) and toks[k][0] == "then":
        k += 1
    return k < len(toks) and bool(toks[k][3] & V) and not toks[k][3] & (AUX | WH)


def _resolve(clauses: list[_Clause], text: str, context: bool) -> list[_Clause]:
    """Clauses with references to an earlier question replaced, or kept together with it.
    With ``context`` (a scene set before the questions, carried into each sub-query), a
    pronoun that no earlier question resolves is left to it ("sshd refuses to start ... once
    it's running, what do I enable ...")."""
    out: list[_Clause] = []
    for clause in clauses:
        prev = out[-1] if out else None
        scene = tokenize(clause.prefix) if clause.prefix else []
        if (
            prev is not None
            and scene
            and needs_resolution(scene)
            and not _local_antecedent(
                _Clause(clause.prefix, scene, 0, 0, STATEMENT, False)
            )
        ):
            # "Also it seems switched off - how do I turn it on?": the scene itself refers
            # back; what to is not read: the questions stay together
            _merge(out, text, clause)
            continue
        if (
            prev is not None
            and not _local_antecedent(clause)
            and needs_resolution(clause.toks)
            and not same_referent(clause.toks, prev.toks)
        ):
            things = _things(prev)
            resolved = resolve(clause.text, clause.toks, topic(prev.text, prev.toks), things)
            if prev.keep and context and pronouns_only(clause.toks):
                resolved = None  # the scene after an ask of its own names it ("We also need
                # proof of when each archive existed: how do I timestamp it?")
            if resolved is None:
                named = context and not clause.new_topic and pronouns_only(clause.toks)
                if named:
                    out.append(clause)
                    continue
                _merge(out, text, clause)
                continue
            if resolved != clause.text:
                clause.text, clause.toks = resolved, tokenize(resolved)
        out.append(clause)
    return out


def _merge(out: list[_Clause], text: str, clause: _Clause) -> None:
    """Keep ``clause``, whose reference no rule resolves, together with the question before
    it. When a semicolon or a sentence's end stands between them, that question is an ask of
    its own and stands alone too: "How do I list containers; how do I stop one?" asks "How do
    I list containers?" and, whole, the two together (no word is guessed); "What files make up
    a package, and what does each one contain?" stays one ask."""
    prev = out[-1]
    asks = prev.asks or prev.kind in (REQUEST, COMMAND)  # not a scene ("X broke. How ...?")
    apart = asks and any(mark in text[prev.end : clause.start] for mark in ";?.!")
    body = text[prev.start : clause.end]
    merged = _Clause(
        body, tokenize(body), prev.start, clause.end, prev.kind, prev.asks or clause.asks,
        prev.new_topic, merged=True, prefix=prev.prefix, ask=True,
    )
    if prev.merged or not apart:
        out[-1] = merged
    else:
        out.append(merged)


def _things(clause: _Clause) -> list[str]:
    """What a question lists or compares ("the Pixel 8", "the iPhone 15"), else the two
    things it names ("the Dyson V15 ... than the Shark Stratos")."""
    compared = comparison(clause.text, clause.toks)
    strict = clause.kind in (STATEMENT, COMMAND) and compared is None
    # a comparison's phrases carry the clause's other words: keep the compared items only
    found = _enumeration(clause.text, clause.toks, strict=strict, guard=False)
    if found is not None:
        return found[1]
    named = members(clause.text, clause.toks)
    return named if len(named) == 2 else []


_SCENE_END = re.compile(r"\s*(?:[.!;:,\u2014\u2013]|-{1,2}(?=\s))")


def decompose(query: str, max_sub_queries: int = 5, include_comparison: bool = True) -> list[str]:
    """The sub-queries of ``query`` (see the module docstring); ``[query.strip()]`` when it
    holds a single intent, ``[]`` when it is blank."""
    whole = query.strip()
    if not whole:
        return []
    text = " ".join(whole.split())
    spans = _sentences(text)
    if len(spans) == 1 and complexity(text) == 1:
        return [whole]
    clauses = _read(text)
    if not clauses:
        return [whole]
    capitalize = text[0].isupper()
    asked_before = False
    for k, clause in enumerate(clauses):
        clause.ask = clause.kind in (QUESTION, REQUEST, COMMAND, PHRASE) or (
            clause.kind == STATEMENT and clause.asks
        )
        if (
            asked_before and not clause.ask and clause.kind == STATEMENT
            and _wish(clause.text) and not _scene_of_next(clauses, k, text)
        ):
            # "How do I A? After that I want to B": a wish after a question asks too (not
            # one about what was asked: "I need to do it today")
            clause.kind, clause.ask = REQUEST, True
        asked_before = asked_before or clause.ask
    clauses = _wishes_asked(clauses)
    for k, clause in enumerate(clauses):
        # "My laptop battery drains fast. How do I ...?": words that end with a period before
        # a question set its scene (a verb the lexicon does not know is still a verb); so do
        # six words or more before a semicolon ("Perl scripts in cgi-bin come back as plain
        # text; how do I ...?"), longer than a search phrase; a preamble before them too
        # ("Long story: two years ago a contractor committed ...")
        if (clause.kind == PREAMBLE and k == 0) or (clause.kind == STATEMENT and not clause.ask):
            continue  # "The old box still runs. Customers now see warnings. How do I ...?"
        if clause.kind != PHRASE:
            break
        mark = text[clause.end : clause.end + 1]
        says = mark == "." or (mark == ";" and _words_before(clause.toks, len(clause.text)) >= 6)
        if says and any(c.ask for c in clauses[k + 1 :]):
            clause.ask = False
    intents = [k for k, c in enumerate(clauses) if c.ask]
    if not intents:
        return _statements(clauses, text, whole, capitalize, include_comparison, max_sub_queries)
    first = intents[0]
    # a statement after the first question sets the scene of the question right after it
    asked: list[_Clause] = []
    pending: list[_Clause] = []
    for clause in clauses[first:]:
        if not clause.ask:
            pending.append(clause)
            continue
        if pending:
            clause.prefix = text[pending[0].start : clause.start]
            clause.new_topic = clause.new_topic or pending[0].new_topic
            clause.headed = any(c.kind == PREAMBLE for c in pending)
            pending = []
        asked.append(clause)
    if pending:
        return [whole]  # a statement after the last question: the message is one story
    context = ""
    unheaded: str | None = None  # the context once another preamble heads the questions
    dashed: str | None = None  # the context after the sentence of a situation before a dash
    ends: int | None = None  # where that sentence ends
    before: _Clause | None = None  # an ask of its own before the scene of the questions
    names = False  # whether the scene says something (may name what a pronoun stands for)
    if first:
        scene = clauses[:first]
        gap = _SCENE_END.match(text, scene[-1].end)
        lead = text[scene[0].start : scene[-1].end] + (gap.group() if gap else "")
        names = any(c.kind == STATEMENT or _has_predicate(c.toks) for c in scene)
        turn = next(
            (
                k for k in range(len(scene) - 1, 0, -1)
                if (scene[k].new_topic or scene[k].sequence)
                and any(c.kind != PREAMBLE for c in scene[:k])
            ),
            None,
        )
        if turn is not None and not (asked[0].new_topic or asked[0].sequence):
            # "I need A; also the script needs B; and which call ...?": what comes before the
            # new topic is an ask of its own, what starts it the scene of the questions
            told = [c for c in scene[:turn] if c.kind != PREAMBLE]
            body = text[told[0].start : told[-1].end]
            before = _Clause(body, tokenize(body), told[0].start, told[-1].end, STATEMENT,
                             False, ask=True, keep=True)
            asked.insert(0, before)
            gap = _SCENE_END.match(text, scene[-1].end)
            context = text[scene[turn].start : scene[-1].end] + (gap.group() if gap else "")
            context = context.rstrip() + " "
            if capitalize:  # "also the script needs B; ...": "The script needs B; ..."
                context = context[:1].upper() + context[1:]
            names = any(c.kind == STATEMENT or _has_predicate(c.toks) for c in scene[turn:])
        elif asked[0].new_topic or asked[0].sequence:
            # "X should do Y; also, how ...": the statement is an ask of its own; a
            # preamble ("For a release script:") still sets the scene of every question
            told = [c for c in scene if c.kind != PREAMBLE]
            if told:
                body = text[told[0].start : told[-1].end]
                statement = _Clause(body, tokenize(body), told[0].start, told[-1].end,
                                    STATEMENT, False, ask=True, keep=True)
                asked.insert(0, statement)
            if told and told[0] is not scene[0]:
                end = scene[scene.index(told[0]) - 1].end
                gap = _SCENE_END.match(text, end)
                context = text[scene[0].start : end] + (gap.group() if gap else "") + " "
                names = any(_has_predicate(c.toks) for c in scene[: scene.index(told[0])])
            else:
                names = False
        else:
            context = lead.rstrip() + " "
            # a preamble of the scene ("... the same server. On the C side: how ...", "sqlite:
            # largest value ..., and can I ...?") heads the questions, and what follows it
            # too, until another preamble does ("On the server: what ...", "openssl: ...")
            j = next((k for k, c in enumerate(scene) if c.kind == PREAMBLE), len(scene))
            if j < len(scene):
                gap = _SCENE_END.match(text, scene[j - 1].end) if j else None
                unheaded = (
                    text[scene[0].start : scene[j - 1].end] + (gap.group() if gap else "")
                ).rstrip() + " " if j else ""
            # a situation before a dash ("After an INSERT I need the id back - is there
            # ...? Then, how do I force-push ...?") is the scene of its own sentence only
            last = scene[-1]
            if (
                unheaded is None and last.kind == STATEMENT
                and text[last.end :].lstrip()[:1] in ("\u2014", "\u2013", "-")
            ):
                ends = next((e for b, e in _sentences(text) if b <= last.start < e), None)
                if len(scene) > 1:
                    gap = _SCENE_END.match(text, scene[-2].end)
                    dashed = (text[scene[0].start : scene[-2].end] + (gap.group() if gap else ""))
                    dashed = dashed.rstrip() + " "
                else:
                    dashed = ""
    asked = _resolve(asked, text, bool(context) and names)
    groups: list[list[str]] = []
    coarse: list[str] = []
    told_at: int | None = None  # the ask that carries the whole scene
    for k, clause in enumerate(asked):
        if context and k > 0 and clause.new_topic:
            context, unheaded, dashed = "", None, None
        if unheaded is not None and clause.headed:
            context, unheaded = unheaded, None
        if dashed is not None and ends is not None and clause.start >= ends:
            context, dashed = dashed, None
        prefix = clause.prefix
        if prefix and capitalize and not context:
            prefix = prefix[:1].upper() + prefix[1:]  # "Also extension loading ..."
        if told_at is None and clause is not before and context:
            told_at = k  # the first ask after the scene keeps all of it: no word is lost
        scene = context if k == told_at else _nearest(context)
        scene_text = ("" if clause is before else scene) + prefix
        cap = capitalize
        if scene_text:  # a sub-query goes on after the scene: a new sentence or not
            cap = scene_text.rstrip()[-1:] in (".", "?", "!")
        subs, _ = _split(clause, cap, include_comparison, max_sub_queries)
        one = _finish(clause.text, clause.asks, cap, False)
        groups.append([scene_text + s for s in subs])
        coarse.append(scene_text + one)
    subs = _unique([s for g in groups for s in g])
    if len(subs) == 1 and len(coarse) > 1:
        return subs  # "What is Docker? What is Docker?"
    return _capped(whole, subs, _unique(coarse), max_sub_queries)


#: A scene of this many sentences or more is a story: the asks after the first keep its last
#: sentence only (chosen on the development halves, where two questions have such a story).
_LONG_SCENE = 3


def _nearest(context: str) -> str:
    """The scene carried into a sub-query after the first: the whole of it, or the last
    sentence of a story of :data:`_LONG_SCENE` sentences or more (the one right before the
    questions), whose other words would otherwise outweigh each ask's own in its search
    ("Long story: two years ago ... It now sits in ... Management wants it gone, but first
    ... How do I ...?"). The first sub-query keeps the whole story: no word is lost."""
    spans = _sentences(context.strip()) if context else []
    if len(spans) < _LONG_SCENE:
        return context
    return context.strip()[spans[-1][0] :].strip() + " "


def _aside_comparison(toks: list[Token]) -> bool:
    """Whether every "vs" of the clause is inside parentheses ("which constraint failed
    (unique vs. foreign key vs. NOT NULL)"): an aside that names the kinds, not the things the
    clause compares."""
    depth, inside, outside = 0, False, False
    for low, _, _, _ in toks:
        if low in ("(", "["):
            depth += 1
        elif low in (")", "]"):
            depth = max(depth - 1, 0)
        elif low in ("vs", "vs.", "versus"):
            inside, outside = inside or depth > 0, outside or depth == 0
    return inside and not outside


def _wish(text: str) -> bool:
    """Whether ``text`` says what its writer wants ("I'd also like the check to ...") rather
    than something about what was asked ("I need to do it today")."""
    wish = _WISH_ANY.match(text)
    return wish is not None and not _PRONOUN_OBJECT.match(text, wish.end())


def _scene_of_next(clauses: list[_Clause], k: int, text: str) -> bool:
    """Whether clause ``k`` sets the scene of a question right after it in the same sentence
    ("I'd like X to reject text - is there a strict mode?")."""
    if k + 1 >= len(clauses):
        return False
    nxt = clauses[k + 1]
    return nxt.kind == QUESTION and not re.search(r"[.?!]", text[clauses[k].end : nxt.start])


def _wishes_asked(clauses: list[_Clause]) -> list[_Clause]:
    """The clauses with the wishes as the asks when the message asks nothing else: "I want A.
    I also want B." (no question), "I'd like to A, B, and C. How do I do each of these?",
    "I need A. I'd also like B. What should I use for each of those?" (a question that only
    points back at them, which is then dropped: the wishes say what it asks). A single wish
    without a list of actions, or any question of its own, leaves them as they are."""
    wishes = [c for c in clauses if c.kind == STATEMENT and _wish(c.text)]
    if not wishes:
        return clauses
    asked = [c for c in clauses if c.ask]
    pointing = [c for c in asked if c.kind == QUESTION and _POINTS_BACK.match(c.text)]
    if len(pointing) != len(asked):
        return clauses
    if len(wishes) < 2 and not (asked and "," in wishes[0].text):
        return clauses
    for clause in clauses[clauses.index(wishes[0]) :]:
        if clause.kind == STATEMENT:  # "And the column should refuse text": a need too
            clause.kind, clause.ask = REQUEST, True
    return [c for c in clauses if c not in pointing]


def _statements(
    clauses: list[_Clause],
    text: str,
    whole: str,
    capitalize: bool,
    include_comparison: bool,
    limit: int,
) -> list[str]:
    """A message without a question: one story, unless "Also, ..." starts another; a single
    statement may still list things ("freezing on Safari and Firefox")."""
    chunks: list[list[_Clause]] = []
    for clause in clauses:
        if not chunks or clause.new_topic:
            chunks.append([])
        chunks[-1].append(clause)
    if len(chunks) == 1 and len(clauses) == 1:
        subs, _ = _split(clauses[0], capitalize, include_comparison, limit)
        return _capped(whole, _unique(subs), [whole], limit)
    subs = [_finish(text[c[0].start : c[-1].end], False, capitalize, False) for c in chunks]
    return _capped(whole, _unique(subs), _unique(subs), limit)


def _unique(items: list[str]) -> list[str]:
    seen: set[str] = set()
    out: list[str] = []
    for item in items:
        if item and item not in seen:
            seen.add(item)
            out.append(item)
    return out


def _capped(whole: str, subs: list[str], coarse: list[str], limit: int) -> list[str]:
    """At most ``limit`` sub-queries without losing a word of the question."""
    if len(subs) <= 1:
        return [whole]
    if len(subs) <= limit:
        return subs
    cut = subs[:limit]
    asked = content_words(whole)
    kept: set[str] = set()
    for sub in cut:
        kept |= content_words(sub)
    if asked <= kept:
        return cut
    if 1 < len(coarse) <= limit:
        return coarse
    return [whole]
