"""Rule-based query decomposition: the asks of a message, however they are phrased.

Pure Python, no ragloom core, no model; deterministic and fast (about a tenth of a
millisecond a query): regular expressions are compiled once, at import.

How a message is read, in order:

1. **Sentences and clauses** (:mod:`ragloom_rules._reading`). The message is cut into sentences
   (after "?"; after "!" and "." when a new sentence starts, not after an item's number: "2. How
   do I ...", nor after an initial: "J. Smith", but "from C. Then I ..."), a greeting ("Hi,")
   and a closing "Thanks!" are dropped, and so is what only leads to the asks ("So: with
   openssl, how ...") or orders them ("First:", "Second,", "Lastly:", "After that,", "2."; a
   later item's marker opens a new topic, as "Also," does). A preamble before a colon ("For a
   release script: ...") is a clause of its own, and so are the words before a sentence's
   numbered items ("We use WAL: (1) which files ..., (2) what command ...") or before a list of
   needs ("Release checklist: a gzipped tarball of ..., a checksum line ..., and a detached
   signature ..."), each item then read as a stretch of its own (a need is a phrase to search
   for). Each sentence is cut into clauses at ";"; at "and" / "but" / "plus" / "then" / ", also"
   / ", then" / "and afterwards" when a new question starts after it, maybe after an
   introduction ("What is X and how does Y work?", "..., and once I install it, what ..."); at
   "and" before a new request ("... and explain how to test it"); at a comma before a question
   of a list of questions ("which version ..., was it built threadsafe, and ..."; not before a
   relative clause: "MD4 and RC4, which now fail to load", nor before an auxiliary and a verb:
   "and must pass", nor before a second "when ...", nor before the question of a comparison: "X
   vs Y, what's the difference?"); and at a dash or ", so" after a situation ("I'm sick of X -
   how do I ...?", "the clients must trust our CA, so what's ...?"). A clause is a question (it
   starts with a question word or an auxiliary, maybe after an introduction, or ends the
   sentence's "?"), a request ("Tell me about ...", "Compare ..."), a command ("Set X ...", "on
   the offline side, check ..."), a phrase (words without a verb: a search), a statement, or a
   preamble.
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
3. **References.** A later question that refers to an earlier one gets the reference replaced
   ("What is Docker and how does it work?" -> "How does Docker work?"; "its" -> "Docker's";
   "one" -> "a race condition"; "which one" -> "which of A and B"); see
   :mod:`ragloom_rules._references`. A pronoun named by the question itself ("... while others
   keep writing to it", "Then, once my VFS is registered, how do I look it up?", "the sockets
   with the process that owns each one", "tar vs zip - which one ...?") or by a scene that says
   something ("sshd refuses to start ... once it's running") is left as it is, and so is a
   "they" / "their" that the earlier question says too (the same people: "show how their proxy
   ..., and explain what happens in their client"). When what a reference stands for cannot be
   told, the two questions stay together.
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

from ragloom.signals import complexity

from . import _lexicon as lx
from ._asks import ask_list
from ._comparison import comparison, each_item, juxtaposed
from ._coordination import coordination_items, one_ask, relation_word
from ._reading import (
    _TRAILING,
    COMMAND,
    PHRASE,
    PREAMBLE,
    QUESTION,
    REQUEST,
    STATEMENT,
    Clause,
    body_start,
    has_predicate,
    read,
    sentences,
    words_before,
)
from ._references import (
    THEY,
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
#: Words that can start another comparison or enumeration inside an enumerated item.
_NESTED = re.compile(
    r"(?<!\w)(?:and|&|or|vs|versus|compar\w*|contrast|differ\w*)(?!\w)", re.IGNORECASE
)

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
    clause: Clause,
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
        inner = Clause(part, tokenize(part), 0, 0, clause.kind, question)
        out.extend(_split(inner, capitalize, include_comparison, limit, depth + 1)[0])
    return out, True


_DEMONSTRATIVES = frozenset({"that", "this", "these", "those"})


def _local_antecedent(clause: Clause) -> bool:
    """Whether what the clause's pronouns stand for is named in the clause itself: in the
    statement before it ("Extension loading seems off - how do I turn it on?") or in its
    introduction ("Then, once my VFS is registered, how do I look it up?")."""
    if clause.prefix:
        return True
    toks = clause.toks
    lows = [t[0] for t in toks]
    if "one" in lows and ({"vs", "versus"} & set(lows[: lows.index("one")])):
        return True  # "smime vs cms - which one should I use?": what it compares
    if _plural_before(toks):
        return True  # "list the sockets with the process that owns each one"
    body = body_start(toks)
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
            return inner and (plural if low in THEY else noun)
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


#: References that stand for several things named before them in the same clause.
_EACH_OF = frozenset(("each", "every"))
_THOSE = frozenset(("those", "these"))


def _plural_before(toks: list[Token]) -> bool:
    """Whether "each one" / "every one", or "those" / "these" standing alone (before "with",
    "?", ...), follows a plural noun of its own clause ("list listening sockets together
    with the process that owns each one", "a CA directory full of hash-named links, how do
    I rebuild those?"): they stand for it, not for an earlier question."""
    lows = [t[0] for t in toks]
    for j, low in enumerate(lows):
        alone = low in _THOSE and (j + 1 == len(lows) or lows[j + 1] in ("with", "?", ",", "."))
        each = low == "one" and j > 0 and lows[j - 1] in _EACH_OF
        if (alone or each) and any(
            w.endswith("s") and not w.endswith(("ss", "us", "is")) and w.isalpha()
            and not flags & (B | D | P | V | AUX | PRON | WH)
            for w, _, _, flags in toks[: j - each]
        ):
            return True
    return False


def _then_verb(toks: list[Token], k: int) -> bool:
    """Whether a verb stands at ``k`` (past a "then"): after "and", a second action of the
    same question, whose pronoun stands for its nouns ("take a commit from one branch and
    apply it to another")."""
    if k < len(toks) and toks[k][0] == "then":
        k += 1
    return k < len(toks) and bool(toks[k][3] & V) and not toks[k][3] & (AUX | WH)


def _resolve(clauses: list[Clause], text: str, context: bool) -> list[Clause]:
    """Clauses with references to an earlier question replaced, or kept together with it.
    With ``context`` (a scene set before the questions, carried into each sub-query), a
    pronoun that no earlier question resolves is left to it ("sshd refuses to start ... once
    it's running, what do I enable ...")."""
    out: list[Clause] = []
    for clause in clauses:
        prev = out[-1] if out else None
        scene = tokenize(clause.prefix) if clause.prefix else []
        if (
            prev is not None
            and scene
            and needs_resolution(scene)
            and not _local_antecedent(
                Clause(clause.prefix, scene, 0, 0, STATEMENT, False)
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


def _merge(out: list[Clause], text: str, clause: Clause) -> None:
    """Keep ``clause``, whose reference no rule resolves, together with the question before
    it. When a semicolon or a sentence's end stands between them, that question is an ask of
    its own and stands alone too: "How do I list containers; how do I stop one?" asks "How do
    I list containers?" and, whole, the two together (no word is guessed); "What files make up
    a package, and what does each one contain?" stays one ask."""
    prev = out[-1]
    asks = prev.asks or prev.kind in (REQUEST, COMMAND)  # not a scene ("X broke. How ...?")
    apart = asks and any(mark in text[prev.end : clause.start] for mark in ";?.!")
    body = text[prev.start : clause.end]
    merged = Clause(
        body, tokenize(body), prev.start, clause.end, prev.kind, prev.asks or clause.asks,
        prev.new_topic, merged=True, prefix=prev.prefix, ask=True,
    )
    if prev.merged or not apart:
        out[-1] = merged
    else:
        out.append(merged)


def _things(clause: Clause) -> list[str]:
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
    spans = sentences(text)
    if len(spans) == 1 and complexity(text) == 1:
        return [whole]
    clauses = read(text)
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
        says = mark == "." or (mark == ";" and words_before(clause.toks, len(clause.text)) >= 6)
        if says and any(c.ask for c in clauses[k + 1 :]):
            clause.ask = False
    intents = [k for k, c in enumerate(clauses) if c.ask]
    if not intents:
        return _statements(clauses, text, whole, capitalize, include_comparison, max_sub_queries)
    first = intents[0]
    # a statement after the first question sets the scene of the question right after it
    asked: list[Clause] = []
    pending: list[Clause] = []
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
    before: Clause | None = None  # an ask of its own before the scene of the questions
    names = False  # whether the scene says something (may name what a pronoun stands for)
    if first:
        scene = clauses[:first]
        gap = _SCENE_END.match(text, scene[-1].end)
        lead = text[scene[0].start : scene[-1].end] + (gap.group() if gap else "")
        names = any(c.kind == STATEMENT or has_predicate(c.toks) for c in scene)
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
            before = Clause(body, tokenize(body), told[0].start, told[-1].end, STATEMENT,
                             False, ask=True, keep=True)
            asked.insert(0, before)
            gap = _SCENE_END.match(text, scene[-1].end)
            context = text[scene[turn].start : scene[-1].end] + (gap.group() if gap else "")
            context = context.rstrip() + " "
            if capitalize:  # "also the script needs B; ...": "The script needs B; ..."
                context = context[:1].upper() + context[1:]
            names = any(c.kind == STATEMENT or has_predicate(c.toks) for c in scene[turn:])
        elif asked[0].new_topic or asked[0].sequence:
            # "X should do Y; also, how ...": the statement is an ask of its own; a
            # preamble ("For a release script:") still sets the scene of every question
            told = [c for c in scene if c.kind != PREAMBLE]
            if told:
                body = text[told[0].start : told[-1].end]
                statement = Clause(body, tokenize(body), told[0].start, told[-1].end,
                                    STATEMENT, False, ask=True, keep=True)
                asked.insert(0, statement)
            if told and told[0] is not scene[0]:
                end = scene[scene.index(told[0]) - 1].end
                gap = _SCENE_END.match(text, end)
                context = text[scene[0].start : end] + (gap.group() if gap else "") + " "
                names = any(has_predicate(c.toks) for c in scene[: scene.index(told[0])])
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
                ends = next((e for b, e in sentences(text) if b <= last.start < e), None)
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
    spans = sentences(context.strip()) if context else []
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


def _scene_of_next(clauses: list[Clause], k: int, text: str) -> bool:
    """Whether clause ``k`` sets the scene of a question right after it in the same sentence
    ("I'd like X to reject text - is there a strict mode?")."""
    if k + 1 >= len(clauses):
        return False
    nxt = clauses[k + 1]
    return nxt.kind == QUESTION and not re.search(r"[.?!]", text[clauses[k].end : nxt.start])


def _wishes_asked(clauses: list[Clause]) -> list[Clause]:
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
    clauses: list[Clause],
    text: str,
    whole: str,
    capitalize: bool,
    include_comparison: bool,
    limit: int,
) -> list[str]:
    """A message without a question: one story, unless "Also, ..." starts another; a single
    statement may still list things ("freezing on Safari and Firefox")."""
    chunks: list[list[Clause]] = []
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
