"""The word classes the decomposer reads questions with (no tagger: small closed lists).

Closed classes (determiners, pronouns, prepositions, auxiliaries, question words,
conjunctions) are listed in full. Two open classes get short lists because a question's
structure hangs on them: verbs that often appear in questions (so that "How do I reset my
password and update my email?" is read as two actions, and "solar panels and wind turbines
generate electricity" ends its list before "generate"), and words of relations that hold
between things ("disagree", "together", "relationship": their list is one question).
"""

from __future__ import annotations

import re


def words(text: str) -> frozenset[str]:
    return frozenset(text.split())


PREPOSITIONS = words(
    "of in on at for to from with without by about between among amongst during since until "
    "till before after into onto over under through across against within via per like than "
    "as regarding toward towards around near beyond behind upon despite except versus vs "
    "off up down out inside outside throughout"
)
WH = words(
    "what which who whom whose where when why how what's how's who's where's when's"
)
COPULAS = words("is are was were am be 's isn't aren't wasn't weren't")
AUXILIARIES = COPULAS | words(
    "been being do does did can could should would will shall may might must has have had "
    "don't doesn't didn't can't cannot couldn't shouldn't wouldn't won't hasn't haven't hadn't"
)
#: Pronouns that can be the subject after an auxiliary ("can I", "is it", "do they").
SUBJECTS = words("i we you they he she it there this that these those")
PERSONAL = words(
    "i me we us you they them he him she her it i'm i'd i'll i've we're we'd we'll we've "
    "you're you'd you'll you've they're they'd they'll they've he's he'd she's she'd it's "
    "that's there's myself yourself itself themselves ourselves"
)
#: Words that stand for something named before them (resolved across questions).
REFERENCES = words("it its they them their he him his she her")
CONJUNCTIONS = words("and & or but nor so yet also then plus")
COMPARISON = words(
    "compare compared compares comparing comparison comparisons contrast difference "
    "differences differ differs different"
)
OTHER_BOUNDARIES = words(
    "that whether if please not because although though unless while once whenever"
)
DETERMINERS = words(
    "the a an my your our their his her its this these those some any each every another "
    "all no many much few several"
)
#: Ordinals: "july second and third" lists days like "march 2 and 3".
ORDINALS = words(
    "first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth "
    "thirteenth fourteenth fifteenth sixteenth seventeenth eighteenth nineteenth twentieth "
    "thirtieth"
)
#: Words of time that name no thing: never an item ("the month and day tomorrow").
TIME_WORDS = words("today tomorrow tonight yesterday now")
#: "both A and B", "either A or B": markers before an item, not part of it.
PAIR_MARKERS = words("both either neither")
RELATIVES = words("that which who")
GREETINGS = words("hi hello hey")
#: Relations between things: coordinated things around one of these are one question.
SYMMETRIC = words(
    "agree agreed agrees agreement disagree disagreed disagrees disagreement argue argued "
    "debate debated fight fought fighting interact interacted interaction interactions "
    "interoperate interoperability communicate relationship relationships relation relations "
    "correlation correlated correlate link linked together independently similar similarity "
    "similarities alike equivalent interchangeable compatible compatibility related mix "
    "mixed mixing combine combined merge merged share collaborate collaborated compete "
    "competed rivalry conflict married marry met meet multiply multiplied divide divided "
    "subtract vs versus"
)
#: "the sum of A and B": one value of all the items.
AGGREGATES = words("sum total average mean ratio product combination")
#: Words after which a symmetric word is used of each thing on its own ("compatible with
#: Android", "similar to", "different from").
DISTRIBUTIVE_AFTER = words("with to from")

#: Nouns naming a facet of a thing ("price", "release date"): "<Product> price and release
#: date" asks for the product's price and the product's release date.
FACETS = words(
    "price prices pricing cost costs fee fees date dates size sizes weight dimensions color "
    "colors colour colours spec specs specifications features feature review reviews rating "
    "ratings availability warranty performance speed capacity storage battery life screen "
    "display resolution range quality camera manual documentation docs requirements limits "
    "version versions history release setup installation support compatibility benefits "
    "risks effects symptoms causes treatment treatments population capital"
)

# -- verbs ------------------------------------------------------------------------------------

_VERB_BASES = """
accept access activate add adjust affect allow apply approve arrive ask assign attach
avoid back ban become begin believe block book break bring build buy calculate call cancel
carry catch cause change charge check choose claim clean clear close collect come compile
complete configure confirm connect consider contact contain continue control convert cook
copy correct cost count cover crash create cut deal decide declare decrease define delete
deliver deploy describe design destroy detect determine develop die disable discover
display do download drink drive drop earn eat edit email enable encrypt end enjoy enter
exchange exist expand expect explain export extend fail fall feel fetch file fill find
finish fit fix flush follow forget form format freeze generate get give go grow handle
happen hate have hear help hide hire hold host identify ignore import improve include
increase influence inform install invest invite join keep kill know land last launch learn
leave let lift like limit link list listen live load locate lock log look lose love lower
maintain make manage mean measure meet merge migrate miss modify monitor move need notice
obtain offer open order own pack paint pass pause pay perform pick place plan play
pollinate post prefer prepare present prevent print process produce profile protect prove
provide publish pull purchase push put raise reach read receive recommend record recover
reduce refresh refund register reinstall reject release remain remember remove rename renew
repair repeat replace reply report request require reschedule reset resize resolve respond
restart restore return reuse review rotate run save say scan schedule search see sell send
serve set ship show shut sign sit sleep sort speak speed spend split start stay steal stop
store stream submit subscribe suggest supply support switch sync take talk teach tell test
think throw track trade train transfer translate travel treat trigger try turn type
uninstall unlock unsubscribe update upgrade upload use validate verify view visit wait walk
want warm wash watch wear win wipe withdraw work worry write
"""
_IRREGULAR = """
became began bought brought built caught chose chosen came did done drank drunk drove
driven ate eaten fell felt found forgot forgotten froze frozen got gotten gave given went
gone grew grown had held heard hid hidden kept knew known left lost made meant met paid put
read ran run said saw seen sold sent set shown shut sat slept spoke spoken spent split stole
stolen took taken taught told thought threw thrown understood woke wore won wrote written
"""


def _forms(base: str) -> set[str]:
    forms = {base}
    if base.endswith(("s", "x", "z", "ch", "sh")):
        forms.add(base + "es")
    elif base.endswith("y") and base[-2:-1] not in "aeiou":
        forms.add(base[:-1] + "ies")
        forms.add(base[:-1] + "ied")
    else:
        forms.add(base + "s")
    if base.endswith("e"):
        forms.add(base + "d")
        forms.add(base[:-1] + "ing")
    else:
        forms.add(base + "ed")
        forms.add(base + "ing")
        if re.fullmatch(r"[^aeiou]*[aeiou][bdgmnprt]", base):  # stop -> stopped, stopping
            forms.add(base + base[-1] + "ed")
            forms.add(base + base[-1] + "ing")
    return forms


#: Verbs of software documentation questions ("how do I squash commits", "wipe the build
#: output"), words seldom used as nouns: a list of actions is read by them.
_TECHNICAL_VERB_BASES = """
abort backport bisect bump clone compress compute confine debug decode decompress decrypt
deserialize detach encode enforce extract grant inspect mount optimize parse preview prune
purge quote rebase rebuild recompile reclaim reconfigure reindex rename render retry revert
revoke serialize shrink squash stash swap tidy trim truncate unmount unpack untangle unzip wipe
aggregate amend analyse analyze append archive authenticate authorize automate bind combine
concatenate customize deny downgrade dump embed escape estimate exclude execute expose filter
grep harden hibernate insert intercept interrupt invoke mark notify override permit preload
promote reboot redirect redo reload replicate restrict resume rewrite sanitize secure share skip
spawn specify suspend terminate throttle trust tune undo unload wrap
"""
VERB_BASES: frozenset[str] = frozenset(_VERB_BASES.split() + _TECHNICAL_VERB_BASES.split())
IRREGULAR_PAST: frozenset[str] = frozenset(_IRREGULAR.split())
VERBS: frozenset[str] = frozenset(
    {form for base in VERB_BASES for form in _forms(base)} | set(_IRREGULAR.split())
)
#: Verbs that, after "and", qualify the first action instead of adding one ("undo the last
#: commit and keep my changes", "resize an image and preserve the aspect ratio").
CONSTRAINT_VERBS = words("keep preserve retain maintain avoid stay remain")
#: Verbs that open a request for information ("Tell me about ...", "Compare X and Y").
REQUEST_VERBS = words(
    "tell show explain compare contrast list describe give find recommend suggest define "
    "summarize summarise outline help search"
)

#: Adverbs that stand before a finite verb ("MD4 and RC4, which now fail", "the code also
#: needs"): after "which" they open a relative clause, after a noun they leave a statement.
VERB_ADVERBS = words("now still also often usually always never already sometimes")
#: Adverbs that may stand between a list's separator and the next action's verb ("and then
#: see", "and later pull", ", and quietly check").
LINKING_ADVERBS = words(
    "then also later afterwards afterward finally next just quickly quietly safely "
    "automatically simply additionally separately first even still really actually"
)
#: Words that open a clause inside a clause ("so people can clone and push", "when git says
#: ... and HEAD points", "see how much disk space each table and index uses"): a list after
#: one belongs to that inner clause.
SUBORDINATORS = words(
    "so because if when whenever while once unless although though whether until where how "
    "what which who why"
)
#: Words that open a clause inside a question whose pronouns may stand for a noun of that
#: question ("... a live database while others keep writing to it", "without importing them").
SUBORDINATE_OPENERS = words(
    "while when whenever so because before after once if until unless without"
)
#: Pairs of inverse actions: "enable and disable Apache modules", "dump and restore a
#: database" are one task on one thing (a prefix also makes one: "mount" / "unmount",
#: "enable" / "re-enable", "compress" / "decompress").
INVERSE_PAIRS = frozenset(
    frozenset(pair.split("/"))
    for pair in words(
        "start/stop add/remove create/delete create/drop create/destroy dump/restore "
        "dump/load backup/restore import/export push/pull upload/download open/close "
        "read/write get/set save/load save/restore show/hide attach/detach grant/revoke "
        "install/remove insert/delete send/receive sign/verify split/merge split/join "
        "encrypt/decrypt encode/decode lock/unlock install/uninstall enable/disable "
        "add/delete suspend/resume pause/resume freeze/thaw block/unblock"
    )
)
INVERSE_PREFIXES = ("un", "dis", "de", "re-", "re")

# -- phrases ----------------------------------------------------------------------------------

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
_SEASON = (
    r"(?:year|month|week|weekend|quarter|decade|summer|winter|spring|autumn|fall|season)"
)
#: A time phrase: never an item, and its "and" ("between 2010 and 2015") joins nothing.
TIME = (
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
#: Words a time phrase can start with; the phrase regex is only tried at these tokens.
TIME_STARTS = words(
    "between from since in during before after until till by through throughout as around "
    "over within for q1 q2 q3 q4 last this next past recent"
)
#: Set phrases whose "and" never separates two items.
FIXED_PAIRS = (
    "research and development|terms and conditions|pros and cons|salt and pepper|rock and roll|"
    "black and white|bread and butter|trial and error|supply and demand|profit and loss|"
    "mergers and acquisitions|health and safety|law and order|arts and crafts|ups and downs|"
    "back and forth|odds and ends|wear and tear|peace and quiet|first and foremost|"
    "each and every|by and large|more and more|again and again|over and over|q and a|"
    "r and d|b and b|bed and breakfast|fish and chips|procter and gamble|johnson and johnson|"
    "marks and spencer|barnes and noble|ben and jerry's|dungeons and dragons|"
    "search and rescue|hide and seek|give and take|cut and paste|copy and paste|"
    "drag and drop|plug and play|point and click|lock and key|nuts and bolts|"
    "go ahead and|try and|go and|come and|check and see|wait and see|stop and|"
    "peanut butter and jelly|macaroni and cheese|mac and cheese|ham and cheese|"
    "bath and body works|ben and jerry|tom and jerry|simon and garfunkel|"
    "fast and furious|pride and prejudice|crime and punishment|war and peace|"
    "buy now and pay later|shipping and handling|hit and miss|track and trace|half and half|"
    "hundred and|thousand and"
)
FIXED_STARTS = frozenset(pair.split()[0] for pair in FIXED_PAIRS.split("|"))
