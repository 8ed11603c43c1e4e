"""HeuristicDecomposer on compound questions phrased the way people write them.

Each phrasing pattern of issue 28 ("Decomposition that generalizes") with questions written
for these tests: a preamble, a situation before the asks, "also", "then", semicolons, comma
lists of asks, "in one script: A, B and C", imperatives, "X vs Y", two questions in a row.
The shared frame (the preamble, the situation, "How do I") is carried into each sub-query.
Then the questions that hold one ask and must stay whole, the issue's own examples first.
Every decomposition also keeps the invariants (``decomposition_violations``).
"""

from __future__ import annotations

import pytest
from ragloom_rules import HeuristicDecomposer, decomposition_violations

SPLITS: list[tuple[str, list[str]]] = [
    # -- a preamble ending in a colon: its words go in front of each ask
    (
        "For a deploy script: how do I bump the version, and how do I tag the release?",
        [
            "For a deploy script: how do I bump the version?",
            "For a deploy script: how do I tag the release?",
        ],
    ),
    (
        "Upgrading the cluster from 1.27 to 1.28 — what's the safest order of steps, then how "
        "do I roll back a node?",
        [
            "Upgrading the cluster from 1.27 to 1.28 — what's the safest order of steps?",
            "Upgrading the cluster from 1.27 to 1.28 — how do I roll back a node?",
        ],
    ),
    # a request before a colon is the scene of the questions after it ("Show me" is no frame
    # of "how do I ...")
    (
        "Show me how to rotate our signing key safely: where does the tool keep the current "
        "key, how do I generate a replacement, and how do I publish the new public key?",
        [
            "Show me how to rotate our signing key safely: where does the tool keep the current "
            "key?",
            "Show me how to rotate our signing key safely: how do I generate a replacement?",
            "Show me how to rotate our signing key safely: how do I publish the new public key?",
        ],
    ),
    # "which one" after "X vs Y" in its own clause stands for what it compares, not for the
    # question before it
    (
        "How do I pack the repository into one file? Also, tar vs zip - which one keeps file "
        "permissions?",
        [
            "How do I pack the repository into one file?",
            "Tar keeps file permissions",
            "Zip keeps file permissions",
            "Tar vs zip - which one keeps file permissions?",
        ],
    ),
    # a command after its place ("on the offline side, check ...") is an ask, not a scene
    (
        "Moving the data, step by step please: pack the repository into one file; on the "
        "offline side, check that this file is complete before cloning from it; and protect "
        "the file by encrypting it to their certificate.",
        [
            "Moving the data, step by step please: pack the repository into one file",
            "Moving the data, step by step please: on the offline side, check that this file is "
            "complete before cloning from it",
            "Moving the data, step by step please: protect the file by encrypting it to their "
            "certificate",
        ],
    ),
    # "..., which now fail to load" is a relative clause, not the question after an
    # introduction; "the code also needs" says something: the scene of the next question
    (
        "We are porting to version 3: which function replaces the old hash calls? Some old "
        "code also needs MD4 and RC4, which now fail to load; which provider do those live in?",
        [
            "We are porting to version 3: which function replaces the old hash calls?",
            "We are porting to version 3: Some old code also needs MD4 and RC4, which now fail "
            "to load; which provider do those live in?",
        ],
    ),
    # "X vs Y, what's the difference?" is one comparison, not a comparison and a question
    # of its own (that would search "What's the difference?" alone)
    (
        "How do I back up the database? Also: rsync vs tar for the copy, what's the difference?",
        [
            "How do I back up the database?",
            "Rsync for the copy, what's the difference",
            "Tar for the copy, what's the difference",
            "Rsync vs tar for the copy, what's the difference?",
        ],
    ),
    # "each one" after a plural noun of its own question stands for it, not for the question
    # before
    (
        "How do I persist my firewall rules after a reboot? What's the quickest way to list "
        "listening sockets together with the process that owns each one?",
        [
            "How do I persist my firewall rules after a reboot?",
            "What's the quickest way to list listening sockets together with the process that "
            "owns each one?",
        ],
    ),
    # ", so what's ...?" after a statement: the statement is the situation of its question,
    # which is an ask of its own before the next one
    (
        "How do I load the schema into the new directory server? The clients must trust our "
        "own CA, so what's the proper way to add it to the system store; lastly, an old tool "
        "expects a folder full of hash-named links, how do I rebuild those?",
        [
            "How do I load the schema into the new directory server?",
            "The clients must trust our own CA, so what's the proper way to add it to the system "
            "store?",
            "Lastly, an old tool expects a folder full of hash-named links, how do I rebuild "
            "those?",
        ],
    ),
    # a list of needs after a preamble: each long noun phrase is searched for
    (
        "I need three things for the release: a gzipped tarball of the tagged tree, a checksum "
        "line in the usual layout, and a detached signature made with our key.",
        [
            "I need three things for the release: a gzipped tarball of the tagged tree",
            "I need three things for the release: a checksum line in the usual layout",
            "I need three things for the release: a detached signature made with our key",
        ],
    ),
    # a preamble after the situation heads the questions until another preamble does
    (
        "We run our site on two boxes. On the web box: how do I enable compression, and how do "
        "I cache images? On the database box: how do I rotate the logs? And for the test box, "
        "how do I turn off the firewall?",
        [
            "We run our site on two boxes. On the web box: how do I enable compression?",
            "We run our site on two boxes. On the web box: how do I cache images?",
            "We run our site on two boxes. On the database box: how do I rotate the logs?",
            "We run our site on two boxes. For the test box, how do I turn off the firewall?",
        ],
    ),
    # ... and so does what follows the first preamble ("sqlite: the largest value ...")
    (
        "sqlite: the largest value a column can hold by default, and can I raise that at "
        "runtime? openssl: which command lists the suites of a cipher string?",
        [
            "sqlite: the largest value a column can hold by default, can I raise that at "
            "runtime?",
            "openssl: which command lists the suites of a cipher string?",
        ],
    ),
    # -- an introduction before a comma scopes over the questions of its sentence (the
    # issue's example)
    (
        "For money calculations, how do I avoid float rounding errors and round to cents, and "
        "how do I keep a value like 1/3 exact?",
        [
            "For money calculations, how do I avoid float rounding errors and round to cents?",
            "For money calculations, how do I keep a value like 1/3 exact?",
        ],
    ),
    (
        "When I delete rows, why doesn't the file shrink, and how do I reclaim the space?",
        [
            "When I delete rows, why doesn't the file shrink?",
            "When I delete rows, how do I reclaim the space?",
        ],
    ),
    # -- a situation before the asks sets the scene of each
    (
        "My laptop battery drains fast. How do I check which apps use power, and how do I "
        "limit background refresh?",
        [
            "My laptop battery drains fast. How do I check which apps use power?",
            "My laptop battery drains fast. How do I limit background refresh?",
        ],
    ),
    (
        "My build server runs out of disk. How do I find which images take space, then prune "
        "the build cache?",
        [
            "My build server runs out of disk. How do I find which images take space?",
            "My build server runs out of disk. How do I prune the build cache?",
        ],
    ),
    # a sentence without a recognised verb between the scene and the questions is scene too;
    # a story of three sentences or more goes whole with the first ask only (no word is
    # lost), and each later ask keeps its last sentence
    (
        "The old box is still running. Customers now see certificate warnings. How do I check "
        "which certificate the site sends, and how do I reload the server without downtime?",
        [
            "The old box is still running. Customers now see certificate warnings. How do I "
            "check which certificate the site sends?",
            "The old box is still running. Customers now see certificate warnings. How do I "
            "reload the server without downtime?",
        ],
    ),
    (
        "Last week we moved the shop to a new server. The old box is still running. Customers "
        "now see certificate warnings. How do I check which certificate the site sends, and "
        "how do I reload the server without downtime?",
        [
            "Last week we moved the shop to a new server. The old box is still running. "
            "Customers now see certificate warnings. How do I check which certificate the site "
            "sends?",
            "Customers now see certificate warnings. How do I reload the server without "
            "downtime?",
        ],
    ),
    # a situation before a dash is the scene of the questions of its own sentence only
    (
        "I'm tired of typing the passphrase on every pull — how do I cache it, and how do I "
        "clear the cache later? Then, on the build box, how do I run the tests every night?",
        [
            "I'm tired of typing the passphrase on every pull — how do I cache it?",
            "I'm tired of typing the passphrase on every pull — how do I clear the cache later?",
            "On the build box, how do I run the tests every night?",
        ],
    ),
    # -- "also" after a situation: the situation is an ask of its own (the example)
    (
        "My repo is huge and clones are slow; also how do I find large files?",
        ["My repo is huge and clones are slow", "How do I find large files?"],
    ),
    (
        "Our nightly backup takes hours; also how do I restore just one table from it?",
        [
            "Our nightly backup takes hours",
            "How do I restore just one table from our nightly backup?",
        ],
    ),
    (
        "Our cron jobs should send mail on failure; separately, how do I silence the ones "
        "that succeed?",
        ["Our cron jobs should send mail on failure", "How do I silence the ones that succeed?"],
    ),
    # "also" inside the situation: what comes before it is an ask of its own, what it starts
    # the scene of the questions
    (
        "I need the staging and production configs kept in one repository without duplicating "
        "the shared files; also the deploy job needs a fresh API key every night; and in the "
        "job itself, which command should create that key, and how long should it be?",
        [
            "I need the staging and production configs kept in one repository without "
            "duplicating the shared files",
            "The deploy job needs a fresh API key every night; in the job itself, which command "
            "should create that key?",
            "The deploy job needs a fresh API key every night; how long should it be?",
        ],
    ),
    # "We also need" after a wish: the wish is an ask of its own; the sentence that says
    # "also" is the scene of the questions after it, and names what their pronoun stands for
    (
        "We'd like to ship a nightly archive of the main branch with every file under a dated "
        "folder. We also need proof of when each archive existed: how do I request a trusted "
        "timestamp for it, and how do I check the reply later?",
        [
            "We'd like to ship a nightly archive of the main branch with every file under a "
            "dated folder",
            "We also need proof of when each archive existed: how do I request a trusted "
            "timestamp for it?",
            "We also need proof of when each archive existed: how do I check the reply later?",
        ],
    ),
    # a preamble before a story: the story is the scene ("last spring ..." is no search
    # phrase); "So:" only leads to the question
    (
        "Long story: last spring an intern committed the staging key into our repository. It "
        "now sits in many commits. So: with openssl, how do I check whether that key matches "
        "the certificate? Then, how do I strip the file from every commit?",
        [
            "Long story: last spring an intern committed the staging key into our repository. "
            "It now sits in many commits. With openssl, how do I check whether that key matches "
            "the certificate?",
            "Long story: last spring an intern committed the staging key into our repository. "
            "It now sits in many commits. How do I strip the file from every commit?",
        ],
    ),
    # -- "then": two steps; a pronoun of the second is resolved by the first
    ("Build the project, then run the tests.", ["Build the project", "Run the tests"]),
    (
        "I want to rotate the logs daily; then how do I ship them to a central host?",
        ["I want to rotate the logs daily", "How do I ship the logs to a central host?"],
    ),
    (
        "How can I have make rebuild only changed files, and then see which targets were "
        "rebuilt?",
        [
            "How can I have make rebuild only changed files?",
            "How can I see which targets were rebuilt?",
        ],
    ),
    # -- a semicolon
    (
        "How do I list open ports; what does netstat -p show?",
        ["How do I list open ports?", "What does netstat -p show?"],
    ),
    # -- a comma list of three asks: "How do I" goes in front of each
    (
        "How do I rebase a branch, squash commits, and push the result?",
        ["How do I rebase a branch?", "How do I squash commits?", "How do I push the result?"],
    ),
    (
        "How do I clone just the last month of history, and later fetch the rest when I need "
        "it?",
        [
            "How do I clone just the last month of history?",
            "How do I later fetch the rest when I need it?",
        ],
    ),
    (
        "For a health check: which version is running, is the cache enabled, and which "
        "plugins are loaded?",
        [
            "For a health check: which version is running?",
            "For a health check: is the cache enabled?",
            "For a health check: which plugins are loaded?",
        ],
    ),
    # a pronoun of a later action stands for what the first one acts on
    (
        "How do I create a role with a password, grant it read access to one schema, and make "
        "it the owner of a table?",
        [
            "How do I create a role with a password?",
            "How do I grant a role read access to one schema?",
            "How do I make a role the owner of a table?",
        ],
    ),
    # "in one command" inside an action that another follows says how that action is done;
    # a wish's frame goes in front of each of its actions
    (
        "For the staging box I'd like to build a private key and a certificate in one "
        "command, package both into a bundle the admins can import, and keep a list of expiry "
        "dates in a table. How do I do each of these?",
        [
            "For the staging box I'd like to build a private key and a certificate in one "
            "command",
            "For the staging box I'd like to package both into a bundle the admins can import",
            "For the staging box I'd like to keep a list of expiry dates in a table",
        ],
    ),
    # "their" in every action means the same people (the client's), not the first action's
    # object: the actions stand alone
    (
        "Audit of a client's servers, three items: show how their proxy should be told to "
        "refuse old protocols, list their open ports with the service behind each, and explain "
        "what happens in their client when the callback they set returns 1.",
        [
            "Audit of a client's servers, three items: show how their proxy should be told to "
            "refuse old protocols",
            "Audit of a client's servers, three items: list their open ports with the service "
            "behind each",
            "Audit of a client's servers, three items: explain what happens in their client "
            "when the callback they set returns 1",
        ],
    ),
    # -- "in one script: A, B and C"
    (
        "In one script: list the tables, count the rows and dump the schema.",
        [
            "In one script: list the tables",
            "In one script: count the rows",
            "In one script: dump the schema",
        ],
    ),
    # -- imperatives and requests
    (
        "Show me how to create a user and explain how roles work.",
        ["Show me how to create a user", "Explain how roles work"],
    ),
    (
        "Set nano as the default editor, and use less as the pager.",
        ["Set nano as the default editor", "Use less as the pager"],
    ),
    (
        "Show me how to back up the database, and how to restore it on another machine.",
        [
            "Show me how to back up the database",
            "Show me how to restore the database on another machine",
        ],
    ),
    (
        "Serving files from a NAS: set up an NFS export, and also an SMB share.",
        [
            "Serving files from a NAS: set up an NFS export",
            "Serving files from a NAS: set up an SMB share",
        ],
    ),
    # -- "X vs Y": one phrase per item then the comparison, or the question asked of each
    (
        "Postgres vs MySQL for analytics?",
        ["Postgres for analytics", "MySQL for analytics", "Postgres vs MySQL for analytics?"],
    ),
    (
        "Window functions vs GROUP BY: when should I use each for running totals?",
        [
            "When should I use Window functions for running totals?",
            "When should I use GROUP BY for running totals?",
        ],
    ),
    (
        # "which one should I store them in" gives no phrase of an item: the items alone
        "JSONB vs JSON: which one should I store API payloads in?",
        ["JSONB", "JSON", "JSONB vs JSON: which one should I store API payloads in?"],
    ),
    (
        # a version list shares its name
        "Python 3.11 vs 3.12: what changed in the typing module?",
        [
            "Python 3.11 changed in the typing module",
            "Python 3.12 changed in the typing module",
            "Python 3.11 vs 3.12: what changed in the typing module?",
        ],
    ),
    (
        # "its" is not one side of the choice before it: the scene names it
        "I need to schedule a weekly job: should I use cron or a systemd timer, and how do I "
        "log its output?",
        [
            "I need to schedule a weekly job: should I use cron or a systemd timer?",
            "I need to schedule a weekly job: how do I log its output?",
        ],
    ),
    (
        "rsync vs scp: when would I use each to copy a directory?",
        [
            "when would I use rsync to copy a directory?",
            "when would I use scp to copy a directory?",
        ],
    ),
    # -- two questions in a row, one with an introduction
    (
        "How do I create an index? And what does VACUUM do?",
        ["How do I create an index?", "What does VACUUM do?"],
    ),
    (
        "How do I export a table to CSV? And on the other server, how do I load the file?",
        ["How do I export a table to CSV?", "On the other server, how do I load the file?"],
    ),
    # -- the examples of asks that must each be kept whole, apart
    (
        "Who wrote Pride and Prejudice and when was it published?",
        ["Who wrote Pride and Prejudice?", "When was Pride and Prejudice published?"],
    ),
    (
        "Compare the pricing of the Pro and Team plans, and tell me whether either supports "
        "SSO",
        [
            "Compare the pricing of the Pro and Team plans",
            "Tell me whether Pro or Team supports SSO",
        ],
    ),
    # -- a reference whose thing is named in its own question does not tie it to the one before
    (
        "How is full-text search set up? Separately, how can I grep an old release without "
        "checking that release out?",
        [
            "How is full-text search set up?",
            "How can I grep an old release without checking that release out?",
        ],
    ),
    (
        "How do I normalize line endings? Also, I'd like SQLite to reject text instead of "
        "silently storing it — is there a strict mode?",
        [
            "How do I normalize line endings?",
            "I'd like SQLite to reject text instead of silently storing it — is there a "
            "strict mode?",
        ],
    ),
    # -- "together with" joins a thing to an action's object; it does not make the actions one
    (
        "Cleanup day: remove a package together with its configuration files, wipe the untracked "
        "files of my checkout, and dump a database to a text file.",
        [
            "Cleanup day: remove a package together with its configuration files",
            "Cleanup day: wipe the untracked files of my checkout",
            "Cleanup day: dump a database to a text file",
        ],
    ),
    # a question in parentheses stays inside its ask; the "and" after it still splits
    (
        "Cleaning up the build box: why does the cache keep growing (and how do I cap it), and "
        "how do I prune old images?",
        [
            "Cleaning up the build box: why does the cache keep growing (and how do I cap it)?",
            "Cleaning up the build box: how do I prune old images?",
        ],
    ),
    # "one of our reports got slow" states something: it sets the scene of its question
    (
        "How do I archive old tickets? Also, one of our reports got slow; how do I see whether "
        "it scans the whole table?",
        [
            "How do I archive old tickets?",
            "One of our reports got slow; how do I see whether it scans the whole table?",
        ],
    ),
    # a relative "that" after a plural noun and "as it was" refer to nothing before them
    (
        "How do I sandbox the worker, and which settings protect us from uploads that might be "
        "crafted?",
        [
            "How do I sandbox the worker?",
            "Which settings protect us from uploads that might be crafted?",
        ],
    ),
    (
        "What does the nightly job rebuild? Separately, how do I read a file as it was in an "
        "old release?",
        [
            "What does the nightly job rebuild?",
            "How do I read a file as it was in an old release?",
        ],
    ),
    # an item with its own determiner keeps its noun: no "SSL host"
    (
        "How do I enable SSL and a virtual host in Apache?",
        ["How do I enable SSL in Apache?", "How do I enable a virtual host in Apache?"],
    ),
    # actions whose verbs are common in technical questions ("filter", "insert", ...)
    (
        "In one script: read a CSV file, filter rows by a column, and write the result as JSON.",
        [
            "In one script: read a CSV file",
            "In one script: filter rows by a column",
            "In one script: write the result as JSON",
        ],
    ),
    # a command after an adverb; the adverb stays with its own action
    (
        "First back up the configuration, then reinstall the package.",
        ["First back up the configuration", "Reinstall the package"],
    ),
    # a one-letter word before a period ends the sentence when a question follows ("in C.")
    (
        "I'm writing a module in C. How do I register a hook, and how do I build the module?",
        [
            "I'm writing a module in C. How do I register a hook?",
            "I'm writing a module in C. How do I build the module?",
        ],
    ),
    # ... and so it does before "Then" (a word of the lexicon, no surname after an initial):
    # the step before "Then" is an ask of its own
    (
        "I keep sensor readings in SQLite and want to hash each one with SHA-256 in C. Then "
        "I'd like to keep the digests in a separate file - how do I attach a second database?",
        [
            "I keep sensor readings in SQLite and want to hash each one with SHA-256 in C",
            "I'd like to keep the digests in a separate file - how do I attach a second "
            "database?",
        ],
    ),
    # adverbs between "and" and the next question ("and more generally how ...")
    (
        "How do I fix the links while proxying, and more generally how do I rewrite a response "
        "body?",
        [
            "How do I fix the links while proxying?",
            "More generally how do I rewrite a response body?",
        ],
    ),
    # "test that X answers": "that" opens what is tested, it refers to nothing
    (
        "The DHCP server should register hostnames in DNS; also, how can I test that bind "
        "answers reverse lookups?",
        [
            "The DHCP server should register hostnames in DNS",
            "How can I test that bind answers reverse lookups?",
        ],
    ),
    # questions apart (a semicolon, a sentence) whose reference no rule resolves: the first
    # also stands alone, the rest stays with it
    (
        "How do I list running containers; how do I stop one?",
        [
            "How do I list running containers?",
            "How do I list running containers; how do I stop one?",
        ],
    ),
]

# One ask each, whatever "and", "or" or comma it holds.
WHOLE = [
    # the examples
    "How do I grant SELECT and INSERT on a table to a role?",
    "How do I revoke CONNECT and TEMP privileges from PUBLIC?",
    "What's the easiest way to delete a directory and everything in it?",
    "How do I dump and restore a database?",
    # a comparison named by a word asks for one relation
    "What's the difference between a hard link and a symlink?",
    "Compare the pricing of the Pro and Team plans",
    "How do rank and dense_rank differ?",
    # actions that undo each other, on one thing
    "How do I enable and disable a systemd unit?",
    "How do I add, temporarily disable, and re-enable a user account?",
    # the actions are one
    "How do I install one package and remove another in a single command?",
    "How do I change a file's owner and group in one command?",
    # an auxiliary before a verb in its base form ("and must pass") continues a predicate: no
    # question starts there
    "How do I add a hook that runs the linter and must pass before every commit?",
    # short noun phrases after a preamble are one list; so are two without "and"
    "Ingredients for the cake: a cup of flour, a pinch of salt, and a glass of milk.",
    "For the trip: a map of the old town, a list of cheap places to eat near the station.",
    # a second subordinate clause of the same word ("when ... and when ...") is no question
    "How do I make the backup run when the laptop is idle and when the charger is plugged in?",
    # "and never ..." / "and always ..." joins a second predicate, not a second item
    "Can the daemon read its config at startup and never open the file again?",
    "Can the cache be handed one buffer at startup and never touch the system allocator?",
    # an initial before a name ends no sentence
    "Letters signed by J. Smith arrive late at the office. How do I track them?",
    "How do I create a user, add a group, and grant both access to the schema in one "
    "transaction?",
    "How do I install the two packages together?",
    "How do I make the client wait and retry when the server is busy?",
    # a list inside a clause inside the question
    "How do I set up a mirror so clients can fetch and push over SSH?",
    "If I resize the volume and reboot, does the data survive?",
    "What does it mean when the shell says no job control and the prompt changes?",
    # a pronoun after the list refers to the list
    "How do I store dates and booleans, given the database has no types for them?",
    # values of one action or one thing
    "How do the SHARED and EXCLUSIVE locks work?",
    "Can the tool open JAR, DOCX or ODP files?",
    "How do I count the rows inserted, updated and deleted by a statement?",
    # the things that do both, one thing that is both
    "How do I open a file for both reading and writing?",
    "Which clients can talk both SIP and XMPP?",
    "Which companies and products use Redis?",
    # a later question refers to what the first one asks for
    "What files make up a wheel, and what does each one contain?",
    "How do I list all indexes on a table and drop the unused ones?",
    "Who maintains the project, and how much say does that person have?",
    # a second predicate of one subject, not a question
    "Find which of my branches are merged and can safely be deleted",
]


@pytest.mark.parametrize(("question", "expected"), SPLITS, ids=[q[:50] for q, _ in SPLITS])
def test_compound_questions_split_into_their_asks(question: str, expected: list[str]) -> None:
    subs = HeuristicDecomposer().decompose(question)
    assert subs == expected
    assert decomposition_violations(question, subs) == []


@pytest.mark.parametrize("question", WHOLE, ids=[q[:50] for q in WHOLE])
def test_one_ask_stays_whole(question: str) -> None:
    assert HeuristicDecomposer().decompose(question) == [question]


def test_a_pronoun_the_scene_names_is_left_to_the_scene() -> None:
    # "it" is sshd, named by the situation carried in front of the second question
    question = (
        "sshd refuses to start after I edited its config. How do I find out why with "
        "systemd? And once it's running, how do I allow X11 forwarding?"
    )
    assert HeuristicDecomposer().decompose(question) == [
        "sshd refuses to start after I edited its config. How do I find out why with systemd?",
        "sshd refuses to start after I edited its config. Once it's running, how do I allow "
        "X11 forwarding?",
    ]


def test_a_pronoun_nothing_names_keeps_the_questions_together() -> None:
    question = "How can I tell which index a query uses, and how do I force it to use another?"
    assert HeuristicDecomposer().decompose(question) == [question]


def test_a_long_statement_before_a_semicolon_sets_the_scene() -> None:
    # six words or more before ";" state the situation (a verb the lexicon lacks is a verb)
    question = "Our nightly scripts come back as plain text; how do I get them executed?"
    assert HeuristicDecomposer().decompose(question) == [question]


def test_a_statement_between_questions_sets_the_scene_of_the_next() -> None:
    question = (
        "How do I load an extension from C? Also loading seems switched off by default - how "
        "do I turn it on safely?"
    )
    assert HeuristicDecomposer().decompose(question) == [
        "How do I load an extension from C?",
        "Loading seems switched off by default - how do I turn it on safely?",
    ]


def test_each_action_of_a_list_is_one_ask() -> None:
    # the "and" inside the first action is not split further
    question = (
        "How do I print an object's type and size, compute a file's hash, and create a tag "
        "by hand?"
    )
    assert HeuristicDecomposer().decompose(question) == [
        "How do I print an object's type and size?",
        "How do I compute a file's hash?",
        "How do I create a tag by hand?",
    ]
