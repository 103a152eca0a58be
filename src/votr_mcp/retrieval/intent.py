"""Query-side rules: the request's action, read from its words (its words as read, past a service it
names first and with verbs of several words folded, are retrieval/request_words.py; the verbs and the
action each asks for are retrieval/verbs.py; what it quotes and the tools it names exactly,
retrieval/quoted.py; what its action acts on, retrieval/request_object.py; the values it hands over,
retrieval/values.py). Splitting a whole task into its needs reads these rules (retrieval/needs.py), and
so does reading its count (retrieval/bulk.py)."""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence

from votr_mcp.index.tokenize import stem, words_of
from votr_mcp.retrieval.language import is_english
from votr_mcp.retrieval.request_words import past_name, request_words
from votr_mcp.retrieval.verbs import ACTION_OF, ACTIONS, SYNONYMS, action_word

__all__ = ["action_at", "class_at", "clause_verb_words", "is_question", "lead_at", "opens_new", "reads_first",
           "request_action", "text_actions", "unwritten_verb", "verb_words"]

_FILLER = frozenset({"please", "can", "could", "would", "will", "you", "i", "want", "need", "to", "like", "me", "us",
                     "just", "quickly", "now", "also", "hey", "hi", "ok", "okay", "so", "then", "and", "let", "lets",
                     "help", "try", "trying", "m", "d", "be", "able", "go", "ahead", "first",
                     # how, not what: "permanently delete the card" deletes it
                     "permanently", "immediately", "automatically", "completely", "manually", "really", "actually",
                     "simply", "kindly", "finally"})
# (Not "the" nor "a": what follows them is a thing, not a verb. "I need a book on Java" asks for no
# booking, "the checkout service started throwing 500s" checks nothing out, "I need a new laptop"
# makes none.)


# A request that asks a question wants to be told, whatever verb it uses ("who changed the payment
# module?", "what did I change since the last add?"): it reads.
_QUESTION = frozenset({"what", "which", "who", "whom", "whose", "when", "where", "why", "how", "is", "are", "was",
                       "were", "do", "does", "did", "has", "have", "any", "anything", "anyone", "whats"})


_DETERMINERS = frozenset({"the", "a", "an", "my", "your", "our", "their", "its", "his", "her", "this", "these", "those"})
_JOINS = frozenset({"and", "then", "or", "but", "also", "to"})
# The words before an "'s" that is "is" or "us", not a possessive: "let's", "it's", "what's".
_NOT_OWNING = frozenset({"let", "it", "that", "what", "there", "here", "he", "she", "who", "where", "how", "when"})
_NOUN_SPAN = 2  # the words after a determiner that are its noun phrase ("the export settings", "the Launch list")


def verb_words(words: Sequence[str]) -> list[str]:
    """A request's words (:func:`request_words`) that may be verbs: not the few words after a
    determiner, which name a thing ("put it in the Launch list", "show the export settings"), up
    to a joining word ("read the file then delete it" keeps delete)."""
    out: list[str] = []
    inside = 0
    for i, word in enumerate(words):
        if word in _DETERMINERS or (word == "s" and i > 0 and words[i - 1] not in _NOT_OWNING):
            inside = _NOUN_SPAN  # "Tom's email" names a thing, as "his email" does
        elif word in _JOINS:
            inside = 0
        elif inside:
            inside -= 1
            continue
        out.append(word)
    return out


# Where a clause ends: a comma, a semicolon or a full stop before a space ("my taxes, tick that off"
# has no noun phrase "taxes tick"), not the dot of a file name or a host.
_CLAUSE_END = re.compile(r"[,;.!?]+\s+")
# Words that say the verb after them is not to be done: "write the reply but don't send it yet".
_NOT = frozenset({"not", "never", "without", "dont"})
_NOT_AFTER = frozenset({"don", "doesn", "didn", "won", "shouldn", "mustn"})  # don't -> don, t


def clause_verb_words(text: str) -> list[str]:
    """The words of a request that may be the verbs it asks for (:func:`verb_words`), clause by
    clause, without a verb it says not to do ("draft a reply to Tom but don't send it": no send)."""
    out: list[str] = []
    for clause in _CLAUSE_END.split(text):
        words = verb_words(request_words(clause))
        out += [w for i, w in enumerate(words) if not _negated(words, i)]
    return out


def _negated(words: Sequence[str], i: int) -> bool:
    """Whether the word at ``i`` follows a negation ("never", "don't", "do not")."""
    return i > 0 and (words[i - 1] in _NOT or (words[i - 1] == "t" and i > 1 and words[i - 2] in _NOT_AFTER))


def unwritten_verb(text: str) -> str | None:
    """The plain verb a request means but does not write, for word matching to find it in the tools'
    texts: "forget Bob" and "get rid of the folder" mean delete, "jot down" means create. None when
    the request writes its verb plainly, or means one of reading's many words (tell, grab, pull up),
    which names no tool better than the words around it."""
    written = words_of(past_name(text))
    words = request_words(text)
    at = lead_at(words)
    if at is None:
        return None
    meant = SYNONYMS.get(words[at], words[at])
    if (at < len(written) and meant == written[at]) or ACTION_OF.get(meant) == "read":
        return None
    return meant if action_word(meant) is not None else None


POLITE_START = r"^\W*(?:(?:please|hey|ok|okay|can you|could you|would you|help me|pls)\W+)*"
"""The filler a request may open with, as the start of a pattern read on its lower-cased text: the
phrase-reading patterns' form of what :func:`lead_at` skips word by word (knowledge.py, everyday.py)."""


def lead_at(words: Sequence[str]) -> int | None:
    """Where a request starts past polite filler ("please could you ..."): within its first six words."""
    return next((i for i, w in enumerate(words[:6]) if w not in _FILLER), None)


def is_question(text: str, words: Sequence[str] | None = None) -> bool:
    """Whether a request asks a question (its first word past polite filler is a question word or
    an auxiliary verb, or it ends with a question mark), rather than giving an order. ``words``:
    its :func:`request_words` when the caller has them."""
    if text.rstrip().endswith("?"):
        return True
    words = request_words(text) if words is None else words
    at = lead_at(words)
    return at is not None and words[at] in _QUESTION


# What the agent itself does with a thing once it has it: pointed at a page or a file ("summarize
# https://…", "translate notes.md"), such a request needs that thing read first.
_DIGEST = frozenset({"summarize", "summarise", "translate", "explain", "analyze", "analyse", "review", "proofread",
                     "paraphrase", "critique", "simplify", "outline", "tldr", "digest"})


def reads_first(words: Sequence[str], values: Collection[str]) -> bool:
    """Whether a request (its :func:`request_words`) leads with a verb the agent does itself
    (summarize, translate, explain…) on a URL or a path it gives (``values``: its
    values.request_values), so that the tool it needs is one that reads that thing."""
    at = lead_at(words)
    return at is not None and words[at] in _DIGEST and bool({"url", "path"} & set(values))


def request_action(text: str, words: Sequence[str] | None = None) -> str | None:
    """The action of the request's leading verb ("please delete the file" -> "delete", "push my
    commits" -> "push"), when the request starts with one after polite filler; else None.
    ``words``: its :func:`request_words` when the caller has them."""
    words = request_words(text) if words is None else words
    at = lead_at(words)
    if (at is not None and words[at] in _COMMANDS and at + 1 < len(words) and words[at + 1] != "log"
            and action_word(words[at + 1]) is not None):
        at += 1  # "git clone https://…", "pip install pandas": the command line's verb ("git log" reads one)
    if at is None or ("i" in words[:at] and not _ASKING.intersection(words[:at])):
        # "I run a small shop", "I'm new to Notion": the speaker says what they do or are, and may
        # ask in the next clause ("I misspelled him in memory, rename the entity 'Jon Smyth'")
        return _asked_next(text)
    return action_at(words, at)


# Programs people name before the operation they want, as on a command line ("git stash my changes").
_COMMANDS = frozenset({"git", "gh", "npm", "pip", "yarn", "docker", "kubectl", "brew", "cargo", "apt"})


def _asked_next(text: str) -> str | None:
    """The action class (create, read, …) of the verb that leads the second clause of an English
    request whose first clause leads with none, else None. A specific operation read that far in is
    none: it may be the text of a message, or what a tool does on the way ("I'm planning a dinner.
    Can you extract the nutrition facts from this recipe?" asks for facts, not an extraction)."""
    clauses = _CLAUSE_END.split(text, maxsplit=1)
    if len(clauses) < 2 or not is_english(text):
        return None
    words = request_words(clauses[1])
    at = lead_at(words)
    action = None if at is None or "i" in words[:at] else action_at(words, at)
    return action if action in ACTIONS else None


# The filler that asks ("I want to", "can you", "I'd like"): after "I" without any of it, the verb
# is the speaker's own ("I just read an article", "I remember a video").
_ASKING = frozenset({"want", "need", "to", "like", "please", "can", "could", "would", "will", "help", "let", "lets",
                     "try", "trying", "able", "go", "ahead"})


def action_at(words: Sequence[str], i: int) -> str | None:
    """The action of the word at ``i`` read with the words after it (:func:`action_word` otherwise):
    to open a thing opened by creating it creates it ("open a ticket"), to make a thing the request
    names as already there changes it ("make the header row bold"), and a verb whose sense turns on
    what follows it reads by that (:func:`context_action`)."""
    word = words[i]
    if word == "open" and opens_new(words[i + 1:]):
        return "create"
    if word in _BY_CONTEXT:
        return context_action(word, words[i + 1:])
    return class_at(words, i) if word == "make" else action_word(word)


# What git's verbs act on. Said of anything else they mean something general: "pull the details of
# post 1c9xk2q" reads them, "stash this link for later" saves it, "push the spring campaign live"
# names no one action (publish, deploy, send). A verb with nothing after it ("push", "pull please")
# is git's.
_GIT_THINGS = frozenset({"origin", "upstream", "remote", "branch", "branches", "main", "master", "develop", "change",
                         "changes", "commit", "commits", "tag", "tags", "repo", "repos", "repository", "code", "work",
                         "latest", "head", "it", "everything", "edits", "modifications", "local", "rebase", "force"})
_OUTSIDE_GIT = {"pull": "read", "push": None, "stash": "create"}
_FRESH = frozenset({"new", "another"})
_NEW = frozenset({"a", "an", *_FRESH})
_BY_CONTEXT = frozenset({*_OUTSIDE_GIT, "drop", "start", "put", "log", "switch", "add", "schedule", "order", "stop",
                         "load", "point"})
_LOADED_INTO = frozenset({"into", "onto", "to"})
_PEOPLE = frozenset({"me", "us"})
# What is scheduled to be sent or run later ("schedule the newsletter for 8am", "schedule a nightly
# backup"): anything else scheduled (a call, a photo shoot, my tasks) is created.
_SENT_LATER = frozenset({"email", "emails", "gmail", "mail", "message", "messages", "post", "posts", "tweet", "tweets",
                         "newsletter", "campaign", "broadcast", "sms", "text", "notification", "notifications",
                         "backup", "backups", "job", "jobs", "build", "builds", "report", "reports", "export"})
_SUMMED = frozenset({"and", "to", "plus"})


def context_action(word: str, after: Sequence[str]) -> str | None:
    """The action of a verb whose sense turns on the words after it:

    - pull, push, stash: git's own when a repository's things follow ("pull the latest from
      main", "stash my changes"), else what they mean elsewhere (:data:`_OUTSIDE_GIT`);
    - drop, put: a new thing is put somewhere, i.e. created ("drop a marker on the timeline", "put
      a dentist appointment in my calendar"); "drop the table" deletes, and "put my code into the
      coupon field" names no one action (typing, moving, setting);
    - start: a new thing is created ("start a new thread"), "start logging my runs" does what its
      -ing verb says (nothing, for "start flossing"), and "start the server" or "start a scan" runs
      it (of the requests in our sets and the shared benchmarks that lead with "start a …", the
      gold tool runs in 16 and creates in 4; with "start a new …", it creates in 11 and runs in 2);
    - log: "log a bug", "log today's workout" record it; "log in" is its own;
    - switch: "switch to develop" is git's; "switch these profiles to the new proxy" changes them;
    - add: numbers summed ("add 5 and 7", "add two numbers together") name no action of a tool's (a
      calculator computes, a sum tool "returns the sum"); anything else is created ("add 5 new members");
    - schedule: a message, post or job is sent or run later, its own operation ("schedule the
      newsletter for 8am", "schedule a nightly backup"), which a tool that only sends or runs now does
      not do; anything else scheduled is created ("schedule a call with Dana on Friday");
    - order: things already there ordered by something are sorted ("order the rows by company
      name"); a new thing ordered is bought ("order a pizza by 7", "order 2 tickets");
    - stop: a thing kept from doing something is changed, not stopped ("stop my phone from
      ringing" turns on do-not-disturb); "stop the server" runs the stop;
    - load: things loaded into or onto something are created there ("load these 25 records into
      the orders table", "load airtime to 0791234567"); loading a file or a page names no one
      action (reading it, importing it, opening it in a browser);
    - point: a link or a name pointed at something else is changed ("point go.acme.co/sale at
      https://…"); "point me to the docs" reads."""
    head = list(after[:5])
    nxt = head[0] if head else ""
    if word in _OUTSIDE_GIT:
        return word if not head or _GIT_THINGS.intersection(head) else _OUTSIDE_GIT[word]
    if word == "drop":
        return "create" if nxt in _NEW else "delete"
    if word == "put":
        return "create" if nxt in _NEW else None
    if word == "start":
        if _FRESH.intersection(head[:2]):
            return "create"  # "start a new thread"; "start a scan" runs one, as start_scan does
        if not nxt.endswith("ing"):
            return "run"
        doing = _gerund_action(nxt)
        return context_action(doing, after[1:]) if doing in _BY_CONTEXT else doing
    if word == "add":
        summed = len(head) > 2 and head[0].isdigit() and head[1] in _SUMMED and head[2].isdigit()
        return None if summed or "numbers" in head[:3] else "create"
    if word == "log":
        return "log" if nxt in ("in", "into", "out", "on", "off") else "create"
    if word == "schedule":
        return "schedule" if _SENT_LATER.intersection(head) else "create"
    if word == "stop":
        near = after[:8]
        kept = any(w == "from" and i + 1 < len(near) and near[i + 1].endswith("ing") for i, w in enumerate(near))
        return "update" if kept else "run"
    if word == "load":
        return "create" if _LOADED_INTO.intersection(after[:10]) else None
    if word == "point":
        return "read" if nxt in _PEOPLE else ("update" if {"at", "to"}.intersection(after[:8]) else None)
    if word == "order":
        return "sort" if "by" in after[:10] and nxt not in _NEW and not nxt.isdigit() else "order"
    return "switch" if nxt == "to" else "update"  # switch


# What follows "make" when it changes a thing already there: a determiner or pronoun that points at
# one, or a reference such as a cell range ("make the header row of budget.xlsx bold", "make it
# private", "make A1:F1 bold"). Anything else creates ("make a branch", "make me a folder", "make 3
# copies"), and so does "make" in a tool's name (``make_api_request``), which has no such words.
_MADE_EXISTING = frozenset({"the", "this", "that", "these", "those", "it", "them", "my", "our", "your", "his", "her",
                            "its", "their", "everything", "all", "each", "every"})


# What a file's mode makes it: "make deploy.sh executable", "make old.log read-only" change its
# permissions (chmod), which no tool that edits or creates files does unless it says so.
_MODES = frozenset({"executable", "runnable", "writable", "writeable", "readonly", "unreadable"})


def _makes_a_mode(after: Sequence[str]) -> bool:
    return bool(_MODES.intersection(after)) or any(a == "read" and b == "only" for a, b in zip(after, after[1:]))


def class_at(words: Sequence[str], i: int) -> str | None:
    """The action class (:data:`ACTIONS`) of the word at ``i``: its own, but "make" with a thing the
    request names as already there is an update, and one it makes executable or read-only a chmod."""
    word = words[i]
    if word == "make" and _makes_a_mode(words[i + 1:i + 8]):
        return "chmod"
    if word == "make" and i + 1 < len(words):
        after = words[i + 1]
        if after in _MADE_EXISTING or (not after.isdigit() and any(c.isdigit() for c in after)):
            return "update"
    return ACTION_OF.get(word)


# What one opens by creating it ("open a ticket", "ouvre un ticket", "abre una incidencia"), where to
# open anything else is to read it.
_OPENED_NEW = frozenset({"ticket", "tickets", "issue", "issues", "pr", "bug", "incident", "case", "account",
                         "incidencia", "incidence", "konto", "cuenta", "compte", "conta", "conto", "тикет", "задачу"})


def opens_new(after: Sequence[str]) -> bool:
    """Whether the words after "open" (or its translation) name a thing opened by creating it."""
    return any(w in _OPENED_NEW for w in after[:4])


def text_actions(name: str, description: str) -> frozenset[str]:
    """The actions a tool's name and the first sentence of its description say it performs."""
    first = description.strip().split(". ")[0][:200]
    words = words_of(name) + words_of(first)
    return frozenset(a for a in (action_word(w) or action_word(stem(w)) or _gerund_action(w) for w in words) if a is not None)


def _gerund_action(word: str) -> str | None:
    """The action of a verb's -ing form ("staging" area: stage; "pushing": push), else None."""
    if len(word) < 6 or not word.endswith("ing"):
        return None
    base = word[:-3]
    return action_word(base) or action_word(base + "e") or (action_word(base[:-1]) if base[-1] == base[-2] else None)
