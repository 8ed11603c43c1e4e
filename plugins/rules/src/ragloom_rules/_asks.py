"""Lists of asks under one frame: "How do I A, B, and C?", "Set X, then use Y", "I need to A;
then B".

A question, a command or a wish ("I need to ...") often lists several actions after one frame:
"How do I enable IPv4 forwarding so it persists across reboots, load the nftables rules at
every boot, and hand out addresses via DHCP?" asks three things, each "How do I" + one action.
Such a list is read here, before any list of words (:mod:`ragloom_rules._coordination`):

- the **frame** is what comes before the first action: "How do I", "Can I", "What's the best
  way to", "Show me how to", "I need to", or nothing for a command ("Set vimdiff as ...");
- the actions are separated by a comma (", B", ", and B", ", then B"), by "and then" /
  "and later" / "; then", and each one starts with a verb in its base form (a known verb, or
  an unknown word followed by what a verb takes: "hand out", "compute a hash");
- ", and also X" after an action lists a second object of its verb ("set up a git:// server,
  and also smart HTTP behind Apache").

A plain "and" with no comma ("reset my password and update my email") is left to the word
lists. The list is left alone, and the clause kept whole, when an action is a single word
("add, temporarily disable, and re-enable a user": short items sharing an object), when the
clause says the actions are one ("in a single command", "at once": in the frame or the last
action; inside an earlier action it says how that one is done), or when a later action
refers back with a pronoun that nothing in it names ("and have that host accept them"; a
"they" / "their" that the first action says too means the same people in each action).
Each action is one ask: a list of words inside it ("print an object's type and
pretty-printed contents") is not split further.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from . import _lexicon as lx
from ._references import THEY, _object, resolve
from ._tokens import AUX, NUM, PAIR, PREP, PRON, REF, WH, B, D, N, P, Token, V, tokenize

__all__ = ["ask_list", "frame_end", "one_action", "relative_at", "verb_at"]

#: Words between a separator and the verb of the next action ("and then see", "and later
#: pull"); the connectives are dropped, an adverb of the action ("quietly check") is kept.
_CONNECTIVES = lx.words("and then also")
_WISH_VERBS = lx.words("need want have like")
_WAY = re.compile(
    r"^(?:what(?:'s|\u2019s|\s+is|\s+are)\s+(?:the\s+|a\s+)?(?:[\w-]+\s+){0,2}?ways?\s+to"
    r"|is\s+there\s+(?:a|any)\s+(?:[\w-]+\s+){0,2}?way\s+to|how\s+to)\s+",
    re.IGNORECASE,
)
_ONE_ACTION = re.compile(
    r"\b(?:(?:in|with|using|by|from)\s+(?:one|a\s+single|the\s+same|a\s+single\s+\w+)\s+"
    r"(?:command|step|statement|query|call|go|transaction|line|operation|pass|invocation|"
    r"request|run|script|commit|\w+\s+command)"
    r"|at\s+once|at\s+the\s+same\s+time|simultaneously|together(?!\s+with\b))\b",
    re.IGNORECASE,
)


def one_action(text: str) -> bool:
    """Whether ``text`` says that its actions are done as one ("in a single apt command",
    "in one command", "at once", "together")."""
    return _ONE_ACTION.search(text) is not None


def _adverb(low: str) -> bool:
    if low in lx.LINKING_ADVERBS:
        return True
    return low.endswith("ly") and len(low) > 4 and low not in lx.VERB_BASES


def verb_at(toks: list[Token], j: int) -> bool:
    """Whether token ``j`` is a verb in its base form that starts an action: a known verb
    with something after it, or an unknown word followed by what a verb takes ("hand out",
    "compute a blob's hash")."""
    n = len(toks)
    if j >= n - 1:
        return False
    low, _, _, flags = toks[j]
    if flags & (B | D | N | P | AUX | PRON | WH) or toks[j + 1][3] & P:
        return False
    if low in lx.VERB_BASES:
        return True
    if flags & V or not low.replace("-", "").isalpha():
        return False  # an inflected verb ("including", "shows"), a path or a number
    if low.endswith(("ing", "ed", "ly")) or (low.endswith("s") and not low.endswith("ss")):
        return False
    return bool(toks[j + 1][3] & (D | PRON | PREP | NUM | PAIR))


def relative_at(toks: list[Token], j: int) -> bool:
    """Whether "which" / "who" at ``j``, after a comma, opens a relative clause about what
    was just named ("MD4 and RC4, which now fail to load"; "the maintainer, who rarely
    answers"): a verb or an adverb follows, not the noun or the auxiliary of a question
    ("..., which provider do I need?", "..., which is faster?")."""
    if toks[j][0] not in ("which", "who") or j + 1 >= len(toks):
        return False
    low, _, _, flags = toks[j + 1]
    if flags & AUX or (j + 2 < len(toks) and toks[j + 2][3] & AUX):
        return False  # "which is faster?", "which call should produce ...?": a question
    return bool(flags & V) or low in lx.VERB_ADVERBS or (low.endswith("ly") and len(low) > 4)


def comma_intro_end(toks: list[Token]) -> int:
    """Index after a phrase of at most 13 words that ends at a comma before a question ("On
    the receiving side, how do I ..."), not before a relative clause ("... MD4 and RC4, which
    now fail to load"); 0 when a clause ends first or there is none."""
    for k in range(1, min(len(toks) - 1, 14)):
        low = toks[k][0]
        if low in (";", ".", "?", "!", ":"):
            return 0
        if low == "," and toks[k + 1][3] & (WH | AUX) and not relative_at(toks, k + 1):
            return k + 1
    return 0


def _body_start(toks: list[Token]) -> int:
    """Index after an introduction that ends at a comma before the question ("On the
    receiving side, how do I ...")."""
    if not toks or toks[0][3] & (WH | AUX):
        return 0
    return comma_intro_end(toks)


def frame_end(toks: list[Token], command: bool) -> int | None:
    """Index of the first action's verb after the frame ("How do I | clone ..."), or
    ``None`` when the clause has no frame of a list of actions."""
    n = len(toks)
    i = _body_start(toks)
    if i >= n:
        return None
    low, _, _, flags = toks[i]
    f: int | None = None
    if flags & WH:
        j = i + 1
        if j < n and toks[j][0] == "to":  # "how to"
            f = j + 1
        else:
            while j < n and j - i <= 3 and not toks[j][3] & AUX:
                if toks[j][3] & (B | P) and toks[j][0] not in ("much", "many", "long", "often"):
                    break
                j += 1
            if j + 1 < n and toks[j][3] & AUX and toks[j + 1][0] in ("i", "we", "you", "one"):
                f = j + 2
    elif flags & AUX:
        if i + 1 < n and toks[i + 1][0] in ("i", "we", "you", "one"):
            f = i + 2
    elif command and not flags & (PRON | PREP):  # "For the box I'd like to": a wish's frame
        f = i
        if low == "please":
            f = i + 1
        if low in lx.REQUEST_VERBS and f + 2 < n and toks[f + 1][0] in ("me", "us"):
            f = None
            if toks[i + 2][0] == "how" and i + 3 < n and toks[i + 3][0] == "to":
                f = i + 4  # "Show me how to ..."
    else:
        # a wish: "I need to ...", "we'd like to ...", "I want to ..."
        for k in range(i, min(n - 2, i + 8)):
            if toks[k][0] in ("i", "we", "i'd", "we'd") and toks[k + 1][0] in _WISH_VERBS:
                if toks[k + 2][0] == "to":
                    f = k + 3
                elif k + 3 < n and toks[k + 2][0] == "like" and toks[k + 3][0] == "to":
                    f = k + 4
                break
    if f is None:
        return None
    while f < n - 1 and _adverb(toks[f][0]) and not toks[f][3] & (B | D):
        f += 1
    if f >= n - 1 or toks[f][3] & (D | P | WH | PRON | N):
        return None
    return f


def _way_frame(text: str, toks: list[Token]) -> int | None:
    """The first verb after "What's the best way to", "Is there a way to", "How to"."""
    m = _WAY.match(text)
    if m is None:
        return None
    for j, tok in enumerate(toks):
        if tok[1] >= m.end():
            return j
    return None


def _unresolved_reference(
    toks: list[Token], a: int, b: int, known: frozenset[str] = frozenset()
) -> bool:
    """Whether ``toks[a:b]`` (a later action) has a pronoun that nothing before it in the
    action names: "and have that host accept them" refers to the first action. A pronoun
    in ``known`` (one the first action uses itself) is not the first action's object: "show
    how their httpd ..., expand their cipher string" means the same people twice."""
    for j in range(a, b):
        low = toks[j][0]
        if low == "ones" or (low == "one" and j > a and not toks[j - 1][3] & (B | NUM)):
            return True  # "drop the unused ones": ones of what the first action names
        if not toks[j][3] & REF or low in ("he", "him", "his", "she", "her") or low in known:
            continue
        plural = low in THEY
        named = False
        for k in range(a + 1, j):  # the action's verb names nothing
            word, _, _, flags = toks[k]
            if flags & (B | D | P | V | AUX) and not flags & N:
                continue
            if not plural or (word.endswith("s") and not word.endswith("ss")):
                named = True
                break
        if not named:
            return True
    return False


#: Words that open an introduction of an action ("once the numbers are loaded, compute").
_INTRO_OPENERS = lx.words("once after when before if whenever")
#: Tokens that end a short introduction's search for its end: the clause ended first, or
#: another item of a list began.
_INTRO_BREAKS = frozenset({";", ".", "?", "!", ":", "and", "or", "but"})


def introduction_end(
    toks: list[Token], start: int, stop: int, ends_at: Callable[[int], bool] | None = None
) -> int | None:
    """Where a short introduction ends, searched from token ``start`` to before ``stop``: its
    comma, or the first token for which ``ends_at`` holds; ``None`` when a clause or list
    item ends first (:data:`_INTRO_BREAKS`), or nothing ends it within reach."""
    for k in range(start, min(len(toks) - 1, stop)):
        low = toks[k][0]
        if low in _INTRO_BREAKS:
            return None
        if low == "," or (ends_at is not None and ends_at(k)):
            return k
    return None


def _intro_comma(toks: list[Token], j: int) -> int | None:
    """The comma that ends an introduction opened at ``j`` ("once the rows are in, ...")
    when an action follows it, else ``None``."""
    if j >= len(toks) or toks[j][0] not in _INTRO_OPENERS:
        return None
    comma = introduction_end(toks, j + 2, j + 14)
    return comma if comma is not None and verb_at(toks, comma + 1) else None


def _words(toks: list[Token], a: int, b: int) -> int:
    return sum(1 for t in toks[a:b] if not t[3] & P)


def ask_list(text: str, toks: list[Token], command: bool) -> list[str] | None:
    """One text per action of a list of actions under one frame (the frame in front of
    each), or ``None`` when ``text`` holds no such list."""
    n = len(toks)
    f = _way_frame(text, toks)
    if f is None:
        f = frame_end(toks, command)
    if f is None:
        return None
    seps: list[tuple[int, int]] = []  # (end of the previous action, start of the next one)
    intros: dict[int, int] = {}  # an action's start -> the comma after its introduction
    objects = False
    depth = 0
    k = f + 1
    while k < n:
        low = toks[k][0]
        if low in ("(", "["):
            depth += 1
        elif low in (")", "]"):
            depth = max(depth - 1, 0)
        if depth or low not in (",", ";", "and", "then"):
            k += 1
            continue
        j = k + 1
        cues = set()
        while j < n and toks[j][0] in _CONNECTIVES:
            cues.add(toks[j][0])
            j += 1
        if low == "and":
            cues.add("and")
        if low in ("and", ";") and not cues & {"then", "also"}:
            # a plain "and" is a list of words, unless it ends a list of actions ("A, B and
            # C") or a time word follows ("and later pull"); "; B" is another clause
            later = j < n and toks[j][0] in ("later", "afterwards")
            if not (low == "and" and (later or seps)):
                k += 1
                continue
        if low == "then":
            cues.add("then")
        start = j
        while j < n - 1 and _adverb(toks[j][0]) and not toks[j][3] & (B | D):
            j += 1
        at = j + (j < n and toks[j][0] == ",")
        comma = _intro_comma(toks, at) if low in (",", "and") else None
        if comma is not None:
            # "..., and, once the numbers are loaded, compute a total": the action after the
            # introduction, which stays with it
            seps.append((k, at))
            intros[at] = comma
            k = comma + 1
            continue
        if verb_at(toks, j):
            seps.append((k, start))
        elif "also" in cues and not seps and j < n - 1 and not toks[j][3] & (B | P):
            seps.append((k, start))  # ", and also smart HTTP": a second object
            objects = True
            break
        elif low in (",", ";") and seps:
            # a comma inside the last action ("..., including ...") is its own
            pass
        k = j if j > k else k + 1
    if not seps:
        return None
    begin = f
    if command and all(toks[j][0] in lx.LINKING_ADVERBS for j in range(f)):
        begin = 0  # "First back up X, then Y": "First" is the first action's, no frame
    if objects:
        begin = f + 1
        if begin < n and toks[begin][3] & PREP and not toks[begin + 1][3] & (B | P):
            begin += 1  # "set up | a server"
    bounds = [begin, *[s for _, s in seps]]
    ends = [e for e, _ in seps] + [n]
    while ends[-1] > bounds[-1] and toks[ends[-1] - 1][3] & P:
        ends[-1] -= 1
    items = list(zip(bounds, ends, strict=True))
    # "in a single command", "at once" makes the actions one, unless it is inside an action
    # that another follows ("create a key and a certificate in one command, package both
    # ..., and ..."): there it says how that action is done
    inner = [(toks[a][1], toks[b - 1][2]) for a, b in items[:-1]]
    if any(
        not any(lo <= m.start() and m.end() <= hi for lo, hi in inner)
        for m in _ONE_ACTION.finditer(text)
    ):
        return None
    for a, b in items:
        v = a
        while v < b - 1 and _adverb(toks[v][0]) and not toks[v][3] & (B | D):
            v += 1
        if _words(toks, a, b) < 2 or v + 1 >= b or toks[v + 1][3] & P:
            return None  # "add, temporarily disable, and re-enable a user": one task
    frame = text[: toks[begin][1]]
    out = []
    for a, b in items:
        while b - 1 > a and toks[b - 1][0] == ",":
            b -= 1  # "A, B, and, once ..., C": B without its comma
        c = intros.get(a)
        if c is None:
            out.append(text[toks[a][1] : toks[b - 1][2]])
        else:  # the action first, then its introduction: "compute a total, once ..."
            action = text[toks[c + 1][1] : toks[b - 1][2]]
            out.append(f"{action}, {text[toks[a][1] : toks[c - 1][2]]}")
    items = [(intros[a] + 1 if a in intros else a, b) for a, b in items]  # the actions
    # "their" in the first action (people, mostly) is no object of it: neither is it later
    first = THEY if any(t[0] in THEY for t in toks[items[0][0] : items[0][1]]) else frozenset()
    if any(_unresolved_reference(toks, a, b, first) for a, b in items[1:]):
        # "create a role ..., grant it read access": "it" is what the first action made
        span = None if objects else _object(toks, f)
        if span is None:
            return None
        named = text[toks[span[0]][1] : toks[span[1] - 1][2]]
        for k, (a, b) in enumerate(items[1:], start=1):
            if _unresolved_reference(toks, a, b, first):
                resolved = resolve(out[k], tokenize(out[k]), named, [])
                if resolved is None:
                    return None
                out[k] = resolved
    return [frame + item for item in out]
